#!/usr/bin/env bash
# Fuzzing, bounded: builds the libFuzzer targets of tests/fuzz (one per
# parser of server replies) with clang, ASan and UBSan, and runs each for
# NL_FUZZ_SECONDS seconds (default 12) from its seed corpus of recorded
# replies. Passes when no input crashed, leaked or hit undefined behaviour.
# `make fuzz FUZZ_SECONDS=60` runs the same for longer.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin fuzz
cd "$NL_ROOT" || exit 1
if ! command -v "${FUZZ_CC:-clang}" >/dev/null; then
  nl_fail build "clang is not installed (see .ci/install-deps.sh)"
  exit 1
fi
if ! make -s fuzz-build >"$NL_TMP/build.out" 2>&1; then
  nl_fail build "$(grep -m3 -i error "$NL_TMP/build.out")"
  exit 1
fi
targets=$(ls tests/fuzz/fuzz_*.c | xargs -n1 basename | sed 's/\.c$//')
NL_FUZZ_SECONDS=${NL_FUZZ_SECONDS:-12} tests/fuzz/run_fuzz.sh $targets |
  sed "s|^PASS fuzz/|PASS $NL_TEST/|; s|^FAIL fuzz/|FAIL $NL_TEST/|"
nl_end
