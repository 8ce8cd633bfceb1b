#!/usr/bin/env bash
# The listener's protection (docs/security.md), on real collectd loading the
# built plugin over a real nats-server, with a test CA made by openssl and
# bcrypt hashes made by Python's bcrypt (python3-bcrypt):
# - instance "dashboard" is examples/collectd/listen-tls.conf as shipped
#   (its paths, URL and port pointed at the test's): HTTPS, client
#   certificates of the test CA (mutual TLS) and user "ops";
# - instance "web": HTTPS and two users, without client certificates.
# curl, verifying the server against the test CA: every path but /healthz
# answers 401 with a Basic challenge without credentials, with a wrong
# password, an unknown user, a malformed header or another scheme, and 200
# with each user's; /healthz answers anyone with its status alone, and a
# user with everything; plain HTTP to the HTTPS port gets no HTTP answer; a
# TLS 1.1 client is refused (the same client gets TLS 1.1 from openssl
# s_server), TLS 1.2 and 1.3 are served. Mutual TLS: 403 without a client certificate or with one of
# another CA, /healthz included; a client certificate without a password is
# still 401. Headless Chromium, trusting the test CA (an NSS database in its
# home) and sending a user's credentials, loads the dashboard over HTTPS
# with its streams; without the credentials, or without the CA, it shows
# no dashboard. The 20 requests of each kind are
# timed and reported (remembered credentials against bcrypt checks).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin http_tls
PORT=$(nl_port NL_PORT_HTTP_TLS_NATS 14420)
HTTP=$(nl_port NL_PORT_HTTP_TLS 14430) # dashboard: HTTP, web: HTTP + 1
WEB=$((HTTP + 1))
K=$NL_TMP/k
mkdir -p "$K"
nl_test_certs "$K" || {
  nl_fail setup/certificates "openssl failed"
  exit 1
}
# bcrypt_hash PASSWORD: a bcrypt hash of cost 10.
bcrypt_hash() {
  /usr/bin/python3 -c 'import bcrypt, sys
print(bcrypt.hashpw(sys.argv[1].encode(), bcrypt.gensalt(10)).decode())' "$1"
}
OPS_PW="ops-$RANDOM-pw"
DEV_PW="dev:with:colons"
OPS_HASH=$(bcrypt_hash "$OPS_PW") && DEV_HASH=$(bcrypt_hash "$DEV_PW") || {
  nl_fail setup/bcrypt "no bcrypt hash (python3-bcrypt)"
  exit 1
}
EXAMPLE_PW=change-me # the password of the example's hash

nl_start_nats "$PORT" || exit 1
nl_inject "$PORT" stream-create ORDERS --subjects 'orders.>' >/dev/null &&
  nl_inject "$PORT" consumer-create ORDERS worker >/dev/null ||
  nl_fail setup/stream "stream ORDERS not made"
example=$(sed -n '/^<Plugin nats_lens>/,/^<\/Plugin>/p' \
  "$NL_ROOT/examples/collectd/listen-tls.conf" | sed -e '1d;$d' \
  -e "s|URL \"[^\"]*\"|URL \"nats://127.0.0.1:$PORT\"|" \
  -e "s|Listen \"[^\"]*\" \"[^\"]*\"|Listen \"127.0.0.1\" \"$HTTP\"|" \
  -e "s|/etc/collectd/nats-lens/web.pem|$K/server.pem|" \
  -e "s|/etc/collectd/nats-lens/web.key|$K/server.key|" \
  -e "s|/etc/collectd/nats-lens/clients-ca.pem|$K/ca.pem|")
nl_start_collectd "$example
<Instance \"web\">
  URL \"nats://127.0.0.1:$PORT\"
  Listen \"127.0.0.1\" \"$WEB\"
  ListenTLSCert \"$K/server.pem\"
  ListenTLSKey \"$K/server.key\"
  ListenUser \"ops\" \"$OPS_HASH\"
  ListenUser \"dev\" \"$DEV_HASH\"
</Instance>" 1 || exit 1
for want in "https://127.0.0.1:$HTTP/ (client certificates required)" \
  "https://127.0.0.1:$WEB/"; do
  if grep -qF "REST API and dashboard on $want" "$NL_TMP/collectd.log"; then
    nl_pass "started/${want%% *}" "$want"
  else
    nl_fail "started/${want%% *}" "no line \"$want\""
  fi
done
# The streams once the first polls are in.
for ((i = 0; i < 50; i++)); do
  curl -s --cacert "$K/ca.pem" -u "ops:$OPS_PW" "https://127.0.0.1:$WEB/api/streams" |
    grep -q '"ORDERS"' && break
  sleep 0.2
done

