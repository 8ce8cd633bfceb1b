#!/usr/bin/env bash
# Memory: collectd with the plugin under valgrind --leak-check=full, twice,
# for a short and a longer run (NL_VG_POLLS_SHORT, default 8 polls, and
# NL_VG_POLLS_LONG, default 24), against a real nats-server with streams,
# consumers and an active finding (so values, notifications and their meta
# data are made and freed on every poll). One-time allocations of cnats,
# OpenSSL and collectd are the same in both runs; a leak per poll makes
# "definitely lost" grow with the number of polls. Passes when it does not
# grow, and valgrind saw no invalid read or write. The same again for
# SystemAccount mode: a server with a system account and accounts A and B
# holding a throttled consumer each, one Instance reading both through JSZ,
# account A's advisories on a connection of its own (AccountAdvisories),
# and in the same collectd an agent of the server (Scope "server") with a
# Coverage block that watches it (its write and read callbacks).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin valgrind
PORT=$(nl_port NL_PORT_VALGRIND 14650)
SHORT=${NL_VG_POLLS_SHORT:-8}
LONG=${NL_VG_POLLS_LONG:-24}
if ! command -v valgrind >/dev/null; then
  nl_fail setup/valgrind "valgrind is not installed"
  exit 1
fi
# valgrind cannot run an ASan build: under SANITIZE=1 use the plain plugin.
if [ "${NL_SANITIZE:-0}" = 1 ]; then
  make -C "$NL_ROOT" -s plugin/nats_lens.so >"$NL_TMP/make.out" 2>&1 || {
    nl_fail setup/plain-build "$(tail -n 3 "$NL_TMP/make.out")"
    exit 1
  }
  NL_PLUGIN=$NL_ROOT/plugin/nats_lens.so
fi
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }
inj stream-create V --subjects 'v.>' >/dev/null
inj consumer-create V stuck --ack-wait 120 --max-ack-pending 3 >/dev/null
inj consumer-create V idle --ack-wait 30 >/dev/null
inj stream-create W --subjects 'w.>' --max-msgs 10 >/dev/null
inj consumer-create W behind --ack-wait 30 >/dev/null
inj publish v.a --count 20 >/dev/null
inj publish w.a --count 30 >/dev/null
# Three unacked messages hold max_ack_pending for the whole test.
inj consume V stuck --duration 2 --no-ack >/dev/null 2>&1

# run POLLS [MODE]: runs collectd under valgrind until POLLS polls were
# made (MODE "system": the SystemAccount Instance), stops it with SIGTERM
# and sets RESULT to "DEFINITELY_LOST ERRORS POLLS" from its report ("x"
# for what the report lacks).
BLOCK="<Instance \"vg\">
  URL \"nats://127.0.0.1:$PORT\"
  Timeout 2
</Instance>"
run() {
  local polls=$1 n=0 i log=$NL_TMP/vg-$1${2:-}.log block=$BLOCK
  [ "${2:-}" = system ] && block=$SYSTEM_BLOCK
  rm -rf "$NL_TMP/csv"
  NL_COLLECTD_WRAPPER="valgrind --leak-check=full --show-leak-kinds=definite \
    --num-callers=30 --error-exitcode=0 --log-file=$log" \
    nl_start_collectd "$block" 1 || return 1
  for ((i = 0; i < polls * 6 + 60; i++)); do
    n=$(tail -n +2 "$(nl_csv_file vg duration poll)" 2>/dev/null | wc -l)
    [ "$n" -ge "$polls" ] && break
    sleep 0.5
  done
  kill -TERM "$NL_COLLECTD_PID"
  for ((i = 0; i < 120; i++)); do
    kill -0 "$NL_COLLECTD_PID" 2>/dev/null || break
    sleep 0.5
  done
  wait "$NL_COLLECTD_PID" 2>/dev/null
  local lost errors
  lost=$(grep -o 'definitely lost: [0-9,]* bytes' "$log" | tail -n 1 |
    tr -dc 0-9)
  # Memory errors proper (the summary's count also holds the leak records).
  errors=$(grep -cE '== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free|Source and destination overlap)' "$log")
  grep -q 'ERROR SUMMARY' "$log" || errors=x
  RESULT="${lost:-x} ${errors:-x} $n"
}

RESULT="x x 0"
run "$SHORT"
read -r lost1 err1 polls1 <<<"$RESULT"
RESULT="x x 0"
run "$LONG"
read -r lost2 err2 polls2 <<<"$RESULT"
echo "# short run: $polls1 polls, definitely lost $lost1 bytes, $err1 errors"
echo "# long run: $polls2 polls, definitely lost $lost2 bytes, $err2 errors"
if [ "$lost1" = x ] || [ "$lost2" = x ]; then
  nl_fail report "no valgrind leak summary (collectd did not exit cleanly?)"
  tail -n 30 "$NL_TMP"/vg-*.log | sed 's/^/# /'
  nl_end
  exit
