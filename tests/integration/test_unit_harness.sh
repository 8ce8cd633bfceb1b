#!/usr/bin/env bash
# The unit test harness itself. tests/unit/check_harness.c, a test file
# built only for this check, holds tests that crash (SIGSEGV, SIGABRT),
# hang and fail a check between two that pass: run with its output piped,
# each test must have its line, the crashes and the hang naming their test
# and why, the failed check's detail line just before its FAIL line, and
# the summary after all of them. Then the runner, tests/unit/run.sh, on
# stand-in binaries: one line per test, the binaries' own summaries left
# out, a binary that fails without a FAIL line named, and one summary.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin unit_harness
cd "$NL_ROOT" || exit 1
BUILD=${NL_BUILD:-build}
SAN=${NL_SANITIZE:-0}
[ "$SAN" = 0 ] && SAN=""
if ! make -s ${SAN:+SANITIZE=$SAN} "$BUILD/unit/check_harness" \
  >"$NL_TMP/make.out" 2>&1; then
  nl_fail build "$(tail -n 3 "$NL_TMP/make.out")"
  nl_end
  exit
fi

# The output is kept out of *.out and *.log: under a sanitizer the SIGSEGV
# is a report of its own, as it should be (tests/lib.sh fails the test on
# the reports in those files).
out=$NL_TMP/harness.txt
NL_UNIT_TIMEOUT=2 timeout 60 "$BUILD/unit/check_harness" tests/fixtures \
  >"$out" 2>&1
rc=$?
has() { grep -qxE "$1" "$out"; }
# Under a sanitizer, its handler reports the SIGSEGV and exits with 1.
segv='crashed \(signal 11, SIGSEGV\)'
[ -n "$SAN" ] && segv="($segv|exited with status 1)"
nl_check crash/named has "FAIL unit/harness_segfaults: $segv"
nl_check abort/named has 'FAIL unit/harness_aborts: crashed \(signal 6, SIGABRT\)'
nl_check hang/named has 'FAIL unit/harness_hangs: timed out after 2 s'
nl_check check/fail-line has 'FAIL unit/harness_fails_a_check'
nl_check check/detail-before-fail \
  grep -qxE '  tests/unit/check_harness.c:[0-9]+: check failed: two == 3' \
  <(grep -B1 -x 'FAIL unit/harness_fails_a_check' "$out")
nl_check others/before-crash has 'PASS unit/harness_passes_first'
nl_check others/after-crash has 'PASS unit/harness_passes_last'
order=$(grep -oE '^(PASS|FAIL) unit/[a-z_]+|^unit: .*' "$out" | tr '\n' ' ')
want="PASS unit/harness_passes_first FAIL unit/harness_segfaults FAIL unit/harness_aborts FAIL unit/harness_fails_a_check FAIL unit/harness_hangs PASS unit/harness_passes_last unit: 2 passed, 4 failed "
if [ "$order" = "$want" ]; then
  nl_pass lines/in-order-with-summary
else
  nl_fail lines/in-order-with-summary "got: $order"
fi
if [ "$rc" = 1 ]; then
  nl_pass exit-status
else
  nl_fail exit-status "exited with $rc, not 1"
fi

# The runner on stand-ins for the binaries of tests/unit/test_*.c: each
# prints one PASS line and its own summary, but test_names exits with 7
# without a line.
fake=$NL_TMP/build/unit
mkdir -p "$fake"
n=0
for src in tests/unit/test_*.c; do
  name=$(basename "$src" .c)
  if [ "$name" = test_names ]; then
    printf '#!/bin/sh\nexit 7\n' >"$fake/$name"
  else
    printf '#!/bin/sh\necho "PASS unit/%s_ok"\necho "unit: 1 passed, 0 failed"\n' \
      "$name" >"$fake/$name"
    n=$((n + 1))
  fi
  chmod +x "$fake/$name"
done
NL_BUILD=$NL_TMP/build tests/unit/run.sh tests/fixtures >"$NL_TMP/run.txt" 2>&1
rc=$?
nl_check runner/one-line-per-test \
  test "$(grep -c '^PASS unit/test_[a-z_]*_ok$' "$NL_TMP/run.txt")" = "$n"
nl_check runner/silent-failure-named grep -qx \
  'FAIL unit/test_names: exited with status 7 without a failed test' \
  "$NL_TMP/run.txt"
nl_check runner/one-summary-last test \
  "$(grep -c '^unit: ' "$NL_TMP/run.txt") $(tail -n 1 "$NL_TMP/run.txt")" = \
  "1 unit: $n passed, 1 failed"
nl_check runner/exit-status test "$rc" != 0
nl_end
