#!/usr/bin/env bash
# The cluster twin of test_interest_recreated.sh: a consumer created again
# on an interest stream of a 3-node nats-server 2.10 cluster, while messages
# are published, is not a SEQUENCE_GAP.
# nats-server 2.10.8 to 2.10.16 report an empty memory stream whose last
# sequence was skipped for want of interest with first_seq equal to
# last_seq, and a consumer created on it (deliver policy all) starts one
# below: its start sequence was published before it existed and never
# stored. The plugin learns that from a poll that saw the stream empty.
# On a single server the CREATED advisory's read of the stream usually
# sees it still empty; on a cluster the advisory comes after the new
# consumer's leader election, when the messages published meanwhile are
# stored, so the consumer is first seen with a stream that is no longer
# empty and whose first sequence is above the consumer's start (its
# delivered stream sequence + 1). The test checks that this happened (the
# latest poll before the consumer was first seen saw the stream empty,
# first_seq = last_seq, below the consumer's start; the consumer had
# delivered nothing; the stream's first sequence is above its start; the
# plugin read the consumer) and that no SEQUENCE_GAP was raised for it.
# Runs on the nats-server of the run when it is 2.10, else on the 2.10.16
# build of the version matrix (NL_SERVER_BUILDS, tests/nats_server.sh).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_use_minor 10 2.10.16
. "$(dirname "$0")/../lib.sh"
nl_begin interest_recreated_cluster
nl_pass setup/server "$(nats-server --version)"
BASE=$(nl_port NL_PORT_INTEREST_RECREATED_CLUSTER 14980) # 14980..14988
nl_cluster_start "$BASE" || exit 1
inj() { nl_inject "$(nl_cluster_client 1)" --timeout-ms 5000 "$@"; }
if ! nl_retry 30 inj stream-create IR --subjects 'ir.>' --retention interest \
  --replicas 3 >/dev/null 2>&1; then
  nl_fail setup/cluster "no JetStream meta leader after 30 s"
  exit 1
fi
inj consumer-create IR a >/dev/null &&
  inj publish ir.x --count 5 >/dev/null &&
  inj consumer-delete IR a >/dev/null || {
  nl_fail setup/objects "stream or consumer not created"
  exit 1
}
POLLS=$NL_TMP/polls.jsonl
nl_start_collectd "<Instance \"ir\">
$(nl_cluster_url_lines)
  Timeout 5
  PollLog \"$POLLS\"
</Instance>" 2 || exit 1

# poll_log QUESTION [ARGS]: reads the plugin's poll log.
#   empty LAST      prints 1 when a poll saw IR empty with first_seq =
#                   last_seq = LAST, else 0;
#   before NAME     the state of IR ("msgs first last") at the latest poll
#                   before the one that first listed consumer NAME
#                   (nothing when no poll listed it);
#   reads NAME      the number of polls that listed consumer NAME.
poll_log() {
  python3 - "$POLLS" "$@" <<'PY'
import json, sys
path, question = sys.argv[1], sys.argv[2]
arg = sys.argv[3] if len(sys.argv) > 3 else ""
streams, listed = {}, []
with open(path) as fh:
    for line in fh:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        reply = rec.get("reply") or {}
        subject = rec.get("subject") or ""
        if not isinstance(reply, dict):
            continue
        # The account's information ($JS.API.INFO) counts its streams and
        # consumers: only the lists hold them.
        for s in (reply.get("streams") or []) if subject.endswith(".STREAM.LIST") else []:
            if s.get("config", {}).get("name") == "IR":
                st = s.get("state", {})
                streams[rec["t"]] = (st.get("messages"), st.get("first_seq"),
                                     st.get("last_seq"))
        names = [c.get("name") for c in (reply.get("consumers") or [])
                 if isinstance(c, dict)] if ".CONSUMER.LIST." in subject else []
        if rec.get("subject") == "$JS.API.CONSUMER.LIST.IR" and arg in names:
            listed.append(rec["t"])
if question == "empty":
    last = int(arg)
    print(int(any(v == (0, last, last) for v in streams.values())))
elif question == "before" and listed:
    earlier = [t for t in streams if t < min(listed)]
    if earlier:
        print("%s %s %s" % streams[max(earlier)])
elif question == "reads":
    print(len(listed))
PY
}
field() { # SUBJECT PYTHON-EXPR: a field of an API reply
  inj request "$1" '' 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}

# Each attempt: a message dropped (no consumer), a poll that sees the
# stream empty, then a bounded publisher (40 messages at 40/s) during which
# the consumer is created. The scenario needs the consumer created after
# that poll with some messages dropped in between; a poll that comes
# between them (a busy machine) spoils the attempt, which the checks below
# find, and the next one is tried (at most 3).
for attempt in 1 2 3; do
  W=w$attempt
  inj publish ir.x --count 1 >/dev/null
  last=$(field '$JS.API.STREAM.INFO.IR' 'j["state"]["last_seq"]')
  seen_empty() { [ "$(poll_log empty "$last")" = 1 ]; }
  nl_retry 20 seen_empty || {
    nl_fail setup/empty-poll "no poll saw IR empty at $last"
    exit 1
  }
  inj publish ir.x --count 40 --rate 40 >/dev/null &
  pub=$!
  sleep 0.3
  inj consumer-create IR "$W" >/dev/null
  wait "$pub"
  read_thrice() { [ "$(poll_log reads "$W")" -ge 3 ]; }
  nl_retry 30 read_thrice
  start=$(field "\$JS.API.CONSUMER.INFO.IR.$W" 'j["delivered"]["stream_seq"] + 1')
  dseq=$(field "\$JS.API.CONSUMER.INFO.IR.$W" 'j["delivered"]["consumer_seq"]')
  first=$(field '$JS.API.STREAM.INFO.IR' 'j["state"]["first_seq"]')
  read -r bmsgs bfirst blast <<<"$(poll_log before "$W")"
  echo "# attempt $attempt: $W starts at $start (delivered $dseq), first_seq $first;" \
    "the poll before it saw msgs=${bmsgs:-?} first=${bfirst:-?} last=${blast:-?}"
  if [ "${bmsgs:-x}" = 0 ] && [ "${bfirst:-x}" = "${blast:-y}" ] &&
    [ "$blast" -lt "$start" ] && [ "$dseq" = 0 ] &&
    [ "$start" -lt "$first" ]; then
    break
  fi
  inj consumer-delete IR "$W" >/dev/null
  W=
done
if [ -z "$W" ]; then
  nl_fail setup/scenario "in 3 attempts no consumer was first seen after an empty poll below its start"
  exit 1
fi
nl_pass setup/scenario "$W at $((start - 1)), first_seq $first; the poll before saw first_seq = last_seq = $blast"
pending=$(nl_csv_last ir-IR nats_lens_num_pending "$W")
if [ -n "$pending" ] && [ "${pending%.*}" -gt 0 ]; then
  nl_pass observed "$W read with num_pending $pending"
else
  nl_fail observed "the plugin did not read $W's num_pending ($pending)"
fi
if nl_notifications "IR/$W" | grep -q "SEQUENCE_GAP"; then
  nl_fail no-sequence-gap "$(nl_notifications "IR/$W" | grep SEQUENCE_GAP | head -n 1)"
else
  nl_pass no-sequence-gap "no SEQUENCE_GAP for the consumer created again"
fi
nl_end
