/* nl_view.c: the JSON documents of the REST API, rendered from the engine. */
#include "nl_view.h"

#include <stdlib.h>
#include <string.h>

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

char *nl_view_violations(nl_engine *e, const char *instance, int64_t now_ns,
                         size_t *len) {
  nl_active *list;
  size_t n;
  if (nl_engine_active(e, NULL, NULL, &list, &n) != 0)
    return NULL;
  struct json_object *doc = document(instance, now_ns);
  struct json_object *arr = json_object_new_array();
  if (doc == NULL || arr == NULL) {
    free(list);
    json_object_put(doc);
    json_object_put(arr);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    nl_event ev = {.instance = instance,
                   .stream = list[i].stream,
                   .consumer = list[i].consumer,
                   .finding = list[i].f,
                   .firing = true,
                   .at_ns = list[i].f->since_ns};
    json_object_array_add(arr, nl_event_object(&ev));
  }
  free(list);
  nl_json_add_number(doc, "count", (double)n);
  json_object_object_add(doc, "violations", arr);
  return nl_json_take_text(doc, len);
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
  nl_json_add_number(o, "history_samples", st ? (double)st->count : 0);
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

char *nl_view_streams(const nl_snapshot_set *set, nl_engine *e,
                      const char *instance, int64_t poll_ns, int64_t now_ns,
                      size_t *len) {
  nl_registry *reg = nl_engine_registry(e);
  struct json_object *doc = document(instance, now_ns);
  struct json_object *arr = json_object_new_array();
  size_t n = set->n_streams;
  struct json_object **consumers = calloc(n ? n : 1, sizeof(*consumers));
  const char **health = calloc(n ? n : 1, sizeof(*health));
  bool ok = doc != NULL && arr != NULL && consumers != NULL && health != NULL;
  for (size_t i = 0; ok && i < n; i++) {
    consumers[i] = json_object_new_array();
    health[i] = "ok";
    ok = consumers[i] != NULL;
  }
  for (size_t i = 0; ok && i < set->n_consumers; i++) {
    const nl_consumer_snap *c = &set->consumers[i];
    if (c->stream_index >= n)
      continue;
    const nl_consumer_state *st = nl_registry_find(reg, c->stream, c->name);
    struct json_object *co = consumer_object(c, st);
    ok = co != NULL;
    if (ok) {
      json_object_array_add(consumers[c->stream_index], co);
      health[c->stream_index] =
          worse(health[c->stream_index], nl_view_health(st));
    }
  }
  for (size_t i = 0; ok && i < n; i++) {
    struct json_object *so = stream_object(&set->streams[i]);
    ok = so != NULL;
    if (ok) {
      const char *own = stream_findings(e, set->streams[i].name, so);
      nl_json_add_string(so, "health", worse(health[i], own));
      json_object_object_add(so, "consumers", consumers[i]);
      consumers[i] = NULL;
      json_object_array_add(arr, so);
    }
  }
  for (size_t i = 0; consumers != NULL && i < n; i++)
    json_object_put(consumers[i]);
  free(consumers);
  free(health);
  if (!ok) {
    json_object_put(doc);
    json_object_put(arr);
    return NULL;
  }
  nl_json_add_time(doc, "polled_at", poll_ns);
  nl_json_add_number(doc, "unobservable", (double)set->unobservable);
  json_object_object_add(doc, "streams", arr);
  return nl_json_take_text(doc, len);
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
  return nl_json_take_text(doc, len);
}
