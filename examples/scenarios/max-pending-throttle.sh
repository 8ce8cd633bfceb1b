#!/bin/bash
# MAX_PENDING_THROTTLE: a consumer stalled at max_ack_pending.
#
# The consumer allows 5 unacknowledged messages; a worker takes 5 and never
# acknowledges them. The server stops delivering while 45 messages wait:
# nothing is lost, but nothing moves. collectd reports
# MAX_PENDING_THROTTLE (WARNING) on the next poll.
#
# The fix replaces the stuck worker by two that acknowledge: the held
# messages expire (ack_wait 3 s), are delivered again and acknowledged, and
# the finding clears 30 s later (ClearHoldSeconds: a consumer hovering at
# its cap gives one finding, not one per dip). Raising max_ack_pending
# instead would clear it on the next poll.
#
# Usage: max-pending-throttle.sh [NATS_URL]; see lib.sh.
. "$(dirname "$0")/lib.sh"
S=NL_DEMO_THROTTLE
sc_begin MAX_PENDING_THROTTLE WARNING "$S" stuck 10 40
inj stream-create "$S" --subjects 'nl_demo.throttle.>' >/dev/null
inj consumer-create "$S" stuck --ack-wait 3 --max-ack-pending 5 >/dev/null
inj publish nl_demo.throttle.job --count 50 >/dev/null
say "max_ack_pending 5, a worker that never acknowledges"
sc_bg consume "$S" stuck --duration "$SC_FAULT" --no-ack
sleep "$SC_FAULT"
sc_stop_bg
sc_fix "workers that acknowledge (or raise it: nats consumer edit $S stuck --max-pending 10)"
sc_bg consume "$S" stuck --duration "$SC_FIX" --workers 2
sleep "$SC_FIX"
