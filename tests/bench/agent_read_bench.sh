#!/usr/bin/env bash
# tests/bench/agent_read_bench.sh OUT.md: what it costs to read JetStream's
# view of a cluster with one agent on every NATS server (issue 23, Scope
# "server") against the central polls, side by side in the same run. On a
# 3-node cluster, a 5-node cluster and a 2 x 3 super-cluster (see
# NL_AR_TOPOLOGIES below), each with the same consumers per server
# (NL_AR_STREAMS x NL_AR_PER_STREAM durable pull consumers per 3 servers,
# memory streams of NL_AR_REPLICAS replicas, placed by the server, one
# JetStream account ACC and the system account SYS), per poll: bytes
# received, wall ms, and the nats-server processes' CPU ms (utime + stime
# from /proc/PID/stat read just before and after the request, per server
# and summed), for
#   1. directed: one $SYS.REQ.SERVER.<id>.JSZ per server, sent on a
#      connection to that server (what each agent does), the plugin's JSZ
#      body; and the plugin's whole agent poll of it, parse, filter and
#      apply (nl-bench poll-server); from 2.11 also with
#      "stream_leader_only":true;
#   2. http: one GET of each server's monitoring
#      /jsz?accounts=true&streams=true&consumers=true&config=true (curl);
#   3. ping: one $SYS.REQ.SERVER.PING.JSZ gathered from every server, as
#      the transport alone (nl-bench gather) and as the plugin's whole
#      system-account poll with parse, merge and apply (nl-bench
#      poll-system);
#   4. accounts: the per-account poll of ACC (nl-bench poll-accounts:
#      STREAM.LIST and CONSUMER.LIST pages).
# Medians of NL_AR_POLLS polls per run, then of NL_AR_RUNS runs, the methods
# alternating within each run. NL_AR_BINS: the nats-server binaries to run
# (default: the one on PATH), each on every topology, one after the other.
# NL_AR_TOPOLOGIES: the topologies, of "3" (a 3-node cluster), "5" (a
# 5-node cluster) and "2x3" (a super-cluster: clusters C1 and C2 of 3
# servers c1n1..c1n3 and c2n1..c2n3 joined by gateways, JetStream on all,
# the same accounts; twice the 3-node cluster's streams, placed round in
# C1 and C2 by nl-bench setup --cluster C1,C2, so each server holds about
# as many as on 3 nodes, and the PING gathered from all six servers);
# default "3 5 2x3" (the super-cluster adds about 2 minutes at the default
# sizes on a 2-core machine: 59 s of setup for its 20,000 consumers, 73 s
# of polls). Appends a section to OUT.md. Ports: NL_PORT_AR_BENCH
# (default 14900, nine ports for the 3-node cluster), NL_PORT_AR_BENCH5 /
# NL_PORT_AR_HTTP5 (default 14910 / 14920, ten each for the 5-node
# cluster), and for the super-cluster NL_PORT_AR_SC / NL_PORT_AR_SC_ROUTE /
# NL_PORT_AR_SC_GW / NL_PORT_AR_SC_HTTP (default 15300 / 15310 / 15320 /
# 15330: client, route, gateway and monitoring ports, six of each).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin agent_read_bench
OUT_MD=$1
BASE3=$(nl_port NL_PORT_AR_BENCH 14900)
BASE5=$(nl_port NL_PORT_AR_BENCH5 14910)
HTTP5=$(nl_port NL_PORT_AR_HTTP5 14920)
SC_CLIENT=$(nl_port NL_PORT_AR_SC 15300)
SC_ROUTE=$(nl_port NL_PORT_AR_SC_ROUTE 15310)
SC_GW=$(nl_port NL_PORT_AR_SC_GW 15320)
SC_HTTP=$(nl_port NL_PORT_AR_SC_HTTP 15330)
STREAMS=${NL_AR_STREAMS:-100}
PER_STREAM=${NL_AR_PER_STREAM:-100}
REPLICAS=${NL_AR_REPLICAS:-1}
POLLS=${NL_AR_POLLS:-5}
RUNS=${NL_AR_RUNS:-3}
BINS=${NL_AR_BINS:-$(command -v nats-server)}
TOPOS=${NL_AR_TOPOLOGIES:-3 5 2x3}
BENCH=$NL_ROOT/build/nl-bench
JSON=$NL_TMP/ar.jsonl
TCK=$(getconf CLK_TCK)
BODY='{"accounts":true,"streams":true,"consumer":true,"config":true,"limit":100000}'
BODY_SLO='{"accounts":true,"streams":true,"consumer":true,"config":true,"limit":100000,"stream_leader_only":true}'
JSZ_QUERY='accounts=true&streams=true&consumers=true&config=true'
: >"$JSON"

