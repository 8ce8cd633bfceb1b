#!/usr/bin/env bash
# PUBLISH_REJECTED on a real nats-server polled by real collectd loading the
# built plugin, the streams filled by real publishes (tests/tools/nl-inject):
#   PR   discard new at max_msgs 5
#   PRB  discard new at max_bytes 1000 (8 messages of 121 stored bytes)
#   PRS  discard new per subject, every subject at max_msgs_per_subject 2
#   PRD  discard new at max_msgs 5, fixed by discard old
# Each really refuses a publish (the publisher's error 10077 is checked),
# raises the finding with its evidence; its printed fix command (for PRD
# the recommendation's `--discard old`) is applied with nl_apply_fix, the
# configuration read back, a publish then succeeds, and the finding clears
# and stays clear. Look-alikes that must stay silent, each observed (its
# last sequence polled): ROOM (discard new with room), OLD (discard old at
# its limit), DECL (declared full with the StreamDeclaration option), META
# (declared with stream metadata, nats-server 2.10+), WQ (a work queue
# filled to its limit and drained below it), ONCE (write-once: discard
# new per subject at 1 message per subject, a second publish refused by
# design). An unknown StreamDeclaration key is logged and ignored.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin publish_rejected
PORT=$(nl_port NL_PORT_PUBLISH_REJECTED 15130)
HTTP=$((PORT + 1))
INTERVAL=1
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
read -r _ MINOR <<<"$(nl_server_version)"

setup() {
  inj stream-create PR --subjects 'pr.>' --discard new --max-msgs 5 &&
    inj publish pr.x --count 5 &&
    inj stream-create PRB --subjects 'prb.>' --discard new --max-bytes 1000 &&
    inj publish prb.x --count 8 --size 100 &&
    inj stream-create PRS --subjects 'prs.*' --discard new \
      --max-msgs-per-subject 2 --discard-per-subject &&
    inj publish prs.a --count 2 && inj publish prs.b --count 2 &&
    inj stream-create PRD --subjects 'prd.>' --discard new --max-msgs 5 &&
    inj publish prd.x --count 5 &&
    inj stream-create ROOM --subjects 'room.>' --discard new --max-msgs 100 \
      --max-bytes 100000 &&
    inj publish room.x --count 10 &&
    inj stream-create OLD --subjects 'old.>' --max-msgs 5 &&
    inj publish old.x --count 8 &&
    inj stream-create DECL --subjects 'decl.>' --discard new --max-msgs 3 &&
    inj publish decl.x --count 3 &&
    inj stream-create WQ --subjects 'wq.>' --retention workqueue \
      --discard new --max-msgs 10 &&
    inj consumer-create WQ w --ack-wait 30 &&
    inj publish wq.x --count 10 &&
    inj consume WQ w --duration 5 --max-msgs 10 &&
    inj publish wq.x --count 4 &&
    inj stream-create ONCE --subjects 'once.*' --discard new \
      --max-msgs-per-subject 1 --discard-per-subject &&
    inj publish once.a --count 1 && inj publish once.b --count 1 || return 1
  if [ "${MINOR:-9}" -ge 10 ]; then
    inj stream-create META --subjects 'meta.>' --discard new --max-msgs 3 \
      --metadata nats_lens.full_ok=true && inj publish meta.x --count 3
  fi
}
setup || {
  nl_fail setup "could not create and fill the streams"
  exit 1
}

# refused NAME SUBJECT [ARGS...]: one publish must fail with the server's
# error 10077 (what the publisher sees, and nothing else does).
refused() {
  local name=$1 subj=$2 out
  shift 2
  if out=$(nl_inject "$PORT" publish "$subj" --count 1 "$@" 2>&1); then
    nl_fail "$name" "the publish was taken: $out"
  elif grep -q 'err_code 10077' <<<"$out"; then
    nl_pass "$name" "${out#nl-inject: }"
  else
    nl_fail "$name" "not the refusal: $out"
  fi
}
refused refused/PR pr.x
refused refused/PRB prb.x --size 100
refused refused/PRS prs.a
refused refused/PRD prd.x
refused refused/ONCE once.a # By design.
# The streams stay full for 2 s before the plugin's first poll.
sleep 2

nl_start_collectd "<Instance \"pr\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$HTTP\"
  StreamDeclaration \"DEC?\" \"full_ok\" \"true\"
  StreamDeclaration \"ROOM\" \"nats_lens.no_such_key\" \"1\"
</Instance>" "$INTERVAL" || exit 1

if grep -q 'StreamDeclaration "ROOM": unknown key "no_such_key" ignored' \
  "$NL_TMP/collectd.log"; then
  nl_pass declaration/unknown-key-warned
else
  nl_fail declaration/unknown-key-warned "no warning in collectd.log"
fi

