#!/usr/bin/env bash
# Runs the unit tests and every integration test script, then prints one
# closing line "N passed, N failed". Each script prints "PASS name" and
# "FAIL name: why" lines; a script that exits non-zero without printing a
# FAIL line counts as one failure. The failures are listed again, each
# after the name of its test, just before the closing line.
# NL_ONLY=pattern runs only matching scripts (and the mutation check when
# "mutate" matches); NL_SKIP=pattern
# skips matching scripts; NATS_SERVER=PATH runs them against that
# nats-server binary (tests/nats_server.sh). Beside them the version matrix runs
# the class and cluster tests on each newer server (NL_VERSIONS, below).
set -u
cd "$(dirname "$0")/.."
# NATS_SERVER=PATH: the nats-server binary to test against (default: the
# one on PATH).
. tests/nats_server.sh
passed=0
failed=0
skipped=0 # Tests that need what this machine lacks ("SKIP" lines).
log=$(mktemp)
failures=$(mktemp)
vdir=$(mktemp -d) # The version matrix's and side lane's outputs.
trap 'rm -f "$log" "$failures"; rm -rf "$vdir"' EXIT

count() {
  local p f
  p=$(grep -c '^PASS ' "$log")
  f=$(grep -c '^FAIL ' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  skipped=$((skipped + $(grep -c '^SKIP ' "$log")))
  grep '^FAIL ' "$log" | cut -c1-400 | sed "s#^#$2: #" >>"$failures"
  if [ "$1" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $2: exited with status $1 without reporting a failure" |
      tee -a "$failures"
    failed=$((failed + 1))
  fi
}

# Every tool the suite runs, checked first: a missing one is one clear
# line naming the command that installs them all, not a failure deep in a
# test. The full run stops there; a run of some scripts (NL_ONLY) only
# warns.
# The list is tests/deps.sh's, which `make test` runs first.
missing=$(bash tests/deps.sh test --missing)
if [ -n "$missing" ]; then
  if [ -z "${NL_ONLY:-}" ]; then
    echo "FAIL setup/tools: missing: $missing; run \"bash .ci/install-deps.sh\" as root first (Debian bookworm)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "# missing: $missing (bash .ci/install-deps.sh installs them); some tests may fail"
fi

echo "# nats-server: $(command -v nats-server) ($(nats-server --version 2>&1 | head -n 1))"
# The version matrix: the class and cluster tests again on each newer
# nats-server, by default every nats-server-* of NL_SERVER_BUILDS
# (tests/nats_server.sh) when the whole suite runs. It starts before the
# unit tests and runs beside the rest of the suite; its lines are printed
# at the end. NL_VERSIONS="PATH ..." names the binaries (also with
# NL_ONLY), NL_VERSIONS=none skips the matrix, and NL_VERSION_TESTS the
# scripts. The versions run side by side, each its scripts one after
# another: the tests wait on the servers far more than they compute, and
# each version's tests take their ports from a range of its own
# (NL_PORT_SHIFT of tests/lib.sh). Their lines are prefixed with the
# version, for example "PASS 2.12.0/classes/...".
matrix=${NL_VERSIONS:-}
if [ -z "$matrix" ] && [ -z "${NL_ONLY:-}" ]; then
  matrix=$(ls "$NL_SERVER_BUILDS"/nats-server-* 2>/dev/null | tr '\n' ' ')
fi
[ "$matrix" = none ] && matrix=""
if [ -z "$matrix" ] && [ -z "${NL_ONLY:-}" ] && [ -z "${NL_VERSIONS:-}" ]; then
  echo "SKIP version-matrix: no newer nats-server builds; give" \
    "NL_SERVER_BUILDS=DIR holding nats-server-2.10.16, nats-server-2.11.10" \
    "and nats-server-2.12.0 to run the class and cluster tests on each"
  skipped=$((skipped + 1))
fi
tests=${NL_VERSION_TESTS:-test_classes test_new_classes test_cluster test_new_classes_cluster test_paused test_declared test_priority_groups test_source_stalled test_consumer_expired test_forecast test_ledger_cluster test_past_stream_cluster test_delivery_stalled_cluster test_replicas_cluster test_storage_limit test_storage_limit_cluster test_monitor_thresholds}
# The side lane: scripts that need no port range of the serial suite's and
# mostly compute (the sanitizer and fuzz runs) run after the version matrix,
# beside the serial suite, when the whole suite runs (not with NL_ONLY or
# NL_SIDE_TESTS=none). Their lines are printed at the end too.
side=${NL_SIDE_TESTS:-test_thread_sanitizer test_valgrind test_fuzz}
if [ -n "${NL_ONLY:-}" ] || [ "$side" = none ]; then side=""; fi
# The default server's lane: scripts that wait on a cluster far more than
# they compute run on the default nats-server beside the serial suite,
# as one more lane of the matrix (not with NL_ONLY or NL_LANE_TESTS=none),
# and are left out of the serial run. Their lines are printed at the end,
# prefixed with the version like the matrix's.
lane=${NL_LANE_TESTS:-test_ledger_cluster test_past_stream_cluster test_delivery_stalled_cluster test_replicas_cluster test_storage_limit_cluster}
if [ -n "${NL_ONLY:-}" ] || [ "$lane" = none ]; then lane=""; fi
versions=()
lane_tests=()
for bin in $matrix; do
  versions+=("$bin")
  lane_tests+=("$tests")
done
if [ -n "$lane" ]; then
  versions+=("$(command -v "${NATS_SERVER:-nats-server}")")
  lane_tests+=("$lane")
fi
(
  i=0
  for bin in "${versions[@]}"; do
    i=$((i + 1))
    echo "${lane_tests[$((i - 1))]}" >"$vdir/$i.tests"
    (
      export NATS_SERVER=$bin NL_PORT_SHIFT=$((i * 6000))
      . tests/nats_server.sh
      version=$(nl_server_release)
      echo "$version" >"$vdir/$i.version"
      start=$(date +%s)
      for t in $(cat "$vdir/$i.tests"); do
        timeout 900 bash "tests/integration/$t.sh" >"$vdir/$i.$t" 2>&1
        echo $? >"$vdir/$i.$t.rc"
      done
      echo "$(($(date +%s) - start))" >"$vdir/$i.took"
    ) &
  done
  wait
  for t in $side; do
    start=$(date +%s)
    NL_PORT_SHIFT=$(((i + 1) * 6000)) timeout 900 \
      bash "tests/integration/$t.sh" >"$vdir/side.$t" 2>&1
    echo $? >"$vdir/side.$t.rc"
    echo "$(($(date +%s) - start))" >"$vdir/side.$t.took"
  done
) &
lanes_pid=$!
i=${#versions[@]}
echo "== unit tests"
tests/unit/run.sh tests/fixtures >"$log" 2>&1
rc=$?
cat "$log"
count "$rc" unit

# The mutation check (make mutate): each rule of the core it breaks must
# make a unit test fail.
if [ -z "${NL_ONLY:-}" ] || [[ mutate == *${NL_ONLY}* ]]; then
  echo "== mutate"
  start=$(date +%s)
  timeout 1200 python3 tests/mutate.py >"$log" 2>&1
  rc=$?
  cat "$log"
  echo "# mutate took $(($(date +%s) - start)) s"
  count "$rc" mutate
fi

for script in tests/integration/test_*.sh; do
  name=$(basename "$script" .sh)
  if [ -n "${NL_ONLY:-}" ] && [[ $name != *${NL_ONLY}* ]]; then continue; fi
  if [ -n "${NL_SKIP:-}" ] && [[ $name == *${NL_SKIP}* ]]; then continue; fi
  if [[ " $side $lane " == *" $name "* ]]; then continue; fi
  echo "== $name"
  start=$(date +%s)
  timeout 900 bash "$script" >"$log" 2>&1
  rc=$?
  cat "$log"
  echo "# $name took $(($(date +%s) - start)) s"
  count "$rc" "$name"
done

wait "$lanes_pid" 2>/dev/null
for t in $side; do
  echo "== $t (side lane)"
  cat "$vdir/side.$t"
  cp "$vdir/side.$t" "$log"
  echo "# $t took $(cat "$vdir/side.$t.took" 2>/dev/null) s"
  count "$(cat "$vdir/side.$t.rc" 2>/dev/null || echo 1)" "$t"
done
for j in $(seq 1 "$i"); do
  version=$(cat "$vdir/$j.version" 2>/dev/null || echo "?")
  jtests=$(cat "$vdir/$j.tests" 2>/dev/null)
  echo "== nats-server $version: $jtests"
  for t in $jtests; do
    sed "s#^PASS #PASS $version/#; s#^FAIL #FAIL $version/#" "$vdir/$j.$t" >"$log" 2>/dev/null
    cat "$log"
    count "$(cat "$vdir/$j.$t.rc" 2>/dev/null || echo 1)" "$version/$t"
  done
  echo "# nats-server $version took $(cat "$vdir/$j.took" 2>/dev/null) s"
done

if [ -s "$failures" ]; then
  echo "== the failures of this run, again"
  cat "$failures"
fi
if [ "$skipped" -gt 0 ]; then
  echo "# $skipped skipped (SKIP lines above: each names what it needs)"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
