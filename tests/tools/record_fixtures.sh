#!/bin/bash
# Records the JetStream API replies in tests/fixtures/ from a fresh local
# nats-server (JetStream, memory and file store in a temporary directory).
# It starts the server itself on 127.0.0.1:$PORT and stops it on exit.
# It also records, self-contained, the advisories whose shape differs
# between server versions (MSG_TERMINATED by limits and by +TERM, a NAK,
# MAX_DELIVERIES, a key-value replacement's MSG_TERMINATED), the STREAM.INFO
# of a stream with max_msgs_per_subject, on 2.11 and later a paused
# consumer and a stream with per-message TTLs, on 2.12 and later a
# stream whose delayed message fired, and eight polls of a push consumer
# held by its rate limit, consumers with an inactive_threshold and the
# API audit of a consumer delete; the other
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

# A key-value style stream (max_msgs_per_subject 1): the worker holds the
# first values of keys a and b, and key a is updated. The server
# terminates the replaced message (stream seq 1) with the same reason as
# a limit's removal (2.10.4 and later); its STREAM.INFO shows the
# per-subject limit.
nl stream-create FX_KV --subjects 'fx.kv.>' --max-msgs-per-subject 1
nl consumer-create FX_KV C --ack-wait 30
nl publish fx.kv.a --count 1
nl publish fx.kv.b --count 1
nl consume FX_KV C --duration 1 --no-ack --max-msgs 2
rec advisory_terminated_subject.json \
  '$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.FX_KV.>'
nl publish fx.kv.a --count 1
wait "${BG_PIDS[-1]}"
nl request '$JS.API.STREAM.INFO.FX_KV' '' >"$OUT/stream_info_kv.json"

# Per-message TTLs (from 2.11): a stream that allows them, 2 messages with
# a 1 s TTL and 1 without; once the 2 expired, its STREAM.INFO.
case $VERSION in
  2.[0-9].* | 2.10.*) ;;
  *)
    nl stream-create FX_TTL --subjects fx.ttl --allow-msg-ttl
    nl publish fx.ttl --count 2 --ttl 1s
    nl publish fx.ttl --count 1
    sleep 2.5
    nl request '$JS.API.STREAM.INFO.FX_TTL' '' >"$OUT/stream_info_ttl.json"
    ;;
esac

# Message schedules (from 2.12): a delayed message is the stream's first,
# one message after it, a consumer that reads nothing; once the schedule
# fired (its copy stored on fx.sched.t, the schedule subject purged), the
# STREAM.INFO and the consumer's CONSUMER.INFO.
case $VERSION in
  2.[0-9].* | 2.1[01].*) ;;
  *)
    nl stream-create FX_SCHED --subjects 'fx.sched.>' --allow-msg-schedules
    nl consumer-create FX_SCHED C --ack-wait 30
    at=$(date -u -d '+2 sec' +%Y-%m-%dT%H:%M:%SZ)
    nl publish fx.sched.s --schedule "@at $at" --schedule-target fx.sched.t
    nl publish fx.sched.n --count 1
    sleep 3
    nl request '$JS.API.STREAM.INFO.FX_SCHED' '' >"$OUT/stream_info_schedule.json"
    nl request '$JS.API.CONSUMER.INFO.FX_SCHED.C' '{}' \
      >"$OUT/consumer_info_schedule.json"
    ;;
esac

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
# Streams with discard new at their limits (and look-alikes), after the
# lists above, listed by STREAM.LIST filtered on their subjects: each
# publish past a limit is refused (publish fails, `|| true`).
nl stream-create FX_FULL_MSGS --subjects fx.full.msgs --discard new \
  --max-msgs 5
nl publish fx.full.msgs --count 5
nl publish fx.full.msgs --count 1 2>/dev/null || true
nl stream-create FX_FULL_BYTES --subjects fx.full.bytes --discard new \
  --max-bytes 1000
nl publish fx.full.bytes --count 12 --size 100 --keep-going
nl stream-create FX_FULL_SUBJ --subjects 'fx.full.subj.*' --discard new \
  --max-msgs-per-subject 2 --discard-per-subject
nl publish fx.full.subj.a --count 2
nl publish fx.full.subj.b --count 2
nl publish fx.full.subj.a --count 1 2>/dev/null || true
nl stream-create FX_FULL_ROOM --subjects fx.full.room --discard new \
  --max-msgs 100
