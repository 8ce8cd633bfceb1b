#!/usr/bin/env bash
# Configuration errors: real collectd loads the built plugin with one bad
# <Instance> block at a time. Each must give an error line that names the
# instance and the option (or a warning, for an unknown option), collectd
# must refuse the configuration (or, for a warning, run on) and never crash,
# and no secret from the configuration may appear in the output.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin config
D=$NL_TMP/cfg
mkdir -p "$D/plugins"
cp /usr/lib/collectd/logfile.so "$NL_PLUGIN" "$D/plugins/"
URL='URL "nats://127.0.0.1:14699"' # nothing listens; nothing connects here
echo "not a seed" >"$D/garbage.nk"
echo "not a certificate" >"$D/garbage.pem"
cp "$D/garbage.pem" "$D/cert.pem"
SECRET="s3cret-$RANDOM"

# run_conf NAME PLUGIN-BLOCK-BODY: runs collectd for at most 4 s on it.
# Sets OUT (its output) and RC (exit status; 124 when it ran until stopped).
run_conf() {
  cat >"$D/$1.conf" <<EOF
PluginDir "$D/plugins"
BaseDir "$D"
TypesDB "/usr/share/collectd/types.db" "$NL_TYPES"
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File stderr
</Plugin>
LoadPlugin nats_lens
<Plugin nats_lens>
$2
</Plugin>
EOF
  OUT=$(timeout -s TERM 4 ${NL_COLLECTD_WRAPPER:-} collectd -f \
    -C "$D/$1.conf" 2>&1)
  RC=$?
  echo "$OUT" >"$NL_TMP/$1.out"
}

# expect NAME BLOCK PATTERN...: collectd refuses the configuration with a
# line matching every pattern (fixed strings).
expect() {
  local name=$1 block=$2 line
  shift 2
  run_conf "$name" "$block"
  line=$(echo "$OUT" | grep 'nats_lens plugin' | nl_grep_all "$@" | head -n 1)
  if [ -z "$line" ]; then
    nl_fail "$name" "no line with: $*; got: $(echo "$OUT" | grep -m2 nats_lens)"
  elif [ "$RC" -eq 0 ] || [ "$RC" -eq 124 ] || [ "$RC" -gt 128 ]; then
    nl_fail "$name" "collectd exit status $RC (expected a refused configuration)"
  elif echo "$OUT" | grep -qF "$SECRET"; then
    nl_fail "$name" "a secret was logged"
  else
    nl_pass "$name" "${line#*] }"
  fi
}
inst() { printf '<Instance "%s">\n%s\n</Instance>' "$1" "$2"; }

expect no-url "$(inst a 'Timeout 1')" 'Instance "a"' 'option URL is missing'
expect bad-url "$(inst b 'URL "http://127.0.0.1:4222"')" 'Instance "b"' \
  'option URL "http://127.0.0.1:4222" is not a NATS URL'
expect url-number "$(inst c 'URL 4222')" 'Instance "c"' 'option "URL"'
expect timeout-negative "$(inst d "$URL
Timeout -3")" 'Instance "d"' 'option Timeout needs 0.01 to 600 seconds'
expect timeout-huge "$(inst e "$URL
Timeout 1e9")" 'Instance "e"' 'option Timeout needs 0.01 to 600 seconds'
expect timeout-tiny "$(inst e2 "$URL
Timeout 0.0004")" 'Instance "e2"' 'option Timeout needs 0.01 to 600 seconds'
expect timeout-text "$(inst f "$URL
Timeout \"fast\"")" 'Instance "f"' 'Timeout'
expect interval-negative "$(inst g "$URL
Interval -1")" 'Instance "g"' 'option "Interval" is invalid'
expect factor-huge "$(inst h "$URL
MissingProgressFactor 1000")" 'Instance "h"' 'option MissingProgressFactor'
expect declaration-value "$(inst sd1 "$URL
StreamDeclaration \"AUDIT_*\" \"full_ok\" \"maybe\"")" 'Instance "sd1"' \
  'StreamDeclaration "AUDIT_*" "full_ok": full_ok needs true or false'
expect declaration-two-values "$(inst sd2 "$URL
StreamDeclaration \"AUDIT_*\" \"full_ok\"")" 'Instance "sd2"' \
  'StreamDeclaration needs three strings'
