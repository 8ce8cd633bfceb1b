/* nl_apply.c: one poll's snapshots applied to an instance (nl_instance.h):
 * through the engine, then the values, notifications and health events of
 * what it saw and of every finding that started or cleared, and the
 * advisories fed in between polls. */
#include "nl_instance.h"

#include "nl_dispatch.h"

#include <malloc.h>

#include "core/model/nl_forecast.h"
#include "core/model/nl_names.h"
#include "jsapi/nl_advisory_fetch.h"
#include "jsapi/nl_jsz_poll.h"

bool nl_findings_only(const nl_instance *inst) {
  return inst->consumer_values == VALUES_FINDINGS || inst->values_limited;
}

read_ctx nl_read_start(nl_instance *inst) {
  return (read_ctx){
      .inst = inst, .time = cdtime(), .findings_only = nl_findings_only(inst)};
}

nl_transport *nl_poll_transport(const nl_instance *inst) {
  return inst->parent ? inst->parent->transport : inst->transport;
}

/* The listener inst's documents go to: its parent's for an account
 * instance. */
static nl_http *instance_http(const nl_instance *inst) {
  return inst->parent ? inst->parent->http : inst->http;
}

/* Builds a plugin_instance from "<instance>", then "-<account>" for an
 * account instance (its '-' and '~' escaped, nl_name_account_part, so that
 * no two accounts and streams read alike), then "-<stream>" when stream is
 * not NULL, fitted to collectd's limits (nl_name_fit). */
static void plugin_instance_of(const nl_instance *inst, const char *stream,
                               char *out, size_t len) {
  char account[3 * NL_NAME_MAX + 1] = "";
  if (inst->account)
    nl_name_account_part(inst->account, account, sizeof(account));
  char joined[6 * NL_NAME_MAX];
  snprintf(joined, sizeof(joined), "%s%s%s%s%s", inst->name,
           inst->account ? "-" : "", account, stream ? "-" : "",
           stream ? stream : "");
  nl_name_fit(joined, out, len);
}

/* Builds the plugin_instance of inst's own values: "<instance>", or
 * "<instance>-<account>" for an account instance. */
static void own_plugin_instance(const nl_instance *inst, char *out,
                                size_t len) {
  plugin_instance_of(inst, NULL, out, len);
}

void nl_stream_plugin_instance(const nl_instance *inst, const char *stream,
                               char *out, size_t len) {
  plugin_instance_of(inst, stream, out, len);
}

static void submit(const read_ctx *rc, const char *plugin_instance,
                   const char *type, const char *type_instance, value_t v) {
  nl_dispatch_value(plugin_instance, type, type_instance, v, rc->time);
}

void nl_submit_gauge(const read_ctx *rc, const char *pi, const char *type,
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
    nl_submit_gauge(rc, pi, type, ti, st->active[cls] ? 1.0 : 0.0);
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
  nl_stream_plugin_instance(rc->inst, s->name, pi, sizeof(pi));
  nl_name_fit(c->name, ti, sizeof(ti));
  /* Scope "server": every consumer judged says so each poll, whatever
   * ConsumerValues says: the central side's coverage (docs/agents.md). */
  if (rc->inst->server_scope)
    nl_submit_gauge(rc, pi, "nats_lens_judged", ti, 1.0);
  if (rc->inst->consumer_values == VALUES_NONE ||
      (rc->findings_only && !any_active))
    return;
  if (rc->findings_only) {
    submit_class_gauges(rc, pi, ti, st);
    return;
  }
  nl_submit_gauge(rc, pi, "nats_lens_num_pending", ti, (double)c->num_pending);
  nl_submit_gauge(rc, pi, "nats_lens_num_ack_pending", ti,
                  (double)c->num_ack_pending);
  nl_submit_gauge(rc, pi, "nats_lens_num_redelivered", ti,
                  (double)c->num_redelivered);
  nl_submit_gauge(rc, pi, "nats_lens_num_waiting", ti, (double)c->num_waiting);
  nl_submit_gauge(rc, pi, "nats_lens_ack_pending_ratio", ti,
                  c->max_ack_pending > 0
                      ? (double)c->num_ack_pending / (double)c->max_ack_pending
                      : NAN);
  submit_derive(rc, pi, "nats_lens_delivered", ti, c->delivered_consumer_seq);
  submit_derive(rc, pi, "nats_lens_redelivered", ti, st->redelivered_total);
  submit_derive(rc, pi, "nats_lens_lost", ti, st->lost_total);
  submit_derive(rc, pi, "nats_lens_skipped", ti, st->skipped_total);
  submit_derive(rc, pi, "nats_lens_discarded", ti, st->discarded_total);
  nl_submit_gauge(rc, pi, "nats_lens_paused", ti, c->paused ? 1.0 : 0.0);
  /* The eviction forecast, only where the polls trust one: a missing
   * value is no forecast, never a number standing for none. */
  double eta;
  nl_limit_kind limit;
  if (nl_forecast_latest(st, &eta, &limit))
    nl_submit_gauge(rc, pi, "nats_lens_eviction_forecast", ti, eta);
  submit_class_gauges(rc, pi, ti, st);
}

