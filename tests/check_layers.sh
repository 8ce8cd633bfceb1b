#!/usr/bin/env bash
# tests/check_layers.sh [ROOT]: checks that each layer of the plugin
# includes only what its layer may use (docs/architecture.md), reading the
# #include lines of ROOT/plugin and ROOT/cli (ROOT defaults to the checkout).
# Prints one "PASS layers/<layer>" or "FAIL layers/<layer>: file: include"
# line per layer and exits 1 when any rule is broken.
#
#   core/   json-c and the C library only: no cnats, OpenSSL, libmicrohttpd,
#           collectd or pthread headers, and no header of another layer.
#   jsapi/  adds cnats, OpenSSL and pthreads; core headers; no
#           libmicrohttpd, collectd or http headers.
#   http/   adds libmicrohttpd and pthreads; core headers; no cnats,
#           collectd or jsapi headers.
#   cli/    core and jsapi; no libmicrohttpd, collectd or http headers.
#   glue/   everything; no other layer includes a glue header.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
collectd='"(collectd|plugin|configfile|utils_complain|utils_cache)\.h"|"utils/|"daemon/|"liboconfig/'
failed=0

# check LAYER DIR REGEX: every #include line of DIR's .c and .h files that
# matches REGEX (extended) breaks LAYER's rule.
check() {
  local layer=$1 dir=$2 bad=$3 hits
  hits=$(grep -HnE '^[[:space:]]*#[[:space:]]*include' "$dir"/*.[ch] 2>/dev/null |
    grep -E "$bad")
  if [ -z "$hits" ]; then
    echo "PASS layers/$layer"
  else
    echo "FAIL layers/$layer: $(echo "$hits" | sed "s#^$root/##" | head -n 5 | tr '\n' ';')"
    failed=1
  fi
}

check core "$root/plugin/core" \
  "<nats/|<nats\.h>|<openssl/|<microhttpd\.h>|<pthread\.h>|\"(jsapi|http|glue)/|$collectd"
check jsapi "$root/plugin/jsapi" "<microhttpd\.h>|\"(http|glue)/|$collectd"
check http "$root/plugin/http" "<nats/|<nats\.h>|\"(jsapi|glue)/|$collectd"
check cli "$root/cli" "<microhttpd\.h>|\"(http|glue)/|$collectd"
exit "$failed"
