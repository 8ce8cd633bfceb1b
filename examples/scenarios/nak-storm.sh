#!/bin/bash
# NAK_STORM: messages negatively acknowledged again and again.
#
# The worker NAKs every fifth message each time it comes back: the server
# redelivers those at once, forever, far more often than ack_wait (30 s)
# could explain. collectd reports NAK_STORM (WARNING) within about three
# polls.
#
# The fix terminates the poison messages (AckTerm) instead of NAKing them:
# the storm stops and the finding clears 30 s later (ClearHoldSeconds).
#
# Usage: nak-storm.sh [NATS_URL]; see lib.sh.
. "$(dirname "$0")/lib.sh"
S=NL_DEMO_NAK
sc_begin NAK_STORM WARNING "$S" poison 12 40
inj stream-create "$S" --subjects 'nl_demo.nak.>' >/dev/null
inj consumer-create "$S" poison --ack-wait 30 >/dev/null
inj publish nl_demo.nak.job --count 20 >/dev/null
say "a worker that NAKs every fifth message, again and again"
sc_bg consume "$S" poison --duration "$SC_FAULT" --nak-seq-mod 5
sleep "$SC_FAULT"
sc_stop_bg
sc_fix "terminate poison messages (AckTerm) or give the consumer a backoff"
sc_bg consume "$S" poison --duration "$SC_FIX" --term-seq-mod 5
sleep "$SC_FIX"
