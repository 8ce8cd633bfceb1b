#!/usr/bin/env bash
# SEQUENCE_GAP and message schedules (nats-server 2.12 and later:
# "allow_msg_schedules" and the Nats-Schedule header). A message published
# with "Nats-Schedule: @at TIME" and a Nats-Schedule-Target is kept on its
# schedule subject until TIME; then the server stores a copy on the target
# subject and purges the schedule subject. A consumer that had not read the
# schedule message sees it leave the stream: the design, not a loss. On one
# server, 1 s polls, the plugin polling before anything is published:
#   SM     no limits: 3 messages, a delayed message (6 s ahead, target
#          sm.target) on sm.sched.a, 3 more; it fires in the middle of the
#          stream. Its consumers: keep (unfiltered, reads and acks all as
#          it comes), lag (unfiltered, reads nothing), hold (unfiltered,
#          reads the 7 and acks nothing: it holds the schedule message when
#          it fires), tgt (filtered on sm.target, reads nothing) and sch
#          (filtered on sm.sched.>, reads nothing): silent.
#   SH     max_age 3600 s: the delayed message is the stream's first, 3
#          after it; the head passes it when it fires. keep and lag:
#          silent.
#   SR     a delayed message re-armed each time it fired, three times, as
#          a repeating schedule must be on 2.12 (it rejects "@every" and
#          cron patterns, which 2.14 brings); lag (unfiltered) and sch
#          (filtered on sr.sched.>), reading nothing: silent.
#   SL     allow_msg_schedules and max_msgs 10, 30 published, never read:
#          max_msgs removed 20 unread, SEQUENCE_GAP with the max_msgs fix,
#          which is applied and read back; the consumer catches up, 20
#          more are published, and it clears and stays clear.
#   SP     allow_msg_schedules, 50 published, never read, then purged:
#          SEQUENCE_GAP that names a purge or a delete and prints no fix
#          command.
# Each silent one is observed: the plugin read its pending counts after
# the schedules fired, and counts no lost message. Runs on the nats-server
# of the run when it is 2.12 or later, else on the 2.12.0 build of the
# version matrix (NL_SERVER_BUILDS, tests/nats_server.sh).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_at_least 2 12 2.12.0
. "$(dirname "$0")/../lib.sh"
nl_begin msg_schedules
nl_server_check 2 12 2.12.0 || exit 0
PORT=$(nl_port NL_PORT_MSG_SCHEDULES 15090)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
state() { # STREAM PYTHON-EXPR: a field of the stream's state
  nl_inject "$PORT" request "\$JS.API.STREAM.INFO.$1" '' 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin)['state']; print($2)"
}
# at SECONDS: a Nats-Schedule that fires SECONDS from now (whole seconds).
at() { echo "@at $(date -u -d "+$1 sec" +%Y-%m-%dT%H:%M:%SZ)"; }
for s in SM SH SR SP; do
  lc=${s,,}
  age=0
  [ "$s" = SH ] && age=3600
  inj stream-create "$s" --subjects "$lc.>" --allow-msg-schedules \
    --max-age "$age" || nl_fail setup/objects "stream $s"
done
inj stream-create SL --subjects 'sl.>' --allow-msg-schedules --max-msgs 10 ||
  nl_fail setup/objects "stream SL"
for c in "SM keep" "SM lag" "SM hold" "SM tgt --filter sm.target" \
  "SM sch --filter sm.sched.>" "SH keep" "SH lag" "SR lag" \
  "SR sch --filter sr.sched.>" "SL w" "SP w"; do
  # shellcheck disable=SC2086
  inj consumer-create $c --ack-wait 120 || nl_fail setup/consumers "$c"
done
# 2.12 schedules are delayed messages only: a repeating pattern is refused.
if nl_inject "$PORT" publish sr.sched.e --schedule "@every 1s" \
  --schedule-target sr.tick 2>&1 | grep -q "pattern is invalid"; then
  nl_pass setup/every-rejected "$(nats-server --version)"
elif [ "$(nl_server_version)" = "2 12" ]; then
  nl_fail setup/every-rejected "2.12 took an @every schedule"
fi
nl_start_collectd "<Instance \"sc\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
polls() { nl_csv_rows sc duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 2

inj consume SM keep --duration 30 2>"$NL_TMP/keep-sm.err" &
NL_PIDS+=($!)
inj consume SH keep --duration 30 2>"$NL_TMP/keep-sh.err" &
NL_PIDS+=($!)
inj publish sh.sched.a --schedule "$(at 6)" --schedule-target sh.target
inj publish sh.n --count 3
inj publish sm.n --count 3
inj publish sm.sched.a --schedule "$(at 6)" --schedule-target sm.target
inj publish sm.n --count 3
inj consume SM hold --duration 3 --no-ack --max-msgs 7
inj publish sl.n --count 30
inj publish sp.n --count 50
# SR: each delayed message waits for the one before to fire (the stream
# stores its copy on sr.tick).
for k in 1 2 3; do
  inj publish sr.sched.tick --schedule "$(at 2)" --schedule-target sr.tick
  sr_fired() { [ "$(state SR 'j["last_seq"]')" = $((2 * k)) ]; }
  nl_check "setup/sr-fired-$k" nl_retry 20 sr_fired
done
now=$(polls)
nl_retry 20 polled $((now + 2))
inj request '$JS.API.STREAM.PURGE.SP' ''

# The delayed messages fired: each stream holds its copy on the target
# subject and not the schedule message (SM: 7 stored, sequence 8 the copy;
# SH: the head moved past sequence 1).
fired() {
  [ "$(state SM 'j["last_seq"], j["messages"]')" = "8 7" ] &&
    [ "$(state SH 'j["first_seq"], j["last_seq"]')" = "2 5" ] &&
    [ "$(state SR 'j["messages"]')" = 3 ]
}
if nl_retry 30 fired; then
  nl_pass setup/fired "SM $(state SM 'j["first_seq"], j["last_seq"]'), SH $(state SH 'j["first_seq"], j["last_seq"]'), SR $(state SR 'j["first_seq"], j["last_seq"]')"
else
  nl_fail setup/fired "SM $(state SM 'j'), SH $(state SH 'j'), SR $(state SR 'j')"
fi
now=$(polls)
nl_retry 20 polled $((now + 4))

# quiet STREAM: no notification about the stream or any of its consumers.
quiet() {
  local line
  line=$(nl_notifications "plugin_instance = sc-$1," | head -n 1)
  if [ -z "$line" ]; then nl_pass "$1/quiet"; else nl_fail "$1/quiet" "$line"; fi
}
observed() { # STREAM CONSUMER PENDING ACK_PENDING
  nl_check "$1/$2/observed" nl_consumer_seen "sc-$1" "$2" "$3" "$4"
}
quiet SM
observed SM keep 0 0
observed SM lag 7 0
observed SM hold 1 6
observed SM tgt 1 0
observed SM sch 0 0
quiet SH
observed SH keep 0 0
observed SH lag 4 0
quiet SR
observed SR lag 3 0
observed SR sch 0 0

# SL: a limit loss on a schedule stream, with the limit's fix. Once the
# consumer caught up and 20 more are published (30 stored, under the new
# limit), the finding clears and stays clear.
nl_gap_limit_round sl "$PORT" SL/w sc sl.n
# SP: a purge on a schedule stream is a loss, with no limit's fix.
nl_gap_no_fix sp SP/w sc 50
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
