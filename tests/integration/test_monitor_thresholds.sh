#!/usr/bin/env bash
# CONSUMER_THRESHOLD and STREAM_THRESHOLD on one server, 1 s polls,
# ClearHoldSeconds 3 (docs/detectors.md): the thresholds a team set for
# natscli's checks (metadata io.nats.monitor.*), judged as natscli judges
# them. Objects are created through the JetStream API with their metadata
# in the JSON configuration (nl-inject).
#   TS      msgs-critical=3, empty: critical (natscli's message thresholds
#           are minimums); 5 messages published: cleared; purged: raised
#           again.
#   TW      msgs-warn=3, empty: a warning; 4 messages: cleared.
#   TN      no metadata, empty: silent (observed).
#   TC/c    ack_wait 2 s, enabled=true, unprocessed-critical=20,
#           outstanding-ack-critical=5: 30 messages waiting: critical
#           (num_pending 30); all read and acked: cleared; 6 read and not
#           acked: critical again (num_ack_pending 6); read again and acked
#           after their redelivery: cleared.
#   TC/t    its twin without metadata, 36 messages waiting: silent.
#   TC/bad  unprocessed-critical=lots: a warning naming the key and value.
# On nats-server 2.9 (no metadata on streams or consumers: the server drops
# it) TS and TC/c are created with the same JSON and the plugin stays
# silent.
# Port: NL_PORT_MONITOR_THRESHOLDS (default 15520).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin monitor_thresholds
PORT=$(nl_port NL_PORT_MONITOR_THRESHOLDS 15520)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
M=io.nats.monitor
# req SUBJECT JSON: a raw JetStream API request; fails on an error reply.
req() {
  nl_inject "$PORT" request "$1" "$2" | python3 -c \
    'import json,sys; sys.exit(1 if "error" in json.load(sys.stdin) else 0)'
}
if nl_server_older 2 10; then
  # nats-server 2.9 takes the same JSON and drops the metadata.
  req '$JS.API.STREAM.CREATE.TS' '{"name":"TS","subjects":["ts.>"],
    "storage":"file","metadata":{"'$M'.msgs-critical":"3"}}' &&
    req '$JS.API.STREAM.CREATE.TC' '{"name":"TC","subjects":["tc.>"],
    "storage":"file"}' &&
    req '$JS.API.CONSUMER.DURABLE.CREATE.TC.c' '{"stream_name":"TC",
    "config":{"durable_name":"c","ack_policy":"explicit","ack_wait":2000000000,
    "metadata":{"'$M'.unprocessed-critical":"20"}}}'
else
  inj stream-create TS --subjects 'ts.>' --metadata "$M.msgs-critical=3" &&
    inj stream-create TW --subjects 'tw.>' --metadata "$M.msgs-warn=3" &&
    inj stream-create TN --subjects 'tn.>' &&
    inj stream-create TC --subjects 'tc.>' &&
    inj consumer-create TC c --ack-wait 2 --metadata "$M.enabled=true" \
      --metadata "$M.unprocessed-critical=20" \
      --metadata "$M.outstanding-ack-critical=5" &&
    inj consumer-create TC t --ack-wait 2 &&
    inj consumer-create TC bad --ack-wait 2 \
      --metadata "$M.unprocessed-critical=lots"
fi || {
  nl_fail setup/objects "streams or consumers not created"
  nl_end
  exit
}
kept=$(nl_inject "$PORT" request '$JS.API.CONSUMER.INFO.TC.c' |
  python3 -c 'import json,sys; print(len(json.load(sys.stdin)["config"].get("metadata",{})))')
nl_start_collectd "<Instance \"mt\">
  URL \"nats://127.0.0.1:$PORT\"
  ClearHoldSeconds 3
