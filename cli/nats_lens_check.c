/* nats_lens_check.c: nats-lens-check, a one-shot audit of the JetStream
 * streams and consumers of a NATS server.
 *
 * It polls the JetStream API with the same core as the collectd plugin
 * (nl_transport, nl_poll), applies the declared expectations (nl_expect),
 * audits the configuration (nl_audit) and, with --watch, passes several
 * snapshots through the plugin's engine (nl_engine) to run the live
 * detectors; then it reports (nlc_report) and exits with a status a
 * pipeline or a check runner can act on. Usage: nats-lens-check --help. */
#include "core/detect/nl_audit.h"
#include "core/model/nl_expect.h"
#include "core/nl_engine.h"
#include "jsapi/nl_jsz_poll.h"
#include "jsapi/nl_poll.h"
#include "jsapi/nl_transport.h"
#include "jsapi/nl_transport_check.h"
#include "nlc_options.h"
#include "nlc_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps until the monotonic clock reads at_ns. */
static void sleep_until(int64_t at_ns) {
  struct timespec ts = {(time_t)(at_ns / 1000000000),
                        (long)(at_ns % 1000000000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

/* Reports an error that stops the check: on stderr, and for nagios also as
 * the UNKNOWN status line on stdout. Returns NLC_UNKNOWN. */
static int fail(const nlc_options *o, const char *fmt, const char *a,
                const char *b) {
  char msg[1024];
  snprintf(msg, sizeof(msg), fmt, a, b ? b : "");
  fprintf(stderr, "nats-lens-check: %s\n", msg);
  if (o->format == NLC_FORMAT_NAGIOS)
    nlc_print_nagios_unknown(stdout, msg);
  return NLC_UNKNOWN;
}

/* Joins the URLs with commas into buf. */
static const char *join_urls(const nlc_options *o, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < o->n_urls && used < len; i++)
    used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
                             o->urls[i]);
  return buf;
}

/* Connects, explaining authentication failures apart from unreachable
 * servers. Returns 0, or NLC_UNKNOWN after reporting. */
static int connect_server(const nlc_options *o, nl_transport **t,
                          const char *servers) {
  nl_transport_config tc = {
      .urls = (const char *const *)o->urls,
      .n_urls = o->n_urls,
      .timeout_ms = (int64_t)(o->timeout_s * 1000),
      .name = "nats-lens-check",
      .user = o->user,
      .password = o->password,
      .token = o->token,
      .credentials_file = o->creds,
      .nkey_seed_file = o->nkey,
      .tls_ca_file = o->tls_ca,
      .tls_cert_file = o->tls_cert,
      .tls_key_file = o->tls_key,
      .inbox_prefix = o->inbox_prefix,
  };
  static const nl_transport_names names = {
      "",        "",       "--server", "--user",     "--password", "--token",
      "--creds", "--nkey", "--tls-ca", "--tls-cert", "--tls-key"};
  char err[512];
  if (nl_transport_config_check(&tc, &names, err, sizeof(err)) != 0)
    return fail(o, "%s%s", err, NULL);
  if (nl_transport_create(&tc, t, err, sizeof(err)) != 0)
    return fail(o, "cannot set up the connection: %s%s", err, NULL);
  int status = nl_transport_connect(*t, err, sizeof(err));
  if (status == NL_TRANSPORT_OK)
    return 0;
  if (status == NL_TRANSPORT_AUTH)
    return fail(o,
                "authentication failed at %s: %s (check --user/--password, "
                "--token, --creds or --nkey)",
                servers, err);
  return fail(o, "cannot reach %s: %s", servers, err);
}

/* Explains a failed poll: the stream list could not be read. */
static int poll_failed(const nlc_options *o, const nl_poll_stats *stats) {
  const char *e = stats->first_error;
  if (stats->first_status == NL_TRANSPORT_NO_JETSTREAM)
    return fail(o,
                "JetStream is not available: %s (is the server started with "
                "JetStream, and is it enabled for this account?)",
                e, NULL);
  if (stats->first_status == NL_TRANSPORT_TIMEOUT)
    return fail(o,
                "the JetStream API did not answer: %s (JetStream may be "
                "disabled for this account, or the user may lack permission "
                "to publish to $JS.API.>)",
                e, NULL);
  return fail(o, "cannot list the streams: %s%s", e, NULL);
}

/* Whether the stream named stream is selected (o->select). */
static bool stream_kept(const char *stream, void *select) {
  return nl_stream_selected(select, stream);
}

/* Takes the snapshots: one for an audit, o->samples with --watch (each
 * passed through the engine). Leaves the newest in *set. Returns 0, or
 * NLC_UNKNOWN after reporting. */
static int take_snapshots(const nlc_options *o, nl_transport *t, nl_engine *e,
                          nl_snapshot_set *set) {
  nl_poll_config pc = {.budget_ns = (int64_t)(o->timeout_s * 1e9) * 12};
  unsigned samples = e ? o->samples : 1;
  int64_t start = clock_ns(CLOCK_MONOTONIC);
  for (unsigned i = 0; i < samples; i++) {
    if (i > 0) {
      sleep_until(start + (int64_t)(i * o->watch_s * 1e9));
      nl_snapshot_set_clear(set);
    }
    nl_poll_stats stats;
    if (nl_poll_run(&pc, nl_transport_request, t, set, &stats) != 0)
      return poll_failed(o, &stats);
    if (stats.errors > 0)
      fprintf(stderr,
              "nats-lens-check: %llu stream(s) not fully read (%s); they "
              "are reported as UNOBSERVABLE\n",
              (unsigned long long)stats.streams_incomplete, stats.first_error);
    size_t *matched = calloc(o->n_expects ? o->n_expects : 1, sizeof(size_t));
    nl_expect_apply(o->expects, o->n_expects, set, matched);
    for (size_t k = 0; i == 0 && matched && k < o->n_expects; k++)
      if (matched[k] == 0)
        fprintf(stderr,
                "nats-lens-check: --expect %s/%s:%s=%s matches no "
                "consumer\n",
                o->expects[k].stream_glob, o->expects[k].consumer_glob,
                o->expects[k].key, o->expects[k].value);
    free(matched);
    if (e != NULL)
      nl_engine_apply(e, set, clock_ns(CLOCK_REALTIME), NULL, NULL);
  }
  return 0;
}

/* Returns whether the text report gets colours. */
static bool use_color(const nlc_options *o) {
  if (o->color != NLC_COLOR_AUTO)
    return o->color == NLC_COLOR_ALWAYS;
  const char *term = getenv("TERM");
  return isatty(STDOUT_FILENO) && getenv("NO_COLOR") == NULL &&
         !(term && strcmp(term, "dumb") == 0);
}

/* Audits the newest snapshot of each of the n accounts (sets[k], named
 * accounts[k], NULL for the one account of an ordinary check), adds the
 * live findings of e (NULL: none), prints the report and returns the exit
 * status. */
static int report(const nlc_options *o, const char *servers,
                  const nl_snapshot_set *const *sets,
                  const char *const *accounts, size_t n, nl_engine *e) {
  nl_audit_result *audits = calloc(n ? n : 1, sizeof(*audits));
  nl_active *live = NULL;
  size_t n_live = 0, n_rows = 0;
  bool ok = audits != NULL;
  for (size_t k = 0; ok && k < n; k++) {
    ok = nl_audit_run(sets[k], &o->select, &o->audit, &audits[k]) == 0;
    n_rows += ok ? audits[k].n : 0;
  }
  ok = ok && (e == NULL || nl_engine_active(e, stream_kept, (void *)&o->select,
                                            &live, &n_live) == 0);
  nlc_report r = {.server = servers,
                  .watch_s = e ? o->watch_s : 0,
                  .samples = o->samples,
                  .accounts = o->system_account ? n : 0,
                  .checked_at_ns = clock_ns(CLOCK_REALTIME)};
  if (ok)
    ok = (r.rows = calloc(n_rows + n_live + 1, sizeof(*r.rows))) != NULL;
  for (size_t k = 0; ok && k < n; k++) {
    const nl_snapshot_set *set = sets[k];
    for (size_t i = 0; i < set->n_streams; i++)
      r.streams += nl_stream_selected(&o->select, set->streams[i].name);
    for (size_t i = 0; i < set->n_consumers; i++)
      r.consumers += nl_stream_selected(&o->select, set->consumers[i].stream);
    for (size_t i = 0; i < audits[k].n; i++) {
      nl_audit_finding *it = &audits[k].items[i];
      nl_finding_guard_fix(&it->f, it->stream, it->consumer);
      r.rows[r.n_rows++] =
          (nlc_row){"config",   accounts[k],  nl_audit_class_name(it->cls),
                    it->stream, it->consumer, &it->f};
    }
  }
  for (size_t i = 0; ok && i < n_live; i++)
    r.rows[r.n_rows++] = (nlc_row){"live",
                                   NULL,
                                   nl_class_name(live[i].f->cls),
                                   live[i].stream,
                                   live[i].consumer,
                                   live[i].f};
  int code = NLC_UNKNOWN;
  if (ok) {
    nlc_report_sort(&r);
    code = nlc_report_exit_code(&r, o->format, o->fail_on);
    if (o->format == NLC_FORMAT_JSON)
      nlc_print_json(stdout, &r, code);
    else if (o->format == NLC_FORMAT_NAGIOS)
      nlc_print_nagios(stdout, &r);
    else
      nlc_print_text(stdout, &r, use_color(o));
  } else
    code = fail(o, "out of memory%s%s", "", NULL);
  free(r.rows);
  free(live);
  for (size_t k = 0; audits != NULL && k < n; k++)
    nl_audit_result_free(&audits[k]);
  free(audits);
  return code;
}

/* --system-account: reads every account with one JSZ request (the servers'
 * replies gathered), applies the declared expectations to each account
 * and audits each on its own. Returns the exit status. */
static int audit_accounts(const nlc_options *o, nl_transport *t,
                          const char *servers) {
  nl_jsz_result jr;
  nl_poll_stats stats;
  if (nl_jsz_poll_run(nl_transport_gather, t, &o->accounts, &o->select, &jr,
                      &stats) != 0)
    return fail(o,
                "cannot read the accounts: %s (is the user in the system "
                "account, with permission to publish to "
                "$SYS.REQ.SERVER.PING.JSZ?)",
                stats.first_error, NULL);
  if (stats.errors > 0)
    fprintf(stderr,
            "nats-lens-check: %llu stream(s) not fully read (%s); they are "
            "reported as UNOBSERVABLE\n",
            (unsigned long long)stats.streams_incomplete, stats.first_error);
  size_t n = jr.n_accounts;
  const nl_snapshot_set **sets = calloc(n ? n : 1, sizeof(*sets));
  const char **names = calloc(n ? n : 1, sizeof(*names));
  int code;
  if (sets == NULL || names == NULL)
    code = fail(o, "out of memory%s%s", "", NULL);
  else {
    for (size_t k = 0; k < n; k++) {
      nl_expect_apply(o->expects, o->n_expects, &jr.accounts[k].set, NULL);
      sets[k] = &jr.accounts[k].set;
      names[k] = jr.accounts[k].name;
    }
    code = report(o, servers, sets, names, n, NULL);
  }
  free(sets);
  free(names);
  nl_jsz_result_clear(&jr);
  return code;
}

int main(int argc, char **argv) {
  nlc_options o;
  char err[512], servers[2048];
  int rc = nlc_options_parse(argc, argv, &o, err, sizeof(err));
  if (rc == NLC_OPTIONS_HELP || rc == NLC_OPTIONS_VERSION) {
    if (rc == NLC_OPTIONS_HELP)
      nlc_options_usage(stdout);
    else
      printf("nats-lens-check %s\n", NL_VERSION);
    nlc_options_free(&o);
    return 0;
  }
  if (rc == NLC_OPTIONS_ERROR) {
    rc = fail(&o, "%s%s (see nats-lens-check --help)", err, NULL);
    nlc_options_free(&o);
    return rc;
  }
  join_urls(&o, servers, sizeof(servers));
  nl_transport *t = NULL;
  nl_engine *e = NULL;
  nl_snapshot_set set = {0};
  rc = connect_server(&o, &t, servers);
  if (rc == 0 && o.watch_s > 0) {
    nl_detect_params dp;
    nl_detect_params_default(&dp);
    if ((e = nl_engine_create(&dp)) == NULL)
      rc = fail(&o, "out of memory%s%s", "", NULL);
  }
  if (rc == 0 && o.system_account)
    rc = audit_accounts(&o, t, servers);
  else if (rc == 0 && (rc = take_snapshots(&o, t, e, &set)) == 0) {
    const nl_snapshot_set *sets[] = {&set};
    const char *none[] = {NULL};
    rc = report(&o, servers, sets, none, 1, e);
  }
  fflush(stdout);
  nl_snapshot_set_clear(&set);
  nl_engine_free(e);
  nl_transport_free(t);
  nlc_options_free(&o);
  return rc;
}
