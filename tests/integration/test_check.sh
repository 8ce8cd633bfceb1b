#!/usr/bin/env bash
# nats-lens-check against real nats-servers: a set of good and bad stream
# and consumer configurations, where every bad one must be reported with
# the right class, severity and exit status in each format, and every good
# one must stay silent; JSON output validated field by field; applying the
# fix each finding names (through the API, as `nats` would) clears it; the
# live detectors with --watch on real consumers; R1 on a 3-node cluster;
# and the error exits (unreachable, authentication, no JetStream, bad
# options). Ports 14330-14349 by default (free ones otherwise), 127.0.0.1
# only.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin check
CHECK=${NL_CHECK:-$NL_ROOT/cli/nats-lens-check}
VALIDATE="$NL_ROOT/tests/integration/check_json.py"
# NL_PORT_CHECK moves all five ports (BASE, +1, +2, +3, +9).
BASE=$(nl_port NL_PORT_CHECK 14330)
PORT=$BASE
AUTH_PORT=$((BASE + 1))
NOJS_PORT=$((BASE + 2))
TOKEN_PORT=$((BASE + 3))
DEAD_PORT=$((BASE + 9))
URL="nats://127.0.0.1:$PORT"

if [ ! -x "$CHECK" ]; then
  nl_fail build "$CHECK is not built (make)"
  nl_end
  exit
fi
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }

# run_check NAME ARGS...: runs the check; stdout in $NL_TMP/NAME.out, stderr
# in $NL_TMP/NAME.err.out, the exit status in RC.
run_check() {
  local name=$1
  shift
  timeout 60 "$CHECK" "$@" >"$NL_TMP/$name.out" 2>"$NL_TMP/$name.err.out"
  RC=$?
}

# expect_rc NAME WANT: PASS when the last run_check exited WANT.
expect_rc() {
  if [ "$RC" -eq "$2" ]; then
    nl_pass "$1" "exit $RC"
  else
    nl_fail "$1" "exit $RC, expected $2: $(head -c 300 "$NL_TMP/$LAST.err.out")"
  fi
}

# validate NAME EXPECTED_TEXT: validates $NL_TMP/NAME.out as a JSON report
# of exit status RC holding exactly the findings listed (see check_json.py).
validate() {
  local out
  printf '%s\n' "$2" >"$NL_TMP/$1.expected"
  if out=$(python3 "$VALIDATE" "$NL_TMP/$1.out" "$RC" "$NL_TMP/$1.expected" \
    2>&1); then
    nl_pass "$1/json" "$(grep -c '"class"' "$NL_TMP/$1.out") findings as expected"
  else
    nl_fail "$1/json" "$(echo "$out" | tr '\n' ';' | head -c 800)"
  fi
}

# --- The configurations ----------------------------------------------------
# Good: none of these may produce a finding.
inj stream-create GOOD --subjects 'good.>' --max-msgs 100000
inj consumer-create GOOD pull --max-deliver 5
inj request '$JS.API.CONSUMER.DURABLE.CREATE.GOOD.push' \
  '{"stream_name":"GOOD","config":{"durable_name":"push","deliver_subject":"deliver.good.push","ack_policy":"explicit","max_deliver":5,"idle_heartbeat":5000000000,"flow_control":true}}'
inj consumer-create GOOD serial --ack all --max-ack-pending 1 --max-deliver 5
inj consumer-create GOOD onepull --ack all --max-deliver 5
inj consumer-create GOOD declared --ack-wait 60 --max-deliver 5
inj consumer-create GOOD dlq --max-deliver 2
inj stream-create GOOD_DLQ \
  --subjects '$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.GOOD.dlq'
inj stream-create GOOD_INTEREST --subjects 'goodi.>' --retention interest
inj consumer-create GOOD_INTEREST w --max-deliver 5
inj publish good.a --count 20
inj publish goodi.a --count 20
GOOD_EXPECT=(--expect 'GOOD/declared:max_processing=30s'
  --expect 'GOOD/onepull:workers=1')

