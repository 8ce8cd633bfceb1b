#!/usr/bin/env bash
# The REST API and dashboard of real collectd loading the built plugin
# (Listen "127.0.0.1" "PORT"), over a real nats-server with one injected
# MAX_PENDING_THROTTLE and consumers with awkward names.
#
# curl: every endpoint, status codes, content types, JSON validity, URL
# encoded names (%, #, ?, UTF-8, a NUL), 404, 400 and 405. Responsiveness:
# 200 requests from 20 clients while polls run must all succeed and must
# not slow the polls; with nats-server stopped (SIGSTOP) a poll hangs for
# its whole timeout (4 s), and requests made meanwhile must still be
# answered at once. Eighty slow connections from one client (slowloris)
# lock no other client out. Headless Chromium loads the page, runs its script, and the dumped
# DOM must hold the violation card with the class, the fix command and the
# copy button, the history charts, and the awkward names as text; a
# screenshot is taken too (kept with NL_KEEP_TMP=1). Bad Listen and prefix
# options give clear errors. libmicrohttpd is loaded only with Listen: a
# collectd polling without it maps neither libmicrohttpd nor GnuTLS, and
# with an empty stand-in library Listen fails with one clear line while
# the instance polls and notifies.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin http
PORT=$(nl_port NL_PORT_HTTP_NATS 14410)
HTTP=$(nl_port NL_PORT_HTTP 19400)
TIMEOUT=4 # seconds a poll waits for a reply (a hung poll lasts this long)
BASE="http://127.0.0.1:$HTTP"
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }

# MAX_PENDING_THROTTLE: a worker that never acks holds the 5 allowed.
nl_held_throttle "$PORT" || exit 1
# Awkward names: URL-reserved characters, UTF-8 and markup.
ODD_STREAM='odd%2F#x'
ODD_CONSUMER='c?&=1'
UTF_CONSUMER='café'
TAG_CONSUMER='x<b&amp;'
inj stream-create "$ODD_STREAM" --subjects 'odd.>' >/dev/null
inj consumer-create "$ODD_STREAM" "$ODD_CONSUMER" >/dev/null
inj consumer-create "$ODD_STREAM" "$UTF_CONSUMER" >/dev/null
inj consumer-create "$ODD_STREAM" "$TAG_CONSUMER" >/dev/null
# A stream-level finding: an Interest stream without consumers
# (INTEREST_NO_CONSUMERS after 60 s).
inj stream-create INT --subjects 'int.>' --retention interest >/dev/null
PROBE=$NL_ROOT/tests/tools/browser_probe.py

nl_start_collectd "<Instance \"web\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout $TIMEOUT
  Listen \"127.0.0.1\" \"$HTTP\"
</Instance>" 1 || exit 1
nl_wait_notification 20 "type_instance = MAX_PENDING_THROTTLE" "MP/stuck" \
  >/dev/null || nl_fail setup/violation "MAX_PENDING_THROTTLE not detected"
sleep 2 # a few polls in the history rings

# fetch NAME METHOD PATH: saves headers and body as $NL_TMP/NAME.{h,b};
# prints the status code.
fetch() {
  curl -s -o "$NL_TMP/$1.b" -D "$NL_TMP/$1.h" -X "$2" --max-time 5 \
    -w '%{http_code}' "$BASE$3"
}
ctype() { grep -i '^content-type:' "$NL_TMP/$1.h" | tr -d '\r' | cut -d' ' -f2-; }
json_ok() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$NL_TMP/$1.b"; }

# expect NAME METHOD PATH STATUS CONTENT_TYPE [PYTHON_CHECK]: one request
# and its checks; PYTHON_CHECK is an expression over the parsed body d.
expect() {
  local name=$1 code type
  code=$(fetch "$1" "$2" "$3")
  type=$(ctype "$1")
  if [ "$code" != "$4" ]; then
    nl_fail "$name" "$2 $3: status $code, expected $4"
  elif [ "$type" != "$5" ]; then
    nl_fail "$name" "$2 $3: content type '$type', expected '$5'"
  elif [ "$5" = application/json ] && ! json_ok "$1"; then
    nl_fail "$name" "$2 $3: body is not JSON"
  elif [ -n "${6:-}" ] && ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$NL_TMP/$1.b" "$6" 2>"$NL_TMP/$1.err"; then
    nl_fail "$name" "$2 $3: check failed: $6 $(head -c 300 "$NL_TMP/$1.b")"
  else
    nl_pass "$name" "$2 $3 -> $code"
  fi
}
J=application/json
H='text/html; charset=utf-8'

