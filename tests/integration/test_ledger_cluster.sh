#!/usr/bin/env bash
# The delivery ledger on a real 3-node JetStream cluster (tests/lib.sh,
# nl_cluster_start), replicated streams and consumers (R3), polled by real
# collectd with all three seed URLs, 2 s polls (docs/detectors.md, "Every
# message accounted for"; the single-server side is test_ledger.sh):
#   SK/c    200 published, 50 read and acked; deleted, 20 more published,
#           created again at new messages: MESSAGES_SKIPPED, 170.
#   SA/c    the same, redeployed at its ack floor + 1 (nl-inject
#           consumer-redeploy): silent, observed.
#   TU      a work queue of "tu.*" whose one consumer takes tu.a, 7
#           messages on tu.c: MESSAGES_STRANDED, 7 on 1 subject. TX the
#           same with every subject taken: silent, observed.
#   DV/c    one message per subject, a consumer of every message that reads
#           nothing, 90 messages replaced: MESSAGES_DISCARDED, at most 90.
#           DV/w a watcher (ack none, last per subject): silent, observed.
#   DL/c    100 unread; 20 deleted from the middle, each followed by a new
#           message (num_pending never falls): SEQUENCE_GAP, at most 20.
#   UE/hold (nats-server 2.10 and later, whose MSG_TERMINATED advisories
#           give the reason) max_msgs 20; the worker holds 10 unacked and
#           20 more are published: SEQUENCE_GAP with unacked_evicted=10.
# Ports: NL_PORT_LEDGER_CLUSTER (default 15430..15438), HTTP 15440.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin ledger_cluster
BASE=$(nl_port NL_PORT_LEDGER_CLUSTER 15430) # 15430..15438
HTTP=$(nl_port NL_PORT_LEDGER_CLUSTER_HTTP 15440)
nl_cluster_start "$BASE" || exit 1
inj() { nl_inject "$(nl_cluster_client 1)" --timeout-ms 5000 "$@" >/dev/null; }
if ! nl_retry 30 inj stream-create SK --subjects 'sk.>' --replicas 3 2>/dev/null; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
if ! { inj stream-create SA --subjects 'sa.>' --replicas 3 &&
  for s in SK SA; do
    sub=$(echo "$s" | tr 'A-Z' 'a-z')
    inj consumer-create "$s" c --ack-wait 30 --replicas 3 &&
      inj publish "$sub.x" --count 200 &&
      inj consume "$s" c --duration 2 --max-msgs 50 || exit 1
  done &&
  inj stream-create TU --subjects 'tu.*' --retention workqueue --replicas 3 &&
  inj consumer-create TU a --filter tu.a --ack-wait 30 --replicas 3 &&
  inj publish tu.a --count 5 && inj publish tu.c --count 7 &&
  inj consume TU a --duration 2 --max-msgs 5 &&
  inj stream-create TX --subjects 'tx.a,tx.b' --retention workqueue \
    --replicas 3 &&
  inj consumer-create TX a --filter tx.a --ack-wait 30 --replicas 3 &&
  inj consumer-create TX b --filter tx.b --ack-wait 30 --replicas 3 &&
  inj publish tx.a --count 10 && inj publish tx.b --count 10 &&
  inj stream-create DV --subjects 'dv.>' --max-msgs-per-subject 1 \
    --replicas 3 &&
  inj consumer-create DV c --ack-wait 30 --deliver-policy all --replicas 3 &&
  inj consumer-create DV w --ack none --deliver-policy last_per_subject \
    --filter "dv.>" &&
  inj publish dv.keep --count 1 &&
  inj stream-create DL --subjects 'dl.>' --replicas 3 &&
  inj consumer-create DL c --ack-wait 30 --deliver-policy all --replicas 3 &&
  inj publish dl.x --count 100 &&
  inj stream-create UE --subjects 'ue.>' --max-msgs 20 --replicas 3 &&
  inj consumer-create UE hold --ack-wait 120 --max-ack-pending 100 \
    --replicas 3; }; then
  nl_fail setup/objects "streams or consumers not created"
  exit 1
fi

nl_start_collectd "<Instance \"lc\">
$(nl_cluster_url_lines)
  Timeout 5
  Listen \"127.0.0.1\" \"$HTTP\"
  StrandedSeconds 4
