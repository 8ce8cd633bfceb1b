# tests/lib.sh: shared helpers of the integration tests (bash, sourced).
#
# Each test script calls nl_begin NAME, starts what it needs with
# nl_start_nats / nl_start_collectd, reports each check with nl_pass or
# nl_fail ("PASS name" / "FAIL name: why" lines that tests/run_all.sh
# counts), and ends with nl_end. Everything started is stopped on exit.

NL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$NL_ROOT/tests/nats_server.sh"
NL_INJECT="$NL_ROOT/tests/tools/nl-inject"
NL_PLUGIN=${NL_PLUGIN:-"$NL_ROOT/plugin/nats_lens.so"}
NL_TYPES="$NL_ROOT/types.db.d/nats_lens.db"
NL_PIDS=()
# Several collectd processes in one test (tests/integration/test_agents.sh):
# NL_COLLECTD_DIR is the directory of one collectd's configuration, plugins,
# log, CSV and PID file (default $NL_TMP, as every other test has it), and
# NL_HOSTNAME its Hostname (default nl-test). nl_start_collectd,
# nl_notifications, nl_wait_notification and the nl_csv_* helpers use both,
# so `NL_COLLECTD_DIR=$NL_TMP/a1 NL_HOSTNAME=a1 nl_csv_last ...` reads one
# collectd's values. NL_COLLECTD_DIRS lists the directories other than
# $NL_TMP that nl_start_collectd used (nl_sanitizer_check reads them too).
NL_COLLECTD_DIRS=()
nl_cd_dir() { echo "${NL_COLLECTD_DIR:-$NL_TMP}"; }

# Under `make test SANITIZE=1` the plugin is built with ASan and UBSan:
# collectd (not sanitized) is started with libasan preloaded, and every
# report ends the process and is found by nl_sanitizer_check.
if [ "${NL_SANITIZE:-0}" = 1 ]; then
  export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:detect_leaks=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  NL_COLLECTD_WRAPPER=${NL_COLLECTD_WRAPPER:-"env LD_PRELOAD=$NL_ASAN_LIB"}
elif [ "${NL_SANITIZE:-0}" = thread ]; then
  # Reports go on (halt_on_error=0) and are found by nl_sanitizer_check.
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1:report_signal_unsafe=0}
  NL_COLLECTD_WRAPPER=${NL_COLLECTD_WRAPPER:-"env LD_PRELOAD=$NL_TSAN_LIB"}
fi