expect healthz GET /healthz 200 $J \
  'd["status"] == "ok" and d["instance"] == "web" and d["polls"] >= 1'
expect violations GET /api/violations 200 $J '
any(v["type"] == "MAX_PENDING_THROTTLE" and v["stream_name"] == "MP"
    and v["consumer_name"] == "stuck" and v["state"] == "firing"
    and v["violation"]["fix_command"].startswith("nats consumer edit MP stuck")
    and v["violation"]["max_ack_pending"] == 5 for v in d["violations"])
and d["count"] == len(d["violations"])'
expect streams GET /api/streams 200 $J '
{s["name"]: s for s in d["streams"]}["MP"]["health"] == "warning"
and [c["active"] for c in {s["name"]: s for s in d["streams"]}["MP"]["consumers"]
     if c["name"] == "stuck"] == [["MAX_PENDING_THROTTLE"]]
and sorted(c["name"] for c in {s["name"]: s for s in d["streams"]}["odd%2F#x"]["consumers"])
    == sorted(["c?&=1", "café", "x<b&amp;"])
and d["polled_at"] is not None'
expect history GET /api/history/MP/stuck 200 $J \
  'd["stream_name"] == "MP" and d["consumer_name"] == "stuck" and len(d["samples"]) >= 2 and d["active"] == ["MAX_PENDING_THROTTLE"] and all(a["t_ms"] < b["t_ms"] for a, b in zip(d["samples"], d["samples"][1:]))'
# Names percent-encoded: '%' '#' '?' '&' '=' and UTF-8 must reach the
# lookup decoded, exactly once.
expect history-encoded GET '/api/history/odd%252F%23x/c%3F%26%3D1' 200 $J \
  'd["stream_name"] == "odd%2F#x" and d["consumer_name"] == "c?&=1"'
expect history-utf8 GET '/api/history/odd%252F%23x/caf%C3%A9' 200 $J \
  'd["consumer_name"] == "café"'
expect history-markup GET '/api/history/odd%252F%23x/x%3Cb%26amp%3B' 200 $J \
  'd["consumer_name"] == "x<b&amp;"'
# Decoding once only: "odd%2F#x" sent as-is is the name "odd/#x"... which
# does not exist.
expect history-no-double-decode GET '/api/history/odd%2F%23x/c%3F%26%3D1' 404 $J \
  '"error" in d'
expect unknown-consumer GET /api/history/MP/nope 404 $J '"error" in d'
expect unknown-stream GET /api/history/NOPE/stuck 404 $J '"error" in d'
expect history-one-name GET /api/history/MP 404 $J '"error" in d'
expect history-extra GET /api/history/MP/stuck/x 404 $J '"error" in d'
expect unknown-path GET /nope 404 $J '"error" in d'
expect nul-in-name GET '/api/history/MP/st%00uck' 400 $J '"error" in d'
expect bad-escape GET '/api/history/MP/%zz' 400 $J '"error" in d'
expect long-name GET "/api/history/MP/$(head -c 3000 /dev/zero | tr '\0' a)" 400 $J \
  '"error" in d'
expect post POST /api/streams 405 $J '"error" in d'
expect delete DELETE /api/violations 405 $J '"error" in d'
if grep -qi '^allow: GET, HEAD' "$NL_TMP/delete.h"; then
  nl_pass allow-header
else
  nl_fail allow-header "$(cat "$NL_TMP/delete.h")"
fi
expect page GET / 200 "$H"
# The page is self-contained: no external URL (the SVG namespace is a name,
# not a fetch), no src/href, a content security policy that forbids others.
page=$NL_TMP/page.b
ext=$(grep -oE '(https?:)?//[A-Za-z0-9.-]+' "$page" | grep -v '^http://www.w3.org$' |
  grep -v '^//' || true)
if [ -z "$ext" ] && ! grep -qiE '<(script|link|img|iframe)[^>]*(src|href)=' "$page" &&
  grep -qi "^content-security-policy: default-src 'none'" "$NL_TMP/page.h"; then
  nl_pass page/self-contained "$(wc -c <"$page") bytes"
else
  nl_fail page/self-contained "external: $ext"
fi
code=$(curl -s -o /dev/null -w '%{http_code} %{size_download}' -I "$BASE/")
nl_check head [ "$code" = "200 0" ]

