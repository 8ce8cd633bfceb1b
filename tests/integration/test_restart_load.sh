#!/usr/bin/env bash
# A service restart of the JetStream server (SIGTERM, file storage) while
# consumers are busy, polled by real collectd loading the built plugin:
#   stale     the server comes back with the consumers' ack floors restored
#             from older state (nats-server 2.9.10 reports ack_floor 0 or 1
#             after thousands of acks; 2.11 and later restore them, and
#             there this is a plain restart under load), and the floor
#             stays there for as long as some message is pending, which
#             under steady load is always: a work queue (4 workers) and a limits stream whose
#             workers NAK each message once with a delay. The consumers'
#             reported creation time moves by a fraction of a millisecond
#             (they are not new consumers). The messages the stopped
#             workers held expire and are redelivered once. None of it is a
#             stuck task or a retention risk: no finding for either
#             consumer while the plugin polls them for 5 x ack_wait after
#             those redeliveries.
#   held      a finding true before the restart and after it
#             (ACK_WAIT_VIOLATION: every message takes 2 x ack_wait) stays
#             raised through it, without a clear and a new onset, although
#             the redelivery rounds before the gap no longer count;
#   detection a consumer idle at the restart (its floor is true) gets long
#             tasks without in-progress acks afterwards: MISSING_PROGRESS.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin restart_load
PORT=$(nl_port NL_PORT_RESTART_LOAD 14780)
ACK_WAIT=5
js_args=(-a 127.0.0.1 -p "$PORT" -js -sd "$NL_TMP/js")
nl_start_server js "$PORT" "${js_args[@]}" || exit 1
JS_PID=$NL_SERVER_PID
inj() { nl_inject "$PORT" "$@"; }

inj stream-create W --subjects 'w.>' --retention workqueue --storage file \
  >/dev/null &&
  inj consumer-create W c --ack-wait "$ACK_WAIT" >/dev/null &&
  inj stream-create L --subjects 'l.>' --max-msgs 3000 --storage file \
    >/dev/null &&
  inj consumer-create L c --ack-wait "$ACK_WAIT" >/dev/null &&
  inj stream-create A --subjects 'a.>' --storage file >/dev/null &&
  inj consumer-create A proc --ack-wait 2 >/dev/null &&
  inj stream-create P --subjects 'p.>' --storage file >/dev/null &&
  inj consumer-create P task --ack-wait 2 >/dev/null || {
  nl_fail setup/streams "cannot create the streams and consumers"
  exit 1
}

# load SECONDS: publishers and workers on W and L for SECONDS (they stop
# when the server does: nl-inject does not reconnect).
load() {
  local s=$1
  inj publish w.a --count $((s * 100)) --rate 100 --keep-going \
    >>"$NL_TMP/pub-w.out" 2>&1 &
  NL_PIDS+=($!)
  inj consume W c --duration "$s" --workers 4 --process-ms 15 \
    >>"$NL_TMP/work-w.out" 2>&1 &
  NL_PIDS+=($!)
  inj publish l.a --count $((s * 20)) --rate 20 --keep-going \
    >>"$NL_TMP/pub-l.out" 2>&1 &
  NL_PIDS+=($!)
  inj consume L c --duration "$s" --workers 2 --nak-first-delay-ms 1000 \
    >>"$NL_TMP/work-l.out" 2>&1 &
  NL_PIDS+=($!)
}

nl_start_collectd "<Instance \"rl\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 2
</Instance>" 1 || exit 1
load 120
inj publish a.a --count 200 >/dev/null
inj consume A proc --duration 120 --workers 4 --process-ms 4000 \
  >>"$NL_TMP/work-a.out" 2>&1 &
NL_PIDS+=($!)
if ! nl_wait_notification 40 "severity = FAILURE" \
  "type_instance = ACK_WAIT_VIOLATION" "A/proc" >/dev/null; then
  nl_fail setup/held "no ACK_WAIT_VIOLATION for A/proc before the restart"
fi
# Polled with work going on before the restart.
busy_since() { nl_csv_seen_since rl-W nats_lens_num_ack_pending c "$1" '>= 1'; }
if ! nl_retry 20 busy_since "$(date +%s)"; then
  nl_fail setup/polled "no poll saw W/c with messages pending"
  exit 1
fi
sleep 3

# field STREAM CONSUMER: "ack_floor.stream_seq stream.first_seq", from the
# server now.
field() {
  local c s
  c=$(inj info "$1" "$2" 2>/dev/null) || return 1
  s=$(inj request "\$JS.API.STREAM.INFO.$1" '' 2>/dev/null) || return 1
  python3 -c 'import json, sys
c, s = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(c["ack_floor"]["stream_seq"], s["state"]["first_seq"])' "$c" "$s"
}
read -r floor_w_before _ < <(field W c)
read -r floor_l_before _ < <(field L c)