NL_CLUSTER_EXTRA='accounts {
  SYS: { users: [{user: sys, password: sys}] }
  ACC: { jetstream: enabled, users: [{user: acc, password: acc}] }
}
system_account: SYS'

# The topology under test: its name in the records (3, 5 or "2x3"), node
# count, and per node its client port, monitoring port and process.
TOPO=0
N=0
CLIENT=()
HTTP=()
PID=()

# cluster5_start: nodes m1..m5 (cluster NL5) as lib.sh's nodes are
# configured, client ports BASE5.., route ports BASE5+5.., monitoring
# ports HTTP5.. (lib.sh's helper starts three nodes).
cluster5_start() {
  local n r routes=""
  for r in 0 1 2 3 4; do
    routes+="    nats-route://127.0.0.1:$((BASE5 + 5 + r))"$'\n'
  done
  for n in 0 1 2 3 4; do
    cat >"$NL_TMP/m$n.conf" <<EOF
server_name: m$((n + 1))
listen: 127.0.0.1:$((BASE5 + n))
http: 127.0.0.1:$((HTTP5 + n))
jetstream { store_dir: "$NL_TMP/js-m$n" }
cluster {
  name: NL5
  listen: 127.0.0.1:$((BASE5 + 5 + n))
  routes: [
$routes  ]
}
$NL_CLUSTER_EXTRA
EOF
    nl_start_server "m$n" $((BASE5 + n)) -c "$NL_TMP/m$n.conf" || return 1
    CLIENT[n]=$((BASE5 + n))
    HTTP[n]=$((HTTP5 + n))
    PID[n]=$NL_SERVER_PID
  done
  N=5
}
cluster3_start() {
  local n
  nl_cluster_start "$BASE3" || return 1
  for n in 1 2 3; do
    CLIENT[n - 1]=$(nl_cluster_client "$n")
    HTTP[n - 1]=$(nl_cluster_http "$n")
    PID[n - 1]=${NL_CLUSTER_PID[$n]}
  done
  N=3
}
# super_start: the super-cluster, clusters C1 and C2 of servers c<K>n<I>
# (I 1..3, node (K-1)*3+I-1 of the arrays), configured as
# test_agents_supercluster.sh configures them, with a monitoring port each;
# waits until every server has its outbound gateway.
super_start() {
  local k i n routes gws urls
  gws=
  for k in 1 2; do
    urls=
    for i in 1 2 3; do
      urls+=" \"nats://127.0.0.1:$((SC_GW + (k - 1) * 3 + i - 1))\","
    done
    gws+="    { name: C$k, urls: [$urls ] }"$'\n'
  done
  for k in 1 2; do
    routes=
    for i in 1 2 3; do
      routes+=" \"nats-route://127.0.0.1:$((SC_ROUTE + (k - 1) * 3 + i - 1))\","
    done
    for i in 1 2 3; do
      n=$(((k - 1) * 3 + i - 1))
      cat >"$NL_TMP/c${k}n$i.conf" <<EOF
server_name: c${k}n$i
listen: 127.0.0.1:$((SC_CLIENT + n))
http: 127.0.0.1:$((SC_HTTP + n))
jetstream { store_dir: "$NL_TMP/js-c${k}n$i" }
cluster {
  name: C$k
  listen: 127.0.0.1:$((SC_ROUTE + n))
  routes: [$routes ]
}
gateway {
  name: C$k
  listen: 127.0.0.1:$((SC_GW + n))
  gateways: [
$gws  ]
}
$NL_CLUSTER_EXTRA
EOF
      nl_start_server "c${k}n$i" $((SC_CLIENT + n)) \
        -c "$NL_TMP/c${k}n$i.conf" || return 1
      CLIENT[n]=$((SC_CLIENT + n))
      HTTP[n]=$((SC_HTTP + n))
      PID[n]=$NL_SERVER_PID
      N=$((n + 1))
    done
  done
  nl_retry 30 gateways_up || {
    echo "# the super-cluster's gateways are not up" >&2
    return 1
  }
}
gateways_up() {
  local k i
  for k in 1 2; do
    for i in 1 2 3; do
      grep -q 'Outbound gateway connection to "C[12]"' \
        "$NL_TMP/c${k}n$i.log" || return 1
    done
  done
}
cluster_stop() {
  local n
  for ((n = 0; n < N; n++)); do kill "${PID[n]}" 2>/dev/null; done
  for ((n = 0; n < N; n++)); do wait "${PID[n]}" 2>/dev/null; done
  rm -rf "$NL_TMP"/js-*
  N=0
  CLIENT=()
  HTTP=()
  PID=()
}
ready() {
  "$NL_INJECT" --server "nats://acc:acc@127.0.0.1:${CLIENT[0]}" \
    request '$JS.API.INFO' 2>/dev/null | grep -q '"streams"'
}
pids() {
  local IFS=,
  echo "${PID[*]}"
}
# cpu_ms PID: utime + stime of PID in ms.
cpu_ms() {
  local f
  read -r -a f <"/proc/$1/stat"
  echo $(((f[13] + f[14]) * 1000 / TCK))
}
# record FIELDS...: one JSON line of the current binary and topology.
record() {
  local IFS=,
  echo "{\"bin\":\"$LABEL\",\"topo\":$TOPO,$*}" >>"$JSON"
}
# http_poll K RUN: POLLS GETs of node K's /jsz, one record each.
http_poll() {
  local k=$1 run=$2 i n out c0 c1
  for ((i = 0; i < POLLS; i++)); do
    c0=()
    for ((n = 0; n < N; n++)); do c0[n]=$(cpu_ms "${PID[n]}"); done
    out=$(curl -s -o /dev/null -w '%{size_download} %{time_total} %{http_code}' \
      "http://127.0.0.1:${HTTP[k]}/jsz?$JSZ_QUERY") || return 1
    c1=()
    for ((n = 0; n < N; n++)); do
      c1[n]=$(($(cpu_ms "${PID[n]}") - c0[n]))
    done
    set -- $out
    [ "$3" = 200 ] || return 1
    record "\"method\":\"http\",\"target\":$k,\"run\":$run" \
      "\"bytes\":$1,\"wall_ms\":$(awk -v t="$2" 'BEGIN { print t * 1000 }')" \
      "\"cpu\":[$(
        IFS=,
        echo "${c1[*]}"
      )]"
  done
}
# bench_line METHOD TARGET RUN NL-BENCH-ARGS...: one nl-bench run, recorded.
bench_line() {
  local method=$1 target=$2 run=$3 line
  shift 3
  line=$("$BENCH" "$@" --polls "$POLLS" --timeout-ms 10000 \
    --server-pids "$(pids)") || return 1
  record "\"method\":\"$method\",\"target\":$target,\"run\":$run" \
    "\"bench\":$line"
}
# measure: RUNS runs of every method, alternating.
measure() {
  local run k
  local sys="nats://sys:sys@127.0.0.1"
  echo "nats://acc:acc@127.0.0.1:${CLIENT[0]}" >"$NL_TMP/urls"
  IDS=()
  for ((k = 0; k < N; k++)); do
    IDS[k]=$("$BENCH" server-id --server "$sys:${CLIENT[k]}") || return 1
  done
  # What each server holds, and its idle CPU over 5 s.
  for ((k = 0; k < N; k++)); do
    record "\"method\":\"holds\",\"target\":$k" \
      "\"jsz\":$(curl -s "http://127.0.0.1:${HTTP[k]}/jsz" | tr -d '\n')"
  done
  local c0=() c1=()
  for ((k = 0; k < N; k++)); do c0[k]=$(cpu_ms "${PID[k]}"); done
  sleep 5
  for ((k = 0; k < N; k++)); do c1[k]=$(($(cpu_ms "${PID[k]}") - c0[k])); done
  record "\"method\":\"idle5s\",\"cpu\":[$(
    IFS=,
    echo "${c1[*]}"
  )]"
  for ((run = 0; run < RUNS; run++)); do
    for ((k = 0; k < N; k++)); do
      bench_line directed "$k" "$run" gather --server "$sys:${CLIENT[k]}" \
        --subject "\$SYS.REQ.SERVER.${IDS[k]}.JSZ" --body "$BODY" \
        --replies 1 || return 1
    done
    # The agent's whole poll (nl-bench poll-server): the same request, read,
    # filtered to what the server leads and applied, as the plugin does.
    for ((k = 0; k < N; k++)); do
      bench_line poll_server "$k" "$run" poll-server \
        --server "$sys:${CLIENT[k]}" || return 1
    done
    if [ "$SLO" = 1 ]; then
      for ((k = 0; k < N; k++)); do
        bench_line directed_slo "$k" "$run" gather \
          --server "$sys:${CLIENT[k]}" \
          --subject "\$SYS.REQ.SERVER.${IDS[k]}.JSZ" --body "$BODY_SLO" \
          --replies 1 || return 1
      done
    fi
    for ((k = 0; k < N; k++)); do http_poll "$k" "$run" || return 1; done
    bench_line ping null "$run" gather --server "$sys:${CLIENT[0]}" \
      --subject '$SYS.REQ.SERVER.PING.JSZ' --body "$BODY" \
      --replies "$N" || return 1
    bench_line poll_system null "$run" poll-system \
      --server "$sys:${CLIENT[0]}" || return 1
    bench_line poll_accounts null "$run" poll-accounts \
      --urls "$NL_TMP/urls" || return 1
  done
}
# topology 3|5|2x3: starts the cluster (or super-cluster), creates
# NL_AR_STREAMS * NODES / 3 streams of NL_AR_PER_STREAM consumers (in the
# super-cluster placed round in C1 and C2), measures, stops it.
topology() {
  local streams t0 place=()
  case $1 in
  3) cluster3_start || return 1 ;;
  5) cluster5_start || return 1 ;;
  2x3)
    super_start || return 1
    place=(--cluster "C1,C2")
    ;;
  *)
    echo "# unknown topology $1 (3, 5 or 2x3)" >&2
    return 1
    ;;
  esac
  TOPO=$N
  [ "$1" = 2x3 ] && TOPO='"2x3"'
  streams=$((STREAMS * N / 3))
  nl_retry 60 ready || {
    echo "# the $1 topology has no meta leader" >&2
    return 1
  }
  t0=$(nl_now_ms)
  "$BENCH" setup --server "nats://acc:acc@127.0.0.1:${CLIENT[0]}" \
    --streams "$streams" --consumers "$PER_STREAM" --messages 20 \
    --replicas "$REPLICAS" "${place[@]}" || return 1
  record "\"method\":\"setup\",\"streams\":$streams,\"ms\":$(($(nl_now_ms) - t0))"
  sleep 2
  measure || return 1
  cluster_stop
}

