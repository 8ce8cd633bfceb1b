#!/usr/bin/env bash
# The set-up a newcomer meets (README, "Five minutes"), without installing
# anything:
#   deps      tests/deps.sh (what `make test` and `make demo` run first),
#             as a user who is not root on a machine missing every tool:
#             one line naming what is missing and the command that
#             installs it, and a failure; as it runs here, with every
#             tool: silent, success.
#   skip      a test that needs a newer nats-server than the machine has
#             (a stand-in nats-server that says it is 2.9.0, no
#             NL_SERVER_BUILDS): one SKIP line naming the build it needs
#             and NL_SERVER_BUILDS, and status 0 (tests/run_all.sh counts
#             it as skipped).
# No server is started.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin setup
cd "$NL_ROOT" || exit 1

# deps: a PATH with only what the script itself needs.
mkdir -p "$NL_TMP/bare"
for t in dirname id; do ln -s "$(command -v "$t")" "$NL_TMP/bare/$t"; done
chmod 755 "$NL_TMP" "$NL_TMP/bare"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
  env -i PATH="$NL_TMP/bare" /bin/bash "$NL_ROOT/tests/deps.sh" test 2>&1)
rc=$?
nl_check deps/not-root-fails [ "$rc" = 1 ]
nl_check deps/one-line [ "$(echo "$out" | wc -l)" = 1 ]
names() { [[ $out == *"missing: nats-server collectd cc"* ]] &&
  [[ $out == *"sudo bash .ci/install-deps.sh"* ]]; }
nl_check deps/names-them-and-the-command names
nl_check deps/complete-is-silent [ -z "$(bash tests/deps.sh test 2>&1)" ]

# skip: a stand-in for an older nats-server.
mkdir -p "$NL_TMP/old"
printf '#!/bin/sh\necho "nats-server: v2.9.0"\n' >"$NL_TMP/old/nats-server"
chmod 755 "$NL_TMP/old/nats-server"
cat >"$NL_TMP/needs_new.sh" <<EOS
. "$NL_ROOT/tests/nats_server.sh"
nl_server_at_least 2 10 2.10.16
. "$NL_ROOT/tests/lib.sh"
nl_begin needs_new
nl_server_check 2 10 2.10.16 || exit 0
nl_fail ran "the test ran on an older server"
nl_end
EOS
out=$(NATS_SERVER="$NL_TMP/old/nats-server" NL_SERVER_BUILDS= \
  NL_NATS_SERVER_FOR= bash "$NL_TMP/needs_new.sh" 2>&1)
rc=$?
nl_check skip/status-0 [ "$rc" = 0 ]
nl_check skip/no-failure eval '! grep -q "^FAIL" <<<"$out"'
skip_line() { grep -q "^SKIP needs_new: needs nats-server 2.10 or later (this machine's: 2.9.0); give NL_SERVER_BUILDS=DIR holding nats-server-2.10.16" <<<"$out"; }
nl_check skip/one-line-naming-the-build skip_line
nl_end
