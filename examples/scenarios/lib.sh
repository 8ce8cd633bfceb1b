# examples/scenarios/lib.sh: shared by the scenario scripts (sourced, bash).
#
# Each scenario script makes one delivery mistake happen on a NATS server,
# with real consumers, so that a collectd running the nats_lens plugin
# against that server reports it; then it applies the fix, so that the
# finding clears (an OKAY notification), and deletes what it created.
#
# Usage: SCENARIO.sh [NATS_URL]
#   NATS_URL    the server (default: $NATS_URL, else nats://127.0.0.1:4222).
#               Use a test server: the scenario creates a stream named
#               NL_DEMO_* with subjects nl_demo.*, and stops if that stream
#               exists already.
#   NL_INJECT   the nl-inject tool (default: tests/tools/nl-inject of the
#               source tree these examples come from; build it with
#               "make tests/tools/nl-inject").
#   NL_FAULT_SECONDS, NL_FIX_SECONDS
#               how long the mistake, then the fix, are kept up.
#   NL_KEEP=1   keep the stream at the end.
#
# collectd must poll the server every second or two (Interval 1 in the
# Instance block); the scenarios use ack_wait values of 2 to 3 s.
set -u

SC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SERVER=${1:-${NATS_URL:-nats://127.0.0.1:4222}}
INJECT=${NL_INJECT:-$SC_DIR/../../tests/tools/nl-inject}
SC_PIDS=()
SC_STREAM=

if [ ! -x "$INJECT" ]; then
  echo "nl-inject not found at $INJECT: run \"make tests/tools/nl-inject\" in" \
    "the nats-lens source tree, or set NL_INJECT" >&2
  exit 2
fi

# inj ARGS...: nl-inject against the server.
inj() { "$INJECT" --server "$SERVER" "$@"; }

# say TEXT...: a time-stamped line about the scenario.
say() { printf '%s [%s] %s\n' "$(date +%T)" "${SC_CLASS:-scenario}" "$*"; }

# sc_bg COMMAND...: runs an nl-inject command in the background; sc_cleanup
# stops it.
sc_bg() {
  inj "$@" >/dev/null 2>&1 &
  SC_PIDS+=($!)
}

# sc_stop_bg: stops the background commands.
sc_stop_bg() {
  local pid
  for pid in "${SC_PIDS[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in "${SC_PIDS[@]}"; do
    wait "$pid" 2>/dev/null
  done
  SC_PIDS=()
}

sc_cleanup() {
  sc_stop_bg
  if [ -n "$SC_STREAM" ] && [ "${NL_KEEP:-0}" != 1 ]; then
    inj stream-delete "$SC_STREAM" >/dev/null 2>&1 &&
      say "deleted stream $SC_STREAM"
  fi
}

# sc_begin CLASS SEVERITY STREAM CONSUMER DEFAULT_FAULT DEFAULT_FIX: checks
# the server and that STREAM does not exist yet, and says what to expect.
# Sets SC_FAULT and SC_FIX (seconds).
sc_begin() {
  SC_CLASS=$1
  local severity=$2 consumer=$4
  SC_FAULT=${NL_FAULT_SECONDS:-$5}
  SC_FIX=${NL_FIX_SECONDS:-$6}
  local reply
  if ! reply=$(inj request "\$JS.API.STREAM.INFO.$3" 2>&1); then
    echo "cannot reach JetStream at $SERVER: $reply" >&2
    exit 2
  fi
  if ! echo "$reply" | grep -q '"err_code":10059'; then
    echo "stream $3 exists already on $SERVER; delete it or use another" \
      "server" >&2
    exit 2
  fi
  SC_STREAM=$3
  trap sc_cleanup EXIT
  trap 'exit 1' INT TERM
  say "server $SERVER, stream $3, consumer $consumer"
  say "expect a $severity notification with type_instance = $SC_CLASS" \
    "for $3/$consumer within the next $SC_FAULT s, and an OKAY one after" \
    "the fix"
}

# sc_fix TEXT...: announces the fix.
sc_fix() { say "fix: $*"; }