# nl_sanitizer_check: one FAIL line per output file of the test holding an
# AddressSanitizer, LeakSanitizer, UndefinedBehaviorSanitizer or
# ThreadSanitizer report.
nl_sanitizer_check() {
  local f d re='ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer'
  local files=("$NL_TMP"/*.out "$NL_TMP"/*.log)
  for d in "${NL_COLLECTD_DIRS[@]}"; do
    files+=("$d"/*.out "$d"/*.log)
  done
  for f in "${files[@]}"; do
    [ -f "$f" ] || continue
    if grep -qE "$re" "$f"; then
      nl_fail "sanitizer/${f#"$NL_TMP"/}" "$(grep -m1 -E "$re" "$f")"
    fi
  done
}

# nl_port VAR DEFAULT: the first of 10 free TCP ports on 127.0.0.1 for a
# test: the value of the variable named VAR when it is set (an override),
# else DEFAULT when DEFAULT..DEFAULT+9 are all free, else a free run of 10
# from a random place in 20000-59999, so that a run never fails because a
# neighbour (another run, another user) holds the default ports.
nl_port() {
  local var=$1 def=$2
  if [ -n "${!var:-}" ]; then
    echo "${!var}"
    return
  fi
  python3 - "$def" <<'PY'
import os, random, socket, sys

def free(base):
    held = []
    try:
        for port in range(base, base + 10):
            s = socket.socket()
            held.append(s)
            s.bind(("127.0.0.1", port))
        return True
    except (OSError, OverflowError):  # Taken, or a shifted base past 65535.
        return False
    finally:
        for s in held:
            s.close()

# NL_PORT_SHIFT moves every default base: the runs of the version matrix
# (tests/run_all.sh) go side by side, each in a range of its own.
base = int(sys.argv[1]) + int(os.environ.get("NL_PORT_SHIFT") or 0)
if not free(base):
    for _ in range(500):
        base = random.randrange(20000, 60000, 10)
        if free(base):
            break
print(base)
PY
}

nl_begin() {
  NL_TEST=$1
  NL_TMP=$(mktemp -d "/tmp/nats-lens-$NL_TEST.XXXXXX")
  trap nl_cleanup EXIT
  # Ctrl-C or a stop ends the run at once (the EXIT trap cleans up),
  # rather than leaving a loop polling servers that are gone.
  trap 'echo "# $NL_TEST: interrupted" >&2; exit 130' INT TERM
}

nl_cleanup() {
  local pid
  for pid in "${NL_PIDS[@]}"; do
    kill "$pid" 2>/dev/null
  done
  sleep 0.2
  for pid in "${NL_PIDS[@]}"; do
    kill -9 "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  nl_sanitizer_check
  if [ -n "${NL_KEEP_TMP:-}" ]; then
    echo "# kept $NL_TMP" >&2
  else
    rm -rf "$NL_TMP"
  fi
}

nl_pass() { echo "PASS $NL_TEST/$1${2:+ ($2)}"; }
nl_fail() {
  echo "FAIL $NL_TEST/$1: $2"
  NL_FAILED=1
}

# nl_check NAME CONDITION-COMMAND... : PASS when the command succeeds.
nl_check() {
  local name=$1
  shift
  if "$@"; then nl_pass "$name"; else nl_fail "$name" "$*"; fi
}

nl_end() { return "${NL_FAILED:-0}"; }

# nl_server_check MAJOR MINOR RELEASE: reports setup/server, PASS with the
# version of the nats-server on PATH; when it is older than MAJOR.MINOR
# (and NL_SERVER_BUILDS held no build of RELEASE, see nl_server_at_least in
# tests/nats_server.sh), prints one SKIP line naming the build the test
# needs and how to give it, and returns 1: the test then ends with status 0.
nl_server_check() {
  if nl_server_older "$1" "$2"; then
    echo "SKIP $NL_TEST: needs nats-server $1.$2 or later (this machine's:" \
      "$(nl_server_release)); give NL_SERVER_BUILDS=DIR holding" \
      "nats-server-$3, or NATS_SERVER=PATH"
    return 1
  fi
  nl_pass setup/server "$(nats-server --version)"
}

# nl_wait_port PORT SECONDS [PID]: waits until something listens on
# 127.0.0.1:PORT; gives up at once when process PID (the server that should
# listen there) has exited.
nl_wait_port() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    [ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# nl_retry SECONDS COMMAND...: runs the command every 0.5 s until it
# succeeds (then succeeds) or SECONDS have passed (then fails).
nl_retry() {
  local secs=$1 i
  shift
  for ((i = 0; i < secs * 2; i++)); do
    "$@" && return 0
    sleep 0.5
  done
  return 1
}

# nl_start_nats PORT [EXTRA ARGS...]: a JetStream server on 127.0.0.1:PORT
# with its store in the test's directory. Sets NL_NATS_PID.
nl_start_nats() {
  local port=$1
  shift
  mkdir -p "$NL_TMP/js-$port"
  nats-server -a 127.0.0.1 -p "$port" -js -sd "$NL_TMP/js-$port" "$@" \
    >"$NL_TMP/nats-$port.log" 2>&1 &
  NL_NATS_PID=$!
  NL_PIDS+=("$NL_NATS_PID")
  nl_wait_port "$port" 10 || {
    echo "# nats-server on $port did not start" >&2
    cat "$NL_TMP/nats-$port.log" >&2
    return 1
  }
}

# nl_start_server NAME PORT ARGS...: runs nats-server with exactly ARGS (a
# config file, or flags; nothing is added) and waits until 127.0.0.1:PORT
# listens. Output goes to $NL_TMP/NAME.log. Sets NL_SERVER_PID.
nl_start_server() {
  local name=$1 port=$2
  shift 2
  nats-server "$@" >>"$NL_TMP/$name.log" 2>&1 &
  NL_SERVER_PID=$!
  NL_PIDS+=("$NL_SERVER_PID")
  nl_wait_port "$port" 10 "$NL_SERVER_PID" && return 0
  echo "# nats-server $name on $port did not start" >&2
  tail -n 20 "$NL_TMP/$name.log" >&2
  return 1
}

# nl_log_csv_config: the collectd configuration lines that log to
# $NL_TMP/collectd.log (notifications included) and write values as CSV
# under $NL_TMP/csv, as every test reads them (under NL_COLLECTD_DIR when
# set).
nl_log_csv_config() {
  local d
  d=$(nl_cd_dir)
  cat <<EOF
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$d/collectd.log"
  Timestamp true
  PrintSeverity true
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "$d/csv"
  StoreRates false
</Plugin>
EOF
}

# nl_start_collectd INSTANCE_BLOCKS [INTERVAL] [EXTRA_CONFIG] [PLUGINS]:
# runs collectd in the foreground (in the background of the test; with
# NL_COLLECTD_DAEMON=yes as a daemon that forks, its PID from its PID file) with
# logfile, csv and the built plugin. The plugin's configuration is given as
# text. PLUGINS names further collectd plugins (space-separated, such as
# "write_graphite network") to copy from /usr/lib/collectd for EXTRA_CONFIG
# to load. Logs go to $NL_TMP/collectd.log, values to $NL_TMP/csv. With
# NL_COLLECTD_DIR set, all of its files (plugins included, so that no
# running collectd's plugin file is overwritten) go there instead, and
# NL_HOSTNAME names the host (see the top of this file).
nl_start_collectd() {
  local blocks=$1 interval=${2:-1} extra=${3:-} plugins=${4:-} p d
  d=$(nl_cd_dir)
  if [ "$d" != "$NL_TMP" ] && [[ " ${NL_COLLECTD_DIRS[*]} " != *" $d "* ]]; then
    NL_COLLECTD_DIRS+=("$d")
  fi
  mkdir -p "$d/plugins" "$d/csv"
  cp /usr/lib/collectd/logfile.so /usr/lib/collectd/csv.so "$d/plugins/"
  for p in $plugins; do
    cp "/usr/lib/collectd/$p.so" "$d/plugins/" || return 1
  done
  cp "$NL_PLUGIN" "$d/plugins/"
  cat >"$d/collectd.conf" <<EOF
Hostname "${NL_HOSTNAME:-nl-test}"
BaseDir "$d"
PIDFile "$d/collectd.pid"
PluginDir "$d/plugins"
TypesDB "/usr/share/collectd/types.db" "$NL_TYPES"
Interval $interval
# The plugin's reads never fail, so collectd never backs off for them; the
# cap only keeps any other plugin a test loads from stretching its reads
# (test_outage_recovery runs with collectd's default instead).
MaxReadInterval ${NL_MAX_READ_INTERVAL:-4}
$(nl_log_csv_config)
$extra
LoadPlugin nats_lens
<Plugin nats_lens>
$blocks
</Plugin>
EOF
  local i
  if [ "${NL_COLLECTD_DAEMON:-no}" = yes ]; then
    # As a classic daemon: collectd forks into the background after reading
    # its configuration (without systemd's NOTIFY_SOCKET) and writes its
    # PID file.
    rm -f "$d/collectd.pid"
    env -u NOTIFY_SOCKET collectd -C "$d/collectd.conf" \
      >"$d/collectd.out" 2>&1
    for ((i = 0; i < 100; i++)); do
      [ -s "$d/collectd.pid" ] && break
      sleep 0.1
    done
    NL_COLLECTD_PID=$(cat "$d/collectd.pid" 2>/dev/null)
    NL_COLLECTD_PID=${NL_COLLECTD_PID:-0}
  else
    ${NL_COLLECTD_WRAPPER:-} collectd -f -C "$d/collectd.conf" \
      >"$d/collectd.out" 2>&1 &
    NL_COLLECTD_PID=$!
  fi
  NL_PIDS+=("$NL_COLLECTD_PID")
  for ((i = 0; i < 100; i++)); do
    grep -q "entering read-loop" "$d/collectd.log" 2>/dev/null && return 0
    kill -0 "$NL_COLLECTD_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "# collectd did not start" >&2
  cat "$d/collectd.out" "$d/collectd.log" >&2 2>/dev/null
  return 1
}

# nl_test_certs DIR: writes a test CA (ca.pem, ca.key), a server
# certificate for 127.0.0.1 and localhost (server.pem, server.key) and a
# client certificate (client.pem, client.key) that it signed, and a second
# CA that nothing trusts (other-ca.pem, other-ca.key) with a client
# certificate of its own (other-client.pem, other-client.key): EC P-256,
# valid for 2 days. Returns non-zero when openssl fails.
nl_test_certs() {
  local k=$1
  _nl_cert() { # NAME CN EXTENSIONS CA
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout "$k/$1.key" -out "$k/$1.csr" -subj "/CN=$2" 2>/dev/null &&
      openssl x509 -req -in "$k/$1.csr" -CA "$k/$4.pem" -CAkey "$k/$4.key" \
        -CAcreateserial -out "$k/$1.pem" -days 2 \
        -extfile <(printf '%s\n' "$3") 2>/dev/null
  }
  _nl_ca() { # NAME CN
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
      -nodes -keyout "$k/$1.key" -out "$k/$1.pem" -days 2 -subj "/CN=$2" \
      2>/dev/null
  }
  _nl_ca ca nl-test-ca &&
    _nl_cert server localhost "subjectAltName=IP:127.0.0.1,DNS:localhost" ca &&
    _nl_cert client nats-lens "extendedKeyUsage=clientAuth" ca &&
    _nl_ca other-ca nl-untrusted-ca &&
    _nl_cert other-client nats-lens "extendedKeyUsage=clientAuth" other-ca
}

# nl_inject PORT ARGS...: runs the fault injector against 127.0.0.1:PORT.
nl_inject() {
  local port=$1
  shift
  "$NL_INJECT" --server "nats://127.0.0.1:$port" "$@"
}

# nl_bg NAME COMMAND...: runs COMMAND in the background (stopped when
# the test exits), its output in $NL_TMP/NAME.out.
nl_bg() {
  local name=$1
  shift
  "$@" >"$NL_TMP/$name.out" 2>&1 &
  NL_PIDS+=($!)
}

# nl_inject_bg PORT NAME ARGS...: runs the fault injector in the
# background (stopped when the test exits), its output in $NL_TMP/NAME.out.
# The injector itself is started, not nl_inject in a subshell, so the pid
# the cleanup stops is the injector's.
nl_inject_bg() {
  local port=$1 name=$2
  shift 2
  nl_bg "$name" "$NL_INJECT" --server "nats://127.0.0.1:$port" "$@"
}

# nl_held_throttle PORT [SECONDS]: a MAX_PENDING_THROTTLE that holds for
# SECONDS (default 60): stream MP, consumer stuck (ack_wait 60 s,
# max_ack_pending 5, so no redelivery meanwhile), 50 messages, and a worker
# in the background that takes 5 and never acks (output in $NL_TMP/mp.out).
nl_held_throttle() {
  local port=$1 secs=${2:-60}
  nl_inject "$port" stream-create MP --subjects 'mp.>' >/dev/null &&
    nl_inject "$port" consumer-create MP stuck --ack-wait 60 \
      --max-ack-pending 5 >/dev/null &&
    nl_inject "$port" publish mp.a --count 50 >/dev/null || return 1
  nl_inject "$port" consume MP stuck --duration "$secs" --no-ack \
    >"$NL_TMP/mp.out" 2>&1 &
  NL_PIDS+=($!)
}

# nl_apply_fix PORT|URL COMMAND: applies a fix command the plugin printed,
# on the server at 127.0.0.1:PORT or at URL (with the credentials of the
# finding's account)
# (`nats consumer edit S C ...`, `nats consumer add S C --pull ...
# --defaults` or `nats stream edit S ...`, the flags the plugin prints:
# --wait, --max-pending, --max-deliver, --backoff, --replicas and
# --inactive-threshold for a consumer edit; --ack, --deliver, --wait,
# --max-deliver, --max-pending, --filter and --inactive-threshold for a
# consumer add, whose other settings are the CLI's defaults, after `nats
# consumer rm S C -f &&` when the command deletes it first; --max-msgs,
# --max-bytes, --max-msgs-per-subject, --max-age, --replicas, --discard
# old|new for a stream) with nl-inject's consumer-edit, consumer-create or
# stream-edit, which change only the named settings as the nats CLI does,
# then reads the configuration back from the server. `nats consumer edit S
# C --config FILE` sends FILE's configuration (FILE as `nats consumer info
# S C --json` prints it, or the configuration alone) as an update of the
# consumer, as the nats CLI does: the server's reserved _nats.* metadata
# left out; the settings it asks for are those where FILE differs from the
# consumer's configuration. Prints "field=value" for each
# setting read back; returns 0 only when the server holds every value the
# command asked for (it may override or refuse one: a backoff replaces
# ack_wait), 2 for a command it cannot apply. The stream created again
# from its own configuration (`nats stream info S --json > F && nats stream
# rm S -f && nats stream add S --config F`) is applied as the nats CLI does
# it: the configuration read, the stream deleted, and created again from
# that configuration less the server's reserved metadata ("_nats."); the
# mirror and sources read back must be those it had.
nl_apply_fix() {
  local port=$1 cmd=$2 w
  read -ra w <<<"$cmd"
  python3 - "$NL_INJECT" "$port" "${w[@]}" <<'PY'
import json, subprocess, sys
inject, port, words = sys.argv[1], sys.argv[2], sys.argv[3:]
# A port, or the URL of the finding's account (user:password@ in it).
server = port if "://" in port else "nats://127.0.0.1:" + port
def unq(w):
    """A word as the shell reads it when single-quoted."""
    return w[1:-1].replace("'\\''", "'") if w[:1] == "'" else w
def secs(v):
    return float(v[:-1]) if v.endswith("s") else float(v)
def run(*args):
    p = subprocess.run([inject, "--server", server] + list(args),
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("fix not applied: %s" % (p.stderr or p.stdout).strip())
    return p.stdout
if (words[:3] == ["nats", "consumer", "rm"] and words[5:7] == ["-f", "&&"]
        and words[7:10] == ["nats", "consumer", "add"] and
        words[10:12] == words[3:5]):
    # nats consumer rm S C -f && nats consumer add S C ...: the consumer
    # deleted, then created as the add below says.
    run("consumer-delete", unq(words[3]), unq(words[4]))
    words = words[7:]
if words[:3] == ["nats", "consumer", "edit"] and words[5:6] == ["--config"]:
    stream, consumer = words[3], words[4]
    if len(words) != 7:
        sys.exit(2)
    with open(words[6]) as f:
        new = json.load(f)
    new = new.get("config", new)
    meta = {k: v for k, v in (new.get("metadata") or {}).items()
            if not k.startswith("_nats.")}
    new.pop("metadata", None)
    if meta:
        new["metadata"] = meta
    old = json.loads(run("info", stream, consumer))["config"]
    want = {k: v for k, v in new.items() if k != "metadata" and old.get(k) != v}
    if not want:
        sys.exit(2)
    reply = json.loads(run("request", "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s"
                           % (stream, consumer),
                           json.dumps({"stream_name": stream, "config": new})))
    if "error" in reply:
        sys.exit("fix not applied: %s" % json.dumps(reply["error"]))
    cfg = json.loads(run("info", stream, consumer))["config"]
elif words[:3] == ["nats", "consumer", "edit"] and len(words) >= 5:
    stream, consumer, flags = words[3], words[4], words[5:]
    opts = dict(zip(flags[::2], flags[1::2]))
    edit, want = [], {}
    if "--wait" in opts:
        edit += ["--ack-wait", str(secs(opts["--wait"]))]
        want["ack_wait"] = int(secs(opts["--wait"]) * 1e9)
    if "--max-pending" in opts:
        edit += ["--max-ack-pending", opts["--max-pending"]]
        want["max_ack_pending"] = int(opts["--max-pending"])
    if "--max-deliver" in opts:
        edit += ["--max-deliver", opts["--max-deliver"]]
        want["max_deliver"] = int(opts["--max-deliver"])
    if "--replicas" in opts:
        edit += ["--replicas", opts["--replicas"]]
        want["num_replicas"] = int(opts["--replicas"])
    if "--inactive-threshold" in opts:
        edit += ["--inactive-threshold", str(secs(opts["--inactive-threshold"]))]
        want["inactive_threshold"] = int(secs(opts["--inactive-threshold"]) * 1e9)
    if opts.get("--backoff") == "none":
        edit += ["--backoff", "none"]
        want["backoff"] = None
    elif opts.get("--backoff") == "linear":
        # The nats CLI's linear backoff: steps periods from min, each
        # (max - min) / steps longer than the one before.
        k = int(opts["--backoff-steps"])
        lo, hi = secs(opts["--backoff-min"]), secs(opts["--backoff-max"])
        steps = [lo + i * (hi - lo) / k for i in range(k)]
        edit += ["--backoff", ",".join("%g" % x for x in steps)]
        want["backoff"] = [int(round(x * 1e9)) for x in steps]
        want["ack_wait"] = want["backoff"][0]
    if not want or len(opts) * 2 != len(flags):
        sys.exit(2)
    run("consumer-edit", stream, consumer, *edit)
    cfg = json.loads(run("info", stream, consumer))["config"]
elif words[:3] == ["nats", "consumer", "add"] and len(words) >= 5:
    # A durable pull consumer created as `nats consumer add --pull
    # --defaults` would: the flags given, the rest the CLI's defaults.
    stream, consumer = unq(words[3]), unq(words[4])
    flags = [unq(w) for w in words[5:]]
    bare = [f for f in flags if f in ("--pull", "--defaults")]
    rest = [f for f in flags if f not in bare]
    opts = dict(zip(rest[::2], rest[1::2]))
    if sorted(bare) != ["--defaults", "--pull"] or len(opts) * 2 != len(rest):
        sys.exit(2)
    make = ["--ack", opts.get("--ack", "explicit")]
    want = {"durable_name": consumer, "ack_policy": make[1],
            "deliver_subject": None}
    deliver = opts.get("--deliver", "all")
    make += ["--deliver-policy", deliver]
    if deliver.isdigit():
        want["deliver_policy"] = "by_start_sequence"
        want["opt_start_seq"] = int(deliver)
    else:
        want["deliver_policy"] = deliver
    for flag, mine, key, conv in (
            ("--wait", "--ack-wait", "ack_wait", lambda v: int(secs(v) * 1e9)),
            ("--max-deliver", "--max-deliver", "max_deliver", int),
            ("--max-pending", "--max-ack-pending", "max_ack_pending", int),
            ("--filter", "--filter", "filter_subject", str),
            ("--inactive-threshold", "--inactive-threshold",
             "inactive_threshold", lambda v: int(secs(v) * 1e9))):
        if flag in opts:
            v = opts[flag]
            make += [mine, str(secs(v)) if key in ("ack_wait",
                     "inactive_threshold") else v]
            want[key] = conv(v)
    unknown = set(opts) - {"--ack", "--deliver", "--wait", "--max-deliver",
                           "--max-pending", "--filter", "--inactive-threshold"}
    if unknown:
        sys.exit(2)
    run("consumer-create", stream, consumer, *make)
    cfg = json.loads(run("info", stream, consumer))["config"]
elif words[:3] == ["nats", "stream", "edit"] and len(words) >= 4:
    stream, flags = words[3], words[4:]
    opts = dict(zip(flags[::2], flags[1::2]))
    edit, want = [], {}
    for flag, key in (("--max-msgs", "max_msgs"), ("--max-bytes", "max_bytes"),
                      ("--replicas", "num_replicas"),
                      ("--max-msgs-per-subject", "max_msgs_per_subject")):
        if flag in opts:
            edit += [flag, opts[flag]]
            want[key] = int(opts[flag])
    if opts.get("--discard") in ("old", "new"):
        edit += ["--discard", opts["--discard"]]
        want["discard"] = opts["--discard"]
    if "--max-age" in opts:
        edit += ["--max-age", str(secs(opts["--max-age"]))]
        want["max_age"] = int(secs(opts["--max-age"]) * 1e9)
    if not want or len(opts) * 2 != len(flags):
        sys.exit(2)
    run("stream-edit", stream, *edit)
    cfg = json.loads(run("request", "$JS.API.STREAM.INFO." + stream,
                         ""))["config"]
elif words[:3] == ["nats", "stream", "info"] and words.count("&&") == 2:
    # nats stream info S --json > F && nats stream rm S -f &&
    # nats stream add S --config F (S and F single-quoted when needed).
    cut = [i for i, w in enumerate(words) if w == "&&"]
    info, rm, add = (words[:cut[0]], words[cut[0] + 1:cut[1]],
                     words[cut[1] + 1:])
    stream, file = unq(info[3]) if len(info) > 3 else None, info[-1]
    if (len(info) != 7 or info[4:6] != ["--json", ">"] or
            rm[:3] != ["nats", "stream", "rm"] or rm[3:] != [info[3], "-f"] or
            add[:3] != ["nats", "stream", "add"] or
            add[3:] != [info[3], "--config", file]):
        sys.exit(2)
    old = json.loads(run("request", "$JS.API.STREAM.INFO." + stream, ""))
    want = {k: old["config"].get(k) for k in ("mirror", "sources")}
    new = dict(old["config"])
    meta = {k: v for k, v in (new.get("metadata") or {}).items()
            if not k.startswith("_nats.")}
    new["metadata"] = meta or None
    if new["metadata"] is None:
        del new["metadata"]
    run("stream-delete", stream)
    made = json.loads(run("request", "$JS.API.STREAM.CREATE." + stream,
                          json.dumps(new)))
    if "error" in made:
        sys.exit("fix not applied: %s" % made["error"])
    cfg = json.loads(run("request", "$JS.API.STREAM.INFO." + stream,
                         ""))["config"]
    print("created=%s" % json.dumps(made.get("created")))
else:
    sys.exit(2)
ok = True
for key, value in want.items():
    got = cfg.get(key)
    print("%s=%s" % (key, json.dumps(got)))
    ok = ok and got == value
sys.exit(0 if ok else 1)
PY
}

# nl_apply_recommended_rate PORT RECOMMENDATION: does what a RATE_LIMITED
# recommendation says, as the nats CLI would: it reads the rate to set
# ("set rate_limit_bps to N") and the consumer ("nats consumer info S C
# --json" ... "nats consumer edit S C --config FILE"), writes the
# consumer's information with config.rate_limit_bps N to FILE and applies
# the edit with nl_apply_fix, which reads the configuration back. Prints
# what nl_apply_fix prints; returns 0 only when the server holds N, 2 when
# the recommendation does not say it.
nl_apply_recommended_rate() {
  local port=$1 file=$NL_TMP/rate-limit-fix.json words
  words=$(python3 -c '
import re, sys
rec = sys.argv[1]
rate = re.search(r"set rate_limit_bps to (\d+)", rec)
info = re.search(r"nats consumer info (\S+) (\S+) --json", rec)
edit = re.search(r"nats consumer edit (\S+) (\S+) --config FILE", rec)
if not rate or not info or not edit or info.groups() != edit.groups():
    sys.exit(2)
print(rate.group(1), *edit.groups())' "$2") || return 2
  set -- "$port" $words
  nl_inject "$port" info "$3" "$4" | python3 -c '
import json, sys
nfo = json.load(sys.stdin)
nfo["config"]["rate_limit_bps"] = int(sys.argv[1])
json.dump(nfo, open(sys.argv[2], "w"))' "$2" "$file" || return 1
  nl_apply_fix "$port" "nats consumer edit $3 $4 --config $file"
}

# nl_notifications [PATTERN]: the notification lines logged so far.
nl_notifications() {
  grep "Notification:" "$(nl_cd_dir)/collectd.log" 2>/dev/null |
    grep -e "${1:-.}"
}

# nl_wait_notification SECONDS PATTERN...: waits until a notification line
# matches every pattern; prints it and succeeds, or fails after SECONDS.
nl_wait_notification() {
  local secs=$1 i line
  shift
  for ((i = 0; i < secs * 5; i++)); do
    line=$(nl_notifications | nl_grep_all "$@" | head -n 1)
    if [ -n "$line" ]; then
      echo "$line"
      return 0
    fi
    sleep 0.2
  done
  return 1
}

# nl_grep_all PATTERN...: keeps the lines of stdin matching every pattern.
nl_grep_all() {
  if [ $# -eq 0 ]; then
    cat
  else
    local p=$1
    shift
    grep -F -e "$p" | nl_grep_all "$@"
  fi
}

# nl_csv_file PLUGIN_INSTANCE TYPE TYPE_INSTANCE: path of today's CSV file.
nl_csv_file() {
  ls "$(nl_cd_dir)/csv/${NL_HOSTNAME:-nl-test}/nats_lens-$1/$2${3:+-$3}"-* \
    2>/dev/null | tail -n 1
}

# nl_csv_last PLUGIN_INSTANCE TYPE TYPE_INSTANCE: the newest value.
nl_csv_last() {
  local f
  f=$(nl_csv_file "$@")
  [ -n "$f" ] && tail -n 1 "$f" | cut -d, -f2
}

# nl_csv_int PLUGIN_INSTANCE TYPE TYPE_INSTANCE: the newest value, as a
# whole number.
nl_csv_int() {
  local v
  v=$(nl_csv_last "$@")
  [ -n "$v" ] && printf '%.0f\n' "$v"
}

# nl_consumer_seen PLUGIN_INSTANCE CONSUMER PENDING ACK_PENDING: succeeds
# when the newest values the plugin wrote for CONSUMER are num_pending
# PENDING (a number, or alternatives such as "2|3") and num_ack_pending
# ACK_PENDING, and it counts no message lost to it: the plugin read the
# consumer in the state a silent check is about.
nl_consumer_seen() {
  [[ "$(nl_csv_int "$1" nats_lens_num_pending "$2")" =~ ^($3)$ ]] &&
    [ "$(nl_csv_int "$1" nats_lens_num_ack_pending "$2")" = "$4" ] &&
    [ "$(nl_csv_int "$1" nats_lens_lost "$2")" = 0 ]
}

# nl_latency WHO SINCE LINE: prints "  latency WHO: N s", how long after
# SINCE (epoch seconds, when an injection ended) the notification LINE was
# logged (whole seconds, the log's resolution), for results/eval.md.
nl_latency() {
  local at
  at=$(date -d "$(sed -n 's/^\[\([^]]*\)\].*/\1/p' <<<"$3")" +%s 2>/dev/null) &&
    echo "  latency $1: $(($at - $2)) s"
}

# nl_check_silent NAME WHO CLASS: PASS NAME when no notification about WHO
# ("STREAM/CONSUMER") is of CLASS, else FAIL with the first that is.
nl_check_silent() {
  local line
  line=$(nl_notifications "$2" | grep -F "type_instance = $3," | head -n 1)
  if [ -z "$line" ]; then nl_pass "$1"; else nl_fail "$1" "$line"; fi
}

# nl_gap_found NAME WHO: waits (20 s) for a SEQUENCE_GAP onset of WHO
# ("STREAM/CONSUMER"): PASS NAME/detected with its message, or FAIL. Sets
# NL_GAP_LINE to the notification line (empty when there is none).
nl_gap_found() {
  if NL_GAP_LINE=$(nl_wait_notification 20 "severity = FAILURE" \
    "type_instance = SEQUENCE_GAP," "$2:"); then
    nl_pass "$1/detected" "${NL_GAP_LINE#*message = }"
  else
    NL_GAP_LINE=
    nl_fail "$1/detected" "no SEQUENCE_GAP for $2"
  fi
}

# nl_gap_max_msgs_fix NAME PORT WHO: a SEQUENCE_GAP of WHO is found
# (nl_gap_found) whose fix raises its stream's max_msgs
# (NAME/max-msgs-fix), and the fix is applied and read back
# (NAME/fix-applied, nl_apply_fix).
nl_gap_max_msgs_fix() {
  local name=$1 port=$2 who=$3 fix readback
  nl_gap_found "$name" "$who"
  fix=$(sed -n 's/.* fix: \([^;]*\);.*/\1/p' <<<"$NL_GAP_LINE")
  nl_check "$name/max-msgs-fix" \
    [ "${fix% *}" = "nats stream edit ${who%%/*} --max-msgs" ]
  if readback=$(nl_apply_fix "$port" "$fix" 2>&1); then
    nl_pass "$name/fix-applied" "'$fix' read back: ${readback//$'\n'/ }"
  else
    nl_fail "$name/fix-applied" "'$fix' read back: ${readback//$'\n'/ }"
  fi
}

# nl_gap_no_fix NAME WHO INSTANCE LOST: a SEQUENCE_GAP of WHO is found
# (nl_gap_found) that prints no fix command (NAME/no-fix-command), and the
# plugin's instance INSTANCE counts LOST messages lost to WHO (NAME/lost).
nl_gap_no_fix() {
  nl_gap_found "$1" "$2"
  nl_check "$1/no-fix-command" \
    grep -qF "$2: fix: no command, see the recommendation;" <<<"$NL_GAP_LINE"
  nl_check "$1/lost" \
    [ "$(nl_csv_int "$3-${2%%/*}" nats_lens_lost "${2#*/}")" = "$4" ]
}

# nl_gap_limit_round NAME PORT WHO INSTANCE SUBJECT: for a consumer WHO
# ("STREAM/CONSUMER", reading nothing) of a stream with max_msgs 10 into
# which 30 messages were published: its SEQUENCE_GAP is found and its
# max_msgs fix applied (nl_gap_max_msgs_fix); then the consumer catches up
# once and 20 more are published on SUBJECT (30 stored, under the new
# limit), and the finding clears and stays clear (nl_gap_clears).
nl_gap_limit_round() {
  local name=$1 port=$2 who=$3 inst=$4 subject=$5
  nl_gap_max_msgs_fix "$name" "$port" "$who"
  nl_inject "$port" consume "${who%%/*}" "${who#*/}" --duration 2 \
    --max-msgs 10 >/dev/null
  nl_inject "$port" publish "$subject" --count 20 >/dev/null
  nl_gap_clears "$name" "$who" "$inst"
}

# nl_gap_clears NAME WHO INSTANCE: the SEQUENCE_GAP of WHO clears within
# 60 s (NAME/cleared) and, 5 polls of the plugin's instance INSTANCE
# later, it was raised once only (NAME/stays-clear).
nl_gap_clears() {
  local name=$1 who=$2 inst=$3 now onsets
  if nl_wait_notification 60 "severity = OKAY" \
    "type_instance = SEQUENCE_GAP," "$who " >/dev/null; then
    nl_pass "$name/cleared"
  else
    nl_fail "$name/cleared" "SEQUENCE_GAP of $who did not clear"
  fi
  now=$(nl_csv_rows "$inst" duration poll 1)
  nl_retry 20 nl_polled "$inst" $((now + 5))
  onsets=$(nl_notifications "$who:" |
    grep -F "type_instance = SEQUENCE_GAP," | grep -c "severity = FAILURE")
  nl_check "$name/stays-clear" [ "$onsets" = 1 ]
}

# nl_polled INSTANCE N: succeeds once the plugin's instance INSTANCE has
# finished N polls.
nl_polled() { [ "$(nl_csv_rows "$1" duration poll 1)" -ge "$2" ]; }

# nl_now_ms: wall clock in milliseconds.
nl_now_ms() { date +%s%3N; }

# nl_csv_first_one PLUGIN_INSTANCE TYPE TYPE_INSTANCE SINCE_EPOCH_S: the
# epoch time of the first row at or after SINCE with value 1, or nothing.
nl_csv_first_one() {
  local f
  f=$(nl_csv_file "$1" "$2" "$3")
  [ -n "$f" ] && awk -F, -v since="$4" \
    'NR > 1 && $1 >= since && $2 + 0 == 1 { print $1; exit }' "$f"
}

# nl_csv_polls PLUGIN_INSTANCE TYPE TYPE_INSTANCE FROM TO: number of rows
# (polls) with time in (FROM, TO].
nl_csv_polls() {
  local f
  f=$(nl_csv_file "$1" "$2" "$3")
  [ -n "$f" ] && awk -F, -v a="$4" -v b="$5" \
    'NR > 1 && $1 > a && $1 <= b { n++ } END { print n + 0 }' "$f"
}

# nl_csv_rows PLUGIN_INSTANCE TYPE TYPE_INSTANCE AWK_CONDITION: the number of
# rows of a value file for which the condition on $1 (epoch) and $2 (value)
# holds; 0 when there is no such file.
nl_csv_rows() {
  local f
  f=$(nl_csv_file "$1" "$2" "$3")
  if [ -n "$f" ]; then
    awk -F, "NR > 1 && ($4) { n++ } END { print n + 0 }" "$f"
  else
    echo 0
  fi
}

# nl_csv_seen_since PLUGIN_INSTANCE TYPE TYPE_INSTANCE SINCE_EPOCH_S TEST:
# succeeds when a row after SINCE has a value for which TEST (an awk
# comparison such as ">= 2" or "== 0") holds.
nl_csv_seen_since() {
  [ "$(nl_csv_rows "$1" "$2" "$3" "\$1 > $4 && \$2 + 0 $5")" -gt 0 ]
}

# A 3-node JetStream cluster "NL" on 127.0.0.1 for the cluster tests.
# nl_cluster_start BASE starts nodes n1..n3 with client ports BASE..BASE+2,
# route ports BASE+3..BASE+5 and monitoring ports BASE+6..BASE+8 (nine
# ports from BASE). The JetStream meta leader needs a few seconds after
# start: retry the first request (nl_retry). NL_CLUSTER_PID[N] is node N's
# process; nl_cluster_node_kill / nl_cluster_node_start stop and restart
# one node with its store kept.
declare -A NL_CLUSTER_PID=()
NL_CLUSTER_BASE=
nl_cluster_client() { echo $((NL_CLUSTER_BASE + $1 - 1)); }
nl_cluster_route() { echo $((NL_CLUSTER_BASE + 3 + $1 - 1)); }
nl_cluster_http() { echo $((NL_CLUSTER_BASE + 6 + $1 - 1)); }

# nl_cluster_node_start N: starts (or restarts) node N of the cluster. The
# configuration lines in NL_CLUSTER_EXTRA (accounts, for example) are added
# to every node's.
nl_cluster_node_start() {
  local n=$1
  cat >"$NL_TMP/n$n.conf" <<EOF2
server_name: n$n
listen: 127.0.0.1:$(nl_cluster_client "$n")
http: 127.0.0.1:$(nl_cluster_http "$n")
jetstream { store_dir: "$NL_TMP/js-n$n" }
cluster {
  name: NL
  listen: 127.0.0.1:$(nl_cluster_route "$n")
  routes: [
    nats-route://127.0.0.1:$(nl_cluster_route 1)
    nats-route://127.0.0.1:$(nl_cluster_route 2)
    nats-route://127.0.0.1:$(nl_cluster_route 3)
  ]
}
${NL_CLUSTER_EXTRA:-}
EOF2
  # A node started again keeps its ports, which a connection of another
  # process may hold for a while meanwhile (the shifted ports of the
  # version matrix lie in the kernel's range for outgoing connections):
  # then it is started again, for at most 30 s.
  local try
  for ((try = 0; try < 15; try++)); do
    if nl_start_server "n$n" "$(nl_cluster_client "$n")" -c "$NL_TMP/n$n.conf"; then
      NL_CLUSTER_PID[$n]=$NL_SERVER_PID
      return 0
    fi
    tail -n 3 "$NL_TMP/n$n.log" | grep -q "address already in use" || return 1
    echo "# n$n: one of its ports is in use for now; starting it again in 2 s" >&2
    sleep 2
  done
  return 1
}

# nl_cluster_node_kill N: kills node N at once (SIGKILL) and waits for it.
nl_cluster_node_kill() {
  kill -9 "${NL_CLUSTER_PID[$1]}" 2>/dev/null
  wait "${NL_CLUSTER_PID[$1]}" 2>/dev/null
}

# nl_cluster_url_lines: the URL options of a collectd Instance block that
# name the three nodes as seed servers.
nl_cluster_url_lines() {
  local n
  for n in 1 2 3; do
    echo "  URL \"nats://127.0.0.1:$(nl_cluster_client "$n")\""
  done
}

# nl_cluster_start BASE: starts the three nodes (see above).
nl_cluster_start() {
  NL_CLUSTER_BASE=$1
  local n
  for n in 1 2 3; do nl_cluster_node_start "$n" || return 1; done
  nl_retry 30 nl_cluster_ready || {
    echo "# the cluster's three servers did not form a JetStream cluster in 30 s" >&2
    return 1
  }
}

# nl_cluster_ready: succeeds when the JetStream meta leader of the cluster
# on NL_CLUSTER_BASE reports both other servers as current peers (a stream
# of three replicas can be placed; before that the server refuses it with
# "no suitable peers for placement"). Only the leader lists its peers in
# its /jsz, so each server is asked until one answers as the leader.
nl_cluster_ready() {
  local n
  for n in 1 2 3; do
    curl -s --max-time 2 "http://127.0.0.1:$(nl_cluster_http "$n")/jsz" |
      python3 -c '
import json, sys
m = json.load(sys.stdin).get("meta_cluster") or {}
peers = m.get("replicas") or []
ok = len(peers) == 2 and all(p.get("current") and not p.get("offline")
                             for p in peers)
sys.exit(0 if ok else 1)' 2>/dev/null && return 0
  done
  return 1
}