expect() {
  local stream=$1 line
  shift
  if line=$(nl_wait_notification 20 "severity = WARNING" \
    "type_instance = PUBLISH_REJECTED" "PUBLISH_REJECTED stream $stream:" \
    "$@"); then
    nl_pass "detected/$stream" "${line#*message = }"
  else
    nl_fail "detected/$stream" "no PUBLISH_REJECTED with $*"
  fi
}
expect PR "max_msgs=5" "fix: nats stream edit PR --max-msgs 10"
expect PRB "bytes_free=" "fix: nats stream edit PRB --max-bytes 2000"
expect PRS "max_msgs_per_subject=2" \
  "fix: nats stream edit PRS --max-msgs-per-subject 4"
expect PRD "max_msgs=5"

# violation STREAM: the stream's PUBLISH_REJECTED finding of the REST API.
violation() {
  curl -s "http://127.0.0.1:$HTTP/api/violations" | python3 -c '
import json, sys
for v in json.load(sys.stdin)["violations"]:
    if v["type"] == "PUBLISH_REJECTED" and v["stream_name"] == sys.argv[1]:
        print(json.dumps(v["violation"]))' "$1"
}
# How long it has been full: since the stream's last store, at least 2 s
# before the first poll.
if v=$(violation PR) && python3 -c '
import json, sys
v = json.loads(sys.argv[1])
assert v["full_s"] >= 2, v
assert "--discard old" in v["recommendation"], v' "$v" 2>/dev/null; then
  nl_pass evidence/full-since "$v"
else
  nl_fail evidence/full-since "${v:-no finding in /api/violations}"
fi

# The look-alikes: each polled (its last sequence seen), none raised.
sleep $((3 * INTERVAL))
LOOKALIKES="ROOM OLD DECL WQ ONCE"
[ "${MINOR:-9}" -ge 10 ] && LOOKALIKES="$LOOKALIKES META"
for s in $LOOKALIKES; do
  last=$(nl_csv_last "pr-$s" nats_lens_seq last)
  got=$(nl_notifications "PUBLISH_REJECTED stream $s:")
  if [ -z "$last" ]; then
    nl_fail "look-alike/$s" "never polled"
  elif [ -n "$got" ]; then
    nl_fail "look-alike/$s" "$got"
  else
    nl_pass "look-alike/$s" "polled, last_seq ${last%.*}, silent"
  fi
done
# The work queue really was at its limit: 10 taken, drained, 4 more.
wq_first=$(nl_csv_last pr-WQ nats_lens_seq first)
wq_last=$(nl_csv_last pr-WQ nats_lens_seq last)
nl_check look-alike/WQ-drained [ "${wq_first%.*}/${wq_last%.*}" = 11/14 ]

# fix STREAM COMMAND SUBJECT [ARGS...]: applies COMMAND, reads it back, a
# publish is taken, and the finding clears.
fix() {
  local stream=$1 cmd=$2 subj=$3 got
  shift 3
  if got=$(nl_apply_fix "$PORT" "$cmd"); then
    nl_pass "fix-applied/$stream" "$cmd: read back $got"
  else
    nl_fail "fix-applied/$stream" "$cmd: read back ${got:-nothing}"
  fi
  if got=$(nl_inject "$PORT" publish "$subj" --count 1 "$@" 2>&1); then
    nl_pass "publish-after-fix/$stream" "$got"
  else
    nl_fail "publish-after-fix/$stream" "$got"
  fi
  if nl_wait_notification 15 "severity = OKAY" \
    "type_instance = PUBLISH_REJECTED" \
    "PUBLISH_REJECTED stream $stream cleared" >/dev/null; then
    nl_pass "cleared/$stream"
  else
    nl_fail "cleared/$stream" "no OKAY after the fix"
  fi
}
printed() {
  nl_notifications "PUBLISH_REJECTED stream $1:" |
    grep -o "fix: nats stream edit $1 [-a-z]* [0-9]*" | head -n 1 |
    sed 's/^fix: //'
}
fix PR "$(printed PR)" pr.x
fix PRB "$(printed PRB)" prb.x --size 100
fix PRS "$(printed PRS)" prs.a
# PRD: the recommendation's other way, discard old.
alt=$(violation PRD | python3 -c '
import json, re, sys
m = re.search(r"nats stream edit PRD --discard old",
              json.load(sys.stdin)["recommendation"])
print(m.group(0) if m else "")')
fix PRD "${alt:-none printed}" prd.x

# Clear and stay clear: two more polls, one onset each.
sleep $((3 * INTERVAL))
for s in PR PRB PRS PRD; do
  n=$(nl_notifications "PUBLISH_REJECTED stream $s:" | grep -c WARNING)
  nl_check "stays-clear/$s" [ "$n" = 1 ]
done
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
