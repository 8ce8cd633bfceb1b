#!/usr/bin/env bash
# Every fix command a finding of the five classes prints is a promise: this
# applies each printed command to the real server (tests/lib.sh
# nl_apply_fix: the settings it names, the others kept, as the nats CLI
# edits), reads the configuration back, and shows that the finding clears
# and stays clear for 10 more polls while the workload that caused it goes
# on unchanged. A command the server rewrites or ignores fails its
# fix-applied check (a --wait on a consumer with a backoff is one: the
# server uses the first backoff step as ack_wait, so the plugin prints a
# backoff).
#
# Scenarios (each on its own stream, all at once, 1 s polls):
#   FX_AW/proc    ack_wait 2 s, 4 workers taking 4 s each
#   FX_AWB/proc   the same with a backoff 2 s, 4 s (max_deliver 5)
#   FX_MP/w       max_ack_pending 5, 8 acking workers taking 2 s each
#   FX_NAK/poison every 5th message NAKed again and again, max_deliver
#                 unlimited (after the fix, MAX_DELIVER_EXHAUSTED is the
#                 right finding: the loop now ends in exhaustion)
#   FX_LONG/task  every 100th message takes 7 s without progress acks,
#                 ack_wait 2 s, 8 workers, 30 msg/s
#   FX_GAP/slow   max_msgs 100, 300 published, never read; after the fix
#                 the consumer reads once, and 150 more are published
# Ports: NL_PORT_FIX_COMMANDS (default 14770).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin fix_commands
PORT=$(nl_port NL_PORT_FIX_COMMANDS 14770)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
bg() {
  local name=$1
  shift
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" "$@" >"$NL_TMP/$name.out" 2>&1 &
  NL_PIDS+=($!)
}

inj stream-create FX_AW --subjects 'fx_aw.>' &&
  inj consumer-create FX_AW proc --ack-wait 2 &&
  inj stream-create FX_AWB --subjects 'fx_awb.>' &&
  inj consumer-create FX_AWB proc --backoff 2,4 --max-deliver 5 &&
  inj stream-create FX_MP --subjects 'fx_mp.>' &&
  inj consumer-create FX_MP w --ack-wait 30 --max-ack-pending 5 &&
  inj stream-create FX_NAK --subjects 'fx_nak.>' &&
  inj consumer-create FX_NAK poison --ack-wait 30 &&
  inj stream-create FX_LONG --subjects 'fx_long.>' &&
  inj consumer-create FX_LONG task --ack-wait 2 &&
  inj stream-create FX_GAP --subjects 'fx_gap.>' --max-msgs 100 &&
  inj consumer-create FX_GAP slow --ack-wait 30 || {
  nl_fail setup "streams and consumers not created"
  nl_end
  exit
}

nl_start_collectd "<Instance \"fx\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 2
</Instance>" 1 || exit 1
sleep 2

inj publish fx_aw.a --count 200
bg aw consume FX_AW proc --duration 150 --workers 4 --process-ms 4000
inj publish fx_awb.a --count 200
bg awb consume FX_AWB proc --duration 150 --workers 4 --process-ms 4000
inj publish fx_mp.a --count 400
bg mp consume FX_MP w --duration 150 --workers 8 --process-ms 2000
inj publish fx_nak.a --count 20
bg nak consume FX_NAK poison --duration 150 --process-ms 50 --nak-seq-mod 5
bg long_pub publish fx_long.a --count 4500 --rate 30
bg long consume FX_LONG task --duration 150 --workers 8 --process-ms 50 \
  --slow-every 100 --slow-ms 7000
inj publish fx_gap.a --count 300

# wait_onset CLASS WHO: the first FAILURE or WARNING line of CLASS about
# WHO ("stream/consumer:"), waiting up to 120 s for it.
wait_onset() {
  local i line
  for ((i = 0; i < 600; i++)); do
    line=$(nl_notifications "$2" | grep -F "type_instance = $1," |
      grep -E "severity = (FAILURE|WARNING)" | head -n 1)
    [ -n "$line" ] && echo "$line" && return 0
    sleep 0.2
  done
  return 1
}

# check_fix CLASS STREAM CONSUMER [ALLOWED_CLASS] [AFTER_FIX_COMMAND...]:
# waits for the finding, applies its printed fix, runs the command given
# after it (if any), and checks the read-back, the clearing, and that it
# stays clear for 10 polls with nothing else raised but ALLOWED_CLASS.
check_fix() {
  local cls=$1 stream=$2 consumer=$3 allowed=${4:--} lc type line fix readback
  shift 4
  type=nats_lens_$(echo "$cls" | tr 'A-Z' 'a-z')
  lc=$(echo "$cls/$stream" | tr 'A-Z' 'a-z')
  if ! line=$(wait_onset "$cls" "$stream/$consumer:"); then
    nl_fail "$lc/detected" "no $cls for $stream/$consumer"
    return
  fi
  fix=$(echo "$line" | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
  nl_pass "$lc/detected" "$fix"
  if readback=$(nl_apply_fix "$PORT" "$fix" 2>&1); then
    nl_pass "$lc/fix-applied" "read back: $(echo $readback)"
  else
    nl_fail "$lc/fix-applied" "'$fix' read back: $(echo $readback)"
    return
  fi
  [ $# -gt 0 ] && "$@"
  if ! nl_wait_notification 60 "severity = OKAY" "type_instance = $cls," \
    "$stream/$consumer " >/dev/null; then
    nl_fail "$lc/cleared" "no OKAY after '$fix'"
    return
  fi
  nl_pass "$lc/cleared"
  # Ten more polls with the workload unchanged: the condition is gone.
  local csv rows
  csv=$(nl_csv_file "fx-$stream" "$type" "$consumer")
  rows=$(wc -l <"$csv")
  while [ "$(wc -l <"$csv")" -lt $((rows + 10)) ]; do sleep 0.5; done
  local raised others
  raised=$(nl_notifications "$stream/$consumer:" | grep -F "type_instance = $cls," |
    grep -cE "severity = (FAILURE|WARNING)")
  others=$(nl_notifications "$stream/$consumer" | grep -vF "type_instance = $cls," |
    grep -vF "type_instance = $allowed," | grep -E "severity = (FAILURE|WARNING)")
  if [ "$raised" = 1 ] && [ -z "$others" ]; then
    nl_pass "$lc/stays-clear" "10 polls after the OKAY, workload unchanged"
  else
    nl_fail "$lc/stays-clear" "$raised onsets; others: $(echo "$others" | head -n 1)"
  fi
}

after_gap() {
  inj consume FX_GAP slow --duration 3 --workers 2
  inj publish fx_gap.a --count 150
}
check_fix SEQUENCE_GAP FX_GAP slow - after_gap
check_fix MAX_PENDING_THROTTLE FX_MP w -
check_fix NAK_STORM FX_NAK poison MAX_DELIVER_EXHAUSTED
check_fix ACK_WAIT_VIOLATION FX_AW proc -
check_fix ACK_WAIT_VIOLATION FX_AWB proc -
check_fix MISSING_PROGRESS FX_LONG task -
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
