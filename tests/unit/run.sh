#!/usr/bin/env bash
# Runs every unit test binary: one per tests/unit/test_*.c, built by
# `make unit-build` into ${NL_BUILD:-build}/unit. Usage:
#   tests/unit/run.sh [FIXTURE_DIR [FILTER]]
# Each binary gets FIXTURE_DIR (default tests/fixtures) and FILTER (only the
# tests whose name contains it). Their "PASS unit/<name>" and
# "FAIL unit/<name>" lines (and the detail lines of failed checks, before
# their FAIL line) are passed on, each binary's own summary is left out, and
# the run ends with "unit: N passed, N failed"; the exit status is non-zero
# on any failure. A binary missing, or one that fails without a FAIL line,
# is a failure named after its file.
set -u
shopt -s lastpipe
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${NL_BUILD:-build}
[[ $build == /* ]] || build=$root/$build
fixtures=${1:-tests/fixtures}
filter=("${@:2:1}")
passed=0
failed=0
for src in "$root"/tests/unit/test_*.c; do
  name=$(basename "$src" .c)
  bin=$build/unit/$name
  if [ ! -x "$bin" ]; then
    echo "FAIL unit/$name: $bin is not built (make unit-build)"
    failed=$((failed + 1))
    continue
  fi
  fails=0
  "$bin" "$fixtures" "${filter[@]}" 2>&1 | while IFS= read -r line; do
    case $line in
    "PASS unit/"*) passed=$((passed + 1)) ;;
    "FAIL unit/"*) fails=$((fails + 1)) ;;
    "unit: "*" passed, "*" failed") continue ;;
    esac
    printf '%s\n' "$line"
  done
  rc=${PIPESTATUS[0]}
  failed=$((failed + fails))
  if [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then
    echo "FAIL unit/$name: exited with status $rc without a failed test"
    failed=$((failed + 1))
  fi
done
echo "unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
