#!/usr/bin/env bash
# collectd write_prometheus, configured with
# examples/backends/prometheus.conf, scraped with curl and by a real
# Prometheus server (Debian prometheus) that loads the alert rules of
# examples/prometheus-alerts.yml. A MAX_PENDING_THROTTLE violation is
# injected and fixed on a real nats-server: /metrics must carry the
# nats_lens series with their labels and values, and Prometheus must fire
# NatsLensMaxPendingThrottle for S/c and resolve it after the fix.
set -u
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/backend_scenario.sh"
nl_begin prometheus
NATS_PORT=$(nl_port NL_PORT_PROMETHEUS_NATS 14520)
METRICS_PORT=$(nl_port NL_PORT_PROMETHEUS_METRICS 14521)
PROM_PORT=$(nl_port NL_PORT_PROMETHEUS_SERVER 14522)
EX="$NL_ROOT/examples"
METRICS="http://127.0.0.1:$METRICS_PORT/metrics"
PROM="http://127.0.0.1:$PROM_PORT"

if out=$(promtool check rules "$EX/prometheus-alerts.yml" 2>&1); then
  nl_pass alert-rules/promtool-check "$(echo "$out" | grep -o '[0-9]* rules found')"
else
  nl_fail alert-rules/promtool-check "$out"
fi

# Every class gauge has a rule that fires on it (promtool test rules: a
# series at 1 for each class, the alert expected with its class and
# severity labels), and none fires on 0. The rules are tested without
# their annotations (texts promtool would otherwise compare too).
awk '/^ *annotations:/ { skip = 1; next } /^ *- alert:/ { skip = 0 } !skip' \
  "$EX/prometheus-alerts.yml" >"$NL_TMP/rules-bare.yml"
python3 - "$NL_ROOT/plugin/core/model/nl_finding.h" "$NL_TMP/rules-bare.yml" \
  >"$NL_TMP/rules-test.yml" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
# The rows X(ID, suffix, SEVERITY, SCOPE) of NL_CLASS_LIST.
rows = re.findall(r'^\s*X\(([A-Z_]+), ([a-z_]+), (WARNING|CRITICAL), (?:CONSUMER|STREAM)\)',
                  src, re.M)
if len(rows) < 19:
    sys.exit("only %d classes read from %s" % (len(rows), sys.argv[1]))
rules = open(sys.argv[2]).read()
print("rule_files: [%s]" % sys.argv[2])
print("evaluation_interval: 1m")
print("tests:")
for name, suffix, severity in rows:
    alert = re.search(r"- alert: (\S+)\n\s+expr: collectd_nats_lens_nats_lens_%s == 1" % suffix, rules)
    series = 'collectd_nats_lens_nats_lens_%s{nats_lens="it-S",type="c",instance="h"}' % suffix
    print("  - interval: 1m")
    print("    input_series:")
    print("      - series: '%s'" % series)
    print("        values: '0 1 1'")
    print("    alert_rule_test:")
    print("      - eval_time: 0m")
    print("        alertname: %s" % (alert.group(1) if alert else "NatsLensNoRuleFor" + suffix))
    print("        exp_alerts: []")
    print("      - eval_time: 2m")
    print("        alertname: %s" % (alert.group(1) if alert else "NatsLensNoRuleFor" + suffix))
    print("        exp_alerts:")
    print("          - exp_labels: {class: %s, nats_lens: it-S, type: c, instance: h, severity: %s}" % (
        name, severity.lower()))
PY
if out=$(promtool test rules "$NL_TMP/rules-test.yml" 2>&1); then
  nl_pass alert-rules/every-class-fires "$(grep -c 'alertname' "$NL_TMP/rules-test.yml") checks, $(grep -c '^  - interval' "$NL_TMP/rules-test.yml") classes"
else
  nl_fail alert-rules/every-class-fires "$(echo "$out" | tail -n 12 | tr '\n' ' ')"
fi

# Prometheus: scrapes collectd every second and evaluates the example
# rules every second; storage in the test's directory.
mkdir -p "$NL_TMP/prom"
cp "$EX/prometheus-alerts.yml" "$NL_TMP/prom/alerts.yml"
cat >"$NL_TMP/prom/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [alerts.yml]
scrape_configs:
  - job_name: collectd
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:$METRICS_PORT"]}]
EOF
prometheus --config.file="$NL_TMP/prom/prometheus.yml" \
  --storage.tsdb.path="$NL_TMP/prom/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" \
  >"$NL_TMP/prometheus.out" 2>&1 &
NL_PIDS+=($!)

nl_start_nats "$NATS_PORT" || exit 1
WRITER=$(nl_backend_config_file "$EX/backends/prometheus.conf" \
  "s/Port \"9103\"/Port \"$METRICS_PORT\"/") || exit 1
nl_start_collectd "$(nl_backend_nats_block "$NATS_PORT")" 1 "$WRITER" \
  write_prometheus || exit 1
nl_backend_throttle_start "$NATS_PORT" || exit 1

# The example binds only the address it names (Host "127.0.0.1").
if ss -Hltn "sport = :$METRICS_PORT" | awk '{ print $4 }' |
  grep -qx "127.0.0.1:$METRICS_PORT"; then
  nl_pass write_prometheus/binds-127.0.0.1
else
  nl_fail write_prometheus/binds-127.0.0.1 "$(ss -Hltn "sport = :$METRICS_PORT")"
