# tests/integration/backend_scenario.sh: the one violation that the backend
# tests (test_graphite.sh, test_influxdb.sh, test_prometheus.sh,
# test_exec_handler.sh) send through collectd to a real backend (bash,
# sourced after tests/lib.sh).
#
# Stream S (subjects s.>) with pull consumer c (max_ack_pending 5, ack_wait
# 3 s) gets 50 messages and a worker that never acks: it holds the 5
# allowed, 45 stay pending, and MAX_PENDING_THROTTLE (WARNING) is raised for
# S/c on the next poll. The fix stops that worker and starts one that acks,
# and the finding clears with an OKAY notification. Every client stops by
# itself (bounded durations) and is also in NL_PIDS.

# nl_backend_config_file FILE SED_EXPRESSION...: prints an example
# configuration file of the project with each sed expression applied (to
# put the test's ports and paths in place of the documented defaults), and
# fails if an expression changed nothing, so an edited example cannot leave
# a test pointing at the default port.
nl_backend_config_file() {
  local file=$1 text expr changed
  shift
  text=$(cat "$file") || return 1
  for expr in "$@"; do
    changed=$(printf '%s\n' "$text" | sed -e "$expr")
    if [ "$changed" = "$text" ]; then
      echo "# $file: '$expr' changed nothing" >&2
      return 1
    fi
    text=$changed
  done
  printf '%s\n' "$text"
}

# nl_backend_nats_block PORT: the nats_lens <Instance "it"> block for the
# local nats-server.
nl_backend_nats_block() {
  printf '<Instance "it">\n  URL "nats://127.0.0.1:%s"\n  Timeout 2\n</Instance>' \
    "$1"
}

# nl_backend_throttle_start PORT: creates S/c, publishes 50 messages and
# starts the worker that never acks (15 s at most). Sets NL_THROTTLE_PID.
nl_backend_throttle_start() {
  local port=$1
  nl_inject "$port" stream-create S --subjects 's.>' >/dev/null &&
    nl_inject "$port" consumer-create S c --max-ack-pending 5 --ack-wait 3 \
      >/dev/null &&
    nl_inject "$port" publish s.a --count 50 >/dev/null || return 1
  # Run directly (not through the nl_inject function, which would be a
  # subshell) so that NL_THROTTLE_PID is the worker itself.
  "$NL_INJECT" --server "nats://127.0.0.1:$port" consume S c --duration 15 \
    --no-ack >"$NL_TMP/no-ack.out" 2>&1 &
  NL_THROTTLE_PID=$!
  NL_PIDS+=("$NL_THROTTLE_PID")
}

# nl_backend_throttle_fix PORT: stops the worker that never acks and starts
# one that acks everything (10 s at most). Call it soon (within about 5 s)
# after the onset: the held messages are redelivered every ack_wait, and
# after a few rounds ACK_WAIT_VIOLATION is rightly raised as well.
nl_backend_throttle_fix() {
  kill "$NL_THROTTLE_PID" 2>/dev/null
  wait "$NL_THROTTLE_PID" 2>/dev/null
  "$NL_INJECT" --server "nats://127.0.0.1:$1" consume S c --duration 10 \
    >"$NL_TMP/acking.out" 2>&1 &
  NL_PIDS+=($!)
}

# nl_backend_wait_onset / nl_backend_wait_okay: wait (30 and 60 s at most) for
# collectd's own log to show the onset (WARNING) or the OKAY notification
# of MAX_PENDING_THROTTLE for S/c; print the line or fail. The backend
# tests use this as the moment the value or notification was dispatched.
nl_backend_wait_onset() {
  nl_wait_notification 30 "severity = WARNING" \
    "type_instance = MAX_PENDING_THROTTLE" "S/c"
}
nl_backend_wait_okay() {
  # The OKAY comes once the condition has been gone for the clearing hold
  # (30 s by default) and 2 polls: wait up to twice that.
  nl_wait_notification 60 "severity = OKAY" \
    "type_instance = MAX_PENDING_THROTTLE" "S/c"
}
