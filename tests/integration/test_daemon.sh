#!/usr/bin/env bash
# collectd as a classic daemon: started without -f and without systemd, it
# reads its configuration and then forks into the background. Threads
# started while the configuration is read would not survive the fork, so
# the plugin starts its threads from collectd's init, after it. Checks, on
# the forked daemon: its poll and advisory threads exist (by name), the
# REST API answers, a MAX_PENDING_THROTTLE is found, advisories are
# received (a consumer created after the start), and it stops on SIGTERM.
# Ports: NL_PORT_DAEMON (default 14797) and NL_PORT_DAEMON_HTTP (19497).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin daemon
PORT=$(nl_port NL_PORT_DAEMON 14797)
HTTP=$(nl_port NL_PORT_DAEMON_HTTP 19497)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }
# MAX_PENDING_THROTTLE: a worker that never acks holds the 5 allowed.
nl_held_throttle "$PORT" || exit 1

NL_COLLECTD_DAEMON=yes nl_start_collectd "<Instance \"bg\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
</Instance>" 1 || exit 1
pid=$NL_COLLECTD_PID
nl_check forked [ "$pid" -gt 0 ] && kill -0 "$pid" 2>/dev/null

threads=$(cat /proc/"$pid"/task/*/comm 2>/dev/null | sort | tr '\n' ' ')
case $threads in
*nats_lens_poll*nats_lens_adv* | *nats_lens_adv*nats_lens_poll*)
  nl_pass threads "$threads" ;;
*) nl_fail threads "no nats_lens_poll and nats_lens_adv among: $threads" ;;
esac

healthz() {
  [ "$(curl -s -o "$NL_TMP/healthz.b" --max-time 3 -w '%{http_code}' \
    "http://127.0.0.1:$HTTP/healthz")" = 200 ]
}
if nl_retry 20 healthz; then
  nl_pass rest-api "$(head -c 120 "$NL_TMP/healthz.b")"
else
  nl_fail rest-api "/healthz did not answer 200 from the forked daemon"
fi

if nl_wait_notification 30 "type_instance = MAX_PENDING_THROTTLE" "MP/stuck" >/dev/null; then
  nl_pass finding "MAX_PENDING_THROTTLE on MP/stuck"
else
  nl_fail finding "no MAX_PENDING_THROTTLE for MP/stuck"
fi

inj consumer-create MP later >/dev/null
advisories() {
  local n
  n=$(nl_csv_last bg derive advisories)
  [ -n "$n" ] && awk -v n="$n" 'BEGIN { exit !(n >= 1) }'
}
if nl_retry 20 advisories; then
  nl_pass advisories "$(nl_csv_last bg derive advisories) received"
else
  nl_fail advisories "no advisory counted by the forked daemon"
fi

# A healthy start shows in the log: one line for the instance's first poll.
line=$(grep -F 'nats_lens plugin: Instance "bg": first poll done:' "$NL_TMP/collectd.log" | head -n 1)
if [ -n "$line" ]; then
  nl_pass first-poll-logged "${line#*] }"
else
  nl_fail first-poll-logged "no first poll line in collectd's log"
fi

kill -TERM "$pid"
stopped() { ! kill -0 "$pid" 2>/dev/null; }
nl_check stops nl_retry 20 stopped
nl_end
