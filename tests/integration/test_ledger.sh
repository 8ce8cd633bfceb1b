#!/usr/bin/env bash
# The delivery ledger on one server: every kind of message a consumer will
# never process is found, with its silent twins, on a real nats-server,
# 1 s polls (docs/detectors.md, "Every message accounted for").
#
# Skipped (MESSAGES_SKIPPED). Each stream holds 200 messages of which the
# consumer c read and acked 50 before the plugin's first poll:
#   SK/c    deleted, 20 more published, created again at new messages
#           (deliver policy new) at once: 170 skipped (51-220). Its fix
#           (the consumer created again at 51) is applied, read back, and
#           the finding clears; the consumer then receives the 170.
#   SD/c    the same, created again three polls after it was deleted.
#   SA/c    created again where it had acknowledged (by_start_sequence
#           51): silent. SL/c created again with deliver policy all:
#           silent. SF/fresh a new consumer at new messages beside a
#           backlog, with no predecessor: silent. SW/c a work queue's
#           consumer created again: silent. SV/w a watcher (ack none,
#           last per subject) created again at new messages: silent.
# Each silent one is observed: the plugin read it after its re-creation
# with the backlog it has, and counts nothing skipped.
#
# Stranded (MESSAGES_STRANDED, StrandedSeconds 3):
#   TU      a work queue of "tu.*" whose one consumer takes tu.a, with 5
#           messages on tu.a (read) and 7 on tu.c: 7 stranded on 1
#           subject; a consumer taking tu.c is created and it clears.
#   TN      a work queue holding 10 messages with no consumer: 10.
#   TC      a work queue of "tc.*" whose consumers take tc.a and tc.b (no
#           one filter covers the stream's subject: its subject counts are
#           read), 10 waiting on each: silent. TX the same with the stream
#           on tx.a and tx.b (every subject covered): silent. TI an interest
#           stream whose consumer of ti.b was deleted with 6 unread: the
#           server drops them, silent.
# Each silent one is observed: its stranded value (0) written.
#
# Discarded (MESSAGES_DISCARDED). DV keeps one message per subject (a
# key-value bucket's shape), with one message on dv.keep first so every
# later removal is in the middle of the stream:
#   DV/c    deliver all, explicit ack, reads nothing: 10 messages on each
#           of dv.k1..dv.k10 replace 90 it never received. Found, with a
#           count no larger than the 90 (a lower bound: each interval's
#           margin is left out), the value and the REST field; SEQUENCE_GAP
#           stays silent. Its fix (max_msgs_per_subject raised) is applied
#           and read back; 5 more on each subject replace nothing it has not
#           received: the count stays and the finding clears.
#   DV/w    a watcher of the same stream (ack none, last per subject):
#           silent, observed.
#
# Removed unread from the middle of the stream (SEQUENCE_GAP). DL holds
# 100 messages its consumer c has not read; 20 of them (sequences 10-29)
# are deleted one by one, each followed by a new message, so num_pending
# never falls: found, with a count of at most 20 and no fix command (no
# limit removed them). DK/c had read and acked its 100 before the same
# deletes and publishes: silent, observed.
# Port: NL_PORT_LEDGER (default 15420).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin ledger
PORT=$(nl_port NL_PORT_LEDGER 15420)
HTTP=$(nl_port NL_PORT_LEDGER_HTTP 15425)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }

# backlog STREAM SUBJECT: 200 published, 50 read and acked by c.
backlog() {
  inj publish "$2" --count 200 &&
    inj consume "$1" c --duration 2 --max-msgs 50
}
if ! {
  for s in SK SD SA SL; do
    sub=$(echo "$s" | tr 'A-Z' 'a-z')
    inj stream-create "$s" --subjects "$sub.>" &&
      inj consumer-create "$s" c --ack-wait 30 &&
      backlog "$s" "$sub.x" || exit 1
  done
  inj stream-create SF --subjects 'sf.>' &&
    inj publish sf.x --count 200 &&
    inj stream-create SW --subjects 'sw.>' --retention workqueue &&
    inj consumer-create SW c --ack-wait 30 &&
    backlog SW sw.x &&
    inj stream-create SV --subjects 'sv.>' --max-msgs-per-subject 1 &&
    inj consumer-create SV w --ack none --deliver-policy last_per_subject --filter "sv.>" &&
    for k in 1 2 3 4 5; do inj publish "sv.k$k" --count 3 || exit 1; done
}; then
  nl_fail setup/objects "streams or consumers not created"
  exit 1
