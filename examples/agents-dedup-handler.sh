#!/bin/bash
# agents-dedup-handler.sh: a collectd NotificationExec handler for the
# central collectd of an agent-per-server deployment (docs/agents.md). It
# passes each nats_lens notification on to notify-handler.sh (next to this
# file) at most once per finding, however many agents report it:
#
# - an onset (state "firing") opens the finding, keyed by plugin instance,
#   consumer and class, and is passed on; an onset of a finding already
#   open is dropped. An onset marked takeover (meta takeover "true": the
#   consumer's leader moved and the new leader's agent raised what the old
#   one may have raised already) is the same finding, not a new one;
# - a handover (state "handed_over": the old leader's agent no longer
#   judges the consumer, which is no fix) marks the open finding as moved
#   and is not passed on;
# - a clearing (state "resolved", severity OKAY) closes the finding and is
#   passed on once; a clearing of a finding not open is dropped.
#
# Open findings are kept in STATE_FILE, one "key<TAB>state" line each,
# under a lock. Other notifications go to notify-handler.sh unchanged.
#
# collectd.conf of the central collectd:
#   LoadPlugin exec
#   <Plugin exec>
#     NotificationExec "nobody" "/usr/local/lib/nats-lens/agents-dedup-handler.sh" "/var/log/nats-lens/notifications.jsonl" "/var/lib/nats-lens/open-findings"
#   </Plugin>
#
# Usage: agents-dedup-handler.sh [OUTPUT_FILE [STATE_FILE]]. Exit status as
# notify-handler.sh's.
set -u
export LC_ALL=C
out=${1:-/var/log/nats-lens/notifications.jsonl}
state_file=${2:-/var/lib/nats-lens/open-findings}
forward="$(dirname "$0")/notify-handler.sh"

# The whole notification, then the fields the decision needs.
input=$(cat)
field() { # NAME: the value of header or meta line "NAME: value"
  printf '%s\n' "$input" | sed -n "s/^$1: //p" | head -n 1
}
plugin=$(field Plugin)
[ "$plugin" = nats_lens ] || {
  printf '%s\n' "$input" | "$forward" "$out"
  exit
}
# collectd's network plugin carries no meta fields: on the central
# collectd the agents' notifications hold only the header and the message,
# "<CLASS> <stream>/<consumer>[ (account A)][ (takeover)]: fix: ...",
# "... cleared...", "... handed over: ...". The meta fields are used where
# present (a handler on the agent itself), the message otherwise.
message=$(printf '%s\n' "$input" | sed -n '/^$/,$p' | sed '1d' | head -n 1)
state=$(field state)
if [ -z "$state" ]; then
  case $message in
  *" handed over: "*) state=handed_over ;;
  *) [ "$(field Severity)" = OKAY ] && state=resolved || state=firing ;;
  esac
fi
# The finding: plugin instance, the message's "<stream>/<consumer>" (or
# "stream <stream>", which a stream's finding about one consumer follows
# with " (consumer <consumer>)"), and the class.
where=$(printf '%s\n' "$message" | awk '{ print ($2 == "stream" ? "stream " $3 : $2) }')
key="$(field PluginInstance)/${where%:}/$(field TypeInstance)"

if ! exec 8>>"$state_file.lock"; then
  echo "agents-dedup-handler.sh: cannot open $state_file.lock" >&2
  exit 1
fi
command -v flock >/dev/null && flock 8
touch "$state_file" || exit 1
open=$(awk -F '\t' -v k="$key" '$1 == k { print $2 }' "$state_file")
# set_state STATE: records key as STATE ("" removes it).
set_state() {
  awk -F '\t' -v k="$key" '$1 != k' "$state_file" >"$state_file.new" &&
    { [ -z "$1" ] || printf '%s\t%s\n' "$key" "$1" >>"$state_file.new"; } &&
    mv "$state_file.new" "$state_file"
}
pass=0
case $state in
firing)
  # An onset of a finding open (or moved) is the same finding: a takeover
  # after a leader move, or a repeat.
  [ -z "$open" ] && pass=1
  set_state open
  ;;
handed_over)
  [ -n "$open" ] && set_state moved
  ;;
resolved)
  [ -n "$open" ] && pass=1 && set_state ""
  ;;
*) pass=1 ;;
esac
flock -u 8 2>/dev/null
[ $pass = 1 ] || exit 0
printf '%s\n' "$input" | "$forward" "$out"
