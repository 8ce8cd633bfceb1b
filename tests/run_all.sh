#!/usr/bin/env bash
# Runs the unit tests and every integration test script, then prints one
# closing line "N passed, N failed". Each script prints "PASS name" and
# "FAIL name: why" lines; a script that exits non-zero without printing a
# FAIL line counts as one failure. NL_ONLY=pattern runs only matching
# scripts (and the mutation check when "mutate" matches); NL_SKIP=pattern
# skips matching scripts; NATS_SERVER=PATH runs them against that
# nats-server binary (tests/nats_server.sh).
set -u
cd "$(dirname "$0")/.."
# NATS_SERVER=PATH: the nats-server binary to test against (default: the
# one on PATH).
. tests/nats_server.sh
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count() {
  local p f
  p=$(grep -c '^PASS ' "$log")
  f=$(grep -c '^FAIL ' "$log")
  passed=$((passed + p))
  failed=$((failed + f))
  if [ "$1" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "FAIL $2: exited with status $1 without reporting a failure"
    failed=$((failed + 1))
  fi
}

# Every tool the suite runs, checked first: a missing one is one clear
# line naming the command that installs them all, not a failure deep in a
# test. The full run stops there; a run of some scripts (NL_ONLY) only
# warns.
missing=""
for tool in nats-server collectd curl python3 chromium go node npm gnuplot \
  carbon-cache influxd prometheus promtool valgrind clang dpkg-deb lintian \
  help2man man readelf xxd cc openssl script ip; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
if [ -n "$missing" ]; then
  if [ -z "${NL_ONLY:-}" ]; then
    echo "FAIL setup/tools: missing:$missing; run \"bash .ci/install-deps.sh\" as root first (Debian bookworm)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "# missing:$missing (bash .ci/install-deps.sh installs them); some tests may fail"
fi

echo "# nats-server: $(command -v nats-server) ($(nats-server --version 2>&1 | head -n 1))"
echo "== unit tests"
"./${NL_BUILD:-build}/unit_tests" tests/fixtures >"$log" 2>&1
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
  echo "== $name"
  start=$(date +%s)
  timeout 900 bash "$script" >"$log" 2>&1
  rc=$?
  cat "$log"
  echo "# $name took $(($(date +%s) - start)) s"
  count "$rc" "$name"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
