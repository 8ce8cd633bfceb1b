/* nats_lens.c: the collectd glue of the nats_lens plugin.
 *
 * One nl_instance per <Instance> block, each registered as a complex read
 * callback. A read starts a poll on the instance's poll thread, which polls
 * JetStream (nl_poll over nl_transport), passes the snapshots through the
 * engine (history and detectors), and dispatches values and state-change
 * notifications. All logic lives in the nl_* core;
 * this file only translates between it and collectd.
 *
 * Threads and locks, per instance.
 *
 * Threads (all but collectd's own are started by nl_init, after collectd
 * forked into the background: a thread started while the configuration is
 * read would not survive the fork):
 * - collectd's reader: nl_read, never two at once for one instance. It
 *   only kicks the poll thread (a mutex held for a flag change) and
 *   returns: it never waits on the network or on another thread's I/O.
 * - the poll thread (nl_poller): poll_run, one poll at a time, each request
 *   bounded by Timeout and the poll by one interval; a kick during a poll
 *   is kept as one and counted (polls_overrun).
 * - the advisory thread (jsapi/nl_advisory_thread): feeds advisories into
 *   the engine (nl_feed_advisories, no network) and then, with no lock held,
 *   reads the consumers CREATED advisories announced (nl_refresh_pending).
 * - cnats threads: deliver advisories into the advisory queue (its own
 *   mutex), reconnect, and call the transport's callbacks.
 * - the libmicrohttpd thread (http/nl_http): answers the REST API from the
 *   documents nl_http_update publishes after each poll; only a history
 *   document not yet kept is rendered from the registry, under
 *   nl_http_lock, waiting at most 0.5 s.
 * - collectd's configuration and shutdown: config_instance and
 *   nl_instance_free (nl_instance.c), when no other thread of the instance
 *   runs (shutdown closes the connection, then stops the poll, advisory and
 *   HTTP threads).
 *
 * Locks, in the order they may be taken (never the other way round):
 * 1. feed_lock (nl_advisory_thread.c): orders feeding between the advisory
 *    thread and the poll's drain; held only while advisories are fed.
 * 2. engine_lock: the engine (registry, findings, stream totals) and
 *    onsets. Held for an apply, an advisory batch, a created consumer's
 *    intake, and the counts; never across a network request.
 * 3. nl_http_lock: the HTTP layer's view of the registry; taken inside
 *    engine_lock around what changes the registry.
 * 4. created_lock: the queue of created consumers (created, n_created,
 *    created_dropped); a leaf.
 * 4. send_lock: what goes out of the plugin (notifications, health events
 *    and their nl_health state, publish_complaint); a leaf. Transitions
 *    are kept while the engine reports them (sink_transition) and sent by
 *    send_transitions, which takes send_lock before it releases
 *    engine_lock and then sends with send_lock alone held: a notification
 *    never holds up the engine, and a health summary (sent under both
 *    locks, since it reads the engine) never goes out before the events of
 *    the changes it counts. A transition that could not be kept (out of
 *    memory) is sent at once, under engine_lock.
 *
 * nl_poller's own mutex guards its flags only (a leaf, never held for a
 * poll).
 *
 * SystemAccount: the poll thread applies each account's view to that
 * account's instance (account_instance: its own engine_lock, send_lock,
 * engine and health state; polls, events and summaries on the parent's
 * connection). An account of AccountAdvisories also has its own
 * connection and advisory thread, started by the poll thread when the
 * account is first seen (after collectd's fork), which takes that
 * account's locks in the order above. The parent's nl_http_lock is taken
 * inside an account's engine_lock, as for a single instance, and never
 * with another account's engine_lock held. The list of account instances
 * is written by the poll thread alone and read at shutdown, after the
 * poll thread stopped; an account instance (and its advisory thread) is
 * freed before the parent's listener.
 *
 * Scope "server" adds no thread or lock: the poll thread alone writes
 * server_name and the scope_* fields; an account instance's nl_health
 * points to server_name, read under send_lock by the same poll thread.
 *
 * A <Coverage> block (nl_central.c) has its own write and read callbacks
 * and one lock of its own, a leaf, described there.
 *
 * Not locked: values_limited is atomic (written by the poll, read by the
 * advisory thread); the transport's connection is set once by the poll
 * before any subscription exists, and cnats is thread-safe; api_requests,
 * api_errors, poll_failing and the poll and connect complaints belong to
 * the poll thread alone, the overrun complaint to the reader alone. */
#include "nl_instance.h"

#include <malloc.h>

#include "core/model/nl_names.h"
#include "core/nl_engine.h"
#include "core/report/nl_health.h"
#include "core/report/nl_onset_rate.h"
#include "http/nl_http.h"
#include "jsapi/nl_advisory_fetch.h"
#include "jsapi/nl_advisory_thread.h"
#include "jsapi/nl_jsz_poll.h"
#include "jsapi/nl_poll.h"
#include "jsapi/nl_poll_log.h"
#include "jsapi/nl_transport.h"
#include "jsapi/nl_transport_check.h"
#include "nl_central.h"
#include "nl_poller.h"

