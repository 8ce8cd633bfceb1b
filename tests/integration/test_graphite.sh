#!/usr/bin/env bash
# collectd write_graphite -> a real carbon-cache (Debian graphite-carbon)
# on 127.0.0.1, configured with examples/backends/graphite.conf and the
# carbon sections in examples/backends/. A MAX_PENDING_THROTTLE violation
# is injected and fixed on a real nats-server; the whisper series that
# carbon writes must hold the consumer's values (45 pending, 5 ack
# pending, the violation gauge going 0 -> 1 -> 0), the stream's and the
# instance's values.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/backend_scenario.sh"
nl_begin graphite
NATS_PORT=$(nl_port NL_PORT_GRAPHITE_NATS 14500)
LINE_PORT=$(nl_port NL_PORT_GRAPHITE_LINE 14501)
PICKLE_PORT=$(nl_port NL_PORT_GRAPHITE_PICKLE 14502)
QUERY_PORT=$(nl_port NL_PORT_GRAPHITE_QUERY 14503)
EX="$NL_ROOT/examples/backends"

# carbon-cache in the foreground with a private configuration: storage in
# the test's directory, every listener on 127.0.0.1 and the test's ports,
# the example's schema with a 1 s step to match collectd's Interval 1, no
# tag database (it would be an HTTP client of port 80).
CARBON="$NL_TMP/carbon"
mkdir -p "$CARBON/conf" "$CARBON/storage/whisper" "$CARBON/log"
cat >"$CARBON/conf/carbon.conf" <<EOF
[cache]
STORAGE_DIR = $CARBON/storage/
LOCAL_DATA_DIR = $CARBON/storage/whisper/
WHITELISTS_DIR = $CARBON/storage/lists/
CONF_DIR = $CARBON/conf/
LOG_DIR = $CARBON/log/
PID_DIR = $CARBON/
USER =
DATABASE = whisper
MAX_CACHE_SIZE = inf
MAX_UPDATES_PER_SECOND = 1000
MAX_CREATES_PER_MINUTE = inf
LINE_RECEIVER_INTERFACE = 127.0.0.1
LINE_RECEIVER_PORT = $LINE_PORT
ENABLE_UDP_LISTENER = False
PICKLE_RECEIVER_INTERFACE = 127.0.0.1
PICKLE_RECEIVER_PORT = $PICKLE_PORT
CACHE_QUERY_INTERFACE = 127.0.0.1
CACHE_QUERY_PORT = $QUERY_PORT
ENABLE_MANHOLE = False
ENABLE_TAGS = False
WHISPER_FALLOCATE_CREATE = False
EOF
{
  nl_backend_config_file "$EX/carbon-storage-schemas.conf" \
    's/^retentions = .*/retentions = 1s:1h/' || exit 1
  printf '\n[default]\npattern = .*\nretentions = 60s:1d\n'
} >"$CARBON/conf/storage-schemas.conf"
{
  cat "$EX/carbon-storage-aggregation.conf"
  printf '\n[default]\npattern = .*\nxFilesFactor = 0.5\naggregationMethod = average\n'
} >"$CARBON/conf/storage-aggregation.conf"
carbon-cache --config="$CARBON/conf/carbon.conf" --pidfile="$CARBON/carbon.pid" \
  --debug start >"$NL_TMP/carbon.out" 2>&1 &
NL_PIDS+=($!)
if ! nl_wait_port "$LINE_PORT" 20; then
  nl_fail carbon/started "carbon-cache did not listen on $LINE_PORT: $(tail -n 5 "$NL_TMP/carbon.out")"
  exit 1
fi
nl_pass carbon/started "line receiver on 127.0.0.1:$LINE_PORT"

nl_start_nats "$NATS_PORT" || exit 1
WRITER=$(nl_backend_config_file "$EX/graphite.conf" \
  "s/Port \"2003\"/Port \"$LINE_PORT\"/") || exit 1
nl_start_collectd "$(nl_backend_nats_block "$NATS_PORT")" 1 "$WRITER" \
  write_graphite || exit 1
nl_backend_throttle_start "$NATS_PORT" || exit 1

W="$CARBON/storage/whisper/collectd/nl-test/nats_lens"
C="$W/it-S"
# values FILE: the non-empty values of a whisper series over the last
# 10 minutes, one per line, oldest first.
values() {
  whisper-fetch --from=$(($(date +%s) - 600)) "$1" 2>/dev/null |
    awk '$2 != "None" { print $2 }'
}
# has_value FILE VALUE: the series holds VALUE.
has_value() { values "$1" | awk -v v="$2" '$1 + 0 == v { f = 1 } END { exit !f }'; }
# last_is FILE VALUE: the newest value of the series is VALUE.
last_is() { [ "$(values "$1" | tail -n 1 | awk '{ print $1 + 0 }')" = "$2" ]; }

