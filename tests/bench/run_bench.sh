#!/usr/bin/env bash
# make bench: measures the poll path against a real nats-server at several
# sizes and writes results/bench.md (and results/bench.json).
#
# For each size (S streams x C consumers each): a fresh nats-server, the
# streams and consumers created through the API, then
#   - nl-bench poll: NL_BENCH_POLLS polls through the plugin's own code,
#     repeated NL_BENCH_RUNS times (medians are reported);
#   - collectd with the plugin (Interval 5): resident memory growth after
#     NL_BENCH_COLLECTD_POLLS polls, against the same collectd without it:
#     the median of NL_BENCH_RSS_SAMPLES samples 1 s apart (a poll's
#     short peak is not the memory held between polls), over
#     NL_BENCH_COLLECTD_RUNS runs of collectd with and without the plugin.
# At one size (NL_BENCH_RATE_SIZE, 1,000 consumers) the polls are repeated
# 1 s apart while publishers write NL_BENCH_RATES messages per second: the
# poll's cost must not depend on the message rate. Then the 3-node cluster
# at 1,000 consumers. Ports 14260-14279.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
nl_begin bench
SIZES=${NL_BENCH_SIZES:-"10x10 10x100 10x500 10x1000"}
POLLS=${NL_BENCH_POLLS:-7}
RUNS=${NL_BENCH_RUNS:-3}
CD_POLLS=${NL_BENCH_COLLECTD_POLLS:-4}
RSS_SAMPLES=${NL_BENCH_RSS_SAMPLES:-10}
CD_RUNS=${NL_BENCH_COLLECTD_RUNS:-2}
PORT=14260
OUT=${NL_BENCH_OUT:-results}
mkdir -p "$OUT"
JSON="$NL_TMP/bench.jsonl"
: >"$JSON"
BENCH=build/nl-bench

# collectd_rss MODE: starts collectd (Interval 5, with the load plugin)
# against PORT, without the plugin (MODE off) or with it and ConsumerValues
# MODE (all, none), waits for CD_POLLS polls and prints its resident memory
# in kB, one line per sample (RSS_SAMPLES, 1 s apart): total, anonymous
# (heap, stacks) and mapped files (libraries).
collectd_rss() {
  local with=$1 conf pid i
  mkdir -p "$NL_TMP/cd-$with/plugins"
  cp /usr/lib/collectd/logfile.so /usr/lib/collectd/load.so "$NL_PLUGIN" \
    "$NL_TMP/cd-$with/plugins/"
  conf="$NL_TMP/cd-$with/collectd.conf"
  cat >"$conf" <<EOF
BaseDir "$NL_TMP/cd-$with"
PIDFile "$NL_TMP/cd-$with/collectd.pid"
PluginDir "$NL_TMP/cd-$with/plugins"
TypesDB "/usr/share/collectd/types.db" "$NL_TYPES"
Interval 5
LoadPlugin logfile
<Plugin logfile>
  File "$NL_TMP/cd-$with/collectd.log"
</Plugin>
# Every collectd runs some read plugin: with one, collectd starts its own
# read and write threads, which are not the plugin's cost.
LoadPlugin load
EOF
  if [ "$with" != off ]; then
    cat >>"$conf" <<EOF
LoadPlugin nats_lens
<Plugin nats_lens>
  <Instance "bench">
    URL "nats://127.0.0.1:$PORT"
    Timeout 5
    ConsumerValues "$with"
    ConsumerValuesLimit 0
  </Instance>
</Plugin>
EOF
  fi
  collectd -f -C "$conf" >/dev/null 2>&1 &
  pid=$!
  sleep $((CD_POLLS * 5 + 2))
  for ((i = 0; i < RSS_SAMPLES; i++)); do
    awk '/^(VmRSS|RssAnon|RssFile):/ { printf "%s ", $2 } END { print "" }' \
      "/proc/$pid/status"
    sleep 1
  done
  kill "$pid"
  wait "$pid" 2>/dev/null
}

# median_rss: reads sample lines (total anon file) and prints the median
# of each column.
median_rss() {
  python3 -c 'import statistics, sys
rows = [list(map(int, l.split())) for l in sys.stdin if len(l.split()) == 3]
print(*(int(statistics.median(c)) for c in zip(*rows)))'
}

bench_size() {
  local topo=$1 streams=$2 consumers=$3 url=$4 i line
  for ((i = 0; i < RUNS; i++)); do
    line=$("$BENCH" poll --server "$url" --polls "$POLLS") || return 1
    echo "{\"topology\":\"$topo\",\"streams\":$streams,\"per_stream\":$consumers,\"run\":$i,\"bench\":$line}" >>"$JSON"
  done
  if [ "$topo" = single ]; then
    local r0 a0 f0 r1 a1 f1 r2 a2 f2 off="" none=""
    # Without the plugin and with ConsumerValues none in turn, so that a
    # drift of the machine's page cache falls on both.
    for ((i = 0; i < CD_RUNS; i++)); do
      off+=$(collectd_rss off)$'\n'
      none+=$(collectd_rss none)$'\n'
    done
    read -r r0 a0 f0 <<<"$(median_rss <<<"$off")"
    read -r r2 a2 f2 <<<"$(median_rss <<<"$none")"
    read -r r1 a1 f1 <<<"$(collectd_rss all | median_rss)"
    echo "{\"topology\":\"$topo\",\"streams\":$streams,\"per_stream\":$consumers,\"collectd_rss_kb_without\":$r0,\"collectd_rss_kb_with\":$r1,\"collectd_rss_kb_with_none\":$r2,\"anon_kb\":[$a0,$a1,$a2],\"file_kb\":[$f0,$f1,$f2]}" >>"$JSON"
  fi
}

