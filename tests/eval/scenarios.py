"""Evaluation scenarios: how each delivery-violation class is injected, how
its signal is recognised in the API, and how it is fixed; plus the boundary
cases and the healthy load. Python standard library only.

A scenario is a list of steps run by tests/eval/eval.py. The consumers that
cause the faults are the language injectors (one command line, see
injectors/); stream and consumer setup and publishing use the C tool
tests/tools/nl-inject. Timings scale with the poll interval D so that each
fault stays in place long enough for the detector's documented latency
(docs/detectors.md) at any interval.
"""

import json
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NL_INJECT = os.path.join(ROOT, "tests", "tools", "nl-inject")

CLASSES = ["ACK_WAIT_VIOLATION", "SEQUENCE_GAP", "MAX_PENDING_THROTTLE",
           "NAK_STORM", "MISSING_PROGRESS"]
SHORT = {"ACK_WAIT_VIOLATION": "AW", "SEQUENCE_GAP": "GAP",
         "MAX_PENDING_THROTTLE": "MP", "NAK_STORM": "NAK",
         "MISSING_PROGRESS": "LONG", "MAX_DELIVER_EXHAUSTED": "MDX",
         "ACK_ALL_PARALLEL": "AAP", "RETENTION_RISK": "RR",
         "ACK_NONE_CONSUMER": "ANC", "INTEREST_NO_CONSUMERS": "INC",
         "PUSH_UNBOUND": "PU", "STREAM_SINGLE_REPLICA": "SR1",
         "CONSUMER_UNOBSERVABLE": "UO", "PUBLISH_REJECTED": "PR",
         "CONSUMER_SINGLE_REPLICA": "CR1", "SOURCE_STALLED": "SS",
         "RATE_LIMITED": "RL", "CONSUMER_EXPIRING": "CEW",
         "CONSUMER_EXPIRED": "CEX"}

# The classes beyond the five (docs/detectors.md), in table order.
EXT_CLASSES = ["MAX_DELIVER_EXHAUSTED", "ACK_ALL_PARALLEL", "RETENTION_RISK",
               "ACK_NONE_CONSUMER", "INTEREST_NO_CONSUMERS", "PUSH_UNBOUND",
               "STREAM_SINGLE_REPLICA", "CONSUMER_UNOBSERVABLE",
               "PUBLISH_REJECTED", "CONSUMER_SINGLE_REPLICA",
               "SOURCE_STALLED", "RATE_LIMITED", "CONSUMER_EXPIRING",
               "CONSUMER_EXPIRED"]
ALL_CLASSES = CLASSES + EXT_CLASSES
# Faults made by the consuming application: one row per injector language.
# The others are pure configuration, injected with nl-inject (language
# "api", one row).
EXT_CLIENT = ("MAX_DELIVER_EXHAUSTED", "ACK_ALL_PARALLEL", "RETENTION_RISK")
# Only on the 3-node cluster; CONSUMER_UNOBSERVABLE kills a node, so its
# cases run alone.
CLUSTER_ONLY = ("STREAM_SINGLE_REPLICA", "CONSUMER_UNOBSERVABLE",
                "CONSUMER_SINGLE_REPLICA")
NODE_KILL = ("CONSUMER_UNOBSERVABLE",)
# Classes about a stream: no consumer in the notification, the health event
# or the CSV value (nats_lens_<class> without a type instance).
STREAM_CLASSES = ("INTEREST_NO_CONSUMERS", "STREAM_SINGLE_REPLICA",
                  "CONSUMER_UNOBSERVABLE", "PUBLISH_REJECTED",
                  "SOURCE_STALLED", "CONSUMER_EXPIRED")
# Notifications about the plugin's view, not about a delivery fault: never
# counted as another class unless the case expects them.
OPERATIONAL = ("CONSUMER_UNOBSERVABLE",)
# Advisory-backed findings: the advisory (the token after
# $JS.EVENT.ADVISORY.CONSUMER.) whose arrival can raise the class between
# polls.
ADVISORY_OF = {"MAX_DELIVER_EXHAUSTED": "MAX_DELIVERIES",
               "ACK_NONE_CONSUMER": "CREATED", "NAK_STORM": "MSG_NAKED",
               "CONSUMER_SINGLE_REPLICA": "CREATED"}

# The published numbers of the research monitor (3 s poll interval, 200
# rounds per class): detection latency P50 in ms.
REFERENCE_P50_MS = {"SEQUENCE_GAP": 2003, "MAX_PENDING_THROTTLE": 2006,
                    "MISSING_PROGRESS": 2010, "NAK_STORM": 6023,
                    "ACK_WAIT_VIOLATION": 8013}