if line=$(nl_backend_wait_onset); then
  nl_pass collectd/onset "${line#*message = }"
else
  nl_fail collectd/onset "no MAX_PENDING_THROTTLE notification in collectd's log"
fi
# Fix as soon as carbon has the violation gauge at 1; whisper keeps the
# history, which the checks below read.
nl_check whisper/max_pending_throttle-1 nl_retry 15 has_value \
  "$C/nats_lens_max_pending_throttle/c.wsp" 1
nl_backend_throttle_fix "$NATS_PORT"

# The consumer's series, as whisper files written by carbon.
for t in num_pending num_ack_pending num_redelivered num_waiting \
  ack_pending_ratio delivered redelivered lost ack_wait_violation \
  sequence_gap max_pending_throttle nak_storm missing_progress; do
  nl_retry 15 test -s "$C/nats_lens_$t/c.wsp" || break
done
if [ -s "$C/nats_lens_$t/c.wsp" ]; then
  nl_pass whisper/consumer-series "13 series under collectd.nl-test.nats_lens.it-S.*.c"
else
  nl_fail whisper/consumer-series "no $C/nats_lens_$t/c.wsp; carbon has: $(cd "$CARBON/storage/whisper" 2>/dev/null && find . -name '*.wsp' | head -n 20 | tr '\n' ' ')"
fi
whisper-info "$C/nats_lens_num_pending/c.wsp" >"$NL_TMP/whisper-info.txt" 2>&1
nl_check whisper/retention-from-example grep -q 'secondsPerPoint: 1$' \
  "$NL_TMP/whisper-info.txt"
whisper-info "$C/nats_lens_max_pending_throttle/c.wsp" \
  >"$NL_TMP/whisper-info-gauge.txt" 2>&1
nl_check whisper/violation-max-rollup-from-example grep -q \
  'aggregationMethod: max' "$NL_TMP/whisper-info-gauge.txt"
nl_check whisper/num_pending-45 has_value "$C/nats_lens_num_pending/c.wsp" 45
nl_check whisper/num_ack_pending-5 has_value \
  "$C/nats_lens_num_ack_pending/c.wsp" 5
nl_check whisper/ack_pending_ratio-1 has_value \
  "$C/nats_lens_ack_pending_ratio/c.wsp" 1
nl_check whisper/stream-messages-50 has_value "$C/count/messages.wsp" 50
nl_check whisper/stream-last-seq-50 has_value "$C/nats_lens_seq/last.wsp" 50
nl_check whisper/instance-connected-1 has_value "$W/it/gauge/connected.wsp" 1
nl_check whisper/instance-consumers-1 has_value "$W/it/count/consumers.wsp" 1

# After the fix: OKAY, the gauge goes back to 0 after its 1, the backlog
# drains, and no other class was raised for S/c.
if line=$(nl_backend_wait_okay); then
  nl_pass collectd/okay "${line#*message = }"
else
  nl_fail collectd/okay "no OKAY notification in collectd's log"
fi
nl_check whisper/max_pending_throttle-back-to-0 nl_retry 15 eval \
  'values "$C/nats_lens_max_pending_throttle/c.wsp" |
     awk "\$1 == 1 { one = 1 } one && \$1 == 0 { ok = 1 } END { exit !ok }"'
nl_check whisper/num_pending-0 nl_retry 15 last_is \
  "$C/nats_lens_num_pending/c.wsp" 0
nl_check whisper/other-classes-0 eval '
  for t in ack_wait_violation sequence_gap nak_storm missing_progress; do
    values "$C/nats_lens_$t/c.wsp" | awk "\$1 != 0 { exit 1 }" || exit 1
  done'
# StoreRates: the redelivery counter arrives as a rate; the 5 held
# messages are redelivered (to the worker that never acks, then after the
# fix), so some interval has a rate above 0.
nl_check whisper/redelivered-rate nl_retry 15 eval \
  'values "$C/nats_lens_redelivered/c.wsp" | awk "\$1 > 0 { f = 1 } END { exit !f }"'
nl_check collectd/no-write-errors eval \
  '! grep -i "write_graphite.*\(error\|fail\)" "$NL_TMP/collectd.log"'
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