/* Appends a copy of the string option in ci to the list (collectd's
 * strarray). */
static int config_append(oconfig_item_t *ci, char ***list, size_t *n) {
  char *s = NULL;
  if (cf_util_get_string(ci, &s) != 0)
    return -1;
  int status = strarray_add(list, n, s);
  free(s);
  return status;
}

/* Reads Scope "cluster" (every server's view, the default) or "server"
 * (the connected server's alone). */
static int config_scope(oconfig_item_t *ci, nl_instance *inst) {
  char *v = NULL;
  if (cf_util_get_string(ci, &v) != 0)
    return -1;
  int status = 0;
  if (strcasecmp(v, "server") == 0)
    inst->server_scope = true;
  else if (strcasecmp(v, "cluster") == 0)
    inst->server_scope = false;
  else {
    ERROR(LOG_PREFIX "Instance \"%s\": Scope \"%s\": expected \"cluster\" "
                     "or \"server\".",
          inst->name, v);
    status = -1;
  }
  free(v);
  return status;
}

/* Reads a positive whole number option into *out. */
static int config_unsigned(oconfig_item_t *ci, const char *inst,
                           unsigned *out) {
  int v = 0;
  if (cf_util_get_int(ci, &v) != 0 || v < 1) {
    ERROR(LOG_PREFIX "Instance \"%s\": option %s needs a whole number of at "
                     "least 1.",
          inst, ci->key);
    return -1;
  }
  *out = (unsigned)v;
  return 0;
}

/* Reads a number option into *out: greater than 0 (at least 0 with
 * zero_ok) and at most max. */
static int config_number(oconfig_item_t *ci, const char *inst, bool zero_ok,
                         double max, double *out) {
  double v = 0;
  if (cf_util_get_double(ci, &v) != 0 || !(zero_ok ? v >= 0 : v > 0) ||
      v > max) {
    ERROR(LOG_PREFIX "Instance \"%s\": option %s needs a number %s 0 and "
                     "at most %g.",
          inst, ci->key, zero_ok ? "of at least" : "greater than", max);
    return -1;
  }
  *out = v;
  return 0;
}

/* Reads a number greater than 0 and at most max. */
static int config_positive(oconfig_item_t *ci, const char *inst, double max,
                           double *out) {
  return config_number(ci, inst, false, max, out);
}

/* Reads Timeout: 0.01 to 600 seconds (cnats counts it in whole
 * milliseconds, and below that a request could not even be sent). */
static int config_timeout(oconfig_item_t *ci, nl_instance *inst) {
  double v = 0;
  if (cf_util_get_double(ci, &v) != 0 || !(v >= 0.01) || v > 600) {
    ERROR(LOG_PREFIX "Instance \"%s\": option Timeout needs 0.01 to 600 "
                     "seconds.",
          inst->name);
    return -1;
  }
  inst->timeout_s = v;
  return 0;
}

/* Reads HealthSubjectPrefix into inst->health. */
static int config_prefix(oconfig_item_t *ci, nl_instance *inst) {
  char *prefix = NULL;
  if (cf_util_get_string(ci, &prefix) != 0)
    return -1;
  int status = nl_health_set_prefix(&inst->health, prefix);
  if (status != 0)
    ERROR(LOG_PREFIX "Instance \"%s\": HealthSubjectPrefix \"%s\" is not a "
                     "subject prefix (tokens separated by '.', without "
                     "spaces or the wildcards '*' and '>', at most %d "
                     "bytes).",
          inst->name, prefix, NL_EVENT_PREFIX_MAX);
  free(prefix);
  return status;
}

/* Reads SummaryInterval (seconds, 0 turns summaries off). */
static int config_summary_interval(oconfig_item_t *ci, nl_instance *inst) {
  double v = -1;
  if (cf_util_get_double(ci, &v) != 0 || !(v >= 0) || v > 86400) {
    ERROR(LOG_PREFIX "Instance \"%s\": option SummaryInterval needs a number "
                     "of seconds from 0 (off) to 86400.",
          inst->name);
    return -1;
  }
  inst->health.summary_interval_ns = (int64_t)(v * 1e9);
  return 0;
}

/* Reads Listen "host" "port" (the port may also be a bare number). */
static int config_listen(oconfig_item_t *ci, nl_instance *inst) {
  char port[16] = "";
  if (ci->values_num == 2 && ci->values[0].type == OCONFIG_TYPE_STRING) {
    if (ci->values[1].type == OCONFIG_TYPE_STRING)
      sstrncpy(port, ci->values[1].value.string, sizeof(port));
    else if (ci->values[1].type == OCONFIG_TYPE_NUMBER)
      snprintf(port, sizeof(port), "%.0f", ci->values[1].value.number);
  }
  if (port[0] == '\0') {
    ERROR(LOG_PREFIX "Instance \"%s\": option Listen needs an address and a "
                     "port, as in Listen \"127.0.0.1\" \"9419\".",
          inst->name);
    return -1;
  }
  free(inst->listen_host);
  free(inst->listen_port);
  inst->listen_host = strdup(ci->values[0].value.string);
  inst->listen_port = strdup(port);
  return inst->listen_host && inst->listen_port ? 0 : -1;
}

