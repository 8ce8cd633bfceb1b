#!/usr/bin/env bash
# A consumer's declared processing time (metadata nats_lens.max_processing,
# nats-server 2.10 and later) reaches ACK_WAIT_VIOLATION: a consumer whose
# first redelivery delay is not longer than what it declares will execute
# its long tasks twice, and the plugin says so from its first poll, while
# its worker acks every message in 50 ms and nothing was redelivered. The
# printed fix (1.5 x the declared time) is applied to the real server, the
# configuration read back (the declaration kept), and the finding clears
# and stays clear with the workload going on. Editing the declaration
# clears it at once too.
#
# Consumers of stream DP (all read by quick workers, 2 messages a second):
#   short    ack_wait 2 s, declares 5s           raised; fix --wait 8s
#   backoff  backoff 2 s, 4 s, declares 5s       raised; fix: linear backoff
#   meta     ack_wait 2 s, declares 5s           raised; declaration edited
#                                                to 1s: cleared at once
#   ok       ack_wait 30 s, declares 5s          silent (observed)
#   plain    ack_wait 2 s, no metadata           silent (observed)
#   bad      ack_wait 2 s, declares "thirty seconds"   one warning in the
#   ctl      ack_wait 2 s, declares "5s<newline><ESC>[2J"  log each, no
#                                                finding, no control byte
# Runs on the nats-server of the run when it is 2.10 or later, else on the
# 2.10.16 build of the version matrix (NL_SERVER_BUILDS, tests/nats_server.sh).
# Ports: NL_PORT_DECLARED (default 14980).
set -u
. "$(dirname "$0")/../nats_server.sh"
nl_server_at_least 2 10 2.10.16
. "$(dirname "$0")/../lib.sh"
nl_begin declared
nl_server_check 2 10 2.10.16 || exit 0
PORT=$(nl_port NL_PORT_DECLARED 14980)
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@" >/dev/null; }
P=nats_lens.max_processing
inj stream-create DP --subjects 'dp.>' &&
  inj consumer-create DP short --ack-wait 2 --metadata "$P=5s" &&
  inj consumer-create DP backoff --backoff 2,4 --max-deliver 5 \
    --metadata "$P=5s" &&
  inj consumer-create DP meta --ack-wait 2 --metadata "$P=5s" &&
  inj consumer-create DP ok --ack-wait 30 --metadata "$P=5s" &&
  inj consumer-create DP plain --ack-wait 2 &&
  inj consumer-create DP bad --ack-wait 2 --metadata "$P=thirty seconds" &&
  inj consumer-create DP ctl --ack-wait 2 --metadata "$P=$(printf '5s\n\033[2J')" || {
  nl_fail setup/objects "stream or consumers not created (metadata kept?)"
  nl_end
  exit
}
nl_pass setup/objects "7 consumers, the metadata kept by the server"
# info CONSUMER PYTHON-EXPR: a field of the consumer's info (j).
info() {
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" info DP "$1" 2>/dev/null |
    python3 -c "import json,sys; j=json.load(sys.stdin); print($2)"
}
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" publish dp.a --count 240 \
  --rate 2 >"$NL_TMP/pub.out" 2>&1 &
NL_PIDS+=($!)
for c in short backoff meta ok plain bad ctl; do
  "$NL_INJECT" --server "nats://127.0.0.1:$PORT" consume DP "$c" \
    --duration 120 --process-ms 50 >"$NL_TMP/$c.out" 2>&1 &
  NL_PIDS+=($!)
done

nl_start_collectd "<Instance \"dp\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>" 1 || exit 1
polls() { nl_csv_rows dp duration poll 1; }

# onset CONSUMER: the first FAILURE of ACK_WAIT_VIOLATION about it.
onset() {
  nl_wait_notification 30 "severity = FAILURE" \
    "type_instance = ACK_WAIT_VIOLATION," "DP/$1:"
}
for c in short backoff meta; do
  if line=$(onset "$c"); then
    nl_pass "$c/detected" "$(echo "$line" | sed -n 's/.*message = //p' | cut -c1-160)"
  else
    nl_fail "$c/detected" "no ACK_WAIT_VIOLATION for DP/$c"
    continue
  fi
  # Raised at the first poll that saw it: no poll with its value at 0.
  nl_check "$c/first-poll" [ "$(nl_csv_rows dp-DP nats_lens_ack_wait_violation "$c" '$2 + 0 == 0')" = 0 ]
  nl_check "$c/from-declaration" grep -q "from_declaration=1" <<<"$line"
