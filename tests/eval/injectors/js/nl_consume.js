#!/usr/bin/env node
// JavaScript fault injector: a JetStream pull consumer written with the npm
// `nats` client (nats.js 2.x, consumers API).
//
// Same command line and summary line as `nl-inject consume` for the options
// the evaluation scenarios use:
//
//   node nl_consume.js [--server URL] consume STREAM CONSUMER --duration S
//       [--batch B] [--workers W] [--process-ms P] [--slow-every K --slow-ms P2]
//       [--in-progress [--progress-ms MS]] [--nak | --nak-seq-mod K | --no-ack]
//       [--term-seq-mod K] [--expires-ms MS]
//
// Each worker is an async loop that fetches from the durable consumer
// (js.consumers.get(...).fetch), models the processing time and answers with
// ack(), nak(), working() or term(). Exit status 0, 1 on a connection
// error, 2 on a usage error.
"use strict";
const { connect } = require("nats");

const FLAGS = new Set(["--in-progress", "--nak", "--no-ack", "--verbose"]);
const VALUED = new Set(["--server", "--duration", "--batch", "--workers",
  "--process-ms", "--slow-every", "--slow-ms", "--progress-ms",
  "--nak-seq-mod", "--term-seq-mod", "--expires-ms", "--mode", "--max-msgs"]);

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
  if ((opts["--mode"] || "pull") !== "pull") usage("only --mode pull is implemented");
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
  };
  r.slowMs = num("--slow-ms", r.processMs);
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
  try {
    consumer = await js.consumers.get(pos[1], pos[2]);
  } catch (e) {
    process.stderr.write(`nl_consume.js: ${pos[1]}.${pos[2]}: ${e.message}\n`);
    process.exit(1);
  }
  const start = Date.now();
  const deadline = start + duration * 1000;

  // Processes one message; returns false when the deadline cut it short.
  async function handle(m) {
    count.received++;
    const dc = m.info.redeliveryCount;
    if (dc > 1) count.redelivered_seen++;
    if (dc > count.max_delivery_count) count.max_delivery_count = dc;
    const sseq = m.info.streamSequence;
    const work = r.slowEvery > 0 && sseq % r.slowEvery === 0 ? r.slowMs : r.processMs;
    const end = Date.now() + work;
    let nextWpi = r.inProgress ? Date.now() + r.progressMs : Infinity;
    for (;;) {
      const now = Date.now();
      if (now >= end) break;
      if (now >= deadline) {
        count.abandoned++;
        return false;
      }
      if (now >= nextWpi) {
        m.working();
        count.in_progress_sent++;
        nextWpi = now + r.progressMs;
      }
      await sleep(Math.min(end, nextWpi, deadline) - now > 50 ? 50 :
        Math.min(end, nextWpi, deadline) - now);
    }
    if (r.termMod > 0 && sseq % r.termMod === 0) {
      m.term();
      count.termed++;
    } else if (r.nakAll || (r.nakMod > 0 && sseq % r.nakMod === 0)) {
      m.nak();
      count.naked++;
    } else if (!r.noAck) {
      m.ack();
      count.acked++;
    }
    return true;
  }

  async function worker() {
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
          if (!(await handle(m))) break;
          if (Date.now() >= deadline) break;
        }
      } catch (e) {
        count.status_msgs++;
      }
      if (got === 0) count.status_msgs++;
    }
  }

  const timer = setTimeout(() => { stop = true; }, duration * 1000);
  await Promise.all(Array.from({ length: r.workers }, () => worker()));
  clearTimeout(timer);
  await nc.flush();
  await nc.close();
  const out = { mode: "pull", workers: r.workers, elapsed_ms: Date.now() - start,
    ...count };
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`nl_consume.js: ${e.stack || e}\n`);
  process.exit(1);
});