expect values-limit-negative "$(inst vl "$URL
ConsumerValuesLimit -5")" 'Instance "vl"' 'option ConsumerValuesLimit needs a whole number'
expect threshold-zero "$(inst i "$URL
AckWaitMinIntervals 0")" 'Instance "i"' 'option AckWaitMinIntervals'
expect password-alone "$(inst j "$URL
Password \"$SECRET\"")" 'Instance "j"' 'option Password needs option User'
expect user-and-token "$(inst k "$URL
User \"u\"
Password \"$SECRET\"
Token \"$SECRET\"")" 'Instance "k"' 'options User and Token exclude each other'
expect creds-and-nkey "$(inst l "$URL
Credentials \"$D/garbage.nk\"
NKeySeed \"$D/garbage.nk\"")" 'Instance "l"' \
  'options Credentials and NKeySeed exclude each other'
expect creds-missing "$(inst m "$URL
Credentials \"$D/none.creds\"")" 'Instance "m"' \
  "option Credentials: cannot read \"$D/none.creds\""
expect nkey-missing "$(inst n "$URL
NKeySeed \"$D/none.nk\"")" 'Instance "n"' 'option NKeySeed: cannot read'
expect nkey-garbage "$(inst o "$URL
NKeySeed \"$D/garbage.nk\"")" 'Instance "o"' 'NKeySeed: no user seed'
expect tlsca-missing "$(inst p "$URL
TLSCA \"$D/none.pem\"")" 'Instance "p"' 'option TLSCA: cannot read'
expect tlsca-garbage "$(inst q "$URL
TLSCA \"$D/garbage.pem\"")" 'Instance "q"' 'TLSCA:'
expect tlscert-alone "$(inst r "$URL
TLSCert \"$D/cert.pem\"")" 'Instance "r"' 'options TLSCert and TLSKey go together'
expect inbox-wildcard "$(inst s "$URL
InboxPrefix \"_INBOX.*\"")" 'Instance "s"' 'InboxPrefix'
expect poll-log-unwritable "$(inst pl "$URL
PollLog \"$D/no/such/dir/polls.jsonl\"")" 'Instance "pl"' \
  "option PollLog: cannot open poll log \"$D/no/such/dir/polls.jsonl\""
expect account-without-system "$(inst ac "$URL
Account \"A*\"")" 'Instance "ac"' 'need SystemAccount true'
expect account-advisories-without-system "$(inst aa "$URL
AccountAdvisories \"A\" \"$D/a.creds\"")" 'Instance "aa"' \
  'AccountAdvisories needs SystemAccount true'
expect account-advisories-args "$(inst ab "$URL
SystemAccount true
AccountAdvisories \"A\"")" 'Instance "ab"' \
  'AccountAdvisories needs an account and a credentials file'
expect account-advisories-no-file "$(inst ad "$URL
SystemAccount true
AccountAdvisories \"A\" \"$D/no/such.creds\"")" 'Instance "ad"' \
  'AccountAdvisories "A"'
expect system-account-poll-log "$(inst sp "$URL
SystemAccount true
PollLog \"$D/polls.jsonl\"")" 'Instance "sp"' \
  'PollLog is not available with SystemAccount true'
expect name-slash "$(inst 'x/y' "$URL")" 'Instance "x/y"' \
  'the name must be 1 to 63 characters'
expect no-name "<Instance>
$URL
</Instance>" 'an Instance block needs exactly one name'
expect duplicate "$(inst dup "$URL")
$(inst dup "$URL")" 'nats_lens/dup' 'already registered'
# "real" and "real-eu" would both write plugin instance "real-eu-...".
expect ambiguous "$(inst real "$URL")
$(inst real-eu "$URL")" 'Instance "real-eu"' 'could not be told from' \
  'Instance "real"'

# The listener's TLS and users (docs/security.md): each bad file, pairing
# or hash refuses the configuration naming the option; a password given in
# clear where the hash goes is refused and never logged.
K=$D/k
mkdir -p "$K"
nl_test_certs "$K" || nl_fail setup/certificates "openssl failed"
openssl pkcs8 -topk8 -v2 aes256 -passout pass:x -in "$K/server.key" \
  -out "$K/encrypted.key" 2>/dev/null
LISTEN='Listen "127.0.0.1" "14698"'
SERVER_TLS="ListenTLSCert \"$K/server.pem\"
ListenTLSKey \"$K/server.key\""
# Hashes of "pw" at cost 10 (accepted) and 4 (too weak).
HASH10='$2b$10$zWoEZffne7SewnvtYFp0NeZgO.6EjbJJGPPI9ieUQsD1J4B82pF9K'
HASH4='$2b$04$......................CZJXs39HZ6odvxM3EvHl/Fh/PsT/WM6'
listen() { inst "$1" "$URL
$LISTEN
$2"; }
expect tls-cert-missing "$(listen t1 "ListenTLSCert \"$D/none.pem\"
ListenTLSKey \"$K/server.key\"")" 'Instance "t1"' \
  "option ListenTLSCert \"$D/none.pem\" cannot be read: No such file"
