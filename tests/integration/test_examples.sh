#!/usr/bin/env bash
# The examples, run for real:
# - the collectd snippets of examples/collectd/ (all but auth.conf, which
#   needs credential files and an authenticating server,
#   system-account.conf and agent.conf, which need a system-account user,
#   and listen-tls.conf, which needs certificates; they are run for real by
#   test_auth, test_system_account, test_agents and test_http_tls) are
#   loaded
#   together into a real collectd, their URLs pointed at a local
#   nats-server: collectd starts without a warning, and every instance they
#   define connects and dispatches values;
# - every option used in any example's <Plugin nats_lens> block (auth.conf
#   system-account.conf and agent.conf included) is one the configuration
#   parser accepts;
# - the five scenario scripts of examples/scenarios/, run at the same time
#   against that server, each make collectd report their class for their
#   consumer and, after their fix, an OKAY notification that is not the
#   deletion of the consumer; and no other class for that consumer.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin examples
PORT=$(nl_port NL_PORT_EXAMPLES 14740)
EX=$NL_ROOT/examples

# plugin_blocks FILE: the lines inside <Plugin nats_lens> ... </Plugin>.
plugin_blocks() {
  awk 'tolower($0) ~ /^[ \t]*<\/plugin>/ { on = 0 }
    on { print }
    tolower($0) ~ /^[ \t]*<plugin +"?nats_lens"?>/ { on = 1 }' "$1"
}

# Options used in the examples' plugin blocks, against the parser's keys
# and the detector options of the classes' rows (the same extraction as
# tests/integration/test_docs.sh).
keys=$({
  grep -ohP 'strcasecmp\(\s*"\K[A-Za-z0-9_]+(?="\s*,\s*[a-z_]*(->)?key\s*\))' \
    $(grep -l oconfig_item_t "$NL_ROOT"/plugin/glue/*.c)
  grep -ohP '^\s*\{"\K[A-Za-z0-9_]+(?=",\s*NL_OPTION_)' \
    "$NL_ROOT"/plugin/core/detect/*.c
} | tr 'A-Z' 'a-z' | sort -u)
unknown=
nfiles=0
for f in $(grep -rlis '<plugin *"\?nats_lens"\?>' "$EX" --include='*.conf'); do
  nfiles=$((nfiles + 1))
  for opt in $(plugin_blocks "$f" | sed -e 's/#.*//' -e 's/^[ \t<]*//' |
    awk 'NF { print $1 }' | grep -v '^/' | tr 'A-Z' 'a-z' | sort -u); do
    echo "$keys" | grep -qx "$opt" || unknown="$unknown ${f#"$EX"/}:$opt"
  done
done
if [ "$nfiles" -ge 4 ] && [ -z "$unknown" ]; then
  nl_pass options-known "$nfiles files with a nats_lens block"
else
  nl_fail options-known "$nfiles files; options the parser does not know:$unknown"
fi

# The snippets, with every URL pointed at the local server and every
# Interval at 1 s, plus an instance "scen" for the scenarios.
nl_start_nats "$PORT" || exit 1
blocks=
instances=
for f in "$EX"/collectd/*.conf; do
  case $(basename "$f") in
  auth.conf | system-account.conf | agent.conf | listen-tls.conf) continue ;;
  esac
  blocks="$blocks
$(plugin_blocks "$f" |
    sed -E -e "s|URL \"[a-z]+://[^\"]*\"|URL \"nats://127.0.0.1:$PORT\"|" \
      -e 's|^([ \t]*)Interval [0-9.]+|\1Interval 1|')"
  instances="$instances $(plugin_blocks "$f" |
    sed -n 's/^[ \t]*<Instance "\([^"]*\)">.*/\1/p' | tr '\n' ' ')"
done
blocks="$blocks
<Instance \"scen\">
  URL \"nats://127.0.0.1:$PORT\"
  Stream \"NL_DEMO_*\"
</Instance>"
nl_start_collectd "$blocks" 1 || exit 1
sleep 3
bad=
for inst in $instances; do
  [ "$(nl_csv_last "$inst" gauge connected)" = "1.000000" ] || bad="$bad $inst"
done
if [ -n "$instances" ] && [ -z "$bad" ]; then
  nl_pass snippets/connected "instances:$instances"
else
  nl_fail snippets/connected "no connected = 1 value for:$bad (of$instances)"
fi
warnings=$(grep -E '\[(warning|error)\]|Dataset not found' "$NL_TMP/collectd.log")
if [ -z "$warnings" ]; then
  nl_pass snippets/log-clean
else
  nl_fail snippets/log-clean "$(echo "$warnings" | head -n 1)"
fi

# The scenarios, all at once. Their output goes to $NL_TMP/<name>.out.
declare -A STREAM=([ack-wait-violation]=NL_DEMO_ACK_WAIT/worker
  [sequence-gap]=NL_DEMO_GAP/reader [max-pending-throttle]=NL_DEMO_THROTTLE/stuck
  [nak-storm]=NL_DEMO_NAK/poison [missing-progress]=NL_DEMO_PROGRESS/task)
declare -A SEVERITY=([ack-wait-violation]=FAILURE [sequence-gap]=FAILURE
  [max-pending-throttle]=WARNING [nak-storm]=WARNING [missing-progress]=FAILURE)
pids=()
for name in "${!STREAM[@]}"; do
  NL_INJECT=$NL_INJECT bash "$EX/scenarios/$name.sh" "nats://127.0.0.1:$PORT" \
    >"$NL_TMP/$name.out" 2>&1 &
  pids+=($!)
  NL_PIDS+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid"
done
sleep 1
for name in "${!STREAM[@]}"; do
  cls=$(echo "$name" | tr 'a-z-' 'A-Z_')
  sc=${STREAM[$name]}
  lines=$(nl_notifications "plugin_instance = scen-${sc%%/*}," |
    grep -F " $sc")
  if echo "$lines" | grep -F "severity = ${SEVERITY[$name]}" |
    grep -qF "type_instance = $cls,"; then
    nl_pass "$name/detected" "${SEVERITY[$name]} $cls for $sc"
  else
    nl_fail "$name/detected" "no ${SEVERITY[$name]} $cls for $sc; \
$(tail -n 2 "$NL_TMP/$name.out" | tr '\n' ' ')"
  fi
  if echo "$lines" | grep -F "severity = OKAY" | grep -F "type_instance = $cls," |
    grep -qvF "consumer deleted"; then
    nl_pass "$name/cleared-by-fix"
  else
    nl_fail "$name/cleared-by-fix" "no OKAY $cls for $sc before the stream was deleted"
  fi
  others=$(echo "$lines" | grep -vF "type_instance = $cls,")
  if [ -z "$others" ]; then
    nl_pass "$name/no-other-class"
  else
    nl_fail "$name/no-other-class" "$(echo "$others" | head -n 1)"
  fi
done
# The scenarios removed their streams.
sleep 1.5
left=$(nl_inject "$PORT" request '$JS.API.STREAM.NAMES' | grep -o 'NL_DEMO_[A-Z_]*')
if [ -z "$left" ]; then
  nl_pass scenarios/cleaned-up
else
  nl_fail scenarios/cleaned-up "streams left: $left"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
