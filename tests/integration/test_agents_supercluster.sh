#!/usr/bin/env bash
# One collectd agent per NATS server (Scope "server") on a super-cluster and
# a leaf node, each agent reading only its own server through
# $SYS.REQ.SERVER.<id>.JSZ (docs/agents.md, "Super-clusters and leaf
# nodes"). Real nats-server processes on 127.0.0.1, with a system account
# SYS (user mon) and an application account A (JetStream enabled):
#
# - clusters C1 and C2 joined by gateways, NL_SUPER_PER_CLUSTER servers
#   each (default 3: c1n1..c1n3, c2n1..c2n3), JetStream on all;
# - a leaf node server "leaf" with a JetStream domain of its own (LEAF),
#   connected to C1 by a leafnode remote bound to account A; its system
#   account is its own (not bridged), so its agent reads its own system.
#
# Streams of account A: S1 placed in C1 and S2 placed in C2 (3 replicas each,
# or as many as a cluster has servers; nl-inject stream-create --cluster),
# and SL on the leaf. Each has a consumer "stuck" (max_ack_pending 5, a
# worker that takes 5 and never acks: MAX_PENDING_THROTTLE stands) and a
# consumer "good" (a worker that acks everything a slow publisher sends).
# One collectd agent per server (7 with the leaf), each in its own
# directory with Hostname agent-<server>, Instance "prod" with its own
# server's URL, SystemAccount true, Scope "server", Interval 1.
#
# Checks, per stream: the stuck consumer's MAX_PENDING_THROTTLE is raised
# (notification and value) by exactly one agent, the one whose server is
# the consumer's leader (cluster.leader of CONSUMER.INFO; for SL asked of
# the leaf, which on nats-server 2.9 answers without a cluster part: then
# the leaf itself), and by no other; nats_lens_judged of each consumer is
# 1 on that agent alone and 0 on the agents of the servers holding a copy,
# and absent elsewhere (an agent of the other cluster, or the leaf's,
# reports nothing of it); the good consumer raises nothing anywhere and is
# judged (1) by exactly one agent, its leader's; every onset of any class
# (stream-level ones included) comes from the agent of the consumer's or
# stream's leader. Each agent's log line `Scope "server": server <name>`
# names its own server and no other.
#
# In the full suite only: tests/run_all.sh (make test) runs every
# tests/integration/test_*.sh, make check only those matching "classes".
# Passes on nats-server 2.9.10, 2.10.16, 2.11.10 and 2.12.0 (the first
# nats-server on PATH). The whole run is bounded by NL_SUPER_DEADLINE
# seconds (default 600); NL_SUPER_PER_CLUSTER=2 runs 2 servers per cluster.
set -u
if [ -z "${NL_SUPER_TIMED:-}" ]; then
  NL_SUPER_TIMED=1 exec timeout -s TERM "${NL_SUPER_DEADLINE:-600}" \
    bash "$0" "$@"
fi
. "$(dirname "$0")/../lib.sh"
nl_begin agents_supercluster
P1=$(nl_port NL_PORT_SUPER_C1 15200)
P2=$(nl_port NL_PORT_SUPER_C2 15210)
PL=$(nl_port NL_PORT_SUPER_LEAF 15220)
PER=${NL_SUPER_PER_CLUSTER:-3}
case $PER in 2 | 3) ;; *)
  nl_fail setup/per-cluster "NL_SUPER_PER_CLUSTER must be 2 or 3, not $PER"
  nl_end
  exit
  ;;
esac
REPLICAS=$PER
# How long the workers run: longer than the test, ended by the cleanup.
WORK=300
T0=$(date +%s)

