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
 *   the engine (feed_advisories, no network) and then, with no lock held,
 *   reads the consumers CREATED advisories announced (refresh_pending).
 * - cnats threads: deliver advisories into the advisory queue (its own
 *   mutex), reconnect, and call the transport's callbacks.
 * - the libmicrohttpd thread (http/nl_http): answers the REST API from the
 *   documents nl_http_update publishes after each poll; only a history
 *   document not yet kept is rendered from the registry, under
 *   nl_http_lock, waiting at most 0.5 s.
 * - collectd's configuration and shutdown: config_instance and
 *   instance_free, when no other thread of the instance runs (shutdown
 *   closes the connection, then stops the poll, advisory and HTTP threads).
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
#include "collectd.h"

#include "plugin.h"
#include "utils/common/common.h"
#include "utils_complain.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/nl_engine.h"
#include "core/nl_health.h"
#include "core/nl_names.h"
#include "core/nl_onset_rate.h"
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

#define PLUGIN_NAME "nats_lens"
#define LOG_PREFIX PLUGIN_NAME " plugin: "
/* ConsumerValuesLimit's default: 1,000 consumers' values (18 value lists
 * each) take collectd's cache about 30 MB. */
#define NL_DEFAULT_VALUES_LIMIT 1000
/* A poll that received at least this much hands its memory back to the
 * system afterwards (malloc_trim). */
#define NL_TRIM_BYTES (4 * 1024 * 1024)
/* Longest server name kept for notifications (Scope "server"). */
#define NL_SERVER_NAME_MAX 128

/* A consumer a CREATED advisory announced (names owned). */
struct created_entry {
  char *stream;
  char *consumer;
};

/* CREATED advisories waiting to be read, and read per call of
 * refresh_pending (about once a second, and after each batch). */
#define NL_CREATED_PENDING_MAX 1024
#define NL_CREATED_PER_CALL 32

typedef struct nl_instance nl_instance;

struct nl_instance {
  char *name;
  char **urls;
  size_t n_urls;
  nl_stream_select select; /* Stream and ExcludeStream. */
  double timeout_s;
  cdtime_t interval;
  char *user;
  char *password;
  char *token;
  char *credentials;
  char *nkey_seed;
  char *tls_ca;
  char *tls_cert;
  char *tls_key;
  char *inbox_prefix;
  nl_detect_params params;
  /* Per-consumer values: all of them, only the class gauges of consumers
   * with an active finding, or none (large deployments: collectd keeps
   * about 1.7 kB per value list in its cache, 18 per consumer). */
  enum { VALUES_ALL, VALUES_FINDINGS, VALUES_NONE } consumer_values;
  /* ConsumerValuesLimit: above this many consumers in a poll, "all" sends
   * what "findings" sends (0: no limit); values_limited while it does. */
  unsigned consumer_values_limit;
  atomic_bool values_limited; /* Written by the poll, read by all. */
  /* HealthEvents, HealthSubjectPrefix, SummaryInterval and their state. */
  nl_health health;
  char *listen_host; /* Listen "host" "port"; NULL when not configured. */
  char *listen_port;

  nl_transport *transport;
  nl_engine *engine;
  nl_http *http; /* The REST API and dashboard, or NULL. */
  /* The poll thread (started by nl_init, after collectd's fork), which the
   * read callback kicks; NULL before nl_init or when it failed. */
  nl_poller *poller;
  c_complain_t overrun_complaint;
  /* Advisories (option Advisories, default true): the advisory path, and
   * the lock that serialises it with the poll around the engine
   * (taken before nl_http_lock). */
  bool advisories;
  nl_advisory_thread *adv;
  pthread_mutex_t engine_lock;
  /* Consumers that CREATED advisories announced, waiting for the advisory
   * thread to read them (refresh_created): one entry per consumer, at most
   * NL_CREATED_PENDING_MAX, the rest left to the next poll and counted. */
  pthread_mutex_t created_lock;
  struct created_entry *created;
  size_t n_created;
  uint64_t created_dropped;
  /* Serialises what goes out of the plugin: notifications, health events
   * and the complaint about publishing them. */
  pthread_mutex_t send_lock;
  /* Findings started in the last hour (guarded by engine_lock, under which
   * every transition is reported). */
  nl_onset_rate onsets;
  c_complain_t publish_complaint;
  c_complain_t poll_complaint;
  c_complain_t connect_complaint;
  bool poll_failing; /* A FAILURE notification for the poll is out. */
  bool polled_once;  /* The first good poll has been logged. */
  /* The transport's disconnect count at the latest good poll: a change is
   * a gap in what the polls saw (nl_engine_gap). */
  uint64_t disconnects_seen;
  uint64_t api_requests;
  uint64_t api_errors;
  /* PollLog: the file every poll reply is appended to (an evaluation aid),
   * or NULL; written by the poll thread alone. */
  char *poll_log_path;
  nl_poll_log *poll_log;
  /* SystemAccount: the credentials are the system account's, and each
   * poll reads every account through one JSZ request (jsapi/nl_jsz_poll).
   * Each account selected (Account, ExcludeAccount) is judged by an
   * account instance of its own, made when the account is first seen and
   * kept for the daemon's life: its engine, health state and subject
   * prefix, onsets and complaints; it borrows the transport. Only the poll
   * thread adds to the list; the HTTP layer has its own copy. */
  bool system_account;
  /* Scope "server" (with SystemAccount): each poll reads the connected
   * server alone ($SYS.REQ.SERVER.<id>.JSZ) and judges what it leads; the
   * same for an account instance of such an instance. first_poll_ns is
   * the time of the instance's (or account instance's) first poll: a
   * consumer first judged later, and created before it was, was taken
   * over from another server's agent. */
  bool server_scope;
  int64_t first_poll_ns;
  /* What log_scope_change last logged (poll thread only). */
  bool scope_logged;
  size_t scope_judged;
  char scope_server[NL_SERVER_NAME_MAX];
  /* The server polled last (summaries name it: nl_health.server). */
  char server_name[NL_SERVER_NAME_MAX];
  nl_stream_select account_select;
  nl_instance **accounts;
  size_t n_accounts;
  /* AccountAdvisories: the accounts whose advisories come on a connection
   * of their own (made at configuration, handed to the account's instance
   * when the account is first seen). */
  struct account_connection *adv_accounts;
  size_t n_adv_accounts;
  /* For an account instance: its parent, its account's name and id, and
   * whether transport is its own (AccountAdvisories) or its parent's. */
  nl_instance *parent;
  char *account;
  char *account_id;
  bool owns_transport;
};

/* An AccountAdvisories entry: the account's name and a connection with
 * that account's credentials (owned until handed over). */
struct account_connection {
  char *account;
  char *credentials; /* A credentials file, or NULL. */
  char *user;        /* Or a user and password, or NULL. */
  char *password;
  nl_transport *transport;
};

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

/* Returns a zeroed instance with its locks and complaints initialised, or
 * NULL when memory runs out: the start of an instance and of an account
 * instance alike. */
static nl_instance *instance_new(void) {
  nl_instance *inst = calloc(1, sizeof(*inst));
  if (inst == NULL)
    return NULL;
  pthread_mutex_init(&inst->engine_lock, NULL);
  pthread_mutex_init(&inst->created_lock, NULL);
  pthread_mutex_init(&inst->send_lock, NULL);
  C_COMPLAIN_INIT(&inst->poll_complaint);
  C_COMPLAIN_INIT(&inst->connect_complaint);
  C_COMPLAIN_INIT(&inst->publish_complaint);
  C_COMPLAIN_INIT(&inst->overrun_complaint);
  return inst;
}

