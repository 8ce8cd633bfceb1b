/* nl_view.c: the JSON documents of the REST API, rendered from the engine. */
#define _GNU_SOURCE /* strcasestr */
#include "nl_view.h"

#include <stdlib.h>
#include <string.h>

#include "core/model/nl_forecast.h"
#include "nl_event.h"
#include "nl_json.h"

const char *nl_view_health(const nl_consumer_state *st) {
  const char *health = "ok";
  for (int cls = 0; st != NULL && cls < NL_CLASS_COUNT; cls++) {
    if (st->active[cls] == NULL)
      continue;
    if (st->active[cls]->severity == NL_SEVERITY_CRITICAL)
      return "critical";
    health = "warning";
  }
  return health;
}

/* 0 for "critical", 1 for "warning", 2 for anything else ("ok"). */
static int health_rank(const char *health) {
  return strcmp(health, "critical") == 0  ? 0
         : strcmp(health, "warning") == 0 ? 1
                                          : 2;
}

/* Starts a document: {"instance": ..., "generated_at": ...}. */
static struct json_object *document(const char *instance, int64_t now_ns) {
  struct json_object *o = json_object_new_object();
  if (o != NULL) {
    nl_json_add_string(o, "instance", instance);
    nl_json_add_time(o, "generated_at", now_ns);
  }
  return o;
}

/* Adds the names of st's active classes as an array under key. */
static void add_active(struct json_object *o, const char *key,
                       const nl_consumer_state *st) {
  struct json_object *a = json_object_new_array();
  for (int cls = 0; st != NULL && a != NULL && cls < NL_CLASS_COUNT; cls++)
    if (st->active[cls] != NULL)
      json_object_array_add(a, json_object_new_string(nl_class_name(cls)));
  json_object_object_add(o, key, a);
}

/* Adds to o (an event object of f, may be NULL) what f cost while it
 * held; returns o. */
static struct json_object *with_cost(struct json_object *o,
                                     const nl_finding *f) {
  if (o != NULL) {
    nl_json_add_number(o, "lost_while_firing", (double)f->lost);
    nl_json_add_number(o, "redelivered_while_firing", (double)f->redelivered);
  }
  return o;
}

/* The findings that cleared most recently, latest first: each as its
 * resolved event, with resolved_at and what it cost. */
static struct json_object *
resolved_array(const nl_engine *e, const char *instance, const char *account) {
  struct json_object *arr = json_object_new_array();
  const nl_resolved *r;
  for (size_t k = 0; arr != NULL && (r = nl_engine_resolved(e, k)) != NULL;
       k++) {
    nl_event ev = {.instance = instance,
                   .account = account,
                   .stream = r->stream,
                   .consumer = r->consumer,
                   .finding = &r->f,
                   .firing = false,
                   .reason = r->reason,
                   .at_ns = r->f.since_ns};
    struct json_object *o = with_cost(nl_event_object(&ev), &r->f);
    if (o != NULL)
      nl_json_add_time(o, "resolved_at", r->resolved_ns);
    json_object_array_add(arr, o);
  }
  return arr;
}

int nl_view_violation_arrays(nl_engine *e, const char *instance,
                             const char *account, struct json_object **active,
                             struct json_object **resolved) {
  nl_active *list;
  size_t n;
  *active = *resolved = NULL;
  if (nl_engine_active(e, NULL, NULL, &list, &n) != 0)
    return -1;
  struct json_object *arr = json_object_new_array();
  struct json_object *res = resolved_array(e, instance, account);
  if (arr == NULL || res == NULL) {
    free(list);
    json_object_put(arr);
    json_object_put(res);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    nl_event ev = {.instance = instance,
                   .account = account,
                   .stream = list[i].stream,
                   .consumer = list[i].consumer,
                   .finding = list[i].f,
                   .firing = true,
                   .at_ns = list[i].f->since_ns};
    json_object_array_add(arr, with_cost(nl_event_object(&ev), list[i].f));
  }
  free(list);
  *active = arr;
  *resolved = res;
  return 0;
}

