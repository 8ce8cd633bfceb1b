#!/usr/bin/env bash
# Faults the plugin must survive, on real nats-servers, seen by real collectd
# loading the built plugin (one collectd, one Instance per fault):
#   restart  JetStream server killed (-9) and restarted while polled: the
#            outage is reported (POLL_FAILED, gauge-connected 0), cnats
#            reconnects, polling resumes (OKAY), the counter jump of a stream
#            lost with the server (memory storage, recreated) raises nothing,
#            and detection works afterwards (MAX_PENDING_THROTTLE);
#   recreate consumers deleted and recreated with the same name between and
#            during polls: no finding;
#   nojs     a server without JetStream: a clear, rate-limited log line;
#   noacct   an account without JetStream (503 API error): the same;
#   apierr   STREAM.LIST answers, CONSUMER.LIST answers a 503 error or
#            garbage (a stand-in responder): warning, rate-limited, no crash;
#   slow     STREAM.LIST answered after 3 s with Timeout 1: each poll ends
#            after about 1 s and is reported;
#   budget   five streams whose CONSUMER.LIST each takes 0.7 s (within
#            Timeout 1) at Interval 1: each poll stops at its time budget
#            (one interval) after two streams, reports their values, counts
#            the cut-off as an API error, logs it rate-limited, raises no
#            POLL_FAILED, and never runs into the next poll.
# collectd must stay up and log no sanitizer report throughout.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin faults
# The plugin keeps its interval through failed polls (it reports them and
# returns success); MaxReadInterval 1 would also bound collectd's back-off
# if it ever did not, so the log rate limit (c_complain) is measured over
# many polls either way.
NL_MAX_READ_INTERVAL=1
P_JS=$(nl_port NL_PORT_FAULTS 14610)
P_NOJS=$((P_JS + 1))
P_ACCT=$((P_JS + 2))
P_APIERR=$((P_JS + 3))
P_SLOW=$((P_JS + 4))
P_BUDGET=$((P_JS + 5))

js_args=(-a 127.0.0.1 -p "$P_JS" -js -sd "$NL_TMP/js")
nl_start_server js "$P_JS" "${js_args[@]}" || exit 1
JS_PID=$NL_SERVER_PID
nl_start_server nojs "$P_NOJS" -a 127.0.0.1 -p "$P_NOJS" || exit 1
cat >"$NL_TMP/acct.conf" <<EOF
listen: 127.0.0.1:$P_ACCT
jetstream { store_dir: "$NL_TMP/js-acct" }
accounts {
  APP: { jetstream: enabled, users: [ {user: app, password: app-secret} ] }
  MON: { users: [ {user: mon, password: mon-secret} ] }
}
EOF
nl_start_server acct "$P_ACCT" -c "$NL_TMP/acct.conf" || exit 1
nl_start_server apierr "$P_APIERR" -a 127.0.0.1 -p "$P_APIERR" || exit 1
nl_start_server slow "$P_SLOW" -a 127.0.0.1 -p "$P_SLOW" || exit 1
nl_start_server budget "$P_BUDGET" -a 127.0.0.1 -p "$P_BUDGET" || exit 1

# Stand-in responders on the servers without JetStream.
respond() {
  local port=$1 name=$2
  shift 2
  nl_inject "$port" respond "$@" --duration 200 2>"$NL_TMP/respond-$name.out" &
  NL_PIDS+=($!)
  for _ in $(seq 50); do
    grep -q ready "$NL_TMP/respond-$name.out" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "# responder $name did not start" >&2
  return 1
}
LIST='{"type":"io.nats.jetstream.api.v1.stream_list_response","total":2,"offset":0,"limit":256,"streams":[{"config":{"name":"A"},"state":{"messages":1,"first_seq":1,"last_seq":1}},{"config":{"name":"B"},"state":{}}]}'
ERR503='{"type":"io.nats.jetstream.api.v1.consumer_list_response","error":{"code":503,"err_code":10008,"description":"JetStream system temporarily unavailable"}}'
respond "$P_APIERR" list '$JS.API.STREAM.LIST' --reply "$LIST" || exit 1
respond "$P_APIERR" err503 '$JS.API.CONSUMER.LIST.A' --reply "$ERR503" || exit 1
respond "$P_APIERR" garbage '$JS.API.CONSUMER.LIST.B' --reply '{"consumers":[{' ||
  exit 1