nl publish fx.full.room --count 10
nl stream-create FX_FULL_OLD --subjects fx.full.old --max-msgs 5
nl publish fx.full.old --count 8
# Declared full by design (the metadata is kept from 2.10).
nl stream-create FX_FULL_OK --subjects fx.full.ok --discard new \
  --max-msgs 3 --metadata nats_lens.full_ok=true
nl publish fx.full.ok --count 3
nl request '$JS.API.STREAM.LIST' '{"subject":"fx.full.>"}' \
  >"$OUT/stream_list_full.json"

# A push consumer held by its rate limit: RATED (8,000 bit/s, 1,000 B/s)
# while 10 messages a second of 100 bytes arrive, next to FAST (800,000
# bit/s) on the same stream, both subscribed; HDRS (headers only, 8,000
# bit/s, made with the API) has no subscriber. The file stream's
# max_msg_size of 1024 makes the limits' first burst 1,024 bytes. Eight
# polls 2 s apart: STREAM.LIST (this stream) and CONSUMER.LIST, one reply
# a line each, and the time each poll was sent (ns since 1970, this
# script's clock).
nl stream-create FX_RATE --subjects fx.rate --storage file \
  --max-msg-size 1024
nl consumer-create FX_RATE RATED --deliver-subject fx.dlv.rated \
  --rate-limit-bps 8000
nl consumer-create FX_RATE FAST --deliver-subject fx.dlv.fast \
  --rate-limit-bps 800000
nl request '$JS.API.CONSUMER.DURABLE.CREATE.FX_RATE.HDRS' \
  '{"stream_name":"FX_RATE","config":{"durable_name":"HDRS","deliver_subject":"fx.dlv.hdrs","deliver_policy":"all","ack_policy":"explicit","rate_limit_bps":8000,"headers_only":true}}'
RATE_PIDS=()
for c in RATED FAST; do
  nl consume FX_RATE "$c" --mode push --duration 18 >/dev/null &
  RATE_PIDS+=($!)
done
sleep 0.5
nl publish fx.rate --count 170 --rate 10 --size 100 >/dev/null &
RATE_PIDS+=($!)
BG_PIDS+=("${RATE_PIDS[@]}")
: >"$OUT/rate_polls.jsonl"
: >"$OUT/rate_polls_times.txt"
for _ in 1 2 3 4 5 6 7 8; do
  sleep 2
  date +%s%N >>"$OUT/rate_polls_times.txt"
  nl request '$JS.API.STREAM.LIST' '{"subject":"fx.rate"}' \
    >>"$OUT/rate_polls.jsonl"
  nl request '$JS.API.CONSUMER.LIST.FX_RATE' '{}' >>"$OUT/rate_polls.jsonl"
done
wait "${RATE_PIDS[@]}"
# Consumers the server deletes after an inactive_threshold: a durable with
# one and a filter, a consumer with a name and no durable name (the server
# stamps 5 s on it: listed at once, before it expires), and the API audit
# of a consumer deleted by a request (CONSUMER_EXPIRED is never raised for
# one). From 2.10 a stream's consumer_limits cap a consumer's threshold.
nl stream-create FX_IDLE --subjects 'fx.idle.>'
nl consumer-create FX_IDLE DUR --inactive-threshold 600 --filter fx.idle.a
nl consumer-create FX_IDLE EPH --ephemeral
nl request '$JS.API.CONSUMER.LIST.FX_IDLE' '{}' \
  >"$OUT/consumer_list_inactive.json"
case $VERSION in
  2.[0-9].*) ;;
  *)
    nl request '$JS.API.STREAM.CREATE.FX_CLIMIT' \
      '{"name":"FX_CLIMIT","subjects":["fx.climit"],"storage":"memory","consumer_limits":{"inactive_threshold":60000000000}}' \
      >/dev/null
    nl request '$JS.API.STREAM.LIST' '{"subject":"fx.climit"}' \
      >"$OUT/stream_list_consumer_limits.json"
    ;;
esac
nl consumer-create FX_LIMITS GONE
rec advisory_api_consumer_delete.json '$JS.EVENT.ADVISORY.API'
nl request '$JS.API.CONSUMER.DELETE.FX_LIMITS.GONE' '' >/dev/null
wait "${BG_PIDS[-1]}"

grep -E '\[(WRN|ERR|FTL)\]' "$DIR/server.log" >&2 || true
if grep -qE '\[(ERR|FTL)\]' "$DIR/server.log"; then
  echo "errors in the server log (above)" >&2
  exit 1
fi
echo "fixtures of nats-server $VERSION written to $OUT"
