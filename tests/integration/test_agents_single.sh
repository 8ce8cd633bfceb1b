#!/usr/bin/env bash
# Scope "server" on a single server that is not in a cluster (issue 23):
# the agent judges every consumer, as Scope "cluster" does. One nats-server
# (server_name solo) with a system account and an account A holding the
# streams and consumers of tests/scenarios.sh; one collectd with two
# SystemAccount Instances on it, "srv" (Scope "server") and "clu" (Scope
# "cluster"). The five classes are injected: each is raised by both, with
# the same class, severity and consumer, and nothing is raised by one only;
# srv reports every consumer judged (none elsewhere) and names the server
# in the notification meta; the healthy consumer stays silent under both.
set -u
. "$(dirname "$0")/../lib.sh"
. "$NL_ROOT/tests/scenarios.sh"
nl_begin agents_single
PORT=$(nl_port NL_PORT_AGENTS_SINGLE 15120)
cat >"$NL_TMP/server.conf" <<EOF
server_name: solo
listen: 127.0.0.1:$PORT
jetstream { store_dir: "$NL_TMP/js" }
accounts {
  SYS: { users: [{user: mon, password: mon}] }
  A: { jetstream: enabled, users: [{user: a, password: a}] }
}
system_account: SYS
EOF
nl_start_server nats "$PORT" -c "$NL_TMP/server.conf" || exit 1
url() { echo "nats://$1:$1@127.0.0.1:$PORT"; }
NL_SCENARIO_OUT=$NL_TMP
nl_scenario_setup "$(url a)" >/dev/null || {
  nl_fail setup/objects "streams not created in account A"
  exit 1
}

# The exec handler (as nobody) keeps the notification meta.
chmod 711 "$NL_TMP"
mkdir -p "$NL_TMP/handler" "$NL_TMP/notifications"
cp -p "$NL_ROOT/examples/notify-handler.sh" "$NL_TMP/handler/"
chmod 755 "$NL_TMP/handler" "$NL_TMP/handler/notify-handler.sh"
chown nobody "$NL_TMP/notifications"
nl_start_collectd "<Instance \"srv\">
  URL \"$(url mon)\"
  SystemAccount true
  Scope \"server\"
  Timeout 1
</Instance>
<Instance \"clu\">
  URL \"$(url mon)\"
  SystemAccount true
  Scope \"cluster\"
  Timeout 1
</Instance>" 1 "LoadPlugin exec
<Plugin exec>
  NotificationExec \"nobody\" \"$NL_TMP/handler/notify-handler.sh\" \"$NL_TMP/notifications/n.jsonl\"
</Plugin>" exec || exit 1

nl_scenario_start_HEALTHY "$(url a)" 45
for cls in ACK_WAIT_VIOLATION SEQUENCE_GAP MAX_PENDING_THROTTLE NAK_STORM \
  MISSING_PROGRESS; do
  "nl_scenario_start_$cls" "$(url a)"
done

for case in AW/proc:ACK_WAIT_VIOLATION:FAILURE GAP/slow:SEQUENCE_GAP:FAILURE \
  MP/stuck:MAX_PENDING_THROTTLE:WARNING NAK/poison:NAK_STORM:WARNING \
  LONG/task:MISSING_PROGRESS:FAILURE; do
  IFS=: read -r sc cls sev <<<"$case"
  stream=${sc%/*}
  got=
  for inst in srv clu; do
    nl_wait_notification 60 "plugin_instance = $inst-A-$stream," \
      "type_instance = $cls," "severity = $sev" "$sc (account A)" \
      >/dev/null && got="$got $inst"
  done
  if [ "$got" = " srv clu" ]; then
    nl_pass "same-finding/$cls" "$sc under srv and clu"
  else
    nl_fail "same-finding/$cls" "$sc raised under:${got:- neither}"
  fi
done

# Nothing raised under one Instance only: the same (stream, class,
# severity) under both.
findings() { # INSTANCE
  nl_notifications "plugin_instance = $1-" |
    sed -E "s/.*severity = ([A-Z]+), .*plugin_instance = $1-([^,]*), type_instance = ([A-Z_]+),.*/\2 \3 \1/" |
    sort -u
}
same() { [ -n "$(findings srv)" ] && [ "$(findings srv)" = "$(findings clu)" ]; }
if nl_retry 5 same; then
  nl_pass same-notifications "$(findings srv | wc -l) (stream, class, severity)"
else
  nl_fail same-notifications "srv: $(findings srv | tr '\n' ';') clu: $(findings clu | tr '\n' ';')"
fi

# srv judges every consumer of the server (7 in account A), none elsewhere.
judged=0
for sc in AW/proc GAP/slow MP/stuck NAK/poison LONG/task WPI/task OK/good; do
  v=$(nl_csv_last "srv-A-${sc%/*}" nats_lens_judged "${sc#*/}")
  [ "${v%%.*}" = 1 ] && judged=$((judged + 1))
done
n_judged=$(nl_csv_last srv count consumers_judged)
n_elsewhere=$(nl_csv_last srv count consumers_elsewhere)
if [ "$judged" -eq 7 ] && [ "${n_judged%%.*}" = 7 ] &&
  [ "${n_elsewhere%%.*}" = 0 ]; then
  nl_pass judges-all "7 consumers judged=1, count-consumers_judged 7, elsewhere 0"
else
  nl_fail judges-all "$judged of 7 judged=1; count-consumers_judged ${n_judged:-none}, elsewhere ${n_elsewhere:-none}"
fi

# The meta of srv's onsets names the server.
servers=$(python3 - "$NL_TMP/notifications/n.jsonl" <<'PY'
import json, sys
try:
    lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except OSError:
    lines = []
print(" ".join(sorted({n.get("meta", {}).get("server", "-") for n in lines
                       if n["plugin_instance"].startswith("srv-")
                       and n["severity"] != "OKAY"})))
PY
)
nl_check meta-server [ "$servers" = solo ]

# The healthy consumer was watched under srv and raised nothing.
delivered=$(nl_csv_last srv-A-OK nats_lens_delivered good)
if [ "${delivered:-0}" -gt 100 ] 2>/dev/null &&
  [ -z "$(nl_notifications "-A-OK,")" ]; then
  nl_pass healthy-silent "delivered $delivered"
else
  nl_fail healthy-silent "delivered ${delivered:-none}; $(nl_notifications "-A-OK," | head -n 2)"
fi
nl_check collectd-alive kill -0 "$NL_COLLECTD_PID"
nl_end