# Ports: cluster K (base P1 or P2), server I (1..PER): client base+I-1,
# route base+3+I-1, gateway base+6+I-1. The leaf: client PL; the leafnode
# listen port of C1's server I: PL+I.
base_of() { if [ "$1" = 1 ]; then echo "$P1"; else echo "$P2"; fi; }
client_port() { # SERVER (c1n2, c2n1, leaf)
  if [ "$1" = leaf ]; then
    echo "$PL"
    return
  fi
  local k=${1:1:1} i=${1:3:1}
  echo $(($(base_of "$k") + i - 1))
}
route_port() { echo $(($(base_of "$1") + 3 + $2 - 1)); }
gw_port() { echo $(($(base_of "$1") + 6 + $2 - 1)); }
leaf_listen_port() { echo $((PL + $1)); }

SERVERS=
for k in 1 2; do
  for ((i = 1; i <= PER; i++)); do SERVERS="$SERVERS c${k}n$i"; done
done
AGENTS="$SERVERS leaf"

ACCOUNTS='accounts {
  SYS: { users: [{user: mon, password: mon}] }
  A: { jetstream: enabled, users: [{user: a, password: a}] }
}
system_account: SYS'

# gateways_of: the gateways block every super-cluster server has.
gateways_of() {
  local k i urls
  for k in 1 2; do
    urls=
    for ((i = 1; i <= PER; i++)); do
      urls="$urls \"nats://127.0.0.1:$(gw_port "$k" "$i")\","
    done
    echo "    { name: C$k, urls: [$urls ] }"
  done
}

start_super_server() { # K I
  local k=$1 i=$2 name=c$1n$2 j routes='' leaf=''
  for ((j = 1; j <= PER; j++)); do
    routes="$routes \"nats-route://127.0.0.1:$(route_port "$k" "$j")\","
  done
  [ "$k" = 1 ] && leaf="leafnodes { listen: 127.0.0.1:$(leaf_listen_port "$i") }"
  cat >"$NL_TMP/$name.conf" <<EOF
server_name: $name
listen: 127.0.0.1:$(client_port "$name")
jetstream { store_dir: "$NL_TMP/js-$name" }
cluster {
  name: C$k
  listen: 127.0.0.1:$(route_port "$k" "$i")
  routes: [$routes ]
}
gateway {
  name: C$k
  listen: 127.0.0.1:$(gw_port "$k" "$i")
  gateways: [
$(gateways_of)
  ]
}
$leaf
$ACCOUNTS
EOF
  nl_start_server "$name" "$(client_port "$name")" -c "$NL_TMP/$name.conf"
}

start_leaf() {
  local i urls=
  for ((i = 1; i <= PER; i++)); do
    urls="$urls \"nats-leaf://a:a@127.0.0.1:$(leaf_listen_port "$i")\","
  done
  cat >"$NL_TMP/leaf.conf" <<EOF
server_name: leaf
listen: 127.0.0.1:$PL
jetstream { store_dir: "$NL_TMP/js-leaf", domain: LEAF }
leafnodes {
  remotes: [ { urls: [$urls ], account: A } ]
}
$ACCOUNTS
EOF
  nl_start_server leaf "$PL" -c "$NL_TMP/leaf.conf"
}

for k in 1 2; do
  for ((i = 1; i <= PER; i++)); do
    start_super_server "$k" "$i" || {
      nl_fail setup/servers "c${k}n$i did not start"
      exit 1
    }
  done
done
start_leaf || {
  nl_fail setup/servers "the leaf did not start"
  exit 1
}

url() { echo "nats://$1:$1@127.0.0.1:$(client_port "$2")"; } # USER SERVER
inj() {                                                       # SERVER ARGS...
  local s=$1
  shift
  "$NL_INJECT" --server "$(url a "$s")" --timeout-ms 5000 "$@"
}
# jfield JSON-ON-STDIN EXPR: a Python expression on the parsed JSON j.
jfield() {
  python3 -c '
import json, os, sys
j = json.load(sys.stdin)
try:
    v = eval(sys.argv[1])
except (KeyError, IndexError, TypeError):
    v = ""
print(" ".join(v) if isinstance(v, list) else v)' "$1" 2>/dev/null
}

