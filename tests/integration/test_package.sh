#!/usr/bin/env bash
# The Debian package, installed for real on this machine: `make deb` builds
# it; its Depends, md5sums, conffiles and lintian are checked; `dpkg -i`
# installs it; the disabled drop-in is enabled as its comments say, against
# a local nats-server; the stock collectd binary runs with the system
# configuration /etc/collectd/collectd.conf and reports a
# MAX_PENDING_THROTTLE finding; then `dpkg -r` and `dpkg -P` remove the
# package and the conffile as Debian policy says.
#
# Runs as root (dpkg). It leaves the machine as it found it: if
# /etc/collectd/collectd.conf is missing (only collectd-core installed) it
# writes a minimal one that includes collectd.conf.d, and removes it again;
# everything it adds is removed, even when a check fails. It refuses to run
# when nats-lens is already installed, so that it never removes someone's
# install. Runs of this test on one machine wait for each other (flock).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin package
PORT=$(nl_port NL_PORT_PACKAGE 14710)
PKG=nats-lens
ETC=/etc/collectd
CONF=$ETC/collectd.conf
CONFD=$ETC/collectd.conf.d
DROPIN=$CONFD/nats_lens.conf
LOGDROPIN=$CONFD/00-nats-lens-test.conf
export DEBIAN_FRONTEND=noninteractive

if [ "$(id -u)" -ne 0 ]; then
  nl_fail root "the package test installs a .deb and must run as root"
  exit 1
fi
for tool in dpkg-deb dpkg-shlibdeps lintian help2man collectd nats-server flock; do
  if ! command -v "$tool" >/dev/null; then
    nl_fail tools "$tool is missing (run .ci/install-deps.sh)"
    exit 1
  fi
done
exec 9>/tmp/nats-lens-package-test.lock
if ! flock -w 300 9; then
  nl_fail lock "another run of the package test held the lock for 300 s"
  exit 1
fi

# pkg_status: dpkg's status of the package ("install ok installed",
# "deinstall ok config-files"), or nothing when dpkg does not know it.
pkg_status() { dpkg-query -W -f '${Status}' "$PKG" 2>/dev/null; }
not() { ! "$@"; }

if [ -n "$(pkg_status)" ] && [ "$(pkg_status)" != "unknown ok not-installed" ]; then
  nl_fail machine/clean "$PKG is already on this machine ($(pkg_status)); \
the test installs and purges it, so remove it first: dpkg -P $PKG"
  exit 1
fi

# system_collectds: collectd processes not run by a test (tests give a
# configuration under /tmp), one PID a line.
system_collectds() {
  local pid
  for pid in $(pgrep -x collectd); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q ' /tmp/' ||
      echo "$pid"
  done | sort
}

# A collectd running with the system configuration would collide with the
# one this test starts (same sockets, files and ports).
if [ -n "$(system_collectds)" ]; then
  nl_fail machine/no-system-collectd "collectd runs already (pid \
$(system_collectds | tr '\n' ' ')); stop it first: the test runs collectd \
with the system configuration"
  exit 1
fi

# The state to restore.
HAD_CONF=0
HAD_CONFD=0
[ -e "$CONF" ] && HAD_CONF=1 && cp -p "$CONF" "$NL_TMP/collectd.conf.orig"
[ -d "$CONFD" ] && HAD_CONFD=1
INSTALLED=0

# pkg_dpkg ARGS...: runs dpkg without a terminal, retrying for up to 60 s
# while another dpkg or apt holds the lock. Output goes to $NL_TMP/dpkg.out.
pkg_dpkg() {
  local i rc
  for ((i = 0; i < 30; i++)); do
    dpkg "$@" </dev/null >"$NL_TMP/dpkg.out" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && return 0
    grep -qi 'lock' "$NL_TMP/dpkg.out" || break
    sleep 2
  done
  cat "$NL_TMP/dpkg.out" >&2
  return "$rc"
}

pkg_cleanup() {
  if [ -n "${PKG_COLLECTD_PID:-}" ]; then
    kill "$PKG_COLLECTD_PID" 2>/dev/null
    wait "$PKG_COLLECTD_PID" 2>/dev/null
  fi
  rm -f "$LOGDROPIN"
  if [ "$INSTALLED" = 1 ]; then
    pkg_dpkg -P "$PKG" || echo "# could not purge $PKG" >&2
  fi
  restore_conf
  [ "$HAD_CONFD" = 1 ] || rmdir "$CONFD" 2>/dev/null
  nl_cleanup
}

