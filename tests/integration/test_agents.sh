#!/usr/bin/env bash
# One collectd agent per NATS server (Scope "server"), aggregated by a
# central collectd through collectd's network plugin (issue 23). A 3-node
# cluster (tests/lib.sh nl_cluster_start) with a system account and an
# application account A; every stream and consumer has 3 replicas. Three
# agents (hosts agent-n1..agent-n3), each with the system-account user on
# its own server only, send their values and notifications to a central
# collectd (host central) that has the network plugin's Listen and the
# nats_lens <Coverage "prod"> block. Every collectd has a log, CSV files and
# the examples/notify-handler.sh exec handler (the notification meta) of
# its own.
#
# 1. The five classes of tests/scenarios.sh, and a held throttle on HOLD:
#    each finding is raised by exactly one agent, the one whose server is
#    the consumer's leader (meta server names it), the others report the
#    consumer judged=0; the central log holds each firing notification of
#    the agents exactly once; the healthy OK/good stays silent everywhere
#    (its deliveries counted).
# 2. HOLD/stuck's leader is stepped down while its throttle stands: the
#    agent of the new leader raises it (a takeover onset, or no new onset)
#    within two intervals of the server naming the leader; the old agent
#    sends no OKAY, only one "handed over" WARNING; the central has one
#    unmarked onset, and its agents-dedup-handler.sh passes one on.
#    MOVED/late is stepped down, then a SEQUENCE_GAP is injected on it: the
#    new leader's agent finds it.
# 3. The collectd of an agent is killed: the central reports each consumer
#    it judged unobservable (value and CONSUMER_UNOBSERVABLE notification),
#    the consumers the other agents judge stay observable; once the agent
#    runs again, an OKAY clears it.
set -u
. "$(dirname "$0")/../lib.sh"
. "$NL_ROOT/tests/scenarios.sh"
nl_begin agents
BASE=$(nl_port NL_PORT_AGENTS 15100)
NET=$(nl_port NL_PORT_AGENTS_NET 15110)
INTERVAL=1
NL_CLUSTER_EXTRA='accounts {
  SYS: { users: [{user: mon, password: mon}] }
  A: { jetstream: enabled, users: [{user: a, password: a}] }
}
system_account: SYS'
nl_cluster_start "$BASE" || exit 1
url() { echo "nats://$1:$1@127.0.0.1:$(nl_cluster_client "${2:-1}")"; }
inj() { # USER NODE ARGS...
  local u=$1 n=$2
  shift 2
  "$NL_INJECT" --server "$(url "$u" "$n")" "$@"
}

# on WHO COMMAND...: runs a lib.sh reader (nl_notifications, nl_csv_*) on
# the files of one collectd: n1, n2, n3 (the agent of that server) or
# central. Values the central received from agent nX: on central-nX.
on() {
  local who=$1
  shift
  case $who in
  central) NL_COLLECTD_DIR=$NL_TMP/central NL_HOSTNAME=central "$@" ;;
  central-*)
    NL_COLLECTD_DIR=$NL_TMP/central NL_HOSTNAME=agent-${who#central-} "$@"
    ;;
  *) NL_COLLECTD_DIR=$NL_TMP/agent-$who NL_HOSTNAME=agent-$who "$@" ;;
  esac
}
# is VALUE CONDITION: an awk comparison of a CSV value ("1.000000" == 1).
is() { [ -n "$1" ] && awk -v v="$1" "BEGIN { exit !(v + 0 $2) }"; }

# The meta leader needs a few seconds after the cluster starts.
nl_retry 30 inj a 1 stream-create HOLD --subjects 'hold.>' --replicas 3 \
  >/dev/null 2>"$NL_TMP/setup.err" || {
  nl_fail setup/stream "no meta leader"
  exit 1
}
NL_SCENARIO_OUT=$NL_TMP
inj a 1 consumer-create HOLD stuck --ack-wait 60 --max-ack-pending 5 \
  >/dev/null &&
  inj a 1 publish hold.a --count 50 >/dev/null &&
  inj a 1 stream-create MOVED --subjects 'moved.>' --max-msgs 100 \
    --replicas 3 >/dev/null &&
  inj a 1 consumer-create MOVED late --ack-wait 30 >/dev/null &&
  nl_scenario_setup "$(url a 1)" --replicas 3 >/dev/null || {
  nl_fail setup/objects "streams or consumers not created"
  exit 1
}
# stream/consumer pairs, and the class each is injected with below.
CASES="AW/proc:ACK_WAIT_VIOLATION:FAILURE GAP/slow:SEQUENCE_GAP:FAILURE
MP/stuck:MAX_PENDING_THROTTLE:WARNING NAK/poison:NAK_STORM:WARNING
LONG/task:MISSING_PROGRESS:FAILURE HOLD/stuck:MAX_PENDING_THROTTLE:WARNING"

