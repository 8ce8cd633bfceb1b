#!/usr/bin/env bash
# make bench: measures the poll path against a real nats-server at several
# sizes and writes results/bench.md (and results/bench.json).
#
# For each size (S streams x C consumers each): a fresh nats-server, the
# streams and consumers created through the API, then
#   - nl-bench poll: NL_BENCH_POLLS polls through the plugin's own code,
#     repeated NL_BENCH_RUNS times (medians are reported);
#   - collectd with the plugin (Interval 5): resident memory growth after
#     NL_BENCH_COLLECTD_POLLS polls, against the same collectd without it.
# Then the 3-node cluster at 1,000 consumers. Ports 14260-14279.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
nl_begin bench
SIZES=${NL_BENCH_SIZES:-"10x10 10x100 10x500 10x1000"}
POLLS=${NL_BENCH_POLLS:-7}
RUNS=${NL_BENCH_RUNS:-3}
CD_POLLS=${NL_BENCH_COLLECTD_POLLS:-4}
PORT=14260
OUT=results
mkdir -p "$OUT"
JSON="$NL_TMP/bench.jsonl"
: >"$JSON"
BENCH=build/nl-bench

# rss_kb PID: resident memory of a process in kB.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

# collectd_rss MODE: starts collectd (Interval 5) against PORT, without the
# plugin (MODE off) or with it and ConsumerValues MODE (all, none), waits
# for CD_POLLS polls and prints its resident memory in kB.
collectd_rss() {
  local with=$1 conf pid i rss
  mkdir -p "$NL_TMP/cd-$with/plugins"
  cp /usr/lib/collectd/logfile.so "$NL_PLUGIN" "$NL_TMP/cd-$with/plugins/"
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
EOF
  if [ "$with" != off ]; then
    cat >>"$conf" <<EOF
LoadPlugin nats_lens
<Plugin nats_lens>
  <Instance "bench">
    URL "nats://127.0.0.1:$PORT"
    Timeout 5
    ConsumerValues "$with"
  </Instance>
</Plugin>
EOF
  fi
  collectd -f -C "$conf" >/dev/null 2>&1 &
  pid=$!
  sleep $((CD_POLLS * 5 + 2))
  rss=$(rss_kb "$pid")
  kill "$pid"
  wait "$pid" 2>/dev/null
  echo "$rss"
}

bench_size() {
  local topo=$1 streams=$2 consumers=$3 url=$4 i line rss0 rss1 rss2
  for ((i = 0; i < RUNS; i++)); do
    line=$("$BENCH" poll --server "$url" --polls "$POLLS") || return 1
    echo "{\"topology\":\"$topo\",\"streams\":$streams,\"per_stream\":$consumers,\"run\":$i,\"bench\":$line}" >>"$JSON"
  done
  if [ "$topo" = single ]; then
    rss0=$(collectd_rss off)
    rss1=$(collectd_rss all)
    rss2=$(collectd_rss none)
    echo "{\"topology\":\"$topo\",\"streams\":$streams,\"per_stream\":$consumers,\"collectd_rss_kb_without\":$rss0,\"collectd_rss_kb_with\":$rss1,\"collectd_rss_kb_with_none\":$rss2}" >>"$JSON"
  fi
}

for size in $SIZES; do
  streams=${size%x*}
  consumers=${size#*x}
  echo "# single node: $streams streams x $consumers consumers" >&2
  nl_start_nats "$PORT" || exit 1
  "$BENCH" setup --server "nats://127.0.0.1:$PORT" --streams "$streams" \
    --consumers "$consumers" --messages 20 || exit 1
  bench_size single "$streams" "$consumers" "nats://127.0.0.1:$PORT" || exit 1
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

cp "$JSON" "$OUT/bench.jsonl"
python3 tests/bench/report.py "$OUT/bench.jsonl" "$OUT/bench.md" "$OUT/bench.json"
echo "# wrote $OUT/bench.md" >&2
