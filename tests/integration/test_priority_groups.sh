#!/usr/bin/env bash
# Pull consumers with a priority group (nats-server 2.11 and later) under
# ordinary healthy use: the pull requests name the group, and the server
# serves them by the group's policy. Every consumer is observed and stays
# silent, and its scenario is shown to have happened:
#   PG/pinall  ack all, pinned_client (priority_timeout 3 s), clients A and
#              B (started 1 s later): the server delivers to the pinned
#              client A alone, B's request waits unserved (num_waiting 2
#              seen by the plugin). A stops after 20 s; once the pin times
#              out B is pinned and takes over. Waiting requests of a pinned client's standbys
#              are no parallel workers: no ACK_ALL_PARALLEL.
#   PG/pin     the same with explicit acks
#   PG/over    overflow, explicit acks: a primary client and one asking for
#              messages only above 50 pending, which stays idle
#   PG/prio    (2.12 and later) prioritized, explicit acks: clients of
#              priority 1 and 2
# The twin PG/all (ack all, no priority group, two clients) raises
# ACK_ALL_PARALLEL in the same run. Runs on the nats-server of the run
# when it is 2.11 or later, else on the 2.11.10 build of the version
# matrix (NL_SERVER_BUILDS, tests/nats_server.sh).
# Ports: NL_PORT_PRIORITY (default 14990).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_at_least 2 11 2.11.10
. "$(dirname "$0")/../lib.sh"
nl_begin priority_groups
nl_server_check 2 11 2.11.10 || exit 0
PORT=$(nl_port NL_PORT_PRIORITY 14990)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
bg() { # NAME ARGS...: nl-inject in the background, output in NAME.out
  local name=$1
  shift
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" "$@" >"$NL_TMP/$name.out" 2>&1 &
  NL_PIDS+=($!)
}
consumers="pinall pin over all"
nl_server_older 2 12 || consumers="$consumers prio"
pg() { echo --priority-group g --priority-policy "$@"; }
inj stream-create PG --subjects 'pg.>' &&
  inj consumer-create PG pinall --ack all $(pg pinned_client) --priority-timeout 3 &&
  inj consumer-create PG pin $(pg pinned_client) --priority-timeout 3 &&
  inj consumer-create PG over $(pg overflow) &&
  inj consumer-create PG all --ack all &&
  { nl_server_older 2 12 || inj consumer-create PG prio $(pg prioritized); } || {
  nl_fail setup/objects "stream or consumers not created"
  nl_end
  exit
}
nl_pass setup/objects "$consumers"
# 3 messages a second (not a divisor of the 1 s polls, so that the polls
# do not always fall at the same point of a delivery), each processed in
# 20 ms: most of the time every client's request waits.
bg pub publish pg.a --count 150 --rate 3
w="--process-ms 20"
for c in pinall pin; do
  bg "$c-A" consume PG "$c" --duration 20 --group g $w
done
sleep 1 # A is pinned first.
for c in pinall pin; do
  bg "$c-B" consume PG "$c" --duration 50 --group g $w
done
bg over-A consume PG over --duration 50 --group g $w
bg over-B consume PG over --duration 50 --group g --min-pending 50 $w
bg all-A consume PG all --duration 50 $w
bg all-B consume PG all --duration 50 $w
if ! nl_server_older 2 12; then
  bg prio-A consume PG prio --duration 50 --group g --priority 1 $w
  bg prio-B consume PG prio --duration 50 --group g --priority 2 $w
fi

nl_start_collectd "<Instance \"pg\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
if nl_wait_notification 30 "type_instance = ACK_ALL_PARALLEL," "PG/all:" >/dev/null; then
  nl_pass twin/all-raised "ACK_ALL_PARALLEL for PG/all (two clients, no priority group)"
else
  nl_fail twin/all-raised "no ACK_ALL_PARALLEL for PG/all"
fi
# The pinned client's standby waits while it is served.
waiting2() { [ "$(nl_csv_rows pg-PG nats_lens_num_waiting pinall '$2 + 0 >= 2')" -gt 0 ]; }
nl_check pinall/standby-waiting nl_retry 30 waiting2
# Until every client has ended (the publisher too).
done_all() { ! pgrep -f "nats://127.0.0.1:$PORT" >/dev/null; }
nl_retry 70 done_all
# received CLIENT FIELD: a field of a client's summary.
summary() {
  tail -n 1 "$NL_TMP/$1.out" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}
for c in pinall pin; do
  a=$(summary "$c-A" pinned) b=$(summary "$c-B" pinned)
  ra=$(summary "$c-A" received) rb=$(summary "$c-B" received)
  # A was pinned first and served alone; B took over after A stopped.
  if [ "$a" -gt 0 ] && [ "$a" = "$ra" ] && [ "$b" -gt 0 ] && [ "$b" = "$rb" ] &&
    [ "$((ra + rb))" -ge 150 ]; then
    nl_pass "$c/pinned-failover" "A received $ra, B $rb, every delivery pinned"
  else
    nl_fail "$c/pinned-failover" "A received $ra ($a pinned), B $rb ($b pinned)"
  fi
done
nl_check over/overflow-idle [ "$(summary over-B received)" = 0 ]
nl_check over/primary-served [ "$(summary over-A received)" -ge 150 ]
for c in $consumers; do
  [ "$c" = all ] && continue
  nl_check "$c/observed" [ "$(nl_csv_last pg-PG nats_lens_delivered "$c" | cut -d. -f1)" -ge 150 ]
  if nl_notifications "PG/$c[: ]" | grep -q .; then
    nl_fail "$c/silent" "$(nl_notifications "PG/$c[: ]" | head -n 1)"
  else
    nl_pass "$c/silent"
  fi
done
nl_end