static void sink_stream(void *ud, const nl_stream_snap *s,
                        const nl_stream_ledger *ledger) {
  const read_ctx *rc = ud;
  char pi[DATA_MAX_NAME_LEN];
  nl_stream_plugin_instance(rc->inst, s->name, pi, sizeof(pi));
  nl_submit_gauge(rc, pi, "count", "messages", (double)s->msgs);
  nl_submit_gauge(rc, pi, "bytes", NULL, (double)s->bytes);
  nl_submit_gauge(rc, pi, "count", "consumers", (double)s->consumer_count);
  nl_submit_gauge(rc, pi, "nats_lens_seq", "first", (double)s->first_seq);
  nl_submit_gauge(rc, pi, "nats_lens_seq", "last", (double)s->last_seq);
  submit_derive(rc, pi, "nats_lens_lost", NULL, ledger->lost_total);
  nl_submit_gauge(rc, pi, "nats_lens_stranded", NULL, (double)ledger->stranded);
  /* One 0/1 value per stream-level class (no type instance). */
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    if (!nl_class_is_stream(cls))
      continue;
    char type[DATA_MAX_NAME_LEN];
    snprintf(type, sizeof(type), "nats_lens_%s", nl_class_type_suffix(cls));
    nl_submit_gauge(
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

/* Publishes ev as a health event of rc's instance: its instance, account,
 * server and time are filled in here. Call with send_lock held. */
static void send_event(const read_ctx *rc, nl_event ev) {
  ev.instance = rc->inst->name;
  ev.account = rc->inst->account;
  ev.server = rc->server[0] ? rc->server : NULL;
  ev.at_ns = (int64_t)CDTIME_T_TO_NS(rc->time);
  char err[256];
  int sent =
      nl_health_transition(&rc->inst->health, nl_transport_publish,
                           nl_poll_transport(rc->inst), &ev, err, sizeof(err));
  publish_result(rc->inst, sent, err);
}

/* Writes where finding f is into out, for a notification's headline:
 * "S/C" for a consumer's finding, "stream S" for a stream's, "stream S
 * (consumer C)" for a stream's that names a consumer (f->about). */
static void where_of(const char *stream, const char *consumer,
                     const nl_finding *f, char *out, size_t len) {
  if (consumer[0] != '\0')
    snprintf(out, len, "%s/%s", stream, consumer);
  else if (f->about[0] != '\0')
    snprintf(out, len, "stream %s (consumer %s)", stream, f->about);
  else
    snprintf(out, len, "stream %s", stream);
}

/* Scope "server": sends the notice that a finding's consumer (or stream)
 * is now led by another server, whose agent judges it from now on: a
 * health event and a WARNING notification with state "handed_over", never
 * an OKAY (nothing was fixed). Call with send_lock held and no other lock. */
static void send_handover(const read_ctx *rc, const char *stream,
                          const char *consumer, const nl_finding *f,
                          const char *in_account) {
  send_event(rc, (nl_event){.stream = stream,
                            .consumer = consumer,
                            .finding = f,
                            .handed_over = true,
                            .reason = NL_REASON_LED_ELSEWHERE});
  char pi[DATA_MAX_NAME_LEN], msg[NOTIF_MAX_MSG_LEN];
  char where[NOTIF_MAX_MSG_LEN];
  nl_stream_plugin_instance(rc->inst, stream, pi, sizeof(pi));
  where_of(stream, consumer, f, where, sizeof(where));
  snprintf(msg, sizeof(msg),
           "%s %s%s handed over: another server leads it now and its "
           "agent judges it (not a fix)",
           nl_class_name(f->cls), where, in_account);
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
  nl_stream_plugin_instance(rc->inst, stream, pi, sizeof(pi));
  /* An account instance names the account after the consumer. */
  const char *acc = rc->inst->account;
  char in_account[NL_NAME_MAX + 16] = "";
  if (acc != NULL)
    snprintf(in_account, sizeof(in_account), " (account %s)", acc);
  if (!active && reason == NL_REASON_LED_ELSEWHERE) {
    send_handover(rc, stream, consumer, f, in_account);
    return;
  }
  char where[NOTIF_MAX_MSG_LEN];
  where_of(stream, consumer, f, where, sizeof(where));
  if (takeover) /* Before the fix: kept whatever the evidence takes. */
    snprintf(in_account + strlen(in_account),
             sizeof(in_account) - strlen(in_account), " (takeover)");
  if (active) {
    /* The essentials first: the class, where, and the fix command; then as
     * many whole evidence items as collectd's 256-byte message limit
     * leaves room for (", ..." when some are left out; all of them are in
     * the meta fields). */
    int n = snprintf(msg, sizeof(msg), "%s %s%s: fix: %s; ",
                     nl_class_name(f->cls), where, in_account,
                     f->fix_command[0] ? f->fix_command
                                       : "no command, see the recommendation");
    if (n > 0 && (size_t)n < sizeof(msg))
      nl_finding_format_evidence(f, msg + n, sizeof(msg) - (size_t)n);
  } else
    snprintf(msg, sizeof(msg), "%s %s%s cleared%s%s", nl_class_name(f->cls),
             where, in_account, reason ? ": " : "", reason ? reason : "");
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
  send_event(rc, (nl_event){.takeover = takeover,
                            .stream = stream,
                            .consumer = consumer,
                            .finding = f,
                            .firing = active,
                            .reason = reason});
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

/* The engine's declaration sink (called under engine_lock, once per
 * unreadable declaration): one warning in collectd's log saying what
 * cannot be read and how to write it. The value and the names come from
 * the server: printable only. */
static void sink_declaration(void *ud, const char *stream, const char *consumer,
                             const nl_finding *f) {
  const read_ctx *rc = ud;
  char msg[NL_TEXT_MAX + NL_FIX_MAX + 2 * NL_NAME_MAX + 128];
  snprintf(msg, sizeof(msg), "Instance \"%s\"%s%s: consumer %s/%s: %s; fix: %s",
           rc->inst->name, rc->inst->account ? ", account " : "",
           rc->inst->account ? rc->inst->account : "", stream, consumer,
           f->description, f->fix_command);
  nl_printable(msg, false, msg, sizeof(msg));
  WARNING(LOG_PREFIX "%s", msg);
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

void nl_poll_state(const read_ctx *rc, bool failing, const char *why) {
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

void nl_submit_instance(const read_ctx *rc, double duration, size_t consumers,
                        size_t unobservable, size_t streams, bool connected,
                        uint64_t onsets) {
  const char *pi = rc->inst->name;
  nl_submit_gauge(rc, pi, "gauge", "onsets_per_hour", (double)onsets);
  nl_submit_gauge(rc, pi, "duration", "poll", duration);
  submit_derive(rc, pi, "derive", "api_requests", rc->inst->api_requests);
  submit_derive(rc, pi, "errors", "api", rc->inst->api_errors);
  if (rc->inst->poller != NULL)
    submit_derive(rc, pi, "derive", "polls_overrun",
                  nl_poller_overruns(rc->inst->poller));
  nl_submit_gauge(rc, pi, "count", "consumers", (double)consumers);
  nl_submit_gauge(rc, pi, "count", "unobservable", (double)unobservable);
  nl_submit_gauge(rc, pi, "count", "streams", (double)streams);
  nl_submit_gauge(rc, pi, "gauge", "connected", connected ? 1.0 : 0.0);
}

void nl_update_values_limit(nl_instance *inst, size_t n_consumers) {
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

void nl_submit_failed_poll(const read_ctx *rc, bool connected) {
  size_t held = 0;
  uint64_t onsets = 0;
  held_counts(rc->inst, (int64_t)CDTIME_T_TO_NS(rc->time), &held, &onsets);
  nl_submit_instance(rc, CDTIME_T_TO_DOUBLE(cdtime() - rc->time), 0, held, 0,
                     connected, onsets);
}

/* Reads the consumer a CREATED advisory announced (stream and consumer
 * info, read-only, each request bounded by Timeout, without any lock held)
 * and hands it to the engine, so that its configuration classes are raised
 * at once rather than at the next poll. Only the advisory thread calls it
 * (nl_refresh_pending): the poll never waits on the network for
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
    read_ctx rc = nl_read_start(inst);
    rc.held = &held;
    nl_engine_sink sink = {.transition = sink_transition};
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

void nl_refresh_pending(void *ud) {
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

void nl_feed_advisories(void *ud, const nl_advisory *a, size_t n) {
  nl_instance *inst = ud;
  nl_engine_sink sink = {.transition = sink_transition};
  transition_list held = {0};
  read_ctx rc = nl_read_start(inst);
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

void nl_submit_advisory_counts(const read_ctx *rc, uint64_t contradicted) {
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
  nl_submit_gauge(rc, pi, "gauge", "created_pending", (double)pending);
  submit_derive(rc, pi, "derive", "created_left_to_poll", dropped);
}

int nl_poll_outcome(nl_instance *inst, read_ctx *rc, int status,
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
    nl_poll_state(rc, true, stats->first_error);
    nl_submit_failed_poll(rc, nl_transport_connected(inst->transport));
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
  nl_poll_state(rc, false, NULL);
  return 0;
}

size_t nl_apply_poll(nl_instance *inst, read_ctx *rc, nl_snapshot_set *set,
                     uint64_t *onsets, uint64_t *contradicted) {
  const nl_instance *top = inst->parent != NULL ? inst->parent : inst;
  nl_expect_apply_streams(top->stream_decls, top->n_stream_decls, set);
  nl_engine_sink sink = {sink_consumer, sink_stream, sink_transition,
                         sink_declaration};
  int64_t now_ns = (int64_t)CDTIME_T_TO_NS(rc->time);
  transition_list held = {0};
  read_ctx arc = *rc;
  arc.inst = inst;
  arc.held = &held;
  char err[256];
  uint64_t disconnects = nl_transport_disconnects(nl_poll_transport(inst));
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
  int sent = nl_health_summary(
      &inst->health, nl_transport_publish, nl_poll_transport(inst),
      inst->engine, inst->name, set->n_streams, now_ns, err, sizeof(err));
  publish_result(inst, sent, err);
  pthread_mutex_unlock(&inst->send_lock);
  *onsets = nl_onset_rate_last_hour(&inst->onsets, now_ns);
  uint64_t fed, unknown;
  nl_engine_advisory_counts(inst->engine, &fed, &unknown, contradicted);
  pthread_mutex_unlock(&inst->engine_lock);
  return kept;
}