# NL_AR_REPORT FILE: only writes the section from the records of an
# earlier run (FILE, kept with NL_KEEP_TMP=1 as ar.jsonl).
RUN_BINS=$BINS
if [ -n "${NL_AR_REPORT:-}" ]; then
  cp "$NL_AR_REPORT" "$JSON"
  RUN_BINS=""
fi
ORIG_PATH=$PATH
for bin in $RUN_BINS; do
  LABEL=$("$bin" --version | awk '{ print $2 }')
  mkdir -p "$NL_TMP/bin-$LABEL"
  ln -sf "$(command -v "$bin")" "$NL_TMP/bin-$LABEL/nats-server"
  SLO=0
  case $LABEL in v2.9.* | v2.10.*) ;; *) SLO=1 ;; esac
  PATH="$NL_TMP/bin-$LABEL:$ORIG_PATH"
  hash -r
  for topo in $TOPOS; do
    echo "# agent read: $LABEL, $topo nodes ($(date -u +%T))" >&2
    topology "$topo" || {
      echo "# agent read: $LABEL, $topo nodes failed" >&2
      cluster_stop
    }
  done
done
PATH=$ORIG_PATH

python3 - "$JSON" "$OUT_MD" "$STREAMS" "$PER_STREAM" "$REPLICAS" "$POLLS" \
  "$RUNS" "$(git -C "$NL_ROOT" rev-parse --short HEAD)" \
  "NL_AR_BINS=\"$BINS\" NL_AR_TOPOLOGIES=\"$TOPOS\" NL_AR_STREAMS=$STREAMS NL_AR_PER_STREAM=$PER_STREAM NL_AR_REPLICAS=$REPLICAS NL_AR_POLLS=$POLLS NL_AR_RUNS=$RUNS" <<'PY'