/* Reads AccountAdvisories "account" "credentials file", or "account"
 * "user" "password". */
static int config_account_advisories(oconfig_item_t *ci, nl_instance *inst) {
  bool strings = ci->values_num == 2 || ci->values_num == 3;
  for (int i = 0; strings && i < ci->values_num; i++)
    strings = ci->values[i].type == OCONFIG_TYPE_STRING &&
              ci->values[i].value.string[0] != '\0';
  if (!strings) {
    ERROR(LOG_PREFIX "Instance \"%s\": option AccountAdvisories needs an "
                     "account and a credentials file, or an account, a user "
                     "and a password, as in AccountAdvisories \"ORDERS\" "
                     "\"/etc/collectd/orders.creds\".",
          inst->name);
    return -1;
  }
  struct account_connection *grown =
      realloc(inst->adv_accounts,
              (inst->n_adv_accounts + 1) * sizeof(*inst->adv_accounts));
  if (grown == NULL)
    return -1;
  inst->adv_accounts = grown;
  struct account_connection *a = &grown[inst->n_adv_accounts++];
  *a = (struct account_connection){0};
  a->account = strdup(ci->values[0].value.string);
  if (ci->values_num == 2)
    a->credentials = strdup(ci->values[1].value.string);
  else {
    a->user = strdup(ci->values[1].value.string);
    a->password = strdup(ci->values[2].value.string);
  }
  return a->account != NULL && (a->credentials || a->password) ? 0 : -1;
}

/* Reads ConsumerValues "all" | "findings" | "none". */
static int config_consumer_values(oconfig_item_t *ci, nl_instance *inst) {
  char *v = NULL;
  if (cf_util_get_string(ci, &v) != 0)
    return -1;
  int status = 0;
  if (strcasecmp(v, "all") == 0)
    inst->consumer_values = VALUES_ALL;
  else if (strcasecmp(v, "findings") == 0)
    inst->consumer_values = VALUES_FINDINGS;
  else if (strcasecmp(v, "none") == 0)
    inst->consumer_values = VALUES_NONE;
  else {
    ERROR(LOG_PREFIX "Instance \"%s\": option ConsumerValues must be \"all\", "
                     "\"findings\" or \"none\", not \"%s\".",
          inst->name, v);
    status = -1;
  }
  free(v);
  return status;
}

/* Reads ConsumerValuesLimit: a whole number of consumers, 0 for none. */
static int config_values_limit(oconfig_item_t *ci, nl_instance *inst) {
  int v = -1;
  if (cf_util_get_int(ci, &v) != 0 || v < 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option ConsumerValuesLimit needs a "
                     "whole number of consumers (0 for no limit).",
          inst->name);
    return -1;
  }
  inst->consumer_values_limit = (unsigned)v;
  return 0;
}

/* Reads StreamDeclaration "PATTERN" "KEY" "VALUE": a stream declaration
 * (nl_expect.h) for the streams matching PATTERN, as if their metadata
 * held nats_lens.KEY=VALUE. An unknown key is logged and ignored (a later
 * version may know it); a value that cannot be read is an error. */
static int config_stream_declaration(oconfig_item_t *ci, nl_instance *inst) {
  if (ci->values_num != 3 || ci->values[0].type != OCONFIG_TYPE_STRING ||
      ci->values[1].type != OCONFIG_TYPE_STRING ||
      ci->values[2].type != OCONFIG_TYPE_STRING) {
    ERROR(LOG_PREFIX "Instance \"%s\": StreamDeclaration needs three "
                     "strings: a stream pattern, a key and a value (for "
                     "example \"AUDIT_*\" \"full_ok\" \"true\").",
          inst->name);
    return -1;
  }
  const char *glob = ci->values[0].value.string;
  const char *key = ci->values[1].value.string;
  const char *value = ci->values[2].value.string;
  if (strncmp(key, NL_EXPECT_PREFIX, strlen(NL_EXPECT_PREFIX)) == 0)
    key += strlen(NL_EXPECT_PREFIX);
  if (!nl_expect_stream_key_known(key)) {
    WARNING(LOG_PREFIX "Instance \"%s\": StreamDeclaration \"%s\": unknown "
                       "key \"%s\" ignored (known: full_ok).",
            inst->name, glob, key);
    return 0;
  }
  char why[160];
  if (glob[0] == '\0' || strlen(value) > NL_META_LEN_MAX ||
      nl_expect_stream_check_value(key, value, why, sizeof(why)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": StreamDeclaration \"%s\" \"%s\": %s.",
          inst->name, glob, key,
          glob[0] == '\0'                   ? "the stream pattern is empty"
          : strlen(value) > NL_META_LEN_MAX ? "the value is too long"
                                            : why);
    return -1;
  }
  nl_expect_spec *grown =
      realloc(inst->stream_decls, (inst->n_stream_decls + 1) * sizeof(*grown));
  if (grown == NULL)
    return -1;
  inst->stream_decls = grown;
  nl_expect_spec *d = &inst->stream_decls[inst->n_stream_decls];
  *d = (nl_expect_spec){strdup(glob), NULL, strdup(key), strdup(value)};
  if (d->stream_glob == NULL || d->key == NULL || d->value == NULL) {
    nl_expect_spec_free(d);
    return -1;
  }
  inst->n_stream_decls++;
  return 0;
}

