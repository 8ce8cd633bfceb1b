"""The production mix: healthy JetStream patterns that real deployments
run, all at once, through real clients in C (nl-inject), Go (nats.go), 
JavaScript (nats.js) and Python (standard library). Every FAILURE or
WARNING notification about one of their streams is a false finding.
Python standard library only.

Each pattern is a Case (scenarios.Case) on streams of its own, whose
processes are services: restarted when they exit before the mix ends, as a
service manager would (after a server restart, say). A service's arguments
may be functions of the seconds it has left, called when it starts.
"""

import os

from scenarios import Case, Step, tool, stream_args, kill, sleep

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def service(name, prog, *args):
    """A supervised process: prog is "inject" (nl-inject), "consume" (the
    case language's consumer), "go" (nl-mix-go) or "js" (nl_mix.js)."""
    return Step("service", list(args), name=name, prog=prog)


def every(period, *steps):
    """Runs steps every period seconds (the first time after one period)
    until the case ends."""
    return Step("every", secs=period, steps=list(steps))


def server_restart():
    """Stops the server (SIGTERM, as a service restart does) and starts it
    again with its store; single node only."""
    return Step("server_restart")


def dur(secs):
    return str(int(secs))


def pub(name, subj, rate, *extra):
    """A steady publisher at rate messages per second."""
    return service(name, "inject", "publish", subj, "--count",
                   lambda s: str(max(1, int(rate * s))), "--rate", str(rate),
                   *extra)


def work(name, stream, consumer, *extra):
    """The case language's consumer on a durable consumer."""
    return service(name, "consume", "consume", stream, consumer,
                   "--duration", dur, *extra)


def pattern(tag, lang, note, setup, services, consumer="c", polled=True,
            cleanup=(), busy=None):
    """polled: the consumer exists before the services start (the case
    waits for two polls of it); busy: its consumers must be seen delivering
    (default: polled)."""
    stream = "M_" + tag
    return (stream, lang, note, setup, services, consumer, polled,
            list(cleanup), polled if busy is None else busy)


