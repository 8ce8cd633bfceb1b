# tests/tools/fixture_server.sh: the nats-server the fixture recorders
# (record_fixtures.sh, record_copies.sh) record from; sourced after
# tests/nats_server.sh.
#
# fixture_server NAME: makes DIR, a new directory /tmp/NAME.XXXXXX, starts
# `nats-server -js` on 127.0.0.1:$PORT (a free port unless PORT is set;
# PORT is set to it) with its store and its log (DIR/server.log) in DIR,
# sets SERVER_PID, and waits until the server is ready; exits 1 with the
# log when it is not within 5 s. On exit, the processes of BG_PIDS and the
# server are stopped and DIR is removed. NL is nl-inject (unless set).
BG_PIDS=()
SERVER_PID=
NL=${NL:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/nl-inject}
fixture_server() {
  DIR=$(mktemp -d "/tmp/$1.XXXXXX")
  trap fixture_cleanup EXIT
  if [ -z "${PORT:-}" ]; then
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  fi
  nats-server -js -a 127.0.0.1 -p "$PORT" -sd "$DIR" >"$DIR/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 50); do
    grep -q "Server is ready" "$DIR/server.log" && return 0
    sleep 0.1
  done
  cat "$DIR/server.log" >&2
  exit 1
}

fixture_cleanup() {
  local p
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  rm -rf "$DIR"
}
