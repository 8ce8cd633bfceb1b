#!/usr/bin/env bash
# Recovery after an outage with collectd's defaults (MaxReadInterval
# 86,400 s, as packaged): the NATS server is killed for 20 s and started
# again. Each poll during the outage is reported as failed (one per
# interval: the plugin keeps its interval instead of making collectd back
# off), and once the server is back the plugin is connected within 3
# polls (cnats retries every second).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin outage_recovery
PORT=$(nl_port NL_PORT_OUTAGE 14790)
OUTAGE=20
NL_MAX_READ_INTERVAL=86400 # collectd's own default.
args=(-a 127.0.0.1 -p "$PORT" -js -sd "$NL_TMP/js")
nl_start_server js "$PORT" "${args[@]}" || exit 1
PID=$NL_SERVER_PID
nl_inject "$PORT" stream-create S --subjects 's.>' --storage file >/dev/null
nl_inject "$PORT" consumer-create S c >/dev/null
nl_start_collectd "<Instance \"o\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 1
</Instance>" 1 || exit 1
polled() { nl_csv_seen_since o gauge connected 0 '== 1'; }
nl_retry 20 polled || {
  nl_fail setup/polled "no successful poll before the outage"
  exit 1
}
kill -9 "$PID"
wait "$PID" 2>/dev/null
DOWN=$(date +%s)
sleep "$OUTAGE"
nl_start_server js "$PORT" "${args[@]}" || exit 1
UP=$(date +%s)
back() { nl_csv_seen_since o gauge connected "$UP" '== 1'; }
if nl_retry 30 back; then
  nl_pass recovery/polled-again "connected again after the restart"
else
  nl_fail recovery/polled-again "no successful poll within 30 s of the restart"
fi
f=$(nl_csv_file o gauge connected)
# Failed polls during the outage: about one per interval (with collectd's
# back-off there would be about log2(OUTAGE) of them).
failed=$(awk -F, -v a="$DOWN" -v b="$UP" \
  'NR > 1 && $1 > a && $1 <= b && $2 + 0 == 0 { n++ } END { print n + 0 }' "$f")
if [ "$failed" -ge $((OUTAGE / 2)) ]; then
  nl_pass recovery/kept-interval "$failed failed polls in the ${OUTAGE} s outage"
else
  nl_fail recovery/kept-interval "only $failed failed polls in the ${OUTAGE} s outage (back-off)"
fi
# The plugin reconnects as soon as cnats does (it retries every second):
# at most 3 polls after the server listens again still fail.
late=$(awk -F, -v up="$UP" 'NR > 1 && $1 > up {
  if ($2 + 0 == 1) { print n + 0; exit } n++ }' "$f")
if [ -n "$late" ] && [ "$late" -le 3 ]; then
  nl_pass recovery/next-polls "$late failed poll(s) after the restart, then connected"
else
  nl_fail recovery/next-polls "${late:-no} failed poll(s) after the restart before one succeeded"
fi
if nl_notifications "POLL_FAILED instance o" | grep -q "severity = OKAY"; then
  nl_pass recovery/okay "POLL_FAILED OKAY sent"
else
  nl_fail recovery/okay "no POLL_FAILED OKAY"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