import json, statistics, sys, datetime
from collections import defaultdict
path, out = sys.argv[1], sys.argv[2]
streams, per, replicas, polls, runs = map(int, sys.argv[3:8])
commit, env = sys.argv[8], sys.argv[9]
rows = [json.loads(l) for l in open(path)]
med = statistics.median
# Per topology: its servers, their names in the tables, its heading.
NODES = {3: 3, 5: 5, "2x3": 6}
NAMES = {3: ["n1", "n2", "n3"], 5: ["n%d" % k for k in range(1, 6)],
         "2x3": ["c%dn%d" % (c, k) for c in (1, 2) for k in (1, 2, 3)]}
TITLE = {3: "3 nodes", 5: "5 nodes",
         "2x3": "super-cluster 2 x 3 (C1 and C2 joined by gateways)"}

def sample(r):
    """bytes, wall ms, per-server CPU ms of one record."""
    if "bench" in r:
        b = r["bench"]
        return b["bytes_per_poll"], b["wall_ms_median"], b["server_cpu_ms"]
    return r["bytes"], r["wall_ms"], r["cpu"]

def stats(recs, n):
    """Median over runs of the per-run medians: bytes, wall, cpu list."""
    byrun = defaultdict(list)
    for r in recs:
        byrun[r["run"]].append(sample(r))
    per_run = []
    for s in byrun.values():
        per_run.append((med(x[0] for x in s), med(x[1] for x in s),
                        [med(x[2][k] for x in s) for k in range(n)]))
    return (med(p[0] for p in per_run), med(p[1] for p in per_run),
            [med(p[2][k] for p in per_run) for k in range(n)])

