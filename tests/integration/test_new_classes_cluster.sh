#!/usr/bin/env bash
# The cluster-only classes on a real 3-node JetStream cluster (tests/lib.sh,
# nl_cluster_start), polled by real collectd with all three seed URLs:
#   STREAM_SINGLE_REPLICA  fires for the R1 streams SR1 and UO, not for the
#                          R3 streams SR3 and UOK; SR1 clears once it is
#                          updated to 3 replicas (stream-create --replicas
#                          3 updates it);
#   CONSUMER_UNOBSERVABLE  the one server holding the R1 stream UO is
#                          killed: STREAM.LIST reports UO "missing" (after
#                          the server's 4 s scatter-gather), so the finding
#                          fires for UO, its consumer is counted in
#                          count-unobservable and keeps its ACK_NONE_CONSUMER
#                          finding (never taken for healthy or deleted); the
#                          server is restarted and the finding clears. The
#                          R3 stream UOK (a replica on every node) stays
#                          observable and raises nothing.
# The single-server side (neither class fires) is in test_new_classes.sh.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin new_classes_cluster
BASE=$(nl_port NL_PORT_NEW_CLASSES_CLUSTER 15020) # 15020..15028
# STREAM.LIST waits 4 s for a stream whose leader is gone: the timeout and
# the interval (the poll's time budget) must leave room for it.
INTERVAL=6
nl_cluster_start "$BASE" || exit 1
inj() {
  local n=$1
  shift
  nl_inject "$(nl_cluster_client "$n")" --timeout-ms 5000 "$@" >/dev/null
}
if ! nl_retry 30 inj 1 stream-create SR1 --subjects 'sr1.>' --replicas 1 2>/dev/null; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
inj 1 stream-create SR3 --subjects 'sr3.>' --replicas 3 &&
  inj 1 consumer-create SR3 w --ack-wait 30 &&
  inj 1 stream-create UO --subjects 'uo.>' --replicas 1 &&
  inj 1 consumer-create UO fast --ack none &&
  inj 1 stream-create UOK --subjects 'uok.>' --replicas 3 &&
  inj 1 consumer-create UOK w --ack-wait 30 &&
  inj 1 publish uo.a --count 5 && inj 1 publish uok.a --count 5 || {
  nl_fail setup "could not create the streams and consumers"
  exit 1
}
# The node holding UO (its only replica, so its leader).
L=$(nl_inject "$(nl_cluster_client 1)" request '$JS.API.STREAM.INFO.UO' '' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["leader"][1:])')
case "$L" in
1 | 2 | 3) ;;
*)
  nl_fail setup/leader "no leader for UO: $L"
  exit 1
  ;;
esac
O=$((L % 3 + 1)) # a node that stays up

nl_start_collectd "<Instance \"nc\">
$(nl_cluster_url_lines)
  Timeout 5
</Instance>" "$INTERVAL" || exit 1

# expect CLASS SEVERITY WHERE EVIDENCE...: waits (EXPECT_S, 30 s) for the
# notification.
expect() {
  local cls=$1 sev=$2 where=$3 line
  shift 3
  if line=$(nl_wait_notification "${EXPECT_S:-30}" "severity = $sev" \
    "type_instance = $cls" \
    "$cls $where" "$@"); then
    nl_pass "$(echo "$cls" | tr 'A-Z' 'a-z')/detected $where" \
      "${line#*message = }"
  else
    nl_fail "$(echo "$cls" | tr 'A-Z' 'a-z')/detected $where" \
      "no $sev $cls notification with $*"
  fi
}
expect_okay() {
  if nl_wait_notification "${3:-30}" "severity = OKAY" "type_instance = $1" \
    "$1 $2 cleared" >/dev/null; then
    nl_pass "$(echo "$1" | tr 'A-Z' 'a-z')/cleared $2"
  else
    nl_fail "$(echo "$1" | tr 'A-Z' 'a-z')/cleared $2" "no OKAY after the fix"
  fi
}
# silent PATTERN NAME [EXCLUDE]: no notification matching PATTERN so far
# (those matching the extended regex EXCLUDE left out).
silent() {
  local got
  got=$(nl_notifications "$1" | grep -v -E "${3:-^$}")
  if [ -z "$got" ]; then
    nl_pass "$2"
  else
    nl_fail "$2" "$got"
  fi
}

