#!/usr/bin/env bash
# tests/deps.sh demo|test [--missing]: makes sure the Debian packages that
# `make demo` (demo) or the whole suite, `make test` (test), needs are
# installed. When something is missing it installs every package with
# .ci/install-deps.sh, which needs root (apt-get); without root it says so
# in one line and fails. Quiet when everything is there. With --missing
# it only prints what is missing (nothing when all is there) and
# succeeds: tests/run_all.sh checks with it.
set -u
cd "$(dirname "$0")/.."
what=${1:-test}
# The build's headers and tools, then the commands the tests run.
tools="nats-server collectd cc"
headers="/usr/include/collectd/core/daemon/plugin.h /usr/include/nats/nats.h \
/usr/include/json-c/json.h"
if [ "$what" = test ]; then
  tools="$tools curl python3 chromium go node npm gnuplot carbon-cache influxd
    prometheus promtool valgrind clang dpkg-deb lintian help2man man readelf
    xxd openssl script ip certutil"
  headers="$headers /usr/include/microhttpd.h /usr/include/crypt.h"
fi
missing=""
for t in $tools; do
  command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
for h in $headers; do
  [ -f "$h" ] || missing="$missing $h"
done
if [ "${2:-}" = --missing ]; then
  echo "${missing# }"
  exit 0
fi
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "$what: missing:$missing; run as root (or: sudo bash .ci/install-deps.sh)"
  exit 1
fi
echo "$what: installing packages (apt-get; log /tmp/nats-lens-$what-apt.log) ..."
bash .ci/install-deps.sh >"/tmp/nats-lens-$what-apt.log" 2>&1 || {
  tail -n 30 "/tmp/nats-lens-$what-apt.log"
  exit 1
}
