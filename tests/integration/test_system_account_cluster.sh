#!/usr/bin/env bash
# SystemAccount mode on a 3-node cluster (tests/lib.sh nl_cluster_start)
# with a system account and two application accounts that both hold a
# stream MP with a consumer stuck: in A with 3 replicas and a worker that
# never acks (MAX_PENDING_THROTTLE), in B with 3 replicas as well and no fault.
# One collectd Instance reads both accounts through JSZ, each consumer on
# its consumer leader's reply. Then the node that leads A's consumer is
# killed while the fault stands: the poll hears 2 of the 3 servers, the
# consumer gets a new leader, and the finding stays raised as one onset,
# with no OKAY (a lost leader is not a fix); B stays silent throughout.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin system_account_cluster
BASE=$(nl_port NL_PORT_SYSACC_CLUSTER 14700)
NL_CLUSTER_EXTRA='accounts {
  SYS: { users: [{user: mon, password: mon}] }
  A: { jetstream: enabled, users: [{user: a, password: a}] }
  B: { jetstream: enabled, users: [{user: b, password: b}] }
}
system_account: SYS'
nl_cluster_start "$BASE" || exit 1
url() { echo "nats://$1:$1@127.0.0.1:$(nl_cluster_client "${2:-1}")"; }
inj() { # USER NODE ARGS...
  local u=$1 n=$2
  shift 2
  "$NL_INJECT" --server "$(url "$u" "$n")" "$@"
}
# The meta leader needs a few seconds after the cluster starts.
nl_retry 30 inj a 1 stream-create MP --subjects 'mp.>' --replicas 3 \
  >/dev/null || {
  nl_fail setup/stream "no meta leader"
  exit 1
}
inj a 1 consumer-create MP stuck --ack-wait 60 --max-ack-pending 5 \
  >/dev/null &&
  inj a 1 publish mp.a --count 50 >/dev/null &&
  inj b 1 stream-create MP --subjects 'mp.>' --replicas 3 >/dev/null &&
  inj b 1 consumer-create MP stuck --ack-wait 60 --max-ack-pending 5 \
    >/dev/null &&
  inj b 1 publish mp.b --count 50 >/dev/null || {
  nl_fail setup/objects "streams or consumers not created"
  exit 1
}

# The consumer leader of A's stuck (to be killed), and another node, which
# the worker of A that never acks connects to; B's consumer is left idle.
leader_of() { # NODE: the leader that node names for A's MP/stuck
  inj a "$1" info MP stuck 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["leader"])' \
      2>/dev/null
}
old=$(leader_of 1)
n=${old#n}
other=$((n % 3 + 1))
case $n in 1 | 2 | 3) ;; *)
  nl_fail setup/leader "no consumer leader named: '$old'"
  exit 1
  ;;
esac
"$NL_INJECT" --server "$(url a "$other")" consume MP stuck --duration 120 \
  --no-ack >"$NL_TMP/mp.out" 2>&1 &
NL_PIDS+=($!)

nl_start_collectd "<Instance \"sys\">
  URL \"$(url mon 1)\"
  URL \"$(url mon 2)\"
  URL \"$(url mon 3)\"
  SystemAccount true
  Timeout 1
</Instance>" 1 || exit 1

if nl_wait_notification 40 "plugin_instance = sys-A-MP," \
  "type_instance = MAX_PENDING_THROTTLE," "(account A)" >/dev/null; then
  nl_pass found "MAX_PENDING_THROTTLE under account A"
else
  nl_fail found "no MAX_PENDING_THROTTLE under account A"
fi
nl_check all-servers-heard [ "$(nl_csv_last sys count servers_answered)" \
  = "3.000000" ]

killed_at=$(date +%s)
nl_cluster_node_kill "$n"
# The poll hears two servers, then the consumer has a new leader.
for ((i = 0; i < 100; i++)); do
  nl_csv_seen_since sys count servers_answered "$killed_at" "== 2" && break
  sleep 0.2
done
nl_check short-poll-seen nl_csv_seen_since sys count servers_answered \
  "$killed_at" "== 2"
new=
for ((i = 0; i < 100; i++)); do
  new=$(leader_of "$other")
  [ -n "$new" ] && [ "$new" != "$old" ] && break
  sleep 0.2
done
if [ -n "$new" ] && [ "$new" != "$old" ]; then
  nl_pass new-leader "$old -> $new"
else
  nl_fail new-leader "consumer leader still '$new'"
fi
# Five polls on the new leader's view, the fault still standing.
moved_at=$(date +%s)
for ((i = 0; i < 100; i++)); do
  [ "$(nl_csv_rows sys duration poll "\$1 > $moved_at")" -ge 5 ] && break
  sleep 0.2
done
nl_check polled-after-move [ "$(nl_csv_rows sys duration poll \
  "\$1 > $moved_at")" -ge 5 ]
onsets=$(nl_notifications "plugin_instance = sys-A-MP," |
  grep -F "type_instance = MAX_PENDING_THROTTLE," |
  grep -vc "severity = OKAY")
okays=$(nl_notifications "plugin_instance = sys-A-MP," |
  grep -c "severity = OKAY")
if [ "$onsets" -eq 1 ] && [ "$okays" -eq 0 ]; then
  nl_pass one-onset-no-okay
else
  nl_fail one-onset-no-okay "$onsets onset(s), $okays OKAY(s)"
fi
nl_check still-raised [ "$(nl_csv_last sys-A-MP \
  nats_lens_max_pending_throttle stuck)" = "1.000000" ]
if [ -z "$(nl_notifications "plugin_instance = sys-B-")" ]; then
  nl_pass b-silent
else
  nl_fail b-silent "$(nl_notifications "plugin_instance = sys-B-" | head -n 2)"
fi
# B's consumer was watched (its 50 messages pending) before the kill.
nl_check b-watched [ "$(nl_csv_rows sys-B-MP nats_lens_num_pending stuck \
  '$2 + 0 == 50')" -gt 0 ]
nl_check collectd-alive kill -0 "$NL_COLLECTD_PID"
nl_end
