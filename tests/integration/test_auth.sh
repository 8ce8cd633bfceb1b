#!/usr/bin/env bash
# Authentication against real nats-servers configured for each method, one
# collectd with one Instance per method:
#   userpass  User/Password;            token   Token;
#   nkey      NKeySeed (a seed file made with the nkeys library);
#   creds     Credentials (operator mode: operator, account and user JWTs
#             signed with the jwt library, account preloaded in the server);
#   mtls      a tls:// URL, TLSCA, TLSCert and TLSKey against a server that
#             requires client certificates (test CA made with openssl);
#   tlsca     a nats:// URL with TLSCA alone, against a TLS server.
# For each: the plugin connects, lists the stream made for it, and reports
# its consumer. A stand-in server (tests/tools/zero_sig_server.py) offers a
# nonce whose NKey signature starts with a zero byte, which cnats 3.4.1
# leaves out of CONNECT: the client must connect on its second attempt
# (nl_nkey_connect, shared by the plugin and nl-inject). Wrong credentials and an untrusted CA give a clear log line
# and no crash. No secret (password, token, seed, JWT, private key) appears
# in collectd's log or output.
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin auth
BASE=$(nl_port NL_PORT_AUTH 14630)
P_UP=$BASE
P_TOKEN=$((BASE + 1))
P_NKEY=$((BASE + 2))
P_CREDS=$((BASE + 3))
P_MTLS=$((BASE + 4))
P_TLS=$((BASE + 5))
P_ZERO=$((BASE + 6))
PASSWORD="pw-SECRET-$RANDOM$RANDOM"
TOKEN="tok-SECRET-$RANDOM$RANDOM"
K=$NL_TMP/keys
mkdir -p "$K"

# NKey seed and JWTs, from the packaged Go libraries.
if ! GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$NL_TMP/gocache" \
  GOFLAGS= go build -o "$K/nl_keygen" "$NL_ROOT/tests/tools/nl_keygen.go" \
  >"$NL_TMP/keygen.out" 2>&1; then
  nl_fail setup/keygen "$(head -c 400 "$NL_TMP/keygen.out")"
  exit 1
fi
"$K/nl_keygen" nkey "$K" && "$K/nl_keygen" operator "$K" || {
  nl_fail setup/keygen "key generation failed"
  exit 1
}

# A test CA, a server certificate for 127.0.0.1, and a client certificate.
nl_test_certs "$K" || {
  nl_fail setup/certificates "openssl failed"
  exit 1
}

server() { # NAME PORT CONFIG-BODY
  cat >"$NL_TMP/$1.conf" <<EOF
listen: 127.0.0.1:$2
jetstream { store_dir: "$NL_TMP/js-$1" }
$3
EOF
  nl_start_server "$1" "$2" -c "$NL_TMP/$1.conf"
}
server userpass "$P_UP" "authorization { users: [ {user: mon, password: \"$PASSWORD\"} ] }" &&
  server token "$P_TOKEN" "authorization { token: \"$TOKEN\" }" &&
  server nkey "$P_NKEY" "authorization { users: [ {nkey: $(cat "$K/user.pub")} ] }" &&
  server creds "$P_CREDS" "include \"keys/operator.conf\"" &&
  server mtls "$P_MTLS" "tls { cert_file: \"$K/server.pem\", key_file: \"$K/server.key\", ca_file: \"$K/ca.pem\", verify: true }" &&
  server tlsca "$P_TLS" "tls { cert_file: \"$K/server.pem\", key_file: \"$K/server.key\" }" ||
  exit 1

# One stream and consumer per server, made through the same method.
setup() { # NAME URL INJECT-AUTH-ARGS...
  local name=$1 url=$2
  shift 2
  "$NL_INJECT" --server "$url" "$@" stream-create "S_$name" \
    --subjects "$name.>" >"$NL_TMP/setup-$name.out" 2>&1 &&
    "$NL_INJECT" --server "$url" "$@" consumer-create "S_$name" "c_$name" \
      >>"$NL_TMP/setup-$name.out" 2>&1 ||
    nl_fail "$name/setup" "$(tail -n 2 "$NL_TMP/setup-$name.out")"
}
setup userpass "nats://mon:$PASSWORD@127.0.0.1:$P_UP"
setup token "nats://$TOKEN@127.0.0.1:$P_TOKEN"
setup nkey "nats://127.0.0.1:$P_NKEY" --nkey "$K/user.nk"
setup creds "nats://127.0.0.1:$P_CREDS" --creds "$K/app.creds"
setup mtls "tls://127.0.0.1:$P_MTLS" --tls-ca "$K/ca.pem" \
  --tls-cert "$K/client.pem" --tls-key "$K/client.key"
setup tlsca "tls://127.0.0.1:$P_TLS" --tls-ca "$K/ca.pem"

