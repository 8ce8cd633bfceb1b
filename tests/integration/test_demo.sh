#!/usr/bin/env bash
# make demo, the README's first command, as a user runs it (tests/demo.sh):
# it ends by itself, finds all five classes, the healthy consumer raises
# nothing, and every finding line it prints ends on a whole evidence item
# or on ", ..." (never a word cut at collectd's message limit).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin demo_run
out="$NL_TMP/demo.out"
NL_DEMO_SECONDS=150 timeout 240 bash "$NL_ROOT/tests/demo.sh" >"$out" 2>&1
rc=$?
summary=$(grep '^demo: .* classes seen' "$out")
if [ "$rc" = 0 ] && echo "$summary" | grep -q '5 of 5 classes seen'; then
  nl_pass five-classes "${summary#demo: }"
else
  nl_fail five-classes "exit $rc: ${summary:-$(tail -n 3 "$out" | tr '\n' ' ')}"
fi
case $summary in
*'OK/good raised 0 notifications'*) nl_pass healthy-silent ;;
*) nl_fail healthy-silent "$summary" ;;
esac
# Finding lines: "<time>  <SEVERITY>  <CLASS> <where>: fix: <command>; <evidence>".
lines=$(grep -E '^[0-9-]+ [0-9:]+  (FAILURE|WARNING)  ' "$out")
cut=$(echo "$lines" | grep -vE '(=[-+0-9.e]+|, \.\.\.)$')
if [ -n "$lines" ] && [ -z "$cut" ]; then
  nl_pass whole-evidence "$(echo "$lines" | grep -c .) lines"
else
  nl_fail whole-evidence "${cut:-no finding lines}"
fi
nl_end