# Bad: one stream per rule, each with the one problem it shows.
inj stream-create B_ACKNONE --subjects 'bnone.>'
inj consumer-create B_ACKNONE c --ack none --max-deliver 5
inj stream-create B_ACKALL --subjects 'ball.>'
inj consumer-create B_ACKALL workers --ack all --max-deliver 5
inj consumer-create B_ACKALL maybe --ack all --max-deliver 5
inj stream-create B_UNLIMITED --subjects 'bunl.>'
inj consumer-create B_UNLIMITED c
inj stream-create B_TINY --subjects 'btiny.>'
inj consumer-create B_TINY c --max-deliver 2
inj stream-create B_MAXACK --subjects 'bmaxack.>'
inj consumer-create B_MAXACK c --max-ack-pending 3 --max-deliver 5
inj stream-create B_ACKWAIT --subjects 'backwait.>'
inj consumer-create B_ACKWAIT c --ack-wait 5 --max-deliver 5
inj stream-create B_INTEREST --subjects 'binterest.>' --retention interest
inj publish binterest.a --count 10
inj stream-create B_RETENTION --subjects 'bret.>' --max-msgs 100
inj consumer-create B_RETENTION c --max-deliver 5
inj publish bret.a --count 300
inj stream-create B_PUSH --subjects 'bpush.>'
inj consumer-create B_PUSH c --deliver-subject deliver.bpush --max-deliver 5
BAD_EXPECT=(--expect 'B_ACKALL/workers:workers=4'
  --expect 'B_ACKWAIT/c:max_processing=30s')

BAD_FINDINGS='warning ACK_NONE B_ACKNONE/c config
warning ACK_ALL_PARALLEL B_ACKALL/workers config
warning ACK_ALL_PARALLEL B_ACKALL/maybe config
warning MAX_DELIVER_UNLIMITED B_UNLIMITED/c config
critical MAX_DELIVER_NO_DEAD_LETTER B_TINY/c config
warning MAX_ACK_PENDING_TINY B_MAXACK/c config
critical ACK_WAIT_BELOW_PROCESSING B_ACKWAIT/c config
critical INTEREST_NO_CONSUMERS B_INTEREST/- config
critical RETENTION_BELOW_BACKLOG B_RETENTION/c config
warning PUSH_NO_HEARTBEAT B_PUSH/c config'

# --- The whole server ------------------------------------------------------
LAST=all
run_check all --server "$URL" --format json "${GOOD_EXPECT[@]}" \
  "${BAD_EXPECT[@]}"
expect_rc all/exit-critical 2
validate all "$BAD_FINDINGS"

# The same in the other formats.
LAST=all-text
run_check all-text --server "$URL" "${GOOD_EXPECT[@]}" "${BAD_EXPECT[@]}"
expect_rc all-text/exit-critical 2
missing=""
while read -r sev cls where kind; do
  grep -qE "^${sev^^} +$cls +$kind +${where%%/*} +${where##*/}\$" \
    "$NL_TMP/all-text.out" || missing="$missing $cls:$where"
done <<<"$BAD_FINDINGS"
rows=$(grep -cE '^(CRITICAL|WARNING) +[A-Z_0-9]+ +(config|live) ' \
  "$NL_TMP/all-text.out")
if [ -z "$missing" ] && [ "$rows" -eq 10 ] &&
  grep -q '^CRITICAL: 4 critical, 6 warnings$' "$NL_TMP/all-text.out" &&
  ! grep -q $'\033' "$NL_TMP/all-text.out"; then
  nl_pass all-text/table "10 rows, no colour when not a terminal"
else
  nl_fail all-text/table "missing:$missing rows=$rows"
fi
LAST=all-nagios
run_check all-nagios --server "$URL" --format nagios "${GOOD_EXPECT[@]}" \
  "${BAD_EXPECT[@]}"