def injector_cmd(lang, url):
    """Returns the argv prefix that runs the language's consumer; the
    arguments after it are those of `nl-inject consume`."""
    if lang == "c":
        return [NL_INJECT, "--server", url]
    if lang == "go":
        return [os.path.join(ROOT, "build", "eval", "nl-consume-go"),
                "--server", url]
    if lang == "js":
        return ["node", os.path.join(ROOT, "tests", "eval", "injectors", "js",
                                     "nl_consume.js"), "--server", url]
    if lang == "py":
        return ["python3", os.path.join(ROOT, "tests", "eval", "injectors",
                                        "py", "nl_consume.py"),
                "--server", url]
    raise ValueError("unknown language %s" % lang)


class Step:
    """One action: `tool` runs nl-inject and waits for it; `bg` starts
    nl-inject in the background; `consume` starts the language's consumer
    in the background; `kill` stops the case's background processes;
    `sleep` waits. The production mix (mix.py) adds `service`, `every` and
    `server_restart`."""

    def __init__(self, kind, args=None, secs=0.0, name=None, prog=None,
                 steps=None):
        self.kind, self.args = kind, args or []
        self.secs, self.name = secs, name
        self.prog, self.steps = prog, steps or []


def tool(*args):
    return Step("tool", list(args))


def bg(name, *args):
    return Step("bg", list(args), name=name)


def consume(name, *args):
    return Step("consume", ["consume"] + list(args), name=name)


def kill(name=None):
    return Step("kill", name=name)


def sleep(secs):
    return Step("sleep", secs=secs)


def node_kill():
    """Kills (SIGKILL) the cluster node that holds the case's stream."""
    return Step("node_kill")


def node_restart():
    """Restarts the node node_kill killed, with its store."""
    return Step("node_restart")


class Case:
    """One scenario instance on its own stream.

    expect: the class that must fire, or None (nothing may fire).
    signal: name of the API condition that marks the fault as observable
    (see eval.Tracer.condition), or None.
    setup / inject / fix: step lists. observe_s: for must-not-fire cases,
    how long to watch after the injection. reference: the predicate of the
    research tool this case is about (for the table)."""

    def __init__(self, name, stream, consumer, lang, expect, signal,
                 setup, inject, fix=None, observe_s=0.0, note="",
                 min_fire_s=0.0, hold_s=0.0, polled=("nats_lens_num_pending",
                                                     None),
                 trace=True, cleanup=(), allowed=(), detect_s=0.0):
        self.name, self.stream, self.consumer, self.lang = (
            name, stream, consumer, lang)
        self.expect, self.signal = expect, signal
        self.setup, self.inject, self.fix = setup, inject, fix or []
        self.observe_s, self.note = observe_s, note
        self.min_fire_s, self.hold_s = min_fire_s, hold_s
        # polled: the CSV series (type, type instance; None for the
        # consumer) that shows the plugin has polled the case before the
        # injection, or None to inject without waiting (the fault is there
        # from the stream's first poll). trace: follow CONSUMER.INFO every
        # 0.25 s. cleanup: further streams to delete at the end. allowed:
        # other classes that are right for this case, not false positives.
        self.polled = (polled[0], polled[1] or consumer) if polled else None
        self.trace, self.cleanup, self.allowed = trace, list(cleanup), \
            list(allowed)
        # detect_s: how long after the injection the class may take to
        # fire, when its documented latency is longer than the harness's
        # 40 D + 60 s (a window of its own).
        self.detect_s = detect_s


def stream_args(stream, replicas, *extra):
    return ["stream-create", stream, "--subjects", stream.lower() + ".>",
            "--replicas", str(replicas)] + list(extra)


# The shapes of processing that outlasts ack_wait, one per round in turn
# (ACK_WAIT_VIOLATION's rounds): (name, what it is).
AW_SHAPES = [
    ("steady", "4 pull workers, batch 1, each message 2 x ack_wait, all in "
     "step"),
    ("batch-tail", "2 pull workers half a batch apart, batches of 10 at "
     "ack_wait / 4 each: the last 6 of each batch outlast ack_wait"),
    ("lognormal", "4 pull workers a quarter of ack_wait apart, processing "
     "lognormal with median ack_wait (sigma 0.5): half outlast it"),
    ("push-buffer", "push consumer, 40 messages pushed at once into the "
     "client's buffer, 2 workers at ack_wait / 3 each: the buffer's tail "
     "waits longer than ack_wait, and each expired message is pushed again "
     "behind it"),
    ("out-of-step", "4 pull workers half an ack_wait apart, each message "
     "2 x ack_wait"),
]


def aw_shape(rnd):
    """The ACK_WAIT_VIOLATION shape of round rnd: (name, note)."""
    return AW_SHAPES[(rnd - 1) % len(AW_SHAPES)]