# Responsiveness while polls run: 20 clients x 10 requests.
T0=$(date +%s.%N)
overrun_before=$(nl_csv_last web derive polls_overrun)
for ((c = 0; c < 20; c++)); do
  (
    for ((i = 0; i < 10; i++)); do
      for p in /api/history/MP/stuck /api/streams; do
        curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}\n' \
          "$BASE$p"
      done
    done
  ) >"$NL_TMP/load-$c.txt" &
  NL_PIDS+=($!)
done
sleep 0.5
for ((i = 0; i < 300; i++)); do
  [ "$(cat "$NL_TMP"/load-*.txt | wc -l)" -ge 400 ] && break
  sleep 0.1
done
T1=$(date +%s.%N)
sleep 1.5 # the poll after the burst is in the CSV too
read -r ok total slow < <(cat "$NL_TMP"/load-*.txt |
  awk '{ n++; if ($1 == 200) ok++; if ($2 > m) m = $2 } END { print ok + 0, n + 0, m + 0 }')
polls=$(awk -F, -v a="$T0" -v b="$T1" 'NR > 1 && $1 >= a - 1 && $1 <= b + 1 {
  n++; if ($2 > m) m = $2 } END { printf "%d %.3f", n, m }' \
  "$(nl_csv_file web duration poll)")
if [ "$ok" -eq 400 ] && [ "$total" -eq 400 ]; then
  nl_pass load/all-answered "$ok of 400, slowest $slow s"
else
  nl_fail load/all-answered "$ok of $total answered 200 (400 sent)"
fi
# The polls went on at their interval during the load: some were made,
# and no read found the poll before it still running (derive
# polls_overrun did not move), whatever the machine's speed.
overrun_after=$(nl_csv_last web derive polls_overrun)
set -- $polls
if [ "$1" -ge 1 ] && [ -n "$overrun_before" ] &&
  [ "$overrun_after" = "$overrun_before" ]; then
  nl_pass load/polls-not-slowed "$1 polls during the load, longest $2 s, no overrun"
else
  nl_fail load/polls-not-slowed "$1 polls, longest $2 s, polls_overrun ${overrun_before:-?} -> ${overrun_after:-?}"
fi

# A poll that hangs: nats-server stopped, the poll waits for its timeout;
# requests made meanwhile are answered at once.
kill -STOP "$NL_NATS_PID"
sleep 1.3
slowest=0
failed=0
R0=$(date +%s.%N)
for ((i = 0; i < 10; i++)); do
  for p in /healthz /api/violations /api/streams /api/history/MP/stuck /; do
    r=$(curl -s -o /dev/null --max-time 3 -w '%{http_code} %{time_total}' "$BASE$p")
    case $r in 200* | 503*) ;; *) failed=$((failed + 1)) ;; esac
    slowest=$(awk -v a="$slowest" -v b="${r#* }" 'BEGIN { print (b > a ? b : a) }')
  done
done
R1=$(date +%s.%N)
# Right after the requests the hung poll has not ended: /healthz still
# reports the poll before it.
fetch during GET /healthz >/dev/null
# The poll fails at its timeout: /healthz says so (nats-server still
# stopped), with the start time of the poll that hung.
hung=0
for ((i = 0; i < TIMEOUT * 5 + 10; i++)); do
  hung=$(fetch hung GET /healthz)
  [ "$hung" = 503 ] && break
  sleep 0.2
done
# The page says so: a banner, and everything below it greyed.
banner=$(python3 "$PROBE" "$BASE/" 1400 900 \
  "!document.getElementById('banner').hidden" \
  "({cls: document.getElementById('banner').className,
     text: document.getElementById('banner').textContent,
     stale: document.getElementById('main').classList.contains('stale'),
     title: document.title})" 2>&1)
kill -CONT "$NL_NATS_PID"
case $banner in
*'"cls": "banner failing"'*'"stale": true'*) nl_pass dashboard/failing-banner "$banner" ;;
*) nl_fail dashboard/failing-banner "$banner" ;;
esac
if [ "$failed" -eq 0 ]; then
  nl_pass hung-poll/answered "50 requests, slowest $slowest s"
else
  nl_fail hung-poll/answered "$failed failed, slowest $slowest s"
fi
# The requests fell within the hung poll, shown by order rather than by a
# time window: the poll that failed started before the first request, and
# had not ended after the last one (/healthz then still said ok, with an
# earlier poll).
if [ "$hung" = 503 ] && python3 -c '
import datetime, json, sys
def t(v):
    return datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
