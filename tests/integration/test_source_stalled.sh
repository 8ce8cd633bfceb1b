#!/usr/bin/env bash
# SOURCE_STALLED on a real server: a stream O mirrored by M and sourced by
# SRC, 50 messages in; O is deleted and created again and receives 20 new
# messages. The test waits until both copies have retried on the new O
# (their links report a live consumer again) and checks that neither took
# any of the 20 while their info says lag 0 and no error; then O receives
# 40 more (last sequence 60) and the test waits until the copies took what
# they will: on nats-server 2.9.10 the mirror resumes at its old position
# (its sequence 51 holds the new O's 51st message: the new O's first 50
# never reach it), from 2.10 it resumes at the new O's 21; SRC resumes at
# 21 on every version. The plugin must raise SOURCE_STALLED for M at once
# (the new O below the mirror's position) and for SRC, count the skipped
# messages as the stream's lost ones (M: 50 on 2.9.10, 20 later; SRC: 20),
# and print a fix that the test applies to the server as the nats CLI
# would (each copy created again from its own configuration); the copies
# then hold all 60 messages of the new O, the findings clear and stay
# clear while O receives more.
#
# Healthy twins, observed and silent throughout: an idle origin with a
# mirror and a sourced stream (nothing new to take); a filtered source
# whose filter matches nothing its origin receives (5 msg/s on another
# subject); the production mix's MIRROR pattern (a mirror and a sourced
# stream of an origin at 10 msg/s); and, on a leaf node (JetStream domain
# "leaf") polled by a second instance, a stream that sources an origin of
# the hub (domain "hub") through its API prefix, while the hub is down for
# a moment shorter than the copy's retry (the copy's link goes silent,
# then takes what the origin received meanwhile).
#
# A second cause, across accounts: on a server with the accounts JS and IA
# (polled as IA by a third instance), IA's stream C sources JS's O, a
# backlog of 4000 messages of 1 kB, through the imports of JS's
# $JS.API.CONSUMER.> and delivery subject but without its flow-control
# subject: C takes the first ~1900 and stops with the rest waiting (its
# lag) while its link keeps hearing the heartbeat. The finding names the
# export and import to add (read from the REST API); the test adds exactly
# those to the server's configuration and reloads it: C takes all 4000 and
# the finding clears after its hold.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin source_stalled
nl_pass setup/server "$(nats-server --version)"
BASE=$(nl_port NL_PORT_SOURCE_STALLED 15300)
PORT=$BASE HUB=$((BASE + 1)) HUB_LEAF=$((BASE + 2)) LEAF=$((BASE + 3))
FC=$((BASE + 4)) REST=$((BASE + 5))
nl_start_nats "$PORT" || exit 1
inj() { nl_inject "$PORT" "$@"; }
# info PORT STREAM EXPR: a Python expression of STREAM.INFO's reply j and of
# l, its mirror or first source report.
info() {
  nl_inject "$1" request "\$JS.API.STREAM.INFO.$2" '' 2>/dev/null |
    python3 -c "import json,sys
j=json.load(sys.stdin); l=j.get('mirror') or (j.get('sources') or [{}])[0]
print($3)"
}
create() { # NAME JSON: a stream created by a raw request
  inj request "\$JS.API.STREAM.CREATE.$1" "$2" | grep -q '"error"' && return 1
  return 0
}

# The hub and the leaf node, each its own JetStream domain.
cat >"$NL_TMP/hub.conf" <<EOF
server_name: hub
listen: 127.0.0.1:$HUB
jetstream { store_dir: "$NL_TMP/js-hub", domain: hub }
leafnodes { listen: 127.0.0.1:$HUB_LEAF }
EOF
cat >"$NL_TMP/leaf.conf" <<EOF
server_name: leaf
listen: 127.0.0.1:$LEAF
jetstream { store_dir: "$NL_TMP/js-leaf", domain: leaf }
leafnodes { remotes: [ { url: "nats-leaf://127.0.0.1:$HUB_LEAF" } ], reconnect: 1 }
EOF
nl_start_server hub "$HUB" -c "$NL_TMP/hub.conf" || exit 1
HUB_PID=$NL_SERVER_PID
nl_start_server leaf "$LEAF" -c "$NL_TMP/leaf.conf" || exit 1
# The accounts JS (the origin's) and IA (the copy's). fc_conf EXPORT
# IMPORT: their configuration with one more export in JS and import in IA.
fc_conf() {
  cat >"$NL_TMP/fc.conf" <<EOF
listen: 127.0.0.1:$FC
jetstream { store_dir: "$NL_TMP/js-fc" }
accounts {
  JS {
    jetstream: enabled
    users = [ { user: js, password: js } ]
    exports [
      { service: "\$JS.API.CONSUMER.>" }
      { stream: "RI.DELIVER.SYNC.>" }
      $1
    ]
  }
  IA {
    jetstream: enabled
    users = [ { user: ia, password: ia } ]
    imports [
      { service: { account: JS, subject: "\$JS.API.CONSUMER.>" }, to: "RI.JS.API.CONSUMER.>" }
      { stream: { account: JS, subject: "RI.DELIVER.SYNC.>" } }
      $2
    ]
  }
}
EOF
}
fc_conf "" ""
nl_start_server fc "$FC" -c "$NL_TMP/fc.conf" || exit 1
FC_PID=$NL_SERVER_PID
JS_URL=nats://js:js@127.0.0.1:$FC IA_URL=nats://ia:ia@127.0.0.1:$FC