done
# Without a redelivery: every delivery so far was the first of its message.
nl_check short/no-redelivery [ "$(info short 'j["delivered"]["consumer_seq"] - j["delivered"]["stream_seq"]')" = 0 ]
nl_check short/acked [ "$(info short 'j["ack_floor"]["stream_seq"] > 0')" = True ]

# check_fix CONSUMER FIX: the printed fix is FIX; applied, read back with
# the declaration kept, cleared, and clear for 10 more polls.
check_fix() {
  local c=$1 want=$2 line fix readback
  line=$(onset "$c") || return
  fix=$(echo "$line" | sed -n 's/.* fix: \([^;]*\);.*/\1/p')
  nl_check "$c/fix-printed" [ "$fix" = "$want" ]
  if readback=$(nl_apply_fix "$PORT" "$fix" 2>&1); then
    nl_pass "$c/fix-applied" "read back: $(echo $readback)"
  else
    nl_fail "$c/fix-applied" "'$fix' read back: $(echo $readback)"
    return
  fi
  nl_check "$c/declaration-kept" [ "$(info "$c" 'j["config"]["metadata"]["'$P'"]')" = 5s ]
  if nl_wait_notification 30 "severity = OKAY" \
    "type_instance = ACK_WAIT_VIOLATION," "DP/$c " >/dev/null; then
    nl_pass "$c/cleared"
  else
    nl_fail "$c/cleared" "no OKAY after '$fix'"
    return
  fi
  local now
  now=$(polls)
  ten_more() { [ "$(polls)" -ge $((now + 10)) ]; }
  nl_retry 30 ten_more
  local onsets
  onsets=$(nl_notifications "DP/$c:" | grep -cE "severity = (FAILURE|WARNING)")
  nl_check "$c/stays-clear" [ "$onsets" = 1 ]
}
check_fix short "nats consumer edit DP short --wait 8s"
check_fix backoff "nats consumer edit DP backoff --backoff linear --backoff-steps 2 --backoff-min 8s --backoff-max 16s"

# The declaration edited (lowered under ack_wait): cleared at once, not
# after the clearing hold of 30 polls.
before=$(polls)
inj consumer-edit DP meta --metadata "$P=1s"
if nl_wait_notification 30 "severity = OKAY" \
  "type_instance = ACK_WAIT_VIOLATION," "DP/meta " >/dev/null; then
  took=$(($(polls) - before))
  nl_check meta/cleared-at-once [ "$took" -le 3 ]
  echo "# DP/meta cleared $took polls after its declaration was edited"
else
  nl_fail meta/cleared-at-once "no OKAY after the declaration was edited"
fi

# The look-alikes: observed (delivered messages read), silent.
for c in ok plain bad ctl; do
  nl_check "$c/observed" [ "$(nl_csv_last dp-DP nats_lens_delivered "$c" | cut -d. -f1)" -gt 0 ]
  if nl_notifications "DP/$c" | grep -q .; then
    nl_fail "$c/silent" "$(nl_notifications "DP/$c" | head -n 1)"
  else
    nl_pass "$c/silent"
  fi
done
# The unreadable declarations: one warning each over all the polls, and
# no control character of the value in the log.
for c in bad ctl; do
  n=$(grep -c "consumer DP/$c: declaration $P=" "$NL_TMP/collectd.log")
  nl_check "$c/told-once" [ "$n" = 1 ]
done
grep "consumer DP/bad: declaration" "$NL_TMP/collectd.log" | head -n 1 | sed 's/^/# /'
nl_check ctl/printable [ "$(grep -c $'\033' "$NL_TMP/collectd.log")" = 0 ]
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
echo "# $(polls) polls"
nl_end