/* Parses the options of one Instance block into inst. */
static int config_instance_options(oconfig_item_t *ci, nl_instance *inst) {
  int status = 0;
  for (int i = 0; i < ci->children_num && status == 0; i++) {
    oconfig_item_t *child = ci->children + i;
    const char *key = child->key;
    if (strcasecmp("URL", key) == 0) {
      status = config_append(child, &inst->urls, &inst->n_urls);
    } else if (strcasecmp("Stream", key) == 0)
      status =
          config_append(child, &inst->select.include, &inst->select.n_include);
    else if (strcasecmp("ExcludeStream", key) == 0)
      status =
          config_append(child, &inst->select.exclude, &inst->select.n_exclude);
    else if (strcasecmp("StreamDeclaration", key) == 0)
      status = config_stream_declaration(child, inst);
    else if (strcasecmp("SystemAccount", key) == 0)
      status = cf_util_get_boolean(child, &inst->system_account);
    else if (strcasecmp("Scope", key) == 0)
      status = config_scope(child, inst);
    else if (strcasecmp("Account", key) == 0)
      status = config_append(child, &inst->account_select.include,
                             &inst->account_select.n_include);
    else if (strcasecmp("AccountAdvisories", key) == 0)
      status = config_account_advisories(child, inst);
    else if (strcasecmp("ExcludeAccount", key) == 0)
      status = config_append(child, &inst->account_select.exclude,
                             &inst->account_select.n_exclude);
    else if (strcasecmp("ConsumerValues", key) == 0)
      status = config_consumer_values(child, inst);
    else if (strcasecmp("ConsumerValuesLimit", key) == 0)
      status = config_values_limit(child, inst);
    else if (strcasecmp("Timeout", key) == 0)
      status = config_timeout(child, inst);
    else if (strcasecmp("Interval", key) == 0)
      status = cf_util_get_cdtime(child, &inst->interval);
    else if (strcasecmp("User", key) == 0)
      status = cf_util_get_string(child, &inst->user);
    else if (strcasecmp("Password", key) == 0)
      status = cf_util_get_string(child, &inst->password);
    else if (strcasecmp("Token", key) == 0)
      status = cf_util_get_string(child, &inst->token);
    else if (strcasecmp("Credentials", key) == 0)
      status = cf_util_get_string(child, &inst->credentials);
    else if (strcasecmp("NKeySeed", key) == 0)
      status = cf_util_get_string(child, &inst->nkey_seed);
    else if (strcasecmp("TLSCA", key) == 0)
      status = cf_util_get_string(child, &inst->tls_ca);
    else if (strcasecmp("TLSCert", key) == 0)
      status = cf_util_get_string(child, &inst->tls_cert);
    else if (strcasecmp("TLSKey", key) == 0)
      status = cf_util_get_string(child, &inst->tls_key);
    else if (strcasecmp("InboxPrefix", key) == 0)
      status = cf_util_get_string(child, &inst->inbox_prefix);
    else if (strcasecmp("PollLog", key) == 0)
      status = cf_util_get_string(child, &inst->poll_log_path);
    else if (strcasecmp("AckWaitMinIntervals", key) == 0)
      status = config_unsigned(child, inst->name,
                               &inst->params.ack_wait_min_intervals);
    else if (strcasecmp("AckWaitMinRedeliveries", key) == 0)
      status = config_unsigned(child, inst->name,
                               &inst->params.ack_wait_min_redeliveries);
    else if (strcasecmp("NakStormMinRedeliveries", key) == 0)
      status = config_unsigned(child, inst->name,
                               &inst->params.nak_storm_min_redeliveries);
    else if (strcasecmp("NakStormIntervals", key) == 0) {
      status =
          config_unsigned(child, inst->name, &inst->params.nak_storm_intervals);
      if (status == 0 &&
          inst->params.nak_storm_intervals > NL_HISTORY_LEN - 1) {
        ERROR(LOG_PREFIX "Instance \"%s\": option NakStormIntervals can be at "
                         "most %d (the history holds %d polls).",
              inst->name, NL_HISTORY_LEN - 1, NL_HISTORY_LEN);
        status = -1;
      }
    } else if (strcasecmp("MissingProgressFactor", key) == 0)
      status = config_positive(child, inst->name, 100,
                               &inst->params.missing_progress_factor);
    else if (strcasecmp("HealthEvents", key) == 0)
      status = cf_util_get_boolean(child, &inst->health.enabled);
    else if (strcasecmp("HealthSubjectPrefix", key) == 0)
      status = config_prefix(child, inst);
    else if (strcasecmp("SummaryInterval", key) == 0)
      status = config_summary_interval(child, inst);
    else if (strcasecmp("Listen", key) == 0)
      status = config_listen(child, inst);
    else if (strcasecmp("Advisories", key) == 0)
      status = cf_util_get_boolean(child, &inst->advisories);
    else if (strcasecmp("ApiAudit", key) == 0)
      status = cf_util_get_boolean(child, &inst->api_audit);
    else if (strcasecmp("PushUnboundSeconds", key) == 0)
      status = config_positive(child, inst->name, 86400 * 7,
                               &inst->params.push_unbound_s);
    else if (strcasecmp("ClearHoldSeconds", key) == 0)
      status = config_number(child, inst->name, true, 86400,
                             &inst->params.clear_hold_s);
    else if (strcasecmp("RetentionHorizon", key) == 0)
      status = config_positive(child, inst->name, 86400 * 365,
                               &inst->params.retention_horizon_s);
    else if (strcasecmp("RateLimitedSeconds", key) == 0)
      status = config_positive(child, inst->name, 86400,
                               &inst->params.rate_limited_s);
    else
      WARNING(LOG_PREFIX "Instance \"%s\": unknown option \"%s\" ignored.",
              inst->name, key);
    if (status != 0)
      ERROR(LOG_PREFIX "Instance \"%s\": option \"%s\" is invalid.", inst->name,
            key);
  }
  return status;
}