static void instance_free(void *arg) {
  nl_instance *inst = arg;
  if (inst == NULL)
    return;
  /* Closing the connection first makes a request the advisory thread is
   * waiting on (a server that does not answer) fail at once, so stopping
   * the thread takes no Timeout; the same holds for a poll in progress.
   * The poller, the listener and the advisory thread use the engine: stop
   * them before it goes. */
  bool owns = inst->parent == NULL || inst->owns_transport;
  if (owns)
    nl_transport_close(inst->transport);
  nl_poller_stop(inst->poller);
  nl_advisory_thread_stop(inst->adv);
  /* The account instances after the poll thread (which makes them) and
   * before the listener (their advisory threads take its lock). */
  for (size_t i = 0; i < inst->n_accounts; i++)
    instance_free(inst->accounts[i]);
  free(inst->accounts);
  for (size_t i = 0; i < inst->n_adv_accounts; i++) {
    free(inst->adv_accounts[i].account);
    free(inst->adv_accounts[i].credentials);
    free(inst->adv_accounts[i].user);
    free(inst->adv_accounts[i].password);
    nl_transport_free(inst->adv_accounts[i].transport);
  }
  free(inst->adv_accounts);
  nl_http_stop(inst->http);
  strarray_free(inst->account_select.include, inst->account_select.n_include);
  strarray_free(inst->account_select.exclude, inst->account_select.n_exclude);
  free(inst->account);
  free(inst->account_id);
  free(inst->listen_host);
  free(inst->listen_port);
  nl_engine_free(inst->engine);
  if (owns)
    nl_transport_free(inst->transport);
  nl_poll_log_close(inst->poll_log);
  free(inst->poll_log_path);
  /* After the transport: its callbacks queue. */
  nl_advisory_thread_free(inst->adv);
  pthread_mutex_destroy(&inst->engine_lock);
  for (size_t i = 0; i < inst->n_created; i++) {
    free(inst->created[i].stream);
    free(inst->created[i].consumer);
  }
  free(inst->created);
  pthread_mutex_destroy(&inst->created_lock);
  pthread_mutex_destroy(&inst->send_lock);
  free(inst->name);
  strarray_free(inst->urls, inst->n_urls);
  if (inst->parent == NULL) { /* An account instance borrows them. */
    strarray_free(inst->select.include, inst->select.n_include);
    strarray_free(inst->select.exclude, inst->select.n_exclude);
  }
  free(inst->user);
  free(inst->password);
  free(inst->token);
  free(inst->credentials);
  free(inst->nkey_seed);
  free(inst->tls_ca);
  free(inst->tls_cert);
  free(inst->tls_key);
  free(inst->inbox_prefix);
  free(inst);
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
    else if (strcasecmp("PushUnboundSeconds", key) == 0)
      status = config_positive(child, inst->name, 86400 * 7,
                               &inst->params.push_unbound_s);
    else if (strcasecmp("ClearHoldSeconds", key) == 0)
      status = config_number(child, inst->name, true, 86400,
                             &inst->params.clear_hold_s);
    else if (strcasecmp("RetentionHorizon", key) == 0)
      status = config_positive(child, inst->name, 86400 * 365,
                               &inst->params.retention_horizon_s);
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
static void feed_advisories(void *ud, const nl_advisory *a, size_t n);
static void refresh_pending(void *ud);

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

/* Every instance configured, for nl_init (collectd owns them: each is freed
 * with its read callback). */
static nl_instance **instances;
static size_t n_instances;

/* Parses one Instance block, binds its listener (if any) and registers its
 * read callback; its threads start in nl_init. */
static int config_instance(oconfig_item_t *ci) {
  nl_instance *inst = instance_new();
  if (inst == NULL)
    return -1;
  nl_detect_params_default(&inst->params);
  inst->params.config_classes = true;
  inst->advisories = true;
  nl_health_init(&inst->health);
  inst->timeout_s = 2.0;
  inst->consumer_values_limit = NL_DEFAULT_VALUES_LIMIT;
  if (cf_util_get_string(ci, &inst->name) != 0) {
    ERROR(LOG_PREFIX "an Instance block needs exactly one name, as in "
                     "<Instance \"local\">.");
    instance_free(inst);
    return -1;
  }
  if (inst->name[0] == '\0' || strchr(inst->name, '/') != NULL ||
      strlen(inst->name) > 63) {
    ERROR(LOG_PREFIX "Instance \"%s\": the name must be 1 to 63 characters "
                     "without '/'.",
          inst->name);
    instance_free(inst);
    return -1;
  }
  if (check_name_unambiguous(inst->name) != 0 ||
      config_instance_options(ci, inst) != 0) {
    instance_free(inst);
    return -1;
  }
  if (!inst->system_account && (inst->account_select.n_include > 0 ||
                                inst->account_select.n_exclude > 0)) {
    ERROR(LOG_PREFIX "Instance \"%s\": options Account and ExcludeAccount "
                     "need SystemAccount true (without it the instance sees "
                     "only its own account).",
          inst->name);
    instance_free(inst);
    return -1;
  }
  if (!inst->system_account && inst->n_adv_accounts > 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option AccountAdvisories needs "
                     "SystemAccount true (an ordinary Instance receives its "
                     "own account's advisories).",
          inst->name);
    instance_free(inst);
    return -1;
  }
  if (inst->server_scope && (!inst->system_account || inst->n_urls != 1)) {
    ERROR(LOG_PREFIX "Instance \"%s\": Scope \"server\" needs SystemAccount "
                     "true and exactly one URL, the NATS server on this "
                     "host (docs/agents.md).",
          inst->name);
    instance_free(inst);
    return -1;
  }
  if (inst->system_account && inst->poll_log_path != NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": option PollLog is not available with "
                     "SystemAccount true.",
          inst->name);
    instance_free(inst);
    return -1;
  }
  if (inst->system_account && inst->advisories) {
    /* The system account receives no account's advisories: the classes
     * they speed up come from the polls (docs/system-account.md). */
    INFO(LOG_PREFIX "Instance \"%s\": SystemAccount: findings come from "
                    "polling every account; advisories are received only "
                    "for the %zu account(s) of AccountAdvisories.",
         inst->name, inst->n_adv_accounts);
    inst->advisories = false;
  }
  if (inst->n_urls == 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option URL is missing (for example "
                     "URL \"nats://127.0.0.1:4222\").",
          inst->name);
    instance_free(inst);
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
    instance_free(inst);
    return -1;
  }
  /* AccountAdvisories: the same servers and TLS, each account's own
   * credentials. */
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
      instance_free(inst);
      return -1;
    }
  }
  if (inst->poll_log_path != NULL &&
      nl_poll_log_open(inst->poll_log_path, &inst->poll_log, err,
                       sizeof(err)) != 0) {
    ERROR(LOG_PREFIX "Instance \"%s\": option PollLog: %s.", inst->name, err);
    instance_free(inst);
    return -1;
  }
  inst->engine = nl_engine_create(&inst->params);
  if (inst->engine == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": out of memory.", inst->name);
    instance_free(inst);
    return -1;
  }
  if (inst->listen_host != NULL) {
    /* Bound now, so that an address in use refuses the configuration;
     * served from nl_init. Stale: no poll started for three intervals
     * and a Timeout. */
    cdtime_t interval =
        inst->interval ? inst->interval : cf_get_default_interval();
    nl_http_config hc = {inst->listen_host, inst->listen_port, inst->name,
                         inst->system_account ? NULL : inst->engine,
                         (int64_t)CDTIME_T_TO_NS(3 * interval) +
                             (int64_t)(inst->timeout_s * 1e9)};
    int rc = nl_http_create(&hc, &inst->http, err, sizeof(err));
    if (rc == NL_HTTP_NO_LIBRARY) {
      /* Only the listener is lost: the instance polls and notifies. */
      ERROR(LOG_PREFIX "Instance \"%s\": %s; it polls without the REST API "
                       "and dashboard.",
            inst->name, err);
    } else if (rc != 0) {
      ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
      instance_free(inst);
      return -1;
    }
  }
  nl_instance **grown =
      realloc(instances, (n_instances + 1) * sizeof(*instances));
  if (grown == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": out of memory.", inst->name);
    instance_free(inst);
    return -1;
  }
  instances = grown;
  char cb_name[DATA_MAX_NAME_LEN];
  snprintf(cb_name, sizeof(cb_name), PLUGIN_NAME "/%s", inst->name);
  int status = plugin_register_complex_read(
      NULL, cb_name, nl_read, inst->interval,
      &(user_data_t){.data = inst, .free_func = instance_free});
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

/* A transition the engine reported, kept until the engine's locks are
 * released: notifications and health events go out with no lock but
 * send_lock held. */