d, during = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
start, r0 = t(d["last_poll_at"]), float(sys.argv[3])
ok = (d["status"] == "failing" and d["last_error"] and start <= r0 and
      during["status"] == "ok" and t(during["last_poll_at"]) < start)
print("# hung poll started %.3f, first request %.3f; after the last: %s, poll %s" %
      (start, r0, during["status"], during["last_poll_at"]))
sys.exit(0 if ok else 1)' "$NL_TMP/hung.b" "$NL_TMP/during.b" "$R0"; then
  nl_pass hung-poll/during-the-poll "$(head -c 160 "$NL_TMP/hung.b")"
else
  nl_fail hung-poll/during-the-poll "status $hung: $(head -c 300 "$NL_TMP/hung.b"); after the requests: $(head -c 200 "$NL_TMP/during.b")"
fi
recovered=no
for ((i = 0; i < 50; i++)); do
  [ "$(fetch back GET /healthz)" = 200 ] && recovered=yes && break
  sleep 0.2
done
nl_check hung-poll/recovers [ "$recovered" = yes ]
nl_wait_notification 10 "type_instance = MAX_PENDING_THROTTLE" "MP/stuck" \
  >/dev/null

# Slowloris: 80 connections from 127.0.0.1 that send a request header one
# byte a second and never finish it. One client holds at most 16
# connections, so another client (127.0.0.2) is still answered. The slow client reports how many of its
# connections the server kept open while the others asked (at least one:
# the attack really held slots) and stops by itself after 30 s.
python3 - "$HTTP" "$NL_TMP/loris" <<'EOF2' &
import os, socket, sys, time
port, state = int(sys.argv[1]), sys.argv[2]
socks = []
for _ in range(80):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(s)
    except OSError:
        s.close()
def alive():
    n = 0
    for s in socks:
        try:
            s.send(b"a")
            s.setblocking(False)
            try:
                n += s.recv(1, socket.MSG_PEEK) != b""
            except BlockingIOError:
                n += 1
            s.setblocking(True)
        except OSError:
            pass
    return n
end = time.time() + 30
open(state + ".ready.tmp", "w").write(str(alive()))
os.rename(state + ".ready.tmp", state + ".ready")
while time.time() < end and not os.path.exists(state + ".probed"):
    time.sleep(1)
    alive()  # one byte more on each: never idle long enough to be closed
open(state + ".held", "w").write(str(alive()))
EOF2
NL_PIDS+=($!)
for ((i = 0; i < 100; i++)); do
  [ -e "$NL_TMP/loris.ready" ] && break
  sleep 0.1
done
other=$(curl -s -o /dev/null --max-time 5 --interface 127.0.0.2 -w '%{http_code}' "$BASE/healthz")
touch "$NL_TMP/loris.probed"
for ((i = 0; i < 50; i++)); do
  [ -e "$NL_TMP/loris.held" ] && break
  sleep 0.1
done
held=$(cat "$NL_TMP/loris.held" 2>/dev/null || echo 0)
if [ "$held" -ge 1 ] && [ "$held" -le 16 ] && [ "$other" = 200 ]; then
  nl_pass slowloris/others-answered "slow client held $held of 80 connections; 127.0.0.2 got $other"
else
  nl_fail slowloris/others-answered "slow client held $held of 80; 127.0.0.2 got $other"
fi

# Headless Chromium over the DevTools protocol (tests/tools/browser_probe.py).
# The layout at three widths: no element reaches past the viewport (no
# horizontal scrolling) and no text is wider than its box (cut or
# overlapping the next); screenshots are kept in $NL_TMP.
for width in 360 768 1400; do
  out=$(python3 "$PROBE" "$BASE/" "$width" 900 \
    "document.querySelector('#streams .stream') && document.querySelector('.card')" \
    "(function () {
       var bad = [];
       document.querySelectorAll('body *').forEach(function (e) {
         var r = e.getBoundingClientRect();
         if (r.width > 0 && (r.right > $width + 1 || r.left < -1))
           bad.push(e.tagName + '.' + e.className + ' ' + Math.round(r.left) +
                    '..' + Math.round(r.right));
         /* Text cut or running into its neighbour: content wider than its
          * box (a cell, a heading, a badge). */
         if (e.matches('th, td, h3, strong, .badge, .where, code') &&
             e.scrollWidth > e.clientWidth + 1)
           bad.push(e.tagName + '.' + e.className + ' holds ' + e.scrollWidth +
                    ' px in ' + e.clientWidth);
       });
       return {scroll_width: document.documentElement.scrollWidth,
               too_wide: bad.slice(0, 5)};
     })()" "$NL_TMP/dashboard-$width.png" 2>&1)
  case $out in
  *'"scroll_width": '"$width"','*'"too_wide": []'*) nl_pass "dashboard/layout-$width" "$out" ;;
  *) nl_fail "dashboard/layout-$width" "$out" ;;
  esac
