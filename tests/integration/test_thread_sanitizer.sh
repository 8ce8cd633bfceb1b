#!/usr/bin/env bash
# The thread model under ThreadSanitizer: builds the plugin with
# -fsanitize=thread (make SANITIZE=thread, into build/tsan) and runs the
# tests where the most threads meet, with libtsan preloaded into collectd:
# the consumer-creation burst (reader, advisory thread and cnats threads on
# one engine), the health events and the REST API (HTTP threads reading
# the registry while polls and advisories change it). Their checks are
# repeated here under thread_sanitizer/; a data race or lock-order report in
# collectd's output fails the test (tests/lib.sh nl_sanitizer_check). The
# REST API test also times requests against a hung poll, which a build
# under ThreadSanitizer is too slow for: of it only the sanitizer's
# verdict counts. So for the agents (three agents and a central collectd
# with the Coverage block: poll threads, write threads and the read of
# the Coverage block), which run without the exec plugin here.
# `make SANITIZE=thread test` runs the whole suite so.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin thread_sanitizer
if [ "${NL_SANITIZE:-0}" != 0 ]; then
  nl_pass skipped "the suite runs under a sanitizer already"
  nl_end
  exit
fi
if ! make -C "$NL_ROOT" -s SANITIZE=thread build/tsan/nats_lens.so \
  >"$NL_TMP/make.out" 2>&1; then
  nl_fail build "$(tail -n 3 "$NL_TMP/make.out")"
  nl_end
  exit
fi
nl_pass build build/tsan/nats_lens.so
for t in test_advisory_burst test_events test_http test_system_account \
  test_agents; do
  NL_PLUGIN="$NL_ROOT/build/tsan/nats_lens.so" NL_SANITIZE=thread \
    NL_TSAN_LIB=$(cc -print-file-name=libtsan.so) \
    timeout 600 bash "$NL_ROOT/tests/integration/$t.sh" >"$NL_TMP/$t.txt" 2>&1
  if [ "$t" = test_http ] || [ "$t" = test_agents ]; then
    if grep -q '^FAIL [a-z_]*/sanitizer/' "$NL_TMP/$t.txt"; then
      grep '^FAIL [a-z_]*/sanitizer/' "$NL_TMP/$t.txt" | sed 's/^FAIL /FAIL thread_sanitizer\//'
      NL_FAILED=1
    else
      nl_pass "${t#test_}/no-report" "$(grep -c '^PASS ' "$NL_TMP/$t.txt") checks ran"
    fi
    continue
  fi
  sed -n 's/^\(PASS\|FAIL\) /\1 thread_sanitizer\//p' "$NL_TMP/$t.txt"
  grep -q '^FAIL ' "$NL_TMP/$t.txt" && NL_FAILED=1
done
nl_end
