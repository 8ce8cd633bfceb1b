#!/usr/bin/env bash
# tests/eval/forecast.sh: the lead time RETENTION_RISK's forecast gives, on
# a real nats-server polled by real collectd loading the built plugin
# (`make eval-forecast`).
#
# Several steady trends run at once, each a stream with one limit and one
# consumer that reads slower than the stream receives (nl-inject publishers
# and pull workers), from the start: for each, when the finding is raised
# (collectd's notification), when the stream first evicts a message the
# consumer has not received (the stream's first sequence passing the
# consumer's, as the plugin's own values show), and the lead between them.
# A consumer that keeps up beside them must raise nothing. The raw
# measurements go to $OUT/eval-forecast.json and the table into
# $OUT/eval.md between the "forecast" markers (tests/eval/forecast_table.py).
#
# Environment: INTERVAL (poll interval, default 3 s), OUT (default
# results), NATS_SERVER (tests/nats_server.sh). Everything stops by itself
# within the longest trend's eviction and a minute.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
nl_begin eval-forecast
INTERVAL=${INTERVAL:-3}
OUT=${OUT:-results}
PORT=$(nl_port NL_PORT_EVAL_FORECAST 15400)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }

# The trends: name, limit option and value, publish rate, workers, ms a
# message each worker takes. The consumer of stream NAME is NAME/slow.
TRENDS=(
  "AGE1 --max-age 120 20 1 100"  # age +0.5 s/s toward 120 s
  "AGE2 --max-age 120 20 3 200"  # age +0.25 s/s (15 of 20 read)
  "AGE3 --max-age 60 10 4 500"   # age +0.2 s/s (8 of 10 read)
  "CNT1 --max-msgs 6000 40 2 100" # +20 msg/s toward 6,000
  "CNT2 --max-msgs 3000 100 5 100" # +50 msg/s toward 3,000
  "BYT1 --max-bytes 1000000 40 2 100" # +20 msg/s of about 130 B stored
)
for t in "${TRENDS[@]}"; do
  read -r name opt value _ <<<"$t"
  inj stream-create "$name" --subjects "$(echo "$name" | tr 'A-Z' 'a-z').>" \
    "$opt" "$value" &&
    inj consumer-create "$name" slow --ack-wait 60 || exit 1
done
inj stream-create KEEP --subjects 'keep.>' --max-age 60 &&
  inj consumer-create KEEP fast --ack-wait 60 || exit 1

nl_start_collectd "<Instance \"ev\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" "$INTERVAL" || exit 1
START=$(date +%s.%N)
LONGEST=600
for t in "${TRENDS[@]}"; do
  read -r name _ _ rate workers ms <<<"$t"
  subject="$(echo "$name" | tr 'A-Z' 'a-z').x"
  nl_inject_bg "$PORT" "pub_$name" publish "$subject" \
    --count $((rate * LONGEST)) --rate "$rate" --size 100
  nl_inject_bg "$PORT" "w_$name" consume "$name" slow --duration "$LONGEST" \
    --workers "$workers" --process-ms "$ms"
done
nl_inject_bg "$PORT" pub_KEEP publish keep.x --count $((20 * LONGEST)) \
  --rate 20 --size 100
nl_inject_bg "$PORT" w_KEEP consume KEEP fast --duration "$LONGEST" --workers 2

# evicted NAME: the time (epoch s) of the first poll whose stream first
# sequence passed the consumer's next one (a message it had not received
# was evicted), or nothing yet.
evicted() {
  local first pend
  first=$(nl_csv_file "ev-$1" nats_lens_seq first)
  pend=$(nl_csv_file "ev-$1" nats_lens_num_pending slow)
  [ -n "$first" ] && [ -n "$pend" ] || return 0
  # A message the consumer has not received is gone once the consumer's
  # lost count rises.
  awk -F, 'NR > 1 && $2 + 0 > 0 { print $1; exit }' \
    "$(nl_csv_file "ev-$1" nats_lens_lost slow)" 2>/dev/null
}

# raised NAME: the time (epoch s) of NAME/slow's RETENTION_RISK onset in
# collectd's log, or nothing yet.
raised() {
  nl_notifications "RETENTION_RISK $1/slow:" |
    sed -n 's/^\[\([0-9-]* [0-9:]*\)\].*/\1/p' | head -n 1 |
    { read -r ts && [ -n "$ts" ] && date -d "$ts" +%s; }
}

end=$(($(date +%s) + LONGEST + 60))
while [ "$(date +%s)" -lt "$end" ]; do
  done_all=1
  for t in "${TRENDS[@]}"; do
    read -r name _ <<<"$t"
    [ -n "$(evicted "$name")" ] || done_all=0
  done
  [ "$done_all" = 1 ] && break
  sleep 5
done

mkdir -p "$OUT"
{
  echo "{\"start\": $START, \"interval_s\": $INTERVAL,"
  echo " \"server\": \"$(nats-server --version 2>&1 | head -n 1)\","
  echo " \"commit\": \"$(git rev-parse --short HEAD)\", \"trends\": ["
  sep=
  for t in "${TRENDS[@]}"; do
    read -r name opt value rate workers ms <<<"$t"
    r=$(raised "$name")
    e=$(evicted "$name")
    fc=$(nl_csv_file "ev-$name" nats_lens_eviction_forecast slow)
    first_fc=$([ -n "$fc" ] && awk -F, 'NR > 1 { print $2; exit }' "$fc")
    line=$(nl_notifications "RETENTION_RISK $name/slow:" | head -n 1)
    echo "$sep {\"name\": \"$name\", \"limit\": \"${opt#--}\", \"value\": $value,"
    echo "  \"rate\": $rate, \"workers\": $workers, \"process_ms\": $ms,"
    echo "  \"raised\": ${r:-null}, \"evicted\": ${e:-null},"
    echo "  \"first_forecast_s\": ${first_fc:-null},"
    echo "  \"message\": $(printf '%s' "${line#*message = }" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')}"
    sep=,
  done
  echo "], \"keep_findings\": $(nl_notifications "KEEP/fast:" | grep -c 'severity = WARNING\|severity = FAILURE')}"
} >"$OUT/eval-forecast.json"
command="make eval-forecast INTERVAL=$INTERVAL"
python3 tests/eval/forecast_table.py --command "$command" --out "$OUT" \
  "$OUT/eval-forecast.json"