# The leaf node is connected to C1 (its remote is up).
leaf_up() {
  grep -q "Leafnode connection created" "$NL_TMP/leaf.log" 2>/dev/null
}
if nl_retry 30 leaf_up; then
  nl_pass setup/leaf-connected "$(grep -m1 "Leafnode connection created" "$NL_TMP/leaf.log" | sed 's/.*\] //')"
else
  nl_fail setup/leaf-connected "no leafnode connection: $(tail -n 3 "$NL_TMP/leaf.log")"
fi
# The gateways are up both ways on every server.
gw_up() {
  local s
  for s in $SERVERS; do
    grep -q "Outbound gateway connection to \"C[12]\"" "$NL_TMP/$s.log" ||
      return 1
  done
}
if nl_retry 30 gw_up; then
  nl_pass setup/gateways "every server of C1 and C2 has its outbound gateway"
else
  nl_fail setup/gateways "a server has no outbound gateway"
fi

# Streams and consumers. The meta leader of the super-cluster needs some
# seconds after the start: the first create is retried.
# HOMESRV: the server each stream's clients connect to.
declare -A HOMESRV=([S1]=c1n1 [S2]=c2n1 [SL]=leaf)
declare -A WORKER=([S1]=c1n2 [S2]=c2n2 [SL]=leaf)
declare -A SUBJ=([S1]=s1 [S2]=s2 [SL]=sl)
if ! nl_retry 60 inj c1n1 stream-create S1 --subjects 's1.>' \
  --replicas "$REPLICAS" --cluster C1 >"$NL_TMP/setup.out" 2>"$NL_TMP/setup.err"; then
  nl_fail setup/meta-leader "no stream created in C1: $(tail -n 2 "$NL_TMP/setup.err")"
  exit 1
fi
if ! nl_retry 30 inj c2n1 stream-create S2 --subjects 's2.>' \
  --replicas "$REPLICAS" --cluster C2 >>"$NL_TMP/setup.out" 2>>"$NL_TMP/setup.err" ||
  ! nl_retry 30 inj leaf stream-create SL --subjects 'sl.>' \
    >>"$NL_TMP/setup.out" 2>>"$NL_TMP/setup.err"; then
  nl_fail setup/streams "$(tail -n 2 "$NL_TMP/setup.err")"
  exit 1
fi
for s in S1 S2 SL; do
  h=${HOMESRV[$s]}
  # A consumer create right after its stream's may find the stream not yet
  # known to every server: retried.
  if ! nl_retry 20 inj "$h" consumer-create "$s" stuck --ack-wait 300 \
    --max-ack-pending 5 >>"$NL_TMP/setup.out" 2>>"$NL_TMP/setup.err" ||
    ! nl_retry 20 inj "$h" consumer-create "$s" good --ack-wait 30 \
      --max-ack-pending 1000 >>"$NL_TMP/setup.out" 2>>"$NL_TMP/setup.err" ||
    ! inj "$h" publish "${SUBJ[$s]}.a" --count 50 >>"$NL_TMP/setup.out" \
      2>>"$NL_TMP/setup.err"; then
    nl_fail setup/consumers "$s: $(tail -n 2 "$NL_TMP/setup.err")"
    exit 1
  fi
done

# Where each stream lives: the cluster named by its STREAM.INFO, asked of
# a server of another cluster (C2 for S1, C1 for S2: the gateways carry
# the JetStream API), and of the leaf for SL.
stream_info() { # SERVER STREAM
  inj "$1" request "\$JS.API.STREAM.INFO.$2" '' 2>/dev/null
}
placed() { # SERVER STREAM WANT_CLUSTER WANT_COPIES
  local j c n
  j=$(stream_info "$1" "$2")
  c=$(jfield 'j["cluster"]["name"]' <<<"$j")
  n=$(jfield '1 + len(j["cluster"].get("replicas", []))' <<<"$j")
  PLACED="cluster ${c:-none}, $n cop(ies), leader $(jfield 'j["cluster"]["leader"]' <<<"$j")"
  [ "$c" = "$3" ] && [ "$n" = "$4" ]
}
PLACED=
for spec in S1:c2n1:C1:$REPLICAS S2:c1n1:C2:$REPLICAS; do
  IFS=: read -r s from want n <<<"$spec"
  if nl_retry 20 placed "$from" "$s" "$want" "$n"; then
    nl_pass "setup/placed-$s" "$PLACED"
  else
    nl_fail "setup/placed-$s" "want cluster $want with $n copies: $PLACED"
  fi
