#!/bin/bash
# Records the JetStream API replies in tests/fixtures/ from a fresh local
# nats-server (JetStream, memory and file store in a temporary directory).
# It starts the server itself on 127.0.0.1:$PORT and stops it on exit.
# It also records, self-contained, the advisories whose shape differs
# between server versions (MSG_TERMINATED by limits and by +TERM, a NAK,
# MAX_DELIVERIES) and, on 2.11 and later, a paused consumer; the other
# advisory fixtures of the top level are recorded by SCENARIOS.md's runs.
#
# Usage: tests/tools/record_fixtures.sh [OUTDIR]   (default tests/fixtures)
#   NATS_SERVER  the nats-server binary (tests/nats_server.sh; default the
#                one on PATH), e.g. for tests/fixtures/<version>/:
#     NATS_SERVER=/opt/nats/nats-server-2.12.0 \
#       tests/tools/record_fixtures.sh tests/fixtures/2.12.0
#   PORT         server port (default a free one)
set -eu
TOOLS=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$TOOLS/../fixtures}
. "$TOOLS/../nats_server.sh"
. "$TOOLS/fixture_server.sh"
mkdir -p "$OUT"

fixture_server nl-fixtures
SRV=nats://127.0.0.1:$PORT
# "2.11.10" from "nats-server: v2.11.10".
VERSION=$(nats-server --version | sed -n 's/.* v\{0,1\}\([0-9][0-9.]*\).*/\1/p')
echo "nats-server $VERSION on port $PORT"

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
nl request '$JS.API.CONSUMER.INFO.FX_LIMITS.PULL' '{}' \
  >"$OUT/consumer_info.json"
wait "${BG_PIDS[-1]}"

# The advisories, each on a stream of its own (created after the lists
# above were recorded) and recorded on that stream's subject only.
# rec FILE SUBJECT: records one advisory in the background.
rec() {
  nl record "$2" --count 1 --duration 15 --out "$OUT/$1" &
  BG_PIDS+=($!)
  sleep 0.3
}

# MSG_TERMINATED by limits: 5 messages delivered and never acked, then 3
# more published so that max_msgs 5 removes 3 of them (2.10.4 and later
# give a "reason").
nl stream-create FX_TERM_LIMITS --subjects fx.term.limits --max-msgs 5
nl consumer-create FX_TERM_LIMITS C --ack-wait 30 --max-ack-pending 10
nl publish fx.term.limits --count 5
nl consume FX_TERM_LIMITS C --duration 1 --no-ack
rec advisory_terminated_limits.json \
  '$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.FX_TERM_LIMITS.>'
nl publish fx.term.limits --count 3
wait "${BG_PIDS[-1]}"

# MSG_TERMINATED by a client +TERM (stream seq 2).
nl stream-create FX_TERM --subjects fx.term
nl consumer-create FX_TERM C --ack-wait 30
nl publish fx.term --count 2
rec advisory_terminated.json \
  '$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.FX_TERM.>'
nl consume FX_TERM C --duration 1 --term-seq-mod 2
wait "${BG_PIDS[-1]}"

# MSG_NAKED (the first NAK) and MAX_DELIVERIES: one message NAKed on each
# of its max_deliver 3 deliveries.
nl stream-create FX_NAK --subjects fx.nak
nl consumer-create FX_NAK C --ack-wait 2 --max-deliver 3
nl publish fx.nak --count 1
rec advisory_nak.json '$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.FX_NAK.>'
rec advisory_max_deliver.json \
  '$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.FX_NAK.>'
nl consume FX_NAK C --duration 2 --nak
wait "${BG_PIDS[-1]}"
wait "${BG_PIDS[-2]}"

# A paused consumer (the pause API exists from 2.11): the PAUSE reply, its
# CONSUMER.INFO and the CONSUMER.LIST of its stream.
case $VERSION in
  2.[0-9].* | 2.10.*) ;;
  *)
    nl stream-create FX_PAUSE --subjects fx.pause
    nl consumer-create FX_PAUSE PAUSED --ack-wait 30
    nl publish fx.pause --count 3
    until=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
    nl request '$JS.API.CONSUMER.PAUSE.FX_PAUSE.PAUSED' \
      "{\"pause_until\":\"$until\"}" >"$OUT/consumer_pause.json"
    nl request '$JS.API.CONSUMER.INFO.FX_PAUSE.PAUSED' '{}' \
      >"$OUT/consumer_info_paused.json"
    nl request '$JS.API.CONSUMER.LIST.FX_PAUSE' '{}' \
      >"$OUT/consumer_list_paused.json"
    ;;
esac
grep -E '\[(WRN|ERR|FTL)\]' "$DIR/server.log" >&2 || true
if grep -qE '\[(ERR|FTL)\]' "$DIR/server.log"; then
  echo "errors in the server log (above)" >&2
  exit 1
fi
echo "fixtures of nats-server $VERSION written to $OUT"
