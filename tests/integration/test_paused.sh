#!/usr/bin/env bash
# A paused consumer (nats-server 2.11 and later: the pause API sets its
# pause_until, and its info says "paused") is not stalled: the server
# delivers nothing to it by the operator's choice. Two consumers of one
# stream are held at their max_ack_pending with messages waiting; one is
# paused. The twin raises MAX_PENDING_THROTTLE (the scenario happened); the
# paused one raises nothing while its pause lasts (it was observed: its
# ack-pending count is read) and reports nats_lens_paused 1; resumed, it is
# throttled like its twin. Runs on the nats-server of the run when it is
# 2.11 or later, else on the 2.11.10 build of the version matrix
# (NL_SERVER_BUILDS, tests/nats_server.sh).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_at_least 2 11 2.11.10
. "$(dirname "$0")/../lib.sh"
nl_begin paused
nl_server_check 2 11 2.11.10 || exit 0
PORT=$(nl_port NL_PORT_PAUSED 14960)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }
inj stream-create P --subjects 'p.>' >/dev/null &&
  inj consumer-create P held --ack-wait 120 --max-ack-pending 5 >/dev/null &&
  inj consumer-create P twin --ack-wait 120 --max-ack-pending 5 >/dev/null &&
  inj publish p.a --count 50 >/dev/null || {
  nl_fail setup/objects "stream or consumers not created"
  exit 1
}
until=$(date -u -d '+10 min' +%Y-%m-%dT%H:%M:%SZ)
inj request '$JS.API.CONSUMER.PAUSE.P.held' "{\"pause_until\":\"$until\"}" \
  >"$NL_TMP/pause.out" 2>&1
paused() { # CONSUMER: the server's "paused" for it
  inj info P "$1" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin).get("paused", False))'
}
nl_check setup/paused [ "$(paused held)" = True ]
# Paused, a consumer delivers nothing: the pause is lifted while workers
# that never ack bring both consumers to their cap, then set again.
inj request '$JS.API.CONSUMER.PAUSE.P.held' '{}' >/dev/null 2>&1
for c in held twin; do
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume P "$c" \
    --duration 90 --no-ack >"$NL_TMP/$c.out" 2>&1 &
  NL_PIDS+=($!)
done
at_cap() {
  inj info P "$1" 2>/dev/null |
    python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["num_ack_pending"] != 5)'
}
nl_check setup/held-at-cap nl_retry 20 at_cap held
inj request '$JS.API.CONSUMER.PAUSE.P.held' "{\"pause_until\":\"$until\"}" \
  >"$NL_TMP/pause2.out" 2>&1
nl_check setup/paused-at-cap [ "$(paused held)" = True ]

nl_start_collectd "<Instance \"pz\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
if nl_wait_notification 30 "plugin_instance = pz-P," \
  "type_instance = MAX_PENDING_THROTTLE," "P/twin" >/dev/null; then
  nl_pass twin-throttled "MAX_PENDING_THROTTLE for P/twin"
else
  nl_fail twin-throttled "no MAX_PENDING_THROTTLE for P/twin"
fi
# Three more polls, then the paused consumer: observed, silent, reported.
polls_now=$(nl_csv_rows pz duration poll 1)
three_more() { [ "$(nl_csv_rows pz duration poll 1)" -ge $((polls_now + 3)) ]; }
nl_retry 20 three_more
nl_check paused/observed [ "$(nl_csv_last pz-P nats_lens_num_ack_pending held)" = "5.000000" ]
nl_check paused/value [ "$(nl_csv_last pz-P nats_lens_paused held)" = "1.000000" ]
nl_check paused/twin-value [ "$(nl_csv_last pz-P nats_lens_paused twin)" = "0.000000" ]
if nl_notifications "P/held" | grep -q .; then
  nl_fail paused/silent "$(nl_notifications "P/held" | head -n 1)"
else
  nl_pass paused/silent "no notification for the paused P/held"
fi
# Resumed: the same consumer at its cap is throttled.
inj request '$JS.API.CONSUMER.PAUSE.P.held' '{}' >/dev/null 2>&1
nl_check resumed/not-paused [ "$(paused held)" = False ]
if nl_wait_notification 30 "plugin_instance = pz-P," \
  "type_instance = MAX_PENDING_THROTTLE," "P/held" >/dev/null; then
  nl_pass resumed/throttled "MAX_PENDING_THROTTLE for P/held once resumed"
else
  nl_fail resumed/throttled "no MAX_PENDING_THROTTLE for P/held after the pause ended"
fi
nl_end