# sum_last_seq URL: the sum of every stream's last sequence (messages ever
# stored), from one STREAM.LIST page.
sum_last_seq() {
  "$NL_INJECT" --server "$1" request '$JS.API.STREAM.LIST' '{"offset":0}' |
    python3 -c 'import json,sys
print(sum(s["state"]["last_seq"] for s in json.load(sys.stdin)["streams"]))'
}

# rate_phase STREAMS CONSUMERS URL: the same polls, 1 s apart, while
# publishers write to every stream at each rate of RATES (messages per
# second in all); records the publish rate reached over the polls.
rate_phase() {
  local streams=$1 consumers=$2 url=$3 rate i pids s0 s1 t0 t1 line
  for rate in $RATES; do
    pids=()
    if [ "$rate" -gt 0 ]; then
      for ((i = 0; i < streams; i++)); do
        "$NL_INJECT" --server "$url" publish "bench.$i.x" --count \
          $((rate / streams * 120)) --rate $((rate / streams)) \
          >/dev/null 2>&1 &
        pids+=($!)
        NL_PIDS+=($!)
      done
      sleep 2
    fi
    s0=$(sum_last_seq "$url")
    t0=$(date +%s.%N)
    line=$("$BENCH" poll --server "$url" --polls "$POLLS" --pause-ms 1000) ||
      return 1
    t1=$(date +%s.%N)
    s1=$(sum_last_seq "$url")
    if [ ${#pids[@]} -gt 0 ]; then
      kill "${pids[@]}" 2>/dev/null
      wait "${pids[@]}" 2>/dev/null
    fi
    echo "{\"topology\":\"rate\",\"streams\":$streams,\"per_stream\":$consumers,\"rate\":$rate,\"achieved_per_s\":$(awk -v a="$s0" -v b="$s1" -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.1f", (b - a) / (t1 - t0) }'),\"bench\":$line}" >>"$JSON"
  done
}
RATES=${NL_BENCH_RATES:-"0 2000 10000"}
RATE_SIZE=${NL_BENCH_RATE_SIZE:-10x100}

for size in $SIZES; do
  streams=${size%x*}
  consumers=${size#*x}
  echo "# single node: $streams streams x $consumers consumers" >&2
  nl_start_nats "$PORT" || exit 1
  "$BENCH" setup --server "nats://127.0.0.1:$PORT" --streams "$streams" \
    --consumers "$consumers" --messages 20 || exit 1
  bench_size single "$streams" "$consumers" "nats://127.0.0.1:$PORT" || exit 1
  if [ "$size" = "$RATE_SIZE" ]; then
    echo "# message rates $RATES per second at $size" >&2
    rate_phase "$streams" "$consumers" "nats://127.0.0.1:$PORT" || exit 1
  fi
  kill "$NL_NATS_PID"
  wait "$NL_NATS_PID" 2>/dev/null
  rm -rf "$NL_TMP/js-$PORT"
done

# The 3-node cluster: CONSUMER.LIST is answered by the meta leader, which
# gathers consumer state from each consumer's leader.
if [ "${NL_BENCH_CLUSTER:-1}" = 1 ]; then
  echo "# cluster: 10 streams x 100 consumers, R3" >&2
  routes="nats://127.0.0.1:14271,nats://127.0.0.1:14272,nats://127.0.0.1:14273"
  for n in 1 2 3; do
    nl_start_nats $((14264 + n)) --server_name "n$n" --cluster_name bench \
      --cluster "nats://127.0.0.1:$((14270 + n))" --routes "$routes" || exit 1
  done
  url="nats://127.0.0.1:14265"
  for ((i = 0; i < 60; i++)); do
    "$NL_INJECT" --server "$url" request '$JS.API.INFO' 2>/dev/null |
      grep -q '"streams"' && break
    sleep 1
  done
  sleep 3
  NL_BENCH_REPLICAS=3 "$BENCH" setup --server "$url" --streams 10 \
    --consumers 100 --messages 20 --replicas 3 || exit 1
  bench_size cluster 10 100 "$url" || exit 1
fi

# Stream churn through the engine alone: 1,000 streams listed per poll,
# 100 of them new each poll (10 s apart), 2,000 polls (200,900 names); and
# 20,000 streams listed at once.
echo "# stream churn (engine only)" >&2
"$BENCH" churn --streams 1000 --new 100 --polls 2000 --interval-s 10 \
  >"$NL_TMP/churn.jsonl" || exit 1
"$BENCH" churn --streams 20000 --new 0 --polls 20 --interval-s 10 |
  tail -n 1 >"$NL_TMP/wide.jsonl" || exit 1

cp "$JSON" "$OUT/bench.jsonl"
python3 tests/bench/report.py "$OUT/bench.jsonl" "$OUT/bench.md" "$OUT/bench.json"
python3 tests/bench/churn_report.py "$NL_TMP/churn.jsonl" "$NL_TMP/wide.jsonl" \
  "$OUT/bench.md"
# The REST API and dashboard at 10,000 consumers.
echo "# dashboard at 10,000 consumers" >&2
bash tests/bench/dashboard_bench.sh "$OUT/bench.md" || exit 1
# SystemAccount against the per-account mode at 10,000 consumers in 100
# accounts, one server and a 3-node cluster.
echo "# system-account mode at 10,000 consumers in 100 accounts" >&2
bash tests/bench/system_account_bench.sh "$OUT/bench.md" || exit 1
# One agent per server (Scope "server") against the central polls, on 3
# and 5 nodes and a 2 x 3 super-cluster with the same consumers per server.
echo "# agents per server at 10,000 consumers" >&2
bash tests/bench/agent_read_bench.sh "$OUT/bench.md" || exit 1
echo "# wrote $OUT/bench.md" >&2