/* The violations document around its two arrays (taken). */
static char *violations_document(const char *instance, int64_t now_ns,
                                 struct json_object *active,
                                 struct json_object *resolved, size_t *len) {
  struct json_object *doc = document(instance, now_ns);
  if (doc == NULL || active == NULL || resolved == NULL) {
    json_object_put(doc);
    json_object_put(active);
    json_object_put(resolved);
    return NULL;
  }
  nl_json_add_number(doc, "count", (double)json_object_array_length(active));
  json_object_object_add(doc, "violations", active);
  json_object_object_add(doc, "resolved", resolved);
  return nl_json_take_text(doc, len);
}

char *nl_view_violations(nl_engine *e, const char *instance, int64_t now_ns,
                         size_t *len) {
  struct json_object *active, *resolved;
  if (nl_view_violation_arrays(e, instance, NULL, &active, &resolved) != 0)
    return NULL;
  return violations_document(instance, now_ns, active, resolved, len);
}

/* The text of member key of event object o, or "". */
static const char *event_text(struct json_object *o, const char *key) {
  struct json_object *v = NULL;
  json_object_object_get_ex(o, key, &v);
  const char *s = v ? json_object_get_string(v) : NULL;
  return s ? s : "";
}

/* Active findings: most severe first, then account, stream, consumer and
 * class. */
static int active_order(const void *a, const void *b) {
  struct json_object *x = *(struct json_object *const *)a;
  struct json_object *y = *(struct json_object *const *)b;
  int c = health_rank(event_text(x, "severity")) -
          health_rank(event_text(y, "severity"));
  static const char *const keys[] = {"account", "stream_name", "consumer_name",
                                     "type"};
  for (size_t k = 0; c == 0 && k < sizeof(keys) / sizeof(keys[0]); k++)
    c = strcmp(event_text(x, keys[k]), event_text(y, keys[k]));
  return c;
}

/* Resolved findings: latest first (RFC 3339 UTC times sort as text). */
static int resolved_order(const void *a, const void *b) {
  struct json_object *x = *(struct json_object *const *)a;
  struct json_object *y = *(struct json_object *const *)b;
  return strcmp(event_text(y, "resolved_at"), event_text(x, "resolved_at"));
}

/* A new array of the items of the n arrays (referenced again), sorted by
 * order and cut to at most max items (0: no limit). */
static struct json_object *
merged_array(struct json_object *const *arrays, size_t n,
             int (*order)(const void *, const void *), size_t max) {
  struct json_object *out = json_object_new_array();
  for (size_t i = 0; out != NULL && i < n; i++)
    for (size_t k = 0; arrays[i] && k < json_object_array_length(arrays[i]);
         k++)
      json_object_array_add(
          out, json_object_get(json_object_array_get_idx(arrays[i], k)));
  if (out == NULL)
    return NULL;
  json_object_array_sort(out, order);
  if (max > 0 && json_object_array_length(out) > max)
    json_object_array_del_idx(out, max, json_object_array_length(out) - max);
  return out;
}

char *nl_view_violations_merged(struct json_object *const *active,
                                struct json_object *const *resolved, size_t n,
                                const char *instance, int64_t now_ns,
                                size_t *len) {
  return violations_document(
      instance, now_ns, merged_array(active, n, active_order, 0),
      merged_array(resolved, n, resolved_order, NL_RESOLVED_MAX), len);
}

static const char *retention_name(nl_retention r) {
  return r == NL_RETENTION_INTEREST    ? "interest"
         : r == NL_RETENTION_WORKQUEUE ? "workqueue"
                                       : "limits";
}

static const char *ack_policy_name(nl_ack_policy p) {
  return p == NL_ACK_ALL ? "all" : p == NL_ACK_NONE ? "none" : "explicit";
}