done
# Updated in place: a selected fix command is still the same node, still
# selected, after two refreshes of the page (seen by the "data as of" line
# changing); the Copy button puts exactly that command on the clipboard.
want=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print([v for v in d["violations"] if v["type"] == "MAX_PENDING_THROTTLE"][0]["violation"]["fix_command"])' \
  <(curl -s "$BASE/api/violations"))
out=$(python3 "$PROBE" "$BASE/" 1400 900 \
  "document.querySelector('.card[data-class=MAX_PENDING_THROTTLE] .fix-command')" \
  "new Promise(function (done) {
     var code = document.querySelector('.card[data-class=MAX_PENDING_THROTTLE] .fix-command');
     var range = document.createRange();
     range.selectNodeContents(code);
     getSelection().removeAllRanges();
     getSelection().addRange(range);
     var changes = 0, seen = new MutationObserver(function () {
       if (++changes < 2) return;
       seen.disconnect();
       var kept = document.querySelector('.card[data-class=MAX_PENDING_THROTTLE] .fix-command') === code;
       var selected = getSelection().toString();
       code.closest('.card').querySelector('button.copy').click();
       setTimeout(function () {
         navigator.clipboard.readText().then(function (t) {
           done({same_node: kept, selected: selected, clipboard: t});
         }, function (e) { done({same_node: kept, selected: selected, error: String(e)}); });
       }, 300);
     });
     seen.observe(document.getElementById('updated'),
                  {childList: true, characterData: true, subtree: true});
   })" 2>&1)
if python3 -c 'import json, sys
d = json.loads(sys.argv[1]); want = sys.argv[2]
sys.exit(0 if d.get("same_node") and d.get("selected") == want and d.get("clipboard") == want else 1)' "$out" "$want" 2>/dev/null; then
  nl_pass dashboard/in-place-and-copy "$out"
else
  nl_fail dashboard/in-place-and-copy "want \"$want\": $out"
fi
# The history chart of a consumer with a finding: its longer history (30 s
# steps, kept from the finding's first poll), a scale and a time span
# written on it, each point's values on hover, and the onset marked.
out=$(python3 "$PROBE" "$BASE/" 1400 900 \
  "document.querySelector('.stream[data-stream=MP] svg.chart line.onset')" \
  "(function () {
     var svg = document.querySelector('.stream[data-stream=MP] svg.chart');
     return {labels: Array.from(svg.querySelectorAll('text')).map(function (t) { return t.textContent; }),
             points: svg.querySelectorAll('rect.point').length,
             hover: svg.querySelector('rect.point title').textContent};
   })()" 2>&1)
case $out in
*'"labels": ["max 45"'*'30 s steps'*'latest"]'*'"hover": "'*'pending 45, ack pending 5'*) nl_pass dashboard/history-chart "$out" ;;
*) nl_fail dashboard/history-chart "$out" ;;
esac

# The throttle stood before collectd started (the worker took its 5
# messages first): its condition is dated by the server's last delivery,
# before the plugin first saw it, and the card says "held for at least".
out=$(curl -s "$BASE/api/violations" | python3 -c 'import json, sys
v = [x for x in json.load(sys.stdin)["violations"] if x["type"] == "MAX_PENDING_THROTTLE"][0]
print("%s %s %s" % (v["condition_since"] is not None and v["condition_since"] < v["firing_since"],
                    v["condition_since"], v["firing_since"]))')
card=$(python3 "$PROBE" "$BASE/" 1400 900 \
  "document.querySelector('.card[data-class=MAX_PENDING_THROTTLE] .since')" \
  "document.querySelector('.card[data-class=MAX_PENDING_THROTTLE] .since').textContent" 2>&1)
case "$out|$card" in
True*'|"held for at least '*) nl_pass dashboard/condition-since "$out; $card" ;;
*) nl_fail dashboard/condition-since "$out; $card" ;;
esac

