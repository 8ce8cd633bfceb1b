#!/usr/bin/env bash
# RETENTION_RISK's forecast on one real nats-server polled by real collectd
# loading the built plugin, with real cnats publishers and pull workers
# (tests/tools/nl-inject): two steady trends toward a limit, each raised
# before the first eviction of a message its consumer has not received,
# with the forecast as a value (nats_lens_eviction_forecast) and in the
# REST API only while it is trusted.
#   FA/slow  max_age 40 s; 20 msg/s published, one worker taking 100 ms a
#            message (10 msg/s): its oldest unreceived message ages by half
#            a second a second, evicted about 80 s after the start.
#   FC/slow  max_msgs 1,600; 40 msg/s published, two workers of 100 ms
#            (20 msg/s): the messages it still needs grow by 20 a second,
#            the first evicted about 80 s after the start.
# Silent, observed in its scenario: FK/keep (max_age 40 s, 20 msg/s read as
# they come): no forecast value, no finding.
# The first eviction of a message the consumer had not received is the
# first poll whose nats_lens_lost value for it is above 0 (SEQUENCE_GAP's
# count, tested on its own elsewhere), so the lead time is measured in the
# same run: the raise must come before it, with at least a third of the
# time from the start to it left. Everything stops by itself within 150 s.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin forecast
PORT=$(nl_port NL_PORT_FORECAST 15390)
HTTP=$((PORT + 1))
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
bg() { nl_inject_bg "$PORT" "$@"; }
if ! { inj stream-create FA --subjects 'fa.>' --max-age 40 &&
  inj consumer-create FA slow --ack-wait 30 &&
  inj stream-create FC --subjects 'fc.>' --max-msgs 1600 &&
  inj consumer-create FC slow --ack-wait 30 &&
  inj stream-create FK --subjects 'fk.>' --max-age 40 &&
  inj consumer-create FK keep --ack-wait 30; }; then
  nl_fail setup "could not create the streams and consumers"
  exit 1
fi

nl_start_collectd "<Instance \"fc\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
</Instance>" 1 || exit 1
START=$(date +%s)
bg pub_fa publish fa.x --count 3000 --rate 20
bg pub_fc publish fc.x --count 6000 --rate 40
bg pub_fk publish fk.x --count 3000 --rate 20
bg w_fa consume FA slow --duration 150 --workers 1 --process-ms 100
bg w_fc consume FC slow --duration 150 --workers 2 --process-ms 100
bg w_fk consume FK keep --duration 150 --workers 2

# first_evicted STREAM: the time (s since the start) of the first poll at
# which the consumer slow of STREAM had lost a message it had not
# received, or nothing.
first_evicted() {
  local f
  f=$(nl_csv_file "fc-$1" nats_lens_lost slow)
  [ -n "$f" ] && awk -F, -v s="$START" 'NR > 1 && $2 + 0 > 0 {
    printf "%.0f\n", $1 - s; exit }' "$f"
}

# forecast_api STREAM CONSUMER: the consumer's eviction_forecast_s in the
# REST API, or nothing when absent.
forecast_api() {
  curl -s "http://127.0.0.1:$HTTP/api/streams" | python3 -c '
import json, sys
for s in json.load(sys.stdin)["streams"]:
    for c in s.get("consumers", []):
        if s["name"] == sys.argv[1] and c["name"] == sys.argv[2] and \
                "eviction_forecast_s" in c:
            print(c["eviction_forecast_s"])' "$1" "$2" 2>/dev/null
}