static struct json_object *stream_object(const nl_stream_snap *s) {
  struct json_object *o = json_object_new_object();
  if (o == NULL)
    return NULL;
  nl_json_add_string(o, "name", s->name);
  nl_json_add_string(o, "retention", retention_name(s->retention));
  nl_json_add_number(o, "messages", (double)s->msgs);
  nl_json_add_number(o, "bytes", (double)s->bytes);
  nl_json_add_number(o, "first_seq", (double)s->first_seq);
  nl_json_add_number(o, "last_seq", (double)s->last_seq);
  nl_json_add_number(o, "num_deleted", (double)s->num_deleted);
  nl_json_add_number(o, "consumer_count", (double)s->consumer_count);
  nl_json_add_number(o, "max_msgs", (double)s->max_msgs);
  nl_json_add_number(o, "max_bytes", (double)s->max_bytes);
  nl_json_add_number(o, "max_age_s", (double)s->max_age_ns / 1e9);
  nl_json_add_number(o, "replicas", s->replicas);
  json_object_object_add(o, "consumers_complete",
                         json_object_new_boolean(s->consumers_complete));
  return o;
}

static struct json_object *consumer_object(const nl_consumer_snap *c,
                                           const nl_consumer_state *st) {
  struct json_object *o = json_object_new_object();
  struct json_object *cfg = json_object_new_object();
  struct json_object *state = json_object_new_object();
  if (o == NULL || cfg == NULL || state == NULL) {
    json_object_put(o);
    json_object_put(cfg);
    json_object_put(state);
    return NULL;
  }
  nl_json_add_string(o, "name", c->name);
  nl_json_add_string(o, "health", nl_view_health(st));
  add_active(o, "active", st);
  nl_json_add_time(o, "created", c->created_ns);

  nl_json_add_string(cfg, "ack_policy", ack_policy_name(c->ack_policy));
  nl_json_add_number(cfg, "ack_wait_s", (double)c->ack_wait_ns / 1e9);
  nl_json_add_number(cfg, "backoff_first_s", (double)c->backoff_first_ns / 1e9);
  nl_json_add_number(cfg, "max_deliver", (double)c->max_deliver);
  nl_json_add_number(cfg, "max_ack_pending", (double)c->max_ack_pending);
  json_object_object_add(cfg, "filtered", json_object_new_boolean(c->filtered));
  json_object_object_add(cfg, "push", json_object_new_boolean(c->push));
  json_object_object_add(cfg, "push_bound",
                         json_object_new_boolean(c->push_bound));
  json_object_object_add(cfg, "durable", json_object_new_boolean(c->durable));
  json_object_object_add(cfg, "deliver_group",
                         json_object_new_boolean(c->has_deliver_group));
  json_object_object_add(o, "config", cfg);

  nl_json_add_number(state, "delivered_consumer_seq",
                     (double)c->delivered_consumer_seq);
  nl_json_add_number(state, "delivered_stream_seq",
                     (double)c->delivered_stream_seq);
  nl_json_add_number(state, "ack_floor_consumer_seq",
                     (double)c->ack_floor_consumer_seq);
  nl_json_add_number(state, "ack_floor_stream_seq",
                     (double)c->ack_floor_stream_seq);
  nl_json_add_time(state, "delivered_last_active", c->delivered_last_ns);
  nl_json_add_time(state, "ack_floor_last_active", c->ack_last_ns);
  nl_json_add_number(state, "num_ack_pending", (double)c->num_ack_pending);
  nl_json_add_number(state, "num_redelivered", (double)c->num_redelivered);
  nl_json_add_number(state, "num_waiting", (double)c->num_waiting);
  nl_json_add_number(state, "num_pending", (double)c->num_pending);
  json_object_object_add(o, "state", state);

  nl_json_add_number(o, "redelivered_total",
                     st ? (double)st->redelivered_total : 0);
  nl_json_add_number(o, "lost_total", st ? (double)st->lost_total : 0);
  nl_json_add_number(o, "skipped_total", st ? (double)st->skipped_total : 0);
  nl_json_add_number(o, "discarded_total",
                     st ? (double)st->discarded_total : 0);
  nl_json_add_number(o, "history_samples", st ? (double)st->count : 0);
  /* The eviction forecast, only where the polls trust one. */
  double eta;
  nl_limit_kind limit;
  if (st != NULL && nl_forecast_latest(st, &eta, &limit)) {
    nl_json_add_number(o, "eviction_forecast_s",
                       eta < 0 ? 0 : (double)(int64_t)eta);
    nl_json_add_string(o, "eviction_forecast_limit", nl_limit_name(limit));
  }
  return o;
}

