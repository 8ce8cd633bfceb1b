#!/usr/bin/env python3
"""Python fault injector: a JetStream pull consumer over the NATS text
protocol (tests/eval/natsproto.py, standard library only).

Same command line and summary line as `nl-inject consume` for the options
the evaluation scenarios use:

  nl_consume.py [--server URL] consume STREAM CONSUMER --duration S
      [--batch B] [--workers W] [--process-ms P] [--slow-every K --slow-ms P2]
      [--in-progress [--progress-ms MS]] [--nak | --nak-seq-mod K | --no-ack]
      [--term-seq-mod K] [--expires-ms MS]

Each worker sends `$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>` requests
to its own inbox, models the processing time, and answers on the message's
reply subject with +ACK, -NAK, +WPI or +TERM. Exit status 0, 1 on a
connection error, 2 on a usage error.
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", ".."))
import natsproto  # noqa: E402

FLAGS = {"--in-progress", "--nak", "--no-ack", "--verbose"}
VALUED = {"--server", "--duration", "--batch", "--workers", "--process-ms",
          "--slow-every", "--slow-ms", "--progress-ms", "--nak-seq-mod",
          "--term-seq-mod", "--expires-ms", "--mode", "--max-msgs"}


def usage(msg):
    sys.stderr.write("nl_consume.py: %s\n%s" % (msg, __doc__))
    sys.exit(2)


def parse_args(argv):
    """Returns (positional list, options dict)."""
    pos, opts, i = [], {}, 0
    while i < len(argv):
        a = argv[i]
        if a in FLAGS:
            opts[a] = True
        elif a in VALUED:
            if i + 1 >= len(argv):
                usage("%s needs a value" % a)
            opts[a] = argv[i + 1]
            i += 1
        elif a.startswith("--"):
            usage("unknown option %s" % a)
        else:
            pos.append(a)
        i += 1
    return pos, opts


def parse_ack_reply(reply):
    """Returns (delivered, stream_seq) from a $JS.ACK reply subject (9-token
    2.9 form, or 11/12 tokens with domain and account hash), or None."""
    if not reply or not reply.startswith("$JS.ACK."):
        return None
    tok = reply.split(".")
    if len(tok) == 9:
        base = 2
    elif len(tok) in (11, 12):
        base = 4
    else:
        return None
    return int(tok[base + 2]), int(tok[base + 3])


class Run:
    """Settings and shared counters of one consume run."""

    def __init__(self, opts):
        def num(name, default):
            try:
                return int(opts.get(name, default))
            except ValueError:
                usage("bad value for %s" % name)

        self.duration = float(opts.get("--duration", 0))
        self.batch = num("--batch", 1)
        self.workers = num("--workers", 1)
        self.process_ms = num("--process-ms", 0)
        self.slow_every = num("--slow-every", 0)
        self.slow_ms = num("--slow-ms", self.process_ms)
        self.in_progress = "--in-progress" in opts
        self.progress_ms = num("--progress-ms", 1000)
        self.nak_all = "--nak" in opts
        self.nak_mod = num("--nak-seq-mod", 0)
        self.term_mod = num("--term-seq-mod", 0)
        self.no_ack = "--no-ack" in opts
        self.expires_ms = num("--expires-ms", 5000)
        self.max_msgs = num("--max-msgs", 0)
        if (self.duration <= 0 or self.duration > 3600 or self.batch < 1
                or not 1 <= self.workers <= 64 or self.progress_ms < 10
                or self.expires_ms < 10):
            usage("bad --duration, --batch, --workers, --progress-ms or "
                  "--expires-ms")
        if self.nak_all + (self.nak_mod > 0) + self.no_ack > 1:
            usage("--nak, --nak-seq-mod and --no-ack exclude each other")
        self.lock = threading.Lock()
        self.count = dict(received=0, redelivered_seen=0, acked=0, naked=0,
                          termed=0, in_progress_sent=0, abandoned=0,
                          max_delivery_count=0, status_msgs=0,
                          pull_requests=0, taken=0)
        self.stop = False

    def add(self, key, n=1):
        with self.lock:
            self.count[key] += n

    def handle(self, conn, msg, deadline):
        """Processes one message: waits the modelled time (sending +WPI when
        asked), then acks, NAKs, terms or leaves it. Returns False when the
        deadline cut the processing short."""
        meta = parse_ack_reply(msg.reply)
        if meta is None:
            self.add("status_msgs")
            return True
        delivered, sseq = meta
        with self.lock:
            self.count["received"] += 1
            if delivered > 1:
                self.count["redelivered_seen"] += 1
            if delivered > self.count["max_delivery_count"]:
                self.count["max_delivery_count"] = delivered
        work = self.process_ms
        if self.slow_every > 0 and sseq % self.slow_every == 0:
            work = self.slow_ms
        now = natsproto.now_ms()
        end = now + work
        next_wpi = now + self.progress_ms if self.in_progress else float("inf")
        while True:
            now = natsproto.now_ms()
            if now >= end:
                break
            if now >= deadline:
                self.add("abandoned")
                return False
            if now >= next_wpi:
                conn.publish(msg.reply, b"+WPI")
                self.add("in_progress_sent")
                next_wpi = now + self.progress_ms
            until = min(end, next_wpi, deadline)
            time.sleep(min(until - now, 50) / 1000.0)
        if self.term_mod > 0 and sseq % self.term_mod == 0:
            conn.publish(msg.reply, b"+TERM")
            self.add("termed")
        elif self.nak_all or (self.nak_mod > 0 and sseq % self.nak_mod == 0):
            conn.publish(msg.reply, b"-NAK")
            self.add("naked")
        elif not self.no_ack:
            conn.publish(msg.reply, b"+ACK")
            self.add("acked")
        return True

    def take_one(self):
        """Counts one taken message; False once --max-msgs is used up."""
        if self.max_msgs <= 0:
            return True
        with self.lock:
            self.count["taken"] += 1
            n = self.count["taken"]
        if n >= self.max_msgs:
            self.stop = True
        return n <= self.max_msgs

    def pull_worker(self, conn, stream, consumer, deadline):
        """One pull loop: one MSG.NEXT request at a time on its own inbox."""
        inbox = conn.new_inbox()
        sid, q = conn.subscribe(inbox)
        subject = "$JS.API.CONSUMER.MSG.NEXT.%s.%s" % (stream, consumer)
        while not self.stop and natsproto.now_ms() < deadline - 20:
            expires = min(deadline - natsproto.now_ms(), self.expires_ms)
            body = json.dumps({"batch": self.batch,
                               "expires": int(expires * 1e6)})
            conn.publish(subject, body, inbox)
            self.add("pull_requests")
            req_end = natsproto.now_ms() + expires + 200
            got = 0
            while not self.stop and got < self.batch:
                wait = req_end - natsproto.now_ms()
                if wait <= 0:
                    break
                try:
                    msg = q.get(timeout=wait / 1000.0)
                except Exception:
                    break
                if msg is None:
                    sys.stderr.write("nl_consume.py: %s\n" % conn.error)
                    self.stop = True
                    break
                if not msg.reply:
                    # A status message (404, 408, 409) ends this request.
                    self.add("status_msgs")
                    break
                got += 1
                if not self.take_one():
                    break
                if not self.handle(conn, msg, deadline):
                    break
        conn.unsubscribe(sid)


def main(argv):
    pos, opts = parse_args(argv)
    if len(pos) != 3 or pos[0] != "consume":
        usage("expected: consume STREAM CONSUMER --duration S ...")
    if "--duration" not in opts:
        usage("consume needs --duration")
    if opts.get("--mode", "pull") != "pull":
        usage("only --mode pull is implemented")
    run = Run(opts)
    url = opts.get("--server", "nats://127.0.0.1:4222")
    try:
        conn = natsproto.Connection(url, name="nl-eval-py")
    except (OSError, natsproto.NatsError) as e:
        sys.stderr.write("nl_consume.py: cannot connect to %s: %s\n" %
                         (url, e))
        return 1
    start = natsproto.now_ms()
    deadline = start + run.duration * 1000
    threads = [threading.Thread(target=run.pull_worker,
                                args=(conn, pos[1], pos[2], deadline),
                                daemon=True) for _ in range(run.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(run.duration + 30)
    try:
        conn.flush()
    except natsproto.NatsError:
        pass
    conn.close()
    out = {"mode": "pull", "workers": run.workers,
           "elapsed_ms": int(natsproto.now_ms() - start)}
    out.update({k: v for k, v in run.count.items() if k != "taken"})
    print(json.dumps(out, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
