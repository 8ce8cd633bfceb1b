#!/usr/bin/env bash
# RATE_LIMITED on one real nats-server polled by real collectd loading the
# built plugin, with real cnats publishers and push subscribers
# (tests/tools/nl-inject). Every rate-limited stream is a file stream
# with max_msg_size 1024, so that each rate limit lets through a first
# burst of 1,024 bytes only (else one of the server's max payload, 1 MB);
# every message has a 100-byte payload (about 150 bytes a delivery with
# its subject and reply subject, as the server counts them).
#   RL/slow     rate_limit_bps 8000 (1,000 B/s, about 6.6 msg/s) while 10
#               msg/s arrive (max_msgs 100,000): raised once the window
#               (RateLimitedSeconds 20, about 20 polls) shows it at its
#               limit and behind; the polls and the backlog's growth of the
#               window are read from the plugin's own values; no command
#               is printed (nats consumer edit has no flag for the limit)
#               and the recommendation's way is taken (the consumer's
#               information with the new rate_limit_bps in FILE, applied
#               as `nats consumer edit RL slow --config FILE` does), read
#               back; the finding clears at once, the backlog shrinks, and
#               it stays clear.
# Silent, each observed in its scenario: RLA/above (24,000 bit/s, above
# the 10 msg/s, sent at its limit while a backlog of 300 drains), RLB/burst
# (8,000 bit/s, bursts of 100 messages at 20 msg/s every 20 s: its backlog
# grows, then drains to nothing), RLN/nolimit (a push consumer without a
# limit whose subscriber takes 200 ms a message: its messages wait
# unacknowledged).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin rate_limited
PORT=$(nl_port NL_PORT_RATE_LIMITED 15330)
HTTP=$((PORT + 1))
INTERVAL=1
WINDOW=20
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
bg() { nl_inject_bg "$PORT" "$@"; }
FILE=(--storage file --max-msg-size 1024)
setup() {
  inj stream-create RL --subjects 'rl.>' "${FILE[@]}" --max-msgs 100000 &&
    inj consumer-create RL slow --deliver-subject dlv.rl.slow \
      --rate-limit-bps 8000 &&
    inj stream-create RLA --subjects 'rla.>' "${FILE[@]}" &&
    inj consumer-create RLA above --deliver-subject dlv.rla.above \
      --rate-limit-bps 24000 &&
    inj stream-create RLB --subjects 'rlb.>' "${FILE[@]}" &&
    inj consumer-create RLB burst --deliver-subject dlv.rlb.burst \
      --rate-limit-bps 8000 &&
    inj stream-create RLN --subjects 'rln.>' --storage file &&
    inj consumer-create RLN nolimit --deliver-subject dlv.rln.nolimit &&
    inj publish rla.x --count 300 --size 100
}
setup || {
  nl_fail setup "could not create the streams and consumers"
  exit 1
}

# Everything stops by itself within 150 s.
for c in RL/slow RLA/above RLB/burst; do
  bg "sub_${c#*/}" consume "${c%/*}" "${c#*/}" --mode push --duration 150
done
bg sub_nolimit consume RLN nolimit --mode push --duration 150 \
  --process-ms 200
bg pub_rl publish rl.x --count 1500 --rate 10 --size 100
bg pub_rla publish rla.x --count 1500 --rate 10 --size 100
bg pub_rln publish rln.x --count 1500 --rate 10 --size 100
(for _ in 1 2 3 4 5 6 7; do
  nl_inject "$PORT" publish rlb.x --count 100 --rate 20 --size 100 \
    >/dev/null || exit 1
  sleep 15
done) 2>"$NL_TMP/pub_rlb.err" &
NL_PIDS+=($!)

START=$(date +%s)
nl_start_collectd "<Instance \"rl\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
  RateLimitedSeconds $WINDOW
</Instance>" "$INTERVAL" || exit 1

