#!/usr/bin/env bash
# Least privilege, on a real nats-server whose monitoring user has exactly
# the permissions documented in docs/security.md:
#   works      the plugin, as that user, polls and detects a
#              MAX_PENDING_THROTTLE on an application consumer (and publishes
#              its health events), and the server logs no permission
#              violation for it;
#   read-only  the server's API audit advisories ($JS.EVENT.ADVISORY.API),
#              recorded during the monitored run, hold only list and info
#              requests: the plugin never creates, changes or deletes a
#              stream or consumer;
#   denied     that user cannot fetch ($JS.API.CONSUMER.MSG.NEXT), ack,
#              publish application messages, subscribe to application
#              subjects or to other clients' inboxes, or create a stream:
#              the server refuses each (Permissions Violation) and the
#              application's consumer is untouched;
#   forged     an application user may publish advisories unless denied
#              `$JS.EVENT.>`: a forged MAX_DELIVERIES (for a consumer
#              without max_deliver) and a forged DELETED (for the throttled
#              consumer) raise and clear nothing, and are counted as
#              contradicted; the user with the deny docs/security.md shows
#              is refused.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin privilege
PORT=$(nl_port NL_PORT_PRIVILEGE 14640)
MON_PW="mon-pw-$RANDOM"
cat >"$NL_TMP/priv.conf" <<EOF
listen: 127.0.0.1:$PORT
jetstream { store_dir: "$NL_TMP/js" }
authorization {
  users: [
    { user: app, password: app-pw }
    # An application user that cannot publish advisories (docs/security.md).
    { user: app_safe, password: safe-pw, permissions: {
        publish: { deny: ["\$JS.EVENT.>"] }
    } }
    # The monitoring user: the minimal set of docs/security.md.
    { user: nats_lens, password: "$MON_PW", permissions: {
        publish: { allow: ["\$JS.API.STREAM.LIST", "\$JS.API.CONSUMER.LIST.*",
                           "\$JS.API.INFO", "nats.lens.health.>"] }
        subscribe: { allow: ["_INBOX_nats_lens.>",
                             "\$JS.EVENT.ADVISORY.CONSUMER.>",
                             "\$JS.EVENT.METRIC.CONSUMER.ACK.>"] }
    } }
    # The minimal set before the storage classes: no \$JS.API.INFO.
    { user: nats_lens_old, password: "$MON_PW", permissions: {
        publish: { allow: ["\$JS.API.STREAM.LIST", "\$JS.API.CONSUMER.LIST.*"] }
        subscribe: { allow: ["_INBOX_nats_lens.>"] }
    } }
  ]
}
EOF
nl_start_server priv "$PORT" -c "$NL_TMP/priv.conf" || exit 1
app() { "$NL_INJECT" --server "nats://app:app-pw@127.0.0.1:$PORT" "$@"; }
mon() {
  "$NL_INJECT" --server "nats://nats_lens:$MON_PW@127.0.0.1:$PORT" \
    --timeout-ms 500 "$@"
}

app stream-create APP --subjects 'app.>' >/dev/null
app consumer-create APP work --ack-wait 60 --max-ack-pending 5 >/dev/null
app stream-create LOG --subjects 'log.>' >/dev/null
app consumer-create LOG reader --ack-wait 30 >/dev/null
app publish app.x --count 20 >/dev/null
app publish log.x --count 5 >/dev/null

# The audit trail of the monitored run (the application makes no API
# request meanwhile: its worker only fetches, which is not an API call).
app record '$JS.EVENT.ADVISORY.API' --count 1000 --duration 12 \
  --out "$NL_TMP/audit.jsonl" 2>/dev/null &
REC_PID=$!
NL_PIDS+=($REC_PID)
sleep 0.5
app consume APP work --duration 11 --no-ack >"$NL_TMP/work.out" 2>&1 &
NL_PIDS+=($!)

nl_start_collectd "<Instance \"least\">
  URL \"nats://127.0.0.1:$PORT\"
  User \"nats_lens\"
  Password \"$MON_PW\"
  InboxPrefix \"_INBOX_nats_lens\"
</Instance>
<Instance \"older\">
  URL \"nats://127.0.0.1:$PORT\"
  User \"nats_lens_old\"
  Password \"$MON_PW\"
  InboxPrefix \"_INBOX_nats_lens\"
  Advisories false
  Timeout 1
</Instance>" 1 || exit 1

if line=$(nl_wait_notification 15 "type_instance = MAX_PENDING_THROTTLE" \
  "APP/work"); then
  nl_pass works/detects "${line#*message = }"
else
  nl_fail works/detects "no MAX_PENDING_THROTTLE as the monitoring user"
fi
n=$(nl_csv_last least count consumers)
if [ "${n%.*}" = 2 ]; then
  nl_pass works/polls "both consumers observed"
else
  nl_fail works/polls "consumers observed: ${n:-none}"
fi
wait "$REC_PID" 2>/dev/null
# The user without $JS.API.INFO: every stream and consumer read, one
# warning naming the request, no poll error.
n=$(nl_csv_last older count consumers)
nl_check older/polls [ "${n%.*}" = 2 ]
warned=$(grep -c 'Instance "older": cannot read the account.s JetStream usage' \
  "$(nl_cd_dir)/collectd.log")
nl_check older/warned-once [ "$warned" = 1 ]
nl_check older/no-poll-error eval '! grep -q "Instance \"older\": \(poll failed\|.*not fully read\)" "$(nl_cd_dir)/collectd.log"'
violations=$(grep 'Violation' "$NL_TMP/priv.log" | grep -v nats_lens_old)
if [ -z "$violations" ]; then
  nl_pass works/no-violation "the plugin needed nothing beyond the set"