fi
if [ "$polls2" -lt $((polls1 + 10)) ]; then
  nl_fail polls "long run made $polls2 polls, short $polls1"
fi
# Allow 1 KiB of noise (thread start-up timing); a leak per poll of even a
# single small string over 10+ more polls shows as more.
if [ "$lost2" -le $((lost1 + 1024)) ]; then
  nl_pass no-growing-leak "definitely lost $lost1 B after $polls1 polls, $lost2 B after $polls2"
else
  nl_fail no-growing-leak "definitely lost $lost1 B after $polls1 polls, $lost2 B after $polls2"
  grep -A 20 'definitely lost in' "$NL_TMP/vg-$LONG.log" | head -n 60 |
    sed 's/^/# /'
fi
if [ "$err1" = 0 ] && [ "$err2" = 0 ]; then
  nl_pass no-memory-errors "valgrind: 0 errors in both runs"
else
  nl_fail no-memory-errors "valgrind errors: $err1 and $err2"
  grep -B 2 -A 15 'Invalid\|uninitialised' "$NL_TMP"/vg-*.log | head -n 60 |
    sed 's/^/# /'
fi
# SystemAccount mode: a throttled consumer in each of accounts A and B of a
# server with a system account.
SPORT=$((PORT + 1))
cat >"$NL_TMP/system.conf" <<EOF
listen: 127.0.0.1:$SPORT
jetstream { store_dir: "$NL_TMP/js-system" }
accounts {
  SYS: { users: [{user: sys, password: sys}] }
  A: { jetstream: enabled, users: [{user: a, password: a}] }
  B: { jetstream: enabled, users: [{user: b, password: b}] }
}
system_account: SYS
EOF
nl_start_server system "$SPORT" -c "$NL_TMP/system.conf" || exit 1
for acc in a b; do
  u="nats://$acc:$acc@127.0.0.1:$SPORT"
  "$NL_INJECT" --server "$u" stream-create V --subjects 'v.>' >/dev/null &&
    "$NL_INJECT" --server "$u" consumer-create V stuck --ack-wait 120 \
      --max-ack-pending 3 >/dev/null &&
    "$NL_INJECT" --server "$u" publish v.a --count 20 >/dev/null &&
    "$NL_INJECT" --server "$u" consume V stuck --duration 2 --no-ack \
      >/dev/null 2>&1
done
SYSTEM_BLOCK="<Instance \"vg\">
  URL \"nats://127.0.0.1:$SPORT\"
  User \"sys\"
  Password \"sys\"
  SystemAccount true
  AccountAdvisories \"A\" \"a\" \"a\"
  Timeout 2
</Instance>
<Instance \"vgagent\">
  URL \"nats://sys:sys@127.0.0.1:$SPORT\"
  SystemAccount true
  Scope \"server\"
  Timeout 2
</Instance>
<Coverage \"vgagent\">
</Coverage>"
RESULT="x x 0"
run "$SHORT" system
read -r lost1 err1 polls1 <<<"$RESULT"
RESULT="x x 0"
run "$LONG" system
read -r lost2 err2 polls2 <<<"$RESULT"
# The agent and its coverage ran: the Coverage block heard the agent.
nl_check system-account/agent-covered [ "$(nl_csv_last vgagent count agents)" = "1.000000" ]
echo "# system account, short run: $polls1 polls, definitely lost $lost1 bytes, $err1 errors"
echo "# system account, long run: $polls2 polls, definitely lost $lost2 bytes, $err2 errors"
if [ "$lost1" != x ] && [ "$lost2" != x ] &&
  [ "$polls2" -ge $((polls1 + 10)) ] && [ "$lost2" -le $((lost1 + 1024)) ]; then
  nl_pass system-account/no-growing-leak "definitely lost $lost1 B after $polls1 polls, $lost2 B after $polls2"
else
  nl_fail system-account/no-growing-leak "definitely lost $lost1 B after $polls1 polls, $lost2 B after $polls2"
  grep -A 20 'definitely lost in' "$NL_TMP/vg-${LONG}system.log" 2>/dev/null |
    head -n 60 | sed 's/^/# /'
fi
if [ "$err1" = 0 ] && [ "$err2" = 0 ]; then
  nl_pass system-account/no-memory-errors "valgrind: 0 errors in both runs"
else
  nl_fail system-account/no-memory-errors "valgrind errors: $err1 and $err2"
  grep -B 2 -A 12 -E '== (Invalid|Conditional|Use of)' "$NL_TMP"/vg-*system.log |
    head -n 60 | sed 's/^/# /'
fi
nl_end