# leader STREAM CONSUMER [NODE]: the consumer leader a node names.
leader() {
  inj a "${3:-1}" info "$1" "$2" 2>/dev/null | python3 -c '
import json, sys
print(json.load(sys.stdin)["cluster"]["leader"])' 2>/dev/null
}

# The exec plugin runs the handler as nobody: the test's directory is
# traversable and each collectd's notifications directory is nobody's.
chmod 711 "$NL_TMP"
mkdir -p "$NL_TMP/handler"
cp -p "$NL_ROOT/examples/notify-handler.sh" \
  "$NL_ROOT/examples/agents-dedup-handler.sh" "$NL_TMP/handler/"
chmod 755 "$NL_TMP/handler" "$NL_TMP/handler/notify-handler.sh" \
  "$NL_TMP/handler/agents-dedup-handler.sh"
# The central also runs examples/agents-dedup-handler.sh, which passes on
# one notification per finding into dedup.jsonl.
exec_config() { # WHO
  mkdir -p "$NL_TMP/$1/notifications"
  chown nobody "$NL_TMP/$1/notifications"
  local dedup=
  [ "$1" = central ] &&
    dedup="NotificationExec \"nobody\" \"$NL_TMP/handler/agents-dedup-handler.sh\" \"$NL_TMP/$1/notifications/dedup.jsonl\" \"$NL_TMP/$1/notifications/open\""
  cat <<EOF
LoadPlugin exec
<Plugin exec>
  NotificationExec "nobody" "$NL_TMP/handler/notify-handler.sh" "$NL_TMP/$1/notifications/n.jsonl"
  $dedup
</Plugin>
EOF
}
# meta WHO PLUGIN_INSTANCE TYPE_INSTANCE FIELD [SEVERITY]: the meta FIELD of
# each notification of one collectd's handler (onsets unless SEVERITY),
# one line each.
meta() {
  local d=agent-$1
  [ "$1" = central ] && d=central
  python3 - "$NL_TMP/$d/notifications/n.jsonl" "$2" "$3" "$4" "${5:-}" <<'PY'
import json, sys
path, pi, ti, field, sev = sys.argv[1:]
try:
    lines = [json.loads(l) for l in open(path) if l.strip()]
except OSError:
    lines = []
for n in lines:
    if n.get("plugin_instance") != pi or n.get("type_instance") != ti:
        continue
    if (sev and n["severity"] != sev) or (not sev and n["severity"] == "OKAY"):
        continue
    print(n.get("meta", {}).get(field, "-"))
PY
}

# The central first, so that it listens when the agents start sending.
NL_COLLECTD_DIR=$NL_TMP/central NL_HOSTNAME=central nl_start_collectd \
  "<Coverage \"prod\">
  Intervals 2
</Coverage>" "$INTERVAL" "LoadPlugin network
<Plugin network>
  Listen \"127.0.0.1\" \"$NET\"
</Plugin>
$(exec_config central)" "network exec" || {
  nl_fail setup/central "collectd did not start"
  exit 1
}
CENTRAL_PID=$NL_COLLECTD_PID
declare -A AGENT_PID=()
start_agent() { # N: the agent of server nN; sets AGENT_PID[nN]
  local n=$1
  NL_COLLECTD_DIR=$NL_TMP/agent-n$n NL_HOSTNAME=agent-n$n nl_start_collectd \
    "<Instance \"prod\">
  URL \"$(url mon "$n")\"
  SystemAccount true
  Scope \"server\"
  HealthEvents true
  Timeout 1
</Instance>" "$INTERVAL" "<LoadPlugin network>
  FlushInterval 1
</LoadPlugin>
<Plugin network>
  Server \"127.0.0.1\" \"$NET\"
</Plugin>
$(exec_config "agent-n$n")" "network exec" || return 1
  AGENT_PID[n$n]=$NL_COLLECTD_PID
}
for n in 1 2 3; do
  start_agent "$n" || {
    nl_fail setup/agent-n$n "collectd did not start"
    exit 1
  }