static int nl_read(user_data_t *ud);

/* The names of the instances configured so far (config time only; kept
 * for the daemon's life). */
static char **configured_names;
static size_t n_configured_names;

/* Checks that name cannot be confused with an instance configured before:
 * values go under plugin instance <instance>-<stream>, so instances "real"
 * and "real-eu" would both write "real-eu-..." (stream "eu-..." of the
 * first, any stream of the second). Records the name when it is clear.
 * Returns 0, or -1 after logging why. */
static int check_name_unambiguous(const char *name) {
  for (size_t i = 0; i < n_configured_names; i++) {
    const char *old = configured_names[i];
    size_t lo = strlen(old), ln = strlen(name);
    const char *shorter = lo < ln ? old : name, *longer = lo < ln ? name : old;
    size_t ls = lo < ln ? lo : ln;
    if (lo != ln && strncmp(longer, shorter, ls) == 0 && longer[ls] == '-') {
      ERROR(LOG_PREFIX "Instance \"%s\": its values could not be told from "
                       "those of Instance \"%s\" (plugin instances are "
                       "<instance>-<stream>, and \"%s-...\" is both): rename "
                       "one of them.",
            name, old, longer);
      return -1;
    }
  }
  return strarray_add(&configured_names, &n_configured_names, name) == 0 ? 0
                                                                         : -1;
}

/* Reads the name of an Instance block into inst->name and checks it: 1 to
 * 63 characters without '/', and not to be confused with an instance
 * configured before (check_name_unambiguous). Returns 0, or -1 after
 * logging why. */
static int config_name(oconfig_item_t *ci, nl_instance *inst) {
  if (cf_util_get_string(ci, &inst->name) != 0) {
    ERROR(LOG_PREFIX "an Instance block needs exactly one name, as in "
                     "<Instance \"local\">.");
    return -1;
  }
  if (inst->name[0] == '\0' || strchr(inst->name, '/') != NULL ||
      strlen(inst->name) > 63) {
    ERROR(LOG_PREFIX "Instance \"%s\": the name must be 1 to 63 characters "
                     "without '/'.",
          inst->name);
    return -1;
  }
  return check_name_unambiguous(inst->name);
}

/* Checks the options that hold only together with others: Account,
 * ExcludeAccount and AccountAdvisories need SystemAccount true, Scope
 * "server" needs SystemAccount true and exactly one URL, and PollLog does
 * not go with SystemAccount true. Returns 0, or -1 after logging the first
 * that does not hold, in that order. */
static int check_combinations(const nl_instance *inst) {
  if (!inst->system_account && (inst->account_select.n_include > 0 ||
                                inst->account_select.n_exclude > 0)) {
    ERROR(LOG_PREFIX "Instance \"%s\": options Account and ExcludeAccount "
                     "need SystemAccount true (without it the instance sees "
                     "only its own account).",
          inst->name);
    return -1;
  }
  if (!inst->system_account && inst->n_adv_accounts > 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option AccountAdvisories needs "
                     "SystemAccount true (an ordinary Instance receives its "
                     "own account's advisories).",
          inst->name);
    return -1;
  }
  if (inst->server_scope && (!inst->system_account || inst->n_urls != 1)) {
    ERROR(LOG_PREFIX "Instance \"%s\": Scope \"server\" needs SystemAccount "
                     "true and exactly one URL, the NATS server on this "
                     "host (docs/agents.md).",
          inst->name);
    return -1;
  }
  if (inst->system_account && inst->poll_log_path != NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": option PollLog is not available with "
                     "SystemAccount true.",
          inst->name);
    return -1;
  }
  return 0;
}

