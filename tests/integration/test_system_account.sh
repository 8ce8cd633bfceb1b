#!/usr/bin/env bash
# SystemAccount mode on a real nats-server with a system account and three
# application accounts A, B and C, each holding the same streams and
# consumers (tests/scenarios.sh: AW, GAP, MP, NAK, LONG, WPI, OK). One
# collectd Instance with the least-privileged system-account user watches
# all three through one JSZ request per poll. Each class is injected in one
# account only:
#   A: SEQUENCE_GAP, NAK_STORM;  B: MAX_PENDING_THROTTLE,
#   ACK_WAIT_VIOLATION;          C: MISSING_PROGRESS, NAK_STORM
#   (and B's healthy OK). A's NAK_STORM is found with its advisories, C's
#   by polling alone: the PASS lines give both delays.
# Account A's advisories come on a connection of its own
# (AccountAdvisories). Each finding is raised under its own account (plugin instance
# <instance>-<account>-<stream>, "(account X)" in the message, "account" in
# the health event on <prefix>.account.<account>.violations...) and under
# no other; the fix of the NAK_STORM clears it under A alone; the fix
# printed for B's MAX_PENDING_THROTTLE, applied with B's credentials, is
# read back and clears it; the poll
# count and the API request count grow together (one request per poll). A
# second Instance whose user may not publish the JSZ request logs an error
# that names the subject, and its collectd keeps running.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin system_account
PORT=$(nl_port NL_PORT_SYSACC 14680)
HTTP=$(nl_port NL_PORT_SYSACC_HTTP 14690)
cat >"$NL_TMP/server.conf" <<EOF
listen: 127.0.0.1:$PORT
jetstream { store_dir: "$NL_TMP/js" }
accounts {
  SYS: {
    users: [
      {user: admin, password: admin}
      {user: mon, password: mon, permissions: {
        publish: ["\$SYS.REQ.SERVER.PING.JSZ", "nats.lens.health.>"]
        subscribe: ["_INBOX_nl.>"] }}
      {user: nope, password: nope, permissions: {
        publish: ["nats.lens.health.>"], subscribe: ["_INBOX.>"] }}
    ]
  }
  A: { jetstream: enabled, users: [{user: a, password: a}] }
  B: { jetstream: enabled, users: [{user: b, password: b}] }
  C: { jetstream: enabled, users: [{user: c, password: c}] }
}
system_account: SYS
EOF
nl_start_server nats "$PORT" -c "$NL_TMP/server.conf" || exit 1
url() { echo "nats://$1:$1@127.0.0.1:$PORT"; }
. "$NL_ROOT/tests/scenarios.sh"
NL_SCENARIO_OUT=$NL_TMP
for acc in a b c; do
  nl_scenario_setup "$(url "$acc")" >/dev/null || {
    nl_fail setup/$acc "streams not created in account $acc"
    exit 1
  }
done

# Health events of every account, as the system account receives them.
"$NL_INJECT" --server "$(url admin)" record 'nats.lens.health.>' \
  --count 100000 --duration 150 --out "$NL_TMP/events.jsonl" \
  2>"$NL_TMP/events.subjects" &
NL_PIDS+=($!)
nl_start_collectd "<Instance \"sys\">
  URL \"nats://127.0.0.1:$PORT\"
  User \"mon\"
  Password \"mon\"
  InboxPrefix \"_INBOX_nl\"
  AccountAdvisories \"A\" \"a\" \"a\"
  SystemAccount true
  Timeout 2
  Listen \"127.0.0.1\" \"$HTTP\"
</Instance>
<Instance \"nope\">
  URL \"$(url nope)\"
  SystemAccount true
  Timeout 1
</Instance>" 1 || exit 1

