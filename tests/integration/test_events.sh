#!/usr/bin/env bash
# Health events published on NATS by real collectd loading the built plugin,
# received by a real subscriber (tests/tools/nl-inject record), for three
# violations injected on a real nats-server (tests/scenarios.sh recipes):
# SEQUENCE_GAP (cleared by deleting the consumer), MAX_PENDING_THROTTLE and
# NAK_STORM (cleared by fixing the workers).
#
# Three instances watch the same server: "ev" with the defaults and
# SummaryInterval 2, "ev2" with HealthSubjectPrefix "custom.lens", and "ev3"
# with HealthEvents false. Checked with python3: exactly one firing and one
# resolved event per injected violation and instance, nothing for the other
# consumers, valid JSON with every documented field and type, RFC 3339 UTC
# times, subjects <prefix>.violations.<stream>.<consumer>, the summaries of
# "ev" (counts per class), nothing from "ev3" although it detected the same.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin events
PORT=$(nl_port NL_PORT_EVENTS 14400)
nl_start_nats "$PORT" || exit 1
NL_SCENARIO_OUT=$NL_TMP
. "$NL_ROOT/tests/scenarios.sh"
nl_scenario_setup "$PORT" >/dev/null || {
  nl_fail setup "the streams and consumers were not created"
  exit 1
}

# Subscribers, started before collectd; each stops after RECORD_S at most.
RECORD_S=80
record() {
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" record "$1" --count 100000 \
    --duration "$RECORD_S" --out "$NL_TMP/$2.events" 2>"$NL_TMP/$2.subjects" &
  NL_PIDS+=($!)
  eval "REC_$2=$!"
}
record 'nats.lens.health.>' default
record 'custom.lens.>' custom
record 'off.lens.>' off
sleep 0.5

nl_start_collectd "<Instance \"ev\">
  URL \"nats://127.0.0.1:$PORT\"
  SummaryInterval 2
</Instance>
<Instance \"ev2\">
  URL \"nats://127.0.0.1:$PORT\"
  HealthSubjectPrefix \"custom.lens\"
</Instance>
<Instance \"ev3\">
  URL \"nats://127.0.0.1:$PORT\"
  HealthEvents false
  HealthSubjectPrefix \"off.lens\"
  SummaryInterval 1
</Instance>" 1 || exit 1

# MAX_PENDING_THROTTLE with ack_wait 30 s, so that the worker that never
# acks sees no redelivery in the test's time (the recipe's 3 s would also
# raise ACK_WAIT_VIOLATION for it); the fix raises max_ack_pending.
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" consumer-create MP stuck \
  --ack-wait 30 --max-ack-pending 5 >/dev/null
nl_scenario_start_SEQUENCE_GAP "$PORT"
nl_scenario_start_MAX_PENDING_THROTTLE "$PORT"
nl_scenario_start_NAK_STORM "$PORT"

# wait_event TAG STATE STREAM SECONDS: waits until the events recorded for
# TAG hold one in STATE for STREAM.
wait_event() {
  local i
  for ((i = 0; i < $4 * 5; i++)); do
    grep "\"state\":\"$2\"" "$NL_TMP/$1.events" 2>/dev/null |
      grep -q "\"stream_name\":\"$3\"" && return 0
    sleep 0.2
  done
  nl_fail "$1/$2-arrived" "no $2 event for $3 within $4 s"
  return 1
}
for s in GAP MP NAK; do wait_event default firing "$s" 45; done
for s in GAP MP NAK; do wait_event custom firing "$s" 5; done
# ev3 must have detected the same violations (notifications), so that no
# event from it means the option works.
nl_wait_notification 10 "plugin_instance = ev3-NAK" "type_instance = NAK_STORM" \
  >/dev/null || true
# A few polls with all three active, for the summaries.
sleep 3

# Fixes.
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" consumer-delete GAP slow \
  >/dev/null
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" consumer-create MP stuck \
  --ack-wait 30 --max-ack-pending 1000 >/dev/null
nl_scenario_fix_NAK_STORM "$PORT"
for s in GAP MP NAK; do wait_event default resolved "$s" 45; done
for s in GAP MP NAK; do wait_event custom resolved "$s" 5; done
kill "$NL_SCENARIO_PID_MAX_PENDING_THROTTLE" 2>/dev/null
# A few more polls, so a duplicate or a flapping event would be seen.
sleep 4
kill "$REC_default" "$REC_custom" "$REC_off" 2>/dev/null
wait "$REC_default" "$REC_custom" "$REC_off" 2>/dev/null

ev3_seen=$(nl_notifications "plugin_instance = ev3-" | wc -l)

python3 - "$NL_TMP" "$ev3_seen" "$NL_ROOT" <<'EOF'
import json, os, re, sys, datetime

tmp, ev3_seen = sys.argv[1], int(sys.argv[2])
failed = False

