#!/usr/bin/env python3
"""Python fault injector: a JetStream pull or push consumer over the NATS
text protocol (tests/eval/natsproto.py, standard library only).

Same command line and summary line as `nl-inject consume` for the options
the evaluation scenarios use:

  nl_consume.py [--server URL] consume STREAM CONSUMER --duration S
      [--mode pull|push] [--deliver-subject SUBJ] [--queue G]
      [--batch B] [--workers W] [--process-ms P]
      [--process-dist fixed|lognormal] [--process-sigma S] [--seed N]
      [--slow-every K --slow-ms P2] [--stagger-ms MS]
      [--in-progress [--progress-ms MS]] [--nak | --nak-seq-mod K | --no-ack]
      [--term-seq-mod K] [--max-msgs N] [--expires-ms MS] [--verbose]

Pull mode: each worker sends `$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`
requests to its own inbox. Push mode: one subscription to the deliver
subject (--deliver-subject, else the consumer's; --queue, else its deliver
group) fills an unbounded in-order buffer, from which the W workers take
messages in turn; flow-control requests are answered, heartbeats counted
(both as status_msgs); --batch and --expires-ms are ignored. Either way a
worker models the processing time and answers on the message's reply
subject with +ACK, -NAK, +WPI or +TERM.

Processing time: --process-ms P each (fixed, the default), or with
--process-dist lognormal P x exp(S x z) ms, z standard normal (S is
--process-sigma, default 0.5), capped at 20 x P; each worker draws from
its own generator seeded from --seed (default 1) and its index, the same
generator as the C, Go and JavaScript injectors. --slow-every/--slow-ms
override it for those messages. Worker i (from 0) starts i x --stagger-ms
late. --verbose logs each event to stderr.

Exit status 0, 1 on a connection error, 2 on a usage error.
"""

import json
import math
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
          "--term-seq-mod", "--expires-ms", "--mode", "--max-msgs",
          "--process-dist", "--process-sigma", "--seed", "--stagger-ms",
          "--deliver-subject", "--queue"}

MASK64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


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
    """Returns (delivered, stream_seq, consumer_seq) from a $JS.ACK reply
    subject (9-token 2.9 form, or 11/12 tokens with domain and account
    hash), or None."""
    if not reply or not reply.startswith("$JS.ACK."):
        return None
    tok = reply.split(".")
    if len(tok) == 9:
        base = 2
    elif len(tok) in (11, 12):
        base = 4
    else:
        return None
    return int(tok[base + 2]), int(tok[base + 3]), int(tok[base + 4])


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


