#!/usr/bin/env bash
# A consumer created again on an interest stream is not a SEQUENCE_GAP.
# Messages published while an interest stream has no consumer are dropped;
# nats-server 2.10 then reports the empty stream with first_seq equal to
# last_seq (2.9.10 and 2.11 report last_seq + 1), and a consumer created
# on it starts one below first_seq. Once publishing resumes the stream's
# first sequence passes the consumer's start by one sequence that was
# never stored. The test checks that this happened (the consumer's
# delivered stream sequence + 1 is below the stream's first sequence, and
# the plugin read the consumer) and that no SEQUENCE_GAP was raised for it.
# Then the stream is deleted and created again under the same name: what
# the plugin learnt of the old stream's never-stored sequences is
# forgotten, and messages the new one removed unread are lost.
# Runs on the nats-server of the run when it is 2.10, else on the 2.10.16
# build of the version matrix (NL_SERVER_BUILDS, tests/nats_server.sh).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_use_minor 10 2.10.16
. "$(dirname "$0")/../lib.sh"
nl_begin interest_recreated
nl_pass setup/server "$(nats-server --version)"
PORT=$(nl_port NL_PORT_INTEREST_RECREATED 14970)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }
field() { # SUBJECT PYTHON-EXPR: a field of an API reply
  inj request "$1" '' 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}
inj stream-create IR --subjects 'ir.>' --retention interest >/dev/null &&
  inj consumer-create IR a >/dev/null &&
  inj publish ir.x --count 5 >/dev/null &&
  inj request '$JS.API.CONSUMER.DELETE.IR.a' '' >/dev/null &&
  inj publish ir.x --count 5 >/dev/null || {
  nl_fail setup/objects "stream or consumer not created"
  exit 1
}
nl_check setup/empty [ "$(field '$JS.API.STREAM.INFO.IR' 'j["state"]["messages"]')" = 0 ]
echo "# empty stream: $(field '$JS.API.STREAM.INFO.IR' 'j["state"]')"
nl_start_collectd "<Instance \"ir\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
# Two polls of the empty stream, then the consumer is created again and
# publishing resumes.
polls() { nl_csv_rows ir duration poll 1; }
two_polls() { [ "$(polls)" -ge 2 ]; }
nl_check setup/polled nl_retry 20 two_polls
inj consumer-create IR w >/dev/null
inj publish ir.x --count 5 >/dev/null
first=$(field '$JS.API.STREAM.INFO.IR' 'j["state"]["first_seq"]')
start=$(field '$JS.API.CONSUMER.INFO.IR.w' 'j["delivered"]["stream_seq"]')
echo "# consumer w starts at $start, the stream's first sequence is $first"
if [ "$((start + 1))" -lt "$first" ]; then
  nl_pass setup/start-below-first "w at $start, first_seq $first"
else
  nl_fail setup/start-below-first "w at $start, first_seq $first: the server did not start it below (not 2.10?)"
fi
# Three polls that read w.
now=$(polls)
three_more() { [ "$(polls)" -ge $((now + 3)) ]; }
nl_retry 20 three_more
nl_check observed [ "$(nl_csv_last ir-IR nats_lens_num_pending w)" = "5.000000" ]
if nl_notifications "IR/w" | grep -q "SEQUENCE_GAP"; then
  nl_fail no-sequence-gap "$(nl_notifications "IR/w" | grep SEQUENCE_GAP | head -n 1)"
else
  nl_pass no-sequence-gap "no SEQUENCE_GAP for the consumer created again"
fi
# The stream deleted and created again under the same name with max_msgs 2:
# its sequences start again at 1, below those the plugin saw the old stream
# never store, and the 3 messages of 5 the new consumer never read are
# lost to it.
inj stream-delete IR >/dev/null &&
  inj stream-create IR --subjects 'ir.>' --max-msgs 2 >/dev/null &&
  inj consumer-create IR n >/dev/null &&
  inj publish ir.x --count 5 >/dev/null || {
  nl_fail setup/recreated "stream IR not created again"
  exit 1
}
first=$(field '$JS.API.STREAM.INFO.IR' 'j["state"]["first_seq"]')
start=$(field '$JS.API.CONSUMER.INFO.IR.n' 'j["delivered"]["stream_seq"]')
nl_check setup/recreated-loss [ "first_seq $first, n at $start" = "first_seq 4, n at 0" ]
if line=$(nl_wait_notification 20 "IR/n" "SEQUENCE_GAP" "lost_total=3," "first_lost_seq=1," \
  "last_lost_seq=3,"); then
  nl_pass recreated-stream-loss "${line#*message = }"
else
  nl_fail recreated-stream-loss "no SEQUENCE_GAP for 1-3 on the stream created again"
fi
nl_end
