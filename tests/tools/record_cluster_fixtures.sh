#!/bin/bash
# Records the JetStream replies about consumer replicas of a real 3-node
# cluster (tests/lib.sh, nl_cluster_start) into OUTDIR:
#   stream_list_replicas.json    $JS.API.STREAM.LIST {"subject":"fx.rep.>"}
#   consumer_list_replicas.json  $JS.API.CONSUMER.LIST.FX_REP_FILE
#   consumer_list_replicas_memory.json  $JS.API.CONSUMER.LIST.FX_REP_MEM
# FX_REP_FILE is a file stream of 3 replicas with the durable consumers
# INHERIT (num_replicas 0), R1, R3, MEM (mem_storage), NONE_R1 (ack none,
# 1 replica), and an ephemeral consumer as nats.go makes for an ordered
# read (ack none, mem_storage, 1 replica, flow control); FX_REP_MEM is a
# memory stream of 3 replicas with the durable MEM. 5 messages each, 3
# acked by every consumer with acks.
#
# Usage: tests/tools/record_cluster_fixtures.sh OUTDIR
#   NATS_SERVER  the nats-server binary (tests/nats_server.sh), e.g.
#     NATS_SERVER=/opt/nats/nats-server-2.12.0 \
#       tests/tools/record_cluster_fixtures.sh tests/fixtures/2.12.0
set -u
OUT=$(cd "${1:?usage: $0 OUTDIR}" && pwd)
. "$(dirname "$0")/../lib.sh"
nl_begin record_cluster
BASE=$(nl_port NL_PORT_RECORD_CLUSTER 15200)
nl_cluster_start "$BASE" || exit 1
nl() { nl_inject "$(nl_cluster_client 1)" --timeout-ms 5000 "$@"; }
if ! nl_retry 30 nl stream-create FX_REP_FILE --subjects fx.rep.file \
  --replicas 3 --storage file >/dev/null 2>&1; then
  echo "no JetStream meta leader after 30 s" >&2
  exit 1
fi
nl stream-create FX_REP_MEM --subjects fx.rep.mem --replicas 3 >/dev/null
for c in INHERIT R1 R3 MEM NONE_R1; do
  case $c in
  INHERIT) args=() ;;
  R1) args=(--replicas 1) ;;
  R3) args=(--replicas 3) ;;
  MEM) args=(--memory) ;;
  NONE_R1) args=(--replicas 1 --ack none) ;;
  esac
  nl consumer-create FX_REP_FILE "$c" --ack-wait 30 "${args[@]}" >/dev/null
done
nl consumer-create FX_REP_MEM MEM --ack-wait 30 --memory >/dev/null
nl request '$JS.API.CONSUMER.CREATE.FX_REP_FILE' \
  '{"stream_name":"FX_REP_FILE","config":{"deliver_subject":"fx.rep.ordered","deliver_policy":"all","ack_policy":"none","replay_policy":"instant","flow_control":true,"idle_heartbeat":5000000000,"mem_storage":true,"num_replicas":1,"inactive_threshold":300000000000}}' \
  >/dev/null
nl publish fx.rep.file --count 5 >/dev/null
nl publish fx.rep.mem --count 5 >/dev/null
for c in INHERIT R1 R3 MEM; do
  nl consume FX_REP_FILE "$c" --duration 2 --max-msgs 3 >/dev/null
done
nl consume FX_REP_MEM MEM --duration 2 --max-msgs 3 >/dev/null
sleep 1
nl request '$JS.API.STREAM.LIST' '{"subject":"fx.rep.>"}' \
  >"$OUT/stream_list_replicas.json"
nl request '$JS.API.CONSUMER.LIST.FX_REP_FILE' '{}' \
  >"$OUT/consumer_list_replicas.json"
nl request '$JS.API.CONSUMER.LIST.FX_REP_MEM' '{}' \
  >"$OUT/consumer_list_replicas_memory.json"
echo "cluster fixtures of $(nl_server_release) written to $OUT"
nl_end
