#!/usr/bin/env bash
# The classes beyond the five, and advisory-driven detection, on one real
# nats-server seen by real collectd loading the built plugin, injected by
# real cnats clients (tests/tools/nl-inject). Each class runs on a stream of
# its own next to a healthy look-alike that must raise nothing.
#
# For each class: a notification of the right class and severity for the
# right stream/consumer, with the evidence numbers; after the fix, an OKAY
# notification. For the advisory-backed findings (MAX_DELIVER_EXHAUSTED,
# NAK_STORM from NAK advisories) the test checks which path raised the
# finding, by the poll times (the advisory's "timestamp" and the health
# event's "detected_at" against the times of the plugin's polls): NAK_STORM
# between polls, from the advisories; MAX_DELIVER_EXHAUSTED of a message
# published since the latest poll, and the clear after a DELETED advisory,
# with the first poll after the advisory (an advisory is a claim). The
# milliseconds are printed; how fast is the evaluation's business.
#
# A consumer created while the plugin runs is read from its CREATED
# advisory at once: ACK_NONE_CONSUMER for three consumers created 1 s
# apart is raised between polls for each (from the polls alone each would
# come at a poll).
# A slow consumer with sample_freq 100% (AS/slow) raises
# ACK_WAIT_VIOLATION with the ack samples' evidence (count, P99) and a
# recommendation that says how the value was derived. The cluster-only
# classes (STREAM_SINGLE_REPLICA, CONSUMER_UNOBSERVABLE) must not fire
# here: this server is not clustered and every list is complete.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin new_classes
PORT=$(nl_port NL_PORT_NEW_CLASSES 14911)
INTERVAL=3
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
bg() {
  local name=$1
  shift
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" "$@" >"$NL_TMP/$name.out" \
    2>&1 &
  NL_PIDS+=($!)
  eval "PID_$name=$!"
}
# record NAME SUBJECT COUNT: keeps the next COUNT messages on SUBJECT in
# $NL_TMP/NAME.rec (one JSON document a line), for at most 60 s.
record() {
  bg "rec_$1" record "$2" --count "$3" --duration 60 --out "$NL_TMP/$1.rec"
}

DLQ_SUBJECT='$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES'
setup() {
  inj stream-create MD --subjects 'md.>' &&
    inj consumer-create MD poison --max-deliver 3 --ack-wait 30 &&
    inj stream-create MDL --subjects 'mdl.>' &&
    inj consumer-create MDL kept --max-deliver 3 --ack-wait 30 &&
    inj stream-create MDL_DLQ --subjects "$DLQ_SUBJECT.MDL.kept" &&
    inj stream-create NK --subjects 'nk.>' &&
    inj consumer-create NK loop --ack-wait 30 &&
    inj stream-create AN --subjects 'an.>' &&
    inj consumer-create AN fast --ack none &&
    inj consumer-create AN safe --ack explicit &&
    inj stream-create AA --subjects 'aa.>' &&
    inj consumer-create AA par --ack all &&
    inj consumer-create AA one --ack all --max-ack-pending 1 &&
    inj stream-create PU --subjects 'pu.>' &&
    inj consumer-create PU gone --deliver-subject dlv.pu.gone &&
    inj consumer-create PU bound --deliver-subject dlv.pu.bound &&
    inj stream-create PUA --subjects 'pua.>' --max-age 600 &&
    inj consumer-create PUA gone --deliver-subject dlv.pua.gone &&
    inj stream-create RR --subjects 'rr.>' --max-msgs 3000 &&
    inj consumer-create RR lag --ack-wait 30 &&
    inj consumer-create RR keep --ack-wait 30 &&
    inj stream-create RWQ --subjects 'rwq.>' --retention workqueue \
      --max-msgs 500 &&
    inj consumer-create RWQ workers --ack-wait 30 &&
    inj stream-create RMA --subjects 'rma.>' --max-age 3 &&
    inj stream-create ND --subjects 'nd.>' &&
    inj consumer-create ND retry --ack-wait 30 &&
    inj consumer-create RMA live --ack-wait 30 &&
    inj stream-create IN --subjects 'in.>' --retention interest &&
    inj stream-create INF --subjects 'inf.>' --retention interest &&
    inj consumer-create INF other --filter inf.other &&
    inj stream-create INK --subjects 'ink.>' --retention interest &&
    inj consumer-create INK worker --ack-wait 30 &&
    inj stream-create AS --subjects 'as.>' &&
    inj request '$JS.API.CONSUMER.DURABLE.CREATE.AS.slow' \
      '{"stream_name":"AS","config":{"durable_name":"slow","ack_policy":"explicit","ack_wait":2000000000,"max_deliver":-1,"sample_freq":"100%"}}'
}
setup || {
  nl_fail setup "could not create the streams and consumers"
  exit 1
}

