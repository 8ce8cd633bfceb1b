#!/usr/bin/env bash
# ConsumerValuesLimit on a real nats-server seen by real collectd: with
# more consumers than the limit, ConsumerValues "all" sends only what
# "findings" sends (the class gauges of consumers with an active finding),
# says so once in the log, and sends every value again once the consumers
# are back within the limit. Three instances on one server with the
# consumers a, b and n (AckNone: ACK_NONE_CONSUMER is active for it):
#   lim   ConsumerValuesLimit 2
#   free  ConsumerValuesLimit 0 (no limit)
#   dflt  no option (default 1000)
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin values_limit
PORT=$(nl_port NL_PORT_VALUES_LIMIT 14760)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
inj stream-create VL --subjects 'vl.>' &&
  inj consumer-create VL a --ack-wait 30 &&
  inj consumer-create VL b --ack-wait 30 &&
  inj consumer-create VL n --ack none || {
  nl_fail setup "could not create the stream and consumers"
  exit 1
}
inst() {
  printf '<Instance "%s">\n  URL "nats://127.0.0.1:%s"\n%s\n</Instance>\n' \
    "$1" "$PORT" "$2"
}
nl_start_collectd "$(inst lim '  ConsumerValuesLimit 2')
$(inst free '  ConsumerValuesLimit 0')
$(inst dflt '')" 1 || exit 1

has() { [ -n "$(nl_csv_file "$@")" ]; }
# Four polls of every instance.
nl_retry 20 has lim count consumers >/dev/null
sleep 4

for i in free dflt; do
  if has "$i-VL" nats_lens_num_pending a && has "$i-VL" nats_lens_num_pending b &&
    has "$i-VL" nats_lens_num_pending n; then
    nl_pass "$i/all-values" "num_pending of a, b and n"
  else
    nl_fail "$i/all-values" "missing num_pending files: $(ls "$NL_TMP/csv/nl-test/nats_lens-$i-VL" 2>&1 | tr '\n' ' ')"
  fi
done
got=$(ls "$NL_TMP/csv/nl-test/nats_lens-lim-VL" 2>/dev/null |
  grep -E -- '-(a|b|n)-' | tr '\n' ' ')
if has lim-VL nats_lens_ack_none_consumer n &&
  [ "$(nl_csv_last lim-VL nats_lens_ack_none_consumer n)" = 1.000000 ] &&
  ! echo "$got" | grep -qE 'num_pending|-a-|-b-'; then
  nl_pass lim/findings-only "3 consumers over the limit of 2: only $got"
else
  nl_fail lim/findings-only "per-consumer files: $got"
fi
if has lim count consumers && has lim-VL count messages; then
  nl_pass lim/stream-and-instance-values
else
  nl_fail lim/stream-and-instance-values "no count-consumers or stream values"
fi
n=$(grep -c 'Instance "lim": 3 consumers are more than ConsumerValuesLimit 2' \
  "$NL_TMP/collectd.log")
polls=$(nl_csv_rows lim count consumers 1)
if [ "$n" = 1 ] && [ "$polls" -ge 3 ]; then
  nl_pass lim/logged-once "1 warning over $polls polls"
else
  nl_fail lim/logged-once "$n warnings over $polls polls"
fi
if grep -q 'Instance "\(free\|dflt\)".*ConsumerValuesLimit' "$NL_TMP/collectd.log"; then
  nl_fail unlimited/silent "$(grep -m1 'ConsumerValuesLimit' "$NL_TMP/collectd.log")"
else
  nl_pass unlimited/silent
fi

# --- back within the limit ---------------------------------------------------
inj consumer-delete VL a
if nl_retry 10 has lim-VL nats_lens_num_pending b; then
  nl_pass lim/all-values-again "num_pending of b once 2 consumers remain"
else
  nl_fail lim/all-values-again "no num_pending for b within 10 s"
fi
nl_check lim/logged-return grep -q \
  'Instance "lim": 2 consumers, within ConsumerValuesLimit 2' "$NL_TMP/collectd.log"
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