/* Turns off the advisories of a SystemAccount instance, and says so: the
 * system account receives no account's advisories, and the classes they
 * speed up come from the polls (docs/system-account.md). The accounts of
 * AccountAdvisories keep theirs, on connections of their own. */
static void system_account_advisories(nl_instance *inst) {
  if (!inst->system_account || !inst->advisories)
    return;
  INFO(LOG_PREFIX "Instance \"%s\": SystemAccount: findings come from "
                  "polling every account; advisories are received only "
                  "for the %zu account(s) of AccountAdvisories.",
       inst->name, inst->n_adv_accounts);
  inst->advisories = false;
}

/* Makes the instance's connection from its URL, Timeout, credential, TLS
 * and InboxPrefix options, and one connection for each AccountAdvisories
 * entry (the same servers and TLS, the account's own credentials). None
 * connects yet: the poll thread does. Returns 0, or -1 after logging why
 * (URL missing, options that do not go together, a file that cannot be
 * read). */
static int create_transports(nl_instance *inst) {
  if (inst->n_urls == 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option URL is missing (for example "
                     "URL \"nats://127.0.0.1:4222\").",
          inst->name);
    return -1;
  }
  nl_transport_config tc = {
      .urls = (const char *const *)inst->urls,
      .n_urls = inst->n_urls,
      .timeout_ms = (int64_t)(inst->timeout_s * 1000.0),
      .name = "nats-lens collectd",
      .user = inst->user,
      .password = inst->password,
      .token = inst->token,
      .credentials_file = inst->credentials,
      .nkey_seed_file = inst->nkey_seed,
      .tls_ca_file = inst->tls_ca,
      .tls_cert_file = inst->tls_cert,
      .tls_key_file = inst->tls_key,
      .inbox_prefix = inst->inbox_prefix,
      .listed_servers_only = inst->server_scope,
  };
  static const nl_transport_names names = {
      "option ",     "options ", "URL",   "User",    "Password", "Token",
      "Credentials", "NKeySeed", "TLSCA", "TLSCert", "TLSKey"};
  char err[512];
  if (nl_transport_config_check(&tc, &names, err, sizeof(err)) != 0 ||
      nl_transport_create(&tc, &inst->transport, err, sizeof(err)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
    return -1;
  }
  for (size_t i = 0; i < inst->n_adv_accounts; i++) {
    struct account_connection *a = &inst->adv_accounts[i];
    nl_transport_config ac = tc;
    ac.user = a->user;
    ac.password = a->password;
    ac.token = NULL;
    ac.nkey_seed_file = NULL;
    ac.credentials_file = a->credentials;
    ac.name = "nats-lens collectd advisories";
    if (nl_transport_config_check(&ac, &names, err, sizeof(err)) != 0 ||
        nl_transport_create(&ac, &a->transport, err, sizeof(err)) != 0) {
      ERROR(LOG_PREFIX "Instance \"%s\": AccountAdvisories \"%s\": %s.",
            inst->name, a->account, err);
      return -1;
    }
  }
  return 0;
}

/* Opens the file of option PollLog, when it names one. Returns 0, or -1
 * after logging why. */
static int open_poll_log(nl_instance *inst) {
  char err[512];
  if (inst->poll_log_path != NULL &&
      nl_poll_log_open(inst->poll_log_path, &inst->poll_log, err,
                       sizeof(err)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option PollLog: %s.", inst->name, err);
    return -1;
  }
  return 0;
}

/* Makes the instance's engine with its detector options. Returns 0, or -1
 * after logging that memory ran out. */
static int create_engine(nl_instance *inst) {
  inst->engine = nl_engine_create(&inst->params);
  if (inst->engine == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": out of memory.", inst->name);
    return -1;
  }
  return 0;
}

/* Binds the listener of option Listen, when set, now, so that an address
 * in use refuses the configuration (it serves from nl_init). Its documents
 * are stale when no poll started for three intervals and a Timeout.
 * Without libmicrohttpd only the listener is lost: logged, and 0 returned,
 * since the instance still polls and notifies. Returns 0, or -1 after
 * logging why. */
static int bind_listener(nl_instance *inst) {
  if (inst->listen_host == NULL)
    return 0;
  cdtime_t interval =
      inst->interval ? inst->interval : cf_get_default_interval();
  nl_http_config hc = {inst->listen_host, inst->listen_port, inst->name,
                       inst->system_account ? NULL : inst->engine,
                       (int64_t)CDTIME_T_TO_NS(3 * interval) +
                           (int64_t)(inst->timeout_s * 1e9)};
  char err[512];
  int rc = nl_http_create(&hc, &inst->http, err, sizeof(err));
  if (rc == NL_HTTP_NO_LIBRARY) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s; it polls without the REST API "
                     "and dashboard.",
          inst->name, err);
    return 0;
  }
  if (rc != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
    return -1;
  }
  return 0;
}

/* Reads one Instance block into a new instance: its name and options,
 * checked together, then its connections, poll log, engine and listener,
 * in that order. Returns the instance, ready for its read callback (its
 * threads start in nl_init), or NULL after logging why, with everything
 * made so far freed. */