# raised WHO LIMIT: waits for the RETENTION_RISK onset of WHO (its fix
# naming LIMIT) and checks that the forecast is a value and in the REST
# API; sets RAISED[WHO] to when it was raised (s since the start, from the
# notification's own time in collectd's log).
declare -A RAISED=()
raised() {
  local who=$1 limit=$2 line api value stream=${1%/*}
  if ! line=$(nl_wait_notification 130 "type_instance = RETENTION_RISK," \
    "RETENTION_RISK $who:" "$limit"); then
    nl_fail "$who/raised" "no RETENTION_RISK within 130 s"
    return
  fi
  RAISED[$who]=$(($(date -d "$(echo "$line" |
    sed -n 's/^\[\([^]]*\)\].*/\1/p')" +%s) - START))
  nl_pass "$who/raised" "at ${RAISED[$who]} s: ${line#*message = }"
  api=$(forecast_api "$stream" "${who#*/}")
  value=$(nl_csv_last "fc-$stream" nats_lens_eviction_forecast "${who#*/}")
  if [ -n "$api" ] && [ -n "$value" ]; then
    nl_pass "$who/forecast-value" "REST ${api} s, value ${value} s"
  else
    nl_fail "$who/forecast-value" "REST '${api}', value '${value}'"
  fi
}

# lead WHO: waits for WHO's first loss and checks it came after the raise,
# with at least a third of the time from the start to it left.
lead() {
  local who=$1 evicted= at=${RAISED[$1]:-}
  [ -n "$at" ] || return
  for ((i = 0; i < 100; i++)); do
    evicted=$(first_evicted "${who%/*}")
    [ -n "$evicted" ] && break
    sleep 1
  done
  if [ -n "$evicted" ] && [ "$at" -lt "$evicted" ] &&
    [ $((3 * (evicted - at))) -ge "$evicted" ]; then
    nl_pass "$who/lead" "raised at ${at} s, first loss at ${evicted} s"
  else
    nl_fail "$who/lead" "raised at ${at} s, first loss at ${evicted:-none} s"
  fi
}
raised FA/slow --max-age
raised FC/slow --max-msgs

# The dashboard shows the forecast under the backlog of the consumers that
# have one (headless Chromium, tests/tools/browser_probe.py), and nothing
# under FK/keep's, with no text wider than its cell at a phone's width.
if command -v chromium >/dev/null; then
  # The consumer tables are folded until opened: open them all first.
  out=$(python3 "$NL_ROOT/tests/tools/browser_probe.py" \
    "http://127.0.0.1:$HTTP/" 360 900 \
    "document.querySelectorAll('#streams .stream').length >= 3 &&
     (document.querySelectorAll('details.consumers').forEach(function (d) {
        d.open = true; }), document.querySelectorAll('.forecast').length >= 2 &&
      document.querySelectorAll('#streams tbody tr').length >= 3)" \
    "(function () {
       var seen = {}, wide = [];
       document.querySelectorAll('#streams .stream').forEach(function (b) {
         b.querySelectorAll('tbody tr').forEach(function (r) {
           var f = r.cells[2].querySelector('.forecast');
           seen[b.getAttribute('data-stream')] = f ? f.textContent : '';
           if (r.cells[2].scrollWidth > r.cells[2].clientWidth + 1)
             wide.push(b.getAttribute('data-stream'));
         });
       });
       return {seen: seen, wide: wide};
     })()" 2>&1)
  if echo "$out" | python3 -c '
import json, re, sys
d = json.loads(sys.stdin.read().strip().splitlines()[-1])
s = d["seen"]
ok = (re.match(r"(evicted in \S+ (s|min|h)|evicting) \(max_age\)$", s.get("FA", "")) and
      re.match(r"(evicted in \S+ (s|min|h)|evicting) \(max_msgs\)$", s.get("FC", "")) and
      s.get("FK") == "" and not d["wide"])
sys.exit(0 if ok else 1)'; then
    nl_pass dashboard/forecast-shown "$out"
  else
    nl_fail dashboard/forecast-shown "$out"
  fi
fi

lead FA/slow
lead FC/slow

# FK/keep was polled with work flowing and stays without a forecast.
if [ "$(nl_csv_rows fc-FK nats_lens_num_pending keep 1)" -ge 20 ] &&
  [ -z "$(nl_csv_file fc-FK nats_lens_eviction_forecast keep)" ] &&
  [ -z "$(forecast_api FK keep)" ]; then
  nl_pass FK/keep/no-forecast
else
  nl_fail FK/keep/no-forecast "polls $(nl_csv_rows fc-FK nats_lens_num_pending keep 1), value file '$(nl_csv_file fc-FK nats_lens_eviction_forecast keep)'"
fi
nl_check_silent FK/keep/silent FK/keep RETENTION_RISK
nl_end
