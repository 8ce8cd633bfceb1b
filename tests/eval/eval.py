#!/usr/bin/env python3
"""Evaluation driver: runs the scenarios of tests/eval/scenarios.py against
a running nats-server (or cluster) watched by a running collectd with the
nats_lens plugin, and writes the raw measurements as JSON.

Started by tests/eval/run_topology.sh, which starts the servers and
collectd with tests/lib.sh and passes their addresses here:

  eval.py --topology single|cluster --interval D --rounds N --langs "c py"
      --urls URL[,URL...] --monitor PORT[,PORT...] --collectd-dir DIR
      --instance NAME --out RAW.json [--soak SECONDS] [--boundary]
      [--baseline] [--kill-rounds] [--work DIR] [--ext-rounds N]
      [--ext-langs "c py"] [--ext-classes "CLASS ..."]
      [--classes "CLASS ..."]

Times: injection and fix are taken by this driver when it starts the step;
the signal is the first 0.25 s trace of CONSUMER.INFO (and STREAM.INFO)
showing the fault; detection and recovery are the times of the first poll
whose class value (collectd CSV `nats_lens_<class>-<consumer>`, 0/1) is 1
after the injection, and 0 after the fix, confirmed by the FAILURE/WARNING
and OKAY notifications in collectd's log. CSV times are the start of the
poll (collectd's read time), so a latency is the time until the poll that
saw the fault began; the plugin's own work adds a few milliseconds. A
finding raised between polls (from JetStream advisories) has no CSV row of
its own: it is timed by the `detected_at` of the plugin's health event
(nats.lens.health.violations.>, the plugin's clock), which equals the poll
time for a finding raised by a poll, so an event whose time is no poll's
came from an advisory; for those, the latency from the advisory (its
server `timestamp`, the same host clock) to the finding is recorded too.
Without a health event the driver falls back to the time it first saw the
notification in the log (read every 0.2 s).

With --ext-rounds N the classes beyond the five (scenarios.EXT_CLASSES)
run N rounds after the rounds of the five (phase "ext"), the node-kill
case of CONSUMER_UNOBSERVABLE alone at the end. With --classes only the
named classes of the five run, in the rounds and in the baseline.
"""

import argparse
import calendar
import glob
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mix  # noqa: E402
import natsproto  # noqa: E402
import reference  # noqa: E402
import scenarios  # noqa: E402
from scenarios import CLASSES  # noqa: E402

HEALTH_SUBJECT = "nats.lens.health.violations.>"
ADVISORY_PREFIX = "$JS.EVENT.ADVISORY.CONSUMER."

NOTIF_RE = re.compile(
    r"Notification: severity = (\w+).*?plugin_instance = (\S+?),"
    r".*?type_instance = (\S+?), message = (.*)$")


# The polls a fault stays in place after its injection before the fix is
# applied, at the least: the window in which each tool may detect it.
REF_WINDOW_POLLS = 10

# Every process this driver starts, stopped when it ends or is stopped.
STARTED = []


def stop_procs(procs):
    """Terminates the processes that still run, killing those that do not
    end within 5 s."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()


def stop_started(*_):
    """Terminates every process started here that still runs; as a signal
    handler it then exits."""
    stop_procs(STARTED)
    if _:
        os._exit(1)  # The case threads are waiting: end them all at once.


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


class Env:
    """Where things run: server URLs, monitor ports, collectd's files."""

    def __init__(self, a):
        self.urls = a.urls.split(",")
        self.monitor = [int(p) for p in a.monitor.split(",")] if a.monitor \
            else []
        self.d = float(a.interval)
        self.instance = a.instance
        self.cdir = a.collectd_dir
        self.log = os.path.join(self.cdir, "collectd.log")
        self.csv = os.path.join(self.cdir, "csv", "nl-test")
        self.work = a.work
        self.replicas = 3 if a.topology == "cluster" else 1
        self.topology = a.topology
        self.inj_url = self.urls[0]  # Injectors and the tracer use this.
        self.watcher = None  # A Watcher, once started.
        self.cluster = None  # A Cluster on the cluster topology.
        self.servers = None  # A Cluster of the servers, on any topology.
        os.makedirs(self.work, exist_ok=True)

    def csv_rows(self, stream, typ, consumer):
        """All (time, value) rows of one CSV series, oldest first; consumer
        is the type instance, None for a stream-level value; stream None
        for an instance-level value."""
        pat = os.path.join(self.csv, "nats_lens-%s" % self.instance + (
            "-" + stream if stream else ""), "%s-%s-*" % (typ, consumer)
            if consumer else "%s-[0-9][0-9][0-9][0-9]-*" % typ)
        rows = []
        for f in sorted(glob.glob(pat)):
            with open(f) as fh:
                for line in fh:
                    parts = line.strip().split(",")
                    if len(parts) >= 2 and parts[0] != "epoch":
                        try:
                            rows.append((float(parts[0]), float(parts[1])))
                        except ValueError:
                            pass
        rows.sort()
        return rows

    def notifications(self):
        """Every notification in collectd's log as dicts (severity,
        plugin_instance, class, stream, consumer, message)."""
        out = []
        try:
            with open(self.log, errors="replace") as fh:
                for line in fh:
                    m = NOTIF_RE.search(line)
                    if not m:
                        continue
                    sev, pi, cls, msg = m.groups()
                    stream = pi[len(self.instance) + 1:] if pi.startswith(
                        self.instance + "-") else pi
                    mm = re.match(r"\S+ ([^/\s]+)/([^:\s]+):", msg)
                    out.append({"severity": sev, "plugin_instance": pi,
                                "class": cls, "stream": stream,
                                "consumer": mm.group(2) if mm else None,
                                "message": msg})
        except FileNotFoundError:
            pass
        return out


