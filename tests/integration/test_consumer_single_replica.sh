#!/usr/bin/env bash
# CONSUMER_SINGLE_REPLICA on a real 3-node JetStream cluster (tests/lib.sh,
# nl_cluster_start) polled by real collectd loading the built plugin. On
# the file stream CSR (3 replicas, 5 messages, 3 acked by each durable):
#   CSR/one   num_replicas 1: raised on the first polls, once; its printed
#             fix (nats consumer edit CSR one --replicas 3) is applied,
#             read back, the server then lists 3 peers for it with its ack
#             floor kept, and the finding clears and stays clear;
#   CSR/mem   mem_storage: raised with no command (the nats CLI cannot
#             change it); the recommendation's way is taken: a durable
#             without mem_storage starting after mem's ack floor, and mem
#             removed: it clears ("consumer deleted").
# Silent, each observed: CSR/inherit (num_replicas 0), CSR/three
# (num_replicas 3), CSR/none (ack none, one replica), an ephemeral
# consumer as nats.go makes for an ordered read (made with the API), and
# real clients' consumers: a nats.go ordered consumer and a nats.go
# key-value watcher (bucket KV_CSRKV of 3 replicas), a nats.js ordered
# consumer; CSM/mem (mem_storage on a memory stream of 3 replicas).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin consumer_single_replica
BASE=$(nl_port NL_PORT_CONSUMER_SINGLE_REPLICA 15240) # BASE..BASE+8
INTERVAL=2
nl_cluster_start "$BASE" || exit 1
C1=$(nl_cluster_client 1)
inj() { nl_inject "$C1" --timeout-ms 5000 "$@" >/dev/null; }
# api SUBJECT BODY: a raw API request that must not answer with an error.
api() {
  nl_inject "$C1" --timeout-ms 5000 request "$1" "$2" |
    python3 -c 'import json, sys; sys.exit("error" in json.load(sys.stdin))'
}
if ! nl_retry 30 inj stream-create CSR --subjects 'csr.>' --replicas 3 \
  --storage file 2>/dev/null; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
setup() {
  inj stream-create CSM --subjects 'csm.>' --replicas 3 &&
    inj consumer-create CSR one --ack-wait 30 --replicas 1 &&
    inj consumer-create CSR mem --ack-wait 30 --memory &&
    inj consumer-create CSR inherit --ack-wait 30 &&
    inj consumer-create CSR three --ack-wait 30 --replicas 3 &&
    inj consumer-create CSR none --ack none --replicas 1 &&
    inj consumer-create CSM mem --ack-wait 30 --memory &&
    api '$JS.API.CONSUMER.CREATE.CSR' '{"stream_name":"CSR","config":{"deliver_subject":"dlv.csr.ordered","deliver_policy":"all","ack_policy":"none","replay_policy":"instant","flow_control":true,"idle_heartbeat":5000000000,"mem_storage":true,"num_replicas":1,"inactive_threshold":300000000000}}' &&
    api '$JS.API.STREAM.CREATE.KV_CSRKV' '{"name":"KV_CSRKV","subjects":["$KV.CSRKV.>"],"max_msgs_per_subject":5,"discard":"new","allow_rollup_hdrs":true,"deny_delete":true,"allow_direct":true,"num_replicas":3,"storage":"file","max_msgs":-1,"max_bytes":-1,"max_age":0,"max_msg_size":-1,"max_consumers":-1,"duplicate_window":120000000000}' &&
    inj publish csr.x --count 5 && inj publish csm.x --count 5 || return 1
  local c
  for c in one mem inherit three; do
    inj consume CSR "$c" --duration 3 --max-msgs 3 || return 1
  done
}
if ! setup; then
  nl_fail setup "could not create the streams and consumers"
  exit 1
fi

