#!/usr/bin/env bash
# DELIVERY_STALLED on one server, 1 s polls, StallMinSeconds 6
# (docs/detectors.md, DELIVERY_STALLED): a consumer that receives nothing
# while work waits, whatever the cause.
#   GN/c    messages published at 10 a second for 30 s; its worker reads
#           for 8 s, then is gone: found (a warning: no pull request waits)
#           once nothing was delivered for the limit its deliveries taught
#           (4 x about 1 s, at least 6 s); a worker started again clears it.
#   BR/c    the same publisher; its worker stops for 3 s and reads again:
#           silent, observed delivering.
#   ID/c    nothing published, nobody reading: silent, observed.
#   MP/c    at its max_ack_pending (5, a worker that never acks) with
#           messages waiting: MAX_PENDING_THROTTLE explains it, silent.
#   FC/c    a push consumer with flow control whose subscriber (a plain
#           subscription) never answers a flow-control request: the
#           server stops after about 2 MB (128 messages of 16 KB) with 172
#           pending; found critical, naming the flow control; a subscriber
#           that answers (at the next heartbeat) resumes delivery and
#           clears it.
# Port: NL_PORT_DELIVERY_STALLED (default 15470).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin delivery_stalled
PORT=$(nl_port NL_PORT_DELIVERY_STALLED 15470)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
for s in GN BR ID MP FC; do
  sub=$(echo "$s" | tr 'A-Z' 'a-z')
  inj stream-create "$s" --subjects "$sub.>" || exit 1
done
inj consumer-create GN c --ack-wait 30 && inj consumer-create BR c --ack-wait 30 &&
  inj consumer-create ID c --ack-wait 30 &&
  inj consumer-create MP c --ack-wait 60 --max-ack-pending 5 &&
  inj consumer-create FC c --ack-wait 30 --deliver-subject dfc \
    --flow-control --heartbeat 1 || {
  nl_fail setup/objects "consumers not created"
  exit 1
}
nl_start_collectd "<Instance \"ds\">
  URL \"nats://127.0.0.1:$PORT\"
  StallMinSeconds 6
  StallMaxSeconds 60
</Instance>" 1 || exit 1
polls() { nl_csv_rows ds duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 2

bg() { "$NL_INJECT" --server "nats://127.0.0.1:$PORT" "$@" >/dev/null 2>&1 & NL_PIDS+=($!); }
bg publish gn.x --count 300 --rate 10
bg publish br.x --count 300 --rate 10
bg publish mp.x --count 50 --rate 10
bg consume MP c --duration 40 --no-ack
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume FC c --mode push \
  --deliver-subject dfc --no-flow-control --duration 60 >/dev/null 2>&1 &
fc_mute=$!
NL_PIDS+=("$fc_mute")
bg publish fc.x --count 300 --size 16384 --rate 30
inj consume GN c --duration 8 &
w1=$!
inj consume BR c --duration 8
wait "$w1"
gone_at=$(date +%s)
sleep 3
inj consume BR c --duration 16 &
w2=$!
if line=$(nl_wait_notification 30 "severity = WARNING" \
  "type_instance = DELIVERY_STALLED," "GN/c:"); then
  nl_pass GN/c/detected "${line#*message = }"
  nl_latency GN/c "$gone_at" "$line"
else
  nl_fail GN/c/detected "no DELIVERY_STALLED for GN/c"
fi
wait "$w2"
nl_check_silent BR/c/silent BR/c: DELIVERY_STALLED
nl_check BR/c/delivered [ "$(nl_csv_int ds-BR nats_lens_delivered c)" -gt 100 ]
nl_check_silent ID/c/silent ID/c: DELIVERY_STALLED
nl_check ID/c/observed nl_consumer_seen ds-ID c 0 0
nl_check_silent MP/c/silent MP/c: DELIVERY_STALLED
throttled() { nl_wait_notification 5 "type_instance = MAX_PENDING_THROTTLE," "MP/c:" >/dev/null; }
nl_check MP/c/throttled throttled
# FC/c: stopped by its unanswered flow control, found critical.
if line=$(nl_wait_notification 60 "severity = FAILURE" \
  "type_instance = DELIVERY_STALLED," "FC/c:" "flow_control=1"); then
  nl_pass FC/c/detected "${line#*message = }"
else
  nl_fail FC/c/detected "no critical DELIVERY_STALLED naming flow control"
fi
fc_delivered=$(nl_csv_int ds-FC nats_lens_delivered c)
stopped_short() { [ "${fc_delivered:-0}" -gt 0 ] && [ "$fc_delivered" -lt 300 ]; }
nl_check FC/c/stopped_short stopped_short
kill "$fc_mute" 2>/dev/null
bg consume FC c --mode push --deliver-subject dfc --duration 20
# GN/c: a worker again, and it clears.
bg consume GN c --duration 10
if nl_wait_notification 60 "severity = OKAY" \
  "type_instance = DELIVERY_STALLED," "GN/c " >/dev/null; then
  nl_pass GN/c/cleared
else
  nl_fail GN/c/cleared "no OKAY once a worker reads again"
fi
if nl_wait_notification 60 "severity = OKAY" \
  "type_instance = DELIVERY_STALLED," "FC/c " >/dev/null; then
  nl_pass FC/c/cleared
else
  nl_fail FC/c/cleared "no OKAY once a subscriber answers flow control"
fi
nl_check FC/c/resumed nl_retry 20 \
  eval '[ "$(nl_csv_int ds-FC nats_lens_delivered c)" -ge 300 ]'
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