</Instance>" 1 || exit 1
polls() { nl_csv_rows mt duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 2

if nl_server_older 2 10; then
  # The server keeps no metadata: nothing to honour.
  nl_check old-server/metadata-dropped [ "${kept:-x}" = 0 ]
  inj publish tc.x --count 30
  now=$(polls)
  nl_retry 20 polled $((now + 4))
  nl_check TC/c/backlog [ "$(nl_csv_int mt-TC nats_lens_num_pending c)" = 30 ]
  nl_check_silent TS/silent TS: STREAM_THRESHOLD
  nl_check_silent TC/c/silent TC/c: CONSUMER_THRESHOLD
  nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
  nl_end
  exit
fi
nl_check setup/metadata-kept [ "${kept:-0}" -ge 3 ]

# raised LEVEL WHO CLASS TEXT [SINCE]: waits (15 s) for an onset of CLASS
# about WHO ("S:" or "S/C:") at LEVEL whose message holds TEXT; PASS
# WHO/raised, with its latency from SINCE (epoch seconds) when given.
raised() {
  local line
  if line=$(nl_wait_notification 15 "severity = $1" "type_instance = $3," \
    "$2" "$4"); then
    nl_pass "${2%:}/raised-$1" "${line#*message = }"
    [ -n "${5:-}" ] && nl_latency "${2%:}" "$5" "$line"
  else
    nl_fail "${2%:}/raised-$1" "no $3 $1 for $2 with '$4'"
  fi
}
# cleared N WHO CLASS: waits (20 s) until CLASS about WHO ("S " or "S/C ")
# has N OKAY notifications; PASS WHO/cleared-N.
cleared() {
  local i n
  for ((i = 0; i < 100; i++)); do
    n=$(nl_notifications "$2" | grep -F "type_instance = $3," |
      grep -c "severity = OKAY")
    [ "$n" -ge "$1" ] && break
    sleep 0.2
  done
  nl_check "${2% }/cleared-$1" [ "$n" -ge "$1" ]
}

raised FAILURE TS: STREAM_THRESHOLD "msgs_critical=3, messages=0"
raised WARNING TW: STREAM_THRESHOLD "msgs_warn=3, messages=0"
raised WARNING TC/bad: CONSUMER_THRESHOLD "unreadable_unprocessed_critical=1"
crossed_at=$(date +%s)
inj publish ts.x --count 5 && inj publish tw.x --count 4 && inj publish tc.x --count 30
raised FAILURE TC/c: CONSUMER_THRESHOLD "unprocessed_critical=20, num_pending=30" \
  "$crossed_at"
cleared 1 "TS " STREAM_THRESHOLD
# TS purged: below its minimum again, raised again.
purged_at=$(date +%s)
nl_inject "$PORT" request '$JS.API.STREAM.PURGE.TS' '' >/dev/null
again() {
  [ "$(nl_notifications "TS:" | grep -F "type_instance = STREAM_THRESHOLD," |
    grep -c "severity = FAILURE")" -ge 2 ]
}
if nl_retry 15 again; then
  nl_pass TS/raised-again
  nl_latency TS "$purged_at" "$(nl_notifications "TS:" |
    grep -F "type_instance = STREAM_THRESHOLD," | grep "severity = FAILURE" |
    tail -n 1)"
else
  nl_fail TS/raised-again "no second STREAM_THRESHOLD after the purge"
fi
cleared 1 "TW " STREAM_THRESHOLD
inj consume TC c --duration 5 --max-msgs 30
cleared 1 "TC/c " CONSUMER_THRESHOLD
inj publish tc.x --count 6
inj consume TC c --duration 2 --max-msgs 6 --no-ack
raised2() {
  [ "$(nl_notifications "TC/c:" | grep -F "type_instance = CONSUMER_THRESHOLD," |
    grep -F "severity = FAILURE" | grep -c "outstanding_ack_critical=5, num_ack_pending=6")" -ge 1 ]
}
nl_check TC/c/raised-again nl_retry 15 raised2
# After ack_wait (2 s) the six are redelivered; read and acked, it clears.
sleep 2
inj consume TC c --duration 4 --max-msgs 6
cleared 2 "TC/c " CONSUMER_THRESHOLD

nl_check TC/t/observed [ "$(nl_csv_int mt-TC nats_lens_num_pending t)" = 36 ]
nl_check_silent TC/t/silent TC/t: CONSUMER_THRESHOLD
nl_check TN/observed [ -n "$(nl_csv_file mt-TN nats_lens_stream_threshold)" ]
nl_check_silent TN/silent TN: STREAM_THRESHOLD
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