typedef struct {
  char *stream;
  char *consumer;
  nl_finding finding;
  bool active;
  const char *reason; /* A string constant, or NULL. */
  bool takeover;      /* An onset of a consumer taken over (taken_over). */
} held_transition;

typedef struct {
  held_transition *items;
  size_t n;
  size_t cap;
} transition_list;

/* Context of one read, handed to the engine's sink. */
typedef struct {
  nl_instance *inst;
  cdtime_t time;
  /* Per-consumer values are only the class gauges of consumers with a
   * finding: ConsumerValues "findings", or "all" over ConsumerValuesLimit. */
  bool findings_only;
  /* Where the sink keeps transitions for send_transitions. */
  transition_list *held;
  /* Scope "server": the name of the server polled, or "". */
  char server[NL_SERVER_NAME_MAX];
} read_ctx;

/* Whether inst sends only the class gauges of consumers with a finding, as
 * its latest poll decided. */
static bool findings_only(const nl_instance *inst) {
  return inst->consumer_values == VALUES_FINDINGS || inst->values_limited;
}

/* The context of a read (or advisory batch) of inst starting now. */
static read_ctx read_start(nl_instance *inst) {
  return (read_ctx){
      .inst = inst, .time = cdtime(), .findings_only = findings_only(inst)};
}

/* The connection the polls, health events and summaries of inst go on:
 * its parent's for an account instance (which may have one of its own for
 * its advisories, AccountAdvisories). */
static nl_transport *poll_transport(const nl_instance *inst) {
  return inst->parent ? inst->parent->transport : inst->transport;
}

/* The listener inst's documents go to: its parent's for an account
 * instance. */
static nl_http *instance_http(const nl_instance *inst) {
  return inst->parent ? inst->parent->http : inst->http;
}

/* Builds a plugin_instance from "<instance>", then "-<account>" for an
 * account instance, then "-<stream>" when stream is not NULL, fitted to
 * collectd's limits (nl_name_fit). */
static void plugin_instance_of(const nl_instance *inst, const char *stream,
                               char *out, size_t len) {
  char joined[3 * NL_NAME_MAX];
  snprintf(joined, sizeof(joined), "%s%s%s%s%s", inst->name,
           inst->account ? "-" : "", inst->account ? inst->account : "",
           stream ? "-" : "", stream ? stream : "");
  nl_name_fit(joined, out, len);
}

/* Builds the plugin_instance of inst's own values: "<instance>", or
 * "<instance>-<account>" for an account instance. */
static void own_plugin_instance(const nl_instance *inst, char *out,
                                size_t len) {
  plugin_instance_of(inst, NULL, out, len);
}

/* Builds the plugin_instance "<instance>-<stream>", or
 * "<instance>-<account>-<stream>" for an account instance. */
static void stream_plugin_instance(const nl_instance *inst, const char *stream,
                                   char *out, size_t len) {
  plugin_instance_of(inst, stream, out, len);
}

static void submit(const read_ctx *rc, const char *plugin_instance,
                   const char *type, const char *type_instance, value_t v) {
  value_list_t vl = VALUE_LIST_INIT;
  vl.values = &v;
  vl.values_len = 1;
  vl.time = rc->time;
  sstrncpy(vl.plugin, PLUGIN_NAME, sizeof(vl.plugin));
  sstrncpy(vl.plugin_instance, plugin_instance, sizeof(vl.plugin_instance));
  sstrncpy(vl.type, type, sizeof(vl.type));
  if (type_instance != NULL)
    sstrncpy(vl.type_instance, type_instance, sizeof(vl.type_instance));
  plugin_dispatch_values(&vl);
}

static void submit_gauge(const read_ctx *rc, const char *pi, const char *type,
                         const char *ti, double v) {
  submit(rc, pi, type, ti, (value_t){.gauge = v});
}

static void submit_derive(const read_ctx *rc, const char *pi, const char *type,
                          const char *ti, uint64_t v) {
  submit(rc, pi, type, ti, (value_t){.derive = (derive_t)v});
}

/* Dispatches one 0/1 value per class for a consumer. */
static void submit_class_gauges(const read_ctx *rc, const char *pi,
                                const char *ti, const nl_consumer_state *st) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    if (nl_class_is_stream(cls))
      continue; /* Dispatched per stream (sink_stream). */
    char type[DATA_MAX_NAME_LEN];
    snprintf(type, sizeof(type), "nats_lens_%s", nl_class_type_suffix(cls));
    submit_gauge(rc, pi, type, ti, st->active[cls] ? 1.0 : 0.0);
  }
}

static void sink_consumer(void *ud, const nl_consumer_snap *c,
                          const nl_stream_snap *s,
                          const nl_consumer_state *st) {
  const read_ctx *rc = ud;
  bool any_active = false;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    any_active |= st->active[cls] != NULL;
  char pi[DATA_MAX_NAME_LEN], ti[DATA_MAX_NAME_LEN];
  stream_plugin_instance(rc->inst, s->name, pi, sizeof(pi));
  nl_name_fit(c->name, ti, sizeof(ti));
  /* Scope "server": every consumer judged says so each poll, whatever
   * ConsumerValues says: the central side's coverage (docs/agents.md). */
  if (rc->inst->server_scope)
    submit_gauge(rc, pi, "nats_lens_judged", ti, 1.0);
  if (rc->inst->consumer_values == VALUES_NONE ||
      (rc->findings_only && !any_active))
    return;
  if (rc->findings_only) {
    submit_class_gauges(rc, pi, ti, st);
    return;
  }
  submit_gauge(rc, pi, "nats_lens_num_pending", ti, (double)c->num_pending);
  submit_gauge(rc, pi, "nats_lens_num_ack_pending", ti,
               (double)c->num_ack_pending);
  submit_gauge(rc, pi, "nats_lens_num_redelivered", ti,
               (double)c->num_redelivered);
  submit_gauge(rc, pi, "nats_lens_num_waiting", ti, (double)c->num_waiting);
  submit_gauge(rc, pi, "nats_lens_ack_pending_ratio", ti,
               c->max_ack_pending > 0
                   ? (double)c->num_ack_pending / (double)c->max_ack_pending
                   : NAN);
  submit_derive(rc, pi, "nats_lens_delivered", ti, c->delivered_consumer_seq);
  submit_derive(rc, pi, "nats_lens_redelivered", ti, st->redelivered_total);
  submit_derive(rc, pi, "nats_lens_lost", ti, st->lost_total);
  submit_class_gauges(rc, pi, ti, st);
}

static void sink_stream(void *ud, const nl_stream_snap *s,
                        uint64_t lost_total) {
  const read_ctx *rc = ud;
  char pi[DATA_MAX_NAME_LEN];
  stream_plugin_instance(rc->inst, s->name, pi, sizeof(pi));
  submit_gauge(rc, pi, "count", "messages", (double)s->msgs);
  submit_gauge(rc, pi, "bytes", NULL, (double)s->bytes);
  submit_gauge(rc, pi, "count", "consumers", (double)s->consumer_count);
  submit_gauge(rc, pi, "nats_lens_seq", "first", (double)s->first_seq);
  submit_gauge(rc, pi, "nats_lens_seq", "last", (double)s->last_seq);
  submit_derive(rc, pi, "nats_lens_lost", NULL, lost_total);
  /* One 0/1 value per stream-level class (no type instance). */
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    if (!nl_class_is_stream(cls))
      continue;
    char type[DATA_MAX_NAME_LEN];
    snprintf(type, sizeof(type), "nats_lens_%s", nl_class_type_suffix(cls));
    submit_gauge(
        rc, pi, type, NULL,
        nl_engine_stream_finding(rc->inst->engine, s->name, cls) ? 1.0 : 0.0);
  }
}

/* Dispatches a notification; meta (may be NULL) is freed afterwards. */
static void notify(const read_ctx *rc, int severity, const char *pi,
                   const char *type_instance, const char *message,
                   notification_t *n) {
  n->severity = severity;
  n->time = rc->time;
  sstrncpy(n->host, hostname_g, sizeof(n->host));
  sstrncpy(n->plugin, PLUGIN_NAME, sizeof(n->plugin));
  sstrncpy(n->plugin_instance, pi, sizeof(n->plugin_instance));
  sstrncpy(n->type_instance, type_instance, sizeof(n->type_instance));
  sstrncpy(n->message, message, sizeof(n->message));
  plugin_dispatch_notification(n);
  if (n->meta != NULL)
    plugin_notification_meta_free(n->meta);
  n->meta = NULL;
}