/* The worse of two health words. */
static const char *worse(const char *a, const char *b) {
  if (strcmp(a, "critical") == 0 || strcmp(b, "critical") == 0)
    return "critical";
  if (strcmp(a, "warning") == 0 || strcmp(b, "warning") == 0)
    return "warning";
  return "ok";
}

/* Adds the stream-level classes active for the stream named name under
 * "active" of so, and returns the health they give the stream. */
static const char *stream_findings(nl_engine *e, const char *name,
                                   struct json_object *so) {
  const char *health = "ok";
  struct json_object *a = json_object_new_array();
  for (int cls = 0; a != NULL && cls < NL_CLASS_COUNT; cls++) {
    const nl_finding *f =
        nl_class_is_stream(cls) ? nl_engine_stream_finding(e, name, cls) : NULL;
    if (f == NULL)
      continue;
    json_object_array_add(a, json_object_new_string(nl_class_name(cls)));
    health = worse(health, f->severity == NL_SEVERITY_CRITICAL ? "critical"
                                                               : "warning");
  }
  json_object_object_add(so, "active", a);
  return health;
}

/* Most severe first, then by account and name. */
static int part_order(const void *a, const void *b) {
  const nl_view_stream_part *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank - y->rank;
  int c = strcmp(x->account ? x->account : "", y->account ? y->account : "");
  return c != 0 ? c : strcmp(x->names, y->names);
}

/* Appends name and a newline to the growing buffer *buf (used bytes in
 * *n). Returns 0, or -1 out of memory. */
static int append_name(char **buf, size_t *n, const char *name) {
  size_t len = strlen(name);
  char *grown = realloc(*buf, *n + len + 2);
  if (grown == NULL)
    return -1;
  memcpy(grown + *n, name, len);
  grown[*n + len] = '\n';
  grown[*n + len + 1] = '\0';
  *buf = grown;
  *n += len + 1;
  return 0;
}

int nl_view_streams_parts(const nl_snapshot_set *set, nl_engine *e,
                          int64_t poll_ns, nl_view_streams_doc *out) {
  return nl_view_streams_parts_account(set, e, NULL, poll_ns, out);
}