# violation CONSUMER: RL's RATE_LIMITED finding of CONSUMER in the REST
# API, as JSON.
violation() {
  curl -s "http://127.0.0.1:$HTTP/api/violations" | python3 -c '
import json, sys
for v in json.load(sys.stdin)["violations"]:
    if v["type"] == "RATE_LIMITED" and v["consumer_name"] == sys.argv[1]:
        print(json.dumps(v["violation"]))' "$1"
}

if line=$(nl_wait_notification 120 "severity = WARNING" \
  "type_instance = RATE_LIMITED," "RATE_LIMITED RL/slow:" \
  "fix: no command, see the recommendation" "rate_limit_bps=8000"); then
  nl_pass detected/RL/slow "${line#*message = }"
else
  nl_fail detected/RL/slow "no RATE_LIMITED for RL/slow"
fi
RAISED=$(date +%s)
v=$(violation slow)

# The window that raised it, from the plugin's own values of this run:
# RL/slow polled with a backlog over at least WINDOW s (less half a second:
# the values carry the time of their dispatch, the window that of each
# poll's start) and at least 7 polls (6 after the first) up to the poll
# whose nats_lens_rate_limited value is first 1, its backlog higher there
# than WINDOW s before; and what the plugin measured against the limit
# (1,000 B/s).
onset_poll() {
  onset=$(awk -F, 'NR > 1 && $2 + 0 == 1 { print $1; exit }' \
    "$(nl_csv_file rl-RL nats_lens_rate_limited slow)" 2>/dev/null)
  [ -n "$onset" ]
}
nl_retry 10 onset_poll
pend=$(nl_csv_file rl-RL nats_lens_num_pending slow)
read -r polls span grew < <(awk -F, -v t="${onset:-0}" -v w="$WINDOW" '
  NR > 1 && $2 + 0 > 0 && first == "" { first = $1 }
  NR > 1 && $1 <= t { last = $1; p1 = $2; if (first != "") n++ }
  NR > 1 && $1 <= t - w { start = $2 }
  END { printf "%d %.3f %d\n", n, (first != "") ? last - first : 0,
          (start != "" && p1 > start) ? p1 - start : 0 }' \
  "${pend:-/dev/null}")
if [ "${polls:-0}" -ge 7 ] && awk -v s="${span:-0}" -v w="$WINDOW" \
  'BEGIN { exit !(s >= w - 0.5) }' && [ "${grew:-0}" -gt 0 ]; then
  nl_pass window/RL/slow "$polls polls over $span s with a backlog up to \
the onset; backlog grew by $grew over the last ${WINDOW} s"
else
  nl_fail window/RL/slow "onset ${onset:-none}, polls ${polls:-?}, span \
${span:-?} s, growth ${grew:-?} ($pend)"
fi
if python3 -c '
import json, sys
v = json.loads(sys.argv[1])
r = v["delivered_bytes_per_s"] / 1000
assert 0.8 <= r <= 1.25, r
assert v["incoming_bytes_per_s"] > v["delivered_bytes_per_s"] * 1.2, v
assert v["window_s"] >= int(sys.argv[2]) and v["window_polls"] >= 6, v
assert v["eviction_forecast_s"] > 3600, v
assert v["recommended_rate_limit_bps"] >= 2 * 8 * v["incoming_bytes_per_s"], v
assert "nats consumer edit RL slow --config FILE" in v["recommendation"], v
print("sent %.2f of the limit, incoming %d B/s, eviction in %d s" % (
    r, v["incoming_bytes_per_s"], v["eviction_forecast_s"]))' "$v" "$WINDOW" \
  >"$NL_TMP/evidence.txt" 2>&1; then
  nl_pass evidence/RL/slow "$(cat "$NL_TMP/evidence.txt")"
else
  nl_fail evidence/RL/slow "$(tail -n 1 "$NL_TMP/evidence.txt"): ${v:-none}"
fi

# The fix as the recommendation says; read back.
rec=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["recommendation"])' \
  "${v:-{\}}" 2>/dev/null)
