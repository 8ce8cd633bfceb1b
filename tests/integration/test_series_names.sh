#!/usr/bin/env bash
# Series names that never merge (docs/metrics.md, Names): in SystemAccount
# mode the plugin instance is <instance>-<account>-<stream> with the
# account's '-' and '~' escaped ("~2d", "~7e"). Account "a-b" with stream
# "c" and account "a" with stream "b-c" read alike joined with '-'; here
# they are two series, sys-a~2db-c and sys-a-b-c, each with its own
# consumer's value (3 and 7 messages pending), and neither value lands
# under the other's name.
# Port: NL_PORT_SERIES_NAMES (default 15490).
set -u
. "$(dirname "$0")/../lib.sh"
nl_begin series_names
PORT=$(nl_port NL_PORT_SERIES_NAMES 15490)
cat >"$NL_TMP/server.conf" <<CONF
listen: 127.0.0.1:$PORT
jetstream { store_dir: "$NL_TMP/js" }
accounts {
  SYS: { users: [{user: mon, password: mon}] }
  "a-b": { jetstream: enabled, users: [{user: ab, password: ab}] }
  "a": { jetstream: enabled, users: [{user: a, password: a}] }
}
system_account: SYS
CONF
nl_start_server nats "$PORT" -c "$NL_TMP/server.conf" || exit 1
inj() {
  local who=$1
  shift
  "$NL_INJECT" --server "nats://$who:$who@127.0.0.1:$PORT" "$@" >/dev/null
}
inj ab stream-create c --subjects 'x.>' && inj ab consumer-create c w &&
  inj ab publish x.1 --count 3 && inj a stream-create b-c --subjects 'y.>' &&
  inj a consumer-create b-c w && inj a publish y.1 --count 7 || {
  nl_fail setup/objects "streams, consumers or messages not created"
  exit 1
}
nl_start_collectd "<Instance \"sys\">
  URL \"nats://mon:mon@127.0.0.1:$PORT\"
  SystemAccount true
</Instance>" 1 || exit 1

pending() { nl_csv_int "$1" nats_lens_num_pending w; }
seen() { [ "$(pending "$1")" = "$2" ]; }
nl_check a-b/c/series nl_retry 30 seen 'sys-a~2db-c' 3
nl_check a/b-c/series nl_retry 30 seen sys-a-b-c 7
# Two series, each with its own consumer's value only.
both() {
  local d
  d="$(nl_cd_dir)/csv/${NL_HOSTNAME:-nl-test}"
  [ -d "$d/nats_lens-sys-a~2db-c" ] && [ -d "$d/nats_lens-sys-a-b-c" ]
}
nl_check two-series both
only() { ! grep -q ",$2\(\.0*\)\?$" "$(nl_csv_file "$1" nats_lens_num_pending w)"; }
nl_check a-b/c/own-values only 'sys-a~2db-c' 7
nl_check a/b-c/own-values only sys-a-b-c 3
nl_check collectd/alive kill -0 "$NL_COLLECTD_PID"
nl_end
