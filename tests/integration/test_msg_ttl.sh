#!/usr/bin/env bash
# SEQUENCE_GAP and the removals no limit made (nats-server 2.11 and later:
# per-message TTLs, "allow_msg_ttl" and the Nats-TTL header). A message
# that its own TTL removes before a consumer reads it is the publisher's
# design: a limit-raising fix would change nothing. A purge loses what a
# consumer had not read, but no setting prevents it. On one server, 1 s
# polls, the plugin polling before anything is published:
#   TH/w   allow_msg_ttl, max_age 3600 s: 5 messages with a 2 s TTL, then
#          5 without, never read; the first 5 expire at the head: silent.
#   TI/w   3 without, 3 with a 2 s TTL, 3 without: the middle 3 expire:
#          silent.
#   TD/w   the worker holds 3 messages with a 2 s TTL and 2 without,
#          unacked: the server terminates the 3 ("Unacknowledged message
#          was deleted") as they expire: silent.
#   TS/w   subject_delete_marker_ttl 5 s: 3 messages with a 2 s TTL
#          expire, a delete marker takes their place: silent.
#   TL/w   allow_msg_ttl and max_msgs 10, 30 published without a TTL,
#          never read: max_msgs removed 20 unread, SEQUENCE_GAP with the
#          max_msgs fix, which is applied and read back; the consumer
#          catches up, 20 more are published, and it clears and stays
#          clear.
#   PG/w   max_age 3600 s, 50 published, never read, then purged:
#          SEQUENCE_GAP that names a purge or a delete and prints no
#          fix command (a doubled max_age would change nothing).
# Each silent one is observed: the plugin read its pending counts after
# the expiry, and counts no lost message. Runs on the nats-server of the
# run when it is 2.11 or later, else on the 2.11.10 build of the version
# matrix (NL_SERVER_BUILDS, tests/nats_server.sh).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_at_least 2 11 2.11.10
. "$(dirname "$0")/../lib.sh"
nl_begin msg_ttl
nl_server_check 2 11 2.11.10 || exit 0
PORT=$(nl_port NL_PORT_MSG_TTL 14990)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
field() { # SUBJECT PYTHON-EXPR: a field of an API reply
  nl_inject "$PORT" request "$1" '' 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}
first_seq() { field "\$JS.API.STREAM.INFO.$1" 'j["state"]["first_seq"]'; }
inj stream-create TH --subjects 'th.>' --allow-msg-ttl --max-age 3600 &&
  inj stream-create TI --subjects 'ti.>' --allow-msg-ttl &&
  inj stream-create TD --subjects 'td.>' --allow-msg-ttl &&
  inj stream-create TS --subjects 'ts.>' --subject-delete-marker-ttl 5 \
    --max-age 3600 &&
  inj stream-create TL --subjects 'tl.>' --allow-msg-ttl --max-msgs 10 &&
  inj stream-create PG --subjects 'pg.>' --max-age 3600 || {
  nl_fail setup/objects "streams not created"
  exit 1
}
for s in TH TI TD TS TL PG; do
  inj consumer-create "$s" w --ack-wait 120 || nl_fail setup/consumers "$s/w"
done
nl_start_collectd "<Instance \"tt\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
polls() { nl_csv_rows tt duration poll 1; }
polled() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 20 polled 2

inj publish th.t --count 5 --ttl 2s
inj publish th.n --count 5
inj publish ti.n --count 3
inj publish ti.t --count 3 --ttl 2s
inj publish ti.n --count 3
inj publish td.t --count 3 --ttl 2s
inj publish td.n --count 2
inj consume TD w --duration 1 --no-ack --max-msgs 5
inj publish ts.t --count 3 --ttl 2s
inj publish ts.n --count 2
inj publish tl.n --count 30
inj publish pg.n --count 50
now=$(polls)
nl_retry 20 polled $((now + 2))
inj request '$JS.API.STREAM.PURGE.PG' ''

# The expiries happened: the head moved past the TTL'd messages (TS: past
# them, a marker in their place), and TI holds 3 fewer.
expired() {
  [ "$(first_seq TH)" = 6 ] && [ "$(first_seq TD)" = 4 ] &&
    [ "$(first_seq TS)" -ge 4 ] &&
    [ "$(field '$JS.API.STREAM.INFO.TI' 'j["state"]["messages"]')" = 6 ]
}
if nl_retry 30 expired; then
  nl_pass setup/expired "TS: $(field '$JS.API.STREAM.INFO.TS' 'j["state"]')"
else
  nl_fail setup/expired "TH $(first_seq TH), TD $(first_seq TD), TS $(first_seq TS)"
fi
now=$(polls)
nl_retry 20 polled $((now + 3))

silent() { # STREAM PENDING ACK_PENDING (of STREAM/w)
  local lc
  lc=$(echo "$1" | tr 'A-Z' 'a-z')
  nl_check_silent "$lc/silent" "$1/w" SEQUENCE_GAP
  nl_check "$lc/observed" nl_consumer_seen "tt-$1" w "$2" "$3"
}
silent TH 5 0
silent TI 6 0
silent TD 0 2
# TS/w: what is pending is the 2 messages without a TTL and the marker of
# ts.t until its own TTL (5 s) removes it too.
silent TS "2|3" 0

# TL/w: a limit loss on the same server, with the limit's fix. The
# consumer catches up once, and 20 more are published (30 stored, under
# the new limit): the finding clears (at once, or after its hold when a
# poll saw the consumer still behind under the new limit) and stays clear.
nl_gap_limit_round tl "$PORT" TL/w tt tl.n

# PG/w: the purge is a loss, with no limit's fix.
nl_gap_no_fix pg PG/w tt 50
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
