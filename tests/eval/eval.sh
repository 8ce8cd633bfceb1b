#!/usr/bin/env bash
# tests/eval/eval.sh: the evaluation harness behind `make eval`.
#
# Injects each delivery-violation class with fresh streams and consumers,
# written in each language of LANGS, on each topology, measures detection
# and recovery latency with the built plugin in real collectd, runs the
# boundary cases, a healthy soak and the server-level baseline, and writes
# $OUT/$NAME.md, $OUT/$NAME.json and $OUT/$NAME-latency.png.
#
# Environment (make variables of the same names):
#   ROUNDS          rounds per class and language, single node (default 30)
#   INTERVAL        poll interval in seconds (default 3, the reference's)
#   LANGS           injector languages among "c go js py" (default all)
#   CLASSES         which of the five classes the rounds and the baseline
#                   run (default all five), such as "ACK_WAIT_VIOLATION
#                   MISSING_PROGRESS"
#   TOPOLOGY        single | cluster | both (default single)
#   CLUSTER_ROUNDS  rounds on the cluster (default ROUNDS / 5, at least 2),
#                   followed by the two node-kill rounds (none when 0)
#   SOAK            seconds of the production mix, the healthy soak
#                   (tests/eval/mix.py; default 300). Alone (ROUNDS=0
#                   EXT=0 BOUNDARY=0, single node) it also restarts the
#                   server halfway. It needs the Go and JavaScript clients
#                   whatever LANGS says.
#   EXT             1 to run the classes beyond the five (default 1)
#   EXT_ROUNDS      their rounds per topology (default ROUNDS / 5, at least
#                   2; 0 when ROUNDS is 0)
#   EXT_LANGS       injector languages of their client-made faults (default
#                   LANGS)
#   EXT_CLASSES     which of them run (default all), such as
#                   "CONSUMER_UNOBSERVABLE"
#   BOUNDARY        1 to run the boundary cases (default 1)
#   BASELINE        1 to run the /varz baseline phase (default 1)
#   OUT, NAME       output directory and file stem (default results, eval)
# Exit status 0 when every row has full coverage and there are no false
# positives (see tests/eval/report.py), 1 otherwise.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
ROUNDS=${ROUNDS:-30}
INTERVAL=${INTERVAL:-3}
LANGS=${LANGS:-c go js py}
CLASSES=${CLASSES:-}
TOPOLOGY=${TOPOLOGY:-single}
CLUSTER_ROUNDS=${CLUSTER_ROUNDS:-$((ROUNDS / 5 > 2 ? ROUNDS / 5 : 2))}
SOAK=${SOAK:-300}
EXT=${EXT:-1}
if [ "$ROUNDS" -gt 0 ]; then
  EXT_ROUNDS=${EXT_ROUNDS:-$((ROUNDS / 5 > 2 ? ROUNDS / 5 : 2))}
else
  EXT_ROUNDS=${EXT_ROUNDS:-0}
fi
[ "$EXT" = 1 ] || EXT_ROUNDS=0
EXT_LANGS=${EXT_LANGS:-$LANGS}
EXT_CLASSES=${EXT_CLASSES:-}
BOUNDARY=${BOUNDARY:-1}
BASELINE=${BASELINE:-1}
OUT=${OUT:-results}
NAME=${NAME:-eval}
export INTERVAL

for lang in $(echo $LANGS $EXT_LANGS | tr ' ' '\n' | sort -u); do
  case $lang in
  go)
    # The Go injector, built against Debian's nats.go (GOPATH mode).
    mkdir -p build/eval
    GO111MODULE=off GOPATH=/usr/share/gocode \
      GOCACHE="$ROOT/build/eval/gocache" go build -o build/eval/nl-consume-go \
      ./tests/eval/injectors/go || exit 1
    ;;
  js)
    # The JavaScript injector's npm packages, from its lock file.
    if [ ! -d tests/eval/injectors/js/node_modules/nats ]; then
      (cd tests/eval/injectors/js && npm ci --no-audit --no-fund) || exit 1
    fi
    ;;
  c | py) ;;
  *)
    echo "eval: unknown language '$lang' (c go js py)" >&2
    exit 2
    ;;
  esac
done

if [ "$SOAK" != 0 ]; then
  # The production mix's Go and JavaScript clients.
  mkdir -p build/eval
  GO111MODULE=off GOPATH=/usr/share/gocode \
    GOCACHE="$ROOT/build/eval/gocache" go build -o build/eval/nl-mix-go \
    ./tests/eval/mix/go || exit 1
  if [ ! -d tests/eval/injectors/js/node_modules/nats ]; then
    (cd tests/eval/injectors/js && npm ci --no-audit --no-fund) || exit 1
  fi
fi

mkdir -p "$OUT/tmp"
raws=()
flags=(--ext-rounds "$EXT_ROUNDS" --ext-langs "$EXT_LANGS")
[ -n "$CLASSES" ] && flags+=(--classes "$CLASSES")
[ -n "$EXT_CLASSES" ] && flags+=(--ext-classes "$EXT_CLASSES")
[ "$BOUNDARY" = 1 ] && flags+=(--boundary)
if [ "$TOPOLOGY" = single ] || [ "$TOPOLOGY" = both ]; then
  echo "== eval: single node, $ROUNDS rounds, interval $INTERVAL s," \
    "langs: $LANGS, classes: ${CLASSES:-all five};" \
    "$EXT_ROUNDS rounds of the classes beyond the five"
  extra=()
  [ "$BASELINE" = 1 ] && extra+=(--baseline)
  tests/eval/run_topology.sh single "$OUT/tmp/$NAME-single.json" \
    --rounds "$ROUNDS" --langs "$LANGS" --soak "$SOAK" "${flags[@]}" \
    "${extra[@]}" || exit 1
  raws+=("$OUT/tmp/$NAME-single.json")
fi
if [ "$TOPOLOGY" = cluster ] || [ "$TOPOLOGY" = both ]; then
  echo "== eval: 3-node cluster, $CLUSTER_ROUNDS rounds + 2 node-kill rounds;" \
    "$EXT_ROUNDS rounds of the classes beyond the five"
  csoak=0
  [ "$TOPOLOGY" = cluster ] && csoak=$SOAK
  tests/eval/run_topology.sh cluster "$OUT/tmp/$NAME-cluster.json" \
    --rounds "$CLUSTER_ROUNDS" --langs "$LANGS" --soak "$csoak" \
    --kill-rounds "${flags[@]}" || exit 1
  raws+=("$OUT/tmp/$NAME-cluster.json")
fi
python3 tests/eval/report.py --out-dir "$OUT" --name "$NAME" "${raws[@]}"
