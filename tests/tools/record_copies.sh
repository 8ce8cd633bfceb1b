#!/bin/bash
# Records the STREAM.LIST replies of a mirror and sourced streams whose
# origin is deleted and created again, from a fresh local nats-server
# (file store in a temporary directory, 127.0.0.1, a free port unless PORT
# is set). Streams: FX_ORIGIN (subjects fx.origin.>, 45 messages on
# fx.origin.a and 5 on fx.origin.b), FX_MIRROR (its mirror), FX_SOURCED
# (sources it) and FX_FILTERED (sources its fx.origin.b only).
#
#   stream_list_copies.json            all copies took the 50 messages
#   stream_list_copies_missing.json    FX_ORIGIN deleted 8 s before: each
#                                      copy reports its error
#   stream_list_copies_recreated.json  FX_ORIGIN created again and 20
#                                      messages published on fx.origin.a,
#                                      1 s before
#   stream_list_copies_later.json      the same 25 s later: the copies have
#                                      retried on the new origin
#
# Usage: tests/tools/record_copies.sh OUTDIR   (tests/fixtures/<version>)
#   NATS_SERVER  the nats-server binary (tests/nats_server.sh)
set -eu
TOOLS=$(cd "$(dirname "$0")" && pwd)
OUT=$1
. "$TOOLS/../nats_server.sh"
. "$TOOLS/fixture_server.sh"
mkdir -p "$OUT"
fixture_server nl-copies
nl() { "$NL" --server "nats://127.0.0.1:$PORT" "$@"; }
origin() { nl stream-create FX_ORIGIN --subjects 'fx.origin.>' --storage file; }
list() { nl request '$JS.API.STREAM.LIST' '{}' >"$OUT/$1"; }

origin
nl request '$JS.API.STREAM.CREATE.FX_MIRROR' \
  '{"name":"FX_MIRROR","mirror":{"name":"FX_ORIGIN"}}' >/dev/null
nl request '$JS.API.STREAM.CREATE.FX_SOURCED' \
  '{"name":"FX_SOURCED","sources":[{"name":"FX_ORIGIN"}]}' >/dev/null
nl request '$JS.API.STREAM.CREATE.FX_FILTERED' \
  '{"name":"FX_FILTERED","sources":[{"name":"FX_ORIGIN","filter_subject":"fx.origin.b"}]}' \
  >/dev/null
nl publish fx.origin.a --count 45
nl publish fx.origin.b --count 5
sleep 2
list stream_list_copies.json
nl stream-delete FX_ORIGIN
sleep 8
list stream_list_copies_missing.json
origin
nl publish fx.origin.a --count 20
sleep 1
list stream_list_copies_recreated.json
sleep 25
list stream_list_copies_later.json
echo "copies of nats-server $(nats-server --version) written to $OUT"