respond "$P_SLOW" slow '$JS.API.STREAM.LIST' --reply "$LIST" --delay-ms 3000 ||
  exit 1
BLIST='{"type":"io.nats.jetstream.api.v1.stream_list_response","total":5,"offset":0,"limit":256,"streams":['
for s in A B C D E; do
  BLIST="$BLIST{\"config\":{\"name\":\"$s\"},\"state\":{\"messages\":1,\"first_seq\":1,\"last_seq\":1}}"
  [ "$s" = E ] || BLIST="$BLIST,"
done
BLIST="$BLIST]}"
ONE='{"type":"io.nats.jetstream.api.v1.consumer_list_response","total":1,"offset":0,"limit":256,"consumers":[{"name":"c","config":{"durable_name":"c","ack_policy":"explicit","ack_wait":30000000000,"max_deliver":-1,"max_ack_pending":1000},"delivered":{"consumer_seq":1,"stream_seq":1},"ack_floor":{"consumer_seq":1,"stream_seq":1},"num_ack_pending":0,"num_redelivered":0,"num_waiting":0,"num_pending":0}]}'
respond "$P_BUDGET" blist '$JS.API.STREAM.LIST' --reply "$BLIST" || exit 1
respond "$P_BUDGET" bslow '$JS.API.CONSUMER.LIST.*' --reply "$ONE" \
  --delay-ms 700 || exit 1

inj() { nl_inject "$P_JS" "$@"; }
# FILE stream: survives the restart with its consumers' state. MEM stream:
# lost with the server, recreated after it with the same names, so every
# counter jumps back. MP: detection after the restart.
inj stream-create FILE --subjects 'file.>' --storage file >/dev/null
inj consumer-create FILE steady --ack-wait 30 >/dev/null
inj stream-create MEM --subjects 'mem.>' >/dev/null
inj consumer-create MEM steady --ack-wait 30 >/dev/null
inj stream-create RC --subjects 'rc.>' >/dev/null
inj consumer-create RC again --ack-wait 30 >/dev/null
for s in file mem rc; do inj publish "$s.a" --count 300 >/dev/null; done
inj consume FILE steady --duration 2 --workers 2 >/dev/null 2>&1
inj consume MEM steady --duration 2 --workers 2 >/dev/null 2>&1
inj consume RC again --duration 2 --workers 2 >/dev/null 2>&1

nl_start_collectd "<Instance \"js\">
  URL \"nats://127.0.0.1:$P_JS\"
  Timeout 1
</Instance>
<Instance \"nojs\">
  URL \"nats://127.0.0.1:$P_NOJS\"
  Timeout 1
</Instance>
<Instance \"noacct\">
  URL \"nats://127.0.0.1:$P_ACCT\"
  User \"mon\"
  Password \"mon-secret\"
  Timeout 1
</Instance>
<Instance \"apierr\">
  URL \"nats://127.0.0.1:$P_APIERR\"
  Timeout 1
</Instance>
<Instance \"slow\">
  URL \"nats://127.0.0.1:$P_SLOW\"
  Timeout 1
</Instance>
<Instance \"budget\">
  URL \"nats://127.0.0.1:$P_BUDGET\"
  Timeout 1
</Instance>" 1 || exit 1
START=$(date +%s)

has_rows() { [ "$(nl_csv_rows "$@")" -gt 0 ]; }

# --- restart -------------------------------------------------------------
if nl_retry 10 has_rows js-FILE nats_lens_num_pending steady '1'; then
  nl_pass restart/polling-before
else
  nl_fail restart/polling-before "no values for FILE/steady"
fi
sleep 2
kill -9 "$JS_PID"
wait "$JS_PID" 2>/dev/null
DOWN=$(date +%s)
if line=$(nl_wait_notification 10 "severity = FAILURE" "type_instance = poll" \
  "POLL_FAILED instance js"); then
  nl_pass restart/outage-notified "${line#*message = }"
else
  nl_fail restart/outage-notified "no POLL_FAILED FAILURE for instance js"
fi
if nl_retry 5 has_rows js gauge connected "\$1 >= $DOWN && \$2 + 0 == 0"; then
  nl_pass restart/outage-value "gauge-connected 0 while down"
else
  nl_fail restart/outage-value "no gauge-connected 0 after the kill"
fi
unobs=$(nl_csv_rows js count unobservable "\$1 >= $DOWN && \$2 + 0 >= 3")
if [ "$unobs" -gt 0 ]; then
  nl_pass restart/consumers-unobservable "count-unobservable >= 3 while down"
