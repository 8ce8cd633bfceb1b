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
broken core plugin/core/nl_engine.c '<nats/nats.h>'
broken core plugin/core/report/nl_view.c '"jsapi/nl_poll.h"'
broken core plugin/core/model/nl_parse.c '"plugin.h"'
broken jsapi plugin/jsapi/nl_poll.c '<microhttpd.h>'
broken http plugin/http/nl_route.c '"jsapi/nl_transport.h"'
broken cli cli/nlc_report.c '"utils/common/common.h"'
broken jsapi plugin/jsapi/nl_transport.c '"glue/nl_poller.h"'
