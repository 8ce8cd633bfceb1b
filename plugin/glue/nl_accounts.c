/* nl_accounts.c: the polls of a SystemAccount instance (one JSZ request
 * for every account, or with Scope "server" for what the connected server
 * leads) and the account instances that judge each account. */
#include "nl_instance.h"

#include <malloc.h>

#include "core/model/nl_names.h"
#include "jsapi/nl_advisory_fetch.h"
#include "jsapi/nl_jsz_poll.h"

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
 * (nl_poll_transport). Poll thread only, after collectd's fork. */
static void account_advisories(nl_instance *parent, nl_instance *a) {
  struct account_connection *c = NULL;
  for (size_t i = 0; c == NULL && i < parent->n_adv_accounts; i++)
    if (parent->adv_accounts[i].transport != NULL &&
        strcmp(parent->adv_accounts[i].account, a->account) == 0)
      c = &parent->adv_accounts[i];
  if (c == NULL)
    return;
  char err[512];
  a->adv = nl_advisory_thread_start(4096, nl_feed_advisories,
                                    nl_refresh_pending, a, err, sizeof(err));
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
  a->api_audit = parent->api_audit;
  a->select = parent->select; /* Borrowed: nl_instance_free leaves it. */
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
    if (nl_advisory_thread_subscribe(a->adv, a->transport, a->api_audit, err,
                                     sizeof(err)) != 0)
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
  nl_instance *a = nl_instance_new();
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
    nl_instance_free(a);
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
    nl_stream_plugin_instance(rc->inst, set->elsewhere[i].stream, pi,
                              sizeof(pi));
    nl_name_fit(set->elsewhere[i].name, ti, sizeof(ti));
    nl_submit_gauge(rc, pi, "nats_lens_judged", ti, 0.0);
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

void nl_poll_system(nl_instance *inst, read_ctx *rc) {
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
  if (nl_poll_outcome(inst, rc, status, &stats) != 0)
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
  nl_update_values_limit(inst, consumers);
  rc->findings_only = nl_findings_only(inst);
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
    kept += nl_apply_poll(a, rc, &r.accounts[i].set, &o, &contradicted);
    onsets += o;
    read_ctx arc = *rc;
    arc.inst = a;
    nl_submit_advisory_counts(&arc, contradicted);
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
    kept += nl_apply_poll(inst->accounts[k], rc, &none, &o, &contradicted);
    onsets += o;
  }
  free(listed);
  nl_http_publish(inst->http, (int64_t)CDTIME_T_TO_NS(rc->time));
  nl_submit_instance(rc, CDTIME_T_TO_DOUBLE(cdtime() - rc->time), consumers,
                     unobservable + kept, streams, true, onsets);
  nl_submit_gauge(rc, inst->name, "count", "accounts", (double)r.n_accounts);
  nl_submit_gauge(rc, inst->name, "count", "servers_answered",
                  (double)r.servers);
  nl_submit_gauge(rc, inst->name, "count", "servers_expected",
                  (double)r.expected);
  if (inst->server_scope) {
    nl_submit_gauge(rc, inst->name, "count", "consumers_judged",
                    (double)judged);
    nl_submit_gauge(rc, inst->name, "count", "consumers_elsewhere",
                    (double)elsewhere);
    log_scope_change(inst, &r, judged, elsewhere);
  }
  nl_jsz_result_clear(&r);
  if (stats.bytes_received >= NL_TRIM_BYTES)
    malloc_trim(0);
}
