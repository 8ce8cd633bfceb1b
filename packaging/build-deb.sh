#!/usr/bin/env bash
# packaging/build-deb.sh: builds the nats-lens Debian package from the built
# tree with dpkg-deb, without network and without root (the files are owned
# by root in the package through --root-owner-group). `make deb` runs it
# after building the plugin and the check command; the check command is
# packaged when cli/nats-lens-check exists.
#
# Usage: packaging/build-deb.sh [OUTDIR]   (default packaging/build)
# Needs dpkg-dev (dpkg-shlibdeps, dpkg-parsechangelog), binutils (strip) and
# help2man (the manual page of the check command).
# Prints the path of the .deb on its last line.
#
# The version comes from the top-level VERSION file; the top entry of
# packaging/debian/changelog must carry the same version. Depends is
# computed from the ELF files in the package (dpkg-shlibdeps), plus the
# collectd-core versions whose plugin interface the plugin was built for
# (those of the installed collectd-dev headers). libmicrohttpd12 is named
# in packaging/debian/control.in itself: the plugin opens it with dlopen
# when an instance sets Listen, so dpkg-shlibdeps does not see it (0.9.50
# is the version its symbols file gives for the six functions the plugin
# calls).
set -eu
umask 022
cd "$(dirname "$0")/.."

OUT=${1:-packaging/build}
# The hardened build make deb made (build/deb), or the plain one.
PLUGIN=${NL_DEB_PLUGIN:-plugin/nats_lens.so}
CLI=${NL_DEB_CLI:-cli/nats-lens-check}
PKG=nats-lens

die() {
  echo "build-deb: $*" >&2
  exit 1
}

VERSION=$(cat VERSION)
CHANGELOG_VERSION=$(dpkg-parsechangelog -l packaging/debian/changelog \
  -S Version)
[ "$VERSION" = "$CHANGELOG_VERSION" ] ||
  die "VERSION says $VERSION but packaging/debian/changelog's top entry is \
$CHANGELOG_VERSION; add a changelog entry for $VERSION"
[ -f "$PLUGIN" ] || die "$PLUGIN is missing; run make first"
ARCH=$(dpkg --print-architecture)
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l packaging/debian/changelog \
  -S Timestamp)
export SOURCE_DATE_EPOCH

WORK=$OUT/work
PKGROOT=$WORK/debian/$PKG
DOC=$PKGROOT/usr/share/doc/$PKG
rm -rf "$WORK"
install -d -m 755 "$PKGROOT/DEBIAN" "$PKGROOT/usr/lib/collectd" \
  "$PKGROOT/usr/share/collectd" "$PKGROOT/etc/collectd/collectd.conf.d" \
  "$DOC" "$PKGROOT/usr/share/lintian/overrides"

# is_elf FILE: succeeds when FILE is an ELF object.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# Binaries, stripped as dh_strip does.
install -m 644 "$PLUGIN" "$PKGROOT/usr/lib/collectd/nats_lens.so"
strip --remove-section=.comment --remove-section=.note --strip-unneeded \
  "$PKGROOT/usr/lib/collectd/nats_lens.so"
ELF_FILES=("usr/lib/collectd/nats_lens.so")
if [ -f "$CLI" ]; then
  install -d -m 755 "$PKGROOT/usr/bin"
  install -m 755 "$CLI" "$PKGROOT/usr/bin/nats-lens-check"
  if is_elf "$CLI"; then
    strip --remove-section=.comment --remove-section=.note \
      "$PKGROOT/usr/bin/nats-lens-check"
    ELF_FILES+=("usr/bin/nats-lens-check")
  fi
  # Its manual page is made from its --help, so that the two never differ.
  command -v help2man >/dev/null ||
    die "help2man is missing (apt-get install help2man); it makes the \
manual page of $CLI"
  install -d -m 755 "$PKGROOT/usr/share/man/man1"
  help2man --no-info --no-discard-stderr --section 1 \
    --name "audit NATS JetStream consumers for at-least-once delivery mistakes" \
    --source "nats-lens $VERSION" "$CLI" >"$WORK/help2man.1" ||
    die "help2man could not run $CLI --help"
  # help2man makes each example an indented paragraph, which man fills:
  # the comment and its command run together. Keep each example's lines
  # as they are (.nf ... .fi).
  awk '/^\.SH / { if (nf) print ".fi"; nf = 0; ex = ($2 == "EXAMPLES") }
       ex && /^\.IP$/ { if (nf) print ".fi"; print ".PP"; print ".nf"; nf = 1; next }
       { print }
       END { if (nf) print ".fi" }' "$WORK/help2man.1" >"$WORK/nats-lens-check.1"
  gzip -9n <"$WORK/nats-lens-check.1" \
    >"$PKGROOT/usr/share/man/man1/nats-lens-check.1.gz"
  chmod 644 "$PKGROOT/usr/share/man/man1/nats-lens-check.1.gz"
