#!/usr/bin/env bash
# Delivered but unacked messages that the stream's limits remove are lost
# (nats-server 2.10.4+ says so in the MSG_TERMINATED reason), and the
# healthy look-alikes stay silent. On one server, 1 s polls:
#   UE/hold   max_msgs 20; the worker holds messages 1-10 unacked (ack_wait
#             120 s), 20 more are published, so max_msgs removes 1-10:
#             SEQUENCE_GAP with unacked_evicted=10 and a max_msgs fix. The
#             fix is applied, read back, and the finding clears and stays
#             clear while the worker holds 10 more and 20 more are
#             published.
#   KV/w      max_msgs_per_subject 1 (a key-value bucket): the worker
#             holds the first values of five keys and the keys are
#             updated; the server sends the same reason and the stream's
#             first sequence passes them, but a newer value replaced each:
#             silent. KV/r reads nothing while the keys are updated: no
#             loss either, but it wants every message (deliver all,
#             explicit ack) and will never process the five replaced
#             values: MESSAGES_DISCARDED with exactly 5 (the ledger).
#   FT/w      a client +TERM of five messages with the server's reason
#             text ("Unacknowledged message was deleted"): the messages
#             stay stored, silent. FTW/w the same on a work queue, where
#             the +TERM removes them: no limit did, silent.
# Each silent one is observed: its advisories arrived (recorded here
# from the server), the plugin read its pending counts, and it counts no
# lost message. Runs on the nats-server of the run when it is 2.10 or
# later, else on the 2.10.16 build of the version matrix (NL_SERVER_BUILDS,
# tests/nats_server.sh).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_at_least 2 10 2.10.16
. "$(dirname "$0")/../lib.sh"
nl_begin unacked_evicted
nl_server_check 2 10 2.10.16 || exit 0
PORT=$(nl_port NL_PORT_UNACKED_EVICTED 14980)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
# terminated STREAM COUNT COMMAND...: runs the command while recording
# COUNT MSG_TERMINATED advisories of STREAM into $NL_TMP/STREAM.term.
terminated() {
  local stream=$1 count=$2 rec
  shift 2
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" record \
    "\$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.$stream.>" --count "$count" \
    --duration 15 --out "$NL_TMP/$stream.term" >/dev/null 2>&1 &
  rec=$!
  sleep 0.3
  "$@"
  wait "$rec"
}
# reasons STREAM: the reasons of its recorded advisories, one a line.
reasons() {
  python3 -c 'import json,sys
for l in open(sys.argv[1]):
    if l.strip():
        print(json.loads(l).get("reason", ""))' "$NL_TMP/$1.term" 2>/dev/null
}
inj stream-create UE --subjects 'ue.>' --max-msgs 20 &&
  inj consumer-create UE hold --ack-wait 120 --max-ack-pending 100 &&
  inj stream-create KV --subjects 'kv.>' --max-msgs-per-subject 1 &&
  inj consumer-create KV w --ack-wait 120 &&
  inj consumer-create KV r --ack-wait 120 &&
  inj stream-create FT --subjects 'ft.>' --max-msgs 20 &&
  inj consumer-create FT w --ack-wait 120 &&
  inj stream-create FTW --subjects 'ftw.>' --retention workqueue &&
  inj consumer-create FTW w --ack-wait 120 || {
  nl_fail setup/objects "streams or consumers not created"
  exit 1
}
nl_start_collectd "<Instance \"ue\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
polls() { nl_csv_rows ue duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 2

# The messages are held before the plugin sees the removals.
inj publish ue.a --count 10
inj consume UE hold --duration 2 --no-ack --max-msgs 10
for k in 1 2 3 4 5; do inj publish "kv.k$k" --count 1; done
inj consume KV w --duration 2 --no-ack --max-msgs 5
inj publish ft.a --count 5
inj publish ftw.a --count 5
now=$(polls)
nl_retry 20 polled $((now + 2))

terminated UE 10 inj publish ue.a --count 20
terminated KV 5 eval 'for k in 1 2 3 4 5; do inj publish "kv.k$k" --count 1; done'
terminated FT 5 inj consume FT w --duration 2 --max-msgs 5 --term-seq-mod 1 \
  --term-reason "Unacknowledged message was deleted"
terminated FTW 5 inj consume FTW w --duration 2 --max-msgs 5 --term-seq-mod 1 \
  --term-reason "Unacknowledged message was deleted"
for s in UE KV FT FTW; do
  echo "# $s: $(reasons "$s" | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
done
nl_check setup/ue-terminated [ "$(reasons UE | grep -c 'Unacknowledged message was deleted')" = 10 ]
nl_check setup/kv-terminated [ "$(reasons KV | grep -c 'Unacknowledged message was deleted')" = 5 ]
nl_check setup/ft-terminated [ "$(reasons FT | grep -c 'Unacknowledged message was deleted')" = 5 ]
nl_check setup/ftw-terminated [ "$(reasons FTW | grep -c 'Unacknowledged message was deleted')" = 5 ]

# UE/hold: found, with the unacked messages counted.
if line=$(nl_wait_notification 20 "severity = FAILURE" \
  "type_instance = SEQUENCE_GAP," "UE/hold:"); then
  if echo "$line" | grep -q "unacked_evicted=10"; then
    nl_pass ue/detected "$(echo "$line" | sed 's/.*message = //')"
  else
    nl_fail ue/detected "no unacked_evicted=10: $line"
  fi
else
  nl_fail ue/detected "no SEQUENCE_GAP for UE/hold"
fi

# Three polls after the removals, the look-alikes are silent, observed.
now=$(polls)
nl_retry 20 polled $((now + 3))
silent() { # STREAM CONSUMER PENDING ACK_PENDING
  local lc
  lc=$(echo "$1-$2" | tr 'A-Z' 'a-z')
  nl_check_silent "$lc/silent" "$1/$2" SEQUENCE_GAP
  nl_check "$lc/observed" nl_consumer_seen "ue-$1" "$2" "$3" "$4"
}
silent KV w 5 0
silent KV r 5 0
silent FT w 0 0
nl_check kv-r/discarded [ "$(nl_csv_int ue-KV nats_lens_discarded r)" = 5 ]
nl_check kv-w/not-discarded [ "$(nl_csv_int ue-KV nats_lens_discarded w)" = 0 ]
nl_check kv-r/discarded-finding nl_wait_notification 5 "severity = WARNING" \
  "type_instance = MESSAGES_DISCARDED," "KV/r:" "discarded_total=5,"
silent FTW w 0 0
nl_check setup/advisories-read nl_csv_seen_since ue derive advisories 0 ">= 25"

# The fix: applied, read back, and the finding clears and stays clear
# while the worker holds 10 more and 20 more are published.
fix=$(nl_notifications "UE/hold:" | grep -F "type_instance = SEQUENCE_GAP," |
  head -n 1 | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
if readback=$(nl_apply_fix "$PORT" "$fix" 2>&1); then
  nl_pass ue/fix-applied "'$fix' read back: $(echo $readback)"
else
  nl_fail ue/fix-applied "'$fix' read back: $(echo $readback)"
fi
if nl_wait_notification 20 "severity = OKAY" "type_instance = SEQUENCE_GAP," \
  "UE/hold " >/dev/null; then
  nl_pass ue/cleared
else
  nl_fail ue/cleared "no OKAY after '$fix'"
fi
inj consume UE hold --duration 2 --no-ack --max-msgs 10
inj publish ue.a --count 20
now=$(polls)
nl_retry 30 polled $((now + 10))
onsets=$(nl_notifications "UE/hold:" | grep -F "type_instance = SEQUENCE_GAP," |
  grep -c "severity = FAILURE")
nl_check ue/stays-clear [ "$onsets" = 1 ]
nl_check ue/holding [ "$(nl_csv_int ue-UE nats_lens_num_ack_pending hold)" = 10 ]
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
