#!/usr/bin/env bash
# tests/bench/system_account_bench.sh OUT.md: SystemAccount mode against the
# per-account mode at 10,000 consumers spread over 100 accounts (each
# account: 2 memory streams of 50 durable pull consumers, 20 messages per
# stream), on one server and on a 3-node cluster (streams and consumers
# with one replica, placed by the server), side by side in the same run:
#   - nl-bench poll-system (one JSZ request per poll, every account) and
#     nl-bench poll-accounts (one nl_poll_run per account, as 100 Instance
#     blocks would): requests, bytes, wall and CPU ms per poll (medians of
#     NL_SA_POLLS polls, NL_SA_RUNS runs);
#   - on each topology, collectd's resident memory growth (Interval 5,
#     ConsumerValues "none", after NL_SA_COLLECTD_POLLS polls) with one
#     SystemAccount Instance and with 100 per-account Instances, against
#     the same collectd without the plugin (medians of 10 samples 1 s apart).
# The research monitor's requests per poll are its formula, 1 + S(2 + C) per
# account. Appends a section to OUT.md. Ports: NL_PORT_SA_BENCH (default
# 14290) and the next eight.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin system_account_bench
OUT_MD=$1
PORT=$(nl_port NL_PORT_SA_BENCH 14290)
ACCOUNTS=${NL_SA_ACCOUNTS:-100}
STREAMS=${NL_SA_STREAMS:-2}
PER_STREAM=${NL_SA_PER_STREAM:-50}
POLLS=${NL_SA_POLLS:-5}
RUNS=${NL_SA_RUNS:-3}
CD_POLLS=${NL_SA_COLLECTD_POLLS:-4}
BENCH=$NL_ROOT/build/nl-bench
JSON=$NL_TMP/sa.jsonl
: >"$JSON"

# The accounts block: SYS (user sys) and ACC000.. (user uNNN, password
# uNNN), JetStream enabled.
accounts_conf() {
  local i
  echo "accounts {"
  echo "  SYS: { users: [{user: sys, password: sys}] }"
  for ((i = 0; i < ACCOUNTS; i++)); do
    printf '  ACC%03d: { jetstream: enabled, users: [{user: u%03d, password: u%03d}] }\n' \
      "$i" "$i" "$i"
  done
  echo "}"
  echo "system_account: SYS"
}
# urls PORT: one URL per account.
urls() {
  local i
  for ((i = 0; i < ACCOUNTS; i++)); do
    printf 'nats://u%03d:u%03d@127.0.0.1:%s\n' "$i" "$i" "$1"
  done
}
# setup PORT: the streams and consumers of every account.
setup() {
  local url
  while read -r url; do
    "$BENCH" setup --server "$url" --streams "$STREAMS" \
      --consumers "$PER_STREAM" --messages 20 || return 1
  done < <(urls "$1")
}
# measure TOPOLOGY PORT: both modes, RUNS runs each, alternating.
measure() {
  local topo=$1 port=$2 i line
  urls "$port" >"$NL_TMP/urls-$topo"
  for ((i = 0; i < RUNS; i++)); do
    line=$("$BENCH" poll-system --server "nats://sys:sys@127.0.0.1:$port" \
      --polls "$POLLS" --timeout-ms 5000) || return 1
    echo "{\"topology\":\"$topo\",\"mode\":\"system\",\"run\":$i,\"bench\":$line}" >>"$JSON"
    line=$("$BENCH" poll-accounts --urls "$NL_TMP/urls-$topo" \
      --polls "$POLLS" --timeout-ms 5000) || return 1
    echo "{\"topology\":\"$topo\",\"mode\":\"accounts\",\"run\":$i,\"bench\":$line}" >>"$JSON"
  done
}
# collectd_rss MODE PORT: collectd (Interval 5, the load plugin) without
# the plugin (off), with one SystemAccount Instance (system) or with one
# Instance per account (accounts), all with ConsumerValues "none"; prints
# the median resident memory in kB over 10 samples 1 s apart, after
# CD_POLLS polls.
collectd_rss() {
  local mode=$1 port=$2 dir=$NL_TMP/cd-$1 pid i url n=0
  mkdir -p "$dir/plugins"
  cp /usr/lib/collectd/logfile.so /usr/lib/collectd/load.so "$NL_PLUGIN" \
    "$dir/plugins/"
  {
    cat <<EOF
BaseDir "$dir"
PIDFile "$dir/collectd.pid"
PluginDir "$dir/plugins"
TypesDB "/usr/share/collectd/types.db" "$NL_TYPES"
Interval 5
LoadPlugin logfile
<Plugin logfile>
  File "$dir/collectd.log"
</Plugin>
LoadPlugin load
EOF
    if [ "$mode" != off ]; then
      echo "LoadPlugin nats_lens"
      echo "<Plugin nats_lens>"
      if [ "$mode" = system ]; then
        printf '  <Instance "sa">\n    URL "nats://sys:sys@127.0.0.1:%s"\n    SystemAccount true\n    Timeout 5\n    ConsumerValues "none"\n  </Instance>\n' "$port"
      else
        while read -r url; do
          printf '  <Instance "a%03d">\n    URL "%s"\n    Timeout 5\n    Advisories false\n    ConsumerValues "none"\n  </Instance>\n' "$n" "$url"
          n=$((n + 1))
        done < <(urls "$port")
      fi
      echo "</Plugin>"
    fi
  } >"$dir/collectd.conf"
  collectd -f -C "$dir/collectd.conf" >/dev/null 2>&1 &
  pid=$!
  NL_PIDS+=("$pid")
  sleep $((CD_POLLS * 5 + 2))
  for ((i = 0; i < 10; i++)); do
    awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"
    sleep 1
  done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
  kill "$pid"
  wait "$pid" 2>/dev/null
}