static nl_instance *configure_instance(oconfig_item_t *ci) {
  nl_instance *inst = nl_instance_new_defaults();
  if (inst == NULL)
    return NULL;
  if (config_name(ci, inst) != 0 || config_instance_options(ci, inst) != 0 ||
      check_combinations(inst) != 0)
    goto fail;
  system_account_advisories(inst);
  if (create_transports(inst) != 0 || open_poll_log(inst) != 0 ||
      create_engine(inst) != 0 || bind_listener(inst) != 0)
    goto fail;
  return inst;

fail:
  nl_instance_free(inst);
  return NULL;
}

/* Every instance configured, for nl_init (collectd owns them: each is freed
 * with its read callback). */
static nl_instance **instances;
static size_t n_instances;

/* Reads one Instance block (configure_instance) and registers its read
 * callback, which frees the instance with collectd's shutdown. Returns 0,
 * or -1 after logging why, or the registration's status. */
static int config_instance(oconfig_item_t *ci) {
  nl_instance *inst = configure_instance(ci);
  if (inst == NULL)
    return -1;
  nl_instance **grown =
      realloc(instances, (n_instances + 1) * sizeof(*instances));
  if (grown == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": out of memory.", inst->name);
    nl_instance_free(inst);
    return -1;
  }
  instances = grown;
  char cb_name[DATA_MAX_NAME_LEN];
  snprintf(cb_name, sizeof(cb_name), PLUGIN_NAME "/%s", inst->name);
  int status = plugin_register_complex_read(
      NULL, cb_name, nl_read, inst->interval,
      &(user_data_t){.data = inst, .free_func = nl_instance_free});
  if (status == 0)
    instances[n_instances++] = inst;
  return status;
}

static int nl_config(oconfig_item_t *ci) {
  int status = 0;
  for (int i = 0; i < ci->children_num; i++) {
    oconfig_item_t *child = ci->children + i;
    if (strcasecmp("Instance", child->key) == 0) {
      if (config_instance(child) != 0)
        status = -1;
    } else if (strcasecmp("Coverage", child->key) == 0) {
      if (nl_central_config(child) != 0)
        status = -1;
    } else {
      WARNING(LOG_PREFIX "unknown option \"%s\" ignored (options go inside "
                         "an <Instance> or <Coverage> block).",
              child->key);
    }
  }
  return status;
}

/* One poll of an instance, on its poll thread (nl_poller), with the plugin
 * context of the read that asked for it: connects if needed, polls, applies
 * the snapshots, and dispatches values and notifications. A failed poll is
 * reported (log line, POLL_FAILED notification, values). */
static void poll_run(void *ud) {
  nl_instance *inst = ud;
  read_ctx rc = nl_read_start(inst);
  char err[512];
  if (nl_transport_connect(inst->transport, err, sizeof(err)) != 0) {
    c_complain(LOG_ERR, &inst->connect_complaint,
               LOG_PREFIX "Instance \"%s\": cannot reach NATS: %s.", inst->name,
               err);
    inst->api_errors++;
    nl_poll_state(&rc, true, "not connected");
    nl_submit_failed_poll(&rc, false);
    nl_http_poll_failed(inst->http, err, (int64_t)CDTIME_T_TO_NS(rc.time));
    return;
  }
  if (c_would_release(&inst->connect_complaint))
    c_release(LOG_INFO, &inst->connect_complaint,
              LOG_PREFIX "Instance \"%s\": connected to NATS.", inst->name);
  if (inst->adv != NULL &&
      nl_advisory_thread_subscribe(inst->adv, inst->transport, inst->api_audit,
                                   err, sizeof(err)) != 0)
    WARNING(LOG_PREFIX "Instance \"%s\": cannot subscribe to the JetStream "
                       "advisories (%s); findings come from polling only.",
            inst->name, err);

  if (inst->system_account) {
    nl_poll_system(inst, &rc);
    return;
  }
  nl_poll_config pc = {
      .select = inst->select,
      .budget_ns = (int64_t)CDTIME_T_TO_NS(plugin_get_interval()),
  };
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  nl_request_fn request = nl_transport_request;
  void *request_ctx = inst->transport;
  if (inst->poll_log != NULL) {
    nl_poll_log_begin(inst->poll_log, (int64_t)CDTIME_T_TO_NS(rc.time),
                      nl_transport_request, inst->transport);
    request = nl_poll_log_request;
    request_ctx = inst->poll_log;
  }
  int status = nl_poll_run(&pc, request, request_ctx, &set, &stats);
  char why[128];
  if (nl_poll_log_take_stopped(inst->poll_log, why, sizeof(why)))
    WARNING(LOG_PREFIX "Instance \"%s\": the poll log \"%s\" is no longer "
                       "written: %s.",
            inst->name, inst->poll_log_path, why);
  if (nl_poll_outcome(inst, &rc, status, &stats) != 0) {
    nl_snapshot_set_clear(&set);
    return;
  }
  if (!inst->polled_once) {
    /* One line per instance, so that a healthy start shows in the log. */
    INFO(LOG_PREFIX "Instance \"%s\": first poll done: %zu stream(s) and "
                    "%zu consumer(s) watched.",
         inst->name, set.n_streams, set.n_consumers);
    inst->polled_once = true;
  }

  nl_update_values_limit(inst, set.n_consumers);
  rc.findings_only = nl_findings_only(inst);
  /* Advisories that arrived before this poll go in first (the advisory
   * thread feeds them too; whichever comes first). Feeding makes no
   * network request, so this waits at most for a batch being fed. */
  nl_advisory_thread_drain(inst->adv);
  uint64_t onsets = 0, contradicted = 0;
  size_t kept = nl_apply_poll(inst, &rc, &set, &onsets, &contradicted);
  nl_submit_advisory_counts(&rc, contradicted);
  nl_submit_instance(&rc, CDTIME_T_TO_DOUBLE(cdtime() - rc.time),
                     set.n_consumers, set.unobservable + kept, set.n_streams,
                     true, onsets);
  nl_snapshot_set_clear(&set);
  /* A large poll's replies and snapshots are freed now; hand their pages
   * back so that collectd's resident memory holds only the per-consumer
   * history. A small poll leaves little to hand back: trimming each read
   * would only cost the daemon's other threads. */
  if (stats.bytes_received >= NL_TRIM_BYTES)
    malloc_trim(0);
}