/* Logs a failed health event or summary (rc < 0, why in err) once while
 * failures repeat, and once when publishing works again (rc >= 0). */
static void publish_result(nl_instance *inst, int rc, const char *err) {
  if (rc < 0)
    c_complain(LOG_WARNING, &inst->publish_complaint,
               LOG_PREFIX "Instance \"%s\": cannot publish a health event: "
                          "%s.",
               inst->name, err);
  else if (c_would_release(&inst->publish_complaint))
    c_release(LOG_INFO, &inst->publish_complaint,
              LOG_PREFIX "Instance \"%s\": health events are published "
                         "again.",
              inst->name);
}

/* Scope "server": sends the notice that a finding's consumer (or stream)
 * is now led by another server, whose agent judges it from now on: a
 * health event and a WARNING notification with state "handed_over", never
 * an OKAY (nothing was fixed). Call with send_lock held and no other lock. */
static void send_handover(const read_ctx *rc, const char *stream,
                          const char *consumer, const nl_finding *f,
                          const char *in_account) {
  nl_event ev = {.instance = rc->inst->name,
                 .account = rc->inst->account,
                 .server = rc->server[0] ? rc->server : NULL,
                 .stream = stream,
                 .consumer = consumer,
                 .finding = f,
                 .handed_over = true,
                 .reason = NL_REASON_LED_ELSEWHERE,
                 .at_ns = (int64_t)CDTIME_T_TO_NS(rc->time)};
  char err[256];
  publish_result(rc->inst,
                 nl_health_transition(&rc->inst->health, nl_transport_publish,
                                      poll_transport(rc->inst), &ev, err,
                                      sizeof(err)),
                 err);
  char pi[DATA_MAX_NAME_LEN], msg[NOTIF_MAX_MSG_LEN];
  stream_plugin_instance(rc->inst, stream, pi, sizeof(pi));
  snprintf(msg, sizeof(msg),
           "%s %s%s%s%s%s handed over: another server leads it now and its "
           "agent judges it (not a fix)",
           nl_class_name(f->cls), consumer[0] ? "" : "stream ", stream,
           consumer[0] ? "/" : "", consumer, in_account);
  nl_printable(msg, false, msg, sizeof(msg));
  notification_t n = {0};
  plugin_notification_meta_add_string(&n, "instance", rc->inst->name);
  if (rc->inst->account != NULL)
    plugin_notification_meta_add_string(&n, "account", rc->inst->account);
  plugin_notification_meta_add_string(&n, "class", nl_class_name(f->cls));
  plugin_notification_meta_add_string(&n, "stream", stream);
  plugin_notification_meta_add_string(&n, "consumer", consumer);
  plugin_notification_meta_add_string(&n, "state", "handed_over");
  if (rc->server[0] != '\0')
    plugin_notification_meta_add_string(&n, "server", rc->server);
  notify(rc, NOTIF_WARNING, pi, nl_class_name(f->cls), msg, &n);
}

/* Sends one transition as a notification and a health event (a handover,
 * Scope "server", as send_handover says). Call with send_lock held and no
 * other lock. */
static void send_transition(const read_ctx *rc, const char *stream,
                            const char *consumer, const nl_finding *f,
                            bool active, const char *reason, bool takeover) {
  char pi[DATA_MAX_NAME_LEN], msg[NOTIF_MAX_MSG_LEN];
  stream_plugin_instance(rc->inst, stream, pi, sizeof(pi));
  /* An account instance names the account after the consumer. */
  const char *acc = rc->inst->account;
  char in_account[NL_NAME_MAX + 16] = "";
  if (acc != NULL)
    snprintf(in_account, sizeof(in_account), " (account %s)", acc);
  if (!active && reason == NL_REASON_LED_ELSEWHERE) {
    send_handover(rc, stream, consumer, f, in_account);
    return;
  }
  if (takeover) /* Before the fix: kept whatever the evidence takes. */
    snprintf(in_account + strlen(in_account),
             sizeof(in_account) - strlen(in_account), " (takeover)");
  if (active) {
    /* The essentials first: the class, where, and the fix command; then as
     * many whole evidence items as collectd's 256-byte message limit
     * leaves room for (", ..." when some are left out; all of them are in
     * the meta fields). */
    int n =
        snprintf(msg, sizeof(msg), "%s %s%s%s%s%s: fix: %s; ",
                 nl_class_name(f->cls), consumer[0] ? "" : "stream ", stream,
                 consumer[0] ? "/" : "", consumer, in_account, f->fix_command);
    if (n > 0 && (size_t)n < sizeof(msg))
      nl_finding_format_evidence(f, msg + n, sizeof(msg) - (size_t)n);
  } else
    snprintf(msg, sizeof(msg), "%s %s%s%s%s%s cleared%s%s",
             nl_class_name(f->cls), consumer[0] ? "" : "stream ", stream,
             consumer[0] ? "/" : "", consumer, in_account, reason ? ": " : "",
             reason ? reason : "");
  /* Names come from the server: no control character reaches the log. */
  nl_printable(msg, false, msg, sizeof(msg));
  notification_t n = {0};
  plugin_notification_meta_add_string(&n, "instance", rc->inst->name);
  if (acc != NULL)
    plugin_notification_meta_add_string(&n, "account", acc);
  if (rc->server[0] != '\0')
    plugin_notification_meta_add_string(&n, "server", rc->server);
  if (takeover)
    plugin_notification_meta_add_string(&n, "takeover", "true");
  plugin_notification_meta_add_string(&n, "class", nl_class_name(f->cls));
  plugin_notification_meta_add_string(&n, "severity",
                                      nl_severity_name(f->severity));
  plugin_notification_meta_add_string(&n, "stream", stream);
  plugin_notification_meta_add_string(&n, "consumer", consumer);
  plugin_notification_meta_add_string(&n, "state",
                                      active ? "firing" : "resolved");
  plugin_notification_meta_add_string(&n, "description", f->description);
  plugin_notification_meta_add_string(&n, "fix_command", f->fix_command);
  plugin_notification_meta_add_string(&n, "recommendation", f->recommendation);
  for (int i = 0; i < f->n_evidence; i++)
    plugin_notification_meta_add_double(&n, f->evidence[i].name,
                                        f->evidence[i].value);
  int severity = !active                               ? NOTIF_OKAY
                 : f->severity == NL_SEVERITY_CRITICAL ? NOTIF_FAILURE
                                                       : NOTIF_WARNING;
  notify(rc, severity, pi, nl_class_name(f->cls), msg, &n);
  nl_event ev = {.instance = rc->inst->name,
                 .account = acc,
                 .server = rc->server[0] ? rc->server : NULL,
                 .takeover = takeover,
                 .stream = stream,
                 .consumer = consumer,
                 .finding = f,
                 .firing = active,
                 .reason = reason,
                 .at_ns = (int64_t)CDTIME_T_TO_NS(rc->time)};
  char err[256];
  int sent =
      nl_health_transition(&rc->inst->health, nl_transport_publish,
                           poll_transport(rc->inst), &ev, err, sizeof(err));
  publish_result(rc->inst, sent, err);
}

/* Scope "server": whether consumer's findings are a takeover, under
 * engine_lock: the instance began judging it after its own first poll,
 * and it had been created well before (two intervals), so another
 * server's agent judged it until its leader moved here. */
static bool taken_over(const read_ctx *rc, const char *stream,
                       const char *consumer) {
  const nl_instance *inst = rc->inst;
  if (!inst->server_scope || consumer[0] == '\0')
    return false;
  int64_t created = 0;
  int64_t first =
      nl_engine_first_seen(inst->engine, stream, consumer, &created);
  cdtime_t interval = inst->interval ? inst->interval : plugin_get_interval();
  return first > inst->first_poll_ns && created > 0 &&
         created < first - 2 * (int64_t)CDTIME_T_TO_NS(interval);
}