inj stream-create O --subjects 'o.>' --storage file >/dev/null &&
  create M '{"name":"M","mirror":{"name":"O"}}' &&
  create SRC '{"name":"SRC","sources":[{"name":"O"}]}' &&
  inj stream-create OI --subjects 'oi.>' --storage file >/dev/null &&
  create MI '{"name":"MI","mirror":{"name":"OI"}}' &&
  create SI '{"name":"SI","sources":[{"name":"OI"}]}' &&
  inj stream-create OF --subjects 'of.>' --storage file >/dev/null &&
  create SF '{"name":"SF","sources":[{"name":"OF","filter_subject":"of.b"}]}' &&
  inj stream-create OM --subjects 'om.>' --storage file >/dev/null &&
  create MM '{"name":"MM","mirror":{"name":"OM"}}' &&
  create MS '{"name":"MS","sources":[{"name":"OM"}]}' &&
  inj publish o.a --count 50 >/dev/null &&
  inj publish oi.a --count 10 >/dev/null &&
  inj publish of.b --count 3 >/dev/null || {
  nl_fail setup/objects "streams not created"
  exit 1
}
nl_retry 20 nl_inject "$HUB" request '$JS.API.STREAM.CREATE.OL' \
  '{"name":"OL","subjects":["ol.>"],"storage":"file"}' >/dev/null
nl_retry 20 nl_inject "$LEAF" request '$JS.API.STREAM.CREATE.CL' \
  '{"name":"CL","sources":[{"name":"OL","external":{"api":"$JS.hub.API","deliver":""}}]}' \
  >/dev/null
nl_inject "$HUB" publish ol.a --count 10 >/dev/null
"$NL_INJECT" --server "$JS_URL" stream-create O --subjects 'o.>' \
  --storage file >/dev/null &&
  "$NL_INJECT" --server "$JS_URL" publish o.a --count 4000 --size 1024 \
    >/dev/null &&
  "$NL_INJECT" --server "$IA_URL" request '$JS.API.STREAM.CREATE.C' \
    '{"name":"C","sources":[{"name":"O","external":{"api":"RI.JS.API","deliver":"RI.DELIVER.SYNC"}}]}' \
    >/dev/null || {
  nl_fail setup/accounts "O or C not created"
  exit 1
}
took() { [ "$(info "$1" "$2" "j['state']['messages']")" = "$3" ]; }
nl_check setup/copies-took nl_retry 20 eval 'took $PORT M 50 && took $PORT SRC 50 &&
  took $PORT MI 10 && took $PORT SI 10 && took $PORT SF 3 && took $LEAF CL 10'
# Bounded publishers for the twins: the MIRROR pattern's origin at 10 msg/s
# and the filtered source's origin at 5 msg/s on a subject its filter does
# not match, for at most 3 minutes.
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" publish om.x --count 1800 \
  --rate 10 >"$NL_TMP/om.out" 2>&1 &
NL_PIDS+=($!)
"$NL_INJECT" --server "nats://127.0.0.1:$PORT" publish of.a --count 900 \
  --rate 5 >"$NL_TMP/of.out" 2>&1 &
NL_PIDS+=($!)

nl_start_collectd "<Instance \"ss\">
  URL \"nats://127.0.0.1:$PORT\"
</Instance>
<Instance \"leaf\">
  URL \"nats://127.0.0.1:$LEAF\"
</Instance>
<Instance \"fc\">
  URL \"$IA_URL\"
  Listen \"127.0.0.1\" \"$REST\"
</Instance>" 1 || exit 1
polls() { nl_csv_rows ss duration poll 1; }
after() { [ "$(polls)" -ge "$1" ]; }
nl_check setup/polled nl_retry 30 after 3