# get NAME URL CURL-ARGS...: saves headers and body as $NL_TMP/NAME.{h,b},
# verifying the server against the test CA; prints the status code (000
# when no HTTP answer came).
get() {
  local name=$1 url=$2
  shift 2
  curl -s --cacert "$K/ca.pem" -o "$NL_TMP/$name.b" -D "$NL_TMP/$name.h" \
    --max-time 5 -w '%{http_code}' "$@" "$url"
}
W=https://127.0.0.1:$WEB
PATHS="/ /api/violations /api/streams /api/history/ORDERS/worker /nope"

# Without credentials: 401 and the challenge, on every path but /healthz.
bad=
for p in $PATHS; do
  code=$(get anon "$W$p")
  [ "$code" = 401 ] && grep -qi '^WWW-Authenticate: Basic realm="nats-lens"' \
    "$NL_TMP/anon.h" || bad="$bad $p:$code"
done
if [ -z "$bad" ]; then
  nl_pass anonymous/401 "$(wc -w <<<"$PATHS") paths, each with a Basic challenge"
else
  nl_fail anonymous/401 "$bad"
fi
# Wrong credentials of every kind.
bad=
for cred in ops:wrong ops: "nobody:$OPS_PW" "OPS:$OPS_PW" "dev:$OPS_PW"; do
  code=$(get wrong "$W/api/violations" -u "$cred")
  [ "$code" = 401 ] || bad="$bad [$cred]:$code"
done
for header in "Basic !!!" "Bearer b3BzOnB3" "Basic b3Bz"; do
  code=$(get wrong "$W/api/violations" -H "Authorization: $header")
  [ "$code" = 401 ] || bad="$bad [$header]:$code"
done
if [ -z "$bad" ]; then
  nl_pass wrong/401 "8 kinds of wrong credentials"
else
  nl_fail wrong/401 "$bad"
fi
# Each user's credentials: every path answers.
bad=
for cred in "ops:$OPS_PW" "dev:$DEV_PW"; do
  for p in / /api/violations /api/streams /api/history/ORDERS/worker; do
    code=$(get user "$W$p" -u "$cred")
    [ "$code" = 200 ] || bad="$bad ${cred%%:*}$p:$code"
  done
done
python3 -m json.tool "$NL_TMP/user.b" >/dev/null || bad="$bad history-not-json"
if [ -z "$bad" ]; then
  nl_pass users/200 "2 users x 4 paths"
else
  nl_fail users/200 "$bad"
fi
# /healthz: the status to anyone, the rest to a user.
code=$(get health "$W/healthz")
keys=$(python3 -c 'import json,sys; print(",".join(sorted(json.load(open(sys.argv[1])))))' \
  "$NL_TMP/health.b" 2>/dev/null)
code_user=$(get health_user "$W/healthz" -u "ops:$OPS_PW")
if [ "$code" = 200 ] && [ "$keys" = generated_at,status ] &&
  [ "$code_user" = 200 ] && grep -q '"polls"' "$NL_TMP/health_user.b"; then
  nl_pass healthz/open "anonymous: $keys; a user gets polls and the rest"
else
  nl_fail healthz/open "anonymous $code [$keys], user $code_user $(head -c 200 "$NL_TMP/health_user.b")"
fi
# Plain HTTP to the HTTPS port: no HTTP answer (the same port serves HTTPS,
# as shown above).
code=$(curl -s -o /dev/null --max-time 5 -w '%{http_code}' "http://127.0.0.1:$WEB/healthz")
if [ "$code" = 000 ]; then
  nl_pass plain-http/refused "no HTTP answer on the HTTPS port"
else
  nl_fail plain-http/refused "status $code"
fi
# TLS versions, one client per version (OpenSSL at security level 0, so
# that it offers TLS 1.1 at all). The listener must refuse 1.1 (it closes
# the connection) and serve 1.2 and 1.3; the same client is served TLS 1.1
# by openssl s_server, so the refusal is the listener's.
# tls_client PORT VERSION...: one line "VERSION served|refused WHAT" each.
tls_client() {
  python3 -W ignore::DeprecationWarning - "$K/ca.pem" "$@" <<'PY'
import socket, ssl, sys
for name in sys.argv[3:]:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(sys.argv[1])
    ctx.minimum_version = ctx.maximum_version = getattr(ssl.TLSVersion, name)
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    try:
        with socket.create_connection(("127.0.0.1", int(sys.argv[2])), 5) as s:
            with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
                print(name, "served", t.version())
    except ssl.SSLError as e:
        print(name, "refused", e.reason)
PY
}
versions=$(tls_client "$WEB" TLSv1_1 TLSv1_2 TLSv1_3)
OLD=$((HTTP + 2))
openssl s_server -accept "$OLD" -cert "$K/server.pem" -key "$K/server.key" \
  -tls1_1 -cipher 'DEFAULT:@SECLEVEL=0' -www >/dev/null 2>&1 &