done
# SL is the leaf's own (domain LEAF): the leaf answers for it, and C1 has
# no stream SL (a domain of its own, not C1's).
sl_leaf=$(stream_info leaf SL | jfield 'j["config"]["name"]')
sl_hub=$(stream_info c1n1 SL | jfield 'j["error"]["code"]')
if [ "$sl_leaf" = SL ] && [ "$sl_hub" = 404 ]; then
  nl_pass setup/placed-SL "on the leaf; C1 answers 404 for SL"
else
  nl_fail setup/placed-SL "leaf names '$sl_leaf', C1 answers '$sl_hub'"
fi

# The workers: "stuck" takes 5 and never acks; "good" acks all a slow
# publisher sends.
for s in S1 S2 SL; do
  w=${WORKER[$s]}
  inj "$w" consume "$s" stuck --duration "$WORK" --no-ack \
    >"$NL_TMP/stuck-$s.out" 2>&1 &
  NL_PIDS+=($!)
  inj "$w" consume "$s" good --duration "$WORK" --process-ms 5 \
    >"$NL_TMP/good-$s.out" 2>&1 &
  NL_PIDS+=($!)
  inj "${HOMESRV[$s]}" publish "${SUBJ[$s]}.b" --count $((WORK * 2)) --rate 2 \
    --keep-going >"$NL_TMP/pub-$s.out" 2>&1 &
  NL_PIDS+=($!)
done
echo "# setup took $(($(date +%s) - T0)) s ($PER servers per cluster)" >&2

# The agents: one collectd per server, files in $NL_TMP/agent-<server>.
on() { # SERVER COMMAND...: a lib.sh reader on that server's agent
  local who=$1
  shift
  NL_COLLECTD_DIR=$NL_TMP/agent-$who NL_HOSTNAME=agent-$who "$@"
}
declare -A AGENT_PID=()
AGENTS_AT=
for a in $AGENTS; do
  NL_COLLECTD_DIR=$NL_TMP/agent-$a NL_HOSTNAME=agent-$a nl_start_collectd \
    "<Instance \"prod\">
  URL \"$(url mon "$a")\"
  SystemAccount true
  Scope \"server\"
  Interval 1
  Timeout 2
</Instance>" 1 || {
    nl_fail "setup/agent-$a" "collectd did not start"
    exit 1
  }
  AGENT_PID[$a]=$NL_COLLECTD_PID
  AGENTS_AT=${AGENTS_AT:-$(date +%s)}
done

# is VALUE CONDITION: an awk comparison of a CSV value ("1.000000" == 1).
is() { [ -n "$1" ] && awk -v v="$1" "BEGIN { exit !(v + 0 $2) }"; }
# leader STREAM CONSUMER: the consumer leader, cluster.leader of the
# CONSUMER.INFO that the stream's home server answers. A server outside
# any cluster (the leaf on nats-server 2.9) answers without a cluster part:
# then the leader is that server itself, named by $SYS.REQ.SERVER.PING on
# it (on the leaf, whose system account is its own, the leaf alone
# answers). copies STREAM CONSUMER: the leader and its replicas.
declare -A SELF=()
SELF[leaf]=$("$NL_INJECT" --server "$(url mon leaf)" request \
  '$SYS.REQ.SERVER.PING' '' 2>/dev/null | jfield 'j["server"]["name"]')