/* The engine's transition sink (called under engine_lock): counts an
 * onset and keeps the transition in rc->held for send_transitions. Out of
 * memory, it is sent at once instead. */
static void sink_transition(void *ud, const char *stream, const char *consumer,
                            const nl_finding *f, bool active,
                            const char *reason) {
  const read_ctx *rc = ud;
  bool takeover = active && taken_over(rc, stream, consumer);
  if (active)
    nl_onset_rate_add(&rc->inst->onsets, (int64_t)CDTIME_T_TO_NS(rc->time));
  transition_list *l = rc->held;
  if (l != NULL && l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    held_transition *items = realloc(l->items, cap * sizeof(*items));
    if (items != NULL) {
      l->items = items;
      l->cap = cap;
    }
  }
  if (l != NULL && l->n < l->cap) {
    held_transition *t = &l->items[l->n];
    t->stream = strdup(stream);
    t->consumer = strdup(consumer);
    if (t->stream != NULL && t->consumer != NULL) {
      t->finding = *f;
      t->active = active;
      t->reason = reason;
      t->takeover = takeover;
      l->n++;
      return;
    }
    free(t->stream);
    free(t->consumer);
  }
  pthread_mutex_lock(&rc->inst->send_lock);
  send_transition(rc, stream, consumer, f, active, reason, takeover);
  pthread_mutex_unlock(&rc->inst->send_lock);
}

/* Releases engine_lock and sends the transitions rc->held kept, in order,
 * with send_lock alone held, then empties the list. send_lock is taken
 * before engine_lock is released, so that a health summary (sent under
 * both) never goes out before the events of the changes it counts. Call
 * with engine_lock held (and no other lock); returns with none held. */
static void send_transitions(const read_ctx *rc) {
  transition_list *l = rc->held;
  pthread_mutex_lock(&rc->inst->send_lock);
  pthread_mutex_unlock(&rc->inst->engine_lock);
  for (size_t i = 0; l != NULL && i < l->n; i++) {
    held_transition *t = &l->items[i];
    send_transition(rc, t->stream, t->consumer, &t->finding, t->active,
                    t->reason, t->takeover);
    free(t->stream);
    free(t->consumer);
  }
  pthread_mutex_unlock(&rc->inst->send_lock);
  if (l != NULL)
    l->n = 0;
}

/* Frees the list's storage (after send_transitions). */
static void transition_list_free(transition_list *l) {
  free(l->items);
  *l = (transition_list){0};
}

/* Reports a poll failure once when it starts and NOTIF_OKAY once it ends. */
static void poll_state(const read_ctx *rc, bool failing, const char *why) {
  nl_instance *inst = rc->inst;
  if (failing == inst->poll_failing)
    return;
  inst->poll_failing = failing;
  char msg[NOTIF_MAX_MSG_LEN];
  if (failing)
    snprintf(msg, sizeof(msg), "POLL_FAILED instance %s: %s", inst->name, why);
  else
    snprintf(msg, sizeof(msg), "POLL_FAILED instance %s: polling works again",
             inst->name);
  notification_t n = {0};
  plugin_notification_meta_add_string(&n, "instance", inst->name);
  notify(rc, failing ? NOTIF_FAILURE : NOTIF_OKAY, inst->name, "poll", msg, &n);
}

/* Submits the instance's own values; onsets is the number of findings
 * started in the last hour. */
static void submit_instance(const read_ctx *rc, double duration,
                            size_t consumers, size_t unobservable,
                            size_t streams, bool connected, uint64_t onsets) {
  const char *pi = rc->inst->name;
  submit_gauge(rc, pi, "gauge", "onsets_per_hour", (double)onsets);
  submit_gauge(rc, pi, "duration", "poll", duration);
  submit_derive(rc, pi, "derive", "api_requests", rc->inst->api_requests);
  submit_derive(rc, pi, "errors", "api", rc->inst->api_errors);
  if (rc->inst->poller != NULL)
    submit_derive(rc, pi, "derive", "polls_overrun",
                  nl_poller_overruns(rc->inst->poller));
  submit_gauge(rc, pi, "count", "consumers", (double)consumers);
  submit_gauge(rc, pi, "count", "unobservable", (double)unobservable);
  submit_gauge(rc, pi, "count", "streams", (double)streams);
  submit_gauge(rc, pi, "gauge", "connected", connected ? 1.0 : 0.0);
}

/* Decides whether ConsumerValuesLimit limits "all" to what "findings"
 * sends from a poll of n_consumers on (inst->values_limited), and logs when
 * that starts or stops. */
static void update_values_limit(nl_instance *inst, size_t n_consumers) {
  if (inst->consumer_values != VALUES_ALL)
    return;
  bool limited = inst->consumer_values_limit > 0 &&
                 n_consumers > inst->consumer_values_limit;
  if (limited && !inst->values_limited)
    WARNING(LOG_PREFIX "Instance \"%s\": %zu consumers are more than "
                       "ConsumerValuesLimit %u: per-consumer values are sent "
                       "only for consumers with a finding (collectd keeps "
                       "every value list in its cache; raise the limit or "
                       "set it to 0 to send them all).",
            inst->name, n_consumers, inst->consumer_values_limit);
  else if (!limited && inst->values_limited)
    INFO(LOG_PREFIX "Instance \"%s\": %zu consumers, within "
                    "ConsumerValuesLimit %u: every per-consumer value is sent "
                    "again.",
         inst->name, n_consumers, inst->consumer_values_limit);
  inst->values_limited = limited;
}

/* Adds the consumers inst's engine holds, and its findings started in the
 * hour before now_ns, to *held and *onsets, with those of its account
 * instances. */
static void held_counts(nl_instance *inst, int64_t now_ns, size_t *held,
                        uint64_t *onsets) {
  size_t n = 0, active[NL_CLASS_COUNT];
  pthread_mutex_lock(&inst->engine_lock);
  nl_engine_counts(inst->engine, &n, active);
  *onsets += nl_onset_rate_last_hour(&inst->onsets, now_ns);
  pthread_mutex_unlock(&inst->engine_lock);
  *held += n;
  for (size_t i = 0; i < inst->n_accounts; i++)
    held_counts(inst->accounts[i], now_ns, held, onsets);
}

/* Reports a poll that saw nothing: every consumer held is unobservable this
 * poll (neither healthy nor violating; its history and findings are kept as
 * they were). */
static void submit_failed_poll(const read_ctx *rc, bool connected) {
  size_t held = 0;
  uint64_t onsets = 0;
  held_counts(rc->inst, (int64_t)CDTIME_T_TO_NS(rc->time), &held, &onsets);
  submit_instance(rc, CDTIME_T_TO_DOUBLE(cdtime() - rc->time), 0, held, 0,
                  connected, onsets);
}

/* Reads the consumer a CREATED advisory announced (stream and consumer
 * info, read-only, each request bounded by Timeout, without any lock held)
 * and hands it to the engine, so that its configuration classes are raised
 * at once rather than at the next poll. Only the advisory thread calls it
 * (refresh_pending): the poll never waits on the network for
 * one. Consumers already held are left to the polls. */
static void refresh_created(nl_instance *inst, const char *stream,
                            const char *consumer) {
  pthread_mutex_lock(&inst->engine_lock);
  bool known = nl_engine_knows(inst->engine, stream, consumer);
  pthread_mutex_unlock(&inst->engine_lock);
  if (known)
    return;
  nl_snapshot_set set = {0};
  char err[512];
  if (nl_advisory_fetch_consumer(nl_transport_request, inst->transport, stream,
                                 consumer, &set, err, sizeof(err)) == 0) {
    transition_list held = {0};
    read_ctx rc = read_start(inst);
    rc.held = &held;
    nl_engine_sink sink = {NULL, NULL, sink_transition};
    pthread_mutex_lock(&inst->engine_lock);
    nl_http_lock(instance_http(inst));
    nl_engine_created(inst->engine, &set, (int64_t)CDTIME_T_TO_NS(rc.time),
                      &sink, &rc);
    nl_http_unlock(instance_http(inst));
    send_transitions(&rc); /* Releases engine_lock. */
    transition_list_free(&held);
  } else {
    DEBUG(LOG_PREFIX "Instance \"%s\": created consumer %s/%s not read "
                     "(%s); the next poll will see it.",
          inst->name, stream, consumer, err);
  }
  nl_snapshot_set_clear(&set);
}