# restore_conf: puts back /etc/collectd/collectd.conf as it was.
restore_conf() {
  if [ "$HAD_CONF" = 1 ]; then
    cmp -s "$NL_TMP/collectd.conf.orig" "$CONF" ||
      cp -p "$NL_TMP/collectd.conf.orig" "$CONF"
  else
    rm -f "$CONF"
  fi
}
trap pkg_cleanup EXIT

# 1. Build.
if [ -n "${NL_DEB:-}" ]; then
  DEB=$NL_DEB
# The package holds the plain build, also when the suite runs under
# SANITIZE=1 (which make passes down to sub-makes unless overridden).
elif make -C "$NL_ROOT" deb SANITIZE=0 >"$NL_TMP/make.out" 2>&1; then
  DEB=$(grep "\.deb$" "$NL_TMP/make.out" | tail -n 1)
else
  DEB=
fi
if [ -z "$DEB" ] || [ ! -f "$DEB" ]; then
  nl_fail deb/built "make deb failed: $(tail -n 5 "$NL_TMP/make.out")"
  exit 1
fi
VERSION=$(cat "$NL_ROOT/VERSION")
if [ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ]; then
  nl_pass deb/built "$(basename "$DEB"), version from VERSION"
else
  nl_fail deb/built "version $(dpkg-deb -f "$DEB" Version), VERSION $VERSION"
fi

# 2. Contents: every shared library the ELF files need belongs to a package
# named in Depends; md5sums match; the drop-in is a conffile.
X=$NL_TMP/deb
dpkg-deb -x "$DEB" "$X"
dpkg-deb -e "$DEB" "$X/DEBIAN"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
# The manual page keeps each example's comment and command on lines of
# their own (man fills help2man's paragraphs otherwise).
examples=$(MANWIDTH=100 man -l "$X/usr/share/man/man1/nats-lens-check.1.gz" \
  2>/dev/null | sed -n '/^EXAMPLES/,$p')
if echo "$examples" | grep -qx " *# Fail the pipeline on warnings too, for the ORDERS streams only" &&
  echo "$examples" | grep -qx " *nats-lens-check --stream 'ORDERS\*' --fail-on warning"; then
  nl_pass deb/man-examples "each example on its own lines"
else
  nl_fail deb/man-examples "$(echo "$examples" | head -n 6 | tr '\n' '|')"
fi
# The packaged binaries carry Debian's hardening: bind now, a stack
# protector and fortified functions.
hard=$(readelf -d "$X/usr/lib/collectd/nats_lens.so" | grep -c 'BIND_NOW\|FLAGS.*NOW')
fort=$(readelf -Ws "$X/usr/lib/collectd/nats_lens.so" | grep -c '__[a-z]*_chk@')
if [ "$hard" -ge 1 ] && [ "$fort" -ge 1 ]; then
  nl_pass deb/hardened "bind now, $fort fortified calls"
else
  nl_fail deb/hardened "bind now ${hard}, fortified calls ${fort}"
fi
# The drop-in may hold a password: root's alone.
conf_mode=$(dpkg-deb -c "$DEB" | awk '$NF ~ /conf.d\/nats_lens.conf$/ { print $1, $2 }')
if [ "$conf_mode" = "-rw-r----- root/root" ]; then
  nl_pass deb/conf-mode "$conf_mode"
else
  nl_fail deb/conf-mode "drop-in is '${conf_mode:-missing}', not -rw-r----- root/root"
fi
missing=
for f in $(find "$X" -type f -exec sh -c \
  'head -c 4 "$1" | grep -q ELF && echo "$1"' _ {} \;); do
  for lib in $(objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'); do
    path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    owner=$(dpkg -S "$(realpath "$path")" 2>/dev/null | head -n 1 |
      cut -d: -f1)
    [ -z "$owner" ] && owner=$(dpkg -S "$path" 2>/dev/null | head -n 1 |
      cut -d: -f1)
    [ -z "$owner" ] && owner="unknown-package-of-$lib"
    case ", $DEPENDS" in
    *", $owner "* | *", $owner,"*) ;;
    *) missing="$missing $lib($owner)" ;;
    esac
  done
done
case "$DEPENDS" in
collectd-core*) ;;
*) missing="$missing collectd-core" ;;
esac
if [ -z "$missing" ]; then
  nl_pass deb/depends "$DEPENDS"
else
  nl_fail deb/depends "not in Depends:$missing (Depends: $DEPENDS)"
fi
# The plugin opens libmicrohttpd.so.12 with dlopen (Listen), so no NEEDED
# entry names it: Depends must name its package all the same.
case ", $DEPENDS," in
*", libmicrohttpd12 "* | *", libmicrohttpd12,"*)
  nl_pass deb/depends-dlopen "libmicrohttpd12 (opened for Listen)" ;;
