# tests/scenarios.sh: recipes that make each delivery-violation class happen
# on a real nats-server, with tests/tools/nl-inject (bash, sourced).
#
# Used by the class test, the demo and the example scripts. Each class has a
# stream of its own. nl_scenario_setup PORT creates every stream and
# consumer (PORT may also be a URL, see nl_sc_url; further arguments, such
# as --replicas 3, are added to every stream-create);
# nl_scenario_start_<CLASS> PORT starts the fault (background
# processes are appended to NL_PIDS and printed PIDs are kept in
# NL_SCENARIO_PID_<CLASS>); nl_scenario_fix_<CLASS> PORT applies the fix.
# Background runs are bounded by --duration and stop by themselves.

NL_SCENARIO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NL_SCENARIO_OUT=${NL_SCENARIO_OUT:-/tmp}

# nl_sc_url PORT|URL: the server URL of a port on 127.0.0.1, or the URL
# itself (a user of one account: nats://user:password@127.0.0.1:PORT).
nl_sc_url() {
  case $1 in
  *://*) echo "$1" ;;
  *) echo "nats://127.0.0.1:$1" ;;
  esac
}

nl_sc_inject() {
  local port=$1
  shift
  "$NL_SCENARIO_ROOT/tests/tools/nl-inject" --server "$(nl_sc_url "$port")" \
    "$@"
}

# nl_sc_bg NAME PORT ARGS...: runs nl-inject in the background, output to
# $NL_SCENARIO_OUT/NAME.out, and records its PID.
nl_sc_bg() {
  local name=$1 port=$2
  shift 2
  # The binary itself runs in the background (not a function in a subshell),
  # so that the PID recorded is the worker's and killing it stops it.
  "$NL_SCENARIO_ROOT/tests/tools/nl-inject" --server "$(nl_sc_url "$port")" \
    "$@" >"$NL_SCENARIO_OUT/$name.out" 2>&1 &
  NL_PIDS+=($!)
  eval "NL_SCENARIO_PID_$name=$!"
}

# Streams: AW (ACK_WAIT_VIOLATION), GAP (SEQUENCE_GAP), MP
# (MAX_PENDING_THROTTLE), NAK (NAK_STORM), LONG (MISSING_PROGRESS), WPI
# (long tasks with in-progress acks: healthy), OK (healthy).
nl_scenario_setup() {
  local p=$1
  shift
  nl_sc_inject "$p" stream-create AW --subjects 'aw.>' "$@" &&
    nl_sc_inject "$p" consumer-create AW proc --ack-wait 2 &&
    nl_sc_inject "$p" stream-create GAP --subjects 'gap.>' --max-msgs 100 \
      "$@" &&
    nl_sc_inject "$p" consumer-create GAP slow --ack-wait 30 &&
    nl_sc_inject "$p" stream-create MP --subjects 'mp.>' "$@" &&
    nl_sc_inject "$p" consumer-create MP stuck --ack-wait 3 \
      --max-ack-pending 5 &&
    nl_sc_inject "$p" stream-create NAK --subjects 'nak.>' "$@" &&
    nl_sc_inject "$p" consumer-create NAK poison --ack-wait 30 &&
    nl_sc_inject "$p" stream-create LONG --subjects 'long.>' "$@" &&
    nl_sc_inject "$p" consumer-create LONG task --ack-wait 2 &&
    nl_sc_inject "$p" stream-create WPI --subjects 'wpi.>' "$@" &&
    nl_sc_inject "$p" consumer-create WPI task --ack-wait 2 &&
    nl_sc_inject "$p" stream-create OK --subjects 'ok.>' --max-msgs 100000 \
      "$@" &&
    nl_sc_inject "$p" consumer-create OK good --ack-wait 30 \
      --max-ack-pending 1000
}