fi
if ! { inj stream-create TU --subjects 'tu.*' --retention workqueue &&
  inj consumer-create TU a --filter tu.a --ack-wait 30 &&
  inj publish tu.a --count 5 && inj publish tu.c --count 7 &&
  inj consume TU a --duration 2 --max-msgs 5 &&
  inj stream-create TN --subjects 'tn.*' --retention workqueue &&
  inj publish tn.a --count 10 &&
  inj stream-create TC --subjects 'tc.*' --retention workqueue &&
  inj consumer-create TC a --filter tc.a --ack-wait 30 &&
  inj consumer-create TC b --filter tc.b --ack-wait 30 &&
  inj publish tc.a --count 10 && inj publish tc.b --count 10 &&
  inj stream-create TX --subjects 'tx.a,tx.b' --retention workqueue &&
  inj consumer-create TX a --filter tx.a --ack-wait 30 &&
  inj consumer-create TX b --filter tx.b --ack-wait 30 &&
  inj publish tx.a --count 10 && inj publish tx.b --count 10 &&
  inj stream-create TI --subjects 'ti.*' --retention interest &&
  inj consumer-create TI a --filter ti.a --ack-wait 30 &&
  inj consumer-create TI b --filter ti.b --ack-wait 30 &&
  inj publish ti.a --count 4 && inj publish ti.b --count 6 &&
  inj consumer-delete TI b &&
  inj stream-create DV --subjects 'dv.>' --max-msgs-per-subject 1 &&
  inj consumer-create DV c --ack-wait 30 --deliver-policy all &&
  inj consumer-create DV w --ack none --deliver-policy last_per_subject \
    --filter "dv.>" &&
  inj publish dv.keep --count 1 &&
  inj stream-create DL --subjects 'dl.>' &&
  inj consumer-create DL c --ack-wait 30 --deliver-policy all &&
  inj publish dl.x --count 100 &&
  inj stream-create DK --subjects 'dk.>' &&
  inj consumer-create DK c --ack-wait 30 --deliver-policy all &&
  inj publish dk.x --count 100 &&
  inj consume DK c --duration 2 --max-msgs 100; }; then
  nl_fail setup/stranded-objects "streams or consumers not created"
  exit 1
fi

nl_start_collectd "<Instance \"lg\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
  StrandedSeconds 3
</Instance>" 1 || exit 1
polls() { nl_csv_rows lg duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 3

# DV: 90 messages replaced before DV/c received them.
for k in 1 2 3 4 5 6 7 8 9 10; do inj publish "dv.k$k" --count 10; done
dv_at=$(date +%s)

# DL, DK: 20 deleted from the middle, each followed by a new message.
for seq in $(seq 10 29); do
  for s in DL DK; do
    nl_inject "$PORT" request "\$JS.API.STREAM.MSG.DELETE.$s" "{\"seq\":$seq}" \
      >/dev/null
    inj publish "$(echo "$s" | tr 'A-Z' 'a-z').x" --count 1
  done
done
dl_at=$(date +%s)

# The re-creations: at once, or after three polls (SD).
inj consumer-delete SK c && inj publish sk.x --count 20 &&
  inj consumer-create SK c --ack-wait 30 --deliver-policy new
sk_at=$(date +%s)
inj consumer-delete SD c
inj consumer-delete SA c && inj publish sa.x --count 20 &&
  inj consumer-create SA c --ack-wait 30 --deliver-policy 51
inj consumer-delete SL c && inj publish sl.x --count 20 &&
  inj consumer-create SL c --ack-wait 30 --deliver-policy all
inj consumer-create SF fresh --ack-wait 30 --deliver-policy new
inj consumer-delete SW c && inj consumer-create SW c --ack-wait 30
inj consumer-delete SV w && inj publish sv.k1 --count 1 &&
  inj consumer-create SV w --ack none --deliver-policy last_per_subject --filter "sv.>"
now=$(polls)
nl_retry 20 polled $((now + 3))
inj publish sd.x --count 20 && inj consumer-create SD c --ack-wait 30 \
  --deliver-policy new

# found WHO COUNT: a MESSAGES_SKIPPED onset of WHO with skipped=COUNT.
found() {
  local line
  if line=$(nl_wait_notification 20 "severity = FAILURE" \
    "type_instance = MESSAGES_SKIPPED," "$1:"); then
    if grep -q "skipped=$2[,;]" <<<"$line"; then
      nl_pass "$1/detected" "${line#*message = }"
      [ "$1" = SK/c ] && nl_latency SK/c "$sk_at" "$line" &&
        echo "  counted SK/c: $2 of 170"
    else
      nl_fail "$1/detected" "not skipped=$2: ${line#*message = }"
    fi
  else
    nl_fail "$1/detected" "no MESSAGES_SKIPPED for $1"
  fi
}
# DL/c: removed unread from the middle, found; DK/c silent.
if line=$(nl_wait_notification 20 "severity = FAILURE" \
  "type_instance = SEQUENCE_GAP," "DL/c:"); then
  nl_pass DL/c/detected "${line#*message = }"
  nl_latency DL/c "$dl_at" "$line"
else
  nl_fail DL/c/detected "no SEQUENCE_GAP for DL/c"
fi
dl=$(nl_csv_int lg-DL nats_lens_lost c)
echo "  counted DL/c: ${dl:-0} of 20"
nl_check DL/c/value [ "${dl:-0}" -ge 1 -a "${dl:-0}" -le 20 ]
nl_check DL/c/no-fix eval "nl_notifications DL/c: |
  grep -F 'type_instance = SEQUENCE_GAP,' | grep -q 'fix: no command'"
nl_check DL/c/cause-named python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(
    "http://127.0.0.1:%s/api/violations" % sys.argv[1]))
