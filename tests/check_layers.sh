#!/usr/bin/env bash
# tests/check_layers.sh [ROOT]: checks that each layer of the plugin
# includes only what its layer may use (docs/architecture.md), reading the
# #include lines of ROOT/plugin and ROOT/cli (ROOT defaults to the checkout).
# Prints one "PASS layers/<layer>" or "FAIL layers/<layer>: file: include"
# line per rule and exits 1 when any rule is broken.
#
#   core/   json-c and the C library only: no cnats, OpenSSL, libmicrohttpd,
#           collectd or pthread headers, and no header of another layer.
#           Inside it, each folder uses only the folders below it:
#             model/   (JSON to snapshots, history): model only
#             detect/  (the class registry and detectors): model, detect
#             the engine (core/ itself): model, detect, the engine
#             report/  (events, health, views): all of core
#   jsapi/  adds cnats, OpenSSL and pthreads; core headers; no
#           libmicrohttpd, collectd or http headers.
#   http/   adds libmicrohttpd and pthreads; core headers; no cnats,
#           collectd or jsapi headers.
#   cli/    core and jsapi; no libmicrohttpd, collectd or http headers.
#   glue/   everything; no other layer includes a glue header.
# And no include circle among the modules (a .c with its .h) of core, nor
# among those of glue ("circles/core", "circles/glue").
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

# circles LAYER DIR...: the modules of the folders DIR (each folder's
# headers included by their name, or by "core/..." from another folder)
# must include one another without a circle. A module is a .c file with
# the .h of the same name; tsort names the first circle it finds.
circles() {
  local layer=$1 edges loop
  shift
  edges=$(for dir in "$@"; do
    for f in "$dir"/*.[ch]; do
      [ -e "$f" ] || continue
      from=$(basename "${f%.[ch]}")
      echo "$from $from"
      grep -hoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$f" |
        sed -E 's/.*"([^"]+)".*/\1/' | while read -r inc; do
          to=$(basename "${inc%.h}")
          for d in "$@"; do
            if [ -e "$d/$to.h" ]; then
              echo "$from $to"
              break
            fi
          done
        done
    done
  done)
  loop=$(echo "$edges" | tsort 2>&1 >/dev/null |
    awk '/input contains a loop/ { n++; next } n == 1 { sub(/^tsort: /, ""); print }' |
    tr '\n' ' ')
  if [ -z "$loop" ]; then
    echo "PASS circles/$layer"
  else
    echo "FAIL circles/$layer: modules that include each other: $loop"
    failed=1
  fi
}

others="<nats/|<nats\.h>|<openssl/|<microhttpd\.h>|<pthread\.h>|\"(jsapi|http|glue)/|$collectd"
check core/model "$root/plugin/core/model" \
  "$others|\"core/(detect|report)/|\"core/nl_[a-z_]+\.h\""
check core/detect "$root/plugin/core/detect" \
  "$others|\"core/report/|\"core/nl_[a-z_]+\.h\""
check core/engine "$root/plugin/core" "$others|\"core/report/"
check core/report "$root/plugin/core/report" "$others"
check jsapi "$root/plugin/jsapi" "<microhttpd\.h>|\"(http|glue)/|$collectd"
check http "$root/plugin/http" "<nats/|<nats\.h>|\"(jsapi|glue)/|$collectd"
check cli "$root/cli" "<microhttpd\.h>|\"(http|glue)/|$collectd"
circles core "$root/plugin/core" "$root/plugin/core/model" \
  "$root/plugin/core/detect" "$root/plugin/core/report"
circles glue "$root/plugin/glue"
exit "$failed"