class Rng:
    """The processing-time generator of all four injectors: splitmix64
    seeded from the seed and the worker index, Marsaglia's polar method."""

    def __init__(self, seed, worker):
        self.state = mix64((seed & MASK64) ^ mix64(((worker + 1) * GAMMA)
                                                   & MASK64))

    def uniform(self):
        self.state = (self.state + GAMMA) & MASK64
        return (mix64(self.state) >> 11) * (1.0 / 9007199254740992.0)

    def normal(self):
        while True:
            v1 = 2 * self.uniform() - 1
            v2 = 2 * self.uniform() - 1
            s = v1 * v1 + v2 * v2
            if 0 < s < 1:
                return v1 * math.sqrt(-2 * math.log(s) / s)


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
        self.verbose = "--verbose" in opts
        self.push = opts.get("--mode", "pull") == "push"
        dist = opts.get("--process-dist", "fixed")
        if dist not in ("fixed", "lognormal"):
            usage("--process-dist must be fixed or lognormal")
        self.lognormal = dist == "lognormal"
        try:
            self.sigma = float(opts.get("--process-sigma", 0.5))
        except ValueError:
            usage("bad value for --process-sigma")
        if not 0 <= self.sigma <= 10:
            usage("--process-sigma must lie in [0, 10]")
        self.seed = num("--seed", 1)
        if not -(1 << 63) <= self.seed < (1 << 63):
            usage("bad value for --seed")
        self.stagger_ms = num("--stagger-ms", 0)
        if not 0 <= self.stagger_ms <= 3600000:
            usage("--stagger-ms must lie in [0, 3600000]")
        self.start = 0.0
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

    def vlog(self, worker, meta, what):
        """Logs one per-message event to stderr when --verbose is set."""
        if self.verbose:
            sys.stderr.write("t=%.3f w=%d sseq=%d cseq=%d dc=%d %s\n" % (
                (natsproto.now_ms() - self.start) / 1000.0, worker, meta[1],
                meta[2], meta[0], what))

    def work_ms(self, rng):
        """The next message's processing time: --process-ms, or with
        lognormal P x exp(S x z) capped at 20 x P, to the millisecond."""
        if not self.lognormal:
            return self.process_ms
        p = float(self.process_ms)
        t = p * math.exp(self.sigma * rng.normal())
        if t > 20 * p:
            t = 20 * p
        return int(t + 0.5) if t > 0 else 0

    def stagger_wait(self, worker, deadline):
        """Waits until this worker's start, worker x --stagger-ms after the
        run's (or the deadline or a stop, if sooner)."""
        if self.stagger_ms <= 0:
            return
        start = self.start + worker * self.stagger_ms
        while True:
            now = natsproto.now_ms()
            if now >= start or now >= deadline or self.stop:
                break
            time.sleep(min(min(start, deadline) - now, 50) / 1000.0)
        if self.verbose:
            sys.stderr.write("t=%.3f w=%d start\n" % (
                (natsproto.now_ms() - self.start) / 1000.0, worker))

    def handle(self, conn, msg, deadline, worker, rng):
        """Processes one message: waits the modelled time (sending +WPI when
        asked), then acks, NAKs, terms or leaves it. Returns False when the
        deadline cut the processing short."""
        meta = parse_ack_reply(msg.reply)
        if meta is None:
            # Status messages: heartbeats, flow control, pull errors. A flow
            # control request (100 with a reply subject) wants an empty
            # message back.
            self.add("status_msgs")
            if msg.status() == "100" and msg.reply:
                conn.publish(msg.reply, b"")
            return True
        delivered, sseq, _ = meta
        with self.lock:
            self.count["received"] += 1
            if delivered > 1:
                self.count["redelivered_seen"] += 1
            if delivered > self.count["max_delivery_count"]:
                self.count["max_delivery_count"] = delivered
        # Drawn for every delivery, so the slow ones do not shift the series.
        work = self.work_ms(rng)
        self.vlog(worker, meta,
                  "recv work=%d" % work if self.lognormal else "recv")
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
                self.vlog(worker, meta, "abandoned")
                return False
            if now >= next_wpi:
                conn.publish(msg.reply, b"+WPI")
                self.add("in_progress_sent")
                self.vlog(worker, meta, "wpi")
                next_wpi = now + self.progress_ms
            until = min(end, next_wpi, deadline)
            time.sleep(min(until - now, 50) / 1000.0)
        if self.term_mod > 0 and sseq % self.term_mod == 0:
            conn.publish(msg.reply, b"+TERM")
            self.add("termed")
            self.vlog(worker, meta, "term")
        elif self.nak_all or (self.nak_mod > 0 and sseq % self.nak_mod == 0):
            conn.publish(msg.reply, b"-NAK")
            self.add("naked")
            self.vlog(worker, meta, "nak")
        elif not self.no_ack:
            conn.publish(msg.reply, b"+ACK")
            self.add("acked")
            self.vlog(worker, meta, "ack")
        else:
            self.vlog(worker, meta, "no-ack")
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

    def pull_worker(self, conn, stream, consumer, deadline, worker):
        """One pull loop: one MSG.NEXT request at a time on its own inbox."""
        rng = Rng(self.seed, worker)
        inbox = conn.new_inbox()
        sid, q = conn.subscribe(inbox)
        subject = "$JS.API.CONSUMER.MSG.NEXT.%s.%s" % (stream, consumer)
        self.stagger_wait(worker, deadline)
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
                    if self.verbose:
                        sys.stderr.write("t=%.3f w=%d status %s %s\n" % (
                            (natsproto.now_ms() - self.start) / 1000.0,
                            worker, msg.status() or "?",
                            msg.headers.get("Description", "")))
                    break
                got += 1
                if not self.take_one():
                    break
                if not self.handle(conn, msg, deadline, worker, rng):
                    break
        conn.unsubscribe(sid)

    def push_worker(self, conn, q, deadline, worker):
        """One push loop: takes the next message from the subscription's
        buffer (shared by all workers, in order) and handles it."""
        rng = Rng(self.seed, worker)
        self.stagger_wait(worker, deadline)
        while not self.stop and natsproto.now_ms() < deadline:
            try:
                msg = q.get(timeout=min(100, max(
                    1, deadline - natsproto.now_ms())) / 1000.0)
            except Exception:
                continue
            if msg is None:
                sys.stderr.write("nl_consume.py: %s\n" % conn.error)
                self.stop = True
                q.put(None)  # for the other workers
                break
            if parse_ack_reply(msg.reply) is not None and not self.take_one():
                break
            self.handle(conn, msg, deadline, worker, rng)