f = [f for f in d["violations"] if f.get("stream_name") == "DL"
     and f.get("type") == "SEQUENCE_GAP"]
ok = f and "a purge or a message delete" in f[0]["description"]
if not ok:
    print([x.get("type") for x in d["violations"]], f and f[0]["description"])
sys.exit(0 if ok else 1)' "$HTTP"
nl_check_silent DK/c/silent DK/c: SEQUENCE_GAP
nl_check DK/c/observed nl_consumer_seen lg-DK c 20 0
nl_check DK/c/deleted [ "$(nl_csv_int lg-DK count messages)" = 100 ]

found SK/c 170
found SD/c 170
nl_check sk/value [ "$(nl_csv_int lg-SK nats_lens_skipped c)" = 170 ]
nl_check sk/rest python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(
    "http://127.0.0.1:%s/api/streams" % sys.argv[1]))
c = [c for s in d["streams"] if s["name"] == "SK"
     for c in s.get("consumers", []) if c["name"] == "c"]
sys.exit(0 if c and c[0]["skipped_total"] == 170 else 1)' "$HTTP"

# The silent twins, observed after their re-creation.
now=$(polls)
nl_retry 20 polled $((now + 3))
silent() { # WHO PENDING ACK_PENDING
  local stream=${1%/*} consumer=${1#*/}
  nl_check_silent "$1/silent" "$1" MESSAGES_SKIPPED
  nl_check "$1/observed" nl_consumer_seen "lg-$stream" "$consumer" "$2" "$3"
  nl_check "$1/nothing-skipped" \
    [ "$(nl_csv_int "lg-$stream" nats_lens_skipped "$consumer")" = 0 ]
}
silent SA/c 170 0
silent SL/c 220 0
silent SF/fresh 0 0
silent SW/c 150 0
silent SV/w 5 0

# Stranded: found with their counts; the silent ones observed.
stranded() { # STREAM COUNT SUBJECTS
  local line
  if line=$(nl_wait_notification 20 "severity = WARNING" \
    "type_instance = MESSAGES_STRANDED," "$1:"); then
    if grep -q "stranded=$2, subjects=$3," <<<"$line"; then
      nl_pass "$1/stranded" "${line#*message = }"
      echo "  counted $1: $2 of $2"
    else
      nl_fail "$1/stranded" "not stranded=$2, subjects=$3: ${line#*message = }"
    fi
  else
    nl_fail "$1/stranded" "no MESSAGES_STRANDED for $1"
  fi
  nl_check "$1/value" [ "$(nl_csv_int "lg-$1" nats_lens_stranded "")" = "$2" ]
}
stranded TU 7 1
stranded TN 10 1
for s in TC TX TI; do
  nl_check_silent "$s/silent" "$s:" MESSAGES_STRANDED
  nl_check "$s/observed" [ "$(nl_csv_int "lg-$s" nats_lens_stranded "")" = 0 ]
done
nl_check TC/waiting [ "$(nl_csv_int lg-TC count messages)" = 20 ]
nl_check TI/dropped [ "$(nl_csv_int lg-TI count messages)" = 4 ]
# TU: a consumer that takes tu.c, and it clears.
inj consumer-create TU c --filter tu.c --ack-wait 30
if nl_wait_notification 60 "severity = OKAY" \
  "type_instance = MESSAGES_STRANDED," "TU " >/dev/null; then
  nl_pass TU/cleared
