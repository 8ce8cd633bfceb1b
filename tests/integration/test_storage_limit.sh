#!/usr/bin/env bash
# STORAGE_LIMIT_RISK and STORAGE_LIMIT_REACHED on one server whose
# configuration gives account A a JetStream file storage limit of
# 1,000,000 bytes (accounts { A: { jetstream: { max_file: ... } } }), 1 s
# polls (docs/detectors.md):
#   GROW  filled with 380 messages of 1000 bytes, then a steady publisher
#         (10 a second, at most 800) fills the account: the forecast is
#         found before the first refused publish, then the limit once
#         publishes are refused (the publisher's error 10002 is checked);
#         its printed fix command (a max_bytes cap) is applied, read back,
#         a publish is taken again and the finding clears.
#   CAP   in the same account, capped by its own max_bytes 40,000 and
#         published to at 2 a second while GROW fills the account: it
#         discards its oldest first, no forecast on it.
#   FLAT  account B (limit 300,000) holding 270,000 bytes that do not grow:
#         silent, observed.
# With NL_STORAGE_CLUSTER=1 (test_storage_limit_cluster.sh) the same on a
# 3-node cluster (tests/lib.sh, nl_cluster_start) with the accounts on
# every node, R1 streams, collectd given the three seed URLs.
# Ports: NL_PORT_STORAGE_LIMIT (default 15900), or for the cluster
# NL_PORT_STORAGE_LIMIT_CLUSTER (default 15910..15918).
set -u
. "$(dirname "$0")/../lib.sh"
ACCOUNTS='no_auth_user: a
accounts {
  A: { jetstream: { max_file: 1000000, max_mem: 0 }, users: [{user: a, password: a}] }
  B: { jetstream: { max_file: 300000, max_mem: 0 }, users: [{user: b, password: b}] }
}'
if [ -n "${NL_STORAGE_CLUSTER:-}" ]; then
  nl_begin storage_limit_cluster
  NL_CLUSTER_EXTRA=$ACCOUNTS
  nl_cluster_start "$(nl_port NL_PORT_STORAGE_LIMIT_CLUSTER 15910)" || exit 1
  PORT=$(nl_cluster_client 1)
  SEEDS=$(nl_cluster_url_lines)
else
  nl_begin storage_limit
  PORT=$(nl_port NL_PORT_STORAGE_LIMIT 15900)
  printf 'listen: 127.0.0.1:%s\njetstream { store_dir: "%s" }\n%s\n' \
    "$PORT" "$NL_TMP/js" "$ACCOUNTS" >"$NL_TMP/server.conf"
  nl_start_server nats "$PORT" -c "$NL_TMP/server.conf" || exit 1
  SEEDS="  URL \"nats://127.0.0.1:$PORT\""
fi
inj() { nl_inject "$PORT" "$@" >/dev/null; }
injb() { "$NL_INJECT" --server "nats://b:b@127.0.0.1:$PORT" "$@" >/dev/null; }
# A cluster answers once its meta leader is elected.
nl_retry 30 inj stream-create GROW --subjects 'grow.>' --storage file &&
  inj publish grow.x --count 380 --size 1000 &&
  inj stream-create CAP --subjects 'cap.>' --storage file --max-bytes 40000 &&
  inj publish cap.x --count 60 --size 1000 &&
  injb stream-create FLAT --subjects 'flat.>' --storage file &&
  injb publish flat.x --count 260 --size 1000 || {
  nl_fail setup "streams not created and filled"
  exit 1
}
nl_start_collectd "<Instance \"sa\">
$SEEDS
</Instance>
<Instance \"sb\">
  URL \"nats://b:b@127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
nl_check setup/polled nl_retry 20 nl_polled sa 2
start_s=$(date +%s) # The steady publisher starts.
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" publish grow.x --count 800 \
  --rate 10 --size 1000 --keep-going >"$NL_TMP/grow.out" 2>&1 &
grow_pid=$!
NL_PIDS+=("$grow_pid")
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" publish cap.x --count 120 \
  --rate 2 --size 1000 --keep-going >/dev/null 2>&1 &
NL_PIDS+=($!)

# refused: the publisher has seen its first refusal (error 10002).
refused() { grep -q 'err_code 10002' "$NL_TMP/grow.out"; }
if line=$(nl_wait_notification 80 "severity = WARNING" \
  "type_instance = STORAGE_LIMIT_RISK," "stream GROW:"); then
  if refused; then
    nl_fail GROW/forecast-before-refusal "refused before: $line"
  else
    nl_pass GROW/forecast-before-refusal "${line#*message = }"
  fi
  nl_latency GROW/forecast "$start_s" "$line"
else
  nl_fail GROW/forecast-before-refusal "no STORAGE_LIMIT_RISK for GROW"
fi
nl_check_silent CAP/silent "stream CAP:" STORAGE_LIMIT_RISK
nl_check GROW/refused nl_retry 60 refused
refused_at=$(date +%s)
if line=$(nl_wait_notification 30 "severity = FAILURE" \
  "type_instance = STORAGE_LIMIT_REACHED," "stream GROW:" \
  "fix: nats stream edit GROW --max-bytes "); then
  nl_pass GROW/reached "${line#*message = }"
  nl_latency GROW/reached "$refused_at" "$line"
else
  nl_fail GROW/reached "no STORAGE_LIMIT_REACHED with a fix for GROW"
  line=
fi
kill "$grow_pid" 2>/dev/null
fix=$(sed -n 's/.*fix: \(nats stream edit GROW --max-bytes [0-9]*\).*/\1/p' \
  <<<"$line")
if [ -n "$fix" ] && nl_apply_fix "$PORT" "$fix"; then
  nl_pass GROW/fix-applied "$fix, read back"
else
  nl_fail GROW/fix-applied "${fix:-no command}"
fi
nl_check GROW/publish-taken inj publish grow.x --count 5 --size 1000
if nl_wait_notification 15 "severity = OKAY" \
  "type_instance = STORAGE_LIMIT_REACHED," "stream GROW" >/dev/null; then
  nl_pass GROW/cleared
else
  nl_fail GROW/cleared "no OKAY after the fix"
fi
nl_check_silent FLAT/silent-risk "stream FLAT" STORAGE_LIMIT_RISK
nl_check_silent FLAT/silent-reached "stream FLAT" STORAGE_LIMIT_REACHED
nl_check FLAT/observed nl_polled sb 20
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