# A healthy stream comes collapsed, with only its counts: opened, it lists
# every consumer (asked for on its own), names shown as typed, with charts.
out=$(python3 "$PROBE" "$BASE/" 1400 900 \
  "document.querySelector('.stream[data-stream=\"odd%2F#x\"] details')" \
  "new Promise(function (done) {
     var block = document.querySelector('.stream[data-stream=\"odd%2F#x\"]');
     var details = block.querySelector('details');
     var before = {open: details.open, rows: block.querySelectorAll('tbody tr').length};
     details.open = true;
     var tries = 0;
     (function wait() {
       var rows = block.querySelectorAll('tbody tr');
       if ((rows.length < 3 || block.querySelectorAll('svg.chart').length < 3) && ++tries < 100)
         return setTimeout(wait, 100);
       done({before: before, rows: rows.length,
             charts: block.querySelectorAll('svg.chart').length,
             names: Array.from(rows).map(function (r) { return r.dataset.consumer; }).sort(),
             text: block.querySelector('tbody').textContent.indexOf('x<b&amp;') >= 0});
     })();
   })" 2>&1)
case $out in
*'"before": {"open": false, "rows": 0}'*'"rows": 3'*'"charts": 3'*'"names": ["c?&=1", "caf\u00e9", "x<b&amp;"]'*'"text": true'*)
  nl_pass dashboard/healthy-stream-opens "$out" ;;
*) nl_fail dashboard/healthy-stream-opens "$out" ;;
esac

# A stream-level finding shows on the page: its card, and its stream first
# among the streams, with its severity.
if nl_wait_notification 90 "type_instance = INTEREST_NO_CONSUMERS" "INT" >/dev/null; then
  out=$(python3 "$PROBE" "$BASE/" 1400 900 \
    "document.querySelector('.card[data-class=INTEREST_NO_CONSUMERS]')" \
    "({where: document.querySelector('.card[data-class=INTEREST_NO_CONSUMERS] .names').textContent,
       first_stream: document.querySelector('#streams .stream').dataset.stream,
       badge: document.querySelector('#streams .stream .stream-head .badge').textContent})" 2>&1)
  case $out in
  *'"where": "stream INT"'*'"first_stream": "INT"'*) nl_pass dashboard/stream-finding "$out" ;;
  *) nl_fail dashboard/stream-finding "$out" ;;
  esac
else
  nl_fail dashboard/stream-finding "no INTEREST_NO_CONSUMERS for INT within 90 s"
fi

# Headless Chromium: the page runs its script against the live API.
chromium_run() {
  timeout 90 chromium --headless --no-sandbox --disable-gpu \
    --disable-background-networking --disable-component-update --disable-sync \
    --no-first-run --user-data-dir="$(mktemp -d "$NL_TMP/chromium.XXXXXX")" \
    --virtual-time-budget=5000 "$@" 2>>"$NL_TMP/chromium.err"
}
if ! command -v chromium >/dev/null; then
  nl_fail dashboard/chromium "chromium is not installed (.ci/install-deps.sh)"
else
  chromium_run --dump-dom "$BASE/" >"$NL_TMP/dom.html"
  python3 - "$NL_TMP/dom.html" <<'EOF'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
def check(name, ok, detail=""):
    print("%s http/dashboard/%s%s" % ("PASS" if ok else "FAIL", name,
          (" (%s)" % detail if ok else ": " + detail) if detail or not ok else ""))
    return ok
card = re.search(r'<article class="card warning" data-class="MAX_PENDING_THROTTLE"'
                 r' data-stream="MP" data-consumer="stuck">(.*?)</article>', dom, re.S)
check("card", card is not None, "%d bytes of DOM" % len(dom))
body = card.group(1) if card else ""
check("card-class-name",
      '<span class="class-name">MAX_PENDING_THROTTLE</span>' in body)
check("card-description", re.search(r'<p class="description">[^<]*max_ack_pending'
                                    r'[^<]*</p>', body) is not None)
check("card-fix-command", re.search(r'<code class="fix-command">nats consumer edit MP'
                                    r' stuck --max-pending \d+</code>', body) is not None)
check("card-copy-button", '<button class="copy" type="button"' in body)
check("stream-blocks", 'data-stream="MP"' in dom and
      'data-stream="odd%2F#x"' in dom)
check("health-badge", re.search(r'<tr data-consumer="stuck">.*?<span class="badge '
                                r'warning">warning</span>', dom, re.S) is not None)
