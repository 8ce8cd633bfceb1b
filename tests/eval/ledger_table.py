#!/usr/bin/env python3
"""tests/eval/ledger_table.py RAW EVAL_MD COMMIT: the delivery ledger's
table of results/eval.md from the lines tests/eval/ledger.sh kept
("== RELEASE TEST", "  latency WHO: N s", "  counted WHO: N of M"). The
table goes between the "ledger" markers (an older table is replaced; the
section is added at the end when there is none)."""
import re
import sys

# (who, kind, class, scenario) in the order of the table.
KINDS = [
    ("DL/c", "removed unread, in the middle of the range", "SEQUENCE_GAP",
     "100 unread; 20 deleted one by one, each followed by a new message "
     "(num_pending never falls)"),
    ("UE/hold", "removed while held (delivered, not acked)", "SEQUENCE_GAP",
     "max_msgs 20; 10 held unacked, 20 more published (2.10+: the "
     "MSG_TERMINATED reason)"),
    ("DV/c", "removed unread by a newer message on its subject",
     "MESSAGES_DISCARDED", "one message per subject; 10 on each of 10 "
     "subjects replace 90 the consumer never received"),
    ("SK/c", "skipped by a re-creation", "MESSAGES_SKIPPED",
     "50 of 200 acked; deleted, 20 more published, created again at new "
     "messages"),
    ("TU", "stranded on a work queue", "MESSAGES_STRANDED",
     "7 messages on a subject no consumer's filter takes (latency: the "
     "StrandedSeconds hold, 3-4 s in the tests, 600 s by default)"),
    ("PS/c", "state past the stream", "CONSUMER_PAST_STREAM",
     "100 read and acked; the stream's files lost over a restart (of the "
     "node holding its one replica, in the cluster): counted, the new "
     "messages it will not deliver"),
    ("PS", "a stream that went back", "STREAM_WENT_BACK",
     "the same: counted, the messages the stream lost"),
    ("GN/c", "delivery that stops, nobody asking", "DELIVERY_STALLED",
     "10 msg/s; its worker reads, then is gone (latency: from the worker's "
     "end; the limit is the floor, StallMinSeconds 6 s single, 8 s "
     "cluster, 120 s by default)"),
    ("RK", "a stream replica offline (margin lost, nothing yet)",
     "STREAM_REPLICAS_AT_RISK", "R3; a server that leads neither the stream "
     "nor its consumer killed, 200 messages published (latency: from the "
     "kill; the grace, ReplicaGraceSeconds 10 s in the test, 30 s by "
     "default; silent on a single server, which reports no cluster)"),
    ("RK/c", "a consumer replica offline", "CONSUMER_REPLICAS_AT_RISK",
     "the same server, for the stream's R3 consumer"),
    ("R2", "a stream without a quorum (critical)", "STREAM_REPLICAS_AT_RISK",
     "R2; its follower's server killed: 1 current copy of a quorum of 2"),
    ("GROW/forecast", "publishes that will not enter (forecast)",
     "STORAGE_LIMIT_RISK", "an account limited to 1,000,000 bytes of file "
     "storage, 380 KB held, filled by a steady publisher at 10 KB/s "
     "(latency: from the publisher's start; raised before its first "
     "refused publish)"),
    ("GROW/reached", "publishes refused", "STORAGE_LIMIT_REACHED",
     "the same account full (latency: from the publisher's first refusal, "
     "error 10002, as the test saw it)"),
    ("TS", "a stream threshold the team set for natscli",
     "STREAM_THRESHOLD", "io.nats.monitor.msgs-critical=3 (a minimum), the "
     "stream holding 5 purged (2.10+; debounce two polls)"),
    ("TC/c", "a threshold the team set for natscli", "CONSUMER_THRESHOLD",
     "io.nats.monitor.unprocessed-critical=20, 30 messages published "
     "(2.10+: 2.9 keeps no metadata; debounce two polls)"),
]
TOPO = {"test_ledger": "single", "test_ledger_cluster": "cluster (R3)",
        "test_past_stream": "single", "test_past_stream_cluster":
        "cluster (R3)", "test_delivery_stalled": "single",
        "test_delivery_stalled_cluster": "cluster (R3)",
        "test_replicas_cluster": "cluster (R3)",
        "test_storage_limit": "single", "test_storage_limit_cluster":
        "cluster (R1)", "test_monitor_thresholds": "single"}