int nl_view_streams_parts_account(const nl_snapshot_set *set, nl_engine *e,
                                  const char *account, int64_t poll_ns,
                                  nl_view_streams_doc *out) {
  *out = (nl_view_streams_doc){.polled_ns = poll_ns,
                               .unobservable = set->unobservable};
  nl_registry *reg = nl_engine_registry(e);
  size_t n = set->n_streams;
  struct json_object **consumers = calloc(n ? n : 1, sizeof(*consumers));
  struct json_object **problems = calloc(n ? n : 1, sizeof(*problems));
  const char **health = calloc(n ? n : 1, sizeof(*health));
  size_t *names_len = calloc(n ? n : 1, sizeof(*names_len));
  out->parts = calloc(n ? n : 1, sizeof(*out->parts));
  bool ok = consumers != NULL && problems != NULL && health != NULL &&
            names_len != NULL && out->parts != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    consumers[i] = json_object_new_array();
    problems[i] = json_object_new_array();
    health[i] = "ok";
    ok = consumers[i] != NULL && problems[i] != NULL &&
         append_name(&out->parts[i].names, &names_len[i],
                     set->streams[i].name) == 0;
  }
  for (size_t i = 0; ok && i < set->n_consumers; i++) {
    const nl_consumer_snap *c = &set->consumers[i];
    if (c->stream_index >= n)
      continue;
    const nl_consumer_state *st = nl_registry_find(reg, c->stream, c->name);
    struct json_object *co = consumer_object(c, st);
    ok = co != NULL && append_name(&out->parts[c->stream_index].names,
                                   &names_len[c->stream_index], c->name) == 0;
    if (co != NULL)
      json_object_array_add(consumers[c->stream_index], co);
    if (co != NULL && strcmp(nl_view_health(st), "ok") != 0)
      json_object_array_add(problems[c->stream_index], json_object_get(co));
    if (ok)
      health[c->stream_index] =
          worse(health[c->stream_index], nl_view_health(st));
  }
  for (size_t i = 0; ok && i < n; i++) {
    struct json_object *so = stream_object(&set->streams[i]);
    ok = so != NULL &&
         (account == NULL || (out->parts[i].account = strdup(account)) != NULL);
    if (ok) {
      if (account != NULL)
        nl_json_add_string(so, "account", account);
      nl_stream_ledger ledger;
      nl_engine_stream_ledger(e, set->streams[i].name, &ledger);
      nl_json_add_number(so, "lost_total", (double)ledger.lost_total);
      nl_json_add_number(so, "stranded", (double)ledger.stranded);
      const char *own = stream_findings(e, set->streams[i].name, so);
      const char *h = worse(health[i], own);
      nl_json_add_string(so, "health", h);
      nl_json_add_number(so, "consumers_with_findings",
                         (double)json_object_array_length(problems[i]));
      json_object_object_add(so, "consumers", problems[i]);
      problems[i] = NULL;
      out->parts[i].problems =
          nl_json_copy_text(so, &out->parts[i].problems_len);
      json_object_object_add(so, "consumers", consumers[i]);
      consumers[i] = NULL;
      out->parts[i].rank = health_rank(h);
      out->parts[i].text = nl_json_take_text(so, &out->parts[i].len);
      ok = out->parts[i].text != NULL && out->parts[i].problems != NULL;
    }
  }
  for (size_t i = 0; consumers != NULL && i < n; i++)
    json_object_put(consumers[i]);
  for (size_t i = 0; problems != NULL && i < n; i++)
    json_object_put(problems[i]);
  free(consumers);
  free(problems);
  free(health);
  free(names_len);
  if (!ok) {
    out->n = n;
    nl_view_streams_doc_free(out);
    return -1;
  }
  out->n = n;
  if (n > 1)
    qsort(out->parts, n, sizeof(*out->parts), part_order);
  return 0;
}

void nl_view_streams_doc_free(nl_view_streams_doc *d) {
  for (size_t i = 0; d->parts != NULL && i < d->n; i++) {
    free(d->parts[i].text);
    free(d->parts[i].problems);
    free(d->parts[i].names);
    free(d->parts[i].account);
  }
  free(d->parts);
  *d = (nl_view_streams_doc){0};
}

int nl_view_streams_merge(nl_view_streams_doc *docs, size_t n,
                          nl_view_streams_doc *out) {
  *out = (nl_view_streams_doc){0};
  size_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += docs[i].n;
  out->parts = calloc(total ? total : 1, sizeof(*out->parts));
  if (out->parts == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    if (docs[i].polled_ns > out->polled_ns)
      out->polled_ns = docs[i].polled_ns;
    out->unobservable += docs[i].unobservable;
    if (docs[i].n > 0)
      memcpy(out->parts + out->n, docs[i].parts,
             docs[i].n * sizeof(*out->parts));
    out->n += docs[i].n;
    free(docs[i].parts);
    docs[i] = (nl_view_streams_doc){0};
  }
  if (out->n > 1)
    qsort(out->parts, out->n, sizeof(*out->parts), part_order);
  return 0;
}