done

# The central hears the three agents (their instance values come through
# the network plugin), each of which reports its server's replicas.
heard() {
  local n
  for n in n1 n2 n3; do
    [ -n "$(on "central-$n" nl_csv_file prod-A-HOLD nats_lens_judged stuck)" ] ||
      return 1
  done
}
if nl_retry 30 heard; then
  nl_pass setup/forwarded "each agent's nats_lens_judged values reach the central"
else
  nl_fail setup/forwarded "central has $(ls "$NL_TMP/central/csv" 2>/dev/null | tr '\n' ' ')"
fi

# --- 1. Each finding on the agent of the consumer's leader, once centrally.
"$NL_INJECT" --server "$(url a 2)" consume HOLD stuck --duration 240 \
  --no-ack >"$NL_TMP/hold.out" 2>&1 &
NL_PIDS+=($!)
nl_scenario_start_HEALTHY "$(url a 3)" 60
for cls in ACK_WAIT_VIOLATION SEQUENCE_GAP MAX_PENDING_THROTTLE NAK_STORM \
  MISSING_PROGRESS; do
  "nl_scenario_start_$cls" "$(url a 1)"
done

for case in $CASES; do
  IFS=: read -r sc cls sev <<<"$case"
  stream=${sc%/*} consumer=${sc#*/}
  if ! on central nl_wait_notification 60 "plugin_instance = prod-A-$stream," \
    "type_instance = $cls," "severity = $sev" "$sc" >/dev/null; then
    nl_fail "one-agent/$stream" "no $sev $cls for $sc in the central's log; agents: $(
      for n in n1 n2 n3; do on "$n" nl_notifications "prod-A-$stream," | head -n 1; done)"
    continue
  fi
  ldr=$(leader "$stream" "$consumer")
  raised='' judged='' others=''
  for n in n1 n2 n3; do
    if on "$n" nl_notifications "plugin_instance = prod-A-$stream," |
      grep -F "type_instance = $cls," | grep -vq "severity = OKAY"; then
      raised="$raised $n"
    fi
    j=$(on "$n" nl_csv_last "prod-A-$stream" nats_lens_judged "$consumer")
    judged="$judged $n=${j%%.*}"
    if [ "$n" = "$ldr" ]; then
      is "$j" "== 1" || others="$others $n:judged=${j:-none}"
    else
      is "$j" "== 0" || others="$others $n:judged=${j:-none}"
    fi
  done
  servers=$(meta "$ldr" "prod-A-$stream" "$cls" server | sort -u | tr '\n' ' ')
  if [ "$raised" = " $ldr" ] && [ -z "$others" ] && [ "$servers" = "$ldr " ]; then
    nl_pass "one-agent/$stream" "$cls raised by agent-$ldr alone, the leader; judged$judged"
  else
    nl_fail "one-agent/$stream" "leader '$ldr', raised by:${raised:- none}, judged$judged, meta server '$servers'${others:+, wrong judged:$others}"
  fi
done

# Every firing notification of an agent is in the central's log exactly
# once (the network plugin forwards them; the log shows the agent's host).
forwarded_once() {
  python3 - "$NL_TMP" <<'PY'
import collections, sys
tmp = sys.argv[1]
def onsets(path):
    out = collections.Counter()
    for line in open(path, errors="replace"):
        i = line.find("Notification: ")
        if i >= 0 and "plugin = nats_lens" in line and \
                "severity = OKAY" not in line:
            out[line[i:].rstrip("\n")] += 1
    return out
agents = collections.Counter()
for n in ("n1", "n2", "n3"):
    agents += onsets("%s/agent-%s/collectd.log" % (tmp, n))
central = onsets("%s/central/collectd.log" % tmp)
bad = [(k, v, central[k]) for k, v in agents.items() if central[k] != v]
if bad or not agents:
    print("%d onset lines at the agents, %d differ; first: %s" % (
        sum(agents.values()), len(bad), bad[:1]))
    sys.exit(1)
print("%d onset lines" % sum(agents.values()))
PY
}
if nl_retry 10 forwarded_once >/dev/null; then
  nl_pass central/each-onset-once "$(forwarded_once)"