class Tracer(threading.Thread):
    """Polls CONSUMER.INFO (and STREAM.INFO for loss) of every traced case
    every 0.25 s and records the first time each case's signal holds."""

    def __init__(self, env):
        super().__init__(daemon=True)
        self.env = env
        self.lock = threading.Lock()
        self.cases = {}
        self.stop = False
        self.conn = None

    def add(self, res, signal_name):
        with self.lock:
            self.cases[res["stream"]] = {"res": res, "signal": signal_name,
                                         "prev": None}

    def remove(self, stream):
        with self.lock:
            self.cases.pop(stream, None)

    def connect(self):
        for url in [self.env.inj_url] + self.env.urls:
            try:
                self.conn = natsproto.Connection(url, name="nl-eval-trace")
                return True
            except (OSError, natsproto.NatsError):
                continue
        return False

    def sample(self, stream, item):
        info = natsproto.js_api(self.conn, "CONSUMER.INFO.%s.c" % stream,
                                timeout=2.0)
        now = time.time()
        s = {"t": now, "cseq": info["delivered"]["consumer_seq"],
             "sseq": info["delivered"]["stream_seq"],
             "ackp": info.get("num_ack_pending", 0),
             "redeliv": info.get("num_redelivered", 0),
             "pend": info.get("num_pending", 0),
             "max_ackp": info["config"].get("max_ack_pending", -1)}
        if item["signal"] == "gap":
            sinfo = natsproto.js_api(self.conn, "STREAM.INFO.%s" % stream,
                                     timeout=2.0)
            s["first"] = sinfo["state"]["first_seq"]
        res = item["res"]
        prev = item["prev"]
        item["prev"] = s
        res["trace_samples"] = res.get("trace_samples", 0) + 1
        res["trace_max_num_redelivered"] = max(
            res.get("trace_max_num_redelivered", 0), s["redeliv"])
        dcds = 0
        if prev is not None:
            dcds = (s["cseq"] - prev["cseq"]) - (s["sseq"] - prev["sseq"])
            if dcds > 0:
                res["trace_redeliveries"] = res.get(
                    "trace_redeliveries", 0) + dcds
        if res.get("t_signal") is None and self.condition(item["signal"], s,
                                                          dcds):
            res["t_signal"] = now

    @staticmethod
    def condition(name, s, dcds):
        if name == "redelivery":
            return dcds > 0
        if name == "gap":
            return s["first"] > s["sseq"] + 1
        if name == "at_cap":
            return s["max_ackp"] > 0 and s["ackp"] >= s["max_ackp"] and \
                s["pend"] > 0
        return False

    def run(self):
        while not self.stop:
            t0 = time.time()
            if self.conn is None or self.conn.closed:
                if not self.connect():
                    time.sleep(0.5)
                    continue
            with self.lock:
                items = list(self.cases.items())
            for stream, item in items:
                try:
                    self.sample(stream, item)
                except (natsproto.NatsError, KeyError, ValueError, OSError):
                    pass
            time.sleep(max(0.0, 0.25 - (time.time() - t0)))


def rfc3339(text):
    """Seconds since the epoch of an RFC 3339 UTC time such as
    2024-05-01T12:00:00.250Z (up to nanoseconds), or None."""
    try:
        base, _, frac = text.rstrip("Z").partition(".")
        t = calendar.timegm(time.strptime(base[:19], "%Y-%m-%dT%H:%M:%S"))
        return t + (float("0." + frac) if frac else 0.0)
    except (AttributeError, ValueError):
        return None


class Watcher(threading.Thread):
    """Records the plugin's health events (firing / resolved, with their
    detected_at) and the JetStream consumer advisories (with the server's
    timestamp) on its own connection, reconnecting when it drops. NAK
    advisories are not kept one by one (a NAK storm sends thousands): per
    consumer only the first one that completes the plugin's advisory
    NAK_STORM predicate (docs/detectors.md: 5 NAKs within 5 s, one for a
    message delivered at least 3 times)."""

    NAK_WINDOW_S, NAK_MIN, NAK_DELIVERIES = 5.0, 5, 3

    def __init__(self, env):
        super().__init__(daemon=True)
        self.env = env
        self.lock = threading.Lock()
        self.events = []
        self.advisories = []
        self.naks = {}
        self.nak_complete = {}
        self.stop = False

    def connect(self):
        for url in [self.env.inj_url] + self.env.urls:
            try:
                return natsproto.Connection(url, name="nl-eval-watch")
            except (OSError, natsproto.NatsError):
                continue
        return None

    def drain(self, q, handle):
        """Hands each message of q to handle until the connection is gone
        or the watcher stops."""
        while not self.stop:
            try:
                msg = q.get(timeout=0.5)
            except Exception:
                continue
            if msg is None:
                return
            try:
                handle(msg)
            except (ValueError, KeyError, TypeError, AttributeError):
                pass

    def on_event(self, msg):
        ev = json.loads(msg.data)
        rec = {"stream": ev["stream_name"], "consumer": ev["consumer_name"],
               "cls": ev["type"], "state": ev["state"],
               "t": rfc3339(ev.get("detected_at")), "seen": time.time(),
               "fix": (ev.get("violation") or {}).get("fix_command")}
        with self.lock:
            self.events.append(rec)

    def on_advisory(self, msg):
        tok = msg.subject.split(".")
        if len(tok) != 7:
            return
        kind, stream, consumer = tok[4], tok[5], tok[6]
        adv = json.loads(msg.data)
        t = rfc3339(adv.get("timestamp"))
        key = (stream, consumer)
        with self.lock:
            if kind != "MSG_NAKED":
                self.advisories.append({"kind": kind, "stream": stream,
                                        "consumer": consumer, "t": t,
                                        "seen": time.time()})
                return
            if key in self.nak_complete or t is None:
                return
            win = [x for x in self.naks.get(key, [])
                   if x[0] > t - self.NAK_WINDOW_S]
            win.append((t, adv.get("deliveries", 0)))
            self.naks[key] = win
            if len(win) >= self.NAK_MIN and any(
                    dl >= self.NAK_DELIVERIES for _, dl in win):
                self.nak_complete[key] = t
                del self.naks[key]

    def run(self):
        while not self.stop:
            conn = self.connect()
            if conn is None:
                time.sleep(0.5)
                continue
            _, hq = conn.subscribe(HEALTH_SUBJECT)
            _, aq = conn.subscribe(ADVISORY_PREFIX + ">")
            t = threading.Thread(target=self.drain,
                                 args=(aq, self.on_advisory), daemon=True)
            t.start()
            self.drain(hq, self.on_event)
            conn.close()
            t.join(2)

    def event(self, stream, consumer, cls, state, since):
        """The first health event of a class and state about a consumer
        (consumer "" for a stream-level class) that arrived at or after
        since, as a dict with its detected_at ("t") and arrival ("seen")
        times, or None."""
        with self.lock:
            for e in self.events:
                if e["stream"] == stream and e["consumer"] == consumer and \
                        e["cls"] == cls and e["state"] == state and \
                        e["t"] is not None and e["seen"] >= since:
                    return dict(e)
        return None

    def trigger(self, stream, consumer, cls, since, until):
        """The server timestamp of the advisory that can raise cls between
        polls (scenarios.ADVISORY_OF) for the consumer: the first one in
        [since, until], or for NAK_STORM the NAK that completed the
        predicate; None when there is none."""
        kind = scenarios.ADVISORY_OF.get(cls)
        with self.lock:
            if kind == "MSG_NAKED":
                t = self.nak_complete.get((stream, consumer))
                return t if t is not None and since <= t <= until else None
            for a in self.advisories:
                if a["kind"] == kind and a["stream"] == stream and \
                        a["consumer"] == consumer and a["t"] is not None \
                        and since <= a["t"] <= until:
                    return a["t"]
        return None


