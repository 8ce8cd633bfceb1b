#!/usr/bin/env bash
# tests/eval/ledger.sh: the delivery ledger's detection latency and its
# counts against the messages really lost (`make eval-ledger`).
#
# Runs tests/integration/test_ledger.sh (one server, 1 s polls) and
# tests/integration/test_ledger_cluster.sh (three nodes, R3, 2 s polls) on
# the nats-server of the run and on each newer build of the version matrix
# found in NL_SERVER_BUILDS (tests/nats_server.sh). Each scenario injects a
# known number of messages its consumer will never process and the tests
# print, for each, the seconds from the end of the injection to the
# notification (the log's whole seconds) and what the plugin counted of the
# number injected. The table goes into $OUT/eval.md between the "ledger"
# markers (tests/eval/ledger_table.py); the raw lines into
# $OUT/eval-ledger.txt. Every test is bounded and stops by itself.
set -u
cd "$(dirname "$0")/../.."
. tests/nats_server.sh
OUT=${OUT:-results}
raw=$OUT/eval-ledger.txt
# LEDGER_TESTS names the scripts (default: all below); LEDGER_APPEND=1
# keeps the raw lines of an earlier run and adds these (the table is made
# from all of them).
[ -n "${LEDGER_APPEND:-}" ] || : >"$raw"
servers="$(command -v nats-server)"
for r in 2.10.16 2.11.10 2.12.0; do
  b=$(nl_server_build "$r") && servers="$servers $b"
done
failed=0
for srv in $servers; do
  rel=$(NATS_SERVER=$srv bash -c '. tests/nats_server.sh; nl_server_release')
  for t in ${LEDGER_TESTS:-test_ledger test_ledger_cluster test_past_stream \
    test_past_stream_cluster test_delivery_stalled test_delivery_stalled_cluster \
    test_replicas_cluster test_storage_limit test_storage_limit_cluster \
    test_monitor_thresholds}; do
    echo "== $rel $t" | tee -a "$raw"
    NATS_SERVER=$srv bash "tests/integration/$t.sh" >"$OUT/.ledger.out" 2>&1 ||
      failed=$((failed + 1))
    grep -E '^  (latency|counted) |^FAIL' "$OUT/.ledger.out" | tee -a "$raw"
  done
done
rm -f "$OUT/.ledger.out"
python3 tests/eval/ledger_table.py "$raw" "$OUT/eval.md" "$(git rev-parse --short HEAD)"
echo "eval-ledger: $failed test run(s) failed"
[ "$failed" = 0 ]
