#!/usr/bin/env bash
# tests/bench/dashboard_bench.sh OUT.md: the REST API and dashboard at
# 10,000 consumers (100 streams of 100 durable pull consumers, 20 messages
# each, one consumer throttled): the size of /api/streams whole and of the
# page the dashboard asks for, the time to answer each (median of
# NL_DASH_REQUESTS requests), and the time headless Chromium takes from
# opening the page to showing the first stream block and chart (median of
# NL_DASH_LOADS loads, tests/tools/browser_probe.py). Appends a section to
# OUT.md. Ports: NL_PORT_DASH_BENCH (default 14280) and the next one.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin dashboard_bench
OUT_MD=$1
PORT=$(nl_port NL_PORT_DASH_BENCH 14280)
HTTP=$((PORT + 1))
REQUESTS=${NL_DASH_REQUESTS:-9}
LOADS=${NL_DASH_LOADS:-5}
BASE="http://127.0.0.1:$HTTP"
nl_start_nats "$PORT" || exit 1
"$NL_ROOT/build/nl-bench" setup --server "nats://127.0.0.1:$PORT" --streams 100 \
  --consumers 100 --messages 20 || exit 1
nl_held_throttle "$PORT" 300 || exit 1
nl_start_collectd "<Instance \"dash\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
  ConsumerValues \"none\"
</Instance>" 5 || exit 1
polled() {
  curl -s "$BASE/api/streams?limit=1" | python3 -c 'import json, sys
d = json.load(sys.stdin); sys.exit(0 if d["total"] >= 101 else 1)' 2>/dev/null
}
nl_retry 60 polled || {
  echo "# the first poll of 10,000 consumers did not come" >&2
  exit 1
}
# median_of CMD...: runs CMD (which prints one number) REQUESTS times and
# prints the median.
median_of() {
  local n=$1 i
  shift
  for ((i = 0; i < n; i++)); do "$@"; done | sort -g |
    awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
fetch_ms() {
  curl -s -o /dev/null -w '%{time_total}\n' "$1" | awk '{ print $1 * 1000 }'
}
whole_bytes=$(curl -s "$BASE/api/streams" | wc -c)
page_bytes=$(curl -s "$BASE/api/streams?consumers=problem&limit=50&offset=0" | wc -c)
whole_ms=$(median_of "$REQUESTS" fetch_ms "$BASE/api/streams")
page_ms=$(median_of "$REQUESTS" fetch_ms "$BASE/api/streams?consumers=problem&limit=50&offset=0")
load_ms() {
  python3 "$NL_ROOT/tests/tools/browser_probe.py" "$BASE/" 1400 900 \
    "document.querySelector('#streams .stream') && document.querySelector('svg.chart')" \
    "Math.round(performance.now())" | tr -d '"'
}
first_ms=$(median_of "$LOADS" load_ms)
commit=$(git -C "$NL_ROOT" rev-parse --short HEAD)
cat >>"$OUT_MD" <<EOF

## The REST API and dashboard at 10,000 consumers

Made by \`make bench\` (commit $commit): 100 streams of 100 durable pull
consumers (one throttled), collectd with \`Listen\`, Interval 5.
\`/api/streams\` whole is $(awk -v b="$whole_bytes" 'BEGIN { printf "%.1f MB", b / 1048576 }'), answered in ${whole_ms} ms (median of
$REQUESTS); the page the dashboard asks for (\`?consumers=problem&limit=50&offset=0\`: problems
first) is $(awk -v b="$page_bytes" 'BEGIN { printf "%.0f KiB", b / 1024 }'), answered in ${page_ms} ms. Headless Chromium shows the first
stream block and chart ${first_ms} ms after it opens the page (median of $LOADS
loads, from navigation start, 1400x900). The longer history behind the
charts (30 s steps over an hour) is kept for at most 64 consumers, 2.9 KB
each: 185 KB at most, whatever the number of consumers.
EOF
echo "# whole ${whole_bytes} B ${whole_ms} ms, page ${page_bytes} B ${page_ms} ms, first render ${first_ms} ms" >&2
nl_end
