#!/bin/bash
# MISSING_PROGRESS: long tasks without in-progress acknowledgements.
#
# Eight workers process a steady stream of messages in 50 ms each, but one
# message in a hundred takes 7 s, with ack_wait 2 s and no in-progress
# acks (+WPI). That message is delivered again while it is still being
# worked on, so the long task runs several times in parallel, while the
# other messages go through and hide the problem. collectd reports
# MISSING_PROGRESS (FAILURE) once the stuck message has stood for twice
# ack_wait, within about 10 s of the first long task.
#
# The fix raises ack_wait to 20 s, longer than the longest task (sending
# in-progress acks from the long tasks works too): the finding clears.
#
# Usage: missing-progress.sh [NATS_URL]; see lib.sh.
. "$(dirname "$0")/lib.sh"
S=NL_DEMO_PROGRESS
sc_begin MISSING_PROGRESS FAILURE "$S" task 18 15
inj stream-create "$S" --subjects 'nl_demo.progress.>' >/dev/null
inj consumer-create "$S" task --ack-wait 2 >/dev/null
say "30 messages a second, 8 workers, every 100th message takes 7 s"
sc_bg publish nl_demo.progress.job --count $((30 * (SC_FAULT + SC_FIX))) \
  --rate 30
sc_bg consume "$S" task --duration $((SC_FAULT + SC_FIX)) --workers 8 \
  --process-ms 50 --slow-every 100 --slow-ms 7000
sleep "$SC_FAULT"
sc_fix "nats consumer edit $S task --wait 20s (or send +WPI from long tasks)"
inj consumer-create "$S" task --ack-wait 20 >/dev/null
sleep "$SC_FIX"
