#!/usr/bin/env node
// One healthy JetStream pattern of the production mix (tests/eval/mix.py)
// with the npm `nats` client (nats.js 2.x), run for --duration seconds,
// then one summary line of counts. Its packages are those of the
// JavaScript injector (tests/eval/injectors/js; NODE_PATH points there).
//
//   kv       a key-value bucket written at --rate and watched
//   obj      an object store: an object put every 10 s, read back, the
//            previous one deleted
//   ordered  an ordered consumer of --stream
//   waiting  --workers pull loops on the durable --name with 5 s expiring
//            requests, most of them waiting (little traffic), acking each
//
// usage: node nl_mix.js --server URL --duration S --pattern P [--bucket B]
//   [--stream S] [--name CONSUMER] [--rate PER_SEC] [--workers N]
// Exit status 0, 1 on a connection or API error, 2 on a usage error.
"use strict";
const { connect } = require("nats");

function usage(msg) {
  process.stderr.write(`nl_mix.js: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { server: "nats://127.0.0.1:4222", rate: 5, workers: 4 };
  for (let i = 0; i < argv.length; i += 2) {
    const k = argv[i], v = argv[i + 1];
    if (!k.startsWith("--") || v === undefined) usage(`bad argument ${k}`);
    o[k.slice(2)] = v;
  }
  o.duration = Number(o.duration);
  o.rate = Number(o.rate);
  o.workers = Number(o.workers);
  if (!(o.duration > 0 && o.duration <= 3600))
    usage("--duration must be between 0 and 3600 seconds");
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function every(rate, end, fn) {
  const step = 1000 / (rate > 0 ? rate : 1);
  for (let i = 0; Date.now() < end; i++) {
    const t = Date.now();
    await fn(i);
    await sleep(Math.max(0, step - (Date.now() - t)));
  }
}

const patterns = {
  async kv(js, o, end, c) {
    const kv = await js.views.kv(o.bucket, { history: 5 });
    const w = await kv.watch();
    (async () => { for await (const _ of w) c.read++; })();
    await every(o.rate, end, async (i) => {
      try { await kv.put(`k${i % 50}`, String(i)); c.written++; }
      catch (e) { c.errors++; }
    });
    w.stop();
  },
  async obj(js, o, end, c) {
    const os = await js.views.os(o.bucket);
    const blob = new Uint8Array(200 * 1024);
    let prev = null;
    await every(0.1, end, async () => {
      const name = `blob-${Date.now()}`;
      try {
        await os.putBlob({ name }, blob);
        c.written++;
        const back = await os.getBlob(name);
        if (back && back.length === blob.length) c.read++; else c.errors++;
        if (prev) await os.delete(prev);
        prev = name;
      } catch (e) { c.errors++; }
    });
  },
  async ordered(js, o, end, c) {
    const consumer = await js.consumers.get(o.stream);
    const msgs = await consumer.consume();
    (async () => { for await (const _ of msgs) c.read++; })();
    await sleep(end - Date.now());
    await msgs.close();
  },
  async waiting(js, o, end, c) {
    const consumer = await js.consumers.get(o.stream, o.name);
    const loops = [];
    for (let w = 0; w < o.workers; w++) {
      loops.push((async () => {
        while (Date.now() < end) {
          const iter = await consumer.fetch({ max_messages: 1, expires: 5000 });
          for await (const m of iter) { m.ack(); c.read++; }
        }
      })());
    }
    await Promise.all(loops);
  },
};

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const run = patterns[o.pattern];
  if (!run) usage(`unknown --pattern ${o.pattern}`);
  let nc;
  try {
    nc = await connect({ servers: o.server, maxReconnectAttempts: -1 });
  } catch (e) {
    process.stderr.write(`nl_mix.js: connect: ${e.message}\n`);
    process.exit(1);
  }
  const c = { written: 0, read: 0, errors: 0 };
  await run(nc.jetstream(), o, Date.now() + o.duration * 1000, c);
  console.log(`pattern=${o.pattern} written=${c.written} read=${c.read} ` +
              `errors=${c.errors}`);
  await nc.close();
}

main().catch((e) => {
  process.stderr.write(`nl_mix.js: ${e.message}\n`);
  process.exit(1);
});
