#!/usr/bin/env bash
# Shutdown does not wait for a server that does not answer. The plugin's
# advisory thread reads each consumer a CREATED advisory announces; here a
# stand-in answers those reads after 60 s, and the instance's Timeout is
# 30 s. collectd, stopped while that read waits, must exit within a third
# of the Timeout (it used to wait the whole Timeout: 26.8 s measured).
# Then the same with a poll waiting on a stopped server.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin shutdown
PORT=$(nl_port NL_PORT_SHUTDOWN 14795)
TIMEOUT=30
nl_start_server plain "$PORT" -a 127.0.0.1 -p "$PORT" || exit 1
nl_inject "$PORT" respond '$JS.API.*.INFO.>' --reply '{}' --delay-ms 60000 \
  --duration 90 >"$NL_TMP/respond.out" 2>&1 &
NL_PIDS+=($!)
nl_start_collectd "<Instance \"sd\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout $TIMEOUT
</Instance>" 1 || exit 1
# The advisory subscription is made at the first poll.
subscribed() { grep -q 'Instance "sd"' "$NL_TMP/collectd.log"; }
nl_retry 10 subscribed || true
sleep 1
nl_inject "$PORT" --timeout-ms 200 request \
  '$JS.EVENT.ADVISORY.CONSUMER.CREATED.S.x' \
  '{"type":"io.nats.jetstream.advisory.v1.consumer_action","id":"a","timestamp":"2026-12-02T00:00:00Z","stream":"S","consumer":"x","action":"create"}' \
  >/dev/null 2>&1
# The read of S/x is under way: the stand-in holds a request.
sleep 2
start=$(date +%s%N)
kill -TERM "$NL_COLLECTD_PID"
wait "$NL_COLLECTD_PID" 2>/dev/null
ms=$((($(date +%s%N) - start) / 1000000))
if [ "$ms" -lt $((TIMEOUT * 1000 / 3)) ]; then
  nl_pass prompt "collectd exited ${ms} ms after SIGTERM (Timeout ${TIMEOUT} s)"
else
  nl_fail prompt "collectd took ${ms} ms to exit (Timeout ${TIMEOUT} s)"
fi

# The same while a poll waits: the server stopped (SIGSTOP) mid-poll. The
# read callback only starts the poll on the poll thread, so collectd's
# reads are never stuck in it; stopping closes the connection and the
# waiting request fails at once.
PORT2=$((PORT + 1))
nl_start_nats "$PORT2" || exit 1
nl_inject "$PORT2" stream-create H --subjects 'h.>' >/dev/null
MAIN_TMP=$NL_TMP
NL_TMP=$MAIN_TMP/hung
mkdir -p "$NL_TMP"
nl_start_collectd "<Instance \"hp\">
  URL \"nats://127.0.0.1:$PORT2\"
  Timeout $TIMEOUT
</Instance>" 1 || exit 1
polled() { [ -n "$(nl_csv_file hp duration poll)" ]; }
nl_retry 10 polled || true
kill -STOP "$NL_NATS_PID"
# A read kicked a poll that now waits on the stopped server.
sleep 3
start=$(date +%s%N)
kill -TERM "$NL_COLLECTD_PID"
wait "$NL_COLLECTD_PID" 2>/dev/null
ms=$((($(date +%s%N) - start) / 1000000))
kill -CONT "$NL_NATS_PID"
NL_TMP=$MAIN_TMP
if [ "$ms" -lt $((TIMEOUT * 1000 / 3)) ]; then
  nl_pass poll-hung "collectd exited ${ms} ms after SIGTERM with a poll waiting (Timeout ${TIMEOUT} s)"
else
  nl_fail poll-hung "collectd took ${ms} ms to exit with a poll waiting (Timeout ${TIMEOUT} s)"
fi
nl_end