/* Finds the pending CREATED entry of stream/consumer; call with
 * created_lock held. Returns its index, or n_created. */
static size_t created_find(const nl_instance *inst, const char *stream,
                           const char *consumer) {
  size_t i = 0;
  while (i < inst->n_created &&
         (strcmp(inst->created[i].stream, stream) != 0 ||
          strcmp(inst->created[i].consumer, consumer) != 0))
    i++;
  return i;
}

/* Notes what a CREATED or DELETED advisory asks of the advisory thread: a
 * created consumer of a selected stream is queued to be read (once, however
 * many advisories name it; past NL_CREATED_PENDING_MAX it is left to the
 * next poll and counted), a deleted one leaves the queue. No network. */
static void note_created(nl_instance *inst, const nl_advisory *a) {
  if (a->kind == NL_ADV_CREATED &&
      !nl_stream_selected(&inst->select, a->stream))
    return;
  pthread_mutex_lock(&inst->created_lock);
  size_t i = created_find(inst, a->stream, a->consumer);
  if (a->kind == NL_ADV_DELETED && i < inst->n_created) {
    free(inst->created[i].stream);
    free(inst->created[i].consumer);
    inst->created[i] = inst->created[--inst->n_created];
  } else if (a->kind == NL_ADV_CREATED && i == inst->n_created) {
    if (inst->created == NULL)
      inst->created = calloc(NL_CREATED_PENDING_MAX, sizeof(*inst->created));
    char *st = NULL, *co = NULL;
    if (inst->created != NULL && inst->n_created < NL_CREATED_PENDING_MAX &&
        (st = strdup(a->stream)) != NULL && (co = strdup(a->consumer)) != NULL)
      inst->created[inst->n_created++] = (struct created_entry){st, co};
    else {
      free(st);
      inst->created_dropped++;
    }
  }
  pthread_mutex_unlock(&inst->created_lock);
}

/* The advisory thread's idle work: reads up to NL_CREATED_PER_CALL of the
 * queued created consumers, oldest first, with no lock held during the
 * requests. */
static void refresh_pending(void *ud) {
  nl_instance *inst = ud;
  struct created_entry take[NL_CREATED_PER_CALL];
  size_t n = 0;
  pthread_mutex_lock(&inst->created_lock);
  n = inst->n_created < NL_CREATED_PER_CALL ? inst->n_created
                                            : NL_CREATED_PER_CALL;
  memcpy(take, inst->created, n * sizeof(*take));
  memmove(inst->created, inst->created + n,
          (inst->n_created - n) * sizeof(*inst->created));
  inst->n_created -= n;
  pthread_mutex_unlock(&inst->created_lock);
  for (size_t i = 0; i < n; i++) {
    refresh_created(inst, take[i].stream, take[i].consumer);
    free(take[i].stream);
    free(take[i].consumer);
  }
}

/* Feeds advisories into the engine, on the advisory thread or from the
 * poll's drain: under the engine lock, with the findings they
 * prove sent once the lock is released; created consumers are only
 * queued (note_created). */
static void feed_advisories(void *ud, const nl_advisory *a, size_t n) {
  nl_instance *inst = ud;
  nl_engine_sink sink = {NULL, NULL, sink_transition};
  transition_list held = {0};
  read_ctx rc = read_start(inst);
  rc.held = &held;
  pthread_mutex_lock(&inst->engine_lock);
  nl_http_lock(instance_http(inst));
  for (size_t i = 0; i < n; i++) {
    if (a[i].kind == NL_ADV_CREATED || a[i].kind == NL_ADV_DELETED)
      note_created(inst, &a[i]);
    if (a[i].kind != NL_ADV_CREATED)
      nl_engine_advisory(inst->engine, &a[i], (int64_t)CDTIME_T_TO_NS(rc.time),
                         &sink, &rc);
  }
  nl_http_unlock(instance_http(inst));
  send_transitions(&rc); /* Releases engine_lock. */
  transition_list_free(&held);
}

/* Dispatches the advisory counts: received, dropped (queue full), rejected
 * (unreadable) and contradicted (claims the polls refuted, counted by the
 * engine); and the created consumers waiting to be read and those left to
 * the next poll (their queue full). */
static void submit_advisory_counts(const read_ctx *rc, uint64_t contradicted) {
  if (rc->inst->adv == NULL)
    return;
  char pi[DATA_MAX_NAME_LEN];
  own_plugin_instance(rc->inst, pi, sizeof(pi));
  nl_advisory_queue_counts c;
  nl_advisory_thread_counts(rc->inst->adv, &c);
  submit_derive(rc, pi, "derive", "advisories", c.received);
  submit_derive(rc, pi, "derive", "advisories_dropped", c.dropped);
  submit_derive(rc, pi, "derive", "advisories_rejected", c.rejected);
  submit_derive(rc, pi, "derive", "advisories_contradicted", contradicted);
  pthread_mutex_lock(&rc->inst->created_lock);
  size_t pending = rc->inst->n_created;
  uint64_t dropped = rc->inst->created_dropped;
  pthread_mutex_unlock(&rc->inst->created_lock);
  submit_gauge(rc, pi, "gauge", "created_pending", (double)pending);
  submit_derive(rc, pi, "derive", "created_left_to_poll", dropped);
}

/* Counts a poll's requests and reports its outcome (status and stats from
 * nl_poll_run or nl_jsz_poll_run): a failed poll is logged (once while
 * failures repeat), notified and counted, and -1 returned; a poll that
 * read only part of what exists is logged the same way, and one that read
 * everything releases the complaint. */
static int poll_outcome(nl_instance *inst, read_ctx *rc, int status,
                        nl_poll_stats *stats) {
  inst->api_requests += stats->requests;
  inst->api_errors += stats->errors;
  /* The error may name a stream (from the server): printable only. */
  nl_printable(stats->first_error, false, stats->first_error,
               sizeof(stats->first_error));
  if (status != 0) {
    c_complain(LOG_ERR, &inst->poll_complaint,
               LOG_PREFIX "Instance \"%s\": poll failed: %s.", inst->name,
               stats->first_error);
    poll_state(rc, true, stats->first_error);
    submit_failed_poll(rc, nl_transport_connected(inst->transport));
    nl_http_poll_failed(inst->http, stats->first_error,
                        (int64_t)CDTIME_T_TO_NS(rc->time));
    return -1;
  }
  if (stats->errors > 0)
    c_complain(LOG_WARNING, &inst->poll_complaint,
               LOG_PREFIX "Instance \"%s\": %" PRIu64 " stream(s) not fully "
                          "read: %s.",
               inst->name, stats->streams_incomplete, stats->first_error);
  else
    c_release(LOG_INFO, &inst->poll_complaint,
              LOG_PREFIX "Instance \"%s\": polls succeed again.", inst->name);
  poll_state(rc, false, NULL);
  return 0;
}

/* Applies one poll's snapshots (set, taken at rc's time) to inst, an
 * instance or an account instance: through the engine (values and
 * transitions), then the REST API's documents, the notifications and
 * health events of the transitions, and the summary when one is due.
 * Returns how many consumers the engine kept unlisted (unobservable this
 * poll), and sets *onsets (findings started in the last hour) and
 * *contradicted (advisory claims the polls refuted). */