def main(argv):
    pos, opts = parse_args(argv)
    if len(pos) != 3 or pos[0] != "consume":
        usage("expected: consume STREAM CONSUMER --duration S ...")
    if "--duration" not in opts:
        usage("consume needs --duration")
    mode = opts.get("--mode", "pull")
    if mode not in ("pull", "push"):
        usage("--mode must be pull or push")
    run = Run(opts)
    url = opts.get("--server", "nats://127.0.0.1:4222")
    try:
        conn = natsproto.Connection(url, name="nl-eval-py")
    except (OSError, natsproto.NatsError) as e:
        sys.stderr.write("nl_consume.py: cannot connect to %s: %s\n" %
                         (url, e))
        return 1
    push_sid = None
    if run.push:
        # The deliver subject and queue group: given, or the consumer's.
        deliver = opts.get("--deliver-subject")
        group = opts.get("--queue")
        if deliver is None or group is None:
            try:
                info = natsproto.js_api(conn, "CONSUMER.INFO.%s.%s" %
                                        (pos[1], pos[2]))
            except (OSError, natsproto.NatsError) as e:
                sys.stderr.write("nl_consume.py: %s\n" % e)
                return 1
            cfg = info.get("config", {})
            deliver = deliver or cfg.get("deliver_subject")
            group = group or cfg.get("deliver_group")
            if not deliver:
                usage("consumer %s.%s is a pull consumer; use --mode pull" %
                      (pos[1], pos[2]))
        push_sid, push_q = conn.subscribe(deliver, group)
    run.start = natsproto.now_ms()
    start = run.start
    deadline = start + run.duration * 1000
    if run.push:
        threads = [threading.Thread(target=run.push_worker,
                                    args=(conn, push_q, deadline, i),
                                    daemon=True) for i in range(run.workers)]
    else:
        threads = [threading.Thread(target=run.pull_worker,
                                    args=(conn, pos[1], pos[2], deadline, i),
                                    daemon=True) for i in range(run.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(run.duration + 30)
    if push_sid is not None:
        try:
            conn.unsubscribe(push_sid)
        except OSError:
            pass
    try:
        conn.flush()
    except (OSError, natsproto.NatsError):
        pass
    conn.close()
    out = {"mode": mode, "workers": run.workers,
           "elapsed_ms": int(natsproto.now_ms() - start)}
    out.update({k: v for k, v in run.count.items() if k != "taken"})
    print(json.dumps(out, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
