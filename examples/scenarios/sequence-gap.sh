#!/bin/bash
# SEQUENCE_GAP: stream limits remove messages before the consumer got them.
#
# The stream keeps at most 100 messages; 300 are published while the
# consumer reads none. The server drops the oldest 200 silently: the
# consumer will never see them, and nothing in the consumer's own numbers
# says so. collectd reports SEQUENCE_GAP (FAILURE) on the next poll.
#
# The fix lets the consumer catch up and raises the limit to 10000
# messages: the finding clears once the consumer is past the gap and no
# more messages are lost.
#
# Usage: sequence-gap.sh [NATS_URL]; see lib.sh.
. "$(dirname "$0")/lib.sh"
S=NL_DEMO_GAP
sc_begin SEQUENCE_GAP FAILURE "$S" reader 8 10
inj stream-create "$S" --subjects 'nl_demo.gap.>' --max-msgs 100 >/dev/null
inj consumer-create "$S" reader --ack-wait 30 >/dev/null
say "max_msgs 100, publishing 300 messages that nobody reads"
inj publish nl_demo.gap.event --count 300 >/dev/null
sleep "$SC_FAULT"
sc_fix "read the backlog, then nats stream edit $S --max-msgs 10000"
inj consume "$S" reader --duration 3 --workers 2 >/dev/null 2>&1
inj stream-create "$S" --subjects 'nl_demo.gap.>' --max-msgs 10000 >/dev/null
sleep "$SC_FIX"