nl_scenario_start_HEALTHY "$(url b)" 60
INJECTED=$(date +%s)
nl_scenario_start_SEQUENCE_GAP "$(url a)"
# C's first: the fix below stops the one started last (A's).
NL_SCENARIO_OUT=$NL_TMP/c
mkdir -p "$NL_SCENARIO_OUT"
nl_scenario_start_NAK_STORM "$(url c)"
NL_SCENARIO_OUT=$NL_TMP
nl_scenario_start_NAK_STORM "$(url a)"
nl_scenario_start_MAX_PENDING_THROTTLE "$(url b)"
nl_scenario_start_ACK_WAIT_VIOLATION "$(url b)"
nl_scenario_start_MISSING_PROGRESS "$(url c)"

# found CLASS ACCOUNT STREAM SECONDS: a notification of CLASS under the
# account's plugin instance, naming the account.
found() {
  nl_wait_notification "$4" "plugin_instance = sys-$2-$3," \
    "type_instance = $1," "(account $2)" >/dev/null
}
# elsewhere CLASS ACCOUNTS STREAM: the class fired under an account not in
# ACCOUNTS (letters).
elsewhere() {
  local other
  for other in A B C; do
    [[ $2 == *$other* ]] && continue
    nl_notifications "plugin_instance = sys-$other-$3," |
      grep -qF "type_instance = $1," && return 0
  done
  return 1
}
for case in SEQUENCE_GAP:A:GAP NAK_STORM:A:NAK MAX_PENDING_THROTTLE:B:MP \
  ACK_WAIT_VIOLATION:B:AW MISSING_PROGRESS:C:LONG NAK_STORM:C:NAK; do
  IFS=: read -r cls acc stream <<<"$case"
  if found "$cls" "$acc" "$stream" 60; then
    # Seconds from the injections to the notification (the log's clock,
    # whole seconds), polls at Interval 1: the poll-only delay of the mode.
    at=$(nl_notifications "plugin_instance = sys-$acc-$stream," |
      grep -F "type_instance = $cls," | head -n 1 |
      sed -E 's/^\[([^]]*)\].*/\1/')
    delay=$(($(date -d "$at" +%s) - INJECTED))
    nl_pass "found/$cls/$acc" "${delay} s after the injection"
  else
    nl_fail "found/$cls/$acc" "no $cls under account $acc"
  fi
done
for case in SEQUENCE_GAP:A:GAP NAK_STORM:AC:NAK MAX_PENDING_THROTTLE:B:MP \
  ACK_WAIT_VIOLATION:B:AW MISSING_PROGRESS:C:LONG; do
  IFS=: read -r cls acc stream <<<"$case"
  if elsewhere "$cls" "$acc" "$stream"; then
    nl_fail "not-mixed/$cls" "$cls also raised in another account's $stream"
  else
    nl_pass "not-mixed/$cls"
  fi
done

# The healthy consumer of B was watched (its deliveries counted) and raised
# nothing.
delivered=$(nl_csv_last sys-B-OK nats_lens_delivered good)
if [ "${delivered:-0}" -gt 100 ] 2>/dev/null &&
  [ -z "$(nl_notifications "plugin_instance = sys-B-OK,")" ]; then
  nl_pass healthy-silent "delivered $delivered"
else
  nl_fail healthy-silent "delivered ${delivered:-none}; $(nl_notifications \
    "plugin_instance = sys-B-OK," | head -n 2)"
fi

# The fix clears the NAK_STORM under A.
nl_scenario_fix_NAK_STORM "$(url a)"
if nl_wait_notification 60 "plugin_instance = sys-A-NAK," \
  "type_instance = NAK_STORM," "severity = OKAY" >/dev/null; then
  nl_pass cleared/NAK_STORM
else
  nl_fail cleared/NAK_STORM "no OKAY under account A"
fi

# Health events carry the account and go to its subject.
sleep 1
if python3 - "$NL_TMP/events.jsonl" "$NL_TMP/events.subjects" <<'PY'; then
import json, sys
# record writes each message as a line and "recorded SUBJECT" to stderr,
# in the same order.
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
subjects = [l.split(" ", 1)[1].strip() for l in open(sys.argv[2])
            if l.startswith("recorded ")]