check("history-charts", dom.count('<svg class="chart"') >= 1 and '<polyline' in dom,
      "%d charts" % dom.count('<svg class="chart"'))
check("status", re.search(r'<span class="badge ok" id="status">polling</span>', dom)
      is not None)
EOF
  chromium_run --screenshot="$NL_TMP/dashboard.png" --window-size=1280,900 \
    "$BASE/" >/dev/null
  size=$(stat -c %s "$NL_TMP/dashboard.png" 2>/dev/null || echo 0)
  if [ "$size" -gt 20000 ]; then
    nl_pass dashboard/screenshot "$size bytes, $NL_TMP/dashboard.png"
  else
    nl_fail dashboard/screenshot "no screenshot ($size bytes)"
  fi
fi

# A finding that ends is listed as recently resolved, in /api/violations
# and on the page: the Interest stream without consumers is deleted (its
# INTEREST_NO_CONSUMERS ends with the reason "stream not listed").
inj stream-delete INT >/dev/null
if nl_wait_notification 20 "severity = OKAY" "type_instance = INTEREST_NO_CONSUMERS" >/dev/null; then
  out=$(python3 "$PROBE" "$BASE/" 1400 900 \
    "document.querySelector('#resolved .resolved-item[data-class=INTEREST_NO_CONSUMERS]')" \
    "document.querySelector('#resolved .resolved-item[data-class=INTEREST_NO_CONSUMERS]').textContent" 2>&1)
  api=$(curl -s "$BASE/api/violations" | python3 -c 'import json, sys
r = [x for x in json.load(sys.stdin)["resolved"] if x["type"] == "INTEREST_NO_CONSUMERS"]
print("%s|%s|%s|%s" % (r[0]["stream_name"], r[0]["reason"], "lost_while_firing" in r[0], bool(r[0]["resolved_at"])) if r else "none")')
  case "$api#$out" in
  "INT|stream not listed|True|True#"*"stream INT"*"stream not listed"*) nl_pass dashboard/recently-resolved "$api; $out" ;;
  *) nl_fail dashboard/recently-resolved "api: $api; page: $out" ;;
  esac
else
  nl_fail dashboard/recently-resolved "no OKAY INTEREST_NO_CONSUMERS after the stream was deleted"
fi

# Bad options: a second collectd with each mistake; clear errors, no crash.
MAIN_TMP=$NL_TMP
MAIN_COLLECTD=$NL_COLLECTD_PID
NL_TMP=$MAIN_TMP/bad
mkdir -p "$NL_TMP"
nl_start_collectd "<Instance \"badport\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"70000\"
</Instance>
<Instance \"inuse\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
</Instance>
<Instance \"oneword\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\"
</Instance>
<Instance \"prefix\">
  URL \"nats://127.0.0.1:$PORT\"
  HealthSubjectPrefix \"nats.*.health\"
</Instance>
<Instance \"interval\">
  URL \"nats://127.0.0.1:$PORT\"
  SummaryInterval -1
</Instance>" 1 >/dev/null 2>&1
sleep 1
bad_option() {
  if grep -qF "$2" "$NL_TMP/collectd.log"; then
    nl_pass "bad-option/$1" "$2"
  else
    nl_fail "bad-option/$1" "no log line '$2'"
  fi
}
bad_option port 'Instance "badport": Listen: port "70000" is not a number from 1 to 65535'
bad_option in-use "Instance \"inuse\": Listen: cannot listen on 127.0.0.1 port $HTTP: Address already in use"
bad_option one-value 'Instance "oneword": option Listen needs an address and a port'
bad_option prefix 'Instance "prefix": HealthSubjectPrefix "nats.*.health" is not a subject prefix'
bad_option summary-interval 'Instance "interval": option SummaryInterval needs a number of seconds'
NL_TMP=$MAIN_TMP
nl_check collectd/alive kill -0 "$MAIN_COLLECTD"
nl_check collectd/still-serving [ "$(fetch final GET /healthz)" = 200 ]