# A replica of an R3 stream or consumer on the node killed below may
# rightly be reported behind once it has been down for
# ReplicaGraceSeconds (30 s): those classes are test_replicas_cluster.sh's.
BY_REPLICAS='type_instance = (STREAM|CONSUMER)_REPLICAS_AT_RISK,'
expect STREAM_SINGLE_REPLICA WARNING "stream SR1:" "replicas=1"
expect STREAM_SINGLE_REPLICA WARNING "stream UO:" "replicas=1"
expect ACK_NONE_CONSUMER WARNING "UO/fast" "durable=1"
# One more poll: the R3 streams were seen at least twice by now.
sleep "$INTERVAL"
silent "STREAM_SINGLE_REPLICA stream SR3" "look-alike/silent stream SR3 (R3)"
silent "stream UOK" "look-alike/silent stream UOK (R3)"
silent "CONSUMER_UNOBSERVABLE" "unobservable/silent-while-up"

# --- the node holding UO is lost ------------------------------------------
KILL_AT=$(date +%s)
nl_cluster_node_kill "$L"
# When the killed node also led the meta group, or held the plugin's
# connection, polls fail until a new leader is elected and cnats has
# reconnected: allow for that.
EXPECT_S=60 expect CONSUMER_UNOBSERVABLE WARNING "stream UO:" "stream_missing=1"
if nl_retry 60 nl_csv_seen_since nc count unobservable "$KILL_AT" '>= 1'; then
  nl_pass unobservable/counted "UO/fast counted in count-unobservable"
else
  nl_fail unobservable/counted "no poll counted UO/fast unobservable"
fi
# Two more polls while UO is unreachable: nothing of UO may clear.
sleep $((2 * INTERVAL))
silent "UO/fast cleared" "unobservable/findings-kept (UO/fast not deleted)"
silent "STREAM_SINGLE_REPLICA stream UO cleared" \
  "unobservable/stream-findings-kept"
silent "stream UOK" "look-alike/silent stream UOK while a node is down" \
  "$BY_REPLICAS"

# --- the node returns ------------------------------------------------------
nl_cluster_node_start "$L" || exit 1
expect_okay CONSUMER_UNOBSERVABLE "stream UO" 60
if nl_retry 20 nl_csv_seen_since nc count unobservable "$KILL_AT" '== 0'; then
  nl_pass unobservable/recovered "count-unobservable back at 0"
else
  nl_fail unobservable/recovered "count-unobservable did not return to 0"
fi

# --- fix: SR1 to 3 replicas -----------------------------------------------
inj "$O" stream-create SR1 --subjects 'sr1.>' --replicas 3 ||
  nl_fail single_replica/fix "the stream update to 3 replicas failed"
expect_okay STREAM_SINGLE_REPLICA "stream SR1"
silent "STREAM_SINGLE_REPLICA stream UO cleared" \
  "single_replica/still-active stream UO (still R1)"
silent "SR3/w" "look-alike/silent SR3/w" "$BY_REPLICAS"
# While UO was missing, a page of STREAM.LIST that restarted inside the
# listed names would have listed streams twice (each dispatched twice in
# one poll, which collectd logs as "Value too old").
if grep -q 'Value too old: name = [^ ]*/nats_lens-' "$NL_TMP/collectd.log"; then
  nl_fail values/each-once-per-poll "$(grep -m1 'Value too old' \
    "$NL_TMP/collectd.log")"
else
  nl_pass values/each-once-per-poll
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