expect_rc all-nagios/exit-critical 2
first=$(head -n 1 "$NL_TMP/all-nagios.out")
if [[ $first =~ ^NATS-LENS\ CRITICAL\ -\ 4\ critical,\ 6\ warnings\ .*\|\ critical=4\ warning=6\ streams=[0-9]+\ consumers=[0-9]+$ ]] &&
  [ "$(wc -l <"$NL_TMP/all-nagios.out")" -eq 11 ]; then
  nl_pass all-nagios/output "$first"
else
  nl_fail all-nagios/output "$first"
fi

# Without the declarations, the rules that need them stay silent and the
# one-worker AckAll consumer is only "possibly parallel" (parallel_seen 0).
# Every finding left is a warning, so the default --fail-on critical
# exits 0.
LAST=undeclared
run_check undeclared --server "$URL" --format json --stream 'B_ACK*' \
  --stream GOOD
expect_rc undeclared/exit 0
validate undeclared 'warning ACK_NONE B_ACKNONE/c config
warning ACK_ALL_PARALLEL B_ACKALL/workers config
warning ACK_ALL_PARALLEL B_ACKALL/maybe config
warning ACK_ALL_PARALLEL GOOD/onepull config'

# --- Exit statuses by severity and --fail-on -------------------------------
LAST=good
run_check good --server "$URL" --stream 'GOOD*' "${GOOD_EXPECT[@]}"
expect_rc good/text-exit 0
nl_check good/text-ok grep -q '^OK: no findings$' "$NL_TMP/good.out"
run_check good-warn --server "$URL" --stream 'GOOD*' --fail-on warning \
  "${GOOD_EXPECT[@]}"
expect_rc good/fail-on-warning 0
run_check good-json --server "$URL" --stream 'GOOD*' --format json \
  "${GOOD_EXPECT[@]}"
expect_rc good/json-exit 0
validate good-json ''
run_check good-nagios --server "$URL" --stream 'GOOD*' --format nagios \
  "${GOOD_EXPECT[@]}"
expect_rc good/nagios-exit 0
nl_check good/nagios-ok grep -qE '^NATS-LENS OK - no findings \(3 streams, 7 consumers\) \| critical=0 warning=0 streams=3 consumers=7$' \
  "$NL_TMP/good-nagios.out"

WARN_ONLY=(--server "$URL" --stream B_UNLIMITED --stream B_PUSH
  --stream 'B_MAX*')
LAST=warn
run_check warn "${WARN_ONLY[@]}"
expect_rc warnings/text-default 0
run_check warn "${WARN_ONLY[@]}" --fail-on warning
expect_rc warnings/text-fail-on-warning 1
run_check warn-json "${WARN_ONLY[@]}" --format json
expect_rc warnings/json-default 0
validate warn-json 'warning MAX_DELIVER_UNLIMITED B_UNLIMITED/c config
warning PUSH_NO_HEARTBEAT B_PUSH/c config
warning MAX_ACK_PENDING_TINY B_MAXACK/c config'
run_check warn-json2 "${WARN_ONLY[@]}" --format json --fail-on warning
expect_rc warnings/json-fail-on-warning 1
validate warn-json2 '?warning MAX_DELIVER_UNLIMITED B_UNLIMITED/c config
?warning PUSH_NO_HEARTBEAT B_PUSH/c config
?warning MAX_ACK_PENDING_TINY B_MAXACK/c config'
run_check warn-nagios "${WARN_ONLY[@]}" --format nagios --fail-on critical
expect_rc warnings/nagios-ignores-fail-on 1
nl_check warnings/nagios-line grep -q \
  '^NATS-LENS WARNING - 0 critical, 3 warnings (3 streams, 3 consumers) |' \
  "$NL_TMP/warn-nagios.out"
run_check excl "${WARN_ONLY[@]}" --exclude-stream 'B_*' --format nagios
expect_rc exclude-stream/all-excluded 0