seen = set()
for ev, subject in zip(events, subjects):
    if ev.get("type") == "SEQUENCE_GAP" and ev.get("state") == "firing":
        seen.add(ev.get("account") == "A" and subject.startswith(
            "nats.lens.health.account.A.violations.GAP."))
sys.exit(0 if seen == {True} else 1)
PY
  nl_pass health-event-account
else
  nl_fail health-event-account "$(head -c 600 "$NL_TMP/events.jsonl")"
fi

# The REST API names the account of every finding and stream; a stream
# and a history are asked for by account.
api() { curl -s -o "$NL_TMP/api.json" -w '%{http_code}' "http://127.0.0.1:$HTTP$1"; }
if [ "$(api /api/violations)" = 200 ] && python3 - "$NL_TMP/api.json" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
where = {(v.get("account"), v["stream_name"], v["type"]) for v in doc["violations"]}
assert ("A", "GAP", "SEQUENCE_GAP") in where, where
done = {(r.get("account"), r["stream_name"], r["type"]) for r in doc["resolved"]}
assert ("A", "NAK", "NAK_STORM") in done, done
assert all(v.get("account") in ("A", "B", "C") for v in doc["violations"])
assert not any(a != "A" and t == "SEQUENCE_GAP" for a, s, t in where), where
PY
  nl_pass api/violations-account
else
  nl_fail api/violations-account "$(head -c 400 "$NL_TMP/api.json")"
fi
if [ "$(api '/api/streams?stream=GAP&account=A')" = 200 ] && python3 - "$NL_TMP/api.json" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["matched"] == 1 and doc["total"] >= 21, doc["matched"]
s = doc["streams"][0]
assert s["account"] == "A" and s["name"] == "GAP" and s["health"] == "critical", s
PY
  nl_pass api/streams-account
else
  nl_fail api/streams-account "$(head -c 400 "$NL_TMP/api.json")"
fi
code_a=$(api '/api/history/GAP/slow?account=A')
code_none=$(api '/api/history/GAP/slow')
code_x=$(api '/api/history/GAP/slow?account=NOPE')
if [ "$code_a" = 200 ] && [ "$code_none" = 400 ] && [ "$code_x" = 404 ]; then
  nl_pass api/history-account
else
  nl_fail api/history-account "codes $code_a $code_none $code_x"
fi

# The dashboard shows each account's GAP as a block of its own, labelled
# with the account, and draws the history of A's (asked with its account).
out=$(python3 "$NL_ROOT/tests/tools/browser_probe.py" "http://127.0.0.1:$HTTP/" \
  1400 900 \
  "document.querySelector('.stream[data-stream=GAP][data-account=A] svg.chart')" \
  "(function () {
     var blocks = document.querySelectorAll('.stream[data-stream=GAP]');
     return {blocks: blocks.length,
             label: document.querySelector('.stream[data-stream=GAP][data-account=A] .stream-head strong').textContent,
             card: document.querySelector('article.card[data-class=SEQUENCE_GAP]').getAttribute('data-account')};
   })()" 2>&1)
if python3 -c 'import json, sys
d = json.loads(sys.argv[1])
sys.exit(0 if d == {"blocks": 3, "label": "A \u203a GAP", "card": "A"} else 1)' \
  "$out" 2>/dev/null; then
  nl_pass dashboard/accounts "$out"
else
  nl_fail dashboard/accounts "$out"
fi

# One request per poll: the requests counted and the polls done.
polls=$(nl_csv_rows sys duration poll 1)
requests=$(nl_csv_last sys derive api_requests)
if [ "$polls" -ge 30 ] && [ "$requests" -le "$((polls + 1))" ] &&
  [ "$requests" -ge "$((polls - 1))" ]; then
  nl_pass one-request-per-poll "$requests requests in $polls polls"
else
  nl_fail one-request-per-poll "$requests requests in $polls polls"
fi
if [ "$(nl_csv_last sys count accounts)" = "3.000000" ] ||
  [ "$(nl_csv_last sys count accounts)" = "3" ]; then
  nl_pass accounts-counted