# Healthy: steady traffic acked quickly, for SECONDS (default 64).
nl_scenario_start_HEALTHY() {
  local secs=${2:-64}
  nl_sc_bg HEALTHY_PUB "$1" publish ok.a --count $((secs * 20)) --rate 20
  nl_sc_bg HEALTHY "$1" consume OK good --duration "$secs" --workers 2 \
    --process-ms 20
}

# ACK_WAIT_VIOLATION: processing 4 s with ack_wait 2 s, 4 workers.
nl_scenario_start_ACK_WAIT_VIOLATION() {
  nl_sc_inject "$1" publish aw.a --count 60 >/dev/null &&
    nl_sc_bg ACK_WAIT_VIOLATION "$1" consume AW proc --duration 40 \
      --workers 4 --process-ms 4000
}
# Fix: an ack_wait longer than the processing time.
nl_scenario_fix_ACK_WAIT_VIOLATION() {
  nl_sc_inject "$1" consumer-create AW proc --ack-wait 10 >/dev/null
}

# SEQUENCE_GAP: max_msgs 100, 300 published, the consumer never read any.
nl_scenario_start_SEQUENCE_GAP() {
  nl_sc_inject "$1" publish gap.a --count 300 >/dev/null
}
# Fix: the consumer reads from the head; the limit is raised.
nl_scenario_fix_SEQUENCE_GAP() {
  nl_sc_inject "$1" consume GAP slow --duration 3 --workers 2 >/dev/null &&
    nl_sc_inject "$1" stream-create GAP --subjects 'gap.>' \
      --max-msgs 10000 >/dev/null
}

# MAX_PENDING_THROTTLE: a worker that never acks holds the 5 allowed.
nl_scenario_start_MAX_PENDING_THROTTLE() {
  nl_sc_inject "$1" publish mp.a --count 50 >/dev/null &&
    nl_sc_bg MAX_PENDING_THROTTLE "$1" consume MP stuck --duration 15 \
      --no-ack
}
# Fix: the worker that never acks is replaced by ones that do.
nl_scenario_fix_MAX_PENDING_THROTTLE() {
  kill "$NL_SCENARIO_PID_MAX_PENDING_THROTTLE" 2>/dev/null
  nl_sc_bg MAX_PENDING_THROTTLE_FIX "$1" consume MP stuck --duration 12 \
    --workers 2
}

# NAK_STORM: every 5th message is NAKed again and again.
nl_scenario_start_NAK_STORM() {
  nl_sc_inject "$1" publish nak.a --count 20 >/dev/null &&
    nl_sc_bg NAK_STORM "$1" consume NAK poison --duration 15 --nak-seq-mod 5
}
# Fix: poison messages are terminated instead of NAKed.
nl_scenario_fix_NAK_STORM() {
  kill "$NL_SCENARIO_PID_NAK_STORM" 2>/dev/null
  nl_sc_bg NAK_STORM_FIX "$1" consume NAK poison --duration 12 \
    --term-seq-mod 5
}

# MISSING_PROGRESS: every 100th message takes 7 s and sends no progress; 8
# workers keep acking the others while traffic goes on. Next to it, the
# same long tasks with in-progress acks (healthy).
nl_scenario_start_MISSING_PROGRESS() {
  nl_sc_bg MISSING_PROGRESS_PUB "$1" publish long.a --count 1500 --rate 30
  nl_sc_bg MISSING_PROGRESS "$1" consume LONG task --duration 50 --workers 8 \
    --process-ms 50 --slow-every 100 --slow-ms 7000
  nl_sc_bg WPI_PUB "$1" publish wpi.a --count 1500 --rate 30
  nl_sc_bg WPI "$1" consume WPI task --duration 50 --workers 8 \
    --process-ms 50 --slow-every 100 --slow-ms 7000 --in-progress \
    --progress-ms 500
}
# Fix: an ack_wait longer than the longest task.
nl_scenario_fix_MISSING_PROGRESS() {
  nl_sc_inject "$1" consumer-create LONG task --ack-wait 20 >/dev/null
}