def ack_wait_case(stream, subj, lang, rnd, d, st, tag):
    """The ACK_WAIT_VIOLATION case of round rnd, in the round's shape
    (AW_SHAPES). ack_wait is 4 s at the reference interval (3 s), and
    always longer than one poll so that two expiry rounds are more than
    ack_wait + one poll apart. The fix raises ack_wait above the longest
    processing (for the push shape, above the time the buffer waits)."""
    cls = "ACK_WAIT_VIOLATION"
    aw = max(2, int(d) + 1)
    c = "c"
    shape, note = aw_shape(rnd)
    proc = 2 * aw
    dur = int(12 * proc + 20 * d + 30)
    count = 200
    create = ["consumer-create", stream, c, "--ack-wait", str(aw)]
    fix = [tool("consumer-edit", stream, c, "--ack-wait", str(3 * proc))]
    if shape == "steady":
        work = ["--workers", "4", "--process-ms", str(proc * 1000)]
        fix = [tool("consumer-create", stream, c, "--ack-wait",
                    str(3 * proc))]
    elif shape == "batch-tail":
        each = aw * 1000 // 4
        work = ["--workers", "2", "--batch", "10", "--process-ms", str(each),
                "--stagger-ms", str(5 * each)]
        fix = [tool("consumer-edit", stream, c, "--ack-wait",
                    str(3 * 10 * each // 1000))]
    elif shape == "lognormal":
        work = ["--workers", "4", "--process-ms", str(aw * 1000),
                "--process-dist", "lognormal", "--process-sigma", "0.5",
                "--seed", str(rnd), "--stagger-ms", str(aw * 250)]
        fix = [tool("consumer-edit", stream, c, "--ack-wait", str(10 * aw))]
    elif shape == "push-buffer":
        deliver = "deliver." + stream.lower()
        create += ["--deliver-subject", deliver]
        count = 40
        work = ["--mode", "push", "--deliver-subject", deliver, "--workers",
                "2", "--process-ms", str(aw * 1000 // 3)]
        fix = [tool("consumer-edit", stream, c, "--ack-wait",
                    str(30 * aw))]
    else:  # out-of-step
        work = ["--workers", "4", "--process-ms", str(proc * 1000),
                "--stagger-ms", str(aw * 500)]
    case = Case("%s/%s/%d" % (cls, lang, rnd), stream, c, lang, cls,
                "redelivery",
                [tool(*st), tool(*create),
                 tool("publish", subj, "--count", str(count))],
                [consume("w", stream, c, "--duration", str(dur), *work)],
                fix)
    case.shape, case.shape_note = shape, note
    return case


def class_case(cls, lang, rnd, d, replicas, tag="E"):
    """The fault case of class cls for language lang, round rnd, at poll
    interval d seconds."""
    stream = "%s%d_%s_%s" % (tag, rnd, SHORT[cls], lang)
    subj = stream.lower() + ".x"
    c = "c"
    st = stream_args(stream, replicas)
    if cls == "ACK_WAIT_VIOLATION":
        return ack_wait_case(stream, subj, lang, rnd, d, st, tag)
    if cls == "SEQUENCE_GAP":
        # max_msgs 100; a burst of 300, then 50 msg/s, while the consumer
        # takes 10/s: the stream evicts messages the consumer never
        # received, again and again. The fix raises the limit and scales the
        # consumer.
        dur = int(40 * d + 60)
        return Case("%s/%s/%d" % (cls, lang, rnd), stream, c, lang, cls,
                    "gap",
                    [tool(*st + ["--max-msgs", "100"]),
                     tool("consumer-create", stream, c, "--ack-wait", "30")],
                    [consume("w", stream, c, "--duration", str(dur),
                             "--workers", "1", "--process-ms", "100"),
                     tool("publish", subj, "--count", "300"),
                     bg("pub", "publish", subj, "--count",
                        str(int(50 * dur)), "--rate", "50")],
                    [tool(*st + ["--max-msgs", "1000000"]), kill("w"),
                     consume("fix", stream, c, "--duration", str(dur),
                             "--workers", "4", "--batch", "10")])
    if cls == "MAX_PENDING_THROTTLE":
        # A worker that never acks holds the 5 messages max_ack_pending
        # allows while 45 wait. The fix replaces it by one that acks.
        dur = int(40 * d + 60)
        return Case("%s/%s/%d" % (cls, lang, rnd), stream, c, lang, cls,
                    "at_cap",
                    [tool(*st), tool("consumer-create", stream, c,
                                     "--ack-wait", "3",
                                     "--max-ack-pending", "5"),
                     tool("publish", subj, "--count", "50")],
                    [consume("w", stream, c, "--duration", str(dur),
                             "--no-ack")],
                    [kill("w"), consume("fix", stream, c, "--duration",
                                        str(dur), "--workers", "2")])
    if cls == "NAK_STORM":
        # Every 5th message is NAKed again and again (20 NAKs/s); the fix
        # terminates poison messages instead.
        dur = int(40 * d + 60)
        return Case("%s/%s/%d" % (cls, lang, rnd), stream, c, lang, cls,
                    "redelivery",
                    [tool(*st), tool("consumer-create", stream, c,
                                     "--ack-wait", "30"),
                     tool("publish", subj, "--count", "20")],
                    [consume("w", stream, c, "--duration", str(dur),
                             "--process-ms", "50", "--nak-seq-mod", "5")],
                    [kill("w"), consume("fix", stream, c, "--duration",
                                        str(dur), "--term-seq-mod", "5")])
    if cls == "MISSING_PROGRESS":
        # Every 150th message takes longer than 2 x ack_wait + 2 polls and
        # sends no in-progress ack, while 24 workers ack the others (30
        # msg/s). The fix raises ack_wait above the longest task.
        aw = max(2, int(d))
        slow = 2 * aw + 2 * int(d) + 2
        dur = int(30 * d + 60)
        return Case("%s/%s/%d" % (cls, lang, rnd), stream, c, lang, cls,
                    "redelivery",
                    [tool(*st), tool("consumer-create", stream, c,
                                     "--ack-wait", str(aw))],
                    [bg("pub", "publish", subj, "--count", str(30 * dur),
                        "--rate", "30"),
                     consume("w", stream, c, "--duration", str(dur),
                             "--workers", "24", "--process-ms", "50",
                             "--slow-every", "150", "--slow-ms",
                             str(slow * 1000))],
                    [tool("consumer-create", stream, c, "--ack-wait",
                          str(3 * slow))])
    raise ValueError(cls)


def ext_case(cls, lang, rnd, d, replicas, tag="X"):
    """The fault case of a class beyond the five (EXT_CLASSES) for language
    lang ("api" for the configuration classes), round rnd, at poll interval
    d seconds, with streams of `replicas` replicas. Each case has a fresh
    stream, an injection, a fix that clears the finding, and a note saying
    what was injected (for the report)."""
    stream = "%s%d_%s_%s" % (tag, rnd, SHORT[cls], lang)
    subj = stream.lower() + ".x"
    c = "c"
    name = "%s/%s/%d" % (cls, lang, rnd)
    st = stream_args(stream, replicas)
    dur = str(int(40 * d + 60))
    if cls == "MAX_DELIVER_EXHAUSTED":
        # max_deliver 3; of 10 messages the consumer acks nine and NAKs the
        # last (sequence 10) on every delivery. After the third delivery
        # the server gives up on it and sends MAX_DELIVERIES. The fix is the
        # dead-letter stream the finding recommends.
        dlq = stream + "_DLQ"
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st), tool("consumer-create", stream, c,
                                     "--ack-wait", "30", "--max-deliver",
                                     "3"),
                     tool("publish", subj, "--count", "10")],
                    [consume("w", stream, c, "--duration", dur,
                             "--process-ms", "50", "--nak-seq-mod", "10")],
                    [tool("stream-create", dlq, "--subjects",
                          "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s"
                          % (stream, c), "--replicas", str(replicas))],
                    note="max_deliver 3; 10 messages, the consumer acks 9 "
                    "and NAKs sequence 10 on each of its 3 deliveries; fix: "
                    "a dead-letter stream on the MAX_DELIVERIES advisory",
                    trace=False, cleanup=[dlq])
    if cls == "ACK_ALL_PARALLEL":
        # Three workers pull from an ack-all consumer at once (their pull
        # requests wait side by side); the fix allows one message at a
        # time.
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st), tool("consumer-create", stream, c,
                                     "--ack", "all", "--ack-wait", "30"),
                     tool("publish", subj, "--count", "10")],
                    [consume("w", stream, c, "--duration", dur, "--workers",
                             "3", "--process-ms", "50", "--expires-ms",
                             str(int(max(2, d) * 1000)))],
                    [tool("consumer-create", stream, c, "--ack", "all",
                          "--ack-wait", "30", "--max-ack-pending", "1")],
                    note="ack policy all; 3 workers pull at once (10 "
                    "messages, then waiting pull requests); fix: "
                    "max_ack_pending 1", trace=False)
    if cls == "RETENTION_RISK":
        # 40 msg/s into a stream limited to L messages, read by one worker
        # at 10 msg/s: the backlog grows by 30 msg/s and would reach the
        # limit after 30 D + 60 s, long after the detection and the fix
        # (no message may be lost: SEQUENCE_GAP would be a failure). The
        # fix raises the limit and scales the consumer.
        limit = 30 * int(30 * d + 60)
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st + ["--max-msgs", str(limit)]),
                     tool("consumer-create", stream, c, "--ack-wait", "30")],
                    [bg("pub", "publish", subj, "--count",
                        str(40 * int(dur)), "--rate", "40"),
                     consume("w", stream, c, "--duration", dur,
                             "--workers", "1", "--process-ms", "100")],
                    [tool(*st + ["--max-msgs", "1000000"]), kill("w"),
                     consume("fix", stream, c, "--duration", dur,
                             "--workers", "4", "--batch", "10")],
                    note="max_msgs %d; 40 msg/s published, one worker at "
                    "100 ms a message (10 msg/s); fix: max_msgs 1,000,000 "
                    "and 4 workers" % limit, trace=False)
    if cls == "ACK_NONE_CONSUMER":
        # A durable consumer with ack policy none is created while the
        # plugin runs (its CREATED advisory); the fix moves to an explicit
        # copy and deletes it (its DELETED advisory).
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st), tool("publish", subj, "--count", "10")],
                    [tool("consumer-create", stream, c, "--ack", "none")],
                    [tool("consumer-create", stream, "c_explicit", "--ack",
                          "explicit"),
                     tool("consumer-delete", stream, c)],
                    note="durable pull consumer created with ack policy none "
                    "while the plugin runs; fix: an explicit-ack copy, the "
                    "ack-none consumer deleted",
                    polled=("nats_lens_seq", "last"), trace=False)
    if cls == "INTEREST_NO_CONSUMERS":
        # An interest stream published to at 5 msg/s loses its only
        # consumer: every later publish is acknowledged and dropped. The fix
        # creates a consumer again.
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st + ["--retention", "interest"]),
                     tool("consumer-create", stream, c, "--ack-wait", "30"),
                     bg("pub", "publish", subj, "--count",
                        str(5 * (int(dur) + 60)), "--rate", "5")],
                    [tool("consumer-delete", stream, c)],
                    [tool("consumer-create", stream, "w", "--ack-wait",
                          "30")],
                    note="interest-retention stream at 5 msg/s; its only "
                    "consumer is deleted; fix: a consumer created again",
                    trace=False)
    if cls == "PUSH_UNBOUND":
        # A push consumer whose subscriber (nl-inject, push mode) stops
        # while messages keep arriving; the plugin waits PushUnboundSeconds
        # (default 60 s) of polls without a subscriber. The fix starts a
        # subscriber again.
        dsub = "dlv." + stream.lower()
        hold = str(int(40 * d + 160))
        sub = ["consume", stream, c, "--mode", "push", "--deliver-subject",
               dsub]
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st), tool("consumer-create", stream, c,
                                     "--deliver-subject", dsub,
                                     "--ack-wait", "30"),
                     bg("sub", *sub + ["--duration", hold]),
                     tool("publish", subj, "--count", "5")],
                    [kill("sub"), tool("publish", subj, "--count", "10")],
                    [bg("fix", *sub + ["--duration", dur])],
                    note="push consumer; its subscriber stops, then 10 "
                    "messages arrive; detection waits PushUnboundSeconds "
                    "(60 s, the default) of unbound polls; fix: the "
                    "subscriber starts again", trace=False)
    if cls == "STREAM_SINGLE_REPLICA":
        # An R1 stream created in the cluster; the fix updates it to 3
        # replicas.
        return Case(name, stream, c, lang, cls, None, [],
                    [tool(*stream_args(stream, 1))],
                    [tool(*stream_args(stream, 3))],
                    note="stream created with 1 replica in the 3-node "
                    "cluster; fix: updated to 3 replicas", polled=None,
                    trace=False)
    if cls == "CONSUMER_UNOBSERVABLE":
        # The node holding an R1 stream (and its consumer) is killed; the
        # fix restarts it. STREAM_SINGLE_REPLICA about the same stream is
        # right: the stream has one replica by construction. Nothing is
        # published: on nats-server 2.9.10 the stream comes back empty after
        # the SIGKILL and the restart, and the plugin rightly reports the
        # messages as lost (SEQUENCE_GAP), which is not this case's class.
        return Case(name, stream, c, lang, cls, None,
                    [tool(*stream_args(stream, 1)),
                     tool("consumer-create", stream, c, "--ack-wait", "30")],
                    [node_kill()], [node_restart()],
                    note="R1 stream with a consumer and no messages; the "
                    "node holding it is killed (SIGKILL), running alone; "
                    "fix: the node restarted with its store; "
                    "STREAM_SINGLE_REPLICA on this R1 stream is right and "
                    "not counted",
                    trace=False, allowed=["STREAM_SINGLE_REPLICA"])
    if cls == "PUBLISH_REJECTED":
        # A publisher at 5 msg/s (going on after refusals, as one that does
        # not check its acknowledgements) fills a discard-new stream of 20
        # messages in 4 s; every later publish is refused. The fix is the
        # printed one: max_msgs raised (here far enough that the publisher
        # does not fill it again within the round).
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st + ["--discard", "new", "--max-msgs", "20"])],
                    [bg("pub", "publish", subj, "--count",
                        str(5 * (int(dur) + 60)), "--rate", "5",
                        "--keep-going")],
                    [tool("stream-edit", stream, "--max-msgs", "1000000")],
                    note="discard new, max_msgs 20; a publisher at 5 msg/s "
                    "fills it and goes on after each refusal; fix: max_msgs "
                    "raised (nats stream edit --max-msgs)",
                    polled=("nats_lens_seq", "last"), trace=False)
    if cls == "CONSUMER_SINGLE_REPLICA":
        # A durable consumer of one replica created on the 3-replica
        # stream while the plugin runs (its CREATED advisory); the fix is
        # the printed one: the stream's replicas.
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st), tool("publish", subj, "--count", "10")],
                    [tool("consumer-create", stream, c, "--ack-wait", "30",
                          "--replicas", "1")],
                    [tool("consumer-edit", stream, c, "--replicas",
                          str(replicas))],
                    note="durable consumer created with 1 replica on a "
                    "stream of %d while the plugin runs; fix: its replicas "
                    "set to the stream's (consumer edit --replicas)"
                    % replicas,
                    polled=("nats_lens_seq", "last"), trace=False)
    if cls == "SOURCE_STALLED":
        # A mirror of an origin of 20 messages; the origin is deleted,
        # created again and given 10 new messages, all below the mirror's
        # position: the mirror never takes them (it waits for the new
        # origin to pass 20 on nats-server 2.9, resumes past them from
        # 2.10). The fix is the one the finding prints, the mirror created
        # again from its configuration (a mirror cannot be edited); it then
        # takes the new origin from its first message.
        origin = stream + "_O"
        mirror = json_text({"name": stream, "mirror": {"name": origin},
                            "num_replicas": replicas})
        return Case(name, stream, c, lang, cls, None,
                    [tool(*stream_args(origin, replicas)),
                     tool("request", "$JS.API.STREAM.CREATE." + stream,
                          mirror),
                     tool("publish", origin.lower() + ".x", "--count", "20")],
                    [tool("stream-delete", origin),
                     tool(*stream_args(origin, replicas)),
                     tool("publish", origin.lower() + ".x", "--count", "10")],
                    [tool("stream-delete", stream),
                     tool("request", "$JS.API.STREAM.CREATE." + stream,
                          mirror)],
                    note="mirror of an origin of 20 messages; the origin is "
                    "deleted, created again and given 10; fix: the mirror "
                    "created again from its configuration",
                    polled=("nats_lens_seq", "last"), trace=False,
                    cleanup=[origin])
    if cls == "RATE_LIMITED":
        # A push consumer limited to 8,000 bit/s (1,000 B/s, about 6.5
        # deliveries a second of these 100-byte messages) while 10 msg/s
        # arrive, on a stream whose max_msg_size of 1024 makes the limit's
        # first burst 1 kB. Detection waits RateLimitedSeconds (180 s, the
        # default) of polls that show it at its limit and behind. The fix
        # is the recommendation's: an update of the consumer with
        # rate_limit_bps raised, the rest kept.
        dsub = "dlv." + stream.lower()
        hold = str(int(80 * d + 420))
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st + ["--storage", "file", "--max-msg-size",
                                 "1024"]),
                     tool("consumer-create", stream, c, "--deliver-subject",
                          dsub, "--ack-wait", "30", "--rate-limit-bps",
                          "8000"),
                     bg("sub", "consume", stream, c, "--mode", "push",
                        "--deliver-subject", dsub, "--duration", hold)],
                    [bg("pub", "publish", subj, "--count",
                        str(10 * int(hold)), "--rate", "10", "--size",
                        "100")],
                    [tool("consumer-edit", stream, c, "--rate-limit-bps",
                          "25000")],
                    note="push consumer with rate_limit_bps 8000 (1,000 "
                    "B/s) on a stream with max_msg_size 1024; 10 msg/s of "
                    "100 bytes published (about 1,500 B/s as the server "
                    "counts deliveries); detection waits RateLimitedSeconds "
                    "(180 s, the default); fix: rate_limit_bps 25000 set "
                    "by an update of the consumer",
                    trace=False, detect_s=40 * d + 60 + 240)
    if cls in ("CONSUMER_EXPIRING", "CONSUMER_EXPIRED"):
        # A durable pull consumer with an inactive_threshold of T, its
        # worker reading a publisher at 2 msg/s for 2 T + 2 D + 4 s (long
        # enough for the plugin to know it as long-lived), then gone while
        # messages keep coming. CONSUMER_EXPIRING comes after T / 2;
        # CONSUMER_EXPIRED (on an interest stream, which drops the messages
        # with it) when the server removes it after T. The fixes are the
        # printed ones, with the worker back: the threshold edited to 3 T,
        # or the consumer created again with 3 T after its ack floor (here
        # from the stream's first message, all that the interest stream
        # still holds).
        expired = cls == "CONSUMER_EXPIRED"
        t = max(8, int(3 * d)) if expired else max(16, int(6 * d))
        work = int(2 * t + 2 * d + 4)
        st_args = st + (["--retention", "interest"] if expired else [])
        mk = ["consumer-create", stream, c, "--ack-wait", "2",
              "--inactive-threshold"]
        fix = [tool(*mk + [str(3 * t)])] if expired else \
            [tool("consumer-edit", stream, c, "--inactive-threshold",
                  str(3 * t))]
        return Case(name, stream, c, lang, cls, None,
                    [tool(*st_args), tool(*mk + [str(t)]),
                     bg("pub", "publish", subj, "--count",
                        str(2 * (work + int(dur) + 3 * t + 60)), "--rate",
                        "2"),
                     bg("w", "consume", stream, c, "--duration", str(work)),
                     sleep(work + 1)],
                    [tool("publish", subj, "--count", "5")],
                    fix + [bg("fix", "consume", stream, c, "--duration",
                              dur)],
                    note="durable pull consumer, inactive_threshold %d s%s; "
                    "its worker reads 2 msg/s for %d s and goes, messages "
                    "keep coming; fix: %s (%d s) and the worker back"
                    % (t, " on an interest stream" if expired else "", work,
                       "created again with inactive_threshold" if expired
                       else "inactive_threshold edited", 3 * t),
                    trace=False,
                    allowed=["CONSUMER_EXPIRING", "INTEREST_NO_CONSUMERS"]
                    if expired else [])
    raise ValueError(cls)


