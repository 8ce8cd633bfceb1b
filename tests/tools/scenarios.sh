#!/bin/bash
# Runs the fault-injection scenarios of SCENARIOS.md against a running
# nats-server with JetStream and writes one trace set per scenario into OUTDIR:
# NAME.setup (what was created), NAME.watch (one `watch` line per second),
# NAME.consume (the consumer's summary line) and NAME.log (its --verbose log).
#
# Usage: tests/tools/scenarios.sh OUTDIR [SCENARIO...]
#   NL_SERVER  server URL (default nats://127.0.0.1:14222)
#   NL         path of the nl-inject binary (default tests/tools/nl-inject)
# Each scenario deletes and recreates its own stream, so it can be rerun.
set -u
OUT=${1:?usage: scenarios.sh OUTDIR [SCENARIO...]}
shift
SRV=${NL_SERVER:-nats://127.0.0.1:14222}
NL=${NL:-$(dirname "$0")/nl-inject}
mkdir -p "$OUT"

nl() { "$NL" --server "$SRV" "$@"; }

# fresh STREAM ARGS...: recreates STREAM with the given stream-create options.
fresh() {
  local s=$1
  shift
  nl stream-delete "$s" >/dev/null 2>&1
  nl stream-create "$s" "$@"
}

# watch_bg NAME STREAM CONSUMER COUNT: starts a 1-second watch in background.
watch_bg() {
  nl watch "$2" "$3" --interval 1 --count "$4" >"$OUT/$1.watch" 2>&1 &
}

# consume NAME STREAM CONSUMER ARGS...: runs a verbose consumer in foreground.
consume() {
  local n=$1
  shift
  nl consume "$@" --verbose >>"$OUT/$n.consume" 2>>"$OUT/$n.log"
}

s1_pull() {
  {
    fresh S1 --subjects s1.x
    nl consumer-create S1 C --ack-wait 2
    nl publish s1.x --count 30
  } >"$OUT/s1_pull.setup" 2>&1
  watch_bg s1_pull S1 C 22
  consume s1_pull S1 C --duration 20 --workers 4 --batch 1 --process-ms 3000
  wait
}

s1_push() {
  {
    fresh S1P --subjects s1p.x
    nl consumer-create S1P P --ack-wait 2 --deliver-subject dlv.s1p
    nl publish s1p.x --count 30
  } >"$OUT/s1_push.setup" 2>&1
  watch_bg s1_push S1P P 22
  consume s1_push S1P P --mode push --duration 20 --workers 4 \
    --process-ms 3000
  wait
}

s2_gap() {
  local n=s2_gap
  {
    fresh S2 --subjects s2.a,s2.keep --max-msgs 100
    nl consumer-create S2 U
    nl consumer-create S2 FK --filter s2.keep
    nl consumer-create S2 FL --filter s2.keep
    nl publish s2.keep --count 3
  } >"$OUT/$n.setup" 2>&1
  consume $n S2 FK --duration 2 --max-msgs 3
  {
    echo "# after FK took s2.keep seq 1-3"
    nl watch S2 FK --count 1
    nl publish s2.a --count 300
    nl publish s2.keep --count 2
    echo "# after 300 s2.a (seq 4-303) and 2 s2.keep (304-305), max_msgs 100"
    for c in U FK FL; do
      echo "# $c"
      nl watch S2 $c --count 1
    done
    nl info S2 U
    nl info S2 FK
    nl info S2 FL
  } >>"$OUT/$n.watch" 2>&1
  consume $n S2 U --duration 2 --max-msgs 1
  consume $n S2 FK --duration 2 --max-msgs 1
  consume $n S2 FL --duration 2 --max-msgs 1
  {
    for c in U FK FL; do
      echo "# $c after taking one message"
      nl watch S2 $c --count 1
    done
  } >>"$OUT/$n.watch" 2>&1
}

# A filtered consumer with a waiting pull while only other subjects arrive,
# then the same traffic with no pull waiting.
s2_filtered_idle() {
  local n=s2_filtered_idle
  {
    fresh S2J --subjects s2j.a,s2j.keep
    nl consumer-create S2J FK --filter s2j.keep
    nl publish s2j.keep --count 1
  } >"$OUT/$n.setup" 2>&1
  (sleep 1 && nl publish s2j.a --count 50 >>"$OUT/$n.setup" 2>&1) &
  consume $n S2J FK --duration 3
  wait
  {
    echo "# after 50 s2j.a published while a pull request waited"
    nl watch S2J FK --count 1
    nl publish s2j.a --count 50
    echo "# after 50 more s2j.a with no pull request waiting"
    nl watch S2J FK --count 1
  } >"$OUT/$n.watch" 2>&1
}

s3_maxpending() {
  {
    fresh S3 --subjects s3.x
    nl consumer-create S3 C --max-ack-pending 5
    nl publish s3.x --count 50
    fresh S3E --subjects s3e.x
    nl consumer-create S3E C --max-ack-pending 5
    nl publish s3e.x --count 5
  } >"$OUT/s3_maxpending.setup" 2>&1
  watch_bg s3_maxpending S3 C 7
  consume s3_maxpending S3 C --duration 6 --no-ack
  wait
  watch_bg s3_exact S3E C 7
  consume s3_exact S3E C --duration 6 --no-ack
  wait
}

s4_poison() {
  {
    fresh S4 --subjects s4.x
    nl consumer-create S4 C --ack-wait 2
    nl publish s4.x --count 9
  } >"$OUT/s4_poison.setup" 2>&1
  watch_bg s4_poison S4 C 11
  consume s4_poison S4 C --duration 10 --process-ms 50 --nak-seq-mod 5
  wait
}

s4_poison_maxdeliver() {
  {
    fresh S4M --subjects s4m.x
    nl consumer-create S4M C --ack-wait 2 --max-deliver 5
    nl publish s4m.x --count 9
  } >"$OUT/s4_poison_maxdeliver.setup" 2>&1
  watch_bg s4_poison_maxdeliver S4M C 9
  consume s4_poison_maxdeliver S4M C --duration 8 --process-ms 50 \
    --nak-seq-mod 5
  wait
}

s4_nakall() {
  {
    fresh S4N --subjects s4n.x
    nl consumer-create S4N C --ack-wait 2
    nl publish s4n.x --count 10
  } >"$OUT/s4_nakall.setup" 2>&1
  watch_bg s4_nakall S4N C 9
  consume s4_nakall S4N C --duration 8 --process-ms 50 --nak
  wait
}

# s5 NAME EXTRA...: steady 10 msg/s, every 10th message takes 7 s.
s5() {
  local n=$1
  shift
  {
    fresh S5 --subjects s5.x
    nl consumer-create S5 C --ack-wait 2
  } >"$OUT/$n.setup" 2>&1
  nl publish s5.x --count 200 --rate 10 >>"$OUT/$n.setup" 2>&1 &
  watch_bg $n S5 C 24
  consume $n S5 C --duration 22 --workers 3 --process-ms 50 \
    --slow-every 10 --slow-ms 7000 "$@"
  wait
}
s5_noprogress() { s5 s5_noprogress; }
# The same at 2 msg/s: one slow message at a time, two idle workers waiting.
s5_cascade() {
  local n=s5_cascade
  {
    fresh S5 --subjects s5.x
    nl consumer-create S5 C --ack-wait 2
  } >"$OUT/$n.setup" 2>&1
  nl publish s5.x --count 40 --rate 2 >>"$OUT/$n.setup" 2>&1 &
  watch_bg $n S5 C 24
  consume $n S5 C --duration 22 --workers 3 --process-ms 50 \
    --slow-every 10 --slow-ms 7000
  wait
}
s5_progress() { s5 s5_progress --in-progress --progress-ms 1000; }

s6_healthy() {
  {
    fresh S6 --subjects s6.x
    nl consumer-create S6 C --ack-wait 30
  } >"$OUT/s6_healthy.setup" 2>&1
  nl publish s6.x --count 300 --rate 20 >>"$OUT/s6_healthy.setup" 2>&1 &
  watch_bg s6_healthy S6 C 17
  consume s6_healthy S6 C --duration 16 --workers 2 --process-ms 20
  wait
}

s7_nak_floor() {
  {
    fresh S7 --subjects s7.x
    nl consumer-create S7 C --ack-wait 2
    nl publish s7.x --count 2
  } >"$OUT/s7_nak_floor.setup" 2>&1
  watch_bg s7_nak_floor S7 C 7
  consume s7_nak_floor S7 C --duration 6 --process-ms 300 --nak-seq-mod 2
  wait
}

s7_wpi_floor() {
  {
    fresh S7W --subjects s7w.x
    nl consumer-create S7W C --ack-wait 2
    nl publish s7w.x --count 2
  } >"$OUT/s7_wpi_floor.setup" 2>&1
  watch_bg s7_wpi_floor S7W C 11
  consume s7_wpi_floor S7W C --duration 10 --process-ms 50 --slow-every 2 \
    --slow-ms 8000 --in-progress --progress-ms 1000
  wait
}

s8_terminated() {
  local n=s8_terminated
  {
    fresh S8 --subjects s8.x
    nl consumer-create S8 C --ack-wait 30
    nl publish s8.x --count 4
    fresh S8L --subjects s8l.x --max-msgs 10
    nl consumer-create S8L C --ack-wait 30 --max-ack-pending 10
    nl publish s8l.x --count 10
  } >"$OUT/$n.setup" 2>&1
  consume $n S8 C --duration 2 --process-ms 10 --term-seq-mod 2
  nl watch S8 C --count 1 >"$OUT/$n.watch" 2>&1
  consume $n S8L C --duration 2 --no-ack
  {
    echo "# S8L: 10 delivered unacked, then 5 more published (max_msgs 10)"
    nl watch S8L C --count 1
    nl publish s8l.x --count 5
    sleep 1
    nl watch S8L C --count 1
  } >>"$OUT/$n.watch" 2>&1
}

# max_deliver reached while no pull request waits, then one pull request.
s9_maxdeliver_nopull() {
  local n=s9_maxdeliver_nopull
  {
    fresh S9 --subjects s9.x
    nl consumer-create S9 C --ack-wait 1 --max-deliver 2
    nl publish s9.x --count 1
  } >"$OUT/$n.setup" 2>&1
  consume $n S9 C --duration 1.5 --no-ack
  nl watch S9 C --count 5 >"$OUT/$n.watch" 2>&1
  consume $n S9 C --duration 1
  echo "# after one more pull request" >>"$OUT/$n.watch"
  nl watch S9 C --count 1 >>"$OUT/$n.watch" 2>&1
}

ALL="s1_pull s1_push s2_gap s2_filtered_idle s3_maxpending s4_poison
s4_poison_maxdeliver s4_nakall s5_noprogress s5_cascade s5_progress s6_healthy s7_nak_floor s7_wpi_floor
s8_terminated s9_maxdeliver_nopull"
for s in ${@:-$ALL}; do
  rm -f "$OUT/$s".*
  echo "== $s"
  "$s"
done