cinfo() { inj "${HOMESRV[$1]}" info "$1" "$2" 2>/dev/null; }
leader() {
  cinfo "$1" "$2" | NL_SELF=${SELF[${HOMESRV[$1]}]:-} jfield '(j["cluster"]["leader"] if "cluster" in j else ("" if "error" in j else os.environ["NL_SELF"]))'
}
copies() {
  cinfo "$1" "$2" | NL_SELF=${SELF[${HOMESRV[$1]}]:-} jfield '([j["cluster"]["leader"]] + [r["name"] for r in j["cluster"].get("replicas", [])] if "cluster" in j else [os.environ["NL_SELF"]])'
}
# raised_by STREAM CONSUMER CLASS: the agents with an onset of CLASS for it.
raised_by() {
  local a out=
  for a in $AGENTS; do
    if on "$a" nl_notifications "plugin_instance = prod-A-$1," |
      grep -F "type_instance = $3," | grep -F "$1/$2" |
      grep -vq "severity = OKAY"; then
      out="$out $a"
    fi
  done
  echo "${out# }"
}
# value_one_on STREAM CONSUMER TYPE: the agents with a row of value 1 of
# that type for that consumer.
value_one_on() {
  local a out=
  for a in $AGENTS; do
    [ "$(on "$a" nl_csv_rows "prod-A-$1" "$3" "$2" '$2 + 0 == 1')" -gt 0 ] &&
      out="$out $a"
  done
  echo "${out# }"
}
# judged_map STREAM CONSUMER: "agent=last" for each agent that reports it.
judged_map() {
  local a v out=
  for a in $AGENTS; do
    v=$(on "$a" nl_csv_last "prod-A-$1" nats_lens_judged "$2")
    [ -n "$v" ] && out="$out $a=${v%%.*}"
  done
  echo "${out# }"
}
polls() { on "$1" nl_csv_rows prod duration poll "\$1 > $2"; }
# Every agent polled N times after epoch second T.
all_polled() { # N T
  local a
  for a in $AGENTS; do
    [ "$(polls "$a" "$2")" -ge "$1" ] || return 1
  done
}

# Each stuck consumer: its leader's agent raises the throttle.
declare -A LEADER=()
for s in S1 S2 SL; do
  LEADER[$s]=$(leader "$s" stuck)
  l=${LEADER[$s]}
  if [ -z "$l" ] || [ -z "${AGENT_PID[$l]:-}" ]; then
    nl_fail "throttle/$s" "no known leader named for $s/stuck: '$l'"
    continue
  fi
  if ! on "$l" nl_wait_notification 60 "plugin_instance = prod-A-$s," \
    "type_instance = MAX_PENDING_THROTTLE," "$s/stuck" >/dev/null; then
    nl_fail "throttle/$s" "agent-$l (the leader) raised no MAX_PENDING_THROTTLE for $s/stuck in 60 s; raised by: '$(raised_by "$s" stuck MAX_PENDING_THROTTLE)'; judged: $(judged_map "$s" stuck); its log: $(grep -F 'Scope "server"' "$NL_TMP/agent-$l/collectd.log" | tail -n 1 | sed 's/.*nats_lens plugin: //')"
  fi
done
echo "# the leaders' agents raised within $(($(date +%s) - AGENTS_AT)) s of the first agent's start" >&2
# Five more polls of every agent, so that one that would raise a consumer
# it does not lead has had the time to.
settle=$(date +%s)
nl_check polled/all-agents nl_retry 30 all_polled 5 "$settle"

for s in S1 S2 SL; do
  l=${LEADER[$s]}
  [ -n "$l" ] || continue
  now=$(leader "$s" stuck)
  raised=$(raised_by "$s" stuck MAX_PENDING_THROTTLE)
  ones=$(value_one_on "$s" stuck nats_lens_max_pending_throttle)
  if [ "$now" != "$l" ]; then
    nl_fail "throttle/$s" "the leader of $s/stuck moved during the test: $l -> $now (raised by: $raised)"
  elif [ "$raised" = "$l" ] && [ "$ones" = "$l" ]; then
    nl_pass "throttle/$s" "raised by agent-$l alone, the leader (notification and value)"
  else
    nl_fail "throttle/$s" "leader $l; notification from: '$raised'; value 1 from: '$ones'"
  fi
done