else
  nl_fail central/each-onset-once "$(forwarded_once)"
fi

# The healthy consumer: watched by its leader's agent (deliveries counted)
# and silent everywhere.
ldr=$(leader OK good)
delivered=$(on "$ldr" nl_csv_last prod-A-OK nats_lens_delivered good)
noise=$(for w in n1 n2 n3 central; do
  on "$w" nl_notifications "plugin_instance = prod-A-OK,"
done | head -n 2)
if is "$delivered" "> 100" && [ -z "$noise" ]; then
  nl_pass healthy-silent "delivered $delivered, judged by agent-$ldr"
else
  nl_fail healthy-silent "delivered ${delivered:-none} on agent-$ldr; $noise"
fi

# --- 2. A leader moves while the fault stands.
old=$(leader HOLD stuck)
case $old in n1 | n2 | n3) ;; *)
  nl_fail stepdown/leader "no leader named for HOLD/stuck: '$old'"
  nl_end
  exit
  ;;
esac
# stepdown STREAM CONSUMER OLD: asks the consumer leader to step down, then
# waits until the servers name another; prints the new leader and sets
# MOVED_AT (epoch seconds) to when it was first named.
stepdown() {
  local i new
  inj a 1 request "\$JS.API.CONSUMER.LEADER.STEPDOWN.$1.$2" '' \
    >"$NL_TMP/stepdown-$1.out" 2>&1
  for ((i = 0; i < 100; i++)); do
    new=$(leader "$1" "$2")
    if [ -n "$new" ] && [ "$new" != "$3" ]; then
      MOVED_AT=$(date +%s.%N)
      echo "$new"
      return 0
    fi
    sleep 0.2
  done
  return 1
}
MOVED_AT=
stepdown HOLD stuck "$old" >"$NL_TMP/new-leader"
new=$(cat "$NL_TMP/new-leader")
if [ -n "$new" ]; then
  nl_pass stepdown/moved "HOLD/stuck: $old -> $new"
else
  nl_fail stepdown/moved "$(head -c 300 "$NL_TMP/stepdown-HOLD.out")"
  nl_end
  exit
fi
# The new leader's agent judges it and raises the throttle: polls of that
# agent from the move to the first row that says so.
taken() {
  is "$(on "$new" nl_csv_first_one prod-A-HOLD nats_lens_max_pending_throttle \
    stuck "$MOVED_AT")" "> 0"
}
if nl_retry 15 taken; then
  det=$(on "$new" nl_csv_first_one prod-A-HOLD nats_lens_max_pending_throttle \
    stuck "$MOVED_AT")
  polls=$(on "$new" nl_csv_polls prod duration poll "$MOVED_AT" "$det")
  jnew=$(on "$new" nl_csv_last prod-A-HOLD nats_lens_judged stuck)
  if [ "$polls" -le 2 ] && is "$jnew" "== 1"; then
    nl_pass stepdown/taken-over "agent-$new raises it $polls poll(s) after the move"
  else
    nl_fail stepdown/taken-over "agent-$new: $polls polls after the move, judged ${jnew:-none}"
  fi
else
  nl_fail stepdown/taken-over "agent-$new never raised MAX_PENDING_THROTTLE for HOLD/stuck after the move (judged $(on "$new" nl_csv_last prod-A-HOLD nats_lens_judged stuck))"
fi
# Five more polls of both agents after the move, the fault standing.
five_polls() {
  [ "$(on "$new" nl_csv_rows prod duration poll "\$1 > $MOVED_AT + 2")" -ge 5 ] &&
    [ "$(on "$old" nl_csv_rows prod duration poll "\$1 > $MOVED_AT + 2")" -ge 5 ]
}
nl_check stepdown/both-polled nl_retry 20 five_polls
# The new agent's onsets after the move are marked takeover (or there are
# none: it heard the old agent's event); the old agent sent nothing more.
new_onsets=$(on "$new" nl_notifications "plugin_instance = prod-A-HOLD," |
  grep -F "type_instance = MAX_PENDING_THROTTLE," | grep -v "severity = OKAY")