# The leaf twin: the hub is stopped and started again (its store kept) once
# the copy's link has been silent for 2 s; the origin then receives 5 more
# messages, which the copy takes.
kill -9 "$HUB_PID"
wait "$HUB_PID" 2>/dev/null
silent_link() { info "$LEAF" CL "l.get('active', 0) >= 2e9" | grep -q True; }
nl_retry 20 silent_link
outage=$(info "$LEAF" CL "round(l.get('active', 0) / 1e9, 1)")
nl_start_server hub "$HUB" -c "$NL_TMP/hub.conf" || exit 1
nl_retry 20 nl_inject "$HUB" publish ol.a --count 5 >/dev/null
if nl_retry 60 took "$LEAF" CL 15; then
  nl_pass twin/leaf-outage "link silent for ${outage} s while the hub was down; CL then took the 5 new messages"
else
  nl_fail twin/leaf-outage "CL did not take the messages after the hub came back"
fi

# The fault.
t0=$(polls)
t_fault=$(date +%s.%N)
inj stream-delete O >/dev/null &&
  inj stream-create O --subjects 'o.>' --storage file >/dev/null &&
  inj publish o.a --count 20 >/dev/null || {
  nl_fail fault/recreated "O not created again"
  exit 1
}
if line=$(nl_wait_notification 30 "SOURCE_STALLED" "stream M:" "origin_last_seq=20"); then
  nl_pass detected/mirror "at poll $(($(polls) - t0)) after the recreation: ${line#*message = }"
else
  nl_fail detected/mirror "no SOURCE_STALLED for M"
fi
# Both copies retried: each heard from a consumer on the new O (within
# 2 s, and after the deletion: the old consumer's last heartbeat ages from
# then), and reports no error. They took none of the 20 and say so
# nowhere.
live() {
  info "$PORT" "$1" "0 <= l.get('active', -1) < min(2e9, ($(date +%s.%N) - $t_fault) * 1e9) and 'error' not in l" |
    grep -q True
}
nl_check fault/retried nl_retry 60 eval 'live M && live SRC'
for s in M SRC; do
  echo "# $s: $(info "$PORT" "$s" "j['state']['messages'], j['state']['first_seq'], j['state']['last_seq'], l")"
done
nl_check fault/none-taken eval 'took $PORT M 50 && took $PORT SRC 50'
nl_check fault/info-silent eval '[ "$(info $PORT M "l[\"lag\"]")/$(info $PORT SRC "l[\"lag\"]")" = 0/0 ]'
if line=$(nl_wait_notification 60 "SOURCE_STALLED" "stream SRC:"); then
  nl_pass detected/sourced "${line#*message = }"
else
  nl_fail detected/sourced "no SOURCE_STALLED for SRC"
fi

# Across accounts: C stopped with messages waiting while its link hears
# the heartbeat; the finding says which export and import are missing.
c_info() {
  "$NL_INJECT" --server "$IA_URL" request '$JS.API.STREAM.INFO.C' '' |
    python3 -c "import json,sys
j=json.load(sys.stdin); l=(j.get('sources') or [{}])[0]
print($1)"
}
if line=$(nl_wait_notification 60 "SOURCE_STALLED" "stream C:" "origin_visible=0"); then
  nl_pass detected/flow-control "${line#*message = }"
else
  nl_fail detected/flow-control "no SOURCE_STALLED for C"
