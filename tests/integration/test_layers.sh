#!/usr/bin/env bash
# The layer rules of the plugin's folders (tests/check_layers.sh) hold for
# this checkout, and the check fails on a copy with one rule broken per
# layer (so it can fail).
set -u
cd "$(dirname "$0")/../.."
tests/check_layers.sh

tmp=$(mktemp -d /tmp/nats-lens-layers.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# broken LAYER FILE INCLUDE: a copy where FILE of LAYER includes INCLUDE is
# refused, and the refusal names that layer.
broken() {
  local layer=$1 file=$2 inc=$3 out
  rm -rf "$tmp/plugin" "$tmp/cli"
  cp -r plugin cli "$tmp/"
  sed -i "1i #include $inc" "$tmp/$file"
  out=$(tests/check_layers.sh "$tmp")
  if [ $? -ne 0 ] && echo "$out" | grep -q "^FAIL layers/$layer: .*$(basename "$file")"; then
    echo "PASS layers/refuses/$layer-$(echo "$inc" | tr -dc 'a-z')"
  else
    echo "FAIL layers/refuses/$layer-$(echo "$inc" | tr -dc 'a-z'): not refused: $(echo "$out" | tr '\n' ' ')"
  fi
}
broken core/engine plugin/core/nl_engine.c '<nats/nats.h>'
broken core/report plugin/core/report/nl_view.c '"jsapi/nl_poll.h"'
broken core/model plugin/core/model/nl_parse.c '"plugin.h"'
# Inside core, a folder includes only the folders below it.
broken core/model plugin/core/model/nl_history.c '"core/detect/nl_classes.h"'
broken core/detect plugin/core/detect/nl_audit.c '"core/nl_engine.h"'
broken core/engine plugin/core/nl_judge.c '"core/report/nl_view.h"'
broken jsapi plugin/jsapi/nl_poll.c '<microhttpd.h>'
broken http plugin/http/nl_route.c '"jsapi/nl_transport.h"'
broken cli cli/nlc_report.c '"utils/common/common.h"'
broken jsapi plugin/jsapi/nl_transport.c '"glue/nl_poller.h"'

# circle LAYER FILE INCLUDE A B: a copy where FILE includes INCLUDE, making
# modules A and B include each other, is refused as circles/LAYER naming
# both.
circle() {
  local layer=$1 file=$2 inc=$3 a=$4 b=$5 out
  rm -rf "$tmp/plugin" "$tmp/cli"
  cp -r plugin cli "$tmp/"
  sed -i "1i #include $inc" "$tmp/$file"
  out=$(tests/check_layers.sh "$tmp")
  if [ $? -ne 0 ] && echo "$out" | grep "^FAIL circles/$layer: " |
    grep -qw "$a" && echo "$out" | grep "^FAIL circles/$layer: " |
    grep -qw "$b"; then
    echo "PASS layers/refuses/circle-$layer-$a-$b"
  else
    echo "FAIL layers/refuses/circle-$layer-$a-$b: not refused: $(echo "$out" | tr '\n' ' ')"
  fi
}
# nl_history.h includes nl_finding.h; nl_judge.c includes nl_stream_store.h;
# nl_instance.h includes nl_poller.h.
circle core plugin/core/model/nl_finding.h '"nl_history.h"' nl_finding nl_history
circle core plugin/core/nl_stream_store.h '"nl_judge.h"' nl_stream_store nl_judge
circle glue plugin/glue/nl_poller.h '"nl_instance.h"' nl_poller nl_instance
