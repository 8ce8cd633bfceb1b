#!/usr/bin/env bash
# Runs each named libFuzzer target (built by `make fuzz-build` into
# build/fuzz) for NL_FUZZ_SECONDS seconds (default 60) on a scratch copy of
# its seed corpus tests/fuzz/corpus/TARGET, on one core. Prints
# "PASS fuzz/TARGET (runs)" or "FAIL fuzz/TARGET: why" per target and keeps
# any crashing input in build/fuzz/crash-TARGET-*. Exits 1 on any failure.
set -u
cd "$(dirname "$0")/../.."
secs=${NL_FUZZ_SECONDS:-60}
status=0
for target in "$@"; do
  bin=build/fuzz/$target
  seeds=tests/fuzz/corpus/$target
  work=$(mktemp -d "/tmp/nats-lens-fuzz-$target.XXXXXX")
  cp "$seeds"/* "$work/" 2>/dev/null
  log=$work.log
  # -max_total_time bounds the run; timeout is a second bound in case the
  # fuzzer itself hangs. Leak checking stays on (every input is freed).
  timeout $((secs + 60)) "$bin" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="build/fuzz/crash-$target-" "$work" >"$log" 2>&1
  rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" |
    grep -o '[0-9]*$')
  if [ "$rc" -eq 0 ] && ! grep -qE 'ERROR: |runtime error:' "$log"; then
    echo "PASS fuzz/$target (${runs:-?} inputs in ${secs} s, no crash)"
  else
    echo "FAIL fuzz/$target: exit $rc; $(grep -m1 -E 'ERROR: |runtime error:|deadly signal' "$log")"
    tail -n 40 "$log" | sed 's/^/# /'
    status=1
  fi
  rm -rf "$work" "$log"
done
exit "$status"
