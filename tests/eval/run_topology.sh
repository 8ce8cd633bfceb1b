#!/usr/bin/env bash
# tests/eval/run_topology.sh TOPOLOGY OUT.json [eval.py options...]
#
# Starts one topology on 127.0.0.1 with tests/lib.sh (a single JetStream
# nats-server, or a 3-node JetStream cluster), collectd with the built
# nats_lens plugin polling it, then runs tests/eval/eval.py against them.
# Everything started is stopped on exit (tests/lib.sh). Ports: NL_EVAL_PORT
# (default 14800) and the 40 above it.
#   single:  client BASE, monitor BASE+1
#   cluster: clients BASE+10..12, monitors BASE+20..22, routes BASE+30..32
# Environment: INTERVAL (poll interval, seconds, default 3).
set -u
topology=$1
out=$2
shift 2
. "$(dirname "$0")/../lib.sh"
nl_begin "eval-$topology"
BASE=${NL_EVAL_PORT:-14800}
INTERVAL=${INTERVAL:-3}

urls=()
monitors=()
pids=()
if [ "$topology" = single ]; then
  nl_start_nats "$BASE" -m $((BASE + 1)) || exit 1
  urls=("nats://127.0.0.1:$BASE")
  monitors=($((BASE + 1)))
  pids=("$NL_NATS_PID")
  timeout=2
else
  for i in 0 1 2; do
    routes=""
    for j in 0 1 2; do
      [ "$j" = "$i" ] &&
        continue
      routes="${routes:+$routes,}nats://127.0.0.1:$((BASE + 30 + j))"
    done
    nl_start_nats $((BASE + 10 + i)) -m $((BASE + 20 + i)) \
      --server_name "n$((i + 1))" --cluster_name NLEVAL \
      --cluster "nats://127.0.0.1:$((BASE + 30 + i))" --routes "$routes" ||
      exit 1
    urls+=("nats://127.0.0.1:$((BASE + 10 + i))")
    monitors+=($((BASE + 20 + i)))
    pids+=("$NL_NATS_PID")
  done
  # The cluster is usable once a meta leader is elected: an R3 stream can
  # be created.
  for ((i = 0; i < 60; i++)); do
    nl_inject $((BASE + 10)) stream-create EVAL_READY --subjects eval.ready \
      --replicas 3 >/dev/null 2>&1 && break
    sleep 1
  done
  nl_inject $((BASE + 10)) stream-delete EVAL_READY >/dev/null 2>&1 || {
    echo "# the cluster did not form" >&2
    exit 1
  }
  timeout=5
fi

block="<Instance \"ev\">"
for u in "${urls[@]}"; do
  block="$block
  URL \"$u\""
done
# Every poll reply goes to the poll log, to which eval.py applies the
# research monitor's conditions (tests/eval/reference.py).
# The production mix's stream declared full by design (tests/eval/mix.py).
block="$block
  Timeout $timeout
  PollLog \"$NL_TMP/polls.jsonl\"
  StreamDeclaration \"M_FULLOK\" \"full_ok\" \"true\"
</Instance>"
nl_start_collectd "$block" "$INTERVAL" || exit 1

join() {
  local IFS=,
  echo "$*"
}
python3 "$NL_ROOT/tests/eval/eval.py" --topology "$topology" \
  --interval "$INTERVAL" --urls "$(join "${urls[@]}")" \
  --monitor "$(join "${monitors[@]}")" --pids "$(join "${pids[@]}")" \
  --collectd-dir "$NL_TMP" --work "$NL_TMP/work" --out "$out" \
  --poll-log "$NL_TMP/polls.jsonl" "$@"
rc=$?
if [ -n "${NL_EVAL_KEEP_LOG:-}" ]; then
  cp "$NL_TMP/collectd.log" "$NL_EVAL_KEEP_LOG" 2>/dev/null
fi
exit $rc