static size_t apply_poll(nl_instance *inst, read_ctx *rc,
                         const nl_snapshot_set *set, uint64_t *onsets,
                         uint64_t *contradicted) {
  nl_engine_sink sink = {sink_consumer, sink_stream, sink_transition};
  int64_t now_ns = (int64_t)CDTIME_T_TO_NS(rc->time);
  transition_list held = {0};
  read_ctx arc = *rc;
  arc.inst = inst;
  arc.held = &held;
  char err[256];
  uint64_t disconnects = nl_transport_disconnects(poll_transport(inst));
  /* An account instance's documents go to its parent's listener, merged
   * there by nl_http_publish. */
  nl_http *web = instance_http(inst);
  pthread_mutex_lock(&inst->engine_lock);
  if (inst->first_poll_ns == 0)
    inst->first_poll_ns = now_ns;
  nl_http_lock(web);
  if (disconnects != inst->disconnects_seen)
    nl_engine_gap(inst->engine, now_ns);
  inst->disconnects_seen = disconnects;
  size_t kept = nl_engine_apply(inst->engine, set, now_ns, &sink, &arc);
  nl_http_unlock(web);
  if (inst->parent != NULL)
    nl_http_update_account(web, inst->account, inst->engine, set, now_ns);
  else
    nl_http_update(web, set, now_ns);
  send_transitions(&arc); /* Releases engine_lock. */
  transition_list_free(&held);
  /* The summary counts the engine as it is now, after the events of every
   * change it counts went out (send_transitions). */
  pthread_mutex_lock(&inst->engine_lock);
  pthread_mutex_lock(&inst->send_lock);
  int sent = nl_health_summary(&inst->health, nl_transport_publish,
                               poll_transport(inst), inst->engine, inst->name,
                               set->n_streams, now_ns, err, sizeof(err));
  publish_result(inst, sent, err);
  pthread_mutex_unlock(&inst->send_lock);
  *onsets = nl_onset_rate_last_hour(&inst->onsets, now_ns);
  uint64_t fed, unknown;
  nl_engine_advisory_counts(inst->engine, &fed, &unknown, contradicted);
  pthread_mutex_unlock(&inst->engine_lock);
  return kept;
}

/* Sets an account instance's health subject prefix to
 * "<prefix>.account.<account>", the account's name made one subject token
 * short enough for the prefix limit. Returns 0, or -1 when the parent's
 * prefix leaves no room (events of the account are then off). */
static int account_prefix(nl_instance *a) {
  static const char mid[] = ".account.";
  size_t used = strlen(a->parent->health.prefix) + sizeof(mid) - 1;
  char token[NL_EVENT_TOKEN_MAX + 1], prefix[NL_EVENT_PREFIX_MAX + 1];
  size_t room =
      used + 16 <= NL_EVENT_PREFIX_MAX ? NL_EVENT_PREFIX_MAX - used : 0;
  if (room == 0)
    return -1;
  nl_name_token(a->account, token,
                room + 1 < sizeof(token) ? room + 1 : sizeof(token));
  snprintf(prefix, sizeof(prefix), "%s%s%s", a->parent->health.prefix, mid,
           token);
  return nl_health_set_prefix(&a->health, prefix);
}

/* Gives account instance a its own connection and advisory thread when
 * AccountAdvisories names its account: the connection moves from the
 * parent's list to a, which then reads its account's advisories (and the
 * consumers CREATED advisories announce) as an ordinary Instance does.
 * Its polls, health events and summaries stay on the parent's connection
 * (poll_transport). Poll thread only, after collectd's fork. */
static void account_advisories(nl_instance *parent, nl_instance *a) {
  struct account_connection *c = NULL;
  for (size_t i = 0; c == NULL && i < parent->n_adv_accounts; i++)
    if (parent->adv_accounts[i].transport != NULL &&
        strcmp(parent->adv_accounts[i].account, a->account) == 0)
      c = &parent->adv_accounts[i];
  if (c == NULL)
    return;
  char err[512];
  a->adv = nl_advisory_thread_start(4096, feed_advisories, refresh_pending, a,
                                    err, sizeof(err));
  if (a->adv == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": account \"%s\": %s; its findings "
                     "come from polling only.",
          parent->name, a->account, err);
    return;
  }
  a->transport = c->transport;
  c->transport = NULL;
  a->owns_transport = true;
  a->advisories = true;
  a->select = parent->select; /* Borrowed: instance_free leaves it. */
  INFO(LOG_PREFIX "Instance \"%s\": account \"%s\": advisories on a "
                  "connection of its own.",
       parent->name, a->account);
}

/* Connects account instance a's own connection (AccountAdvisories) and
 * subscribes to its advisories when not done yet, then feeds the
 * advisories received before this poll. Poll thread only. */
static void account_advisories_poll(nl_instance *a) {
  if (a->adv == NULL)
    return;
  char err[512];
  if (nl_transport_connect(a->transport, err, sizeof(err)) != 0)
    c_complain(LOG_ERR, &a->connect_complaint,
               LOG_PREFIX "Instance \"%s\": account \"%s\": cannot reach "
                          "NATS for its advisories: %s.",
               a->name, a->account, err);
  else {
    if (c_would_release(&a->connect_complaint))
      c_release(LOG_INFO, &a->connect_complaint,
                LOG_PREFIX "Instance \"%s\": account \"%s\": advisory "
                           "connection up again.",
                a->name, a->account);
    if (nl_advisory_thread_subscribe(a->adv, a->transport, err, sizeof(err)) !=
        0)
      c_complain(LOG_WARNING, &a->publish_complaint,
                 LOG_PREFIX "Instance \"%s\": account \"%s\": cannot "
                            "subscribe to its advisories (%s).",
                 a->name, a->account, err);
  }
  nl_advisory_thread_drain(a->adv);
}

/* Returns the account instance of parent for account acc, made at its
 * first sight, and sets *index to its place in parent->accounts; or
 * returns NULL when memory runs out. Poll thread only. */
static nl_instance *account_instance(nl_instance *parent,
                                     const nl_jsz_account *acc, size_t *index) {
  for (size_t i = 0; i < parent->n_accounts; i++)
    if (strcmp(parent->accounts[i]->account_id, acc->id) == 0) {
      *index = i;
      return parent->accounts[i];
    }
  nl_instance **grown =
      realloc(parent->accounts, (parent->n_accounts + 1) * sizeof(*grown));
  if (grown == NULL)
    return NULL;
  parent->accounts = grown;
  nl_instance *a = instance_new();
  if (a == NULL)
    return NULL;
  a->parent = parent;
  a->name = strdup(parent->name);
  a->account = strdup(acc->name);
  a->account_id = strdup(acc->id);
  a->params = parent->params;
  a->server_scope = parent->server_scope;
  a->consumer_values = parent->consumer_values;
  a->transport = parent->transport;
  a->timeout_s = parent->timeout_s;
  a->interval = parent->interval;
  a->health = parent->health;
  a->health.account = a->account;
  a->health.server = parent->server_scope ? parent->server_name : NULL;
  a->health.last_summary_ns = 0;
  a->health.published = a->health.failed = 0;
  a->disconnects_seen = nl_transport_disconnects(parent->transport);
  if (a->name == NULL || a->account == NULL || a->account_id == NULL ||
      (a->engine = nl_engine_create(&a->params)) == NULL) {
    instance_free(a);
    return NULL;
  }
  if (account_prefix(a) != 0) {
    WARNING(LOG_PREFIX "Instance \"%s\": account \"%s\": HealthSubjectPrefix "
                       "leaves no room for the account in the subject; its "
                       "health events are off.",
            parent->name, a->account);
    a->health.enabled = false;
  }
  *index = parent->n_accounts;
  parent->accounts[parent->n_accounts++] = a;
  INFO(LOG_PREFIX "Instance \"%s\": watching account \"%s\" (%zu "
                  "stream(s), %zu consumer(s)).",
       parent->name, a->account, acc->set.n_streams, acc->set.n_consumers);
  account_advisories(parent, a);
  return a;
}

/* Scope "server": dispatches nats_lens_judged 0 for each consumer of set
 * that the polled server stores a copy of and another server leads (or
 * none does): the central side's coverage (docs/agents.md). */
static void submit_elsewhere(const read_ctx *rc, const nl_snapshot_set *set) {
  char pi[DATA_MAX_NAME_LEN], ti[DATA_MAX_NAME_LEN];
  for (size_t i = 0; i < set->n_elsewhere; i++) {
    stream_plugin_instance(rc->inst, set->elsewhere[i].stream, pi, sizeof(pi));
    nl_name_fit(set->elsewhere[i].name, ti, sizeof(ti));
    submit_gauge(rc, pi, "nats_lens_judged", ti, 0.0);
  }
}