/* The read callback: kicks the instance's poll thread and returns at once,
 * never waiting on the network or on another thread's I/O. A read that
 * finds the previous poll still running is counted (derive
 * polls_overrun) and carried over; one that finds it running for more
 * than twice the interval and a Timeout (a request that does not end) is
 * logged, once while it lasts. It returns 0 in every case: an error would
 * make collectd double the interval at each failure, up to MaxReadInterval
 * (86,400 s by default), and see the recovery that late; a failed poll is
 * reported by the poll itself (docs/reliability.md). */
static int nl_read(user_data_t *ud) {
  nl_instance *inst = ud->data;
  if (inst->poller == NULL) {
    c_complain(LOG_ERR, &inst->overrun_complaint,
               LOG_PREFIX "Instance \"%s\": no poll thread: it does not "
                          "poll.",
               inst->name);
    return 0;
  }
  if (nl_poller_kick(inst->poller)) {
    c_release(LOG_INFO, &inst->overrun_complaint,
              LOG_PREFIX "Instance \"%s\": polls end in time again.",
              inst->name);
    return 0;
  }
  cdtime_t running = nl_poller_running_for(inst->poller);
  cdtime_t limit =
      2 * plugin_get_interval() + DOUBLE_TO_CDTIME_T(inst->timeout_s);
  if (running > limit)
    c_complain(LOG_WARNING, &inst->overrun_complaint,
               LOG_PREFIX "Instance \"%s\": a poll has run for %.1f s "
                          "(Interval %.1f s, Timeout %.1f s); reads wait "
                          "for it to end.",
               inst->name, CDTIME_T_TO_DOUBLE(running),
               CDTIME_T_TO_DOUBLE(plugin_get_interval()), inst->timeout_s);
  return 0;
}

/* collectd's init, after it forked into the background: starts each
 * instance's threads (a thread started while the configuration is read
 * would not survive the fork). An instance whose advisory thread or
 * listener cannot start polls without them; one without a poll thread
 * does not poll, and says so at each read. */
static int nl_init(void) {
  char err[512];
  for (size_t i = 0; i < n_instances; i++) {
    nl_instance *inst = instances[i];
    if (inst->advisories && inst->adv == NULL &&
        (inst->adv = nl_advisory_thread_start(4096, nl_feed_advisories,
                                              nl_refresh_pending, inst, err,
                                              sizeof(err))) == NULL)
      ERROR(LOG_PREFIX "Instance \"%s\": %s; findings come from polling "
                       "only.",
            inst->name, err);
    if (inst->http != NULL) {
      if (nl_http_serve(inst->http, err, sizeof(err)) == 0)
        INFO(LOG_PREFIX "Instance \"%s\": REST API and dashboard on "
                        "http://%s:%s/",
             inst->name, inst->listen_host, inst->listen_port);
      else
        ERROR(LOG_PREFIX "Instance \"%s\": %s; it polls without the REST "
                         "API and dashboard.",
              inst->name, err);
    }
    if (inst->poller == NULL &&
        (inst->poller = nl_poller_start("nats_lens_poll", poll_run, inst, err,
                                        sizeof(err))) == NULL)
      ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
  }
  return 0;
}

/* collectd's shutdown: the instances themselves are freed with their read
 * callbacks (before this runs); only the list of them is left. */
static int nl_shutdown(void) {
  free(instances);
  instances = NULL;
  n_instances = 0;
  return 0;
}

void module_register(void) {
  plugin_register_complex_config(PLUGIN_NAME, nl_config);
  plugin_register_init(PLUGIN_NAME, nl_init);
  plugin_register_shutdown(PLUGIN_NAME, nl_shutdown);
}
