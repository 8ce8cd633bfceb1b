#!/usr/bin/env bash
# collectd network plugin -> the collectd listener of a real InfluxDB 1.x
# (Debian influxdb), configured with examples/backends/influxdb.conf and
# examples/backends/influxd-collectd-input.conf (types.db with ours). A
# MAX_PENDING_THROTTLE violation is injected and fixed on a real
# nats-server: InfluxQL queries must return the consumer's series and the
# violation gauge at 1 then 0, and every query of
# examples/grafana-dashboard.json must run and show the consumer.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/backend_scenario.sh"
nl_begin influxdb
NATS_PORT=$(nl_port NL_PORT_INFLUXDB_NATS 14510)
HTTP_PORT=$(nl_port NL_PORT_INFLUXDB_HTTP 14511)
COLLECTD_PORT=$(nl_port NL_PORT_INFLUXDB_COLLECTD 14512)
RPC_PORT=$(nl_port NL_PORT_INFLUXDB_RPC 14513)
EX="$NL_ROOT/examples"
INFLUX="http://127.0.0.1:$HTTP_PORT"

# influxd with a private configuration: data in the test's directory, HTTP
# and the RPC service on 127.0.0.1 and the test's ports, no reporting, no
# self-monitoring, and the example's collectd listener (the test's port,
# the test's types directory, a 1 s batch timeout).
I="$NL_TMP/influxdb"
mkdir -p "$I/types"
# Symbolic links, as the example's comment tells.
ln -s /usr/share/collectd/types.db "$I/types/types.db"
ln -s "$NL_TYPES" "$I/types/nats_lens.types.db"
{
  cat <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$RPC_PORT"
[meta]
  dir = "$I/meta"
[data]
  dir = "$I/data"
  wal-dir = "$I/wal"
  query-log-enabled = false
[monitor]
  store-enabled = false
[subscriber]
  enabled = false
[continuous_queries]
  enabled = false
[http]
  bind-address = "127.0.0.1:$HTTP_PORT"
  log-enabled = false
[logging]
  level = "warn"
EOF
  nl_backend_config_file "$EX/backends/influxd-collectd-input.conf" \
    "s#127.0.0.1:25826#127.0.0.1:$COLLECTD_PORT#" \
    "s#/etc/influxdb/collectd-types#$I/types#" \
    's#batch-timeout = "10s"#batch-timeout = "1s"#' || exit 1
} >"$I/influxdb.conf"
influxd -config "$I/influxdb.conf" >"$NL_TMP/influxd.out" 2>&1 &
NL_PIDS+=($!)
if nl_retry 20 curl -sf --max-time 2 -o /dev/null "$INFLUX/ping"; then
  nl_pass influxd/started "HTTP on 127.0.0.1:$HTTP_PORT"
else
  nl_fail influxd/started "$(tail -n 5 "$NL_TMP/influxd.out")"
  exit 1
fi

nl_start_nats "$NATS_PORT" || exit 1
WRITER=$(nl_backend_config_file "$EX/backends/influxdb.conf" \
  "s/\"25826\"/\"$COLLECTD_PORT\"/" \
  's/FlushInterval 10/FlushInterval 1/') || exit 1
nl_start_collectd "$(nl_backend_nats_block "$NATS_PORT")" 1 "$WRITER" \
  network || exit 1
nl_backend_throttle_start "$NATS_PORT" || exit 1

# q QUERY: the last column (the value) of every row of every series, one
# per line (nothing on an error or an empty result).
q() {
  curl -sfG --max-time 5 "$INFLUX/query" --data-urlencode db=collectd \
    --data-urlencode epoch=s --data-urlencode "q=$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("results", []):
    for s in r.get("series", []):
        for row in s["values"]:
            print(row[-1] if row[-1] is not None else "null")'
}
# consumer_agg FUNC TYPE: FUNC("value") of the consumer S/c's series TYPE
# over the last 10 minutes.
consumer_agg() {
  q "SELECT $1(\"value\") FROM \"nats_lens_value\" WHERE \"type\" = '$2'
     AND \"instance\" = 'it-S' AND \"type_instance\" = 'c'
     AND time > now() - 10m" | awk '{ print $1 + 0 }'
}
# is WANT COMMAND...: the command prints exactly WANT.
is() {
  local want=$1
  shift
  [ "$("$@")" = "$want" ]
}

if line=$(nl_backend_wait_onset); then
  nl_pass collectd/onset "${line#*message = }"
else
  nl_fail collectd/onset "no MAX_PENDING_THROTTLE notification in collectd's log"
fi
# Fix as soon as InfluxDB has the violation gauge at 1; the checks read the
# stored history. The dashboard's queries run once before the fix.
nl_check query/max_pending_throttle-1 nl_retry 15 is 1 \
  consumer_agg max nats_lens_max_pending_throttle
# The rest of that poll's values may be a packet behind.
nl_retry 5 eval 'is 45 consumer_agg max nats_lens_num_pending &&
  is 1 consumer_agg max nats_lens_ack_pending_ratio'