def patterns(langs):
    """The mix: (stream, language, what it is, setup steps, services,
    consumer, whether the consumer is polled by name, further streams,
    whether it must be seen delivering)."""
    P = []

    def st(tag, *extra):
        # File storage: the streams outlive a server restart.
        return tool(*stream_args("M_" + tag, 1, "--storage", "file", *extra))

    def cc(tag, name="c", *extra):
        return tool("consumer-create", "M_" + tag, name, *extra)

    def s(tag):
        return "m_" + tag.lower() + ".x"

    def steady(tag, lang, note, stream_extra, consumer_args, rate, *worker):
        """A stream, one durable consumer "c", a publisher at rate msg/s
        and the case language's worker."""
        return pattern(tag, lang, note, [st(tag, *stream_extra),
                                         cc(tag, "c", *consumer_args)],
                       [pub("pub", s(tag), rate),
                        work("w", "M_" + tag, "c", *worker)])

    for lang in langs:
        tag = "STEADY_" + lang
        P.append(steady(tag, lang, "steady load: 20 msg/s, 2 workers, 20 ms "
                        "each, ack_wait 30 s (the old healthy soak)",
                        ["--max-msgs", "100000"], ["--ack-wait", "30"], 20,
                        "--workers", "2", "--process-ms", "20"))
    P.append(steady("WQ", "c", "work-queue stream (max_msgs 500), 4 workers "
                    "acking out of order", ["--retention", "workqueue",
                                            "--max-msgs", "500"],
                    ["--ack-wait", "30"], 20, "--workers", "4", "--process-ms",
                    "50", "--slow-every", "7", "--slow-ms", "400"))
    P.append(steady("PYWQ", "py", "work-queue stream, 3 Python workers, "
                    "every 5th message slow", ["--retention", "workqueue"],
                    ["--ack-wait", "30"], 10, "--workers", "3",
                    "--process-ms", "30", "--slow-every", "5", "--slow-ms",
                    "300"))
    P.append(steady("NAKD", "c", "NAK with a 1 s delay on each first "
                    "delivery (a transient error), acked when it comes back",
                    [], ["--ack-wait", "30"], 10, "--workers", "2",
                    "--nak-first-delay-ms", "1000"))
    P.append(steady("BOFF", "c", "NAK twice with a backoff of 1 s, 2 s "
                    "(max_deliver 5), then success", [],
                    ["--ack-wait", "30", "--backoff", "1,2", "--max-deliver",
                     "5"], 5, "--workers", "2", "--nak-retries", "2"))
    P.append(steady("NAKLONG", "c", "NAK with a 5 s delay, longer than "
                    "ack_wait (3 s), acked when it comes back", [],
                    ["--ack-wait", "3"], 5, "--workers", "2",
                    "--nak-first-delay-ms", "5000"))
    P.append(pattern("BURST", "c", "bursty publisher (300 at once every "
                     "20 s, max_msgs 5000) drained in batches of 100",
                     [st("BURST", "--max-msgs", "5000"),
                      cc("BURST", "c", "--ack-wait", "30")],
                     [every(20, tool("publish", s("BURST"), "--count",
                                     "300")),
                      work("w", "M_BURST", "c", "--batch", "100",
                           "--process-ms", "2")]))
    P.append(pattern("DRAIN", "c", "a burst of 2000 every 2 minutes drained "
                     "at about 100/s with nothing else published "
                     "(max_msgs 10000)",
                     [st("DRAIN", "--max-msgs", "10000"),
                      cc("DRAIN", "c", "--ack-wait", "30"),
                      tool("publish", s("DRAIN"), "--count", "2000")],
                     [every(120, tool("publish", s("DRAIN"), "--count",
                                      "2000")),
                      work("w", "M_DRAIN", "c", "--workers", "2",
                           "--process-ms", "20")]))
    P.append(pattern("IDLE", "c", "an idle backlog of 2000 on a stream "
                     "without limits, never read",
                     [st("IDLE"), cc("IDLE", "c", "--ack-wait", "30"),
                      tool("publish", s("IDLE"), "--count", "2000")], [],
                     busy=False))
    P.append(pattern("TELE", "c", "telemetry meant to drop (max_age 5 s, "
                     "max_msgs 200, 50 msg/s) with a live reader that "
                     "keeps up",
                     [st("TELE", "--max-age", "5", "--max-msgs", "200"),
                      cc("TELE", "live", "--ack-wait", "30",
                         "--deliver-policy", "new")],
                     [pub("pub", s("TELE"), 50),
                      work("w", "M_TELE", "live", "--workers", "2",
                           "--batch", "10")], consumer="live"))
    P.append(steady("MAXAGE", "c", "max_age 3 s, a consumer that keeps up "
                    "(20 msg/s)", ["--max-age", "3"], ["--ack-wait", "30"], 20,
                    "--workers", "2", "--process-ms", "5"))
    P.append(steady("WPI", "c", "long tasks (8 s, ack_wait 3 s) that send "
                    "in-progress acks every second", [], ["--ack-wait", "3"],
                    0.2, "--workers", "2", "--process-ms", "8000",
                    "--in-progress", "--progress-ms", "1000"))
    P.append(steady("AALL", "c", "AckAll with one worker, one message at a "
                    "time", [], ["--ack", "all", "--ack-wait", "30"], 10,
                    "--workers", "1"))
    P.append(steady("WAIT", "c", "8 pull workers with 5 s requests and "
                    "1 msg/s: many requests waiting", [], ["--ack-wait", "30"],
                    1, "--workers", "8", "--expires-ms", "5000"))
    P.append(pattern("DLQ", "c", "max_deliver 3 with a dead-letter stream "
                     "for its MAX_DELIVERIES advisories; every 50th message "
                     "is poison (NAKed until exhausted)",
                     [st("DLQ"), tool("stream-create", "M_DLQ_DEAD",
                                      "--subjects",
                                      "$JS.EVENT.ADVISORY.CONSUMER."
                                      "MAX_DELIVERIES.M_DLQ.c",
                                      "--storage", "file"),
                      cc("DLQ", "c", "--ack-wait", "30", "--max-deliver",
                         "3")],
                     [pub("pub", s("DLQ"), 10),
                      work("w", "M_DLQ", "c", "--workers", "2",
                           "--nak-seq-mod", "50")],
                     cleanup=["M_DLQ_DEAD"]))
    P.append(pattern("INT", "c", "interest stream with two live consumers",
                     [st("INT", "--retention", "interest"),
                      cc("INT", "c", "--ack-wait", "30"),
                      cc("INT", "c2", "--ack-wait", "30")],
                     [pub("pub", s("INT"), 20),
                      work("w", "M_INT", "c", "--workers", "2"),
                      work("w2", "M_INT", "c2", "--workers", "2")]))
    P.append(pattern("CRASH", "c", "a worker killed every 90 s while "
                     "holding messages, restarted 2 s later (ack_wait 5 s)",
                     [st("CRASH"), cc("CRASH", "c", "--ack-wait", "5")],
                     [pub("pub", s("CRASH"), 10),
                      work("w", "M_CRASH", "c", "--workers", "2",
                           "--batch", "5", "--process-ms", "200"),
                      every(90, kill("w"))]))
    P.append(pattern("RECR", "c", "a consumer deleted and created again "
                     "every 60 s (deliver_policy new)",
                     [st("RECR"), cc("RECR", "c", "--ack-wait", "30",
                                     "--deliver-policy", "new")],
                     [pub("pub", s("RECR"), 10),
                      work("w", "M_RECR", "c", "--workers", "2"),
                      every(60, kill("w"),
                            tool("consumer-delete", "M_RECR", "c"),
                            tool("consumer-create", "M_RECR", "c",
                                 "--ack-wait", "30", "--deliver-policy",
                                 "new"))]))
    # The delivery ledger's look-alikes (MESSAGES_SKIPPED, _DISCARDED,
    # _STRANDED): a redeploy that starts where the old consumer
    # acknowledged, a last-per-subject reader of a stream that keeps one
    # message per subject, work-queue consumers whose disjoint filters
    # take every subject published.
    P.append(pattern("REDEP", "c", "a consumer redeployed every 45 s: "
                     "deleted and created again at its ack floor + 1",
                     [st("REDEP"), cc("REDEP", "c", "--ack-wait", "30")],
                     [pub("pub", s("REDEP"), 10),
                      work("w", "M_REDEP", "c", "--workers", "2"),
                      every(45, kill("w"),
                            tool("consumer-redeploy", "M_REDEP", "c"))]))
    P.append(pattern("LPS", "c", "one message per subject (10 subjects, "
                     "10 msg/s), read by an explicit-ack consumer of the "
                     "newest per subject",
                     [st("LPS", "--max-msgs-per-subject", "1"),
                      cc("LPS", "c", "--ack-wait", "30", "--deliver-policy",
                         "last_per_subject", "--filter", "m_lps.>")],
                     [pub("p%d" % i, "m_lps.k%d" % i, 1) for i in range(10)] +
                     [work("w", "M_LPS", "c", "--workers", "2")]))
    P.append(pattern("WQD", "c", "a work queue with two consumers on "
                     "disjoint filters (m_wqd.a, m_wqd.b) taking every "
                     "subject published",
                     [st("WQD", "--retention", "workqueue"),
                      cc("WQD", "c", "--ack-wait", "30", "--filter",
                         "m_wqd.a"),
                      cc("WQD", "b", "--ack-wait", "30", "--filter",
                         "m_wqd.b")],
                     [pub("pa", "m_wqd.a", 5), pub("pb", "m_wqd.b", 5),
                      work("wa", "M_WQD", "c", "--workers", "2"),
                      work("wb", "M_WQD", "b", "--workers", "2")]))
    # DELIVERY_STALLED's look-alike: an application stopped on purpose
    # for a minute at a time while messages wait (its floor is 120 s).
    # (A tool step may run 60 s at most.)
    P.append(pattern("PAUSE", "c", "a worker that reads for 50 s and "
                     "stops for 60 s, over and over, while 5 msg/s arrive",
                     [st("PAUSE"), cc("PAUSE", "c", "--ack-wait", "30")],
                     [pub("pub", s("PAUSE"), 5),
                      every(60, tool("consume", "M_PAUSE", "c", "--duration",
                                     "50", "--workers", "2"))]))
    P.append(pattern("LAG", "c", "a consumer reading 100 at a time next to "
                     "a lagging one (10 of 20 msg/s) and one recreated with "
                     "deliver_policy new every 2 minutes (max_msgs 200000)",
                     [st("LAG", "--max-msgs", "200000"),
                      cc("LAG", "c", "--ack-wait", "30"),
                      cc("LAG", "lag", "--ack-wait", "30"),
                      cc("LAG", "fresh", "--ack-wait", "30",
                         "--deliver-policy", "new")],
                     [pub("pub", s("LAG"), 20),
                      every(5, tool("consume", "M_LAG", "c", "--duration",
                                    "1", "--batch", "100", "--max-msgs",
                                    "100")),
                      work("wl", "M_LAG", "lag", "--process-ms", "100"),
                      work("wf", "M_LAG", "fresh", "--workers", "2"),
                      every(120, kill("wf"),
                            tool("consumer-delete", "M_LAG", "fresh"),
                            tool("consumer-create", "M_LAG", "fresh",
                                 "--ack-wait", "30", "--deliver-policy",
                                 "new"))], consumer="lag"))
    P.append(pattern("PUSH", "c", "a push consumer with its subscriber "
                     "(queue group)",
                     [st("PUSH"), cc("PUSH", "c", "--ack-wait", "30",
                                     "--deliver-subject", "deliver.m_push",
                                     "--deliver-group", "g")],
                     [pub("pub", "m_push.x", 10),
                      work("w", "M_PUSH", "c", "--mode", "push",
                           "--deliver-subject", "deliver.m_push",
                           "--queue", "g")]))
    # Push consumers with a rate limit (RATE_LIMITED's look-alikes), on
    # streams with max_msg_size 1024 so that the limit's first burst is
    # 1 kB: one whose limit (24,000 bit/s, 3,000 B/s) is above its 10 msg/s
    # of 100 bytes (about 1,500 B/s as the server counts deliveries), with
    # a backlog of 300 to drain at its limit first; one limited to 8,000
    # bit/s (1,000 B/s) fed bursts of 100 every 30 s (about 500 B/s on
    # average), each drained in about 15 s.
    for tag, bps, note in (("RLABOVE", "24000", "a push consumer limited to "
                            "24,000 bit/s, above its 10 msg/s of 100 bytes, "
                            "after a backlog of 300 drained at its limit"),
                           ("RLBURST", "8000", "a push consumer limited to "
                            "8,000 bit/s fed bursts of 100 messages of 100 "
                            "bytes every 30 s, each drained at its limit")):
        dsub = "deliver." + tag.lower()
        setup = [st(tag, "--max-msg-size", "1024"),
                 cc(tag, "c", "--ack-wait", "30", "--deliver-subject", dsub,
                    "--rate-limit-bps", bps)]
        services = [work("w", "M_" + tag, "c", "--mode", "push",
                         "--deliver-subject", dsub)]
        if tag == "RLABOVE":
            setup.append(tool("publish", s(tag), "--count", "300", "--size",
                              "100"))
            services.append(pub("pub", s(tag), 10, "--size", "100"))
        else:
            services.append(every(30, tool("publish", s(tag), "--count",
                                           "100", "--size", "100")))
        P.append(pattern(tag, "c", note, setup, services))
    P.append(pattern("MIRROR", "c", "a mirror and a sourced stream of an "
                     "origin at 10 msg/s, with a consumer on the mirror",
                     [st("MIRO"),
                      tool("request", "$JS.API.STREAM.CREATE.M_MIRROR",
                           '{"name":"M_MIRROR","mirror":{"name":"M_MIRO"}}'),
                      tool("request", "$JS.API.STREAM.CREATE.M_MIRSRC",
                           '{"name":"M_MIRSRC","sources":[{"name":'
                           '"M_MIRO"}]}'),
                      cc("MIRROR", "c", "--ack-wait", "30")],
                     [pub("pub", "m_miro.x", 10),
                      work("w", "M_MIRROR", "c", "--workers", "2")],
                     cleanup=["M_MIRO", "M_MIRSRC"]))
    # Streams with discard new (PUBLISH_REJECTED's look-alikes): a work
    # queue that its workers keep below its limit; a write-once stream
    # (one message per subject, a second refused by design); and a stream
    # declared full by design (eval's collectd config: StreamDeclaration
    # "M_FULLOK" "full_ok" "true") whose publisher goes on after refusals.
    P.append(steady("WQNEW", "c", "work queue with discard new (max_msgs "
                    "200), 4 workers keeping it below its limit",
                    ["--retention", "workqueue", "--discard", "new",
                     "--max-msgs", "200"], ["--ack-wait", "30"], 20,
                    "--workers", "4", "--process-ms", "20"))
    P.append(pattern("WONCE", "c", "write-once stream (max_msgs_per_subject "
                     "1, discard new per subject): the first publish to its "
                     "subject taken, each later one refused by design",
                     [st("WONCE", "--discard", "new", "--max-msgs-per-subject",
                         "1", "--discard-per-subject")],
                     [pub("pub", s("WONCE"), 1, "--keep-going")],
                     polled=False))
    P.append(pattern("FULLOK", "c", "discard new at max_msgs 100, declared "
                     "full by design, a publisher at 5 msg/s going on after "
                     "refusals",
                     [st("FULLOK", "--discard", "new", "--max-msgs", "100")],
                     [pub("pub", s("FULLOK"), 5, "--keep-going")],
                     polled=False))
    P.append(pattern("MIRIDLE", "c", "an idle origin with a mirror and a "
                     "sourced stream: nothing new to take",
                     [st("MIRIDLE"), tool("publish", s("MIRIDLE"), "--count",
                                          "50"),
                      tool("request", "$JS.API.STREAM.CREATE.M_MIRIDLE_M",
                           '{"name":"M_MIRIDLE_M","mirror":{"name":'
                           '"M_MIRIDLE"}}'),
                      tool("request", "$JS.API.STREAM.CREATE.M_MIRIDLE_S",
                           '{"name":"M_MIRIDLE_S","sources":[{"name":'
                           '"M_MIRIDLE"}]}')], [], polled=False, busy=False,
                     cleanup=["M_MIRIDLE_M", "M_MIRIDLE_S"]))
    P.append(pattern("MIRFILT", "c", "a source filtered on a subject its "
                     "origin never receives (the origin at 5 msg/s on "
                     "another)",
                     [st("MIRFILT"),
                      tool("request", "$JS.API.STREAM.CREATE.M_MIRFILT_S",
                           '{"name":"M_MIRFILT_S","sources":[{"name":'
                           '"M_MIRFILT","filter_subject":"m_mirfilt.other"}]}')],
                     [pub("pub", s("MIRFILT"), 5)], polled=False, busy=False,
                     cleanup=["M_MIRFILT_S"]))
    # Consumers with an inactive_threshold (CONSUMER_EXPIRING's and
    # CONSUMER_EXPIRED's look-alikes): request-reply consumers with a name
    # and no durable name (ephemeral: the server's 5 s), each read to the
    # end of its stream and left to expire; and a durable of 60 s read by a
    # pull client every 10 s, far within its threshold.
    # Each request's consumer has a name of its own (r1, r2, ...): one name
    # for every request would, on a busy machine, reach the previous
    # consumer before the server removed it and make it one consumer used
    # for minutes, a named ephemeral taken for a durable (the fault).
    req = {"n": 0}

    def req_next():
        req["n"] += 1
        return "r%d" % req["n"]

    P.append(pattern("EXPREQ", "c", "request-reply: every 8 s a consumer "
                     "with a name of its own and no durable name (the server "
                     "removes it after 5 s idle) reads the stream (1 msg/s) "
                     "for 1 s and is left to expire",
                     [st("EXPREQ")],
                     [pub("pub", s("EXPREQ"), 1),
                      every(8, tool("consumer-create", "M_EXPREQ", req_next,
                                    "--ephemeral", "--ack-wait", "30"),
                            tool("consume", "M_EXPREQ",
                                 lambda: "r%d" % req["n"], "--duration",
                                 "1"))],
                     polled=False))
    P.append(pattern("EXPFAR", "c", "a durable with inactive_threshold 60 s "
                     "read by a pull client every 10 s (2 msg/s)",
                     [st("EXPFAR"), cc("EXPFAR", "c", "--ack-wait", "30",
                                       "--inactive-threshold", "60")],
                     [pub("pub", s("EXPFAR"), 2),
                      every(10, tool("consume", "M_EXPFAR", "c", "--duration",
                                     "1", "--batch", "100"))]))
    # In Go (nats.go) and JavaScript (nats.js): key-value, object store and
    # an ordered consumer.
    for lang, client in (("go", "nats.go"), ("js", "nats.js")):
        g = lang[0].upper()
        P.append(pattern("KV" + g, lang, "a KV bucket written 5 times a "
                         "second and watched (%s)" % client, [],
                         [service("kv", lang, "--pattern", "kv", "--bucket",
                                  "M_KV" + g, "--rate", "5", "--duration",
                                  dur)], polled=False))
        P.append(pattern("OBJ" + g, lang, "an object store: 200 kB put every "
                         "10 s, read back, the previous deleted (%s)" % client,
                         [], [service("obj", lang, "--pattern", "obj",
                                      "--bucket", "M_OBJ" + g, "--duration",
                                      dur)], polled=False))
        P.append(pattern("ORD" + g, lang, "an ordered consumer (%s) of a "
                         "stream at 10 msg/s" % client, [st("ORD" + g)],
                         [pub("pub", s("ORD" + g), 10),
                          service("r", lang, "--pattern", "ordered",
                                  "--stream", "M_ORD" + g, "--subject",
                                  s("ORD" + g), "--duration", dur)],
                         polled=False))
    # Go (nats.go) only
    P.append(pattern("DUP", "go", "each message published twice with the "
                     "same Nats-Msg-Id (duplicate window), read by a "
                     "C consumer",
                     [st("DUP"), cc("DUP", "c", "--ack-wait", "30")],
                     [service("pub", "go", "--pattern", "dup", "--subject",
                              s("DUP"), "--rate", "10", "--duration", dur),
                      service("w", "inject", "consume", "M_DUP", "c",
                              "--duration", dur, "--workers", "2")]))
    P.append(pattern("PFC", "go", "a durable push consumer with flow control "
                     "and 1 s heartbeats (nats.go)", [st("PFC")],
                     [pub("pub", s("PFC"), 20),
                      service("r", "go", "--pattern", "pushfc", "--stream",
                              "M_PFC", "--subject", s("PFC"), "--name", "c",
                              "--duration", dur)], polled=False, busy=True))
    P.append(pattern("EPH", "go", "ephemeral pull consumers created, read "
                     "from and removed every 2 s (nats.go)", [st("EPH")],
                     [pub("pub", s("EPH"), 5),
                      service("r", "go", "--pattern", "eph", "--stream",
                              "M_EPH", "--subject", s("EPH"), "--duration",
                              dur)], polled=False))
    # JavaScript (nats.js) only
    P.append(pattern("WAITJ", "js", "6 pull loops with 5 s requests and "
                     "1 msg/s (nats.js)",
                     [st("WAITJ"), cc("WAITJ", "c", "--ack-wait", "30")],
                     [pub("pub", s("WAITJ"), 1),
                      service("r", "js", "--pattern", "waiting", "--stream",
                              "M_WAITJ", "--name", "c", "--workers", "6",
                              "--duration", dur)]))
    return P