nl_start_collectd "<Instance \"it\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 2
  PushUnboundSeconds 4
</Instance>" "$INTERVAL" || exit 1
sleep 1

# Recorders for the latency of the advisory-backed findings.
record md_adv "$DLQ_SUBJECT.MD.poison" 1
record md_ev "nats.lens.health.violations.MD.poison" 1
record nk_adv '$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.NK.loop' 5
record nk_ev "nats.lens.health.violations.NK.loop" 1
record as_ev "nats.lens.health.violations.AS.slow" 1
sleep 0.5

# Faults, and their healthy look-alikes.
inj publish md.a --count 1 && inj publish mdl.a --count 1
bg md consume MD poison --duration 5 --nak --process-ms 50
bg mdl consume MDL kept --duration 5 --nak --process-ms 50
inj publish nk.a --count 5
bg nk consume NK loop --duration 30 --nak-seq-mod 5 --process-ms 50
inj publish pu.a --count 10 && inj publish pua.a --count 10
bg pu_bound consume PU bound --mode push --deliver-subject dlv.pu.bound \
  --duration 40
bg aa_par consume AA par --workers 3 --duration 40 --expires-ms 2000
bg aa_one consume AA one --workers 3 --duration 40 --expires-ms 2000
# RR/lag falls behind by 30 msg/s for 90 s: the rise is sustained long
# enough to forecast the 3000-message limit before it is reached. Its
# look-alikes: RR/keep reads everything, four workers of a 500-message
# work queue ack out of order with a backlog of a few messages, and a
# consumer keeps up with a stream whose max_age is 3 s.
bg rr_pub publish rr.a --count 2700 --rate 30
bg rr_keep consume RR keep --workers 2 --duration 95
bg rwq_pub publish rwq.a --count 1200 --rate 20
bg rwq consume RWQ workers --workers 4 --process-ms 150 --duration 70
bg rma_pub publish rma.a --count 600 --rate 10
bg rma consume RMA live --process-ms 20 --duration 70
# A look-alike of ACK_WAIT_VIOLATION: each message is NAKed once with a 1 s
# delay (a transient error) and acked when it comes back; ack_wait is 30 s.
bg nd_pub publish nd.a --count 400 --rate 10
bg nd consume ND retry --nak-first-delay-ms 1000 --workers 2 --duration 45
bg inf_pub publish inf.a --count 75 --rate 5
bg ink_pub publish ink.a --count 75 --rate 5
bg ink consume INK worker --duration 40
inj publish as.a --count 40
# Batches of 4 at 1.5 s each next to 4 s tasks, with ack_wait 2 s.
bg as_batch consume AS slow --duration 40 --batch 4 --process-ms 1500
bg as_long consume AS slow --duration 40 --process-ms 4000