def release_key(release):
    """2.9.10 before 2.10.16: the release's numbers, compared as numbers."""
    return [int(p) if p.isdigit() else 0 for p in release.split(".")]


def main():
    raw, md, commit = sys.argv[1:4]
    # (who, topo) -> {release: [latency, counted, of]}
    runs = {}
    release = topo = None
    for line in open(raw):
        m = re.match(r"== (\S+) (\S+)", line)
        if m:
            release, topo = m.group(1), TOPO.get(m.group(2), m.group(2))
            continue
        m = re.match(r"  latency (\S+): (-?\d+) s", line)
        if m:
            # "SK/c/skipped" (the cluster test's check names) is "SK/c".
            who = "/".join(m.group(1).split("/")[:2])
            runs.setdefault((who, topo), {}).setdefault(
                release, [None, None, None])[0] = int(m.group(2))
            continue
        m = re.match(r"  counted (\S+): (\d+) of (\d+)", line)
        if m:
            r = runs.setdefault((m.group(1), topo), {}).setdefault(
                release, [None, None, None])
            r[1], r[2] = int(m.group(2)), int(m.group(3))
    rows = ["| kind | class | scenario | topology | releases | latency (s) "
            "| counted of really lost |", "|---|---|---|---|---|---:|---:|"]
    for who, kind, cls, scenario in KINDS:
        for topo in ("single", "cluster (R3)", "cluster (R1)"):
            r = runs.get((who, topo))
            if not r:
                continue
            lats = sorted(x[0] for x in r.values() if x[0] is not None)
            counted = sorted(set("%d of %d" % (x[1], x[2]) for x in r.values()
                                 if x[1] is not None))
            lat_s = ("%d" % lats[0] if lats and lats[0] == lats[-1] else
                     "%d-%d" % (lats[0], lats[-1]) if lats else "hold")
            rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                kind, cls, scenario, topo,
                ", ".join(sorted(r, key=release_key)), lat_s,
                "; ".join(counted) or "-"))
    text = "\n".join([
        "<!-- ledger -->",
        "## The delivery ledger, state past the stream, delivery that stops, "
        "replicas at risk, publishes that will not enter, natscli's "
        "thresholds",
        "",
        "Every kind of message a consumer will never process, and each "
        "stop of delivery, injected in a known number on real nats-servers polled by real collectd "
        "(commit %s): single node at 1 s polls "
        "(`tests/integration/test_ledger.sh`) and a three-node cluster with "
        "R3 streams and consumers at 2 s polls "
        "(`tests/integration/test_ledger_cluster.sh`; likewise "
        "`test_past_stream` and `test_delivery_stalled`; "
        "`test_replicas_cluster`, cluster only; `test_storage_limit` and "
        "`test_storage_limit_cluster`, whose streams are R1; "
        "`test_monitor_thresholds`, single node). Latency: from the end "
        "of the injection to the notification (the log's whole seconds). "
        "Counted: the plugin's value (`nats_lens_lost`, "
        "`nats_lens_discarded`, `nats_lens_skipped`, `nats_lens_stranded`; "
        "for a replica, the finding's `max_lag`) "
        "against the messages the test made unprocessable (for a replica, "
        "published while it was down). Counts are lower "
        "bounds: removals from the middle of the range lose a margin of two "
        "messages and a quarter of the interval's publishes per poll "
        "(docs/detectors.md). The research monitor has no ledger: its "
        "SEQUENCE_GAP condition (`first_seq > ack_floor.stream_seq + 1`) "
        "can see the held removal at the stream's head (UE/hold) and none "
        "of the others, which leave the stream's first sequence where it "
        "was. Made by:" % commit,
        "",
        "    make eval-ledger",
        "",
    ] + rows + ["", "<!-- /ledger -->"])
    doc = open(md).read()
    if "<!-- ledger -->" in doc:
        doc = re.sub(r"<!-- ledger -->.*<!-- /ledger -->", lambda m: text,
                     doc, flags=re.S)
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    open(md, "w").write(doc)


if __name__ == "__main__":
    main()