# nats_lens_judged of each consumer: 1 on its leader's agent alone, 0 on
# the agents of the servers holding a copy, nothing from any other agent.
for s in S1 S2 SL; do
  for c in stuck good; do
    l=$(leader "$s" "$c")
    want=
    for a in $AGENTS; do
      if [ "$a" = "$l" ]; then
        want="$want $a=1"
      elif [[ " $(copies "$s" "$c") " == *" $a "* ]]; then
        want="$want $a=0"
      fi
    done
    got=$(judged_map "$s" "$c")
    ever=$(value_one_on "$s" "$c" nats_lens_judged)
    if [ "$got" = "${want# }" ] && [ "$ever" = "$l" ]; then
      nl_pass "judged/$s-$c" "$got"
    else
      nl_fail "judged/$s-$c" "leader $l; reported: '$got' (want '${want# }'); ever 1 on: '$ever'"
    fi
  done
done

# The healthy consumers: nothing raised by any agent, and their
# deliveries counted by their leader's agent.
for s in S1 S2 SL; do
  l=$(leader "$s" good)
  noise=$(for a in $AGENTS; do
    on "$a" nl_notifications "plugin_instance = prod-A-$s," | grep -F "$s/good" |
      sed "s/^/agent-$a: /"
  done | head -n 2)
  delivered=$(on "$l" nl_csv_last "prod-A-$s" nats_lens_delivered good)
  if [ -z "$noise" ] && is "$delivered" "> 50"; then
    nl_pass "healthy/$s" "silent everywhere; agent-$l counts ${delivered%%.*} delivered"
  else
    nl_fail "healthy/$s" "delivered ${delivered:-none} on agent-$l; ${noise:-no notification}"
  fi
done

# No agent raised anything (any class) for a consumer or a stream it does
# not lead: each agent's onsets name consumers whose leader is its server
# (message "CLASS S/C ...") and streams its server leads ("CLASS stream S").
sleader() { # STREAM: the stream leader, as leader() reads a consumer's
  stream_info "${HOMESRV[$1]}" "$1" | NL_SELF=${SELF[${HOMESRV[$1]}]:-} jfield '(j["cluster"]["leader"] if "cluster" in j else ("" if "error" in j else os.environ["NL_SELF"]))'
}
stray='' seen=''
for a in $AGENTS; do
  while read -r what; do
    [ -n "$what" ] || continue
    seen="$seen agent-$a:$what"
    case $what in
    stream*) l=$(sleader "${what#stream }") ;;
    *) l=$(leader "${what%/*}" "${what#*/}") ;;
    esac
    [ "$l" = "$a" ] || stray="$stray agent-$a:'$what'(leader $l)"
  done < <(on "$a" nl_notifications "plugin = nats_lens," |
    grep -v "severity = OKAY" | sed -n 's/.*message = [A-Z_]* \(stream S[12L]\|S[12L]\/[a-z]*\)[ :].*/\1/p' |
    sort -u)
done
if [ -z "$stray" ]; then
  nl_pass no-stray-onsets "onsets by their leader's agent only:$seen"
else
  nl_fail no-stray-onsets "$stray"
fi

# Each agent's log names its own server, and no other.
for a in $AGENTS; do
  lines=$(grep -F '[info] nats_lens plugin: Instance "prod": Scope "server": server ' \
    "$NL_TMP/agent-$a/collectd.log")
  names=$(sed 's/.*Scope "server": server \([^ ]*\) .*/\1/' <<<"$lines" |
    sort -u | tr '\n' ' ')
  if [ -n "$lines" ] && [ "$names" = "$a " ]; then
    nl_pass "log/agent-$a" "$(head -n 1 <<<"$lines" | sed 's/.*Scope "server": //')"
  else
    nl_fail "log/agent-$a" "servers named: '$names'; $(head -n 1 <<<"$lines")"
  fi
done

for a in $AGENTS; do
  nl_check "alive/agent-$a" kill -0 "${AGENT_PID[$a]}"
done
echo "# the test took $(($(date +%s) - T0)) s" >&2
nl_end
