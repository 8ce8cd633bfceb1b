#!/bin/bash
# notify-handler.sh: a collectd NotificationExec handler for nats_lens.
#
# collectd's exec plugin starts it once per notification and writes the
# notification to its standard input (collectd-exec(5)): header lines
# ("Severity: FAILURE", "Time: 1700000000.123", "Host:", "Plugin:",
# "PluginInstance:", "Type:", "TypeInstance:"), then one "name: value" line
# per meta field, a blank line, and the message. This handler appends the
# notification as one JSON line to OUTPUT_FILE:
#
#   {"time":1700000000.123,"severity":"WARNING","host":"web1",
#    "plugin":"nats_lens","plugin_instance":"prod-ORDERS","type":"",
#    "type_instance":"MAX_PENDING_THROTTLE","message":"...",
#    "meta":{"instance":"prod","class":"MAX_PENDING_THROTTLE",
#            "stream":"ORDERS","consumer":"billing","state":"firing",
#            "fix_command":"nats consumer edit ...","num_pending":45,...}}
#
# An onset has severity FAILURE (critical classes) or WARNING and meta
# state "firing"; the clearing has severity OKAY and state "resolved".
# Notifications of other plugins are ignored (exit 0).
#
# collectd.conf (the exec plugin refuses to run handlers as root):
#   LoadPlugin exec
#   <Plugin exec>
#     NotificationExec "nobody" "/usr/local/lib/nats-lens/notify-handler.sh" "/var/log/nats-lens/notifications.jsonl"
#   </Plugin>
# The user (nobody here) must be able to read and execute this file and
# write OUTPUT_FILE's directory:
#   install -d -o nobody /var/log/nats-lens
#
# Usage: notify-handler.sh [OUTPUT_FILE]  (default
# /var/log/nats-lens/notifications.jsonl). Exit status 0 when the line was
# written or the notification ignored, 1 when OUTPUT_FILE cannot be written
# or the input is not a notification.
set -u
export LC_ALL=C
out=${1:-/var/log/nats-lens/notifications.jsonl}

# json_string TEXT: TEXT as a JSON string (quotes, backslashes and control
# characters escaped; other bytes kept as they are).
json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  s=${s//[$'\001'-$'\037']/}
  printf '"%s"' "$s"
}

# json_value TEXT: a JSON number when TEXT is a finite number (collectd
# writes meta numbers as 4.500000e+01; this prints 45), else a string.
json_value() {
  local n
  if [[ $1 =~ ^[-+]?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$ ]] &&
    printf -v n '%.15g' "$1" 2>/dev/null; then
    printf '%s' "$n"
  else
    json_string "$1"
  fi
}

# The header, then the meta fields up to the blank line.
declare -A head=()
meta=""
in_meta=0
while IFS= read -r line; do
  line=${line%$'\r'}
  [ -z "$line" ] && break
  key=${line%%: *}
  value=${line#*: }
  [ "$key" = "$line" ] && value=""
  case "$in_meta:$key" in
  0:Severity | 0:Time | 0:Host | 0:Plugin | 0:PluginInstance | 0:Type | 0:TypeInstance)
    head[$key]=$value
    ;;
  *)
    in_meta=1
    # Evidence fields are numbers; names and texts stay strings.
    case "$key" in
    instance | class | severity | stream | consumer | state | description | \
      fix_command | recommendation)
      meta+="${meta:+,}$(json_string "$key"):$(json_string "$value")"
      ;;
    *) meta+="${meta:+,}$(json_string "$key"):$(json_value "$value")" ;;
    esac
    ;;
  esac
done
# The message: the rest of the input (normally one line).
message=""
while IFS= read -r line || [ -n "$line" ]; do
  message+="${message:+$'\n'}${line%$'\r'}"
done

if [ -z "${head[Severity]:-}" ] || [ -z "${head[Time]:-}" ]; then
  echo "notify-handler.sh: the input is not a collectd notification" \
    "(no Severity or Time line)" >&2
  exit 1
fi
[ "${head[Plugin]:-}" = nats_lens ] || exit 0

time=${head[Time]}
[[ $time =~ ^[0-9]+(\.[0-9]+)?$ ]] || time=$(json_string "$time")
json="{\"time\":$time"
json+=",\"severity\":$(json_string "${head[Severity]}")"
json+=",\"host\":$(json_string "${head[Host]:-}")"
json+=",\"plugin\":$(json_string "${head[Plugin]}")"
json+=",\"plugin_instance\":$(json_string "${head[PluginInstance]:-}")"
json+=",\"type\":$(json_string "${head[Type]:-}")"
json+=",\"type_instance\":$(json_string "${head[TypeInstance]:-}")"
json+=",\"message\":$(json_string "$message")"
json+=",\"meta\":{$meta}}"

# collectd runs one handler per notification, several at once: append the
# whole line in one write, under a lock where flock(1) is installed.
if ! exec 9>>"$out"; then
  echo "notify-handler.sh: cannot append to $out" >&2
  exit 1
fi
command -v flock >/dev/null && flock 9
printf '%s\n' "$json" >&9
