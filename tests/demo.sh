#!/usr/bin/env bash
# make demo: installs what is missing (Debian packages, as root), builds the
# plugin, starts a local nats-server with misconfigured streams and
# consumers, runs collectd in the foreground with the plugin, and shows the
# findings as they arrive. Stops by itself after all five classes were seen
# (or after NL_DEMO_SECONDS, default 120), and cleans up.
set -u
cd "$(dirname "$0")/.."
bash tests/deps.sh demo || exit 1
make -s all tests/tools/nl-inject || exit 1

. tests/lib.sh
. tests/scenarios.sh
nl_begin demo
NL_SCENARIO_OUT=$NL_TMP
PORT=$(nl_port NL_DEMO_PORT 14290)
nl_start_nats "$PORT" || exit 1
nl_scenario_setup "$PORT" >/dev/null || exit 1
echo "demo: nats-server on 127.0.0.1:$PORT with streams AW GAP MP NAK LONG OK"
nl_start_collectd "<Instance \"demo\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
echo "demo: collectd runs with the plugin, polling every second (log: $NL_TMP/collectd.log)"
echo "demo: injecting the five classes; findings appear below as collectd notifications"
echo
nl_scenario_start_HEALTHY "$PORT" 120
for cls in SEQUENCE_GAP MAX_PENDING_THROTTLE NAK_STORM ACK_WAIT_VIOLATION \
  MISSING_PROGRESS; do
  "nl_scenario_start_$cls" "$PORT"
done

deadline=$((SECONDS + ${NL_DEMO_SECONDS:-120}))
shown=0
seen=""
while [ $SECONDS -lt $deadline ]; do
  lines=$(nl_notifications "plugin = nats_lens")
  total=$(printf '%s\n' "$lines" | grep -c . )
  if [ "$total" -gt "$shown" ]; then
    printf '%s\n' "$lines" | tail -n $((total - shown)) |
      sed -e 's/^\[\([^]]*\)\].*severity = \([A-Z]*\),.*type_instance = [^,]*, message = /\1  \2  /'
    shown=$total
  fi
  seen=$(printf '%s\n' "$lines" | grep -v "severity = OKAY" |
    grep -o "type_instance = [A-Z_]*" | sort -u | wc -l)
  [ "$seen" -ge 5 ] && break
  sleep 1
done
echo
echo "demo: $seen of 5 classes seen in $((SECONDS)) s; the healthy consumer OK/good raised $(nl_notifications OK/good | wc -l) notifications"
echo "demo: each line names the class, stream/consumer, the evidence and the fix command"
[ "$seen" -ge 5 ]
