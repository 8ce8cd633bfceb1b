#!/usr/bin/env bash
# examples/notify-handler.sh, run by collectd's exec plugin as user nobody
# (NotificationExec, configured with examples/backends/exec.conf). A
# MAX_PENDING_THROTTLE violation is injected and fixed on a real
# nats-server: the handler must write exactly one onset line (WARNING,
# firing) and one OKAY line (resolved) as JSON naming the class, the stream
# and the consumer with the evidence as numbers. The handler's parsing of
# awkward input is checked directly first.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/backend_scenario.sh"
nl_begin exec_handler
NATS_PORT=$(nl_port NL_PORT_EXEC_NATS 14530)
EX="$NL_ROOT/examples"
HANDLER_SRC="$EX/notify-handler.sh"

nl_check handler/executable test -x "$HANDLER_SRC"

# jsonl_check FILE PYTHON_EXPRESSION: every line of FILE is a JSON object
# and the expression (over `lines`, the list of parsed objects) is true.
jsonl_check() {
  python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$1" "$2"
}

# Direct runs: awkward text is escaped, numbers become JSON numbers, other
# plugins are ignored, bad input and an unwritable file are errors.
D="$NL_TMP/direct.jsonl"
printf '%s\n' 'Severity: FAILURE' 'Time: 1700000000.250' 'Host: h1' \
  'Plugin: nats_lens' 'PluginInstance: prod-ORDERS' \
  'TypeInstance: SEQUENCE_GAP' 'class: SEQUENCE_GAP' 'stream: ORDERS' \
  'consumer: 007' 'state: firing' 'description: a "quoted" \ text' \
  'lost: 2.500000e+01' 'ratio: 2.500000e-01' 'odd: nan' '' \
  $'SEQUENCE_GAP ORDERS/007: "x"\ttab \001' | bash "$HANDLER_SRC" "$D"
nl_check handler/escapes-and-numbers jsonl_check "$D" '
len(lines) == 1 and lines[0]["severity"] == "FAILURE"
and lines[0]["time"] == 1700000000.25
and lines[0]["plugin_instance"] == "prod-ORDERS"
and lines[0]["message"] == "SEQUENCE_GAP ORDERS/007: \"x\"\ttab "
and lines[0]["meta"] == {"class": "SEQUENCE_GAP", "stream": "ORDERS",
  "consumer": "007", "state": "firing",
  "description": "a \"quoted\" \\ text", "lost": 25, "ratio": 0.25,
  "odd": "nan"}'
printf '%s\n' 'Severity: OKAY' 'Time: 1700000001' 'Plugin: cpu' '' 'x' |
  bash "$HANDLER_SRC" "$D"
nl_check handler/ignores-other-plugins jsonl_check "$D" 'len(lines) == 1'
if echo 'not a notification' | bash "$HANDLER_SRC" "$D" 2>/dev/null; then
  nl_fail handler/rejects-bad-input "exit status 0"
else
  nl_pass handler/rejects-bad-input
fi
if printf 'Severity: OKAY\nTime: 1\nPlugin: nats_lens\n\nx\n' |
  bash "$HANDLER_SRC" "$NL_TMP/no/such/dir/x.jsonl" 2>"$NL_TMP/err.txt"; then
  nl_fail handler/unwritable-output "exit status 0"
else
  nl_pass handler/unwritable-output "$(head -n 1 "$NL_TMP/err.txt")"
fi

# collectd runs the handler as nobody: the test's directory is made
# traversable, the handler is copied (as it is) where nobody can run it,
# and the output directory belongs to nobody.
chmod 711 "$NL_TMP"
mkdir -p "$NL_TMP/handler" "$NL_TMP/notifications"
cp -p "$HANDLER_SRC" "$NL_TMP/handler/notify-handler.sh"
chmod 755 "$NL_TMP/handler" "$NL_TMP/handler/notify-handler.sh"
chown nobody "$NL_TMP/notifications"
OUT="$NL_TMP/notifications/notifications.jsonl"

nl_start_nats "$NATS_PORT" || exit 1
HANDLER_CONF=$(nl_backend_config_file "$EX/backends/exec.conf" \
  "s#/usr/local/lib/nats-lens/notify-handler.sh#$NL_TMP/handler/notify-handler.sh#" \
  "s#/var/log/nats-lens/notifications.jsonl#$OUT#") || exit 1
nl_start_collectd "$(nl_backend_nats_block "$NATS_PORT")" 1 "$HANDLER_CONF" \
  exec || exit 1
nl_backend_throttle_start "$NATS_PORT" || exit 1

ONSET='lines[0]["severity"] == "WARNING"
and lines[0]["type_instance"] == "MAX_PENDING_THROTTLE"
and lines[0]["plugin"] == "nats_lens" and lines[0]["host"] == "nl-test"
and lines[0]["plugin_instance"] == "it-S"
and lines[0]["meta"]["class"] == "MAX_PENDING_THROTTLE"
and lines[0]["meta"]["stream"] == "S" and lines[0]["meta"]["consumer"] == "c"
and lines[0]["meta"]["instance"] == "it"
and lines[0]["meta"]["state"] == "firing"
and lines[0]["meta"]["num_pending"] == 45
and lines[0]["meta"]["num_ack_pending"] == 5
and lines[0]["meta"]["fix_command"].startswith("nats consumer edit S c")'
got_onset() { [ -s "$OUT" ] && jsonl_check "$OUT" "len(lines) >= 1"; }
if nl_retry 20 got_onset; then
  nl_backend_throttle_fix "$NATS_PORT"
  nl_check handler/onset-line jsonl_check "$OUT" "$ONSET"
  nl_check handler/ran-as-nobody test "$(stat -c %U "$OUT")" = nobody
else
  nl_backend_throttle_fix "$NATS_PORT"
  nl_fail handler/onset-line "no line in $OUT; collectd: $(grep -i exec "$NL_TMP/collectd.log" | tail -n 3)"
fi

# The OKAY comes once the condition has been gone for the clearing hold
# (ClearHoldSeconds, 30 s by default) and 2 polls: wait up to twice that.
got_okay() { jsonl_check "$OUT" "len(lines) >= 2"; }
nl_retry 60 got_okay
sleep 2 # Any further (unexpected) notification would arrive by now.
nl_check handler/exactly-onset-and-okay jsonl_check "$OUT" "len(lines) == 2
and $ONSET
and lines[1][\"severity\"] == \"OKAY\"
and lines[1][\"type_instance\"] == \"MAX_PENDING_THROTTLE\"
and lines[1][\"meta\"][\"stream\"] == \"S\"
and lines[1][\"meta\"][\"consumer\"] == \"c\"
and lines[1][\"meta\"][\"state\"] == \"resolved\"
and lines[1][\"time\"] > lines[0][\"time\"]"
# The handler saw what collectd dispatched: the same two notifications.
nl_check collectd/same-notifications test "$(nl_notifications 'S/c' | wc -l)" = 2
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