nl_start_collectd "<Instance \"userpass\">
  URL \"nats://127.0.0.1:$P_UP\"
  User \"mon\"
  Password \"$PASSWORD\"
</Instance>
<Instance \"token\">
  URL \"nats://127.0.0.1:$P_TOKEN\"
  Token \"$TOKEN\"
</Instance>
<Instance \"nkey\">
  URL \"nats://127.0.0.1:$P_NKEY\"
  NKeySeed \"$K/user.nk\"
</Instance>
<Instance \"creds\">
  URL \"nats://127.0.0.1:$P_CREDS\"
  Credentials \"$K/mon.creds\"
</Instance>
<Instance \"mtls\">
  URL \"tls://127.0.0.1:$P_MTLS\"
  TLSCA \"$K/ca.pem\"
  TLSCert \"$K/client.pem\"
  TLSKey \"$K/client.key\"
</Instance>
<Instance \"tlsca\">
  URL \"nats://127.0.0.1:$P_TLS\"
  TLSCA \"$K/ca.pem\"
</Instance>
<Instance \"badpass\">
  URL \"nats://127.0.0.1:$P_UP\"
  User \"mon\"
  Password \"wrong-$PASSWORD\"
</Instance>
<Instance \"badca\">
  URL \"tls://127.0.0.1:$P_TLS\"
  TLSCA \"$K/other-ca.pem\"
</Instance>
<Instance \"nocert\">
  URL \"tls://127.0.0.1:$P_MTLS\"
  TLSCA \"$K/ca.pem\"
</Instance>" 1 || exit 1
sleep 5

for m in userpass token nkey creds mtls tlsca; do
  v=$(nl_csv_last "$m-S_$m" nats_lens_num_pending "c_$m")
  c=$(nl_csv_last "$m" gauge connected)
  if [ -n "$v" ] && [ "${c%.*}" = 1 ]; then
    nl_pass "$m/connects-and-polls" "consumer S_$m/c_$m reported"
  else
    nl_fail "$m/connects-and-polls" "connected=${c:-none} consumer value=${v:-none}"
  fi
done

# expect_refused INSTANCE PATTERN: a clear error line, no values of streams.
expect_refused() {
  local line
  line=$(grep -m1 "Instance \"$1\"" "$NL_TMP/collectd.log")
  if echo "$line" | grep -qi -e "$2" && [ -z "$(ls "$NL_TMP/csv/nl-test" |
    grep "^nats_lens-$1-")" ]; then
    nl_pass "$1/refused" "$(echo "$line" | cut -d']' -f3- | cut -c1-160)"
  else
    nl_fail "$1/refused" "log: ${line:-none}"
  fi
}
expect_refused badpass "authorization"
expect_refused badca "SSL\|TLS\|certificate"
expect_refused nocert "cannot reach NATS"

# A nonce whose signature starts with a zero byte: refused once, then
# connected with the next nonce.
python3 "$NL_ROOT/tests/tools/zero_sig_server.py" "$P_ZERO" "$K/user.nk" \
  >"$NL_TMP/zero.out" 2>&1 &
NL_PIDS+=($!)
nl_retry 30 grep -q ready "$NL_TMP/zero.out" >/dev/null
out=$(nl_inject "$P_ZERO" --nkey "$K/user.nk" \
  --timeout-ms 500 request zero.x '' 2>&1)
nl_retry 10 grep -q '^first:' "$NL_TMP/zero.out" >/dev/null
seen=$(grep '^first:' "$NL_TMP/zero.out")
if [ "$seen" = "first: nosig, second: sig" ] &&
  ! echo "$out" | grep -q 'cannot connect'; then
  nl_pass nkey/zero-byte-signature "$seen; connected on the second attempt"
else
  nl_fail nkey/zero-byte-signature "${seen:-$(tail -n 2 "$NL_TMP/zero.out")}; $out"
fi

# No secret anywhere in what collectd wrote.
leaks=""
check_secret() { # LABEL TEXT
  [ -n "$2" ] || return
  if grep -rqF -e "$2" "$NL_TMP/collectd.log" "$NL_TMP/collectd.out" \
    "$NL_TMP/csv"; then
    leaks="$leaks $1"
  fi
}
check_secret password "$PASSWORD"
check_secret token "$TOKEN"
check_secret nkey-seed "$(head -n 1 "$K/user.nk")"
check_secret creds-jwt "$(sed -n 2p "$K/mon.creds")"
check_secret creds-seed "$(grep '^SU' "$K/mon.creds")"
check_secret tls-key "$(sed -n 2p "$K/client.key")"
if [ -z "$leaks" ]; then
  nl_pass secrets/not-logged "password, token, seed, JWT, key absent from log, output and values"
else
  nl_fail secrets/not-logged "found:$leaks"
fi
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
