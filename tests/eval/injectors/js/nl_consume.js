#!/usr/bin/env node
// JavaScript fault injector: a JetStream pull or push consumer written with
// the npm `nats` client (nats.js 2.x, consumers API).
//
// Same command line and summary line as `nl-inject consume` for the options
// the evaluation scenarios use:
//
//   node nl_consume.js [--server URL] consume STREAM CONSUMER --duration S
//       [--mode pull|push] [--deliver-subject SUBJ] [--queue G]
//       [--batch B] [--workers W] [--process-ms P]
//       [--process-dist fixed|lognormal] [--process-sigma S] [--seed N]
//       [--slow-every K --slow-ms P2] [--stagger-ms MS]
//       [--in-progress [--progress-ms MS]] [--nak | --nak-seq-mod K | --no-ack]
//       [--term-seq-mod K] [--max-msgs N] [--expires-ms MS] [--verbose]
//
// Each worker is an async loop. Pull mode: it fetches from the durable
// consumer (js.consumers.get(...).fetch). Push mode: one core subscription
// (nc.subscribe with a callback, optionally a queue group) to the deliver
// subject (--deliver-subject, else the consumer's; --queue, else its deliver
// group) appends to an unbounded in-order buffer, from which the W workers
// take messages in turn; flow-control requests are answered, heartbeats
// counted (both as status_msgs); --batch and --expires-ms are ignored.
// Either way a worker models the processing time and answers with ack(),
// nak(), working() or term().
//
// Processing time: --process-ms P each (fixed, the default), or with
// --process-dist lognormal P x exp(S x z) ms, z standard normal (S is
// --process-sigma, default 0.5), capped at 20 x P; each worker draws from
// its own generator seeded from --seed (default 1) and its index, the same
// generator as the C, Go and Python injectors. --slow-every/--slow-ms
// override it for those messages. Worker i (from 0) starts i x --stagger-ms
// late. --verbose logs each event to stderr.
//
// Exit status 0, 1 on a connection error, 2 on a usage error.
"use strict";
const { connect, Empty } = require("nats");
// The JsMsg wrapper the consumers API gives, for push deliveries on a core
// subscription (its ack(), nak(), working() and term() answer the reply).
const { toJsMsg } = require("nats/lib/jetstream/jsmsg");

const FLAGS = new Set(["--in-progress", "--nak", "--no-ack", "--verbose"]);
const VALUED = new Set(["--server", "--duration", "--batch", "--workers",
  "--process-ms", "--slow-every", "--slow-ms", "--progress-ms",
  "--nak-seq-mod", "--term-seq-mod", "--expires-ms", "--mode", "--max-msgs",
  "--process-dist", "--process-sigma", "--seed", "--stagger-ms",
  "--deliver-subject", "--queue"]);

// The processing-time generator, the same in the C, Go and Python injectors
// so that a seed gives the same times in all four: splitmix64 (BigInt) and
// Marsaglia's polar method.
const MASK64 = (1n << 64n) - 1n;
const GAMMA = 0x9E3779B97F4A7C15n;

function mix64(z) {
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK64;
  return z ^ (z >> 31n);
}

class Rng {
  // seed: a BigInt; worker: the 0-based worker index.
  constructor(seed, worker) {
    this.state = mix64(BigInt.asUintN(64, seed) ^
      mix64((BigInt(worker + 1) * GAMMA) & MASK64));
  }

  uniform() {
    this.state = (this.state + GAMMA) & MASK64;
    return Number(mix64(this.state) >> 11n) * (1 / 9007199254740992);
  }

  normal() {
    for (;;) {
      const v1 = 2 * this.uniform() - 1;
      const v2 = 2 * this.uniform() - 1;
      const s = v1 * v1 + v2 * v2;
      if (s > 0 && s < 1) return v1 * Math.sqrt(-2 * Math.log(s) / s);
    }
  }
}