# topology NAME PORT: the streams and consumers of every account on the
# server at PORT, both modes measured, and collectd's memory with each.
topology() {
  local topo=$1 port=$2 off sys per
  setup "$port" || return 1
  measure "$topo" "$port" || return 1
  off=$(collectd_rss off "$port")
  sys=$(collectd_rss system "$port")
  per=$(collectd_rss accounts "$port")
  echo "{\"topology\":\"$topo\",\"rss_kb\":{\"off\":$off,\"system\":$sys,\"accounts\":$per}}" >>"$JSON"
}

echo "# system account: one server, $ACCOUNTS accounts" >&2
cat >"$NL_TMP/single.conf" <<EOF
listen: 127.0.0.1:$PORT
jetstream { store_dir: "$NL_TMP/js-single" }
$(accounts_conf)
EOF
nl_start_server single "$PORT" -c "$NL_TMP/single.conf" || exit 1
SINGLE_PID=$NL_SERVER_PID
topology single "$PORT" || exit 1
kill "$SINGLE_PID"
wait "$SINGLE_PID" 2>/dev/null

echo "# system account: 3-node cluster, $ACCOUNTS accounts" >&2
NL_CLUSTER_EXTRA=$(accounts_conf)
nl_cluster_start $((PORT + 1)) || exit 1
CPORT=$(nl_cluster_client 1)
ready() {
  "$NL_INJECT" --server "nats://u000:u000@127.0.0.1:$CPORT" \
    request '$JS.API.INFO' 2>/dev/null | grep -q '"streams"'
}
nl_retry 60 ready || {
  echo "# the cluster has no meta leader" >&2
  exit 1
}
topology cluster "$CPORT" || exit 1

python3 - "$JSON" "$OUT_MD" "$ACCOUNTS" "$STREAMS" "$PER_STREAM" \
  "$(git -C "$NL_ROOT" rev-parse --short HEAD)" <<'PY'
import json, statistics, sys, datetime
path, out, accounts, streams, per = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
commit = sys.argv[6]
rows = [json.loads(l) for l in open(path)]
def med(topo, mode, key):
    return statistics.median(r["bench"][key] for r in rows
                             if r.get("topology") == topo and r.get("mode") == mode)
reference = accounts * (1 + streams * (2 + per))
lines = ["", "## System-account mode against the per-account mode", "",
         "Made by `bash tests/bench/system_account_bench.sh results/bench.md` "
         "(part of `make bench`) on %s (commit %s), 2-core machine, nats-server "
         "2.9.10 on 127.0.0.1: %d accounts, each with %d memory streams of %d "
         "durable pull consumers (%s consumers), 20 messages per stream; on the "
         "cluster every stream and consumer has one replica, placed by the "
         "server. Medians of the per-poll medians of several runs, both modes "
         "in the same run, alternating." % (
             datetime.date.today().isoformat(), commit, accounts, streams, per,
             format(accounts * streams * per, ",")), "",
         "| topology | mode | requests/poll | research monitor, 1+S(2+C) per account, summed | bytes/poll | wall ms/poll | CPU ms/poll |",
         "|---|---|---:|---:|---:|---:|---:|"]
for topo in ("single", "cluster"):
    for mode, label in (("system", "SystemAccount (1 Instance)"),
                        ("accounts", "per account (%d Instances)" % accounts)):
        if not any(r.get("topology") == topo and r.get("mode") == mode for r in rows):
            continue
        lines.append("| %s | %s | %s | %s | %s KiB | %.1f | %.1f |" % (
            topo, label, format(int(med(topo, mode, "requests_per_poll")), ","),
            format(reference, ","),
            format(int(med(topo, mode, "bytes_per_poll") / 1024), ","),
            med(topo, mode, "wall_ms_median"), med(topo, mode, "cpu_ms_median")))
rss = {r["topology"]: r["rss_kb"] for r in rows if "rss_kb" in r}
if rss:
    lines += ["", "collectd's resident memory growth (ConsumerValues \"none\", "
              "Interval 5, median of 10 samples 1 s apart; the per-account "
              "Instances each have their own connection, poll thread and "
              "engine):", "",
              "| topology | one SystemAccount Instance | %d per-account Instances |" % accounts,
              "|---|---:|---:|"]
    for topo in ("single", "cluster"):
        if topo in rss:
            r = rss[topo]
            lines.append("| %s | %.1f MB | %.1f MB |" % (
                topo, (r["system"] - r["off"]) / 1024,
                (r["accounts"] - r["off"]) / 1024))
lines += ["", "Wall time is the poll's time on the plugin's side: in the "
          "per-account mode the sum over the accounts polled one after "
          "another (collectd runs the Instances in parallel, each on its own "
          "thread); in SystemAccount mode the wait for every server's reply "
          "and the merge.", ""]
with open(out, "a") as f:
    f.write("\n".join(lines))
print("\n".join(lines))
PY
