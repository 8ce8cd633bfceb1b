#!/usr/bin/env bash
# CONSUMER_PAST_STREAM and STREAM_WENT_BACK on a real 3-node JetStream cluster (tests/lib.sh,
# nl_cluster_start), polled by real collectd with all three seed URLs, 2 s
# polls (docs/detectors.md, CONSUMER_PAST_STREAM; the single-server side
# is test_past_stream.sh):
#   PS/c    an R1 stream of 100 messages read and acked by c; the node
#           that holds it is killed, the stream's message files are lost,
#           the node is started again: the stream starts again at 0 while c
#           keeps its place. Found (will_not_deliver 100); its fix is
#           applied and read back, and the finding clears.
#           The stream is found gone back (STREAM_WENT_BACK, msgs_lost 100).
#   PK/c    an R3 stream of 100 messages read and acked, over the same
#           kill and restart with its files kept: silent, observed.
# Ports: NL_PORT_PAST_STREAM_CLUSTER (default 15460..15468).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin past_stream_cluster
BASE=$(nl_port NL_PORT_PAST_STREAM_CLUSTER 15460)
nl_cluster_start "$BASE" || exit 1
inj() { nl_inject "$(nl_cluster_client "$O")" --timeout-ms 5000 "$@" >/dev/null; }
O=1
if ! nl_retry 30 inj stream-create PS --subjects 'ps.>' --replicas 1 \
  --storage file 2>/dev/null; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
# The node holding PS, and one that stays up.
L=$(nl_inject "$(nl_cluster_client 1)" request '$JS.API.STREAM.INFO.PS' '' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["leader"][1:])')
case "$L" in 1 | 2 | 3) ;; *)
  nl_fail setup/leader "no leader for PS: $L"
  exit 1
  ;;
esac
O=$((L % 3 + 1))
if ! { inj consumer-create PS c --ack-wait 30 &&
  inj publish ps.x --count 100 &&
  inj consume PS c --duration 2 --max-msgs 100 &&
  inj stream-create PK --subjects 'pk.>' --replicas 3 --storage file &&
  inj consumer-create PK c --ack-wait 30 --replicas 3 &&
  inj publish pk.x --count 100 &&
  inj consume PK c --duration 2 --max-msgs 100; }; then
  nl_fail setup/objects "streams or consumers not created"
  exit 1
fi
nl_start_collectd "<Instance \"pc\">
$(nl_cluster_url_lines)
  Timeout 5
</Instance>" 2 || exit 1
polls() { nl_csv_rows pc duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 40 polled 3
nl_check setup/pk-observed nl_consumer_seen pc-PK c 0 0

nl_cluster_node_kill "$L"
rm -f "$NL_TMP/js-n$L/jetstream/\$G/streams/PS/msgs/"*
nl_cluster_node_start "$L" || exit 1
back_at=$(date +%s)
if line=$(nl_wait_notification 60 "severity = FAILURE" \
  "type_instance = CONSUMER_PAST_STREAM," "PS/c:" "will_not_deliver=100,"); then
  nl_pass PS/c/detected "${line#*message = }"
  nl_latency PS/c "$back_at" "$line"
  echo "  counted PS/c: $(sed -n 's/.*will_not_deliver=\([0-9]*\).*/\1/p' <<<"$line") of 100"
else
  nl_fail PS/c/detected "no CONSUMER_PAST_STREAM for PS/c"
fi
now=$(polls)
nl_retry 40 polled $((now + 3))
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
nl_check PK/c/observed nl_consumer_seen pc-PK c 0 0
fix=$(nl_notifications "PS/c:" | grep -F "type_instance = CONSUMER_PAST_STREAM," |
  head -n 1 | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
if readback=$(nl_apply_fix "$(nl_cluster_client "$O")" "$fix" 2>&1); then
  nl_pass PS/c/fix-applied "'$fix' read back: $(echo $readback)"
else
  nl_fail PS/c/fix-applied "'$fix' read back: $(echo $readback)"
fi
if nl_wait_notification 30 "severity = OKAY" \
  "type_instance = CONSUMER_PAST_STREAM," "PS/c " >/dev/null; then
  nl_pass PS/c/cleared
else
  nl_fail PS/c/cleared "no OKAY after '$fix'"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