def report(ok, name, detail):
    global failed
    if ok:
        print("PASS events/%s%s" % (name, " (%s)" % detail if detail else ""))
    else:
        failed = True
        print("FAIL events/%s: %s" % (name, detail))

def no_constants(name):
    raise ValueError("non-JSON constant " + name)

def load(tag):
    """Pairs (subject, event) in arrival order, or a parse error text."""
    subjects = []
    path = os.path.join(tmp, tag + ".subjects")
    if os.path.exists(path):
        subjects = [l.split(" ", 1)[1].strip() for l in open(path)
                    if l.startswith("recorded ")]
    path = os.path.join(tmp, tag + ".events")
    lines = open(path, "rb").read().decode("utf-8").splitlines() \
        if os.path.exists(path) else []
    if len(lines) != len(subjects):
        return None, "%d messages but %d subjects" % (len(lines), len(subjects))
    out = []
    for subject, line in zip(subjects, lines):
        try:
            out.append((subject, json.loads(line, parse_constant=no_constants)))
        except ValueError as e:
            return None, "invalid JSON on %s: %s: %s" % (subject, e, line[:200])
    return out, ""

# Every class and its severity, as the class table declares them
# (NL_CLASS_LIST); PUSH_UNBOUND escalates to critical, not in this run.
SEVERITY = {name: sev.lower() for name, sev in re.findall(
    r"X\((\w+), \w+, (CRITICAL|WARNING), \w+\)",
    open(os.path.join(sys.argv[3], "plugin/core/model/nl_finding.h")).read())}
assert len(SEVERITY) >= 19, SEVERITY
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
now = datetime.datetime.now(datetime.timezone.utc)

def rfc3339(v):
    if not isinstance(v, str) or not RFC3339.match(v):
        return False
    t = datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc)
    return abs((now - t).total_seconds()) < 600

def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)

def check_violation_event(subject, e, prefix, instance):
    """Returns the list of problems with one violation event."""
    bad = []
    want = {"type": str, "state": str, "severity": str, "instance": str,
            "stream_name": str, "consumer_name": str, "description": str,
            "detected_at": str, "firing_since": str, "violation": dict}
    for k, t in want.items():
        if not isinstance(e.get(k), t):
            bad.append("%s missing or not %s" % (k, t.__name__))
    if bad:
        return bad
    if "reason" not in e or not (e["reason"] is None or
                                 isinstance(e["reason"], str)):
        bad.append("reason missing")
    if e["type"] not in SEVERITY:
        bad.append("unknown type " + e["type"])
    elif e["severity"] != SEVERITY[e["type"]]:
        bad.append("severity %s for %s" % (e["severity"], e["type"]))
    if e["state"] not in ("firing", "resolved"):
        bad.append("state " + e["state"])
    if e["instance"] != instance:
        bad.append("instance " + e["instance"])
    if not e["description"]:
        bad.append("empty description")
    for k in ("detected_at", "firing_since"):
        if not rfc3339(e[k]):
            bad.append("%s not RFC 3339 UTC: %s" % (k, e[k]))
    if e["state"] == "firing" and e["detected_at"] != e["firing_since"]:
        bad.append("firing detected_at differs from firing_since")
    if e["state"] == "resolved" and e["detected_at"] < e["firing_since"]:
        bad.append("resolved before it fired")
    want_subject = "%s.violations.%s.%s" % (prefix, e["stream_name"],
                                            e["consumer_name"])
    if subject != want_subject:
        bad.append("subject %s, expected %s" % (subject, want_subject))
    v = e["violation"]
    if v.get("type") != e["type"]:
        bad.append("violation.type %s" % v.get("type"))
    if not isinstance(v.get("fix_command"), str) or not v["fix_command"]:
        bad.append("violation.fix_command missing")
    if not isinstance(v.get("recommendation"), str):
        bad.append("violation.recommendation missing")
    numbers = [k for k, x in v.items()
               if k not in ("type", "fix_command", "recommendation")]
    if not numbers:
        bad.append("violation has no evidence numbers")
    for k in numbers:
        if v[k] is not None and not is_num(v[k]):
            bad.append("violation.%s is not a number" % k)
    if not any(k.startswith("recommended_") for k in numbers) and \
            e["type"] != "SEQUENCE_GAP":
        bad.append("violation has no recommended value")
    return bad

EXPECTED = {("GAP", "slow"): "SEQUENCE_GAP",
            ("MP", "stuck"): "MAX_PENDING_THROTTLE",
            ("NAK", "poison"): "NAK_STORM"}