else
  echo "build-deb: $CLI not built; the package has no check command" >&2
fi

# Types, the disabled example drop-in, documentation and examples.
install -m 644 types.db.d/nats_lens.db \
  "$PKGROOT/usr/share/collectd/nats_lens.types.db"
# The drop-in invites a Password or Token: readable by root only (collectd
# runs as root and reads it).
install -m 640 packaging/nats_lens.conf \
  "$PKGROOT/etc/collectd/collectd.conf.d/nats_lens.conf"
install -m 644 packaging/debian/copyright "$DOC/copyright"
gzip -9n <packaging/debian/changelog >"$DOC/changelog.gz"
chmod 644 "$DOC/changelog.gz"
install -m 644 packaging/lintian-overrides \
  "$PKGROOT/usr/share/lintian/overrides/$PKG"
if compgen -G "docs/*.md" >/dev/null; then
  install -d -m 755 "$DOC/docs"
  install -m 644 docs/*.md "$DOC/docs/"
fi
if [ -d examples ]; then
  cp -R examples "$DOC/examples"
  find "$DOC/examples" -type d -exec chmod 755 {} +
  find "$DOC/examples" -type f -perm /111 -exec chmod 755 {} +
  find "$DOC/examples" -type f ! -perm /111 -exec chmod 644 {} +
fi

# Depends: the shared libraries of the ELF files, as dpkg-shlibdeps maps
# them to packages (it wants a debian/control naming the package), and the
# collectd-core releases sharing the plugin interface of the headers built
# against (5.12.x for collectd-dev 5.12.0-14).
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$PKG" "$PKG" \
  >"$WORK/debian/control"
SHLIBS=$(cd "$WORK" && dpkg-shlibdeps -O \
  "${ELF_FILES[@]/#/-edebian/$PKG/}" | sed -n 's/^shlibs:Depends=//p')
[ -n "$SHLIBS" ] || die "dpkg-shlibdeps found no dependencies"
COLLECTD_VERSION=$(dpkg-query -W -f '${Version}' collectd-dev 2>/dev/null |
  sed 's/-[^-]*$//') || true
[ -n "$COLLECTD_VERSION" ] || die "collectd-dev is not installed"
COLLECTD_NEXT=$(echo "$COLLECTD_VERSION" |
  awk -F. '{ printf "%d.%d~", $1, $2 + 1 }')
DEPENDS="collectd-core (>= $COLLECTD_VERSION), collectd-core (<< $COLLECTD_NEXT), $SHLIBS"

# Control files.
install -m 644 packaging/debian/conffiles "$PKGROOT/DEBIAN/conffiles"
while read -r f; do
  [ -f "$PKGROOT$f" ] || die "conffile $f is not in the package"
done <packaging/debian/conffiles
(cd "$PKGROOT" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' \
  -printf '%P\n' | LC_ALL=C sort | xargs -d '\n' md5sum) \
  >"$PKGROOT/DEBIAN/md5sums"
chmod 644 "$PKGROOT/DEBIAN/md5sums"
SIZE=$(du -k -s --apparent-size --exclude=DEBIAN "$PKGROOT" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" \
  -e "s/@INSTALLED_SIZE@/$SIZE/" -e "s/@DEPENDS@/$DEPENDS/" \
  packaging/debian/control.in >"$PKGROOT/DEBIAN/control"
chmod 644 "$PKGROOT/DEBIAN/control"

# Same timestamps on every build of one version.
find "$PKGROOT" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

DEB="$OUT/${PKG}_${VERSION}_${ARCH}.deb"
rm -f "$DEB"
dpkg-deb --root-owner-group -Zxz --build "$PKGROOT" "$DEB" >/dev/null
rm -rf "$WORK"
realpath "$DEB"