*) nl_fail deb/depends-dlopen "libmicrohttpd12 not in Depends: $DEPENDS" ;;
esac
nl_check deb/md5sums sh -c "cd '$X' && md5sum --quiet -c DEBIAN/md5sums"
nl_check deb/conffile grep -qx "$DROPIN" "$X/DEBIAN/conffiles"
for f in usr/lib/collectd/nats_lens.so usr/share/collectd/nats_lens.types.db \
  usr/share/doc/$PKG/copyright usr/share/doc/$PKG/changelog.gz \
  usr/share/doc/$PKG/docs/configuration.md \
  usr/share/doc/$PKG/examples/notify-handler.sh; do
  [ -f "$X/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then
  nl_pass deb/files
else
  nl_fail deb/files "missing:$missing"
fi
if lintian --fail-on error,warning,info,pedantic --display-info --pedantic "$DEB" \
  >"$NL_TMP/lintian.out" 2>&1; then
  nl_pass deb/lintian "no tag beyond packaging/lintian-overrides"
else
  nl_fail deb/lintian "$(grep -v 'root privileges' "$NL_TMP/lintian.out" |
    head -n 5 | tr '\n' ' ')"
fi

# 3. Install. The package must start nothing.
before=$(system_collectds)
if pkg_dpkg -i "$DEB"; then
  INSTALLED=1
  nl_pass install/dpkg-i "$(pkg_status)"
else
  nl_fail install/dpkg-i "$(tail -n 3 "$NL_TMP/dpkg.out")"
  exit 1
fi
sleep 0.5
if [ "$(system_collectds)" = "$before" ]; then
  nl_pass install/starts-nothing
else
  nl_fail install/starts-nothing "a collectd process appeared"
fi
active=$(grep -v '^#' "$DROPIN" | grep -c '[^[:space:]]')
if [ "$active" -eq 0 ]; then
  nl_pass install/drop-in-disabled
else
  nl_fail install/drop-in-disabled "$active active lines in $DROPIN"
fi

# 4. The system configuration: Debian's collectd.conf includes
# collectd.conf.d; with collectd-core alone there is none, so write one.
if [ "$HAD_CONF" = 0 ]; then
  cat >"$CONF" <<EOF
# Written by nats-lens tests/integration/test_package.sh; removed when the
# test ends.
FQDNLookup false
<Include "$CONFD">
  Filter "*.conf"
</Include>
EOF
elif ! grep -q "collectd.conf.d" "$CONF"; then
  nl_fail system-conf "$CONF does not include $CONFD; not changing it"
  exit 1
fi
# Logging first (collectd.conf.d is read in name order), into the test's
# directory, and values as CSV files there.
{
  echo "# Written by nats-lens tests/integration/test_package.sh; removed when"
  echo "# the test ends."
  nl_log_csv_config
} >"$LOGDROPIN"

# Enable the drop-in with the command its own comments give, then point it
# at the test's server and poll every second.
cmd=$(sed -n 's/^#  *\(sed -i .*\)$/\1/p' "$DROPIN" | head -n 1)
if [ -n "$cmd" ] && eval "$cmd" &&
  sed -i -e "s|nats://127.0.0.1:4222|nats://127.0.0.1:$PORT|" \
    -e 's|# Interval 10|Interval 1|' "$DROPIN" &&
  grep -q '^LoadPlugin nats_lens' "$DROPIN" &&
  grep -q "^[[:space:]]*Interval 1" "$DROPIN"; then
  nl_pass enable/drop-in "$cmd"
else
  nl_fail enable/drop-in "the enabling command ($cmd) did not enable it"
  exit 1
fi

# 5. The stock collectd with the system configuration sees a finding.
nl_start_nats "$PORT" || exit 1
collectd -f -C "$CONF" -P "$NL_TMP/collectd.pid" >"$NL_TMP/collectd.out" 2>&1 &
PKG_COLLECTD_PID=$!
for ((i = 0; i < 100; i++)); do
  grep -q "entering read-loop" "$NL_TMP/collectd.log" 2>/dev/null && break
  kill -0 "$PKG_COLLECTD_PID" 2>/dev/null || break
  sleep 0.1
done
if grep -q "entering read-loop" "$NL_TMP/collectd.log" 2>/dev/null &&
  grep -q "/usr/lib/collectd/nats_lens.so" "/proc/$PKG_COLLECTD_PID/maps"; then
  nl_pass run/collectd "loaded /usr/lib/collectd/nats_lens.so"
else
  nl_fail run/collectd "$(cat "$NL_TMP/collectd.out" "$NL_TMP/collectd.log" \
    2>/dev/null | tail -n 5 | tr '\n' ' ')"
  exit 1