/* Whether part matches the state and search text of q. */
static bool part_matches(const nl_view_stream_part *p,
                         const nl_view_streams_query *q) {
  if (q->state != NULL) {
    int want = strcmp(q->state, "problem") == 0 ? -1 : health_rank(q->state);
    if (want == -1 ? p->rank == 2 : p->rank != want)
      return false;
  }
  if (q->account != NULL &&
      (p->account == NULL || strcmp(p->account, q->account) != 0))
    return false;
  if (q->stream != NULL) {
    size_t n = strlen(q->stream);
    if (strncmp(p->names, q->stream, n) != 0 || p->names[n] != '\n')
      return false;
  }
  return q->q == NULL || q->q[0] == '\0' || strcasestr(p->names, q->q);
}

/* The text of part as a query asks for it (problems_only: with only its
 * consumers that have a finding), and its length in *len. */
static const char *part_text(const nl_view_stream_part *p, bool problems_only,
                             size_t *len) {
  *len = problems_only ? p->problems_len : p->len;
  return problems_only ? p->problems : p->text;
}

char *nl_view_streams_page(const nl_view_streams_doc *d,
                           const nl_view_streams_query *q, const char *instance,
                           int64_t now_ns, size_t *len) {
  static const nl_view_streams_query all = {0};
  if (q == NULL)
    q = &all;
  /* The parts the page shows, in order, and their size. */
  const nl_view_stream_part **page = malloc((d->n ? d->n : 1) * sizeof(*page));
  if (page == NULL)
    return NULL;
  size_t matched = 0, shown = 0, bytes = 0, tl;
  for (size_t i = 0; i < d->n; i++) {
    if (!part_matches(&d->parts[i], q))
      continue;
    if (matched++ >= q->offset && (q->limit == 0 || shown < q->limit)) {
      page[shown++] = &d->parts[i];
      part_text(&d->parts[i], q->problems_only, &tl);
      bytes += tl + 1;
    }
  }
  struct json_object *doc = document(instance, now_ns);
  if (doc != NULL) {
    nl_json_add_time(doc, "polled_at", d->polled_ns);
    nl_json_add_number(doc, "unobservable", (double)d->unobservable);
    nl_json_add_number(doc, "total", (double)d->n);
    nl_json_add_number(doc, "matched", (double)matched);
    nl_json_add_number(doc, "offset", (double)q->offset);
    /* "streams" comes last: its array is spliced in after the header. */
    json_object_object_add(doc, "streams", json_object_new_array());
  }
  size_t head_len = 0;
  char *head = nl_json_take_text(doc, &head_len);
  /* head ends with "[]}": keep up to and including '['. */
  char *text = NULL;
  if (head != NULL && head_len >= 3 && strcmp(head + head_len - 3, "[]}") == 0)
    text = malloc(head_len - 2 + bytes + 3);
  if (text != NULL) {
    size_t at = head_len - 2;
    memcpy(text, head, at);
    for (size_t k = 0; k < shown; k++) {
      if (k > 0)
        text[at++] = ',';
      const char *t = part_text(page[k], q->problems_only, &tl);
      memcpy(text + at, t, tl);
      at += tl;
    }
    memcpy(text + at, "]}", 3);
    if (len != NULL)
      *len = at + 2;
  }
  free(head);
  free(page);
  return text;
}

char *nl_view_streams(const nl_snapshot_set *set, nl_engine *e,
                      const char *instance, int64_t poll_ns, int64_t now_ns,
                      size_t *len) {
  nl_view_streams_doc d;
  if (nl_view_streams_parts(set, e, poll_ns, &d) != 0)
    return NULL;
  char *text = nl_view_streams_page(&d, NULL, instance, now_ns, len);
  nl_view_streams_doc_free(&d);
  return text;
}

