#!/usr/bin/env bash
# CONSUMER_PAST_STREAM and STREAM_WENT_BACK on one server, file storage, 1 s polls
# (docs/detectors.md, CONSUMER_PAST_STREAM): a consumer whose delivered
# position lies beyond its stream's last sequence delivers nothing new.
#   PS/c    100 published, read and acked; the server is stopped, the
#           stream's message files are lost, it is started again: the
#           stream starts again at 0 while c keeps its place at 100. Found
#           (will_not_deliver 100), still found after 5 new messages, which
#           c does not receive (shown); its fix (c created again at the
#           stream's first sequence) is applied and read back, the finding
#           clears, and c receives the 5.
#           The stream is found gone back (STREAM_WENT_BACK, msgs_lost 100).
#   PK/c    the same on a stream whose files are kept: silent, observed.
# Port: NL_PORT_PAST_STREAM (default 15450).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin past_stream
PORT=$(nl_port NL_PORT_PAST_STREAM 15450)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
for s in PS PK; do
  sub=$(echo "$s" | tr 'A-Z' 'a-z')
  inj stream-create "$s" --subjects "$sub.>" --storage file &&
    inj consumer-create "$s" c --ack-wait 30 &&
    inj publish "$sub.x" --count 100 &&
    inj consume "$s" c --duration 2 --max-msgs 100 || {
    nl_fail setup/objects "stream $s not set up"
    exit 1
  }
done
nl_start_collectd "<Instance \"ps\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
polls() { nl_csv_rows ps duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 3

# The server stopped, PS's message files lost, the server started again.
kill "$NL_NATS_PID" && wait "$NL_NATS_PID" 2>/dev/null
rm -f "$NL_TMP/js-$PORT/jetstream/\$G/streams/PS/msgs/"*
nl_start_nats "$PORT" || exit 1
back_at=$(date +%s)
last=$(nl_inject "$PORT" request '$JS.API.STREAM.INFO.PS' '' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["state"]["last_seq"])')
nl_check setup/stream-went-back [ "$last" = 0 ]

if line=$(nl_wait_notification 30 "severity = FAILURE" \
  "type_instance = CONSUMER_PAST_STREAM," "PS/c:" "will_not_deliver=100,"); then
  nl_pass PS/c/detected "${line#*message = }"
  nl_latency PS/c "$back_at" "$line"
  echo "  counted PS/c: $(sed -n 's/.*will_not_deliver=\([0-9]*\).*/\1/p' <<<"$line") of 100"
else
  nl_fail PS/c/detected "no CONSUMER_PAST_STREAM for PS/c"
fi
inj publish ps.x --count 5
got=$("$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume PS c \
  --duration 2 --max-msgs 5 | sed -n 's/.*"received":\([0-9]*\).*/\1/p')
nl_check PS/c/receives-nothing [ "${got:-x}" = 0 ]
now=$(polls)
nl_retry 20 polled $((now + 2))
raised() { [ "$(nl_csv_int ps-PS nats_lens_consumer_past_stream c)" = 1 ]; }
nl_check PS/c/still-raised raised
if line=$(nl_wait_notification 10 "severity = FAILURE" \
  "type_instance = STREAM_WENT_BACK," "PS:" "msgs_lost=100,"); then
  nl_pass PS/went-back "${line#*message = }"
  nl_latency PS "$back_at" "$line"
  echo "  counted PS: $(sed -n 's/.*msgs_lost=\([0-9]*\).*/\1/p' <<<"$line") of 100"
else
  nl_fail PS/went-back "no STREAM_WENT_BACK for PS with msgs_lost=100"
fi
nl_check_silent PK/not-went-back PK: STREAM_WENT_BACK
nl_check_silent PK/c/silent PK/c: CONSUMER_PAST_STREAM
nl_check PK/c/observed nl_consumer_seen ps-PK c 0 0

fix=$(nl_notifications "PS/c:" | grep -F "type_instance = CONSUMER_PAST_STREAM," |
  head -n 1 | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
if readback=$(nl_apply_fix "$PORT" "$fix" 2>&1); then
  nl_pass PS/c/fix-applied "'$fix' read back: $(echo $readback)"
else
  nl_fail PS/c/fix-applied "'$fix' read back: $(echo $readback)"
fi
nl_check PS/c/fix-starts-at-1 grep -q "opt_start_seq=1\b" <<<"$readback"
if nl_wait_notification 20 "severity = OKAY" \
  "type_instance = CONSUMER_PAST_STREAM," "PS/c " >/dev/null; then
  nl_pass PS/c/cleared
else
  nl_fail PS/c/cleared "no OKAY after '$fix'"
fi
got=$("$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume PS c \
  --duration 3 --max-msgs 5 | sed -n 's/.*"received":\([0-9]*\).*/\1/p')
nl_check PS/c/delivered-after-fix [ "${got:-0}" = 5 ]
now=$(polls)
nl_retry 20 polled $((now + 3))
onsets=$(nl_notifications "PS/c:" |
  grep -F "type_instance = CONSUMER_PAST_STREAM," | grep -c "severity = FAILURE")
nl_check PS/c/stays-clear [ "$onsets" = 1 ]
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