python3 "$NL_ROOT/tests/tools/dashboard_queries.py" "$EX/grafana-dashboard.json" \
  "$INFLUX" collectd host=.* stream=.* consumer=.* >"$NL_TMP/dash-firing.txt" 2>&1
DASH_FIRING_RC=$?
nl_backend_throttle_fix "$NATS_PORT"

has_measurement() { q 'SHOW MEASUREMENTS' | grep -qx nats_lens_value; }
nl_check query/measurement has_measurement
# consumer_series: the number of nats_lens types stored for S/c.
consumer_series() {
  curl -sfG --max-time 5 "$INFLUX/query" --data-urlencode db=collectd \
    --data-urlencode "q=SHOW SERIES FROM nats_lens_value WHERE type_instance = 'c'" |
    grep -o 'instance=it-S,type=nats_lens_[a-z_]*,type_instance=c' | sort -u | wc -l
}
# The per-consumer types collectd dispatched for S/c, from its CSV files.
want_series=$(ls "$NL_TMP/csv/nl-test/nats_lens-it-S/" |
  sed -n 's/^\(nats_lens_[a-z_]*\)-c-[0-9-]*$/\1/p' | sort -u | wc -l)
if [ "$want_series" -ge 13 ] && nl_retry 10 is "$want_series" consumer_series; then
  nl_pass query/consumer-series "$want_series series with instance=it-S, type_instance=c (as dispatched)"
else
  nl_fail query/consumer-series "$(consumer_series) consumer series, want $want_series"
fi
nl_check query/num_pending-45 nl_retry 10 is 45 consumer_agg max nats_lens_num_pending
nl_check query/num_ack_pending-5 nl_retry 10 is 5 consumer_agg max nats_lens_num_ack_pending
nl_check query/ack_pending_ratio-1 nl_retry 10 is 1 consumer_agg max nats_lens_ack_pending_ratio
nl_check query/stream-messages-50 nl_retry 10 is 50 q "SELECT max(\"value\") FROM
  \"nats_lens_value\" WHERE \"instance\" = 'it-S' AND \"type\" = 'count' AND
  \"type_instance\" = 'messages' AND time > now() - 10m"
nl_check query/instance-connected-1 nl_retry 10 is 1 q "SELECT last(\"value\") FROM
  \"nats_lens_value\" WHERE \"instance\" = 'it' AND \"type\" = 'gauge' AND
  \"type_instance\" = 'connected' AND time > now() - 10m"

# The dashboard while throttled: every query runs; lag, ack-pending ratio
# and the violation rows show S/c; one violation is active.
D="$NL_TMP/dash-firing.txt"
CT='tags=instance=it-S,type_instance=c'
if [ "$DASH_FIRING_RC" -eq 0 ]; then
  nl_pass dashboard/queries-run "$(grep -c '^var=\|^panel=' "$D") results"
else
  nl_fail dashboard/queries-run "$(grep -m 3 '^error\|Error' "$D")"
fi
nl_check dashboard/variables grep -qx 'var=consumer values=c' "$D"
nl_check dashboard/lag grep -q "^panel=3 .* $CT .*max=45" "$D"
nl_check dashboard/ack-pending-ratio grep -q "^panel=5 .* $CT .*max=1" "$D"
nl_check dashboard/violation-row grep -q \
  "^panel=2 .* tags=instance=it-S,type=nats_lens_max_pending_throttle,type_instance=c .*max=1" "$D"
nl_check dashboard/active-violations-1 grep -q '^panel=1 .* last=1 ' "$D"

# After the fix: OKAY, the gauge's newest value 0, the redelivery counter
# (raw in InfluxDB) grew, and the dashboard shows no active violation and a
# redelivery rate above 0.
if line=$(nl_backend_wait_okay); then
  nl_pass collectd/okay "${line#*message = }"
else
  nl_fail collectd/okay "no OKAY notification in collectd's log"
fi
nl_check query/max_pending_throttle-back-to-0 nl_retry 15 is 0 \
  consumer_agg last nats_lens_max_pending_throttle
nl_check query/other-classes-0 eval '
  for t in ack_wait_violation sequence_gap nak_storm missing_progress; do
    is 0 consumer_agg max nats_lens_$t || exit 1
  done'
redelivered() {
  [ "$(consumer_agg spread nats_lens_redelivered)" -gt 0 ] 2>/dev/null
}
nl_check query/redelivered-grew nl_retry 15 redelivered
python3 "$NL_ROOT/tests/tools/dashboard_queries.py" "$EX/grafana-dashboard.json" \
  "$INFLUX" collectd host=.* stream=.* consumer=.* >"$NL_TMP/dash-okay.txt" 2>&1
D="$NL_TMP/dash-okay.txt"
nl_check dashboard/active-violations-0 grep -q '^panel=1 .* last=0 ' "$D"
nl_check dashboard/redelivery-rate awk -v ct="$CT" '
  /^panel=4 / && index($0, ct) { split($NF, m, "="); if (m[2] + 0 > 0) f = 1 }
  END { exit !f }' "$D"
nl_check influxd/no-errors eval '! grep -i "lvl=error\|panic" "$NL_TMP/influxd.out"'
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