new_meta=$(meta "$new" prod-A-HOLD MAX_PENDING_THROTTLE takeover | sort -u |
  tr '\n' ' ')
if [ -z "$new_onsets" ]; then
  nl_pass stepdown/takeover-marked "no new onset from agent-$new"
elif ! grep -qv "(takeover)" <<<"$new_onsets" && [ "$new_meta" = "true " ]; then
  nl_pass stepdown/takeover-marked "$(wc -l <<<"$new_onsets") onset(s) marked (takeover)"
else
  nl_fail stepdown/takeover-marked "meta takeover '$new_meta'; $new_onsets"
fi
# The old agent still polls (both-polled) and reports the consumer as a
# replica it does not judge.
old_all=$(on "$old" nl_notifications "plugin_instance = prod-A-HOLD,")
jold=$(on "$old" nl_csv_last prod-A-HOLD nats_lens_judged stuck)
if ! grep -q "severity = OKAY" <<<"$old_all" && is "$jold" "== 0"; then
  nl_pass stepdown/old-agent-no-okay "agent-$old judges it no more (judged 0)"
else
  nl_fail stepdown/old-agent-no-okay "agent-$old judged ${jold:-none}; $old_all"
fi
# Nor anything but the handover: its onset from before the move, then one
# WARNING that says the finding is handed over and not fixed.
handover=$(tail -n +2 <<<"$old_all")
if [ "$(grep -c . <<<"$old_all")" -eq 2 ] &&
  grep -F "severity = WARNING" <<<"$handover" |
  grep -qF "handed over: another server leads it now and its agent judges it (not a fix)"; then
  nl_pass stepdown/old-agent-hands-over "$(sed 's/.*message = //' <<<"$handover")"
else
  nl_fail stepdown/old-agent-hands-over "$(grep -c . <<<"$old_all") notifications from agent-$old: $(tail -n +2 <<<"$old_all" | sed 's/.*Notification: //')"
fi
# Both agents log (INFO) the consumers their server leads now.
moved_log() { # AGENT
  grep -F '[info] nats_lens plugin: Instance "prod": Scope "server"' \
    "$NL_TMP/agent-$1/collectd.log" | grep -F '(was '
}
if moved_log "$new" >/dev/null && moved_log "$old" >/dev/null; then
  nl_pass stepdown/logged "$(moved_log "$new" | head -n 1 | sed 's/.*Scope "server": //')"
else
  nl_fail stepdown/logged "agent-$new: '$(moved_log "$new" | head -n 1)', agent-$old: '$(moved_log "$old" | head -n 1)'"
fi
central_hold=$(on central nl_notifications "plugin_instance = prod-A-HOLD," |
  grep -F "type_instance = MAX_PENDING_THROTTLE,")
unmarked=$(grep -v "severity = OKAY" <<<"$central_hold" | grep -v "handed over: " |
  grep -vc "(takeover)")
okays=$(grep -c "severity = OKAY" <<<"$central_hold")
# That the central heard the new agent judge it after the move.
if on "central-$new" nl_csv_seen_since prod-A-HOLD nats_lens_judged stuck \
  "$MOVED_AT" "== 1" && [ "$unmarked" -eq 1 ] && [ "$okays" -eq 0 ]; then
  nl_pass stepdown/central-one-onset
else
  nl_fail stepdown/central-one-onset "$unmarked unmarked onset(s), $okays OKAY(s); judged from agent-$new: $(on "central-$new" nl_csv_last prod-A-HOLD nats_lens_judged stuck); $(grep -v "(takeover)" <<<"$central_hold" | sed 's/.*Notification: //')"
fi
# The central's agents-dedup-handler.sh passed the throttle on once: the
# onset before the move, neither the handover nor the takeover.
dedup_hold() {
  python3 - "$NL_TMP/central/notifications/dedup.jsonl" <<'PY'
import json, sys
try:
    lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except OSError:
    lines = []
print(sum(1 for n in lines if n.get("plugin_instance") == "prod-A-HOLD"
          and n.get("type_instance") == "MAX_PENDING_THROTTLE"))
PY
}
nl_check stepdown/dedup-one-alert is "$(dedup_hold)" "== 1"
nl_check stepdown/still-raised is "$(on "$new" nl_csv_last prod-A-HOLD \
  nats_lens_max_pending_throttle stuck)" "== 1"