# --- restart ---------------------------------------------------------------
kill -TERM "$JS_PID"
wait "$JS_PID" 2>/dev/null
nl_start_server js "$PORT" "${js_args[@]}" || exit 1
UP=$(date +%s)
load 90
inj consume A proc --duration 90 --workers 4 --process-ms 4000 \
  >>"$NL_TMP/work-a.out" 2>&1 &
NL_PIDS+=($!)

# The scenario: a consumer's floor went back (restored from older state).
# nats-server 2.9.10 does it to L/c each time (floor 0), to W/c sometimes.
read -r floor_w first_w < <(field W c)
read -r floor_l _ < <(field L c)
back=""
[ -n "${floor_w:-}" ] && [ "$floor_w" -lt "${floor_w_before:-0}" ] && back="$back W/c"
[ -n "${floor_l:-}" ] && [ "$floor_l" -lt "${floor_l_before:-0}" ] && back="$back L/c"
seen="W/c floor ${floor_w_before:-?} before, ${floor_w:-?} after (stream first ${first_w:-?}); L/c ${floor_l_before:-?} before, ${floor_l:-?} after"
# nats-server 2.11.10 and 2.12.0 restore the floors they had (2.12.0: W/c 1197
# before, 1222 after): there the case is a plain restart under load.
if [ -n "$back" ]; then
  nl_pass stale/floor-restored "$seen"
elif ! nl_server_older 2 11; then
  nl_pass stale/floor-kept "this server restores the floors: $seen"
else
  nl_fail stale/floor-restored "no floor went back: $seen"
fi
# The stopped workers' messages expire and are redelivered: seen by a poll.
redelivered_since() { nl_csv_seen_since rl-W nats_lens_redelivered c "$UP" '> 0'; }
if nl_retry 40 redelivered_since; then
  R_AT=$(awk -F, -v up="$UP" 'NR > 1 && $1 > up && $2 + 0 > 0 { print int($1); exit }' \
    "$(nl_csv_file rl-W nats_lens_redelivered c)")
  nl_pass stale/orphans-redelivered "W/c redeliveries seen $((R_AT - UP)) s after the restart"
else
  nl_fail stale/orphans-redelivered "no redelivery of W/c seen after the restart"
  R_AT=$UP
fi
# Polls go on, with deliveries, for 5 x ack_wait after them.
UNTIL=$((R_AT + 5 * ACK_WAIT))
polled_until() {
  nl_csv_seen_since rl-W nats_lens_delivered c "$UNTIL" '> 0' &&
    nl_csv_seen_since rl-L nats_lens_delivered c "$UNTIL" '> 0'
}
if nl_retry 60 polled_until; then
  rose=$(awk -F, -v a="$R_AT" -v b="$UNTIL" 'NR > 1 && $1 > a && $1 <= b {
    if (n++ && $2 + 0 > last) up++; last = $2 + 0 } END { print up + 0 }' \
    "$(nl_csv_file rl-W nats_lens_delivered c)")
  nl_pass stale/polled "W/c and L/c polled for $((5 * ACK_WAIT)) s after the redeliveries (W/c delivered rose in $rose polls)"
else
  nl_fail stale/polled "no poll of W/c and L/c $((5 * ACK_WAIT)) s after the redeliveries"
fi
read -r floor_w2 _ < <(field W c)
read -r floor_l _ < <(field L c)
echo "# floors now: W/c ${floor_w2:-?}, L/c ${floor_l:-?}"
false_findings=$(nl_notifications "W/c\|L/c")
if [ -z "$false_findings" ]; then
  nl_pass stale/no-finding "no finding for W/c or L/c"
else
  nl_fail stale/no-finding "$false_findings"
fi

held=$(nl_notifications "ACK_WAIT_VIOLATION A/proc" | grep -c .)
last=$(nl_csv_last rl-A nats_lens_ack_wait_violation proc)
if [ "$held" = 1 ] && [ "${last%%.*}" = 1 ]; then
  nl_pass held/through-restart "one onset, still raised after the restart"
else
  nl_fail held/through-restart "$held notification(s), gauge ${last:-none}: $(nl_notifications "A/proc" | tail -n +2 | head -c 300)"
fi

# --- detection after the restart -------------------------------------------
# P/task was idle at the restart: every 100th message takes 7 s with no
# in-progress ack while 8 workers ack the others.
inj publish p.a --count 1500 --rate 30 >/dev/null 2>&1 &
NL_PIDS+=($!)
inj consume P task --duration 50 --workers 8 --process-ms 50 \
  --slow-every 100 --slow-ms 7000 >"$NL_TMP/work-p.out" 2>&1 &
NL_PIDS+=($!)
if line=$(nl_wait_notification 45 "severity = FAILURE" \
  "type_instance = MISSING_PROGRESS" "P/task"); then
  nl_pass detection/missing-progress "${line#*message = }"
else
  nl_fail detection/missing-progress "no MISSING_PROGRESS for P/task after the restart"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