def kib(b):
    return format(int(round(b / 1024)), ",")

lines = ["", "## One agent per server (Scope \"server\") against the central polls", "",
         "Made by `bash tests/bench/agent_read_bench.sh OUT.md` with `%s` on %s "
         "(commit %s), 2-core machine, every node on 127.0.0.1: %s streams "
         "(memory, %d replica%s, placed by the server; in the super-cluster "
         "within the cluster nl-bench setup --cluster names) of %d durable pull "
         "consumers per 3 servers, 20 messages per stream, one account; the "
         "5-node cluster has 5/3 as many and the 2 x 3 super-cluster (two "
         "clusters of 3 joined by gateways) twice as many, half placed in "
         "each cluster, so each server holds about as many as on 3 nodes. "
         "Per poll: bytes received, wall ms (the client's), and "
         "nats-server CPU ms (utime + stime just before and after the request, "
         "10 ms ticks), medians of %d polls per run, then of %d runs, methods "
         "alternating in each run." % (
             env, datetime.date.today().isoformat(), commit, format(streams, ","),
             replicas, "" if replicas == 1 else "s", per, polls, runs), ""]
flat = {}
bins = []
for r in rows:
    if r["bin"] not in bins:
        bins.append(r["bin"])
for b in bins:
    for topo in (3, 5, "2x3"):
        rs = [r for r in rows if r["bin"] == b and r["topo"] == topo]
        if not any(r["method"] == "poll_accounts" for r in rs):
            continue
        n = NODES[topo]
        names = NAMES[topo]
        holds = {r["target"]: r["jsz"] for r in rs if r["method"] == "holds"}
        idle = next((r["cpu"] for r in rs if r["method"] == "idle5s"), None)
        setup = next((r for r in rs if r["method"] == "setup"), None)
        lines += ["### nats-server %s, %s" % (b, TITLE[topo]), ""]
        clusters = ""
        if topo == "2x3":
            clusters = " (C1 %s / %s, C2 %s / %s)" % tuple(
                format(sum(holds[k][f] for k in ks if k in holds), ",")
                for ks in ((0, 1, 2), (3, 4, 5)) for f in ("streams", "consumers"))
        lines.append("Each server holds (streams / consumers): %s%s; %s consumers "
                     "in all, set up in %.0f s; idle CPU over 5 s before the "
                     "polls: %s ms." % (
            ", ".join("%s %d / %d" % (names[k], holds[k]["streams"], holds[k]["consumers"])
                      for k in sorted(holds)), clusters,
            format(setup["streams"] * per, ","), setup["ms"] / 1000,
            " / ".join(str(c) for c in idle) if idle else "?"))
        lines += ["", "| method | consumers on the server(s) | bytes/poll | wall ms/poll | server CPU ms/poll, sum | per server (%s..%s) |" % (names[0], names[-1]),
                  "|---|---:|---:|---:|---:|---|"]
        total = sum(h["consumers"] for h in holds.values())
        for method, label in (("directed", "1. directed `$SYS.REQ.SERVER.<id>.JSZ`"),
                              ("poll_server", "1a. the same, the plugin's whole Scope \"server\" poll"),
                              ("directed_slo", "1b. directed, `stream_leader_only`"),
                              ("http", "2. HTTP `/jsz?accounts&streams&consumers&config`")):
            ms = [r for r in rs if r["method"] == method]
            if not ms:
                continue
            tb = tw = tc = 0
            tcs = [0.0] * n
            for k in range(n):
                by, wa, cp = stats([r for r in ms if r["target"] == k], n)
                tb += by
                tw = max(tw, wa)
                tc += sum(cp)
                tcs = [a + c for a, c in zip(tcs, cp)]
                lines.append("| %s, to %s | %s | %s KiB | %.1f | %.0f | %s |" % (
                    label, names[k], format(holds[k]["consumers"], ","), kib(by), wa,
                    sum(cp), " / ".join("%.0f" % c for c in cp)))
                if method == "directed":
                    flat.setdefault(b, {}).setdefault(topo, []).append(
                        (holds[k]["consumers"], by, sum(cp)))
            lines.append("| **%s, all %d (the slowest's wall)** | %s | **%s KiB** | **%.1f** | **%.0f** | %s |" % (
                label, n, format(total, ","), kib(tb), tw, tc, " / ".join("%.0f" % c for c in tcs)))
        for method, label in (("ping", "3. `$SYS.REQ.SERVER.PING.JSZ`, transport only"),
                              ("poll_system", "3. the same, the plugin's whole SystemAccount poll"),
                              ("poll_accounts", "4. per-account poll (STREAM.LIST, CONSUMER.LIST)")):
            ms = [r for r in rs if r["method"] == method]
            if not ms:
                continue
            by, wa, cp = stats(ms, n)
            req = med(r["bench"]["requests_per_poll"] for r in ms)
            lines.append("| %s%s | %s | %s KiB | %.1f | %.0f | %s |" % (
                label, "" if req == 1 else ", %d requests" % req,
                format(total, ","), kib(by), wa,
                sum(cp), " / ".join("%.0f" % c for c in cp)))
        lines.append("")
if flat:
    lines += ["### One agent's read against what its server holds", "",
              "The server places the streams, so the servers do not hold equal "
              "shares; per consumer held, each directed read (median over the "
              "servers):", "",
              "| nats-server | nodes | bytes per consumer held | server CPU ms per 1,000 consumers held |",
              "|---|---:|---:|---:|"]
    for b in bins:
        for topo in (3, 5, "2x3"):
            v = [x for x in flat.get(b, {}).get(topo, []) if x[0] > 0]
            if v:
                lines.append("| %s | %s | %.0f | %.1f |" % (
                    b, "2 x 3" if topo == "2x3" else topo, med(x[1] / x[0] for x in v),
                    med(x[2] * 1000 / x[0] for x in v)))
    lines.append("")
lines += ["Wall ms of a directed or HTTP read is its client's wait for one "
          "server; agents read in parallel, so the \"all\" row gives the "
          "slowest. The transport-only rows parse nothing; the plugin's polls "
          "(SystemAccount, per account) include parsing, merging and the "
          "engine's apply on the client.", ""]
with open(out, "a") as f:
    f.write("\n".join(lines))
print("\n".join(lines))
PY
