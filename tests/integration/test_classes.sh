#!/usr/bin/env bash
# The five delivery-violation classes on a real nats-server, seen by real
# collectd loading the built plugin, injected by real cnats consumers
# (tests/tools/nl-inject). All five run at once on separate streams, next to
# a healthy consumer that must raise nothing over at least 60 s.
#
# For each class: a notification of the right class and severity names the
# right stream/consumer; the number of polls from the moment the signal is
# first visible in the API (traced every 0.25 s) to detection is within the
# bound stated in docs/detectors.md; after the fix an OKAY notification
# follows; no other class fires for that consumer.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin classes
PORT=$(nl_port NL_PORT_CLASSES 14231)
INTERVAL=1
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }
. "$NL_ROOT/tests/scenarios.sh"
NL_SCENARIO_OUT=$NL_TMP
nl_scenario_setup "$PORT" >/dev/null || exit 1

nl_start_collectd "<Instance \"it\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 2
</Instance>" "$INTERVAL" || exit 1
START=$(date +%s.%N)

# Trace each consumer's API view every 0.25 s, with its start time.
trace() {
  date +%s.%N >"$NL_TMP/trace-$1-$2.start"
  inj watch "$1" "$2" --interval 0.25 --count 480 >"$NL_TMP/trace-$1-$2" 2>&1 &
  NL_PIDS+=($!)
}
for sc in AW:proc GAP:slow MP:stuck NAK:poison LONG:task OK:good; do
  trace "${sc%%:*}" "${sc##*:}"
done

nl_scenario_start_HEALTHY "$PORT" 64
sleep 2
for cls in ACK_WAIT_VIOLATION SEQUENCE_GAP MAX_PENDING_THROTTLE NAK_STORM \
  MISSING_PROGRESS; do
  "nl_scenario_start_$cls" "$PORT"
done