expect tls-cert-garbage "$(listen t2 "ListenTLSCert \"$D/garbage.pem\"
ListenTLSKey \"$K/server.key\"")" 'Instance "t2"' \
  'option ListenTLSCert' 'holds no PEM certificate'
expect tls-key-garbage "$(listen t3 "ListenTLSCert \"$K/server.pem\"
ListenTLSKey \"$D/garbage.pem\"")" 'Instance "t3"' \
  'option ListenTLSKey' 'holds no PEM private key'
expect tls-key-encrypted "$(listen t4 "ListenTLSCert \"$K/server.pem\"
ListenTLSKey \"$K/encrypted.key\"")" 'Instance "t4"' \
  'option ListenTLSKey' 'an encrypted key is not supported'
expect tls-key-mismatch "$(listen t5 "ListenTLSCert \"$K/server.pem\"
ListenTLSKey \"$K/client.key\"")" 'Instance "t5"' \
  'ListenTLSKey does not match the certificate of ListenTLSCert'
expect tls-client-ca-garbage "$(listen t6 "$SERVER_TLS
ListenClientCA \"$D/garbage.pem\"")" 'Instance "t6"' \
  'option ListenClientCA' 'holds no PEM certificate'
expect tls-cert-alone "$(listen t7 "ListenTLSCert \"$K/server.pem\"")" \
  'Instance "t7"' 'options ListenTLSCert and ListenTLSKey go together'
expect tls-client-ca-alone "$(listen t8 "ListenClientCA \"$K/ca.pem\"")" \
  'Instance "t8"' 'option ListenClientCA needs ListenTLSCert and ListenTLSKey'
expect tls-without-listen "$(inst t9 "$URL
$SERVER_TLS")" 'Instance "t9"' 'need Listen'
expect user-weak-hash "$(listen u1 "ListenUser \"ops\" \"$HASH4\"")" \
  'Instance "u1"' 'ListenUser: the hash of user "ops" has cost 4: too weak'
expect user-short-hash "$(listen u2 "ListenUser \"ops\" \"${HASH10%?}\"")" \
  'Instance "u2"' 'the hash of user "ops" is not a whole bcrypt hash'
expect user-clear-password "$(listen u3 "ListenUser \"ops\" \"$SECRET\"")" \
  'Instance "u3"' 'the hash of user "ops" is not a bcrypt hash'
expect user-twice "$(listen u4 "ListenUser \"ops\" \"$HASH10\"
ListenUser \"ops\" \"$HASH10\"")" 'Instance "u4"' 'user "ops" is given twice'
expect user-colon "$(listen u5 "ListenUser \"a:b\" \"$HASH10\"")" \
  'Instance "u5"' 'user name "a:b" must be 1 to 64 characters without'
expect user-one-value "$(listen u6 "ListenUser \"ops\"")" 'Instance "u6"' \
  'option ListenUser needs a user name and a bcrypt hash'

# An unknown option is a warning naming it and the instance; collectd runs.
run_conf unknown "$(inst u "$URL
Frobnicate 1")"
line=$(echo "$OUT" | grep 'Instance "u": unknown option "Frobnicate" ignored')
if [ -n "$line" ] && [ "$RC" -eq 124 ]; then
  nl_pass unknown-option "${line#*] }; collectd kept running"
else
  nl_fail unknown-option "status $RC; $(echo "$OUT" | grep -m2 nats_lens)"
fi
# Users without TLS: a warning that passwords cross in clear; collectd runs.
run_conf user-plain "$(listen u7 "ListenUser \"ops\" \"$HASH10\"")"
line=$(echo "$OUT" | grep 'Instance "u7": ListenUser without ListenTLSCert')
if [ -n "$line" ] && [ "$RC" -eq 124 ]; then
  nl_pass user-without-tls "${line#*] }; collectd kept running"
else
  nl_fail user-without-tls "status $RC; $(echo "$OUT" | grep -m2 nats_lens)"
fi
# An option outside any Instance block.
run_conf outside "$URL"
if echo "$OUT" | grep -q 'unknown option "URL" ignored (options go inside'; then
  nl_pass outside-instance "warned: options go inside an <Instance> block"
else
  nl_fail outside-instance "$(echo "$OUT" | grep -m2 nats_lens)"
fi
nl_end