else
  nl_fail TU/cleared "no OKAY once tu.c is taken"
fi
nl_check TU/value-after [ "$(nl_csv_int lg-TU nats_lens_stranded "")" = 0 ]

# Discarded: DV/c found with a count of at most 90; the watcher silent.
if line=$(nl_wait_notification 20 "severity = WARNING" \
  "type_instance = MESSAGES_DISCARDED," "DV/c:"); then
  nl_pass DV/c/detected "${line#*message = }"
  nl_latency DV/c "$dv_at" "$line"
  echo "  counted DV/c: $(nl_csv_int lg-DV nats_lens_discarded c) of 90"
else
  nl_fail DV/c/detected "no MESSAGES_DISCARDED for DV/c"
fi
dv=$(nl_csv_int lg-DV nats_lens_discarded c)
nl_check DV/c/value [ "${dv:-0}" -ge 1 -a "${dv:-0}" -le 90 ]
nl_check DV/c/rest python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(
    "http://127.0.0.1:%s/api/streams" % sys.argv[1]))
c = [c for s in d["streams"] if s["name"] == "DV"
     for c in s.get("consumers", []) if c["name"] == "c"]
sys.exit(0 if c and 1 <= c[0]["discarded_total"] <= 90 else 1)' "$HTTP"
nl_check_silent DV/c/no-gap DV/c: SEQUENCE_GAP
nl_check_silent DV/w/silent DV/w MESSAGES_DISCARDED
nl_check DV/w/observed nl_consumer_seen lg-DV w '[0-9]+' 0
nl_check DV/w/nothing-discarded \
  [ "$(nl_csv_int lg-DV nats_lens_discarded w)" = 0 ]
fix=$(nl_notifications "DV/c:" | grep -F "type_instance = MESSAGES_DISCARDED," |
  head -n 1 | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
if readback=$(nl_apply_fix "$PORT" "$fix" 2>&1); then
  nl_pass DV/c/fix-applied "'$fix' read back: $(echo $readback)"
else
  nl_fail DV/c/fix-applied "'$fix' read back: $(echo $readback)"
fi
dv=$(nl_csv_int lg-DV nats_lens_discarded c)
for k in 1 2 3 4 5 6 7 8 9 10; do inj publish "dv.k$k" --count 5; done
if nl_wait_notification 60 "severity = OKAY" \
  "type_instance = MESSAGES_DISCARDED," "DV/c " >/dev/null; then
  nl_pass DV/c/cleared
else
  nl_fail DV/c/cleared "no OKAY after '$fix'"
fi
now=$(polls)
nl_retry 20 polled $((now + 3))
nl_check DV/c/stored-after-fix [ "$(nl_csv_int lg-DV count messages)" = 61 ]
nl_check DV/c/count-stays [ "$(nl_csv_int lg-DV nats_lens_discarded c)" = "$dv" ]
onsets=$(nl_notifications "DV/c:" |
  grep -F "type_instance = MESSAGES_DISCARDED," | grep -c "severity = WARNING")
nl_check DV/c/stays-clear [ "$onsets" = 1 ]

# SK/c's fix: applied, read back, cleared; the skipped messages delivered.
fix=$(nl_notifications "SK/c:" | grep -F "type_instance = MESSAGES_SKIPPED," |
  head -n 1 | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
if readback=$(nl_apply_fix "$PORT" "$fix" 2>&1); then
  nl_pass sk/fix-applied "'$fix' read back: $(echo $readback)"
else
  nl_fail sk/fix-applied "'$fix' read back: $(echo $readback)"
fi
nl_check sk/fix-starts-at-51 grep -q "opt_start_seq=51" <<<"$readback"
if nl_wait_notification 20 "severity = OKAY" \
  "type_instance = MESSAGES_SKIPPED," "SK/c " >/dev/null; then
  nl_pass sk/cleared
else
  nl_fail sk/cleared "no OKAY after '$fix'"
fi
got=$("$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume SK c \
  --duration 3 --max-msgs 170 | sed -n 's/.*"received":\([0-9]*\).*/\1/p')
nl_check sk/delivered-after-fix [ "${got:-0}" = 170 ]
now=$(polls)
nl_retry 20 polled $((now + 5))
onsets=$(nl_notifications "SK/c:" | grep -F "type_instance = MESSAGES_SKIPPED," |
  grep -c "severity = FAILURE")
nl_check sk/stays-clear [ "$onsets" = 1 ]
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
