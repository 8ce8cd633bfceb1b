#!/usr/bin/env bash
# DELIVERY_STALLED on a real 3-node JetStream cluster (tests/lib.sh,
# nl_cluster_start), R3 streams and consumers, polled by real collectd with
# all three seed URLs, 2 s polls, StallMinSeconds 8 (docs/detectors.md,
# DELIVERY_STALLED; the single-server side is test_delivery_stalled.sh):
#   GN/c    10 messages a second for 40 s; its worker reads for 10 s, then
#           is gone: found (a warning, nobody asks), and cleared when a
#           worker reads again.
#   LE/c    the same publisher and a worker that reads throughout, while
#           the consumer's leadership is stepped down twice (an election
#           that takes a second or two): silent, observed delivering.
# Ports: NL_PORT_DELIVERY_STALLED_CLUSTER (default 15475..15483).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin delivery_stalled_cluster
BASE=$(nl_port NL_PORT_DELIVERY_STALLED_CLUSTER 15475)
nl_cluster_start "$BASE" || exit 1
URL="nats://127.0.0.1:$(nl_cluster_client 1)"
inj() { nl_inject "$(nl_cluster_client 1)" --timeout-ms 5000 "$@" >/dev/null; }
if ! nl_retry 30 inj stream-create GN --subjects 'gn.>' --replicas 3 2>/dev/null; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
inj stream-create LE --subjects 'le.>' --replicas 3 &&
  inj consumer-create GN c --ack-wait 30 --replicas 3 &&
  inj consumer-create LE c --ack-wait 30 --replicas 3 || {
  nl_fail setup/objects "streams or consumers not created"
  exit 1
}
nl_start_collectd "<Instance \"dc\">
$(nl_cluster_url_lines)
  Timeout 5
  StallMinSeconds 8
</Instance>" 2 || exit 1
polls() { nl_csv_rows dc duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 40 polled 2

bg() { "$NL_INJECT" --server "$URL" --timeout-ms 5000 "$@" >/dev/null 2>&1 & NL_PIDS+=($!); }
bg publish gn.x --count 400 --rate 10 --keep-going
bg publish le.x --count 400 --rate 10 --keep-going
bg consume LE c --duration 40
inj consume GN c --duration 10
gone_at=$(date +%s)
leader() {
  nl_inject "$(nl_cluster_client 1)" --timeout-ms 5000 request \
    '$JS.API.CONSUMER.INFO.LE.c' '' |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster"]["leader"])'
}
leaders=$(leader)
for i in 1 2; do
  sleep 5
  inj request '$JS.API.CONSUMER.LEADER.STEPDOWN.LE.c' ''
  sleep 2
  leaders="$leaders $(leader)"
done
echo "  LE/c leaders: $leaders"
nl_check setup/le-elections [ "$(tr ' ' '\n' <<<"$leaders" | uniq | wc -l)" -ge 2 ]
if line=$(nl_wait_notification 40 "severity = WARNING" \
  "type_instance = DELIVERY_STALLED," "GN/c:"); then
  nl_pass GN/c/detected "${line#*message = }"
  nl_latency GN/c "$gone_at" "$line"
else
  nl_fail GN/c/detected "no DELIVERY_STALLED for GN/c"
fi
now=$(polls)
nl_retry 40 polled $((now + 4))
nl_check_silent LE/c/silent LE/c: DELIVERY_STALLED
nl_check LE/c/delivered [ "$(nl_csv_int dc-LE nats_lens_delivered c)" -gt 100 ]
bg consume GN c --duration 10
if nl_wait_notification 60 "severity = OKAY" \
  "type_instance = DELIVERY_STALLED," "GN/c " >/dev/null; then
  nl_pass GN/c/cleared
else
  nl_fail GN/c/cleared "no OKAY once a worker reads again"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
