#!/usr/bin/env bash
# tests/eval/versions.sh: the per-version evaluation behind
# `make eval VERSIONS="..."`.
#
# Runs a short evaluation (tests/eval/eval.sh) on each nats-server binary
# of VERSIONS, single node and 3-node cluster: VROUNDS rounds of each of
# the five classes and VEXT_ROUNDS of each class beyond them, C injectors,
# no soak, boundary cases or baseline. The versions run side by side, each
# on ports of its own (NL_EVAL_PORT 14800, 14900, ...), into
# $OUT/versions/<version>/. Then tests/eval/versions_table.py writes the
# table of each class detected and cleared per version and topology into
# $OUT/eval.md (between the "versions" markers, replacing an older table)
# and $OUT/eval-versions.json.
#
# Environment:
#   VERSIONS     nats-server binaries (paths or names on PATH), required
#   VROUNDS      rounds of each of the five classes per topology (default 2)
#   VEXT_ROUNDS  rounds of each class beyond the five (default 1)
#   INTERVAL     poll interval in seconds (default 1)
#   OUT          results directory (default results)
# Exit status 0 when every class was detected and cleared in every round
# on every version and topology, 1 otherwise.
set -u
cd "$(dirname "$0")/../.."
VERSIONS=${VERSIONS:?VERSIONS="nats-server binaries"}
VROUNDS=${VROUNDS:-2}
VEXT_ROUNDS=${VEXT_ROUNDS:-1}
INTERVAL=${INTERVAL:-1}
OUT=${OUT:-results}
mkdir -p "$OUT/versions"
i=0
dirs=()
for bin in $VERSIONS; do
  version=$(
    NATS_SERVER=$bin
    . tests/nats_server.sh
    nl_server_release
  ) || exit 2
  dir="$OUT/versions/$version"
  rm -rf "$dir"
  mkdir -p "$dir"
  dirs+=("$dir")
  echo "== nats-server $version ($bin): $dir"
  NATS_SERVER=$bin NL_EVAL_PORT=$((14800 + 100 * i)) ROUNDS=$VROUNDS \
    CLUSTER_ROUNDS=$VROUNDS EXT=1 EXT_ROUNDS=$VEXT_ROUNDS LANGS=c \
    EXT_LANGS=c TOPOLOGY=both SOAK=0 BOUNDARY=0 BASELINE=0 \
    INTERVAL=$INTERVAL OUT="$dir" NAME=eval \
    timeout 3600 tests/eval/eval.sh >"$dir/eval.out" 2>&1 &
  i=$((i + 1))
done
wait
# Each version's own report stays; its raw measurements go.
for dir in "${dirs[@]}"; do rm -rf "$dir/tmp" "$dir/eval-latency.png"; done
set -- $VERSIONS
command="make eval VERSIONS=\"$*\" VROUNDS=$VROUNDS VEXT_ROUNDS=$VEXT_ROUNDS VINTERVAL=$INTERVAL"
python3 tests/eval/versions_table.py --command "$command" --out "$OUT" "${dirs[@]}"