/* The fields the history keeps of every poll. */
static struct json_object *past_object(const nl_past_sample *s) {
  struct json_object *o = json_object_new_object();
  if (o == NULL)
    return NULL;
  nl_json_add_time(o, "t", s->t_ns);
  nl_json_add_number(o, "t_ms", (double)(s->t_ns / 1000000));
  nl_json_add_number(o, "delivered_consumer_seq",
                     (double)s->delivered_consumer_seq);
  nl_json_add_number(o, "num_ack_pending", (double)s->num_ack_pending);
  nl_json_add_number(o, "num_pending", (double)s->num_pending);
  nl_json_add_number(o, "redeliveries", (double)s->redeliveries);
  json_object_object_add(o, "beyond_expiry",
                         json_object_new_boolean(s->beyond_expiry));
  json_object_object_add(o, "floor_moved",
                         json_object_new_boolean(s->floor_moved));
  json_object_object_add(o, "acked", json_object_new_boolean(s->acked));
  return o;
}

/* Adds what only the latest poll keeps to its object o. */
static void add_latest_fields(struct json_object *o, const nl_sample *s) {
  nl_json_add_number(o, "delivered_stream_seq",
                     (double)s->delivered_stream_seq);
  nl_json_add_number(o, "ack_floor_stream_seq",
                     (double)s->ack_floor_stream_seq);
  nl_json_add_time(o, "ack_floor_last_active", s->ack_last_ns);
  nl_json_add_number(o, "num_redelivered", (double)s->num_redelivered);
}

char *nl_view_history(nl_registry *reg, const char *stream,
                      const char *consumer, const char *instance,
                      int64_t now_ns, bool *found, size_t *len) {
  return nl_view_history_series(reg, stream, consumer, instance, now_ns, NULL,
                                found, len);
}

char *nl_view_history_series(nl_registry *reg, const char *stream,
                             const char *consumer, const char *instance,
                             int64_t now_ns, const nl_series *longer,
                             bool *found, size_t *len) {
  const nl_consumer_state *st = nl_registry_find(reg, stream, consumer);
  *found = st != NULL;
  if (st == NULL)
    return NULL;
  struct json_object *doc = document(instance, now_ns);
  struct json_object *arr = json_object_new_array();
  if (doc == NULL || arr == NULL) {
    json_object_put(doc);
    json_object_put(arr);
    return NULL;
  }
  nl_json_add_string(doc, "stream_name", st->stream);
  nl_json_add_string(doc, "consumer_name", st->name);
  nl_json_add_string(doc, "health", nl_view_health(st));
  add_active(doc, "active", st);
  nl_json_add_time(doc, "created", st->created_ns);
  nl_json_add_number(doc, "resets", st->resets);
  nl_json_add_number(doc, "redelivered_total", (double)st->redelivered_total);
  nl_json_add_number(doc, "lost_total", (double)st->lost_total);
  nl_json_add_number(doc, "skipped_total", (double)st->skipped_total);
  nl_json_add_number(doc, "discarded_total", (double)st->discarded_total);
  nl_json_add_number(doc, "capacity", NL_HISTORY_LEN);
  for (unsigned k = st->count; k-- > 0;) {
    nl_past_sample ps;
    nl_state_past(st, k, &ps);
    struct json_object *so = past_object(&ps);
    if (so == NULL) {
      json_object_put(doc);
      json_object_put(arr);
      return NULL;
    }
    if (k == 0)
      add_latest_fields(so, nl_state_latest(st));
    json_object_array_add(arr, so);
  }
  json_object_object_add(doc, "samples", arr);
  if (longer != NULL)
    json_object_object_add(doc, "longer", nl_series_object(longer));
  return nl_json_take_text(doc, len);
}