else
  nl_fail accounts-counted "count-accounts $(nl_csv_last sys count accounts)"
fi

# nats-lens-check --system-account audits every account in one request:
# the scenario streams are alike in A, B and C, so the same configuration
# findings come in each account, each under its own, and what the fault of
# A's GAP adds only under A; the accounts --exclude-account leaves out are
# not reported. It runs as the least-privileged user, whose replies come
# under its own inbox prefix.
"$NL_ROOT/cli/nats-lens-check" --server "$(url mon)" --inbox-prefix _INBOX_nl \
  --system-account \
  --exclude-account C --format json >"$NL_TMP/check.json" 2>"$NL_TMP/check.err"
if python3 - "$NL_TMP/check.json" <<'PY'; then
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["accounts"] == 2, doc["accounts"]
by = {}
for f in doc["findings"]:
    by.setdefault(f["account"], set()).add((f["stream"], f["consumer"], f["class"]))
assert set(by) == {"A", "B"}, set(by)
# The same configuration in both; A's GAP also holds more than its limit
# keeps (its SEQUENCE_GAP), and only A says so.
gap = ("GAP", "slow", "RETENTION_BELOW_BACKLOG")
assert gap in by["A"] and gap not in by["B"], by
assert by["B"] and by["A"] - {gap} == by["B"], by
PY
  nl_pass check/system-account "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["findings"]), "findings in", d["accounts"], "accounts")' "$NL_TMP/check.json")"
else
  nl_fail check/system-account "$(head -c 300 "$NL_TMP/check.json") $(cat "$NL_TMP/check.err")"
fi

# After the audit (which compares B with A): the fix B's
# MAX_PENDING_THROTTLE prints, applied with account B's
# credentials, is read back and clears it under B.
line=$(nl_notifications "plugin_instance = sys-B-MP," |
  grep -F "type_instance = MAX_PENDING_THROTTLE," | grep -v OKAY | head -n 1)
fix=$(sed -n 's/.* fix: \([^;]*\);.*/\1/p' <<<"$line")
mp_okays() {
  nl_notifications "plugin_instance = sys-B-MP," |
    grep -F "type_instance = MAX_PENDING_THROTTLE," | grep -c "severity = OKAY"
}
okays=$(mp_okays)
nl_check fix/B/held [ "$okays" = 0 ]
if [ -n "$fix" ] && readback=$(nl_apply_fix "$(url b)" "$fix" 2>&1); then
  nl_pass fix/B/applied "'$fix' read back: ${readback//$'\n'/ }"
  cleared() { [ "$(mp_okays)" -gt "$okays" ]; }
  nl_check fix/B/cleared nl_retry 30 cleared
else
  nl_fail fix/B/applied "'${fix:-no fix printed}': ${readback:-}"
fi


# AccountAdvisories "A": account A's advisories come on a connection of
# its own (its NAK_STORM sends MSG_NAKED advisories), counted under
# sys-A; B and C have none.
adv_a=$(nl_csv_last sys-A derive advisories)
if [ "${adv_a%.*}" -gt 0 ] 2>/dev/null && [ -z "$(nl_csv_file sys-B derive advisories)" ] &&
  grep -q 'account "A": advisories on a connection of its own' "$NL_TMP/collectd.log"; then
  nl_pass account-advisories "$adv_a advisories of account A"
else
  nl_fail account-advisories "sys-A advisories ${adv_a:-none}; $(nl_csv_file sys-B derive advisories)"
fi

# The user without the permission: a clear error naming the subject.
if grep -q 'Instance "nope": poll failed: .*\$SYS.REQ.SERVER.PING.JSZ.*[Pp]ermission' \
  "$NL_TMP/collectd.log"; then
  nl_pass refused-permission
else
  nl_fail refused-permission "$(grep 'Instance "nope"' "$NL_TMP/collectd.log" |
    head -n 3)"
fi
nl_check collectd-alive kill -0 "$NL_COLLECTD_PID"
nl_end