/* Scope "server": logs which server the instance judges, at its first
 * poll and whenever the server or the number of consumers it leads
 * changes (a leader moved here or away, a reconnection). */
static void log_scope_change(nl_instance *inst, const nl_jsz_result *r,
                             size_t judged, size_t elsewhere) {
  const char *server = r->server ? r->server : "";
  if (inst->scope_logged && judged == inst->scope_judged &&
      strcmp(server, inst->scope_server) == 0)
    return;
  char was[48] = "";
  if (inst->scope_logged)
    snprintf(was, sizeof(was), " (was %zu)", inst->scope_judged);
  INFO(LOG_PREFIX "Instance \"%s\": Scope \"server\": server %s (1 of %zu) "
                  "leads %zu consumer(s)%s, judged here; %zu other(s) it "
                  "stores are led elsewhere.",
       inst->name, server, r->expected, judged, was, elsewhere);
  inst->scope_logged = true;
  inst->scope_judged = judged;
  sstrncpy(inst->scope_server, server, sizeof(inst->scope_server));
}

/* One poll of a SystemAccount instance: one JSZ request for every account,
 * each account's view applied to its account instance; an account no
 * longer listed by a complete poll has its consumers dropped (an empty
 * view), one missing from a short poll keeps them, unobservable. */
static void poll_system(nl_instance *inst, read_ctx *rc) {
  nl_jsz_result r;
  nl_poll_stats stats;
  int status;
  if (inst->server_scope) {
    char id[NL_SERVER_NAME_MAX];
    if (nl_transport_server_id(inst->transport, id, sizeof(id)) != 0)
      snprintf(id, sizeof(id), "unknown");
    status =
        nl_jsz_poll_server(nl_transport_gather, inst->transport, id,
                           &inst->account_select, &inst->select, &r, &stats);
  } else
    status = nl_jsz_poll_run(nl_transport_gather, inst->transport,
                             &inst->account_select, &inst->select, &r, &stats);
  if (poll_outcome(inst, rc, status, &stats) != 0)
    return;
  if (r.server != NULL) {
    sstrncpy(rc->server, r.server, sizeof(rc->server));
    sstrncpy(inst->server_name, r.server, sizeof(inst->server_name));
  }
  size_t judged = 0, elsewhere = 0;
  size_t consumers = 0, streams = 0, unobservable = 0, kept = 0;
  for (size_t i = 0; i < r.n_accounts; i++) {
    consumers += r.accounts[i].set.n_consumers;
    streams += r.accounts[i].set.n_streams;
    unobservable += r.accounts[i].set.unobservable;
  }
  if (!inst->polled_once && inst->server_scope)
    INFO(LOG_PREFIX "Instance \"%s\": first poll done: server %s of a "
                    "%zu-server cluster; %zu account(s), %zu stream(s) stored, "
                    "%zu consumer(s) it leads judged.",
         inst->name, r.server ? r.server : "?", r.expected, r.n_accounts,
         streams, consumers);
  else if (!inst->polled_once)
    INFO(LOG_PREFIX "Instance \"%s\": first poll done: %zu of %zu server(s) "
                    "answered; %zu account(s), %zu stream(s) and %zu "
                    "consumer(s) watched.",
         inst->name, r.servers, r.expected, r.n_accounts, streams, consumers);
  inst->polled_once = true;
  update_values_limit(inst, consumers);
  rc->findings_only = findings_only(inst);
  uint64_t onsets = 0;
  bool *listed = calloc(inst->n_accounts + r.n_accounts + 1, sizeof(*listed));
  for (size_t i = 0; i < r.n_accounts; i++) {
    size_t k = 0;
    nl_instance *a = account_instance(inst, &r.accounts[i], &k);
    if (a == NULL) {
      ERROR(LOG_PREFIX "Instance \"%s\": out of memory for account \"%s\".",
            inst->name, r.accounts[i].name);
      continue;
    }
    if (listed != NULL)
      listed[k] = true;
    uint64_t o = 0, contradicted = 0;
    account_advisories_poll(a);
    kept += apply_poll(a, rc, &r.accounts[i].set, &o, &contradicted);
    onsets += o;
    read_ctx arc = *rc;
    arc.inst = a;
    submit_advisory_counts(&arc, contradicted);
    if (inst->server_scope)
      submit_elsewhere(&arc, &r.accounts[i].set);
    judged += r.accounts[i].set.n_consumers;
    elsewhere += r.accounts[i].set.n_elsewhere;
  }
  for (size_t k = 0; listed != NULL && k < inst->n_accounts; k++) {
    if (listed[k])
      continue;
    nl_snapshot_set none = {.stream_list_short = r.servers < r.expected};
    uint64_t o = 0, contradicted = 0;
    kept += apply_poll(inst->accounts[k], rc, &none, &o, &contradicted);
    onsets += o;
  }
  free(listed);
  nl_http_publish(inst->http, (int64_t)CDTIME_T_TO_NS(rc->time));
  submit_instance(rc, CDTIME_T_TO_DOUBLE(cdtime() - rc->time), consumers,
                  unobservable + kept, streams, true, onsets);
  submit_gauge(rc, inst->name, "count", "accounts", (double)r.n_accounts);
  submit_gauge(rc, inst->name, "count", "servers_answered", (double)r.servers);
  submit_gauge(rc, inst->name, "count", "servers_expected", (double)r.expected);
  if (inst->server_scope) {
    submit_gauge(rc, inst->name, "count", "consumers_judged", (double)judged);
    submit_gauge(rc, inst->name, "count", "consumers_elsewhere",
                 (double)elsewhere);
    log_scope_change(inst, &r, judged, elsewhere);
  }
  nl_jsz_result_clear(&r);
  if (stats.bytes_received >= NL_TRIM_BYTES)
    malloc_trim(0);
}

/* One poll of an instance, on its poll thread (nl_poller), with the plugin
 * context of the read that asked for it: connects if needed, polls, applies
 * the snapshots, and dispatches values and notifications. A failed poll is
 * reported (log line, POLL_FAILED notification, values). */
static void poll_run(void *ud) {
  nl_instance *inst = ud;
  read_ctx rc = read_start(inst);
  char err[512];
  if (nl_transport_connect(inst->transport, err, sizeof(err)) != 0) {
    c_complain(LOG_ERR, &inst->connect_complaint,
               LOG_PREFIX "Instance \"%s\": cannot reach NATS: %s.", inst->name,
               err);
    inst->api_errors++;
    poll_state(&rc, true, "not connected");
    submit_failed_poll(&rc, false);
    nl_http_poll_failed(inst->http, err, (int64_t)CDTIME_T_TO_NS(rc.time));
    return;
  }
  if (c_would_release(&inst->connect_complaint))
    c_release(LOG_INFO, &inst->connect_complaint,
              LOG_PREFIX "Instance \"%s\": connected to NATS.", inst->name);
  if (inst->adv != NULL &&
      nl_advisory_thread_subscribe(inst->adv, inst->transport, err,
                                   sizeof(err)) != 0)
    WARNING(LOG_PREFIX "Instance \"%s\": cannot subscribe to the JetStream "
                       "advisories (%s); findings come from polling only.",
            inst->name, err);

  if (inst->system_account) {
    poll_system(inst, &rc);
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
  if (poll_outcome(inst, &rc, status, &stats) != 0) {
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

  update_values_limit(inst, set.n_consumers);
  rc.findings_only = findings_only(inst);
  /* Advisories that arrived before this poll go in first (the advisory
   * thread feeds them too; whichever comes first). Feeding makes no
   * network request, so this waits at most for a batch being fed. */
  nl_advisory_thread_drain(inst->adv);
  uint64_t onsets = 0, contradicted = 0;
  size_t kept = apply_poll(inst, &rc, &set, &onsets, &contradicted);
  submit_advisory_counts(&rc, contradicted);
  submit_instance(&rc, CDTIME_T_TO_DOUBLE(cdtime() - rc.time), set.n_consumers,
                  set.unobservable + kept, set.n_streams, true, onsets);
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
        (inst->adv =
             nl_advisory_thread_start(4096, feed_advisories, refresh_pending,
                                      inst, err, sizeof(err))) == NULL)
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