# --- Applying each fix (as the fix command would, through the API) --------
fix_of() { # fix_of CLASS STREAM: the fix command of that finding
  python3 -c 'import json,sys
for f in json.load(open(sys.argv[1]))["findings"]:
    if f["class"] == sys.argv[2] and f["stream"] == sys.argv[3]:
        print(f["fix_command"])' "$NL_TMP/all.out" "$1" "$2"
}
fixes=""
f=$(fix_of MAX_DELIVER_UNLIMITED B_UNLIMITED)
[ "$f" = "nats consumer edit B_UNLIMITED c --max-deliver 5" ] || fixes="$fixes [$f]"
inj consumer-create B_UNLIMITED c --max-deliver 5
f=$(fix_of MAX_ACK_PENDING_TINY B_MAXACK)
[ "$f" = "nats consumer edit B_MAXACK c --max-pending 10" ] || fixes="$fixes [$f]"
inj consumer-create B_MAXACK c --max-ack-pending 10 --max-deliver 5
f=$(fix_of ACK_WAIT_BELOW_PROCESSING B_ACKWAIT)
[ "$f" = "nats consumer edit B_ACKWAIT c --wait 45s" ] || fixes="$fixes [$f]"
inj consumer-create B_ACKWAIT c --ack-wait 45 --max-deliver 5
# The dead-letter stream: create exactly the stream the command names.
f=$(fix_of MAX_DELIVER_NO_DEAD_LETTER B_TINY)
if [[ $f =~ ^nats\ stream\ add\ ([A-Za-z0-9_]+)\ --subjects\ \'([^\']+)\'\ --storage\ file\ --defaults$ ]]; then
  inj stream-create "${BASH_REMATCH[1]}" --subjects "${BASH_REMATCH[2]}" \
    --storage file
else
  fixes="$fixes [$f]"
fi
f=$(fix_of INTEREST_NO_CONSUMERS B_INTEREST)
[[ $f == "nats consumer add B_INTEREST worker --pull --ack explicit"* ]] ||
  fixes="$fixes [$f]"
inj consumer-create B_INTEREST worker --max-deliver 5
f=$(fix_of RETENTION_BELOW_BACKLOG B_RETENTION)
[[ $f =~ ^nats\ stream\ edit\ B_RETENTION\ --max-msgs\ ([0-9]+)$ ]] ||
  fixes="$fixes [$f]"
LAST=fixed
run_check fixed --server "$URL" --format json "${BAD_EXPECT[@]}" \
  --stream B_UNLIMITED --stream B_MAXACK --stream B_ACKWAIT --stream B_TINY \
  --stream B_INTEREST --stream 'B_TINY_c_DLQ'
expect_rc fixed/exit 0
validate fixed ''
if [ -z "$fixes" ]; then
  nl_pass fixed/commands "each fix command names the change that cleared it"
else
  nl_fail fixed/commands "unexpected fix commands:$fixes"
fi
# Reading the backlog and raising the limit clears the retention finding.
nl_inject "$PORT" consume B_RETENTION c --duration 2 --workers 2 \
  >/dev/null 2>&1
inj stream-create B_RETENTION --subjects 'bret.>' --max-msgs 1000
run_check fixed2 --server "$URL" --format json --stream B_RETENTION
expect_rc fixed/retention 0

# --- Colour only on a terminal ---------------------------------------------
if command -v script >/dev/null; then
  script -qec "$CHECK --server $URL --stream B_PUSH" /dev/null \
    >"$NL_TMP/tty.out" 2>&1
  NO_COLOR=1 script -qec "$CHECK --server $URL --stream B_PUSH" /dev/null \
    >"$NL_TMP/tty-nocolor.out" 2>&1
  if grep -q $'\033\[33mWARNING' "$NL_TMP/tty.out" &&
    ! grep -q $'\033' "$NL_TMP/tty-nocolor.out"; then
    nl_pass colour/terminal "ANSI colours on a terminal, none with NO_COLOR"
  else
    nl_fail colour/terminal "$(head -c 200 "$NL_TMP/tty.out" | od -c | head -3)"
  fi
fi

# --- Live check: --watch runs the detectors on real consumers --------------
inj stream-create W_THROTTLE --subjects 'wthr.>'
inj consumer-create W_THROTTLE stuck --max-ack-pending 5 --max-deliver 5
inj publish wthr.a --count 50
inj stream-create W_NAK --subjects 'wnak.>'
inj consumer-create W_NAK poison --ack-wait 30 --max-deliver 1000
inj publish wnak.a --count 20
inj stream-create W_OK --subjects 'wok.>' --max-msgs 100000
inj consumer-create W_OK good --max-deliver 5
nl_inject "$PORT" consume W_THROTTLE stuck --duration 12 --no-ack \
  >"$NL_TMP/stuck.log" 2>&1 &
NL_PIDS+=($!)
nl_inject "$PORT" consume W_NAK poison --duration 12 --nak-seq-mod 5 \
  --process-ms 50 >"$NL_TMP/nak.log" 2>&1 &
NL_PIDS+=($!)
nl_inject "$PORT" publish wok.a --count 200 --rate 20 >/dev/null 2>&1 &
NL_PIDS+=($!)
nl_inject "$PORT" consume W_OK good --duration 12 --workers 2 --process-ms 20 \
  >"$NL_TMP/ok.log" 2>&1 &
NL_PIDS+=($!)
sleep 1
LAST=watch
start=$(date +%s.%N)
run_check watch --server "$URL" --format json --watch 1 --samples 5 \
  --stream 'W_*'
took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
expect_rc watch/exit 0
validate watch 'warning MAX_PENDING_THROTTLE W_THROTTLE/stuck live
warning MAX_ACK_PENDING_TINY W_THROTTLE/stuck config
warning NAK_STORM W_NAK/poison live'
if awk -v t="$took" 'BEGIN { exit !(t >= 3.9 && t < 15) }'; then
  nl_pass watch/duration "5 snapshots 1 s apart took $took s"
else
  nl_fail watch/duration "took $took s"
fi
# The same moment without --watch: only the configuration rules.
run_check nowatch --server "$URL" --format json --stream 'W_*'
validate nowatch 'warning MAX_ACK_PENDING_TINY W_THROTTLE/stuck config'

# --- R1 on a cluster -------------------------------------------------------
# Client ports CB+1..CB+3, routes CB+5..CB+7 (a run of free ports).
CB=$(nl_port NL_PORT_CHECK_CLUSTER 14340)
C1=$((CB + 1))
ROUTES=nats://127.0.0.1:$((CB + 5)),nats://127.0.0.1:$((CB + 6)),nats://127.0.0.1:$((CB + 7))
for i in 1 2 3; do
  nl_start_nats "$((CB + i))" --server_name "n$i" --cluster_name NLCHECK \
    --cluster "nats://127.0.0.1:$((CB + 4 + i))" --routes "$ROUTES" || exit 1
done
CURL=nats://127.0.0.1:$C1,nats://127.0.0.1:$((CB + 2))
for ((i = 0; i < 40; i++)); do # Until the cluster has a meta leader.
  nl_inject "$C1" stream-create C_R3 --subjects 'cr3.>' --replicas 3 \
    >/dev/null 2>&1 && break
  sleep 0.5
done
nl_inject "$C1" stream-create C_R1 --subjects 'cr1.>' >/dev/null
nl_inject "$C1" consumer-create C_R3 c --max-deliver 5 >/dev/null
nl_inject "$C1" consumer-create C_R3 one --max-deliver 5 --replicas 1 \
  >/dev/null
LAST=cluster
run_check cluster --server "$CURL" --format json
expect_rc cluster/exit 0
validate cluster 'warning R1_ON_CLUSTER C_R1/- config
warning CONSUMER_SINGLE_REPLICA C_R3/one config'
run_check single --server "$URL" --format json --stream GOOD \
  "${GOOD_EXPECT[@]}"
validate single ''
nl_inject "$C1" stream-create C_R1 --subjects 'cr1.>' --replicas 3 >/dev/null
nl_inject "$C1" consumer-edit C_R3 one --replicas 3 >/dev/null
sleep 1
run_check cluster-fixed --server "$CURL" --format json
validate cluster-fixed ''

# --- Errors ----------------------------------------------------------------
LAST=dead
run_check dead --server "nats://127.0.0.1:$DEAD_PORT"
expect_rc errors/unreachable 3
nl_check errors/unreachable-message grep -q \
  "^nats-lens-check: cannot reach nats://127.0.0.1:$DEAD_PORT" \
  "$NL_TMP/dead.err.out"
LAST=dead-nagios
run_check dead-nagios --server "nats://127.0.0.1:$DEAD_PORT" --format nagios
expect_rc errors/unreachable-nagios 3
nl_check errors/unreachable-nagios-line grep -q '^NATS-LENS UNKNOWN - cannot reach' \
  "$NL_TMP/dead-nagios.out"

nats-server -a 127.0.0.1 -p "$NOJS_PORT" >"$NL_TMP/nojs.log" 2>&1 &
NL_PIDS+=($!)
nl_wait_port "$NOJS_PORT" 10
LAST=nojs
run_check nojs --server "nats://127.0.0.1:$NOJS_PORT"
expect_rc errors/no-jetstream 3
nl_check errors/no-jetstream-message grep -q \
  '^nats-lens-check: JetStream is not available' "$NL_TMP/nojs.err.out"

nl_start_nats "$AUTH_PORT" --user monitor --pass 's3cret' || exit 1
LAST=auth
run_check auth --server "nats://127.0.0.1:$AUTH_PORT" --user monitor \
  --password wrong
expect_rc errors/auth-failed 3
nl_check errors/auth-message grep -q \
  '^nats-lens-check: authentication failed at' "$NL_TMP/auth.err.out"
run_check auth-none --server "nats://127.0.0.1:$AUTH_PORT"
expect_rc errors/auth-missing 3
NATS_USER=monitor NATS_PASSWORD=s3cret run_check auth-env \
  --server "nats://127.0.0.1:$AUTH_PORT"
expect_rc auth/env-credentials 0
nl_start_nats "$TOKEN_PORT" --auth 'tok-s3cret' || exit 1
LAST=token
NATS_TOKEN=tok-s3cret run_check token-env --server "nats://127.0.0.1:$TOKEN_PORT"
expect_rc auth/env-token 0
run_check token-none --server "nats://127.0.0.1:$TOKEN_PORT"
expect_rc auth/token-missing 3
LAST=usage
run_check usage --server "$URL" --format xml
expect_rc errors/bad-format 3
run_check usage --server "$URL" --expect 'ORDERS/ship:max_processing=soon'
expect_rc errors/bad-expect 3
nl_check errors/bad-expect-message grep -q 'max_processing needs a duration' \
  "$NL_TMP/usage.err.out"
run_check usage --server "$URL" --creds "$NL_TMP/missing.creds"
expect_rc errors/missing-creds 3
nl_check errors/missing-creds-message grep -q -e '--creds: cannot read' \
  "$NL_TMP/usage.err.out"

# --- Help ------------------------------------------------------------------
run_check help --help
if [ "$RC" -eq 0 ] && grep -q '^Examples:' "$NL_TMP/help.out" &&
  grep -q -- '--watch SECONDS' "$NL_TMP/help.out" &&
  grep -q -- '--expect STREAM/CONSUMER:KEY=VALUE' "$NL_TMP/help.out" &&
  grep -q -- '--format nagios' "$NL_TMP/help.out"; then
  nl_pass help "usage with examples"
else
  nl_fail help "exit $RC"
fi
nl_end
