#!/bin/bash
# Records the JetStream API replies in tests/fixtures/ from a fresh local
# nats-server (JetStream, memory and file store in a temporary directory).
# It starts the server itself on 127.0.0.1:$PORT and stops it on exit.
# The advisory fixtures of the scenarios are recorded by SCENARIOS.md's runs;
# this script re-records only advisory_api_audit.json.
#
# Usage: tests/tools/record_fixtures.sh [OUTDIR]   (default tests/fixtures)
#   PORT  server port (default 14224)
#   NATS_SERVER  the nats-server binary (tests/nats_server.sh), for example
#     NATS_SERVER=../shared/bin/nats-server-2.12.0 \
#       tests/tools/record_fixtures.sh tests/fixtures/2.12.0
set -eu
TOOLS=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$TOOLS/../fixtures}
PORT=${PORT:-14224}
NL=${NL:-$TOOLS/nl-inject}
. "$TOOLS/../nats_server.sh"
SRV=nats://127.0.0.1:$PORT
DIR=$(mktemp -d /tmp/nl-fixtures.XXXXXX)
mkdir -p "$OUT"

nats-server -js -a 127.0.0.1 -p "$PORT" -sd "$DIR" >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
BG_PIDS=()
cleanup() {
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT
for _ in $(seq 50); do
  grep -q "Server is ready" "$DIR/server.log" && break
  sleep 0.1
done

nl() { "$NL" --server "$SRV" "$@"; }

# Streams of each retention kind.
nl stream-create FX_LIMITS --subjects fx.limits.a,fx.limits.b --max-msgs 1000
nl stream-create FX_INTEREST --subjects fx.interest --retention interest
nl stream-create FX_WQ --subjects fx.wq --retention workqueue
nl stream-create FX_AGE --subjects fx.age --max-age 3600 --storage file
nl stream-create FX_PAGE --subjects fx.page

# Consumers of every kind on FX_LIMITS; the API audit of the first create
# (a raw request, so that no INFO request comes first) is recorded.
nl record '$JS.EVENT.ADVISORY.API' --count 1 --duration 10 \
  --out "$OUT/advisory_api_audit.json" &
BG_PIDS+=($!)
sleep 0.3
nl request '$JS.API.CONSUMER.DURABLE.CREATE.FX_LIMITS.PULL' \
  '{"stream_name":"FX_LIMITS","config":{"durable_name":"PULL","deliver_policy":"all","ack_policy":"explicit","ack_wait":30000000000,"max_ack_pending":100}}'
wait "${BG_PIDS[-1]}"
nl consumer-create FX_LIMITS PUSH_BOUND --deliver-subject fx.dlv.bound
nl consumer-create FX_LIMITS PUSH_IDLE --deliver-subject fx.dlv.idle \
  --deliver-group workers
nl consumer-create FX_LIMITS FILTERED --filter fx.limits.b
nl consumer-create FX_LIMITS ACK_NONE --ack none
nl consumer-create FX_LIMITS ACK_ALL --ack all
nl consumer-create FX_LIMITS BACKOFF --backoff 1,2,4 --max-deliver 5 \
  --max-ack-pending 3
nl consumer-create FX_WQ WORKER --ack-wait 10
nl consumer-create FX_INTEREST INTERESTED

nl publish fx.limits.a --count 10
nl publish fx.limits.b --count 10
nl publish fx.wq --count 5
nl publish fx.interest --count 5
nl publish fx.age --count 3

# Leave delivered, acked, pending and redelivered state behind.
nl consume FX_LIMITS PULL --duration 1 --max-msgs 10
nl consume FX_LIMITS FILTERED --duration 1 --max-msgs 4
nl consume FX_LIMITS ACK_NONE --duration 1 --max-msgs 20
nl consume FX_LIMITS ACK_ALL --duration 1 --max-msgs 6
# BACKOFF: 3 unacked messages redelivered once after the 1 s first step.
nl consume FX_LIMITS BACKOFF --duration 1.6 --no-ack
nl consume FX_WQ WORKER --duration 1 --max-msgs 3
nl consume FX_INTEREST INTERESTED --duration 1 --max-msgs 2 --no-ack
nl consume FX_LIMITS PUSH_BOUND --mode push --duration 6 >/dev/null &
BG_PIDS+=($!)
sleep 2

nl request '$JS.API.STREAM.LIST' '{}' >"$OUT/stream_list.json"
nl request '$JS.API.STREAM.NAMES' '{}' >"$OUT/stream_names.json"
nl request '$JS.API.CONSUMER.LIST.FX_LIMITS' '{}' >"$OUT/consumer_list.json"
nl request '$JS.API.CONSUMER.LIST.FX_AGE' '{}' \
  >"$OUT/consumer_list_empty.json"
nl request '$JS.API.CONSUMER.LIST.NO_SUCH_STREAM' '{}' \
  >"$OUT/api_error_no_stream.json"

# 300 consumers on one stream for paging.
for i in $(seq -w 1 300); do
  nl request "\$JS.API.CONSUMER.DURABLE.CREATE.FX_PAGE.C$i" \
    "{\"stream_name\":\"FX_PAGE\",\"config\":{\"durable_name\":\"C$i\",\"ack_policy\":\"explicit\",\"deliver_policy\":\"all\"}}" \
    >/dev/null
done
nl request '$JS.API.CONSUMER.LIST.FX_PAGE' '{"offset":0}' \
  >"$OUT/consumer_list_page0.json"
nl request '$JS.API.CONSUMER.LIST.FX_PAGE' '{"offset":256}' \
  >"$OUT/consumer_list_page1.json"
nl request '$JS.API.CONSUMER.NAMES.FX_PAGE' '{"offset":0}' \
  >"$OUT/consumer_names_page0.json"
# A paused consumer (nats-server 2.11 and later): its CONSUMER.INFO, kept
# only when the server paused it (older servers do not answer the pause).
nl consumer-create FX_AGE PAUSED >/dev/null
nl request '$JS.API.CONSUMER.PAUSE.FX_AGE.PAUSED' \
  "{\"pause_until\":\"$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)\"}" >/dev/null 2>&1 || true
nl request '$JS.API.CONSUMER.INFO.FX_AGE.PAUSED' '' >"$DIR/paused.json"
if grep -q '"paused":true' "$DIR/paused.json"; then
  cp "$DIR/paused.json" "$OUT/consumer_info_paused.json"
fi
wait "${BG_PIDS[-1]}"
echo "fixtures written to $OUT"