fi
nl_inject "$PORT" stream-create PKG --subjects 'pkg.>' >/dev/null
nl_inject "$PORT" consumer-create PKG stuck --ack-wait 30 \
  --max-ack-pending 5 >/dev/null
nl_inject "$PORT" publish pkg.a --count 50 >/dev/null
nl_inject "$PORT" consume PKG stuck --duration 20 --no-ack \
  >"$NL_TMP/consume.out" 2>&1 &
NL_PIDS+=($!)
if line=$(nl_wait_notification 20 "severity = WARNING" "plugin = nats_lens" \
  "type_instance = MAX_PENDING_THROTTLE" "PKG/stuck"); then
  nl_pass run/finding "${line#*message = }"
else
  nl_fail run/finding "no MAX_PENDING_THROTTLE notification in 20 s: \
$(tail -n 3 "$NL_TMP/collectd.log" | tr '\n' ' ')"
fi
csv=$(ls "$NL_TMP"/csv/*/nats_lens-local-PKG/nats_lens_num_ack_pending-stuck-* \
  2>/dev/null | head -n 1)
if [ -n "$csv" ] && [ "$(tail -n 1 "$csv" | cut -d, -f2)" = "5.000000" ]; then
  nl_pass run/values "num_ack_pending of PKG/stuck is 5 in $(basename "$csv")"
else
  nl_fail run/values "no num_ack_pending = 5 for PKG/stuck in $NL_TMP/csv"
fi
# Warnings and errors about the plugin or its types, and values collectd
# dropped for lack of a type (logged at info level). Other plugins of a
# system configuration may log their own.
warnings=$(grep -E '\[(warning|error)\].*(nats_lens|[Tt]ypes)|Dataset not found' \
  "$NL_TMP/collectd.log")
if [ -z "$warnings" ]; then
  nl_pass run/log-clean "no warning, error or unknown type logged"
else
  nl_fail run/log-clean "$(echo "$warnings" | wc -l) lines, the first: \
$(echo "$warnings" | head -n 1 | cut -d' ' -f3-)"
fi
nl_check run/types-read-once not grep -q "Replacing DS" "$NL_TMP/collectd.log"

# 6. Reinstalling keeps the edited conffile without asking.
if pkg_dpkg -i "$DEB" && grep -q "127.0.0.1:$PORT" "$DROPIN"; then
  nl_pass reinstall/keeps-conffile
else
  nl_fail reinstall/keeps-conffile "the edited $DROPIN was not kept"
fi
kill "$PKG_COLLECTD_PID" 2>/dev/null
wait "$PKG_COLLECTD_PID" 2>/dev/null
PKG_COLLECTD_PID=
rm -f "$LOGDROPIN"

# 7. Remove: the files go, the edited conffile stays. Purge: it goes too.
if pkg_dpkg -r "$PKG"; then
  left=
  for f in /usr/lib/collectd/nats_lens.so /usr/share/collectd/nats_lens.types.db \
    /usr/share/doc/$PKG; do
    [ -e "$f" ] && left="$left $f"
  done
  if [ -z "$left" ] && [ -f "$DROPIN" ] &&
    [ "$(pkg_status)" = "deinstall ok config-files" ]; then
    nl_pass remove/dpkg-r "files gone, conffile kept"
  else
    nl_fail remove/dpkg-r "left:$left; conffile $(ls "$DROPIN" 2>&1); \
status $(pkg_status)"
  fi
else
  nl_fail remove/dpkg-r "$(tail -n 3 "$NL_TMP/dpkg.out")"
fi
if pkg_dpkg -P "$PKG"; then
  INSTALLED=0
  if [ ! -e "$DROPIN" ] && ! dpkg-query -W "$PKG" >/dev/null 2>&1 &&
    ! dpkg -L "$PKG" >/dev/null 2>&1; then
    nl_pass remove/dpkg-P "conffile gone, package unknown to dpkg"
  else
    nl_fail remove/dpkg-P "conffile $(ls "$DROPIN" 2>&1); $(pkg_status)"
  fi
else
  nl_fail remove/dpkg-P "$(tail -n 3 "$NL_TMP/dpkg.out")"
fi

# 8. The machine as it was: dpkg removed the directory it created, and the
# system configuration is put back.
if [ "$HAD_CONFD" = 0 ]; then
  nl_check restore/conf.d-removed test ! -e "$CONFD"
fi
restore_conf
if [ "$HAD_CONF" = 1 ]; then
  nl_check restore/collectd.conf cmp -s "$NL_TMP/collectd.conf.orig" "$CONF"
else
  nl_check restore/collectd.conf test ! -e "$CONF"
fi
nl_end