else
  nl_fail restart/consumers-unobservable "held consumers not reported"
fi
sleep 3
nl_start_server js "$P_JS" "${js_args[@]}" || exit 1
UP=$(date +%s)
# The memory stream is gone; it comes back with the same names and fresh
# counters, as after a real loss.
inj stream-create MEM --subjects 'mem.>' >/dev/null
inj consumer-create MEM steady --ack-wait 30 >/dev/null
inj stream-create RC --subjects 'rc.>' >/dev/null
inj consumer-create RC again --ack-wait 30 >/dev/null
inj stream-create MP --subjects 'mp.>' >/dev/null
inj consumer-create MP stuck --ack-wait 30 --max-ack-pending 5 >/dev/null
if line=$(nl_wait_notification 15 "severity = OKAY" "type_instance = poll" \
  "POLL_FAILED instance js"); then
  back=$(awk -F, -v up="$UP" 'NR > 1 && $1 >= up && $2 + 0 == 1 {
    print int($1); exit }' "$(nl_csv_file js gauge connected)")
  nl_pass restart/reconnected "OKAY; connected again $((${back:-0} - UP)) s after the restart"
else
  nl_fail restart/reconnected "no POLL_FAILED OKAY after the restart"
fi
if grep -q 'cannot reach NATS\|poll failed' "$NL_TMP/collectd.log"; then
  nl_pass restart/logged "$(grep -m1 'Instance "js".*\(cannot reach\|poll failed\)' \
    "$NL_TMP/collectd.log" | cut -c1-160)"
else
  nl_fail restart/logged "no log line for the outage"
fi
inj publish mem.a --count 20 >/dev/null
inj consume MEM steady --duration 2 --workers 2 >/dev/null 2>&1

# --- recreate ------------------------------------------------------------
# Five times: delete and recreate RC/again (with its backlog consumed
# first, so the old consumer's counters were high) at a random point of the
# poll cycle, then consume some messages with the new one.
for i in 1 2 3 4 5; do
  inj publish rc.a --count 50 >/dev/null
  sleep "0.$((RANDOM % 10))"
  inj consumer-delete RC again >/dev/null
  inj consumer-create RC again --ack-wait 30 >/dev/null
  inj consume RC again --duration 1 --workers 2 >/dev/null 2>&1
done
# A recreate with another configuration, between two polls.
inj consumer-delete RC again >/dev/null
sleep 1.2
inj consumer-create RC again --ack-wait 5 --max-ack-pending 100 >/dev/null
inj consume RC again --duration 2 --workers 2 >/dev/null 2>&1

# Detection after the restart: a worker holding max_ack_pending.
inj publish mp.a --count 30 >/dev/null
inj consume MP stuck --duration 8 --no-ack >/dev/null 2>&1 &
NL_PIDS+=($!)
if line=$(nl_wait_notification 15 "type_instance = MAX_PENDING_THROTTLE" \
  "MP/stuck"); then
  nl_pass restart/detection-resumes "${line#*message = }"
else
  nl_fail restart/detection-resumes "no MAX_PENDING_THROTTLE after the restart"
fi
false_findings=$(nl_notifications "/steady\|RC/again")
if [ -z "$false_findings" ]; then
  nl_pass restart/no-false-finding "FILE/steady, MEM/steady (counters reset)"
  nl_pass recreate/no-false-finding "RC/again recreated 6 times"
else
  nl_fail restart/no-false-finding "$false_findings"
fi
resets=$(nl_csv_rows js-MEM nats_lens_delivered steady "\$1 >= $UP")
if [ "$resets" -gt 0 ]; then
  nl_pass restart/counters-after "MEM/steady polled $resets times after the restart"
else
  nl_fail restart/counters-after "no values for MEM/steady after the restart"
fi