NL_PIDS+=($!)
nl_wait_port "$OLD" 5
control=$(tls_client "$OLD" TLSv1_1)
if echo "$versions" | grep -q '^TLSv1_1 refused' &&
  echo "$versions" | grep -q '^TLSv1_2 served TLSv1.2$' &&
  echo "$versions" | grep -q '^TLSv1_3 served TLSv1.3$' &&
  [ "$control" = "TLSv1_1 served TLSv1.1" ]; then
  nl_pass tls/versions "$(echo "$versions" | tr '\n' ';') openssl s_server: $control"
else
  nl_fail tls/versions "$(echo "$versions" | tr '\n' ';') openssl s_server: $control"
fi

# Mutual TLS (the example's instance).
D=https://127.0.0.1:$HTTP
CLIENT=(--cert "$K/client.pem" --key "$K/client.key")
OTHER=(--cert "$K/other-client.pem" --key "$K/other-client.key")
c_none=$(get m1 "$D/api/violations" -u "ops:$EXAMPLE_PW")
c_other=$(get m2 "$D/api/violations" -u "ops:$EXAMPLE_PW" "${OTHER[@]}")
c_health=$(get m3 "$D/healthz")
c_nopw=$(get m4 "$D/api/violations" "${CLIENT[@]}")
c_ok=$(get m5 "$D/api/violations" -u "ops:$EXAMPLE_PW" "${CLIENT[@]}")
c_page=$(get m6 "$D/" -u "ops:$EXAMPLE_PW" "${CLIENT[@]}")
got="no certificate $c_none, other CA $c_other, healthz without $c_health, \
certificate without password $c_nopw, both $c_ok, page $c_page"
if [ "$c_none" = 403 ] && [ "$c_other" = 403 ] && [ "$c_health" = 403 ] &&
  [ "$c_nopw" = 401 ] && [ "$c_ok" = 200 ] && [ "$c_page" = 200 ]; then
  nl_pass mtls "$got"
else
  nl_fail mtls "$got"
fi

# Time of 20 requests with remembered credentials, and of 20 with a wrong
# password (a bcrypt check each): reported, not asserted.
ms() {
  local t0 i
  t0=$(nl_now_ms)
  for ((i = 0; i < 20; i++)); do get t "$W/api/violations" "$@" >/dev/null; done
  echo $(($(nl_now_ms) - t0))
}
nl_pass timing "20 requests: $(ms -u "ops:$OPS_PW") ms with a user's \
credentials, $(ms -u ops:wrong) ms with a wrong password"

# Headless Chromium, trusting the test CA through an NSS database.
PROBE=$NL_ROOT/tests/tools/browser_probe.py
mkdir -p "$NL_TMP/home/.pki/nssdb" "$NL_TMP/untrusting"
certutil -N -d "sql:$NL_TMP/home/.pki/nssdb" --empty-password &&
  certutil -A -d "sql:$NL_TMP/home/.pki/nssdb" -n nl-test-ca -t C,, \
    -i "$K/ca.pem" || nl_fail setup/nssdb "certutil failed (libnss3-tools)"
out=$(HOME=$NL_TMP/home NL_BROWSER_AUTH="ops:$OPS_PW" python3 "$PROBE" "$W/" \
  1400 900 "document.querySelector('#streams .stream')" \
  "location.protocol + ' ' + document.querySelector('#streams').innerText.indexOf('ORDERS')" \
  "$NL_TMP/dashboard-https.png")
case $out in
'"https: '[0-9]*) nl_pass browser/dashboard "loaded over HTTPS with its streams: $out" ;;
*) nl_fail browser/dashboard "$out" ;;
esac
# Each without one of the two: headless Chromium cannot ask for a password
# (it ends the 401 navigation on its error page) nor accept an unknown CA.
# blocked NAME HOME AUTH: passes when the page is not the dashboard.
blocked() {
  out=$(HOME=$2 NL_BROWSER_AUTH=$3 python3 "$PROBE" "$W/" 1400 900 \
    "document.readyState === 'complete'" \
    "location.href + ' ' + Boolean(document.querySelector('#streams'))")
  case $out in
  *' false"') nl_pass "browser/$1" "no dashboard: $out" ;;
  *) nl_fail "browser/$1" "$out" ;;
  esac
}
blocked no-credentials "$NL_TMP/home" ""
blocked untrusted-ca "$NL_TMP/untrusting" "ops:$OPS_PW"
nl_end