fi
echo "# C: $(c_info "j['state']['messages'], l")"
nl_check flow-control/stopped-waiting eval '[ "$(c_info "j[\"state\"][\"messages\"] < 4000 and l[\"lag\"] > 0 and 0 <= l[\"active\"] < 3e9")" = True ]'
fc_fix=$(curl -s "http://127.0.0.1:$REST/api/violations" | python3 -c '
import json, re, sys
for v in json.load(sys.stdin)["violations"]:
    if v["type"] == "SOURCE_STALLED" and v["stream_name"] == "C":
        r = v["violation"]["recommendation"]
        exp = re.search(r"export (\{ service: \"\$JS\.FC\.>\" \})", r)
        imp = re.search(r"import (\{ service: \{ account: <origin account>, "
                        r"subject: \"\$JS\.FC\.>\" \} \})", r)
        if exp and imp and v["violation"]["fix_command"] == "":
            print(exp.group(1))
            print(imp.group(1).replace("<origin account>", "JS"))
')
if [ "$(echo "$fc_fix" | grep -c .)" = 2 ]; then
  # The server's configuration takes the $ of a subject in a string as it is.
  fc_conf "$(echo "$fc_fix" | sed -n 1p)" "$(echo "$fc_fix" | sed -n 2p)"
  kill -HUP "$FC_PID"
  nl_pass flow-control/fix-applied "$(echo "$fc_fix" | tr '\n' ' ')"
else
  nl_fail flow-control/fix-applied "no export and import in the finding: $(curl -s "http://127.0.0.1:$REST/api/violations" | head -c 600)"
fi
c_took() { [ "$(c_info "j['state']['messages']")" = 4000 ]; }
nl_check flow-control/fixed-took nl_retry 30 c_took

# O passes the mirror's old position; the copies take what they will.
inj publish o.a --count 40 >/dev/null
nl_check fault/resumed nl_retry 60 eval 'took $PORT SRC 90 &&
  [ "$(info $PORT M "j[\"state\"][\"last_seq\"]")" = 60 ]'
m_msgs=$(info "$PORT" M "j['state']['messages']")
src_msgs=$(info "$PORT" SRC "j['state']['messages']")
read -r major minor <<<"$(nl_server_version)"
if [ "$major" -eq 2 ] && [ "$minor" -lt 10 ]; then
  want_m=50 # Resumes at its old position: takes the new O's 51..60.
else
  want_m=20 # Resumes where the new O stood at its retry: takes 21..60.
fi
# What each copy missed of the new O's 60: its messages beyond the old 50.
miss_m=$((60 - (m_msgs - 50))) miss_src=$((60 - (src_msgs - 50)))
echo "# after O reached 60: M holds $m_msgs (missed $miss_m), SRC $src_msgs (missed $miss_src)"
nl_check fault/mirror-resumed [ "$miss_m/$miss_src" = "$want_m/20" ]
lost() { nl_csv_last "ss-$1" nats_lens_lost '' | cut -d. -f1; }
counted() { [ "$(lost M)/$(lost SRC)" = "$miss_m/$miss_src" ]; }
if nl_retry 30 counted; then
  nl_pass lost "counted as lost: M $(lost M), SRC $(lost SRC), as missed"
else
  nl_fail lost "missed M $miss_m and SRC $miss_src, counted M $(lost M), SRC $(lost SRC)"
fi

# The fix each finding printed, applied as the nats CLI would.
for s in M SRC; do
  fix=$(nl_notifications "SOURCE_STALLED" | grep "stream $s:" | head -n 1 |
    sed -n 's/.*fix: \(nats stream info .* --config [^;]*\);.*/\1/p')
  if [ -n "$fix" ] && got=$(nl_apply_fix "$PORT" "$fix"); then
    nl_pass "fix-applied/$s" "$fix: $(echo "$got" | tr '\n' ' ')"
  else
    nl_fail "fix-applied/$s" "printed '${fix:-none}', read back: ${got:-none}"
  fi
done
nl_check fixed/copies-took nl_retry 30 eval 'took $PORT M 60 && took $PORT SRC 60'
for s in M SRC; do
  if nl_wait_notification 20 "SOURCE_STALLED" "stream $s cleared" "OKAY" >/dev/null; then
    nl_pass "cleared/$s"
  else
    nl_fail "cleared/$s" "no NOTIF_OKAY for $s"
  fi
done
# Stays clear while O receives more and the copies take it.
inj publish o.a --count 10 >/dev/null
nl_check fixed/taking nl_retry 30 eval 'took $PORT M 70 && took $PORT SRC 70'
now=$(polls)
nl_retry 30 after $((now + 5))
onsets=$(nl_notifications "SOURCE_STALLED" | grep -v OKAY | grep -c -e "stream M:" -e "stream SRC:")
nl_check stays-clear [ "$onsets" = 2 ]

if nl_wait_notification 60 "SOURCE_STALLED" "stream C cleared" "OKAY" >/dev/null; then
  nl_pass flow-control/cleared
else
  nl_fail flow-control/cleared "no NOTIF_OKAY for C"
fi

# The twins: observed (their copies and origins polled, the busy ones
# grew) and silent.
grew() { [ "$(info "$PORT" "$1" "j['state']['messages']")" -gt "$2" ]; }
nl_check twin/mix-observed eval 'grew MM 100 && grew MS 100'
nl_check twin/filtered-observed eval 'grew OF 50 && took $PORT SF 3'
for s in MI SI SF MM MS; do
  nl_check "twin/$s-polled" [ -n "$(nl_csv_last "ss-$s" nats_lens_lost '')" ]
done
nl_check twin/CL-polled [ -n "$(nl_csv_last leaf-CL nats_lens_lost '')" ]
for s in MI SI SF MM MS CL OI OF OM; do
  if nl_notifications "SOURCE_STALLED" | grep -q "stream $s:"; then
    nl_fail "twin/$s-silent" "$(nl_notifications "stream $s:" | head -n 1)"
  else
    nl_pass "twin/$s-silent"
  fi
done
nl_end