class CaseRunner:
    """Runs one Case: setup, wait until the plugin polls the consumer,
    inject, wait for detection (or watch), fix, wait for recovery, clean
    up. Fills a result dict."""

    def __init__(self, env, tracer, case, meta, hooks=None):
        self.env, self.tracer, self.case = env, tracer, case
        self.procs = {}
        self.hooks = hooks or {}
        self.res = {"case": case.name, "stream": case.stream,
                    "consumer": case.consumer, "lang": case.lang,
                    "expect": case.expect, "note": case.note,
                    "topology": env.topology, "interval_s": env.d,
                    "shape": getattr(case, "shape", None),
                    "shape_note": getattr(case, "shape_note", None)}
        self.res.update(meta)
        self.url = env.inj_url
        self.killed = None  # The node this case killed (node_kill).
        # Services and periodic steps (the production mix) run until the
        # case's final kill sets stopping.
        self.stopping = threading.Event()
        self.threads = []
        self.lock = threading.Lock()
        self.t_end_planned = None

    def out_path(self, name):
        return os.path.join(self.env.work, "%s.%s.out" % (self.case.stream,
                                                          name))

    def run_step(self, st):
        if st.kind == "tool":
            # An argument may be a function, called once per run of the
            # step (a name of its own for each repeat, say).
            cmd = [scenarios.NL_INJECT, "--server", self.url] + [
                a() if callable(a) else a for a in st.args]
            for attempt in range(5):
                p = subprocess.run(cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=60)
                if p.returncode == 0:
                    return True
                time.sleep(1 + attempt)
            self.res.setdefault("errors", []).append(
                "%s: %s" % (" ".join(st.args), p.stdout.decode()[-300:]))
            return False
        if st.kind in ("bg", "consume"):
            if st.kind == "bg":
                cmd = [scenarios.NL_INJECT, "--server", self.url] + st.args
                # A background publisher goes on through a failed publish
                # (a node killed mid-run) instead of ending the load.
                if st.args[:1] == ["publish"]:
                    cmd.append("--keep-going")
            else:
                cmd = scenarios.injector_cmd(self.case.lang, self.url) + \
                    st.args
            fh = open(self.out_path(st.name), "ab")
            p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
            fh.close()
            self.procs.setdefault(st.name, []).append(p)
            STARTED.append(p)
            return True
        if st.kind == "service":
            t = threading.Thread(target=self.supervise, args=(st,),
                                 daemon=True)
            t.start()
            self.threads.append(t)
            return True
        if st.kind == "every":
            t = threading.Thread(target=self.repeat, args=(st,), daemon=True)
            t.start()
            self.threads.append(t)
            return True
        if st.kind == "server_restart":
            return self.restart_server()
        if st.kind == "kill":
            if not st.name:
                self.stopping.set()
            with self.lock:
                names = [st.name] if st.name else list(self.procs)
                procs = [p for n in names for p in self.procs.get(n, [])]
            stop_procs(procs)
            if not st.name:
                for t in self.threads:
                    t.join(10)
            return True
        if st.kind == "sleep":
            time.sleep(st.secs)
            return True
        if st.kind == "node_kill":
            return self.kill_stream_node()
        if st.kind == "node_restart":
            return self.restart_node()
        raise ValueError(st.kind)

    def service_cmd(self, st, left):
        """The command line of service st with `left` seconds to run."""
        args = [a(left) if callable(a) else a for a in st.args]
        if st.prog == "inject":
            cmd = [scenarios.NL_INJECT, "--server", self.url] + args
            return cmd + ["--keep-going"] if args[:1] == ["publish"] else cmd
        if st.prog == "consume":
            return scenarios.injector_cmd(self.case.lang, self.url) + args
        if st.prog == "go":
            return [os.path.join(scenarios.ROOT, "build", "eval",
                                 "nl-mix-go"), "--server", self.url] + args
        if st.prog == "js":
            return ["node", os.path.join(scenarios.ROOT, "tests", "eval",
                                         "mix", "nl_mix.js"),
                    "--server", self.url] + args
        raise ValueError(st.prog)

    def supervise(self, st):
        """Runs service st until the case stops, starting it again 2 s
        after it exits (killed, crashed, or its server restarted); counts
        the restarts."""
        while not self.stopping.is_set():
            left = self.t_end_planned - time.time() if self.t_end_planned \
                else 3600
            if left < 2:
                break
            fh = open(self.out_path(st.name), "ab")
            with self.lock:
                if self.stopping.is_set():
                    fh.close()
                    break
                p = subprocess.Popen(self.service_cmd(st, min(left, 3600)),
                                     stdout=fh, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, NODE_PATH=os.path.join(
                                         scenarios.ROOT, "tests", "eval",
                                         "injectors", "js", "node_modules")))
                self.procs.setdefault(st.name, []).append(p)
                STARTED.append(p)
            fh.close()
            p.wait()
            if self.stopping.wait(2):
                break
            key = "restarts_" + st.name
            self.res[key] = self.res.get(key, 0) + 1

    def repeat(self, st):
        """Runs st's steps every st.secs seconds until the case stops."""
        while not self.stopping.wait(st.secs):
            for sub in st.steps:
                if self.stopping.is_set():
                    break
                self.run_step(sub)

    def restart_server(self):
        """Stops the single server (SIGTERM) and starts it again."""
        srv = self.env.servers
        if srv is None or self.env.topology != "single":
            return False
        log("%s: restarting the server" % self.case.name)
        try:
            os.kill(srv.pids[0], signal.SIGTERM)
        except ProcessLookupError:
            pass
        end = time.time() + 30
        while time.time() < end:  # Until it is gone or a zombie.
            try:
                with open("/proc/%d/stat" % srv.pids[0]) as fh:
                    if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                        break
            except OSError:
                break
            time.sleep(0.2)
        ok = srv.restart(0)
        self.res["server_restarted"] = ok
        return ok

    def kill_stream_node(self):
        """Kills the cluster node that leads the case's stream (for an R1
        stream, the only one holding it) and moves this case and the
        injectors to a node that stays up."""
        cl = self.env.cluster
        p = subprocess.run([scenarios.NL_INJECT, "--server", self.url,
                            "request", "$JS.API.STREAM.INFO." +
                            self.case.stream, ""], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        try:
            leader = json.loads(p.stdout)["cluster"]["leader"]
            victim = int(leader.lstrip("n")) - 1  # Servers are n1..n3.
            assert cl is not None and 0 <= victim < len(cl.pids)
        except (ValueError, KeyError, TypeError, AssertionError):
            self.res.setdefault("errors", []).append(
                "no leader for %s: %s" % (self.case.stream,
                                          p.stdout.decode()[-300:]))
            return False
        survivor = (victim + 1) % len(self.env.urls)
        self.url = self.env.inj_url = self.env.urls[survivor]
        log("%s: killing node n%d, which holds the stream" % (
            self.case.name, victim + 1))
        cl.kill(victim)
        self.killed = victim
        self.res["killed_node"] = victim
        return True

    def restart_node(self):
        """Restarts the node kill_stream_node killed."""
        if self.killed is None:
            return False
        victim, self.killed = self.killed, None
        ok = self.env.cluster.restart(victim)
        self.env.inj_url = self.env.urls[0]
        if not ok:
            self.res.setdefault("errors", []).append(
                "node n%d not healthy after its restart" % (victim + 1))
        return ok

    def observed(self, streams):
        """Records what the plugin saw of a mix case: the polls that listed
        its streams, the consumers it held values of, and the polls in
        which their deliveries rose (the pattern really ran)."""
        polls, consumers, busy = 0, set(), 0
        # The longest time, at the end of the case, in which no consumer of
        # the pattern received anything while its stream kept growing: a
        # client that stopped reading (the healthy pattern no longer ran).
        stalled = 0.0
        for stream in streams:
            polls = max(polls, len(self.env.csv_rows(stream, "count",
                                                     "messages")))
            d = os.path.join(self.env.csv, "nats_lens-%s-%s" % (
                self.env.instance, stream))
            for f in glob.glob(os.path.join(d, "nats_lens_delivered-*")):
                name = os.path.basename(f)[len("nats_lens_delivered-"):]
                consumers.add(name.rsplit("-", 3)[0])
            # nats_lens_delivered is a counter (CSV keeps its value): a
            # busy poll is one in which it rose.
            last_busy = None
            for name in consumers:
                rows = self.env.csv_rows(stream, "nats_lens_delivered", name)
                busy += sum(1 for (_, a), (_, b) in zip(rows, rows[1:])
                            if b > a)
                for (_, a), (t, b) in zip(rows, rows[1:]):
                    if b > a and (last_busy is None or t > last_busy):
                        last_busy = t
            grown = self.env.csv_rows(stream, "count", "messages")
            seq = self.env.csv_rows(stream, "nats_lens_seq", "last")
            if last_busy is not None and seq and seq[-1][1] > max(
                    (v for t, v in seq if t <= last_busy), default=0) and \
                    grown:
                stalled = max(stalled, seq[-1][0] - last_busy)
        self.res.update({"polls_seen": polls, "consumers_seen":
                         len(consumers), "polls_with_deliveries": busy,
                         "must_be_busy": self.case.mix_busy,
                         "stalled_s": round(stalled)})

    def run_steps(self, steps):
        ok = True
        for st in steps:
            ok = self.run_step(st) and ok
        return ok

    def wait_polled(self, timeout):
        """Waits until the plugin has polled the consumer (or the stream,
        see Case.polled) twice; at once when the case needs no poll."""
        if self.case.polled is None:
            return True
        typ, inst = self.case.polled
        end = time.time() + timeout
        while time.time() < end:
            if len(self.env.csv_rows(self.case.stream, typ, inst)) >= 2:
                return True
            time.sleep(0.2)
        return False

    def notifs(self):
        return [n for n in self.env.notifications()
                if n["stream"] == self.case.stream]

    def first_notif(self, severities, cls, since_index):
        for i, n in enumerate(self.notifs()):
            if i >= since_index and n["severity"] in severities and \
                    n["class"] == cls:
                return i
        return None

    def class_consumer(self, cls):
        """The consumer a finding of cls is about: None for a stream-level
        class."""
        return None if cls in scenarios.STREAM_CLASSES else self.case.consumer

    def class_rows(self, cls):
        return self.env.csv_rows(self.case.stream, "nats_lens_" + cls.lower(),
                                 self.class_consumer(cls))

    def class_time(self, cls, value, since):
        for t, v in self.class_rows(cls):
            if t >= since and v == value:
                return t
        return None

    def event_time(self, cls, state, since, wait=1.5):
        """The first health event of cls in state that arrived since
        `since` (Watcher.event), waiting up to `wait` s for it; None
        without."""
        if self.env.watcher is None:
            return None
        end = time.time() + wait
        while True:
            ev = self.env.watcher.event(self.case.stream,
                                        self.class_consumer(cls) or "", cls,
                                        state, since)
            if ev is not None or time.time() >= end:
                return ev
            time.sleep(0.1)

    def at_poll(self, cls, t):
        """True when t is the time of a poll (a CSV row of the class value,
        or of the instance's consumer count, which every poll writes, has
        it): a finding raised or cleared by that poll."""
        return any(abs(tp - t) < 0.002 for tp, _ in self.class_rows(cls) +
                   self.env.csv_rows(None, "count", "consumers"))

    def run(self):
        c, d, res = self.case, self.env.d, self.res
        try:
            res["t_setup"] = time.time()
            if not self.run_steps(c.setup):
                res["setup_failed"] = True
                return res
            if not self.wait_polled(10 * d + 30):
                res["setup_failed"] = True
                res.setdefault("errors", []).append("consumer never polled")
                return res
            # Inject at a random point of the poll cycle (seeded by the
            # case name, so a rerun repeats it): right after the poll seen
            # above, every level would take one full interval.
            time.sleep(random.Random(c.name).uniform(0, d))
            n_before = len(self.notifs())
            if "before_inject" in self.hooks:
                self.hooks["before_inject"](res)
            res["t_inject"] = time.time()
            self.t_end_planned = res["t_inject"] + sum(
                st.secs for st in c.inject if st.kind == "sleep")
            if c.signal:
                self.tracer.add(res, c.signal)
            elif c.trace:
                self.tracer.add(res, "none")
            self.run_steps(c.inject)
            if c.expect:
                self.wait_detection(n_before)
            else:
                end = res["t_inject"] + c.observe_s
                while time.time() < end:
                    time.sleep(0.5)
                    if self.all_procs_done() and c.observe_s == 0:
                        break
                if c.observe_s == 0:
                    self.wait_procs()
                res["t_end"] = time.time()
                if "after_observe" in self.hooks:
                    self.hooks["after_observe"](res)
        finally:
            self.tracer.remove(c.stream)
            self.run_step(scenarios.kill())
            self.finish()
        return res

    def all_procs_done(self):
        return all(p.poll() is not None for ps in self.procs.values()
                   for p in ps)

    def wait_procs(self):
        for ps in self.procs.values():
            for p in ps:
                p.wait()

    def wait_detection(self, n_before):
        c, d, res = self.case, self.env.d, self.res
        deadline = res["t_inject"] + max(40 * d + 60, c.detect_s)
        idx = None
        while time.time() < deadline:
            idx = self.first_notif(("FAILURE", "WARNING"), c.expect, n_before)
            if idx is not None:
                break
            time.sleep(0.2)
        if idx is None:
            res["detected"] = False
            return
        res["detected"] = True
        res["t_notified"] = time.time()
        time.sleep(0.3)  # Let the CSV row of that poll be written.
        # A finding from a poll has the poll's time in the CSV (and as its
        # health event's detected_at); one raised between polls (from
        # JetStream advisories) has no CSV row of its own, and is timed by
        # its health event, else when its notification appeared in the log.
        # A poll that began before the injection and still saw the fault (a
        # poll slowed down by a missing stream) is timed when its finding
        # arrived.
        t_poll = self.class_time(c.expect, 1.0, res["t_inject"])
        ev = self.event_time(c.expect, "firing", res["t_inject"] - 0.01)
        if ev is not None:
            res["detect_source"] = "poll" if self.at_poll(
                c.expect, ev["t"]) else "advisory"
            res["t_detect"] = ev["t"] if ev["t"] >= res["t_inject"] - 0.01 \
                else ev["seen"]
            res["t_detect_out"] = ev["seen"]  # When the finding was out.
        elif t_poll is not None and t_poll <= res["t_notified"]:
            res["t_detect"], res["detect_source"] = t_poll, "poll"
        else:
            res["t_detect"], res["detect_source"] = (res["t_notified"],
                                                     "notification")
        if res["detect_source"] == "advisory" and \
                c.expect in scenarios.ADVISORY_OF:
            t_adv = self.env.watcher.trigger(
                c.stream, c.consumer, c.expect, res["t_inject"] - 0.01,
                res["t_detect"] + 0.05)
            # detected_at is cut to the millisecond: adding 1 ms makes the
            # figure an upper bound.
            res["t_advisory"] = t_adv
            res["advisory_latency_ms"] = None if t_adv is None else \
                (res["t_detect"] - t_adv) * 1000.0 + 1.0
        if ev is not None and ev.get("fix"):
            res["fix_text"] = ev["fix"]
            res["fix_command"] = fix_command(ev["fix"])
            res["fix_valid"] = reference.command_valid(res["fix_command"])
        if "after_detect" in self.hooks:
            self.hooks["after_detect"](res)
        if not c.fix:
            return
        # The fault stays for at least REF_WINDOW_POLLS polls after the
        # injection whoever found it first, so that the research monitor's
        # conditions, applied to the same polls afterwards, have the same
        # polls to fire on.
        if res.get("phase") in ("classes", "boundary"):
            time.sleep(max(0.0, res["t_inject"] + REF_WINDOW_POLLS * d -
                           time.time()))
        res["t_fix"] = time.time()
        n_fix = len(self.notifs())
        self.run_steps(c.fix)
        deadline = res["t_fix"] + 20 * d + 40
        while time.time() < deadline:
            if self.first_notif(("OKAY",), c.expect, n_fix) is not None:
                res["resolved"] = True
                seen = time.time()
                time.sleep(0.3)
                ev = self.event_time(c.expect, "resolved",
                                     res["t_fix"] - 0.01)
                t_poll = self.class_time(c.expect, 0.0, res["t_fix"]) \
                    if res["detect_source"] == "poll" else None
                if ev is not None:
                    res["t_resolved"] = ev["t"] if ev["t"] >= \
                        res["t_fix"] - 0.01 else ev["seen"]
                    res["resolve_source"] = "poll" if self.at_poll(
                        c.expect, ev["t"]) else "advisory"
                else:
                    res["t_resolved"] = t_poll if t_poll is not None and \
                        t_poll <= seen else seen
                break
            time.sleep(0.2)
        else:
            res["resolved"] = False

    def finish(self):
        """Restarts a node the case killed, deletes the streams and records
        the notifications of the case."""
        if self.killed is not None:
            self.restart_node()
        for stream in [self.case.stream] + self.case.cleanup:
            subprocess.run([scenarios.NL_INJECT, "--server", self.url,
                            "stream-delete", stream],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
        self.res["t_done"] = time.time()
        self.res["cleanup_streams"] = list(self.case.cleanup)
        streams = [self.case.stream] + self.case.cleanup
        fired = [n for n in self.env.notifications()
                 if n["stream"] in streams and
                 n["severity"] in ("FAILURE", "WARNING")]
        if getattr(self.case, "mix", False):
            self.observed(streams)
        self.res["notifications"] = [(n["severity"], n["class"])
                                     for n in fired]
        exp = self.case.expect
        # Another delivery class about this consumer is a false positive;
        # other notifications (a consumer that cannot be observed while its
        # node is down) are kept apart. A case of a class beyond the five
        # counts every class but the operational one and those that are
        # right for it (Case.allowed).
        if self.res.get("phase") == "ext":
            self.res["allowed"] = self.case.allowed
            counted = [c for c in scenarios.ALL_CLASSES
                       if c not in scenarios.OPERATIONAL
                       and c not in self.case.allowed]
        else:
            counted = CLASSES
        self.res["unexpected"] = [n["class"] for n in fired
                                  if n["class"] != exp
                                  and n["class"] in counted]
        self.res["operational"] = [n["class"] for n in fired
                                   if n["class"] not in counted
                                   and n["class"] != exp]
        self.res["refired"] = max(0, sum(1 for n in fired
                                         if n["class"] == exp) - 1)
        for name, ps in self.procs.items():
            for p in ps:
                if p.returncode not in (0, None, -15):
                    self.res.setdefault("errors", []).append(
                        "%s exited %s" % (name, p.returncode))


# A fix command: the edit, its names, then flags with an optional value.
FIX_FLAGS = r"(?: --[\w-]+(?:[ =][^-\s;,`][^\s;,`]*)?)*"
FIX_RE = re.compile(r"nats consumer edit \S+ \S+" + FIX_FLAGS +
                    r"|nats stream edit \S+" + FIX_FLAGS)


def fix_command(text):
    """The first `nats consumer edit` or `nats stream edit` command in a
    finding's fix text, or None."""
    m = FIX_RE.search(text or "")
    return m.group(0).rstrip(".") if m else None


def run_cases(env, tracer, cases, metas, hooks=None):
    """Runs cases concurrently; returns their results in order."""
    results = [None] * len(cases)

    def one(i):
        try:
            results[i] = CaseRunner(env, tracer, cases[i], metas[i],
                                    hooks).run()
        except Exception as e:  # Recorded, never fatal for the whole run.
            results[i] = {"case": cases[i].name, "error": repr(e)}
            results[i].update(metas[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in
               range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def http_json(port, path):
    with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                timeout=5) as r:
        return json.loads(r.read())


def numeric_leaves(obj, prefix=""):
    """Flattens the numbers of a JSON document into {dotted.path: value}."""
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(numeric_leaves(v, prefix + k + "."))
    elif isinstance(obj, bool):
        pass
    elif isinstance(obj, (int, float)):
        out[prefix[:-1]] = obj
    return out


# Fields of /varz that move with time or process state, not with traffic.
VOLATILE = ("now", "uptime", "mem", "cpu", "start", "config_load_time",
            "gomaxprocs", "system_account", "cores")


def server_snapshot(port):
    """The numeric fields of /varz and /jsz (the data a Prometheus server
    exporter turns into metrics)."""
    snap = {}
    for path in ("/varz", "/jsz"):
        try:
            snap.update({path[1:] + "." + k: v for k, v in
                         numeric_leaves(http_json(port, path)).items()})
        except OSError:
            pass
    return snap


def snapshot_delta(a, b):
    keys = set(a) | set(b)
    return {k: b.get(k, 0) - a.get(k, 0) for k in keys
            if b.get(k, 0) != a.get(k, 0)
            and not any(k.split(".", 1)[1].startswith(v) for v in VOLATILE)}


def baseline_phase(env, tracer, classes, rounds_tag="V"):
    """Runs a healthy control and then each class of classes alone on the
    quiet server (C injector), taking /varz and /jsz just before the injection and just
    after detection (for the control: after the same observation). Returns
    one record per class: the fields that changed, those that changed only
    under the fault, and whether a server-level rule could see the
    fault."""
    port = env.monitor[0]
    out = {}

    def hooks(rec):
        return {"before_inject": lambda r: rec.__setitem__(
                    "before", server_snapshot(port)),
                "after_detect": lambda r: rec.__setitem__(
                    "after", server_snapshot(port)),
                "after_observe": lambda r: rec.__setitem__(
                    "after", server_snapshot(port))}

    control = [c for c in scenarios.boundary_cases(env.d, env.replicas,
                                                   tag=rounds_tag)
               if c.name.startswith("boundary/HEALTHY/")][0]
    rec = {}
    log("baseline: healthy control")
    CaseRunner(env, tracer, control, {"phase": "baseline"},
               hooks(rec)).run()
    healthy = snapshot_delta(rec.get("before", {}), rec.get("after", {}))
    for cls in classes:
        case = scenarios.class_case(cls, "c", 0, env.d, env.replicas,
                                    tag=rounds_tag)
        rec = {}
        log("baseline: %s" % cls)
        r = CaseRunner(env, tracer, case, {"phase": "baseline"},
                       hooks(rec)).run()
        delta = snapshot_delta(rec.get("before", {}), rec.get("after", {}))
        only = sorted(k for k in delta if k not in healthy)
        alerts = [k for k in delta if k.endswith("slow_consumers")
                  or k.endswith("api.errors")]
        out[cls] = {"fields_checked": len(rec.get("after", {})),
                    "changed": sorted(delta), "changed_only_under_fault":
                    only, "alerting_fields": alerts,
                    "plugin_detected": bool(r.get("detected")),
                    "window_s": (r.get("t_detect") or time.time())
                    - r.get("t_inject", time.time())}
    out["_healthy_changed"] = sorted(healthy)
    return out


def connected_node(env):
    """Index of the node that holds the plugin's connection (named
    "nats-lens ..." in /connz), or None."""
    for i, port in enumerate(env.monitor):
        try:
            conns = http_json(port, "/connz?limit=1024").get(
                "connections") or []
        except OSError:
            continue
        if any((c.get("name") or "").startswith("nats-lens")
               for c in conns):
            return i
    return None


class Cluster:
    """Kills and restarts cluster nodes by PID; a restarted node runs with
    the command line it had, and is stopped by this driver at the end."""

    def __init__(self, env, pids):
        self.env = env
        self.pids = pids
        self.cmdlines = []
        for pid in pids:
            with open("/proc/%d/cmdline" % pid, "rb") as fh:
                self.cmdlines.append([a.decode() for a in
                                      fh.read().split(b"\0") if a])

    def kill(self, i):
        try:
            os.kill(self.pids[i], signal.SIGKILL)
        except ProcessLookupError:
            pass

    def restart(self, i):
        """Starts node i again; returns True once it reports healthy."""
        logf = open(os.path.join(self.env.work, "node%d-restart.log" % i),
                    "ab")
        p = subprocess.Popen(self.cmdlines[i], stdout=logf,
                             stderr=subprocess.STDOUT)
        logf.close()
        STARTED.append(p)
        self.pids[i] = p.pid
        return self.wait_healthy(i)

    def wait_healthy(self, i, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            try:
                if http_json(self.env.monitor[i], "/healthz").get(
                        "status") == "ok":
                    return True
            except OSError:
                pass
            time.sleep(0.5)
        return False


def class_round(env, tracer, rnd, langs, classes, label, tag="E",
                on_injected=None):
    """One round of the given classes of the five in every language, all
    at once; returns their results."""
    cases, metas = [], []
    for lang in langs:
        for cls in classes:
            cases.append(scenarios.class_case(cls, lang, rnd, env.d,
                                              env.replicas, tag=tag))
            metas.append({"phase": "classes", "round": rnd, "class": cls,
                          "scenario": label})
    if on_injected:
        threading.Timer(env.d * 3 + 10, on_injected).start()
    return run_cases(env, tracer, cases, metas)


def ext_round(env, tracer, rnd, langs, alone, only=None, tag="X"):
    """One round of the classes beyond the five on the topology (those in
    `only` when given): with alone False every case but the node-kill ones,
    at once; with alone True the node-kill cases, one after the other."""
    cases, metas = [], []
    for cls in scenarios.ext_classes(env.topology):
        if (cls in scenarios.NODE_KILL) != alone or (only and cls not in
                                                      only):
            continue
        for lang in scenarios.ext_langs(cls, langs):
            cases.append(scenarios.ext_case(cls, lang, rnd, env.d,
                                            env.replicas, tag=tag))
            metas.append({"phase": "ext", "round": rnd, "class": cls,
                          "scenario": env.topology})
    if not alone:
        return run_cases(env, tracer, cases, metas)
    out = []
    for case, meta in zip(cases, metas):
        out += run_cases(env, tracer, [case], [meta])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topology", choices=["single", "cluster"],
                    required=True)
    ap.add_argument("--interval", type=float, default=3)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--langs", default="c go js py")
    ap.add_argument("--urls", required=True)
    ap.add_argument("--monitor", default="")
    ap.add_argument("--pids", default="")
    ap.add_argument("--collectd-dir", required=True)
    ap.add_argument("--instance", default="ev")
    ap.add_argument("--out", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--soak", type=float, default=0)
    ap.add_argument("--poll-log", default=None,
                    help="the plugin's PollLog, to apply the research "
                    "monitor's conditions to the same polls")
    ap.add_argument("--boundary", action="store_true")
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--kill-rounds", action="store_true")
    ap.add_argument("--ext-rounds", type=int, default=0)
    ap.add_argument("--ext-langs", default=None)
    ap.add_argument("--ext-classes", default=None,
                    help="only these classes beyond the five (for a quick "
                    "look at one)")
    ap.add_argument("--classes", default=None,
                    help="only these of the five classes, in the rounds "
                    "and the baseline (default: all five)")
    a = ap.parse_args()
    classes = a.classes.split() if a.classes else CLASSES
    bad = [c for c in classes if c not in CLASSES]
    if bad:
        ap.error("unknown class %s (one of %s)" % (
            ", ".join(bad), " ".join(CLASSES)))
    signal.signal(signal.SIGTERM, stop_started)
    signal.signal(signal.SIGINT, stop_started)
    env = Env(a)
    langs = a.langs.split()
    ext_langs = (a.ext_langs or a.langs).split()
    only = a.ext_classes.split() if a.ext_classes else None
    tracer = Tracer(env)
    tracer.start()
    env.watcher = Watcher(env)
    env.watcher.start()
    if a.pids:
        env.servers = Cluster(env, [int(p) for p in a.pids.split(",")])
    if a.topology == "cluster" and a.pids:
        env.cluster = env.servers
    started = time.time()
    raw = {"topology": a.topology, "interval_s": env.d, "rounds": a.rounds,
           "langs": langs, "classes": classes, "soak_s": a.soak,
           "started": started,
           "ext_rounds": a.ext_rounds, "ext_langs": ext_langs,
           "ext_classes": only, "results": [], "baseline": None}
    try:
        # The soak and the boundary cases run next to the rounds.
        side = []
        side_metas = []
        if a.soak > 0 and a.topology != "single":
            log("the production mix runs on a single node only; skipped")
        elif a.soak > 0:
            # The production mix; alone on a single server, it also
            # restarts the server halfway.
            alone = a.rounds == 0 and a.ext_rounds == 0 and \
                not a.boundary and a.topology == "single"
            for case in mix.mix_cases(a.soak, langs, restart=alone):
                side.append(case)
                side_metas.append({"phase": "soak"})
        if a.boundary:
            for case in scenarios.boundary_cases(env.d, env.replicas):
                side.append(case)
                side_metas.append({"phase": "boundary"})
        side_results = []
        side_thread = threading.Thread(
            target=lambda: side_results.extend(
                run_cases(env, tracer, side, side_metas)))
        side_thread.start()
        for rnd in range(1, a.rounds + 1):
            log("%s round %d/%d" % (a.topology, rnd, a.rounds))
            raw["results"] += class_round(env, tracer, rnd, langs, classes,
                                          a.topology)
        if a.kill_rounds and a.rounds > 0 and a.topology == "cluster":
            cl = env.cluster
            for which in ("other", "connected"):
                plugin_node = connected_node(env)
                if plugin_node is None:
                    log("cannot find the plugin's node; skipping kill round")
                    continue
                if which == "other":
                    victim = (plugin_node + 1) % len(env.urls)
                    inj = (plugin_node + 2) % len(env.urls)
                    inj = plugin_node if inj == victim else inj
                else:
                    victim = plugin_node
                    inj = (plugin_node + 1) % len(env.urls)
                env.inj_url = env.urls[inj]
                tracer.conn = None
                rnd = a.rounds + (1 if which == "other" else 2)
                label = "cluster, node killed (%s)" % (
                    "not the plugin's" if which == "other"
                    else "the plugin's")
                log("%s: node n%d killed mid-round, plugin on n%d" % (
                    label, victim + 1, plugin_node + 1))

                def do_kill(v=victim):
                    log("killing node n%d" % (v + 1))
                    cl.kill(v)
                res = class_round(env, tracer, rnd, langs, classes, label,
                                  tag="K", on_injected=do_kill)
                for r in res:
                    r["killed_node"] = victim
                    r["plugin_node_before"] = plugin_node
                raw["results"] += res
                raw.setdefault("kills", []).append(
                    {"which": which, "victim": victim,
                     "plugin_node_before": plugin_node,
                     "plugin_node_after": connected_node(env)})
                cl.restart(victim)
                env.inj_url = env.urls[0]
                tracer.conn = None
        for rnd in range(1, a.ext_rounds + 1):
            log("%s: classes beyond the five, round %d/%d" % (
                a.topology, rnd, a.ext_rounds))
            raw["results"] += ext_round(env, tracer, rnd, ext_langs, False,
                                        only)
        side_thread.join()
        raw["results"] += side_results
        # A node kill makes every consumer of the node unobservable: it
        # runs when nothing else does.
        for rnd in range(1, a.ext_rounds + 1):
            if any(c in scenarios.NODE_KILL and (not only or c in only)
                   for c in scenarios.ext_classes(a.topology)):
                log("%s: node-kill class, round %d/%d" % (
                    a.topology, rnd, a.ext_rounds))
                raw["results"] += ext_round(env, tracer, rnd, ext_langs,
                                            True, only)
        if a.baseline and env.monitor:
            raw["baseline"] = baseline_phase(env, tracer, classes)
    finally:
        tracer.stop = True
        env.watcher.stop = True
        stop_started()
    raw["finished"] = time.time()
    if a.poll_log and os.path.exists(a.poll_log):
        reference.annotate(raw["results"], a.poll_log)
        raw["reference"] = {"poll_log_bytes": os.path.getsize(a.poll_log)}
    onsets = env.csv_rows(None, "gauge", "onsets_per_hour")
    raw["onsets_per_hour_max"] = max((v for _, v in onsets), default=None)
    raw["poll_failed_notifications"] = sum(
        1 for n in env.notifications()
        if n["class"] == "poll" and n["severity"] == "FAILURE")
    raw["all_notifications"] = len(env.notifications())
    raw["health_events"] = len(env.watcher.events)
    with open(a.out, "w") as fh:
        json.dump(raw, fh, indent=1)
    log("wrote %s (%d results)" % (a.out, len(raw["results"])))


if __name__ == "__main__":
    main()
