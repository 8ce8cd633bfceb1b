# tests/nats_server.sh (sourced by tests/lib.sh and tests/run_all.sh):
# NATS_SERVER picks the nats-server binary that every test, benchmark and
# evaluation runs, for example
#   NATS_SERVER=/opt/nats/nats-server-2.12.0 make test
# (a path, or a command name on PATH; default: the nats-server on PATH,
# Debian's). It is linked as "nats-server" in a directory of its own put
# first on PATH, so every script that starts nats-server starts it. The
# directory's name follows the binary's path: runs with the same binary
# share it.
if [ -n "${NATS_SERVER:-}" ] && [ "${NL_NATS_SERVER_FOR:-}" != "$NATS_SERVER" ]; then
  nl_server_bin=$(command -v "$NATS_SERVER" 2>/dev/null)
  case $nl_server_bin in /*) ;; *) nl_server_bin=$(cd "$(dirname "$nl_server_bin")" 2>/dev/null && pwd)/$(basename "$nl_server_bin") ;; esac
  if [ ! -x "$nl_server_bin" ] || [ ! -f "$nl_server_bin" ]; then
    echo "NATS_SERVER=$NATS_SERVER: no such executable" >&2
    exit 2
  fi
  nl_server_dir=${TMPDIR:-/tmp}/nats-lens-server-$(id -u)-$(printf '%s' "$nl_server_bin" | cksum | cut -d' ' -f1)
  mkdir -p "$nl_server_dir" && ln -sfn "$nl_server_bin" "$nl_server_dir/nats-server" || exit 2
  export PATH="$nl_server_dir:$PATH" NL_NATS_SERVER_FOR=$NATS_SERVER
  unset nl_server_bin nl_server_dir
fi

# NL_SERVER_BUILDS=DIR: a directory of newer nats-server builds, named
# nats-server-RELEASE (nats-server-2.10.16, nats-server-2.11.10,
# nats-server-2.12.0), that the version matrix runs (tests/run_all.sh) and
# that version-specific tests fall back on. None by default: a test that
# needs a newer server than the machine has is then skipped, with one line
# naming the build it needs.
NL_SERVER_BUILDS=${NL_SERVER_BUILDS:-}

# nl_server_version: "MAJOR MINOR" of the nats-server on PATH (empty when
# there is none).
nl_server_version() {
  nats-server --version 2>/dev/null | sed -n 's/.*v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p'
}

# nl_server_release: the release of the nats-server on PATH, such as 2.12.0.
nl_server_release() {
  nats-server --version 2>&1 | head -n 1 | sed 's/^nats-server: v//'
}

# nl_server_build RELEASE: prints the path of the build of RELEASE in
# NL_SERVER_BUILDS; fails when there is none.
nl_server_build() {
  [ -x "$NL_SERVER_BUILDS/nats-server-$1" ] && echo "$NL_SERVER_BUILDS/nats-server-$1"
}

# nl_server_use_minor MINOR RELEASE: when the nats-server on PATH is not
# 2.MINOR, exports NATS_SERVER as the build of RELEASE in NL_SERVER_BUILDS
# (left as it is when there is none). Source tests/lib.sh after it.
nl_server_use_minor() {
  local major minor other
  read -r major minor <<<"$(nl_server_version)"
  if [ "${major:-0}" -ne 2 ] || [ "${minor:-0}" -ne "$1" ]; then
    other=$(nl_server_build "$2") && export NATS_SERVER=$other
  fi
  return 0
}

# nl_server_older MAJOR MINOR: succeeds when the nats-server on PATH is
# older than MAJOR.MINOR (or there is none).
nl_server_older() {
  local major minor
  read -r major minor <<<"$(nl_server_version)"
  [ "${major:-0}" -lt "$1" ] || { [ "${major:-0}" -eq "$1" ] && [ "${minor:-0}" -lt "$2" ]; }
}

# nl_server_at_least MAJOR MINOR RELEASE: for a test that needs nats-server
# MAJOR.MINOR or later: when the one on PATH is older, exports NATS_SERVER
# as the build of RELEASE in NL_SERVER_BUILDS (when there is one), which
# tests/lib.sh, sourced next, puts first on PATH.
nl_server_at_least() {
  local newer
  if nl_server_older "$1" "$2"; then
    newer=$(nl_server_build "$3") && export NATS_SERVER=$newer
  fi
  return 0
}