# libmicrohttpd is opened only by an instance that sets Listen (the plugin
# does not link it): the collectd above maps it and GnuTLS; one polling
# without Listen maps neither.
# maps_count PID PATTERN: lines of the process's memory map naming PATTERN.
maps_count() { grep -c -e "$2" "/proc/$1/maps" 2>/dev/null || true; }
# polled NAME: the instance's duration-poll CSV holds at least two polls.
polled() { [ "$(cat "$(nl_csv_file "$1" duration poll)" 2>/dev/null | wc -l)" -ge 3 ]; }
mhd=$(maps_count "$MAIN_COLLECTD" libmicrohttpd)
tls=$(maps_count "$MAIN_COLLECTD" libgnutls)
if [ "${mhd:-0}" -gt 0 ] && [ "${tls:-0}" -gt 0 ]; then
  nl_pass lazy-library/listen-maps-it "libmicrohttpd $mhd, libgnutls $tls mappings"
else
  nl_fail lazy-library/listen-maps-it "libmicrohttpd ${mhd:-?}, libgnutls ${tls:-?} mappings"
fi
NL_TMP=$MAIN_TMP/nolisten
mkdir -p "$NL_TMP"
if nl_start_collectd "<Instance \"plain\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 && nl_retry 10 polled plain; then
  own=$(maps_count "$NL_COLLECTD_PID" nats_lens.so)
  mhd=$(maps_count "$NL_COLLECTD_PID" libmicrohttpd)
  tls=$(maps_count "$NL_COLLECTD_PID" libgnutls)
  if [ "${own:-0}" -gt 0 ] && [ "$mhd" = 0 ] && [ "$tls" = 0 ]; then
    nl_pass lazy-library/no-listen-no-map "polling; nats_lens.so $own, libmicrohttpd 0, libgnutls 0 mappings"
  else
    nl_fail lazy-library/no-listen-no-map "nats_lens.so ${own:-?}, libmicrohttpd ${mhd:-?}, libgnutls ${tls:-?} mappings"
  fi
else
  nl_fail lazy-library/no-listen-no-map "collectd without Listen did not poll"
fi
# Nor does the plugin need libm (about 320 kB resident in collectd for one
# llround call before).
needed=$(objdump -p "$NL_PLUGIN" | awk '$1 == "NEEDED" { printf "%s ", $2 }')
case "$needed" in
*libm.so*) nl_fail lazy-library/no-libm "NEEDED: $needed" ;;
*libnats*) nl_pass lazy-library/no-libm "NEEDED: $needed" ;;
*) nl_fail lazy-library/no-libm "cannot read NEEDED of $NL_PLUGIN: $needed" ;;
esac
kill "$NL_COLLECTD_PID" 2>/dev/null

# A libmicrohttpd.so.12 without its functions (an empty shared object found
# first through LD_LIBRARY_PATH): Listen fails with one clear error line,
# and the instance still polls and notifies.
NL_TMP=$MAIN_TMP/nolib
mkdir -p "$NL_TMP/lib"
cc -shared -o "$NL_TMP/lib/libmicrohttpd.so.12" -x c /dev/null
SAVED_WRAPPER=${NL_COLLECTD_WRAPPER:-}
NL_COLLECTD_WRAPPER="env LD_LIBRARY_PATH=$NL_TMP/lib $SAVED_WRAPPER"
nl_start_collectd "<Instance \"nolib\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$((HTTP + 1))\"
</Instance>" 1 >/dev/null 2>&1
NL_COLLECTD_WRAPPER=$SAVED_WRAPPER
line="nats_lens plugin: Instance \"nolib\": Listen needs libmicrohttpd.so.12: $NL_TMP/lib/libmicrohttpd.so.12: undefined symbol: MHD_start_daemon; it polls without the REST API and dashboard."
if nl_wait_notification 10 "type_instance = MAX_PENDING_THROTTLE" "MP/stuck" \
  >/dev/null && nl_retry 5 polled nolib; then
  nl_pass lazy-library/missing-polls "polls and notifies without the library"
else
  nl_fail lazy-library/missing-polls "no poll or notification: $(tail -n 3 "$NL_TMP/collectd.log" 2>/dev/null)"
fi
n=$(grep -cF -e "$line" "$NL_TMP/collectd.log" 2>/dev/null)
if [ "${n:-0}" = 1 ]; then
  nl_pass lazy-library/missing-error "$line"
else
  nl_fail lazy-library/missing-error "$n lines '$line': $(grep nolib "$NL_TMP/collectd.log" | head -n 3)"
fi
nl_check lazy-library/missing-no-listener [ "$(curl -s -o /dev/null -w '%{http_code}' \
  --max-time 2 "http://127.0.0.1:$((HTTP + 1))/healthz")" = 000 ]
kill "$NL_COLLECTD_PID" 2>/dev/null
NL_TMP=$MAIN_TMP
nl_end