fi

if line=$(nl_backend_wait_onset); then
  nl_pass collectd/onset "${line#*message = }"
else
  nl_fail collectd/onset "no MAX_PENDING_THROTTLE notification in collectd's log"
fi

# scrape: /metrics into $NL_TMP/metrics.txt.
scrape() { curl -sf --max-time 5 "$METRICS" >"$NL_TMP/metrics.txt"; }
# series NAME LABELS VALUE: the scraped page has NAME{LABELS} VALUE (the
# labels in collectd's order, then the host label).
series() {
  grep -qE "^$1\{$2,instance=\"nl-test\"\} $3( [0-9]+)?$" "$NL_TMP/metrics.txt"
}
CL='nats_lens="it-S",type="c"'
throttled() {
  scrape && series collectd_nats_lens_nats_lens_max_pending_throttle "$CL" 1
}
nl_check metrics/max_pending_throttle-1 nl_retry 10 throttled
cp "$NL_TMP/metrics.txt" "$NL_TMP/metrics-throttled.txt"
# alert_state NAME: the state of the Prometheus alert NAME for S/c
# (firing, pending, or nothing).
alert_state() {
  curl -sf --max-time 5 "$PROM/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    if (l.get("alertname") == sys.argv[1] and l.get("nats_lens") == "it-S"
            and l.get("type") == "c"):
        print(a["state"])' "$1"
}
firing() { [ "$(alert_state NatsLensMaxPendingThrottle)" = firing ]; }
nl_check prometheus/alert-fires nl_retry 20 firing
nl_backend_throttle_fix "$NATS_PORT"

# The page while throttled: types, names, labels, values.
M="$NL_TMP/metrics-throttled.txt"
cp "$M" "$NL_TMP/metrics.txt"
nl_check metrics/num_pending-45 series collectd_nats_lens_nats_lens_num_pending "$CL" 45
nl_check metrics/num_ack_pending-5 series collectd_nats_lens_nats_lens_num_ack_pending "$CL" 5
nl_check metrics/ack_pending_ratio-1 series collectd_nats_lens_nats_lens_ack_pending_ratio "$CL" 1
nl_check metrics/num_waiting series collectd_nats_lens_nats_lens_num_waiting "$CL" '[0-9]+'
for cls in ack_wait_violation sequence_gap nak_storm missing_progress; do
  series "collectd_nats_lens_nats_lens_$cls" "$CL" 0 || break
done
nl_check metrics/other-classes-0 series "collectd_nats_lens_nats_lens_$cls" "$CL" 0
nl_check metrics/gauge-type grep -qx \
  '# TYPE collectd_nats_lens_nats_lens_num_pending gauge' "$M"
nl_check metrics/counter-type grep -qx \
  '# TYPE collectd_nats_lens_nats_lens_redelivered_total counter' "$M"
nl_check metrics/delivered-counter series \
  collectd_nats_lens_nats_lens_delivered_total "$CL" '[1-9][0-9]*'
nl_check metrics/stream-messages-50 series collectd_nats_lens_count \
  'nats_lens="it-S",type="messages"' 50
nl_check metrics/stream-last-seq-50 series collectd_nats_lens_nats_lens_seq \
  'nats_lens="it-S",type="last"' 50
nl_check metrics/instance-connected-1 series collectd_nats_lens_gauge \
  'nats_lens="it",type="connected"' 1
nl_check metrics/instance-consumers-1 series collectd_nats_lens_count \
  'nats_lens="it",type="consumers"' 1
# Prometheus' own lint on the families of the nats_lens types (the
# generic collectd types count and gauge draw naming remarks of their own).
grep 'collectd_nats_lens_nats_lens_' "$M" >"$NL_TMP/own-families.txt"
if lint=$(promtool check metrics <"$NL_TMP/own-families.txt" 2>&1); then
  nl_pass metrics/promtool-lint "$(grep -c '^# TYPE' "$NL_TMP/own-families.txt") families"
else
  nl_fail metrics/promtool-lint "$lint"
fi

# After the fix: collectd's OKAY, the gauge at 0 on /metrics, the alert
# resolved in Prometheus, and no other class alert for S/c.
if line=$(nl_backend_wait_okay); then
  nl_pass collectd/okay "${line#*message = }"
else
  nl_fail collectd/okay "no OKAY notification in collectd's log"
fi
cleared() {
  scrape && series collectd_nats_lens_nats_lens_max_pending_throttle "$CL" 0
}
nl_check metrics/max_pending_throttle-0 nl_retry 10 cleared
resolved() { [ -z "$(alert_state NatsLensMaxPendingThrottle)" ]; }
nl_check prometheus/alert-resolves nl_retry 20 resolved
# Every alert on the same gauge (NatsLensFindingAnyHost too) resolves with
# it; Prometheus evaluates the rules of a group one after another, so the
# others may resolve a moment later than the one waited for above. An
# alert of another class would stay.
others=
no_alerts() {
  others=$(curl -sf --max-time 5 "$PROM/api/v1/alerts" |
    python3 -c 'import json, sys
print(" ".join(a["labels"]["alertname"]
               for a in json.load(sys.stdin)["data"]["alerts"]))')
  [ -z "$others" ]
}
if nl_retry 10 no_alerts; then
  nl_pass prometheus/no-other-alert
else
  nl_fail prometheus/no-other-alert "still firing: $others"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