</Instance>" 2 || exit 1
polls() { nl_csv_rows lc duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 40 polled 3

for k in 1 2 3 4 5 6 7 8 9 10; do inj publish "dv.k$k" --count 10; done
dv_at=$(date +%s)
for seq in $(seq 10 29); do
  inj request "\$JS.API.STREAM.MSG.DELETE.DL" "{\"seq\":$seq}" &&
    inj publish dl.x --count 1
done
dl_at=$(date +%s)
held=false
if ! nl_server_older 2 10; then
  held=true
  inj publish ue.a --count 10 &&
    inj consume UE hold --duration 2 --no-ack --max-msgs 10
  now=$(polls)
  nl_retry 40 polled $((now + 2))
  inj publish ue.a --count 20
  ue_at=$(date +%s)
fi
inj consumer-delete SK c && inj publish sk.x --count 20 &&
  inj consumer-create SK c --ack-wait 30 --replicas 3 --deliver-policy new
sk_at=$(date +%s)
inj publish sa.x --count 20 && inj consumer-redeploy SA c

# wait_for NAME SEVERITY CLASS WHERE EVIDENCE [SINCE]: PASS NAME with the
# notification (40 s), and its latency after SINCE when given, or FAIL.
wait_for() {
  local line
  if line=$(nl_wait_notification 40 "severity = $2" "type_instance = $3," \
    "$4" "$5"); then
    nl_pass "$1" "${line#*message = }"
    [ -n "${6:-}" ] && nl_latency "$1" "$6" "$line"
  else
    nl_fail "$1" "no $2 $3 for $4 with $5"
  fi
}
wait_for SK/c/skipped FAILURE MESSAGES_SKIPPED "SK/c:" "skipped=170," "$sk_at"
wait_for TU/stranded WARNING MESSAGES_STRANDED "TU:" \
  "stranded=7, subjects=1,"
wait_for DV/c/discarded WARNING MESSAGES_DISCARDED "DV/c:" "discarded_total=" "$dv_at"
wait_for DL/c/lost FAILURE SEQUENCE_GAP "DL/c:" "lost_total=" "$dl_at"
dl=$(nl_csv_int lc-DL nats_lens_lost c)
echo "  counted DL/c: ${dl:-0} of 20"
nl_check DL/c/value [ "${dl:-0}" -ge 1 -a "${dl:-0}" -le 20 ]
if $held; then
  wait_for UE/hold/unacked FAILURE SEQUENCE_GAP "UE/hold:" "unacked_evicted=10" "$ue_at"
  echo "  counted UE/hold: $(nl_csv_int lc-UE nats_lens_lost hold) of 10"
fi
nl_check SK/c/value [ "$(nl_csv_int lc-SK nats_lens_skipped c)" = 170 ] &&
  echo "  counted SK/c: $(nl_csv_int lc-SK nats_lens_skipped c) of 170"
nl_check TU/value [ "$(nl_csv_int lc-TU nats_lens_stranded "")" = 7 ] &&
  echo "  counted TU: $(nl_csv_int lc-TU nats_lens_stranded "") of 7"
dv=$(nl_csv_int lc-DV nats_lens_discarded c)
echo "  counted DV/c: ${dv:-0} of 90"
nl_check DV/c/value [ "${dv:-0}" -ge 1 -a "${dv:-0}" -le 90 ]
nl_check DV/c/rest python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(
    "http://127.0.0.1:%s/api/streams" % sys.argv[1]))
c = [c for s in d["streams"] if s["name"] == "DV"
     for c in s.get("consumers", []) if c["name"] == "c"]
sys.exit(0 if c and 1 <= c[0]["discarded_total"] <= 90 else 1)' "$HTTP"

# The silent twins, observed a few polls after the re-creation.
now=$(polls)
nl_retry 40 polled $((now + 3))
nl_check_silent SA/c/silent SA/c MESSAGES_SKIPPED
nl_check SA/c/observed nl_consumer_seen lc-SA c 170 0
nl_check SA/c/nothing-skipped [ "$(nl_csv_int lc-SA nats_lens_skipped c)" = 0 ]
nl_check_silent TX/silent TX: MESSAGES_STRANDED
nl_check TX/observed [ "$(nl_csv_int lc-TX nats_lens_stranded "")" = 0 ]
nl_check TX/waiting [ "$(nl_csv_int lc-TX count messages)" = 20 ]
nl_check_silent DV/w/silent DV/w MESSAGES_DISCARDED
nl_check DV/w/observed nl_consumer_seen lc-DV w '[0-9]+' 0
nl_check DV/w/nothing-discarded \
  [ "$(nl_csv_int lc-DV nats_lens_discarded w)" = 0 ]
nl_check_silent DV/c/no-gap DV/c: SEQUENCE_GAP
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