def json_text(obj):
    """obj as compact JSON (a request body)."""
    return json.dumps(obj, separators=(",", ":"))


def ext_classes(topology):
    """The classes beyond the five that run on a topology."""
    return [c for c in EXT_CLASSES
            if topology == "cluster" or c not in CLUSTER_ONLY]


def ext_langs(cls, langs):
    """The rows of a class: one per language for the faults the consuming
    application makes, else the single "api" row."""
    return list(langs) if cls in EXT_CLIENT else ["api"]


def boundary_cases(d, replicas, lang="c", tag="B"):
    """The boundary cases: where a naive threshold detector (the research
    tool's predicates) fires but a correct one must not, and where those
    predicates miss a real fault. Returns a list of Case."""
    obs = max(30.0, 10 * d)
    cases = []

    def mk(key, expect, signal, setup, inject, note, fix=None, observe=obs):
        stream = "%s_%s_%s" % (tag, key, lang)
        st = stream.lower()
        setup = [s(stream, st) if callable(s) else s for s in setup]
        inject = [s(stream, st) if callable(s) else s for s in inject]
        fix = [s(stream, st) if callable(s) else s for s in (fix or [])]
        cases.append(Case("boundary/%s/%s" % (key, lang), stream, "c", lang,
                          expect, signal, setup, inject, fix, observe, note))

    sa = lambda *extra: (lambda s, _: tool(*stream_args(s, replicas, *extra)))
    cc = lambda *extra: (lambda s, _: tool("consumer-create", s, "c", *extra))
    pub = lambda sub, n, *extra: (lambda _, st: tool(
        "publish", st + "." + sub, "--count", str(n), *extra))
    con = lambda name, *extra: (lambda s, _: consume(name, s, "c", *extra))
    bgp = lambda name, sub, n, *extra: (lambda _, st: bg(
        name, "publish", st + "." + sub, "--count", str(n), *extra))
    dur = str(int(obs + 20))

    mk("AT_CAP_EMPTY", None, None,
       [sa(), cc("--ack-wait", "300", "--max-ack-pending", "5"),
        pub("x", 5)],
       [con("w", "--duration", dur, "--no-ack")],
       "at max_ack_pending with num_pending = 0: not a stall "
       "(research: ack-pending ratio >= 1 fires)")
    mk("ONE_REDELIVERY", None, None,
       [sa(), cc("--ack-wait", "2"), pub("x", 10)],
       [con("once", "--duration", "1", "--no-ack", "--max-msgs", "1"),
        sleep(3.5), con("w", "--duration", dur, "--process-ms", "20")],
       "one message redelivered once, then acked "
       "(research: any num_redelivered increase fires)")
    mk("RATIO_085", None, None,
       [sa(), cc("--ack-wait", "300", "--max-ack-pending", "20"),
        pub("x", 40)],
       [con("w", "--duration", dur, "--no-ack", "--max-msgs", "17")],
       "17 of max_ack_pending 20 held (ratio 0.85) with messages waiting "
       "(research: ratio >= 0.8 fires)")
    mk("HEALTHY", None, None,
       [sa("--max-msgs", "100000"), cc("--ack-wait", "30")],
       [bgp("pub", "x", int(20 * (obs + 10)), "--rate", "20"),
        con("w", "--duration", dur, "--workers", "2", "--process-ms", "20")],
       "a healthy consumer under steady load")
    mk("FILTERED_IDLE", None, None,
       [sa("--max-msgs", "50"),
        lambda s, st: tool("consumer-create", s, "c", "--ack-wait", "30",
                           "--filter", st + ".a")],
       [pub("a", 5), con("w", "--duration", "3"), pub("b", 200)],
       "idle filtered consumer, first_seq moved past its ack floor by "
       "other subjects: no loss (research: first_seq > ack_floor + 1 fires)")
    mk("EVICT_UNREAD", "SEQUENCE_GAP", "gap",
       [sa("--max-msgs", "50"), cc("--ack-wait", "30")],
       [pub("x", 200)],
       "eviction before a never-acking consumer read anything: loss "
       "(research: ack_floor = 0 is skipped, misses it)",
       fix=[con("fix", "--duration", "5", "--workers", "2", "--batch", "10"),
            sa("--max-msgs", "100000")])
    aw = max(2, int(d) + 1)
    mk("LATE_ACK_REDELIVERY", "ACK_WAIT_VIOLATION", "redelivery",
       [sa(), cc("--ack-wait", str(aw)), pub("x", 200)],
       [con("w", "--duration", str(int(24 * aw + 20 * d + 30)), "--workers",
            "4", "--process-ms", str(2 * aw * 1000))],
       "redeliveries acked before the next poll, num_redelivered back at 0 "
       "(research: num_redelivered delta misses them)",
       fix=[cc("--ack-wait", str(6 * aw))])
    mk("CRASH_ORPHANS", None, None,
       [sa(), cc("--ack-wait", str(aw)), pub("x", 20)],
       [bgp("pub", "x", int(5 * (obs + 10)), "--rate", "5"),
        con("crash", "--duration", "2", "--no-ack", "--batch", "10",
            "--max-msgs", "10"),
        con("w", "--duration", dur, "--workers", "2", "--process-ms",
            "300")],
       "a worker takes 10 messages and dies; they expire once and the "
       "others process them (the at-least-once guarantee working; "
       "research: a num_redelivered rise of 2 fires ACK_WAIT_VIOLATION)")
    mk("BUSY_LONG_ACK_WAIT", None, None,
       [sa(), cc("--ack-wait", "60", "--max-ack-pending", "10")],
       [bgp("pub", "x", int(5 * (obs + 10)), "--rate", "5"),
        con("w", "--duration", dur, "--workers", "9", "--process-ms",
            "2000")],
       "busy healthy consumer at ack-pending ratio 0.9, ack_wait 60 s "
       "(research: ratio >= 0.9 and ack_wait > 30 s fires MISSING_PROGRESS)")
    mk("LONG_TASKS_WPI", None, None,
       [sa(), cc("--ack-wait", str(max(2, int(d))))],
       [bgp("pub", "x", int(30 * (obs + 10)), "--rate", "30"),
        con("w", "--duration", dur, "--workers", "24", "--process-ms", "50",
            "--slow-every", "150", "--slow-ms", str(
                (4 * max(2, int(d)) + 2) * 1000),
            "--in-progress", "--progress-ms", "500")],
       "long tasks that send in-progress acks: healthy")
    mk("EPHEMERAL_R1", None, None,
       [sa(), cc("--ack-wait", "30"),
        lambda s, st: tool("request", "$JS.API.CONSUMER.CREATE." + s,
                           '{"stream_name":"%s","config":{"deliver_subject":'
                           '"dlv.%s","deliver_policy":"all","ack_policy":'
                           '"none","flow_control":true,"idle_heartbeat":'
                           '5000000000,"mem_storage":true,"num_replicas":1,'
                           '"inactive_threshold":300000000000}}' % (s, st))],
       [bgp("pub", "x", int(5 * (obs + 10)), "--rate", "5"),
        con("w", "--duration", dur, "--workers", "2")],
       "on the cluster: a durable that inherits the stream's 3 replicas "
       "and the ephemeral consumer of an ordered read (ack none, "
       "mem_storage, one replica): nothing one server's loss erases is "
       "worth keeping there (CONSUMER_SINGLE_REPLICA must not fire)")
    return cases

