#!/usr/bin/env bash
# STREAM_REPLICAS_AT_RISK and CONSUMER_REPLICAS_AT_RISK on a real 3-node
# JetStream cluster (tests/lib.sh, nl_cluster_start), polled by real
# collectd with all three seed URLs, 2 s polls, ReplicaGraceSeconds 10,
# ClearHoldSeconds 6 (docs/detectors.md, STREAM_REPLICAS_AT_RISK):
#   RK, RK/c  an R3 stream and its R3 consumer.
#   twins     both leaderships stepped down (elections: leaders change), then
#             a server that leads neither killed, 100 messages published
#             and the server started again at once (its stream replica
#             seen not current, then current again):
#             silent for the grace and two polls more.
#   fault     the same server killed and 200 messages published while it
#             is down: both found (warnings: 2 current copies of 3, quorum
#             2, 1 replica behind, 1 more failure stops them; the stream's
#             lag 200 or more); started again: both cleared once it caught
#             up.
#   PK        (nats-server 2.10 and later) an R3 stream annotated for
#             natscli's check, io.nats.monitor.peer-lag-critical=50: silent
#             through the twins, STREAM_THRESHOLD critical when the server
#             is down and 100 messages leave its peer behind, cleared once
#             it caught up.
#   R2        an R2 stream whose follower's server is killed: found
#             critical (1 current copy of a quorum of 2: no publish can be
#             committed), cleared when the server is back.
# Ports: NL_PORT_REPLICAS_CLUSTER (default 15485..15493).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin replicas_cluster
BASE=$(nl_port NL_PORT_REPLICAS_CLUSTER 15485)
nl_cluster_start "$BASE" || exit 1
live=1 # The node the injector talks to (never the one killed).
inj() { nl_inject "$(nl_cluster_client "$live")" --timeout-ms 5000 "$@"; }
if ! nl_retry 30 inj stream-create RK --subjects 'rk.>' --replicas 3 \
  >/dev/null 2>&1; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
inj consumer-create RK c --ack-wait 30 --replicas 3 >/dev/null &&
  inj publish rk.x --count 50 >/dev/null || {
  nl_fail setup/objects "stream, consumer or messages not created"
  exit 1
}
# PK: natscli's peer threshold, on servers that keep stream metadata.
peer_keys=0
if ! nl_server_older 2 10; then
  inj stream-create PK --subjects 'pk.>' --replicas 3 \
    --metadata io.nats.monitor.peer-lag-critical=50 >/dev/null && peer_keys=1
  nl_check setup/PK [ "$peer_keys" = 1 ]
else
  echo "# PK: nats-server $(nl_server_release) keeps no stream metadata"
fi
# cluster_of API PYEXPR: PYEXPR of the "cluster" object of an INFO reply
# (c), asked of the first live node (none if no node answers).
cluster_of() {
  local n
  for n in 1 2 3; do
    nl_inject "$(nl_cluster_client "$n")" --timeout-ms 3000 request \
      "\$JS.API.$1" '' 2>/dev/null |
      python3 -c "import json,sys; c=json.load(sys.stdin)['cluster']; print($2)" \
        2>/dev/null && return 0
  done
  return 1
}
leaders() {
  echo "$(cluster_of STREAM.INFO.RK 'c["leader"]')/$(cluster_of CONSUMER.INFO.RK.c 'c["leader"]')"
}
# all_current: both groups list two replicas, both current.
all_current() {
  local q='sum(1 for r in c.get("replicas") or [] if r.get("current"))'
  [ "$(cluster_of STREAM.INFO.RK "$q")" = 2 ] &&
    [ "$(cluster_of CONSUMER.INFO.RK.c "$q")" = 2 ]
}
nl_check setup/current nl_retry 20 all_current
nl_start_collectd "<Instance \"rc\">
$(nl_cluster_url_lines)
  Timeout 5
  ReplicaGraceSeconds 10
  ClearHoldSeconds 6