else
  nl_fail works/no-violation "$violations"
fi

# Every audited request of the run: list and info only.
audit=$(python3 - "$NL_TMP/audit.jsonl" <<'EOF'
import json, re, sys
ok = re.compile(r"^\$JS\.API\.(INFO|STREAM\.(LIST|NAMES|INFO\.[^.]+)|"
                r"CONSUMER\.(LIST|NAMES)\.[^.]+|CONSUMER\.INFO\.[^.]+\.[^.]+)$")
n, bad = 0, []
try:
    lines = open(sys.argv[1]).read().splitlines()
except OSError:
    lines = []
for line in lines:
    if not line.strip():
        continue
    adv = json.loads(line)
    n += 1
    if not ok.match(adv.get("subject", "")):
        bad.append(adv.get("subject"))
print(n, " ".join(sorted(set(bad))))
EOF
)
count=${audit%% *}
bad=${audit#* }
if [ "${count:-0}" -ge 5 ] && [ -z "$bad" ]; then
  nl_pass read-only/api-audit "$count audited requests, all list/info"
else
  nl_fail read-only/api-audit "$count audited, not list/info: ${bad:-none}"
fi

# violation_logged KIND SUBJECT USER: the server logged a KIND (Publish or
# Subscription) violation of USER on SUBJECT. The user is named in the line
# up to 2.11 and in its prefix from 2.12.
violation_logged() {
  grep -F "$1 Violation - " "$NL_TMP/priv.log" | grep -F "Subject \"$2" |
    grep -E "User \"$3\"|/user:$3\"" >/dev/null
}

# denied NAME KIND SUBJECT COMMAND...: the command, run as the monitoring
# user, is refused by the server with a violation naming the subject (the
# server logs it when it refuses, so the check waits for the line).
denied() {
  local name=$1 kind=$2 subject=$3
  shift 3
  mon "$@" >"$NL_TMP/denied-$name.out" 2>&1
  if nl_retry 5 violation_logged "$kind" "$subject" nats_lens; then
    nl_pass "denied/$name" "$kind Violation on $subject"
  else
    nl_fail "denied/$name" "no $kind Violation for $subject"
  fi
}
denied fetch Publish '$JS.API.CONSUMER.MSG.NEXT.APP.work' \
  consume APP work --duration 1 --max-msgs 1
denied ack Publish '$JS.ACK.APP.work.1.1.1' \
  request '$JS.ACK.APP.work.1.1.1.0.0' ''
denied publish Publish 'app.x' publish app.x --count 1
denied subscribe-app Subscription 'app.>' record 'app.>' --duration 1
denied subscribe-inboxes Subscription '_INBOX.>' record '_INBOX.>' --duration 1
denied create-stream Publish '$JS.API.STREAM.CREATE.EVIL' \
  request '$JS.API.STREAM.CREATE.EVIL' '{"name":"EVIL","subjects":["evil.>"]}'
denied delete-consumer Publish '$JS.API.CONSUMER.DELETE.LOG.reader' \
  consumer-delete LOG reader
# The application's other consumer was not touched by any of it.
info=$(app info LOG reader 2>/dev/null)
if echo "$info" | grep -q '"num_pending":5' &&
  echo "$info" | grep -q '"delivered":{"consumer_seq":0'; then
  nl_pass denied/untouched "LOG/reader still has its 5 messages, none delivered"
else
  nl_fail denied/untouched "$(echo "$info" | head -c 300)"
fi

# --- forged advisories -----------------------------------------------------
# publish_as USER:PW SUBJECT JSON: publishes JSON on SUBJECT (as a request
# nobody answers).
publish_as() {
  "$NL_INJECT" --server "nats://$1@127.0.0.1:$PORT" --timeout-ms 300 \
    request "$2" "$3" >/dev/null 2>&1
}
before=$(nl_notifications | wc -l)
MD='$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.LOG.reader'
DEL='$JS.EVENT.ADVISORY.CONSUMER.DELETED.APP.work'
publish_as app:app-pw "$MD" '{"type":"io.nats.jetstream.advisory.v1.max_deliver","id":"f1","timestamp":"2026-12-02T00:00:00Z","stream":"LOG","consumer":"reader","stream_seq":81,"deliveries":5}'
publish_as app:app-pw "$DEL" '{"type":"io.nats.jetstream.advisory.v1.consumer_action","id":"f2","timestamp":"2026-12-02T00:00:00Z","stream":"APP","consumer":"work","action":"delete"}'
contradicted() { nl_csv_seen_since least derive advisories_contradicted 0 '>= 1'; }
if nl_retry 10 contradicted; then
  nl_pass forged/counted "the MAX_DELIVERIES claim counted as contradicted"
else
  nl_fail forged/counted "no derive-advisories_contradicted >= 1"
fi
# Two more polls after it, then nothing may have changed.
at=$(date +%s)
nl_retry 10 nl_csv_seen_since least count consumers "$((at + 2))" '== 2' ||
  nl_fail forged/polled "no poll after the forged advisories"
changed=$(nl_notifications | tail -n +$((before + 1)))
if [ -z "$changed" ]; then
  nl_pass forged/no-change "no finding raised or cleared (APP/work still throttled)"
else
  nl_fail forged/no-change "$changed"
fi
publish_as app_safe:safe-pw "$MD" '{}'
if nl_retry 5 violation_logged Publish "$MD" app_safe; then
  nl_pass forged/denied "app_safe may not publish on \$JS.EVENT.>"
else
  nl_fail forged/denied "no Publish Violation for app_safe"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