# The stream a KV bucket or object store keeps its data in.
def data_stream(stream):
    tag = stream[2:]
    if tag in ("KVG", "KVJ"):
        return "KV_M_" + tag
    if tag in ("OBJG", "OBJJ"):
        return "OBJ_M_" + tag
    return stream


def mix_cases(secs, langs, restart=False):
    """The mix as cases of `secs` seconds each; with restart, one more case
    restarts the server halfway through."""
    cases = []
    for stream, lang, note, setup, services, consumer, polled, cleanup, busy \
            in patterns(langs):
        st = data_stream(stream)
        c = Case("mix/%s" % stream[2:].lower(), st, consumer, lang, None,
                 None, setup, services + [sleep(secs), kill()],
                 observe_s=0, note=note,
                 polled=("nats_lens_num_pending", None) if polled else None,
                 trace=False, cleanup=cleanup)
        c.mix = True
        c.mix_busy = busy
        cases.append(c)
    if restart:
        c = Case("mix/server-restart", "M_RESTART", "c", "c", None, None,
                 [], [sleep(secs / 2), server_restart(), sleep(secs / 2)],
                 observe_s=0, note="the server restarted halfway", polled=None,
                 trace=False)
        c.mix = True
        c.mix_busy = False
        cases.append(c)
    return cases