# A fault injected after a move: MOVED/late gets a new leader, its agent
# judges it, then 300 messages go to a stream that keeps 100.
old2=$(leader MOVED late)
stepdown MOVED late "$old2" >"$NL_TMP/new-leader"
new2=$(cat "$NL_TMP/new-leader")
late_judged() {
  on "$new2" nl_csv_seen_since prod-A-MOVED nats_lens_judged late \
    "$MOVED_AT" "== 1"
}
if [ -n "$new2" ] && nl_retry 15 late_judged; then
  inj a 1 publish moved.a --count 300 >/dev/null
  if on central nl_wait_notification 30 "plugin_instance = prod-A-MOVED," \
    "type_instance = SEQUENCE_GAP," "MOVED/late" >/dev/null; then
    raised=
    for n in n1 n2 n3; do
      on "$n" nl_notifications "plugin_instance = prod-A-MOVED," |
        grep -q "type_instance = SEQUENCE_GAP," && raised="$raised $n"
    done
    srv=$(meta "$new2" prod-A-MOVED SEQUENCE_GAP server | sort -u | tr '\n' ' ')
    if [ "$raised" = " $new2" ] && [ "$srv" = "$new2 " ]; then
      nl_pass stepdown/fault-after-move "MOVED/late ($old2 -> $new2): SEQUENCE_GAP by agent-$new2"
    else
      nl_fail stepdown/fault-after-move "leader $new2, raised by:$raised, meta server '$srv'"
    fi
  else
    nl_fail stepdown/fault-after-move "no SEQUENCE_GAP for MOVED/late at the central"
  fi
else
  nl_fail stepdown/fault-after-move "MOVED/late: '$old2' -> '$new2', judged there: $(on "${new2:-n1}" nl_csv_last prod-A-MOVED nats_lens_judged late)"
fi

# --- 3. An agent stops: the consumers it judged become unobservable.
# The agent that judges HOLD/stuck now, and every consumer it judges.
victim=$new
judged_by() { # AGENT: "STREAM/CONSUMER" of each consumer it judges now
  local f s c
  for f in "$NL_TMP/agent-$1/csv/agent-$1"/nats_lens-prod-A-*/nats_lens_judged-*; do
    [ -f "$f" ] || continue
    is "$(tail -n 1 "$f" | cut -d, -f2)" "== 1" || continue
    s=${f%/*}
    s=${s##*/nats_lens-prod-A-}
    c=${f##*/nats_lens_judged-}
    c=${c%-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]}
    echo "$s/$c"
  done | sort -u
}
victims=$(judged_by "$victim")
# Before: the central counts the three agents.
nl_check central/agents-counted is "$(on central nl_csv_last prod count agents)" "== 3"
keep=$(for n in n1 n2 n3; do [ "$n" = "$victim" ] || judged_by "$n"; done)
killed_at=$(date +%s.%N)
kill "${AGENT_PID[$victim]}"
for ((i = 0; i < 50; i++)); do
  kill -0 "${AGENT_PID[$victim]}" 2>/dev/null || break
  sleep 0.2
done
if kill -0 "${AGENT_PID[$victim]}" 2>/dev/null; then
  nl_fail unobservable/agent-stopped "agent-$victim's collectd still runs"
else
  nl_pass unobservable/agent-stopped "agent-$victim, which judged $(tr '\n' ' ' <<<"$victims")"
fi
reported=0
for sc in $victims; do
  stream=${sc%/*} consumer=${sc#*/}
  if line=$(on central nl_wait_notification 20 "severity = FAILURE" \
    "plugin_instance = prod-A-$stream," "type_instance = CONSUMER_UNOBSERVABLE," \
    "/$consumer" "last judged on host agent-$victim"); then
    v=$(on central nl_csv_last "prod-A-$stream" nats_lens_consumer_unobservable \
      "$consumer")
    # Still a replica elsewhere, the leader unchanged: nobody judges it.
    l=$(leader "$stream" "$consumer")
    hl=$(meta central "prod-A-$stream" CONSUMER_UNOBSERVABLE host_last | tail -n 1)
    reported=$((reported + 1))
    if is "$v" "== 1" && [ "$l" = "$victim" ] && [ "$hl" = "agent-$victim" ]; then
      nl_pass "unobservable/$stream" "${line#*message = }"
    else
      nl_fail "unobservable/$stream" "value ${v:-none}, leader $l, host_last '$hl'"
    fi
  else
    nl_fail "unobservable/$stream" "no CONSUMER_UNOBSERVABLE for $sc at the central; value $(on central nl_csv_last "prod-A-$stream" nats_lens_consumer_unobservable "$consumer")"
  fi