</Instance>" 2 || exit 1
polls() { nl_csv_rows rc duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 40 polled 2

# Twin 1: planned step-downs of both leaderships.
before=$(leaders)
inj request '$JS.API.STREAM.LEADER.STEPDOWN.RK' '' >/dev/null
inj request '$JS.API.CONSUMER.LEADER.STEPDOWN.RK.c' '' >/dev/null
changed() { local l; l=$(leaders) && [ "${l%/*}" != "${before%/*}" ] &&
  [ "${l#*/}" != "${before#*/}" ] && [[ "$l" != */ ]] && [[ "$l" != /* ]]; }
if nl_retry 20 changed; then
  nl_pass twins/stepped-down "$before -> $(leaders)"
else
  nl_fail twins/stepped-down "leaders $before, then $(leaders)"
fi
# The victim: a server that leads neither the stream nor the consumer.
now=$(leaders)
victim=
for n in 3 2 1; do
  [ "${now%/*}" != "n$n" ] && [ "${now#*/}" != "n$n" ] && victim=$n && break
done
live=$((victim % 3 + 1))
# Twin 2: a quick restart of the victim.
nl_cluster_node_kill "$victim"
# Messages while it is down: the leader sees it behind at once (an idle
# group calls a lost replica current for some seconds).
inj publish rk.x --count 100 >/dev/null
nl_check twins/seen-behind [ "$(cluster_of STREAM.INFO.RK \
  "[r['current'] for r in c['replicas'] if r['name']=='n$victim']")" = "[False]" ]
nl_cluster_node_start "$victim" || exit 1
nl_check twins/caught-up nl_retry 30 all_current
# Silent for the grace and two polls more after the quick restart.
p=$(polls)
nl_retry 30 polled $((p + 7))
nl_check_silent twins/stream-silent "RK:" STREAM_REPLICAS_AT_RISK
[ "$peer_keys" = 1 ] && nl_check_silent twins/PK-silent "PK:" STREAM_THRESHOLD
nl_check_silent twins/consumer-silent "RK/c:" CONSUMER_REPLICAS_AT_RISK

# The fault: the victim down, 200 messages published meanwhile.
nl_cluster_node_kill "$victim"
down_at=$(date +%s)
inj publish rk.x --count 200 >/dev/null
[ "$peer_keys" = 1 ] && inj publish pk.x --count 100 >/dev/null
if line=$(nl_wait_notification 40 "severity = WARNING" \
  "type_instance = STREAM_REPLICAS_AT_RISK," "stream RK:" "current_copies=2," \
  "replicas_behind=1,"); then
  nl_pass RK/detected "${line#*message = }"
  nl_latency RK "$down_at" "$line"
  lag=$(sed -n 's/.*max_lag=\([0-9]*\).*/\1/p' <<<"$line")
  nl_check RK/counts grep -q "replicas=3, current_copies=2, quorum=2, failures_to_stop=1, replicas_behind=1" <<<"$line"
  nl_check RK/lag [ "${lag:-0}" -ge 200 ]
  echo "  counted RK: ${lag:-0} of 200"
else
  nl_fail RK/detected "no STREAM_REPLICAS_AT_RISK warning for RK"
fi
if line=$(nl_wait_notification 20 "severity = WARNING" \
  "type_instance = CONSUMER_REPLICAS_AT_RISK," "RK/c:" "current_copies=2,"); then
  nl_pass RK/c/detected "${line#*message = }"
  nl_latency RK/c "$down_at" "$line"
else
  nl_fail RK/c/detected "no CONSUMER_REPLICAS_AT_RISK warning for RK/c"
fi
if [ "$peer_keys" = 1 ]; then
  if line=$(nl_wait_notification 30 "severity = FAILURE" \
    "type_instance = STREAM_THRESHOLD," "stream PK:" "peer_lag_critical=50,"); then
    nl_pass PK/detected "${line#*message = }"
  else
    nl_fail PK/detected "no STREAM_THRESHOLD for PK's peer behind"
  fi
fi
nl_cluster_node_start "$victim" || exit 1
up_at=$(date +%s)
nl_check fault/caught-up nl_retry 30 all_current
whos="STREAM_REPLICAS_AT_RISK:RK CONSUMER_REPLICAS_AT_RISK:RK/c"
[ "$peer_keys" = 1 ] && whos="$whos STREAM_THRESHOLD:PK"
for who in $whos; do
  if line=$(nl_wait_notification 40 "severity = OKAY" \
    "type_instance = ${who%%:*}," "${who#*:} cleared"); then
    nl_pass "${who#*:}/cleared"
    nl_latency "${who#*:}.cleared" "$up_at" "$line"
  else
    nl_fail "${who#*:}/cleared" "no OKAY after the server came back"
  fi
done
# No quorum: an R2 stream whose follower's server is killed keeps one
# current copy of a quorum of two: critical.
inj stream-create R2 --subjects 'r2.>' --replicas 2 >/dev/null &&
  inj publish r2.x --count 10 >/dev/null ||
  nl_fail R2/setup "the R2 stream was not created"
peers=$(cluster_of STREAM.INFO.R2 \
  '" ".join([c["leader"][1:]] + [r["name"][1:] for r in c["replicas"]])')
follower=${peers#* }
if [ "${#follower}" != 1 ]; then
  nl_fail R2/setup "no leader and follower for R2: '$peers'"
else
  live=$((6 - ${peers% *} - follower))
  nl_cluster_node_kill "$follower"
  down_at=$(date +%s)
  if line=$(nl_wait_notification 40 "severity = FAILURE" \
    "type_instance = STREAM_REPLICAS_AT_RISK," "stream R2:" \
    "replicas=2, current_copies=1, quorum=2, failures_to_stop=0,"); then
    nl_pass R2/critical "${line#*message = }"
    nl_latency R2 "$down_at" "$line"
  else
    nl_fail R2/critical "no critical STREAM_REPLICAS_AT_RISK for R2"
  fi
  nl_cluster_node_start "$follower" || exit 1
  if nl_wait_notification 40 "severity = OKAY" \
    "type_instance = STREAM_REPLICAS_AT_RISK," "stream R2 cleared" >/dev/null; then
    nl_pass R2/cleared
  else
    nl_fail R2/cleared "no OKAY after the server came back"
  fi
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