def check_channel(tag, prefix, instance):
    events, err = load(tag)
    report(events is not None, tag + "/valid-json",
           err or "%d messages" % len(events or []))
    if events is None:
        return []
    violations = [(s, e) for s, e in events if ".violations." in s]
    summaries = [(s, e) for s, e in events if s.endswith(".summary")]
    others = [s for s, e in events if (s, e) not in violations + summaries]
    report(not others, tag + "/subjects", ", ".join(others[:3]))
    problems = []
    for s, e in violations:
        problems += ["%s: %s" % (s, p)
                     for p in check_violation_event(s, e, prefix, instance)]
    report(not problems, tag + "/fields",
           "; ".join(problems[:5]) or "%d events checked" % len(violations))
    seq = {}
    for s, e in violations:
        key = (e.get("stream_name"), e.get("consumer_name"), e.get("type"))
        seq.setdefault(key, []).append(e.get("state"))
    for (stream, consumer), cls in EXPECTED.items():
        got = seq.pop((stream, consumer, cls), [])
        report(got == ["firing", "resolved"],
               "%s/%s-once" % (tag, cls.lower()),
               "states %s" % got)
    report(not seq, tag + "/nothing-else",
           "unexpected: %s" % seq if seq else "")
    gap = [e for s, e in violations
           if e.get("type") == "SEQUENCE_GAP" and e.get("state") == "resolved"]
    report(len(gap) == 1 and gap[0].get("reason") == "consumer deleted",
           tag + "/deleted-consumer-reason",
           "reason %r" % (gap[0].get("reason") if gap else None))
    fixed = [e.get("reason") for s, e in violations
             if e.get("type") != "SEQUENCE_GAP"]
    report(all(r is None for r in fixed), tag + "/other-reasons-null",
           "%s" % fixed)
    return summaries

summaries = check_channel("default", "nats.lens.health", "ev")
custom_summaries = check_channel("custom", "custom.lens", "ev2")
report(not custom_summaries, "custom/no-summary-when-off",
       "%d summaries" % len(custom_summaries))

# Disabled instance: no event at all, although it saw the violations.
off, err = load("off")
report(off == [] and ev3_seen >= 3, "disabled/no-events",
       "%s events, %d notifications from ev3" % (
           len(off) if off is not None else err, ev3_seen))

# Summaries of "ev" every 2 s, with counts per class.
bad = []
times = []
peak = {}
for s, e in summaries:
    if e.get("type") != "summary" or e.get("instance") != "ev":
        bad.append("type/instance %s/%s" % (e.get("type"), e.get("instance")))
        continue
    if not rfc3339(e.get("at")):
        bad.append("at %s" % e.get("at"))
        continue
    a = e.get("active")
    if not isinstance(a, dict) or set(a) != set(SEVERITY) or \
            not all(isinstance(x, int) for x in a.values()):
        bad.append("active %s" % a)
        continue
    if e.get("active_total") != sum(a.values()):
        bad.append("active_total %s" % e.get("active_total"))
    if not isinstance(e.get("consumers_watched"), int) or \
            not isinstance(e.get("streams"), int):
        bad.append("counts %s/%s" % (e.get("consumers_watched"),
                                     e.get("streams")))
    times.append(datetime.datetime.strptime(e["at"], "%Y-%m-%dT%H:%M:%S.%fZ"))
    for k, x in a.items():
        peak[k] = max(peak.get(k, 0), x)
report(not bad and len(times) >= 5, "summary/fields",
       "; ".join(bad[:3]) or "%d summaries" % len(times))
gaps = sorted((b - a).total_seconds() for a, b in zip(times, times[1:]))
median = gaps[len(gaps) // 2] if gaps else 0
report(1.5 <= median <= 3.0, "summary/interval",
       "median %.2f s between summaries" % median)
report(all(peak.get(c, 0) >= 1 for c in EXPECTED.values()),
       "summary/counts-seen", "peak counts %s" % peak)
# Each summary's counts equal the findings active by the events so far (the
# events of a poll are published before that poll's summary).
default_events, _ = load("default")
active = set()
mismatch = []
for s, e in default_events or []:
    if s.endswith(".summary"):
        want = {c: 0 for c in SEVERITY}
        for key in active:
            want[key[2]] += 1
        if e.get("active") != want:
            mismatch.append("%s: %s, events say %s" % (e.get("at"),
                                                        e.get("active"), want))
    else:
        key = (e.get("stream_name"), e.get("consumer_name"), e.get("type"))
        if e.get("state") == "firing":
            active.add(key)
        else:
            active.discard(key)
report(summaries and not mismatch, "summary/counts-match-events",
       "; ".join(mismatch[:2]) or "%d summaries" % len(summaries))
first = summaries[0][1] if summaries else {}
# nl_scenario_setup made 7 streams, each with one consumer.
report(first.get("consumers_watched") == 7 and first.get("streams") == 7,
       "summary/watched", "consumers %s, streams %s" % (
           first.get("consumers_watched"), first.get("streams")))
sys.exit(1 if failed else 0)
EOF
[ $? -eq 0 ] || NL_FAILED=1
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