function usage(msg) {
  process.stderr.write(`nl_consume.js: ${msg}\nusage: nl_consume.js ` +
    "[--server URL] consume STREAM CONSUMER --duration S [options]\n");
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

function parseArgs(argv) {
  const pos = [];
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (FLAGS.has(a)) opts[a] = true;
    else if (VALUED.has(a)) {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      opts[a] = argv[++i];
    } else if (a.startsWith("--")) usage(`unknown option ${a}`);
    else pos.push(a);
  }
  return { pos, opts };
}

async function main() {
  const { pos, opts } = parseArgs(process.argv.slice(2));
  if (pos.length !== 3 || pos[0] !== "consume")
    usage("expected: consume STREAM CONSUMER --duration S ...");
  const mode = opts["--mode"] || "pull";
  if (mode !== "pull" && mode !== "push") usage("--mode must be pull or push");
  const num = (name, def) => {
    if (!(name in opts)) return def;
    const n = Number(opts[name]);
    if (!Number.isInteger(n)) usage(`bad value for ${name}`);
    return n;
  };
  const duration = Number(opts["--duration"]);
  if (!(duration > 0 && duration <= 3600)) usage("consume needs --duration");
  const r = {
    batch: num("--batch", 1), workers: num("--workers", 1),
    processMs: num("--process-ms", 0), slowEvery: num("--slow-every", 0),
    progressMs: num("--progress-ms", 1000), nakMod: num("--nak-seq-mod", 0),
    termMod: num("--term-seq-mod", 0), expiresMs: num("--expires-ms", 5000),
    maxMsgs: num("--max-msgs", 0), inProgress: !!opts["--in-progress"],
    nakAll: !!opts["--nak"], noAck: !!opts["--no-ack"],
    verbose: !!opts["--verbose"], staggerMs: num("--stagger-ms", 0),
  };
  r.slowMs = num("--slow-ms", r.processMs);
  const dist = opts["--process-dist"] || "fixed";
  if (dist !== "fixed" && dist !== "lognormal")
    usage("--process-dist must be fixed or lognormal");
  r.lognormal = dist === "lognormal";
  r.sigma = 0.5;
  if ("--process-sigma" in opts) {
    const v = opts["--process-sigma"];
    r.sigma = v.trim() === "" ? NaN : Number(v);
    if (!(r.sigma >= 0 && r.sigma <= 10))
      usage("--process-sigma must lie in [0, 10]");
  }
  r.seed = 1n;
  if ("--seed" in opts) {
    const v = opts["--seed"];
    if (!/^[+-]?[0-9]+$/.test(v)) usage("bad value for --seed");
    r.seed = BigInt(v);
    if (r.seed < -(1n << 63n) || r.seed >= (1n << 63n))
      usage("bad value for --seed");
  }
  if (!(r.staggerMs >= 0 && r.staggerMs <= 3600000))
    usage("--stagger-ms must lie in [0, 3600000]");
  if (r.batch < 1 || r.workers < 1 || r.workers > 64 || r.progressMs < 10 ||
      r.expiresMs < 10)
    usage("bad --batch, --workers, --progress-ms or --expires-ms");
  if (r.nakAll + (r.nakMod > 0) + r.noAck > 1)
    usage("--nak, --nak-seq-mod and --no-ack exclude each other");
  const count = { received: 0, redelivered_seen: 0, acked: 0, naked: 0,
    termed: 0, in_progress_sent: 0, abandoned: 0, max_delivery_count: 0,
    status_msgs: 0, pull_requests: 0 };
  let taken = 0;
  let stop = false;

  let nc;
  try {
    nc = await connect({ servers: opts["--server"] || "nats://127.0.0.1:4222",
      name: "nl-eval-js", reconnect: false });
  } catch (e) {
    process.stderr.write(`nl_consume.js: cannot connect: ${e.message}\n`);
    process.exit(1);
  }
  const js = nc.jetstream();
  let consumer;
  // Push mode's client-side pending buffer: an unbounded in-order queue the
  // subscription callback fills (buf, from index head) and the workers drain
  // (a waiting worker is handed the next message directly).
  const buf = [];
  let head = 0;
  const waiters = [];
  let bufClosed = false;
  let psub = null;
  if (mode === "push") {
    // The deliver subject and queue group: given, or the consumer's.
    let deliver = opts["--deliver-subject"];
    let queue = opts["--queue"];
    if (deliver === undefined || queue === undefined) {
      let ci;
      try {
        const jsm = await nc.jetstreamManager();
        ci = await jsm.consumers.info(pos[1], pos[2]);
      } catch (e) {
        process.stderr.write(`nl_consume.js: ${pos[1]}.${pos[2]}: ${e.message}\n`);
        process.exit(1);
      }
      if (deliver === undefined) deliver = ci.config.deliver_subject;
      if (queue === undefined) queue = ci.config.deliver_group;
      if (!deliver)
        usage(`consumer ${pos[1]}.${pos[2]} is a pull consumer; use --mode pull`);
    }
    psub = nc.subscribe(deliver, {
      queue: queue || undefined,
      callback: (err, m) => {
        if (err) {
          process.stderr.write(`nl_consume.js: ${deliver}: ${err.message}\n`);
          process.exit(1);
        }
        if (waiters.length > 0) waiters.shift()(m);
        else buf.push(m);
      },
    });
  } else {
    try {
      consumer = await js.consumers.get(pos[1], pos[2]);
    } catch (e) {
      process.stderr.write(`nl_consume.js: ${pos[1]}.${pos[2]}: ${e.message}\n`);
      process.exit(1);
    }
  }
  const start = Date.now();
  const deadline = start + duration * 1000;

  // Returns the oldest buffered message, waiting for one; null once closed.
  function take() {
    if (bufClosed) return Promise.resolve(null);
    if (head < buf.length) {
      const m = buf[head];
      buf[head++] = undefined;
      if (head > 1024 && head * 2 > buf.length) {
        buf.splice(0, head);
        head = 0;
      }
      return Promise.resolve(m);
    }
    return new Promise((resolve) => waiters.push(resolve));
  }

  function closeBuffer() {
    bufClosed = true;
    while (waiters.length > 0) waiters.shift()(null);
  }

  const vlog = (w, m, what) => {
    if (r.verbose)
      process.stderr.write(`t=${((Date.now() - start) / 1000).toFixed(3)} ` +
        `w=${w} sseq=${m.info.streamSequence} cseq=${m.info.deliverySequence} ` +
        `dc=${m.info.redeliveryCount} ${what}\n`);
  };

  // The next message's processing time: --process-ms, or with lognormal
  // P x exp(S x z) capped at 20 x P, to the millisecond.
  function workMs(g) {
    if (!r.lognormal) return r.processMs;
    const p = r.processMs;
    let t = p * Math.exp(r.sigma * g.normal());
    if (t > 20 * p) t = 20 * p;
    return t > 0 ? Math.trunc(t + 0.5) : 0;
  }

  // Waits until worker w's start, w x --stagger-ms after the run's (or the
  // deadline or a stop, if sooner).
  async function staggerWait(w) {
    if (r.staggerMs <= 0) return;
    const at = Math.min(start + w * r.staggerMs, deadline);
    while (!stop && Date.now() < at) await sleep(Math.min(50, at - Date.now()));
    if (r.verbose)
      process.stderr.write(`t=${((Date.now() - start) / 1000).toFixed(3)} w=${w} start\n`);
  }

  // Processes one message; returns false when the deadline cut it short.
  async function handle(m, w, g) {
    count.received++;
    const dc = m.info.redeliveryCount;
    if (dc > 1) count.redelivered_seen++;
    if (dc > count.max_delivery_count) count.max_delivery_count = dc;
    const sseq = m.info.streamSequence;
    // Drawn for every delivery, so the slow ones do not shift the series.
    let work = workMs(g);
    vlog(w, m, r.lognormal ? `recv work=${work}` : "recv");
    if (r.slowEvery > 0 && sseq % r.slowEvery === 0) work = r.slowMs;
    const end = Date.now() + work;
    let nextWpi = r.inProgress ? Date.now() + r.progressMs : Infinity;
    for (;;) {
      const now = Date.now();
      if (now >= end) break;
      if (now >= deadline) {
        count.abandoned++;
        vlog(w, m, "abandoned");
        return false;
      }
      if (now >= nextWpi) {
        m.working();
        count.in_progress_sent++;
        vlog(w, m, "wpi");
        nextWpi = now + r.progressMs;
      }
      await sleep(Math.min(end, nextWpi, deadline) - now > 50 ? 50 :
        Math.min(end, nextWpi, deadline) - now);
    }
    if (r.termMod > 0 && sseq % r.termMod === 0) {
      m.term();
      count.termed++;
      vlog(w, m, "term");
    } else if (r.nakAll || (r.nakMod > 0 && sseq % r.nakMod === 0)) {
      m.nak();
      count.naked++;
      vlog(w, m, "nak");
    } else if (!r.noAck) {
      m.ack();
      count.acked++;
      vlog(w, m, "ack");
    } else {
      vlog(w, m, "no-ack");
    }
    return true;
  }

  // Push worker: takes the buffered messages in order until the deadline.
  async function pushWorker(w) {
    const g = new Rng(r.seed, w);
    await staggerWait(w);
    while (!stop && Date.now() < deadline) {
      if (nc.isClosed()) {
        process.stderr.write("nl_consume.js: connection closed\n");
        process.exit(1);
      }
      const raw = await take();
      if (raw === null) break;
      if (!raw.reply || !raw.reply.startsWith("$JS.ACK.")) {
        // Status messages: heartbeats and flow control. A flow control
        // request (100 with a reply subject) wants an empty message back;
        // nats.js answers it only on its own JetStream push subscriptions.
        count.status_msgs++;
        if (raw.reply && raw.headers && raw.headers.code === 100)
          nc.publish(raw.reply, Empty);
        continue;
      }
      if (r.maxMsgs > 0 && ++taken > r.maxMsgs) {
        stop = true;
        closeBuffer();
        break;
      }
      await handle(toJsMsg(raw), w, g);
    }
  }

  async function worker(w) {
    const g = new Rng(r.seed, w);
    await staggerWait(w);
    while (!stop && deadline - Date.now() > 20) {
      // Without reconnect a lost connection is final: end (with a failure)
      // so that the service running this client starts it again, as the
      // C, Go and Python clients do.
      if (nc.isClosed()) {
        process.stderr.write("nl_consume.js: connection closed\n");
        process.exit(1);
      }
      // The consumers API accepts no expiry under one second.
      const expires = Math.max(1000, Math.min(r.expiresMs, deadline - Date.now()));
      count.pull_requests++;
      let iter;
      try {
        iter = await consumer.fetch({ max_messages: r.batch, expires });
      } catch (e) {
        count.status_msgs++;
        await sleep(100);
        continue;
      }
      let got = 0;
      try {
        for await (const m of iter) {
          got++;
          if (r.maxMsgs > 0 && ++taken > r.maxMsgs) {
            stop = true;
            break;
          }
          if (!(await handle(m, w, g))) break;
          if (Date.now() >= deadline) break;
        }
      } catch (e) {
        count.status_msgs++;
      }
      if (got === 0) count.status_msgs++;
    }
  }

  const timer = setTimeout(() => { stop = true; closeBuffer(); }, duration * 1000);
  await Promise.all(Array.from({ length: r.workers },
    (_, w) => (mode === "push" ? pushWorker(w) : worker(w))));
  clearTimeout(timer);
  if (psub) psub.unsubscribe();
  await nc.flush();
  await nc.close();
  const out = { mode, workers: r.workers, elapsed_ms: Date.now() - start,
    ...count };
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`nl_consume.js: ${e.stack || e}\n`);
  process.exit(1);
});