# expect CLASS SEVERITY WHERE EVIDENCE...: waits (45 s) for a notification
# of CLASS with SEVERITY whose message holds WHERE ("S/c" or "stream S")
# and every EVIDENCE text.
expect() {
  local cls=$1 sev=$2 where=$3 line lc
  shift 3
  lc=$(echo "$cls" | tr 'A-Z' 'a-z')
  if line=$(nl_wait_notification 45 "severity = $sev" "type_instance = $cls" \
    "$cls $where" "$@"); then
    nl_pass "$lc/detected${where:+ $where}"
    echo "# ${line#*message = }"
  else
    nl_fail "$lc/detected $where" "no $sev $cls notification with $*"
  fi
}
# expect_okay CLASS WHERE: waits (45 s) for the OKAY of CLASS at WHERE.
expect_okay() {
  local lc
  lc=$(echo "$1" | tr 'A-Z' 'a-z')
  if nl_wait_notification 45 "severity = OKAY" "type_instance = $1" \
    "$1 $2 cleared" >/dev/null; then
    nl_pass "$lc/cleared $2"
  else
    nl_fail "$lc/cleared $2" "no OKAY after the fix"
  fi
}
# latency NAME HOW ADV_FILE ADV_LINE EVENT_FILE: the health event's finding
# came no later than the first poll after the advisory on line ADV_LINE,
# told by the poll times (every poll writes count-consumers with its time,
# which is also the detected_at of a finding a poll raises), not by a
# wall-clock bound that a busy machine can miss. HOW:
#   first      raised between polls by the advisory path, or by the first
#              poll after the advisory (which feeds the advisories queued
#              before it applies);
#   next-poll  raised by that poll (a claim that waits for a poll to
#              confirm it), or by the poll in progress.
# The line says which, and the milliseconds from the advisory.
latency() {
  local out
  out=$(python3 - "$2" "$NL_TMP/$3" "$4" "$NL_TMP/$5" \
    "$(nl_csv_file it count consumers)" "$INTERVAL" <<'EOF'
import json, sys
from datetime import datetime
def t(s):
    s = s.rstrip("Z")
    base, _, frac = s.partition(".")
    return datetime.fromisoformat(base).timestamp() + float("0." + (frac or "0"))
how, interval = sys.argv[1], float(sys.argv[6])
try:
    adv = open(sys.argv[2]).read().splitlines()[int(sys.argv[3]) - 1]
    ta = t(json.loads(adv)["timestamp"])
    td = t(json.loads(open(sys.argv[4]).readline())["detected_at"])
    polls = [float(l.split(",")[0]) for l in open(sys.argv[5]).readlines()[1:]]
except (OSError, IndexError, ValueError, KeyError) as e:
    print("fail no advisory, event or poll times (%s)" % e)
    sys.exit()
at_poll = any(abs(p - td) < 0.002 for p in polls)
between = [p for p in polls if ta < p < td - 0.002]
ms = round((td - ta) * 1000)
ok = not between and td > ta - (interval if at_poll else 0.05)
why = "raised by the first poll after the advisory" if at_poll else \
    "raised between polls"
if between:
    why = "%d polls between the advisory and the finding" % len(between)
elif how == "next-poll" and not at_poll:
    ok, why = False, "raised between polls, not by a poll"
print("%s %s, %d ms after the advisory (poll interval %d ms)" % (
    "pass" if ok else "fail", why, ms, interval * 1000))
EOF
  )
  LATENCY_WHY=${out#* }
  if [ "${out%% *}" = pass ]; then
    nl_pass "latency/$1" "${out#* }"
  else
    nl_fail "latency/$1" "${out#* }"
  fi
}

expect MAX_DELIVER_EXHAUSTED FAILURE MD/poison "exhausted_seq_1=1" \
  "max_deliver=3"
expect NAK_STORM WARNING NK/loop "cycling_seq_1=5" "from_advisories=1"
expect ACK_NONE_CONSUMER WARNING AN/fast "durable=1"
expect ACK_ALL_PARALLEL WARNING AA/par "deliver_group=0"
expect PUSH_UNBOUND WARNING PU/gone "num_pending=10"
expect PUSH_UNBOUND FAILURE PUA/gone "eviction_forecast_s="
expect RETENTION_RISK WARNING RR/lag "forecast_s=" "horizon_s=3600"
expect INTEREST_NO_CONSUMERS FAILURE "stream IN:" "consumer_count=0"
expect INTEREST_NO_CONSUMERS FAILURE "stream INF:" "consumer_count=1" \
  "dropped_last_interval="
expect ACK_WAIT_VIOLATION FAILURE AS/slow "ack_wait_s=2"

# Consumers created while the plugin runs, 1 s apart; their recorders start
# now, since the checks above can take longer than a recorder waits.
for k in 1 2 3; do
  record "late${k}_adv" "\$JS.EVENT.ADVISORY.CONSUMER.CREATED.AN.late$k" 1
  record "late${k}_ev" "nats.lens.health.violations.AN.late$k" 1
done
sleep 0.5
for k in 1 2 3; do
  inj consumer-create AN "late$k" --ack none
  sleep 1
done

wait "$PID_rec_md_ev" "$PID_rec_md_adv" "$PID_rec_nk_ev" "$PID_rec_nk_adv" \
  2>/dev/null
# MD/poison's message is published, NAKed to exhaustion and announced
# within one interval: the claim waits for the next poll to show the
# message delivered (an advisory is a claim), so the bound is an interval.
latency max_deliver_exhausted next-poll md_adv.rec 1 md_ev.rec
# From the polls alone, the loop (hundreds of NAKs a second) would show
# first at the second poll after its fifth NAK.
latency nak_storm first nk_adv.rec 5 nk_ev.rec
wait "$PID_rec_late1_ev" "$PID_rec_late2_ev" "$PID_rec_late3_ev" \
  "$PID_rec_late1_adv" "$PID_rec_late2_adv" "$PID_rec_late3_adv" 2>/dev/null
# From the polls alone, each would come at a poll, and at most one of the
# three (created 1 s apart) at the first poll after its creation.
between=0
for k in 1 2 3; do
  latency "created_ack_none/late$k" first "late${k}_adv.rec" 1 \
    "late${k}_ev.rec"
  [[ $LATENCY_WHY == "raised between polls"* ]] && between=$((between + 1))
done
if [ "$between" -ge 2 ]; then
  nl_pass created_ack_none/from-advisories "$between of 3 raised between polls"
else
  nl_fail created_ack_none/from-advisories "$between of 3 raised between polls"
fi
# The ack samples in AS/slow's finding (its health event).
wait "$PID_rec_as_ev" 2>/dev/null
if samples=$(python3 - "$NL_TMP/as_ev.rec" <<'EOF'
import json, sys
v = json.loads(open(sys.argv[1]).readline())["violation"]
assert v["ack_samples"] >= 1, v
assert v["processing_p99_s"] > 0, v
assert "ack samples" in v["recommendation"], v["recommendation"]
print("ack_samples=%d over_wait=%d p99=%.2f s, recommended %d s: %s" % (
    v["ack_samples"], v["ack_samples_over_wait"], v["processing_p99_s"],
    v["recommended_ack_wait_s"], v["recommendation"]))
EOF
); then
  nl_pass ack_samples/evidence "$samples"
else
  nl_fail ack_samples/evidence "$(head -c 600 "$NL_TMP/as_ev.rec")"
fi

# Fixes.
record an_adv '$JS.EVENT.ADVISORY.CONSUMER.DELETED.AN.fast' 1
record an_ev "nats.lens.health.violations.AN.fast" 1
sleep 0.5
inj stream-create MD_DLQ --subjects "$DLQ_SUBJECT.MD.poison"
kill "$PID_nk" 2>/dev/null
bg nk_fix consume NK loop --duration 10 --term-seq-mod 5
inj consumer-delete AN fast
inj consumer-create AA par --ack all --max-ack-pending 1
bg pu_fix consume PU gone --mode push --deliver-subject dlv.pu.gone --duration 8
# RETENTION_RISK's own fix command, applied as printed: the server keeps
# the limit it names (read back from STREAM.INFO), and the finding clears
# with nothing else changed (RR/lag still reads nothing).
rr_fix=$(nl_notifications "RR/lag" |
  grep -o 'fix: nats stream edit RR --max-msgs [0-9]*' | head -n 1)
if [ -n "$rr_fix" ] && rr_got=$(nl_apply_fix "$PORT" "${rr_fix#fix: }"); then
  nl_pass retention_risk/fix-applied "read back: $rr_got"
else
  nl_fail retention_risk/fix-applied "printed '${rr_fix:-none}', read back: ${rr_got:-none}"
fi
inj consumer-create IN w1 --ack-wait 30
inj consumer-create INF all --ack-wait 30
# Publishes after the fix are kept (the evidence that clears INF, whose
# publisher may have finished by now).
inj publish inf.a --count 5
expect_okay MAX_DELIVER_EXHAUSTED MD/poison
expect_okay NAK_STORM NK/loop
expect_okay ACK_NONE_CONSUMER AN/fast
expect_okay ACK_ALL_PARALLEL AA/par
expect_okay PUSH_UNBOUND PU/gone
expect_okay RETENTION_RISK RR/lag
expect_okay INTEREST_NO_CONSUMERS "stream IN"
expect_okay INTEREST_NO_CONSUMERS "stream INF"
wait "$PID_rec_an_ev" "$PID_rec_an_adv" 2>/dev/null
# A DELETED advisory is a claim: the clear comes with the first poll that
# no longer lists the consumer, within an interval (and the poll's time).
latency deleted_clears_next_poll next-poll an_adv.rec 1 an_ev.rec

# Healthy look-alikes raised nothing, and the cluster classes are silent.
# The look-alikes of RETENTION_RISK were observed with work in hand.
for lc in RWQ/workers RMA/live RR/keep; do
  n=$(awk -F, 'NR > 1 && $2 + 0 > 0 { n++ } END { print n + 0 }' \
    "$(nl_csv_file "it-${lc%/*}" nats_lens_delivered "${lc#*/}")" 2>/dev/null)
  if [ "${n:-0}" -ge 5 ]; then
    nl_pass "look-alike/observed $lc" "$n polls with deliveries"
  else
    nl_fail "look-alike/observed $lc" "${n:-0} polls with deliveries"
  fi
done
n=$(awk -F, 'NR > 1 && $2 + 0 > 0 { n++ } END { print n + 0 }' \
  "$(nl_csv_file it-ND nats_lens_redelivered retry)" 2>/dev/null)
if [ "${n:-0}" -ge 5 ]; then
  nl_pass "look-alike/observed ND/retry" "$n polls with redeliveries"
else
  nl_fail "look-alike/observed ND/retry" "${n:-0} polls with redeliveries"
fi
for where in MDL/kept AN/safe AA/one PU/bound RR/keep RWQ/workers RMA/live \
  ND/retry \
  "stream INK" \
  STREAM_SINGLE_REPLICA CONSUMER_UNOBSERVABLE; do
  others=$(nl_notifications "$where")
  if [ -z "$others" ]; then
    nl_pass "look-alike/silent $where"
  else
    nl_fail "look-alike/silent $where" "$others"
  fi
done
# The advisories were received, none dropped or unreadable.
adv=$(nl_csv_last it derive advisories)
dropped=$(nl_csv_last it derive advisories_dropped)
if [ "${adv:-0}" != 0 ] && [ "${dropped:-1}" = 0 ]; then
  nl_pass advisories/counted "received $adv, dropped $dropped"
else
  nl_fail advisories/counted "received ${adv:-?}, dropped ${dropped:-?}"
fi
nl_end
