#!/usr/bin/env bash
# Never blind under a burst of consumer creations: three clients create and
# delete ephemeral consumers as fast as the server answers for 20 s (tens of
# thousands of CREATED and DELETED advisories), and a MAX_PENDING_THROTTLE
# fault starts halfway through. The read callback never waits on the
# advisory work (created consumers are queued, coalesced and read by the
# advisory thread alone), so the polls keep their interval and the fault is
# found within two polls of its start.
#
# Checks, each measured in polls of this run: the burst reached the plugin
# (advisories counted, created consumers queued); polls during the burst
# number at least 3/4 of its seconds (1 s interval); the fault is seen at
# most 2 polls after it started, before the burst ends; POLL_FAILED never
# fires. With the plugin before this check existed, no poll finished during
# the burst (0 in 20 s).
# Ports: NL_PORT_ADVISORY_BURST (default 14775).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin advisory_burst
PORT=$(nl_port NL_PORT_ADVISORY_BURST 14775)
BURST=20
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
inj stream-create CH --subjects 'ch.>' &&
  inj stream-create MPB --subjects 'mpb.>' &&
  inj consumer-create MPB stuck --ack-wait 30 --max-ack-pending 5 &&
  inj publish mpb.a --count 50 || {
  nl_fail setup "streams not created"
  nl_end
  exit
}
nl_start_collectd "<Instance \"ab\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 2
</Instance>" 1 || exit 1
polls() { nl_csv_rows ab count consumers "\$1 > $1 && \$1 <= $2"; }
# Three polls before the burst.
until [ "$(polls 0 9999999999)" -ge 3 ]; do sleep 0.5; done

t0=$(date +%s.%N)
for k in 1 2 3; do
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" churn CH --duration "$BURST" \
    >"$NL_TMP/churn$k.out" 2>&1 &
  NL_PIDS+=($!)
done
sleep $((BURST / 2))
tf=$(date +%s.%N)
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume MPB stuck \
  --duration 20 --no-ack >"$NL_TMP/stuck.out" 2>&1 &
NL_PIDS+=($!)
wait "${NL_PIDS[@]: -4:3}" 2>/dev/null
t1=$(date +%s.%N)
created=$(cat "$NL_TMP"/churn*.out | awk -F= '/created=/ { n += $2 } END { print n + 0 }')

adv=$(nl_csv_last ab derive advisories)
pending_max=$(awk -F, 'NR > 1 && $2 > m { m = $2 } END { print m + 0 }' \
  "$(nl_csv_file ab gauge created_pending)")
if [ "${adv%.*}" -ge 1000 ] 2>/dev/null && [ "${pending_max%.*}" -ge 1 ]; then
  nl_pass burst/reached-plugin "$created consumers created, $adv advisories, up to $pending_max queued"
else
  nl_fail burst/reached-plugin "$created created, ${adv:-no} advisories, queue ${pending_max}"
fi

n=$(polls "$t0" "$t1")
span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')
if [ "$n" -ge $((span * 3 / 4)) ]; then
  nl_pass burst/polls-keep-interval "$n polls in the $span s of the burst"
else
  nl_fail burst/polls-keep-interval "$n polls in the $span s of the burst"
fi

# The fault: its first poll with the class value 1, in polls after tf.
csv=$(nl_csv_file ab-MPB nats_lens_max_pending_throttle stuck)
for ((i = 0; i < 100; i++)); do
  det=$(awk -F, -v s="$tf" 'NR > 1 && $1 >= s && $2 + 0 == 1 { print $1; exit }' "$csv")
  [ -n "$det" ] && break
  sleep 0.2
done
if [ -n "$det" ]; then
  # Found by the first or second poll after the fault started, and while
  # the burst still ran: a read blocked by the burst polls nothing until it
  # ends, and so counts no poll in between.
  k=$(polls "$tf" "$det")
  during=$(awk -v d="$det" -v e="$t1" 'BEGIN { print (d < e) ? 1 : 0 }')
  if [ "$k" -le 2 ] && [ "$during" = 1 ]; then
    nl_pass burst/fault-found "MAX_PENDING_THROTTLE on poll $k after the fault started, during the burst"
  else
    nl_fail burst/fault-found "found $k polls after the fault started, during the burst: $during"
  fi
else
  nl_fail burst/fault-found "MAX_PENDING_THROTTLE of MPB/stuck never seen"
fi
if nl_notifications "POLL_FAILED" | grep -q .; then
  nl_fail burst/no-poll-failed "$(nl_notifications POLL_FAILED | head -n 1)"
else
  nl_pass burst/no-poll-failed
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