# --- servers and accounts without JetStream, error replies, slow server --
# Enough polls to see the rate limit (c_complain doubles the wait).
while [ $(($(date +%s) - START)) -lt 20 ]; do sleep 1; done
polls() { nl_csv_rows "$1" duration poll 1; }
# expect_error NAME INSTANCE PATTERN: the instance logged PATTERN, in fewer
# lines than it polled (rate-limited), and POLL_FAILED fired for it.
expect_error() {
  local name=$1 inst=$2 pattern=$3 n p
  n=$(grep -c "Instance \"$inst\".*$pattern" "$NL_TMP/collectd.log")
  p=$(polls "$inst")
  if [ "$n" -ge 1 ] && [ "$n" -le $((p / 3 + 1)) ] && [ "$p" -ge 8 ]; then
    nl_pass "$name/clear-log" "$n line(s) over $p polls: $(grep -m1 \
      "Instance \"$inst\".*$pattern" "$NL_TMP/collectd.log" | cut -d']' -f3- |
      cut -c1-150)"
  else
    nl_fail "$name/clear-log" "$n line(s) matching '$pattern' over $p polls"
  fi
}
expect_error nojs nojs "no responders: JetStream is not enabled"
expect_error noacct noacct "API error 503 (10039): JetStream not enabled for account"
for inst in nojs noacct slow; do
  if nl_notifications "POLL_FAILED instance $inst:" | grep -q FAILURE; then
    nl_pass "$inst/notified"
  else
    nl_fail "$inst/notified" "no POLL_FAILED FAILURE for $inst"
  fi
done
expect_error apierr apierr "not fully read: .*API error 503"
if grep -q 'CONSUMER.LIST.B: malformed JSON' "$NL_TMP/collectd.log" ||
  [ "$(nl_csv_rows apierr count streams '$2 + 0 == 2')" -gt 0 ]; then
  nl_pass apierr/streams-still-reported "both streams listed, consumer lists failed"
else
  nl_fail apierr/streams-still-reported "no stream values for apierr"
fi
expect_error slow slow "poll failed: .*no reply within 1000 ms"
# Every slow poll ends at the timeout (1 s), not at the server's 3 s.
longest=$(awk -F, 'NR > 1 && $2 > m { m = $2 } END { printf "%.2f", m }' \
  "$(nl_csv_file slow duration poll)")
if awk -v m="$longest" 'BEGIN { exit !(m >= 0.9 && m < 1.6) }'; then
  nl_pass slow/bounded "longest poll ${longest} s with Timeout 1"
else
  nl_fail slow/bounded "longest poll ${longest} s with Timeout 1"
fi

# --- a poll that cannot finish in its interval ------------------------------
expect_error budget budget "3 stream(s) not fully read: .*poll time budget exhausted"
if nl_notifications "POLL_FAILED instance budget:" | grep -q .; then
  nl_fail budget/not-failed "a cut-off poll raised POLL_FAILED"
else
  nl_pass budget/not-failed "the polls that were cut off still succeeded"
fi
# The values of what was read: the first two streams' consumers, every
# stream's own values, nothing for the consumers never reached.
partial=$(nl_csv_rows budget count consumers '$2 + 0 == 2')
if [ "$partial" -ge 5 ] &&
  [ "$(nl_csv_rows budget-B nats_lens_num_pending c 1)" -ge 5 ] &&
  [ "$(nl_csv_rows budget-E count messages 1)" -ge 5 ] &&
  [ -z "$(nl_csv_file budget-C nats_lens_num_pending c)" ]; then
  nl_pass budget/partial-values "$partial polls reported consumers A/c and B/c and all 5 streams"
else
  nl_fail budget/partial-values "$partial polls with 2 consumers; B/c rows $(nl_csv_rows budget-B nats_lens_num_pending c 1)"
fi
errs=$(nl_csv_last budget errors api)
if awk -v e="${errs:-0}" -v p="$(polls budget)" 'BEGIN { exit !(e >= p) }'; then
  nl_pass budget/error-count "errors-api ${errs} after $(polls budget) polls"
else
  nl_fail budget/error-count "errors-api ${errs:-none} after $(polls budget) polls"
fi
# Each poll ends soon after its budget (the request in flight finishes
# within Timeout), and the next starts only after it ended: collectd's
# time of each poll (its start) against the previous poll's duration.
if awk -F, 'NR > 1 { if (t != "" && $1 - t < d - 0.05) bad++; if ($2 > m) m = $2;
    t = $1; d = $2; n++ }
  END { printf "%d polls, longest %.2f s, %d overlapping\n", n, m, bad;
    exit !(n >= 8 && m >= 1.0 && m < 2.0 && bad == 0) }' \
  "$(nl_csv_file budget duration poll)" >"$NL_TMP/budget.txt"; then
  nl_pass budget/bounded-no-overlap "$(cat "$NL_TMP/budget.txt")"
else
  nl_fail budget/bounded-no-overlap "$(cat "$NL_TMP/budget.txt")"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