# signal_time STREAM CONSUMER AWK_CONDITION: epoch seconds of the first
# trace line whose fields satisfy the condition (fields are parsed into
# dcds, ackp, pend, first, sseq).
signal_time() {
  local start
  start=$(cat "$NL_TMP/trace-$1-$2.start")
  awk -v start="$start" '
    {
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        v[kv[1]] = kv[2]
      }
      t = v["t"]; ackp = v["ack_pend"] + 0
      pend = v["pend"] + 0; first = v["first"] + 0
      sseq = v["sseq"]; sub(/\(.*/, "", sseq); sseq += 0
      cseq = v["cseq"]; sub(/\(.*/, "", cseq); cseq += 0
      dcds = cseq - sseq
      # rep: a second round of redeliveries more than ack_wait + one poll
      # (3 s) after the first round.
      if (dcds > pdcds) {
        if (fr == "") fr = t
        else if (t - fr > 3) rep = 1
      }
      pdcds = dcds
      if ('"$3"') { printf "%.3f\n", start + t; exit }
    }' "$NL_TMP/trace-$1-$2"
}

# expect_class CLASS SEVERITY STREAM CONSUMER SIGNAL_CONDITION MAX_POLLS
expect_class() {
  local cls=$1 sev=$2 stream=$3 consumer=$4 cond=$5 max=$6 line sig det polls
  local lc
  lc=$(echo "$cls" | tr 'A-Z' 'a-z')
  if ! line=$(nl_wait_notification 45 "severity = $sev" \
    "type_instance = $cls" "$stream/$consumer"); then
    nl_fail "$lc/detected" "no $sev $cls notification for $stream/$consumer"
    return 1
  fi
  sig=$(signal_time "$stream" "$consumer" "$cond")
  det=$(nl_csv_first_one "it-$stream" "nats_lens_$lc" "$consumer" 0)
  if [ -z "$sig" ] || [ -z "$det" ]; then
    nl_fail "$lc/detected" "signal ($sig) or detection ($det) time unknown"
    return 1
  fi
  polls=$(nl_csv_polls "it-$stream" "nats_lens_$lc" "$consumer" "$sig" "$det")
  if [ "$polls" -le "$max" ]; then
    nl_pass "$lc/detected" "$polls poll(s) after the signal, bound $max"
  else
    nl_fail "$lc/detected" "$polls polls after the signal, bound $max"
  fi
  echo "# $cls: ${line#*message = }"
}

expect_okay() {
  local cls=$1 stream=$2 consumer=$3 fixed_at=$4 lc line det polls
  lc=$(echo "$cls" | tr 'A-Z' 'a-z')
  if line=$(nl_wait_notification 45 "severity = OKAY" \
    "type_instance = $cls" "$stream/$consumer"); then
    det=$(awk -F, -v s="$fixed_at" 'NR > 1 && $1 >= s && $2 + 0 == 0 {
      print $1; exit }' "$(nl_csv_file "it-$stream" "nats_lens_$lc" "$consumer")")
    polls=$(nl_csv_polls "it-$stream" "nats_lens_$lc" "$consumer" "$fixed_at" \
      "${det:-0}")
    nl_pass "$lc/cleared" "OKAY $polls poll(s) after the fix"
  else
    nl_fail "$lc/cleared" "no OKAY after the fix"
  fi
}

expect_only() {
  local stream=$1 consumer=$2 cls=$3 others
  others=$(nl_notifications "$stream/$consumer" | grep -v "type_instance = $cls")
  if [ -z "$others" ]; then
    nl_pass "$(echo "$cls" | tr 'A-Z' 'a-z')/no-other-class"
  else
    nl_fail "$(echo "$cls" | tr 'A-Z' 'a-z')/no-other-class" "$others"
  fi
}

# Detection. Bounds (polls after the signal is first visible in the API):
#   SEQUENCE_GAP, MAX_PENDING_THROTTLE: 1 (a level, seen on the next poll);
#   NAK_STORM: 3 (two intervals beyond expiry, plus the poll in progress);
#   ACK_WAIT_VIOLATION: 3 after expiry redeliveries repeat more than
#     ack_wait + one poll after the first round (a crashed worker's orphans
#     expire within one ack_wait, so one round alone proves nothing); 1
#     poll in every run measured on 2026-11-30;
#   MISSING_PROGRESS: 2 x ack_wait + 2 (the floor stands 2 x ack_wait, or
#     the second round of redeliveries of overlapping long tasks).
expect_class SEQUENCE_GAP FAILURE GAP slow 'first > sseq + 1' 1
expect_class MAX_PENDING_THROTTLE WARNING MP stuck 'ackp >= 5 && pend > 0' 1
expect_class NAK_STORM WARNING NAK poison 'dcds > 0' 3
expect_class ACK_WAIT_VIOLATION FAILURE AW proc 'rep' 3
expect_class MISSING_PROGRESS FAILURE LONG task 'dcds > 0' 6

# Fixes.
fix() {
  local cls=$1 stream=$2 consumer=$3 fixed_at
  fixed_at=$(date +%s.%N)
  "nl_scenario_fix_$cls" "$PORT"
  expect_okay "$cls" "$stream" "$consumer" "$fixed_at"
}
fix SEQUENCE_GAP GAP slow
fix MAX_PENDING_THROTTLE MP stuck
fix NAK_STORM NAK poison
fix ACK_WAIT_VIOLATION AW proc
fix MISSING_PROGRESS LONG task

expect_only GAP slow SEQUENCE_GAP
expect_only MP stuck MAX_PENDING_THROTTLE
expect_only NAK poison NAK_STORM
expect_only AW proc ACK_WAIT_VIOLATION
expect_only LONG task MISSING_PROGRESS

# Healthy: at least 60 s of polling with no notification at all.
while awk -v s="$START" -v n="$(date +%s.%N)" 'BEGIN { exit !(n - s < 66) }'; do
  sleep 1
done
wait "$NL_SCENARIO_PID_HEALTHY" 2>/dev/null
healthy=$(nl_notifications "OK/good" | wc -l)
polls=$(wc -l <"$(nl_csv_file it-OK nats_lens_num_pending good)")
if [ "$healthy" -eq 0 ] && [ "$polls" -ge 60 ]; then
  nl_pass healthy/no-notification "0 notifications over $((polls - 1)) polls"
else
  nl_fail healthy/no-notification "$healthy notifications over $polls polls"
fi
nl_check healthy/consumed grep -q '"acked":[1-9]' "$NL_TMP/HEALTHY.out"
wpi=$(nl_notifications "WPI/task")
if [ -z "$wpi" ]; then
  nl_pass long-tasks-with-progress/no-notification
else
  nl_fail long-tasks-with-progress/no-notification "$wpi"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