done
# The consumers the running agents judge are not reported, and they were
# judged meanwhile (the central heard them), while the central's coverage
# did report the stopped agent's.
wrong=
for sc in $keep; do
  stream=${sc%/*} consumer=${sc#*/}
  if on central nl_notifications "plugin_instance = prod-A-$stream," |
    grep -F "type_instance = CONSUMER_UNOBSERVABLE," | grep -qF "/$consumer"; then
    wrong="$wrong $sc"
  fi
  l=$(leader "$stream" "$consumer")
  on "central-$l" nl_csv_seen_since "prod-A-$stream" nats_lens_judged \
    "$consumer" "$killed_at" "== 1" || wrong="$wrong $sc(not-heard-from-$l)"
done
[ "$reported" -gt 0 ] || wrong="$wrong (no consumer reported unobservable at all)"
if [ -n "$keep" ] && [ -z "$wrong" ]; then
  nl_pass unobservable/others-observable "$(tr '\n' ' ' <<<"$keep")"
else
  nl_fail unobservable/others-observable "judged elsewhere: '$(tr '\n' ' ' <<<"$keep")'; wrong:$wrong"
fi
agents=$(on central nl_csv_last prod count agents)
nl_check unobservable/agents-counted is "$agents" "== 2"
# The notification as docs/agents.md has it: the message names the plugin
# instance without "prod-" (account and stream), the consumer and the last
# host; the meta has the instance, class, state, consumer and last host.
first=$(head -n 1 <<<"$victims")
stream=${first%/*} consumer=${first#*/}
msg=$(on central nl_notifications "plugin_instance = prod-A-$stream," |
  grep -F "type_instance = CONSUMER_UNOBSERVABLE," | head -n 1 |
  sed 's/.*message = //')
want="CONSUMER_UNOBSERVABLE A-$first: no agent has judged it for 2 intervals; last judged on host agent-$victim"
got_meta=$(for f in instance class state consumer host_last; do
  echo "$f=$(meta central "prod-A-$stream" CONSUMER_UNOBSERVABLE "$f" FAILURE |
    head -n 1)"
done | tr '\n' ' ')
want_meta="instance=prod class=CONSUMER_UNOBSERVABLE state=firing consumer=$consumer host_last=agent-$victim "
if [ "$msg" = "$want" ] && [ "$got_meta" = "$want_meta" ]; then
  nl_pass unobservable/notification-format "$msg"
else
  nl_fail unobservable/notification-format "message '$msg' (want '$want'); meta $got_meta(want $want_meta)"
fi

# The agent starts again: the central clears it (OKAY, value 0). Its log
# and output so far are moved aside, so that its start is seen in new ones.
for f in log out; do
  mv "$NL_TMP/agent-$victim/collectd.$f" "$NL_TMP/agent-$victim/collectd-1.$f"
done
if start_agent "${victim#n}"; then
  if line=$(on central nl_wait_notification 20 "severity = OKAY" \
    "plugin_instance = prod-A-$stream," "type_instance = CONSUMER_UNOBSERVABLE," \
    "/$consumer" "cleared: judged on host agent-$victim"); then
    v=$(on central nl_csv_last "prod-A-$stream" nats_lens_consumer_unobservable \
      "$consumer")
    if is "$v" "== 0"; then
      nl_pass unobservable/cleared "${line#*message = }"
    else
      nl_fail unobservable/cleared "value ${v:-none} after: ${line#*message = }"
    fi
  else
    nl_fail unobservable/cleared "no OKAY for $first at the central after agent-$victim restarted"
  fi
else
  nl_fail unobservable/cleared "agent-$victim did not start again"
fi

nl_check central-alive kill -0 "$CENTRAL_PID"
for n in n1 n2 n3; do
  nl_check "agent-$n-alive" kill -0 "${AGENT_PID[$n]}"
done
nl_end