if got=$(nl_apply_recommended_rate "$PORT" "$rec"); then
  nl_pass fix-applied/RL/slow "$got"
else
  nl_fail fix-applied/RL/slow "read back ${got:-nothing}; $rec"
fi
FIXED=$(date +%s)
at_fix=$(nl_csv_int rl-RL nats_lens_num_pending slow)
if nl_wait_notification 10 "severity = OKAY" "type_instance = RATE_LIMITED," \
  "RATE_LIMITED RL/slow cleared" >/dev/null; then
  nl_pass cleared/RL/slow
else
  nl_fail cleared/RL/slow "no OKAY after the fix"
fi
# The backlog shrinks at the new rate: polls after the fix see less.
shrunk() {
  local now
  now=$(nl_csv_int rl-RL nats_lens_num_pending slow)
  [ -n "$now" ] && [ "$now" -lt $((at_fix / 2)) ]
}
if nl_retry 60 shrunk; then
  nl_pass backlog-shrinks/RL/slow "$at_fix at the fix, \
$(nl_csv_int rl-RL nats_lens_num_pending slow) $(($(date +%s) - FIXED)) s later"
else
  nl_fail backlog-shrinks/RL/slow "$at_fix at the fix, \
$(nl_csv_int rl-RL nats_lens_num_pending slow) now"
fi

# The look-alikes, observed in their scenarios over more than a window
# each: RLB has had at least two bursts that drained while polled.
bursts_seen() {
  awk -F, 'NR > 1 && $2 + 0 >= 30 { up = 1 }
    NR > 1 && $2 + 0 == 0 && up { n++; up = 0 }
    END { exit !(n >= 2) }' \
    "$(nl_csv_file rl-RLB nats_lens_num_pending burst)" 2>/dev/null
}
nl_retry 60 bursts_seen
# look CONSUMER STREAM WHAT AWK: PASS when the plugin's values of the
# consumer show its scenario (AWK over num_pending rows, exits 0) and no
# RATE_LIMITED was raised for it.
look() {
  local who=$1 what=$2 file=$3 prog=$4 got
  got=$(nl_notifications "RATE_LIMITED $who:")
  if [ -n "$got" ]; then
    nl_fail "look-alike/$who" "$got"
  elif ! awk -F, "$prog" "$file" 2>/dev/null; then
    nl_fail "look-alike/$who" "scenario not seen ($what): $file"
  else
    nl_pass "look-alike/$who" "$what, silent"
  fi
}
look RLA/above "a backlog of 300 drained at its limit over more than \
$WINDOW s and 7 polls" "$(nl_csv_file rl-RLA nats_lens_num_pending above)" \
  'NR > 1 && $2 + 0 >= 100 { hi = 1 }
   NR > 1 && $2 + 0 > 0 { n++; if (a == "") a = $1; b = $1 }
   NR > 1 && hi && $2 + 0 == 0 { z = 1 }
   END { exit !(z && n >= 7 && b - a >= '"$WINDOW"') }'
look RLB/burst "two bursts grew and drained" \
  "$(nl_csv_file rl-RLB nats_lens_num_pending burst)" \
  'NR > 1 && $2 + 0 >= 30 { up = 1 } NR > 1 && $2 + 0 == 0 && up { n++; up = 0 }
   END { exit !(n >= 2) }'
look RLN/nolimit "messages waiting for its slow subscriber" \
  "$(nl_csv_file rl-RLN nats_lens_num_ack_pending nolimit)" \
  'NR > 1 && $2 + 0 >= 50 { n++ } END { exit !(n >= 10) }'

# Stays clear: five more polls, one onset in all.
now=$(nl_csv_rows rl duration poll 1)
nl_retry 20 nl_polled rl $((now + 5))
n=$(nl_notifications "type_instance = RATE_LIMITED," | grep -c WARNING)
nl_check raised-once [ "$n" = 1 ]
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
echo "# $(($(date +%s) - START)) s from collectd's start; raised after \
$((RAISED - START)) s" >&2
nl_end