# The real clients' ordered consumers and key-value watcher, for 40 s.
mkdir -p "$NL_ROOT/build/eval"
MIXGO=$NL_ROOT/build/eval/nl-mix-go
if [ ! -x "$MIXGO" ]; then
  (cd "$NL_ROOT" && GO111MODULE=off GOPATH=/usr/share/gocode \
    GOCACHE="$NL_ROOT/build/eval/gocache" go build -o "$MIXGO" \
    ./tests/eval/mix/go) || nl_fail setup/go "nl-mix-go does not build"
fi
JSDIR=$NL_ROOT/tests/eval/injectors/js
if [ ! -d "$JSDIR/node_modules/nats" ]; then
  (cd "$JSDIR" && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    nl_fail setup/js "npm ci failed in $JSDIR"
fi
U=nats://127.0.0.1:$C1
declare -A CLIENT_PID=()
client() {
  local name=$1
  shift
  "$@" >"$NL_TMP/$name.out" 2>&1 &
  NL_PIDS+=($!)
  CLIENT_PID[$name]=$!
}
client go_ordered "$MIXGO" --server "$U" --pattern ordered --stream CSR \
  --subject csr.x --duration 40
client go_kv "$MIXGO" --server "$U" --pattern kv --bucket CSRKV --rate 2 \
  --duration 40
client js_ordered env NODE_PATH="$JSDIR/node_modules" node \
  "$NL_ROOT/tests/eval/mix/nl_mix.js" --server "$U" --pattern ordered \
  --stream CSR --duration 40

START=$(date +%s)
nl_start_collectd "<Instance \"cr\">
$(nl_cluster_url_lines)
  Timeout 5
</Instance>" "$INTERVAL" || exit 1

# expect CONSUMER EVIDENCE...: the finding, within two polls of the start.
expect() {
  local where=$1 line
  shift
  if line=$(nl_wait_notification $((2 * INTERVAL + 4)) "severity = WARNING" \
    "type_instance = CONSUMER_SINGLE_REPLICA" \
    "CONSUMER_SINGLE_REPLICA $where:" "$@"); then
    nl_pass "detected/$where" "${line#*message = }"
  else
    nl_fail "detected/$where" "no CONSUMER_SINGLE_REPLICA with $*"
  fi
}
expect CSR/one "fix: nats consumer edit CSR one --replicas 3" \
  "consumer_replicas=1"
expect CSR/mem "fix: no command, see the recommendation" "mem_storage=1"

# The look-alikes: polled, silent. The clients' consumers have names the
# server gives: every consumer of CSR and KV_CSRKV the plugin dispatched
# values for is counted.
sleep $((3 * INTERVAL))
polled() { ls "$NL_TMP/csv/nl-test/nats_lens-cr-$1/" 2>/dev/null |
  sed -n 's/^nats_lens_num_pending-\(.*\)-[0-9]\{4\}-[0-9]\{2\}-[0-9]\{2\}$/\1/p' |
  sort -u; }
csr=$(polled CSR)
for c in inherit three none; do
  if ! grep -qx "$c" <<<"$csr"; then
    nl_fail "look-alike/CSR/$c" "never polled"
  elif [ -n "$(nl_notifications "CONSUMER_SINGLE_REPLICA CSR/$c:")" ]; then
    nl_fail "look-alike/CSR/$c" \
      "$(nl_notifications "CONSUMER_SINGLE_REPLICA CSR/$c:")"
  else
    nl_pass "look-alike/CSR/$c" "polled, silent"
  fi
done
# The API-made ephemeral and the two ordered consumers of CSR, and the
# key-value watcher of KV_CSRKV.
others=$(grep -cvxE 'one|mem|inherit|three|none' <<<"$csr")
kv=$(polled KV_CSRKV | grep -c .)
if [ "$others" -ge 3 ] && [ "$kv" -ge 1 ] &&
  [ -z "$(nl_notifications CONSUMER_SINGLE_REPLICA | grep -vE 'CSR/(one|mem):')" ]; then
  nl_pass look-alike/ephemeral-ordered-kv \
    "$others ephemeral consumers of CSR and $kv of KV_CSRKV polled, silent"
else
  nl_fail look-alike/ephemeral-ordered-kv "$others of CSR ($(echo $csr)), \
$kv of KV_CSRKV; \
$(nl_notifications CONSUMER_SINGLE_REPLICA | grep -vE 'CSR/(one|mem):')"
fi
if grep -qx mem <<<"$(polled CSM)" && [ -z "$(nl_notifications "CSM/mem")" ]; then
  nl_pass look-alike/CSM/mem "mem_storage on a memory stream: polled, silent"
else
  nl_fail look-alike/CSM/mem "$(nl_notifications "CSM/mem")"
fi
for c in go_ordered go_kv js_ordered; do
  if kill -0 "${CLIENT_PID[$c]}" 2>/dev/null; then
    nl_pass "client/$c-running"
  else
    nl_fail "client/$c-running" "$(tail -n 3 "$NL_TMP/$c.out")"
  fi
done

# --- CSR/one: the printed fix ----------------------------------------------
cmd=$(nl_notifications "CSR/one:" | grep -o 'fix: nats consumer edit CSR one --replicas [0-9]*' |
  head -n 1)
if got=$(nl_apply_fix "$C1" "${cmd#fix: }"); then
  nl_pass fix-applied/CSR/one "${cmd#fix: }: read back $got"
else
  nl_fail fix-applied/CSR/one "'${cmd:-none printed}': read back ${got:-nothing}"
fi
# The server keeps it on three servers now, with its state: "PEERS FLOOR".
peers() {
  nl_inject "$C1" --timeout-ms 5000 info CSR one | python3 -c '
import json, sys
i = json.load(sys.stdin)
print(1 + len(i.get("cluster", {}).get("replicas") or []),
      i["ack_floor"]["stream_seq"])'
}
on_three() { [ "$(peers)" = "3 3" ]; }
if nl_retry 10 on_three; then
  nl_pass fix-state/CSR/one "3 servers, ack floor 3 kept"
else
  nl_fail fix-state/CSR/one "servers and ack floor: $(peers)"
fi
if nl_wait_notification 15 "severity = OKAY" \
  "type_instance = CONSUMER_SINGLE_REPLICA" \
  "CONSUMER_SINGLE_REPLICA CSR/one cleared" >/dev/null; then
  nl_pass cleared/CSR/one
else
  nl_fail cleared/CSR/one "no OKAY after the fix"
fi

# --- CSR/mem: the recommendation: a file-stored durable after its floor ----
rec=$(nl_notifications "CSR/mem:" | head -n 1)
api '$JS.API.CONSUMER.DURABLE.CREATE.CSR.mem_file' \
  '{"stream_name":"CSR","config":{"durable_name":"mem_file","deliver_policy":"by_start_sequence","opt_start_seq":4,"ack_policy":"explicit","ack_wait":30000000000,"replay_policy":"instant"}}' &&
  inj consumer-delete CSR mem ||
  nl_fail fix-applied/CSR/mem "could not create mem_file or remove mem"
if nl_wait_notification 15 "severity = OKAY" \
  "type_instance = CONSUMER_SINGLE_REPLICA" \
  "CONSUMER_SINGLE_REPLICA CSR/mem cleared: consumer deleted" >/dev/null; then
  nl_pass cleared/CSR/mem "replaced by CSR/mem_file (start sequence 4)"
else
  nl_fail cleared/CSR/mem "no OKAY after the replacement; ${rec:-}"
fi

# Clear and stay clear: two more polls, one onset each, none for mem_file.
sleep $((2 * INTERVAL + 1))
for c in one mem; do
  n=$(nl_notifications "CONSUMER_SINGLE_REPLICA CSR/$c:" | grep -c WARNING)
  nl_check "raised-once/CSR/$c" [ "$n" = 1 ]
done
nl_check look-alike/CSR/mem_file [ -z "$(nl_notifications "CSR/mem_file")" ]
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
echo "# $(($(date +%s) - START)) s from collectd's start" >&2
nl_end
