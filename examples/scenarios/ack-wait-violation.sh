#!/bin/bash
# ACK_WAIT_VIOLATION: processing takes longer than ack_wait.
#
# Four workers take 3 s per message on a pull consumer with ack_wait 2 s.
# Every message they work on expires and is delivered again while it is
# still being processed: the same work runs twice, round after round.
# collectd reports ACK_WAIT_VIOLATION (FAILURE) once the redeliveries have
# recurred for more than one ack_wait, about 10 to 15 s after the start.
#
# The fix raises ack_wait to 10 s, longer than the processing: the finding
# clears on the next poll.
#
# Usage: ack-wait-violation.sh [NATS_URL]; see lib.sh.
. "$(dirname "$0")/lib.sh"
S=NL_DEMO_ACK_WAIT
sc_begin ACK_WAIT_VIOLATION FAILURE "$S" worker 30 15
inj stream-create "$S" --subjects 'nl_demo.ack_wait.>' >/dev/null
inj consumer-create "$S" worker --ack-wait 2 >/dev/null
inj publish nl_demo.ack_wait.job --count 60 >/dev/null
say "4 workers, 3000 ms per message, ack_wait 2 s"
sc_bg consume "$S" worker --duration $((SC_FAULT + SC_FIX)) --workers 4 \
  --process-ms 3000
sleep "$SC_FAULT"
sc_fix "nats consumer edit $S worker --wait 10s"
inj consumer-create "$S" worker --ack-wait 10 >/dev/null
sleep "$SC_FIX"
