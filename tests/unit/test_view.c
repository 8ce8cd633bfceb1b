/* test_view.c: the REST API documents (nl_view) and path parsing
 * (nl_route), on an engine driven with synthetic polls. */
#include "core/nl_engine.h"
#include "core/report/nl_view.h"
#include "http/nl_route.h"
#include "nl_test.h"

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* Two streams: ORDERS with a throttled consumer "stuck" and a healthy
 * "fine", and "odd/name" with a consumer behind a loss (SEQUENCE_GAP). */
typedef struct {
  nl_engine *engine;
  nl_stream_snap streams[2];
  nl_consumer_snap consumers[3];
  nl_snapshot_set set;
  int64_t t;
} fixture;

/* A stream of msgs messages first_seq..last_seq with no limits but
 * max_msgs. */
static void stream_init(nl_stream_snap *s, const char *name, int64_t max_msgs,
                        uint64_t first_seq, uint64_t last_seq,
                        uint64_t consumers) {
  s->name = (char *)name;
  s->max_msgs = max_msgs;
  s->max_bytes = -1;
  s->first_seq = first_seq;
  s->last_seq = last_seq;
  s->msgs = last_seq - first_seq + 1;
  s->consumer_count = consumers;
  s->consumers_complete = true;
}

/* A durable pull consumer with ack_wait 30 s that has delivered and acked
 * up to seq; callers change what their case needs. */
static void consumer_init(nl_consumer_snap *c, const char *stream,
                          size_t stream_index, const char *name, uint64_t seq) {
  c->stream = (char *)stream;
  c->name = (char *)name;
  c->stream_index = stream_index;
  c->created_ns = 1600000000LL * SEC;
  c->ack_wait_ns = 30 * SEC;
  c->max_deliver = -1;
  c->max_ack_pending = 1000;
  c->delivered_consumer_seq = seq;
  c->delivered_stream_seq = seq;
  c->ack_floor_consumer_seq = seq;
  c->ack_floor_stream_seq = seq;
  c->durable = true;
}

static void fixture_init(fixture *fx) {
  memset(fx, 0, sizeof(*fx));
  nl_detect_params p;
  nl_detect_params_default(&p);
  fx->engine = nl_engine_create(&p);
  fx->t = 1700000000LL * SEC;
  stream_init(&fx->streams[0], "ORDERS", -1, 1, 50, 2);
  stream_init(&fx->streams[1], "odd/name", 100, 201, 300, 1);
  /* Throttled: 5 of 5 delivered, none acked, 45 waiting. */
  nl_consumer_snap *c = &fx->consumers[0];
  consumer_init(c, "ORDERS", 0, "stuck", 0);
  c->delivered_consumer_seq = 5;
  c->delivered_stream_seq = 5;
  c->max_ack_pending = 5;
  c->num_ack_pending = 5;
  c->num_pending = 45;
  consumer_init(&fx->consumers[1], "ORDERS", 0, "fine", 50);
  /* Never read while 200 messages were evicted. */
  c = &fx->consumers[2];
  consumer_init(c, "odd/name", 1, "c 1", 0);
  c->num_pending = 100;

  fx->set.streams = fx->streams;
  fx->set.n_streams = 2;
  fx->set.consumers = fx->consumers;
  fx->set.n_consumers = 3;
}

static void fixture_poll(fixture *fx) {
  nl_engine_apply(fx->engine, &fx->set, fx->t, NULL, NULL);
  fx->t += SEC;
}

static struct json_object *parse(char *text) {
  struct json_object *o = text ? json_tokener_parse(text) : NULL;
  free(text);
  return o;
}

static struct json_object *get(struct json_object *o, const char *key) {
  struct json_object *v = NULL;
  json_object_object_get_ex(o, key, &v);
  return v;
}

static const char *get_str(struct json_object *o, const char *key) {
  struct json_object *v = get(o, key);
  return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                  : "";
}

static void test_view_violations(void) {
  fixture fx;
  fixture_init(&fx);
  fixture_poll(&fx);
  fixture_poll(&fx);
  size_t len = 0;
  char *text = nl_view_violations(fx.engine, "prod", fx.t, &len);
  CHECK(text != NULL && len == strlen(text));
  struct json_object *doc = parse(text);
  CHECK(doc != NULL);
  CHECK(strcmp(get_str(doc, "instance"), "prod") == 0);
  struct json_object *arr = get(doc, "violations");
  CHECK(json_object_is_type(arr, json_type_array));
  CHECK_EQ_U(json_object_array_length(arr), 2);
  CHECK_EQ_U(json_object_get_int(get(doc, "count")), 2);
  /* The critical SEQUENCE_GAP comes before the warning. */
  struct json_object *first = json_object_array_get_idx(arr, 0);
  struct json_object *second = json_object_array_get_idx(arr, 1);
  CHECK(strcmp(get_str(first, "type"), "SEQUENCE_GAP") == 0);
  CHECK(strcmp(get_str(first, "severity"), "critical") == 0);
  CHECK(strcmp(get_str(first, "stream_name"), "odd/name") == 0);
  CHECK(strcmp(get_str(first, "consumer_name"), "c 1") == 0);
  CHECK(strcmp(get_str(second, "type"), "MAX_PENDING_THROTTLE") == 0);
  CHECK(strcmp(get_str(second, "state"), "firing") == 0);
  CHECK(strcmp(get_str(second, "detected_at"), "2023-11-14T22:13:20.000Z") ==
        0);
  struct json_object *v = get(second, "violation");
  CHECK(strncmp(get_str(v, "fix_command"), "nats consumer edit ORDERS stuck",
                31) == 0);
  CHECK(json_object_get_int(get(v, "max_ack_pending")) == 5);
  json_object_put(doc);

  nl_engine_free(fx.engine);

  /* No findings: an empty list, not a missing one. */
  fixture_init(&fx);
  fx.set.consumers = &fx.consumers[1];
  fx.set.n_consumers = 1;
  fixture_poll(&fx);
  doc = parse(nl_view_violations(fx.engine, "prod", fx.t, NULL));
  CHECK(doc != NULL);
  CHECK(json_object_is_type(get(doc, "violations"), json_type_array));
  CHECK_EQ_U(json_object_array_length(get(doc, "violations")), 0);
  json_object_put(doc);
  nl_engine_free(fx.engine);
}

/* A stream-level finding (STREAM_SINGLE_REPLICA of an R1 stream in a
 * cluster) is listed in /api/violations too, without a consumer, and makes
 * the stream's health in /api/streams "warning", not "ok". */
static void test_view_violations_stream_level(void) {
  fixture fx;
  fixture_init(&fx);
  nl_engine_free(fx.engine);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = true;
  fx.engine = nl_engine_create(&p);
  fx.streams[1].cluster = "C1";
  fx.streams[1].replicas = 1;
  /* odd/name without its consumer: its only finding is its own. */
  fx.set.n_consumers = 2;
  fx.streams[1].consumer_count = 0;
  fixture_poll(&fx);
  fixture_poll(&fx);
  struct json_object *doc =
      parse(nl_view_violations(fx.engine, "prod", fx.t, NULL));
  struct json_object *arr = get(doc, "violations");
  size_t n = json_object_array_length(arr), found = 0, at = 0;
  for (size_t i = 0; i < n; i++) {
    struct json_object *v = json_object_array_get_idx(arr, i);
    if (strcmp(get_str(v, "type"), "STREAM_SINGLE_REPLICA") == 0) {
      found++;
      at = i;
      CHECK(strcmp(get_str(v, "stream_name"), "odd/name") == 0);
      CHECK(get(v, "consumer_name") == NULL);
    }
  }
  CHECK_EQ_U(found, 1);
  CHECK_EQ_U(json_object_get_int(get(doc, "count")), n);
  json_object_put(doc);
  /* In /api/streams the stream is not "ok": its own finding counts. */
  doc = parse(
      nl_view_streams(&fx.set, fx.engine, "prod", fx.t - SEC, fx.t, NULL));
  struct json_object *odd = NULL, *streams = get(doc, "streams");
  for (size_t i = 0; i < json_object_array_length(streams); i++)
    if (strcmp(get_str(json_object_array_get_idx(streams, i), "name"),
               "odd/name") == 0)
      odd = json_object_array_get_idx(streams, i);
  CHECK(odd != NULL);
  struct json_object *own = get(odd, "active");
  CHECK(json_object_array_length(own) == 1 &&
        strcmp(json_object_get_string(json_object_array_get_idx(own, 0)),
               "STREAM_SINGLE_REPLICA") == 0);
  CHECK(strcmp(get_str(odd, "health"), "warning") == 0);
  /* Ordered: no finding of higher severity comes after it. */
  for (size_t i = at + 1; i < n; i++)
    CHECK(strcmp(get_str(json_object_array_get_idx(arr, i), "severity"),
                 "critical") != 0 ||
          strcmp(get_str(json_object_array_get_idx(arr, at), "severity"),
                 "critical") == 0);
  json_object_put(doc);
  nl_engine_free(fx.engine);
}

static void test_view_streams(void) {
  fixture fx;
  fixture_init(&fx);
  fixture_poll(&fx);
  struct json_object *doc = parse(
      nl_view_streams(&fx.set, fx.engine, "prod", fx.t - SEC, fx.t, NULL));
  CHECK(doc != NULL);
  CHECK(strcmp(get_str(doc, "polled_at"), "2023-11-14T22:13:20.000Z") == 0);
  struct json_object *streams = get(doc, "streams");
  CHECK_EQ_U(json_object_array_length(streams), 2);
  /* Most severe first: the critical stream, then ORDERS (warning). */
  struct json_object *orders = json_object_array_get_idx(streams, 1);
  CHECK(strcmp(get_str(orders, "name"), "ORDERS") == 0);
  CHECK(strcmp(get_str(orders, "health"), "warning") == 0);
  CHECK(strcmp(get_str(orders, "retention"), "limits") == 0);
  CHECK(json_object_get_int(get(orders, "messages")) == 50);
  struct json_object *cs = get(orders, "consumers");
  CHECK_EQ_U(json_object_array_length(cs), 2);
  struct json_object *stuck = json_object_array_get_idx(cs, 0);
  struct json_object *fine = json_object_array_get_idx(cs, 1);
  CHECK(strcmp(get_str(stuck, "name"), "stuck") == 0);
  CHECK(strcmp(get_str(stuck, "health"), "warning") == 0);
  struct json_object *active = get(stuck, "active");
  CHECK_EQ_U(json_object_array_length(active), 1);
  CHECK(strcmp(json_object_get_string(json_object_array_get_idx(active, 0)),
               "MAX_PENDING_THROTTLE") == 0);
  CHECK(json_object_get_int(get(get(stuck, "state"), "num_ack_pending")) == 5);
  CHECK(json_object_get_int(get(get(stuck, "config"), "max_ack_pending")) == 5);
  CHECK(json_object_get_int(get(get(stuck, "config"), "ack_wait_s")) == 30);
  CHECK(strcmp(get_str(fine, "health"), "ok") == 0);
  CHECK_EQ_U(json_object_array_length(get(fine, "active")), 0);
  struct json_object *odd = json_object_array_get_idx(streams, 0);
  CHECK(strcmp(get_str(odd, "health"), "critical") == 0);
  CHECK(json_object_get_int(get(doc, "total")) == 2);
  CHECK(json_object_get_int(get(doc, "matched")) == 2);
  json_object_put(doc);

  /* Queries: by state, by a consumer's name (case ignored), and paged. */
  nl_view_streams_doc d;
  CHECK(nl_view_streams_parts(&fx.set, fx.engine, fx.t - SEC, &d) == 0);
  struct {
    nl_view_streams_query q;
    int matched, shown;
    const char *first;
  } cases[] = {
      {{0, 0, NULL, "warning", NULL, false, NULL}, 1, 1, "ORDERS"},
      {{0, 0, NULL, "problem", NULL, false, NULL}, 2, 2, NULL},
      {{0, 0, NULL, "ok", NULL, false, NULL}, 0, 0, NULL},
      {{0, 0, "STUCK", NULL, NULL, false, NULL}, 1, 1, "ORDERS"},
      {{0, 0, "no such name", NULL, NULL, false, NULL}, 0, 0, NULL},
      {{1, 1, NULL, NULL, NULL, false, NULL}, 2, 1, "ORDERS"},
      {{0, 1, NULL, NULL, NULL, false, NULL}, 2, 1, NULL},
      {{5, 0, NULL, NULL, NULL, false, NULL}, 2, 0, NULL},
      {{0, 0, NULL, NULL, "ORDERS", true, NULL}, 1, 1, "ORDERS"},
      {{0, 0, NULL, NULL, "ORDER", false, NULL}, 0, 0, NULL},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    doc = parse(nl_view_streams_page(&d, &cases[i].q, "prod", fx.t, NULL));
    CHECK(doc != NULL);
    CHECK(json_object_get_int(get(doc, "matched")) == cases[i].matched);
    struct json_object *page = get(doc, "streams");
    CHECK((int)json_object_array_length(page) == cases[i].shown);
    if (cases[i].first != NULL)
      CHECK(strcmp(get_str(json_object_array_get_idx(page, 0), "name"),
                   cases[i].first) == 0);
    /* With only the consumers that have a finding: ORDERS keeps "stuck"
     * and leaves out the healthy one. */
    if (cases[i].q.problems_only) {
      struct json_object *o = json_object_array_get_idx(page, 0);
      CHECK_EQ_U(json_object_array_length(get(o, "consumers")), 1);
      CHECK(json_object_get_int(get(o, "consumers_with_findings")) == 1);
      CHECK(json_object_get_int(get(o, "consumer_count")) == 2);
    }
    json_object_put(doc);
  }
  nl_view_streams_doc_free(&d);

  /* Before the first poll: no streams and polled_at null. */
  nl_snapshot_set empty = {0};
  doc = parse(nl_view_streams(&empty, fx.engine, "prod", 0, fx.t, NULL));
  CHECK(doc != NULL);
  CHECK(get(doc, "polled_at") == NULL);
  CHECK_EQ_U(json_object_array_length(get(doc, "streams")), 0);
  json_object_put(doc);
  nl_engine_free(fx.engine);
}

/* Two accounts with the same streams (SystemAccount): their documents
 * merged name each stream's and each finding's account, and a query picks
 * one account's stream. A's ORDERS/stuck is throttled; B's is not (its
 * consumer acks). */
static void test_view_accounts_merged(void) {
  fixture a, b;
  fixture_init(&a);
  fixture_init(&b);
  b.consumers[0].num_ack_pending = 0;
  b.consumers[0].ack_floor_consumer_seq = 5;
  b.consumers[0].ack_floor_stream_seq = 5;
  for (int i = 0; i < 4; i++) {
    fixture_poll(&a);
    fixture_poll(&b);
  }
  nl_view_streams_doc docs[2], merged;
  CHECK(nl_view_streams_parts_account(&b.set, b.engine, "B", b.t, &docs[1]) ==
        0);
  CHECK(nl_view_streams_parts_account(&a.set, a.engine, "A", a.t, &docs[0]) ==
        0);
  CHECK(nl_view_streams_merge(docs, 2, &merged) == 0);
  CHECK_EQ_U(merged.n, 4);
  CHECK(docs[0].n == 0 && docs[1].n == 0); /* Moved, not copied. */
  nl_view_streams_query q = {.stream = "ORDERS", .account = "B"};
  struct json_object *doc =
      parse(nl_view_streams_page(&merged, &q, "prod", a.t, NULL));
  CHECK(json_object_get_int(get(doc, "matched")) == 1);
  struct json_object *o = json_object_array_get_idx(get(doc, "streams"), 0);
  CHECK(strcmp(get_str(o, "account"), "B") == 0);
  CHECK(strcmp(get_str(o, "health"), "ok") == 0);
  json_object_put(doc);
  q.account = "A";
  doc = parse(nl_view_streams_page(&merged, &q, "prod", a.t, NULL));
  o = json_object_array_get_idx(get(doc, "streams"), 0);
  CHECK(strcmp(get_str(o, "account"), "A") == 0);
  CHECK(strcmp(get_str(o, "health"), "warning") == 0);
  json_object_put(doc);
  /* Without an account every stream is listed, most severe first. */
  doc = parse(nl_view_streams_page(&merged, NULL, "prod", a.t, NULL));
  CHECK(json_object_get_int(get(doc, "total")) == 4);
  json_object_put(doc);

  struct json_object *active[2], *resolved[2];
  CHECK(nl_view_violation_arrays(a.engine, "prod", "A", &active[0],
                                 &resolved[0]) == 0);
  CHECK(nl_view_violation_arrays(b.engine, "prod", "B", &active[1],
                                 &resolved[1]) == 0);
  doc =
      parse(nl_view_violations_merged(active, resolved, 2, "prod", a.t, NULL));
  struct json_object *v = get(doc, "violations");
  size_t throttled_a = 0, throttled_b = 0;
  for (size_t i = 0; i < json_object_array_length(v); i++) {
    struct json_object *f = json_object_array_get_idx(v, i);
    bool mp = strcmp(get_str(f, "type"), "MAX_PENDING_THROTTLE") == 0;
    throttled_a += mp && strcmp(get_str(f, "account"), "A") == 0;
    throttled_b += mp && strcmp(get_str(f, "account"), "B") == 0;
    CHECK(get_str(f, "account")[0] != '\0');
  }
  CHECK_EQ_U(throttled_a, 1);
  CHECK_EQ_U(throttled_b, 0);
  CHECK(json_object_get_int(get(doc, "count")) ==
        (int)json_object_array_length(v));
  json_object_put(doc);
  for (int i = 0; i < 2; i++) {
    json_object_put(active[i]);
    json_object_put(resolved[i]);
    nl_view_streams_doc_free(&docs[i]);
  }
  nl_view_streams_doc_free(&merged);
  nl_engine_free(a.engine);
  nl_engine_free(b.engine);
}

static void test_view_history(void) {
  fixture fx;
  fixture_init(&fx);
  for (int i = 0; i < NL_HISTORY_LEN + 3; i++) {
    fx.consumers[1].delivered_consumer_seq += 10;
    fx.consumers[1].delivered_stream_seq += 10;
    fixture_poll(&fx);
  }
  nl_registry *reg = nl_engine_registry(fx.engine);
  bool found = false;
  struct json_object *doc =
      parse(nl_view_history(reg, "ORDERS", "fine", "prod", fx.t, &found, NULL));
  CHECK(found && doc != NULL);
  CHECK(strcmp(get_str(doc, "stream_name"), "ORDERS") == 0);
  CHECK(strcmp(get_str(doc, "consumer_name"), "fine") == 0);
  struct json_object *samples = get(doc, "samples");
  CHECK_EQ_U(json_object_array_length(samples), NL_HISTORY_LEN);
  /* Oldest first; the newest is the latest poll. */
  int64_t prev = 0;
  for (size_t i = 0; i < json_object_array_length(samples); i++) {
    int64_t t = json_object_get_int64(
        get(json_object_array_get_idx(samples, i), "t_ms"));
    CHECK(t > prev);
    prev = t;
  }
  CHECK(prev == (fx.t - SEC) / 1000000);
  /* Each poll's delivered count, 10 apart; only the latest poll keeps
   * every field. */
  for (size_t i = 0; i < NL_HISTORY_LEN; i++) {
    struct json_object *si = json_object_array_get_idx(samples, i);
    CHECK(json_object_get_int(get(si, "delivered_consumer_seq")) ==
          (int)fx.consumers[1].delivered_consumer_seq -
              10 * (NL_HISTORY_LEN - 1 - (int)i));
    struct json_object *v = NULL;
    CHECK(json_object_object_get_ex(si, "delivered_stream_seq", &v) ==
          (i == NL_HISTORY_LEN - 1));
    CHECK(json_object_object_get_ex(si, "num_pending", &v));
  }
  struct json_object *last =
      json_object_array_get_idx(samples, NL_HISTORY_LEN - 1);
  CHECK(json_object_get_int(get(last, "delivered_stream_seq")) ==
        (int)fx.consumers[1].delivered_stream_seq);
  json_object_put(doc);

  /* Unknown consumers, and a stream/consumer split that does not exist. */
  char *text =
      nl_view_history(reg, "ORDERS", "nope", "prod", fx.t, &found, NULL);
  CHECK(text == NULL && !found);
  text = nl_view_history(reg, "ORDERSf", "ine", "prod", fx.t, &found, NULL);
  CHECK(text == NULL && !found);
  nl_engine_free(fx.engine);
}

static void test_view_health_words(void) {
  CHECK(strcmp(nl_view_health(NULL), "ok") == 0);
  nl_consumer_state st;
  nl_finding *held[NL_CLASS_COUNT] = {NULL};
  memset(&st, 0, sizeof(st));
  st.active = held;
  nl_finding warn = {.cls = NL_NAK_STORM, .severity = NL_SEVERITY_WARNING};
  nl_finding crit = {.cls = NL_SEQUENCE_GAP, .severity = NL_SEVERITY_CRITICAL};
  CHECK(strcmp(nl_view_health(&st), "ok") == 0);
  st.active[NL_NAK_STORM] = &warn;
  CHECK(strcmp(nl_view_health(&st), "warning") == 0);
  st.active[NL_SEQUENCE_GAP] = &crit;
  CHECK(strcmp(nl_view_health(&st), "critical") == 0);
}

static void test_route_decode(void) {
  char out[8];
  CHECK(nl_route_decode("%41b", 4, out, sizeof(out)) == 2);
  CHECK(strcmp(out, "Ab") == 0);
  CHECK(nl_route_decode("a%2Fb", 5, out, sizeof(out)) == 3);
  CHECK(strcmp(out, "a/b") == 0);
  CHECK(nl_route_decode("a+b", 3, out, sizeof(out)) == 3);
  CHECK(strcmp(out, "a+b") == 0);
  CHECK(nl_route_decode("%c3%a9", 6, out, sizeof(out)) == 2);
  CHECK(nl_route_decode("%00", 3, out, sizeof(out)) == -1);
  CHECK(nl_route_decode("%0a", 3, out, sizeof(out)) == -1);
  CHECK(nl_route_decode("%4", 2, out, sizeof(out)) == -1);
  CHECK(nl_route_decode("%", 1, out, sizeof(out)) == -1);
  CHECK(nl_route_decode("%zz", 3, out, sizeof(out)) == -1);
  CHECK(nl_route_decode("a\x01", 2, out, sizeof(out)) == -1);
  CHECK(nl_route_decode("1234567", 7, out, sizeof(out)) == 7);
  CHECK(nl_route_decode("12345678", 8, out, sizeof(out)) == -1);
}

static void test_route_parse(void) {
  char s[16], c[16];
  CHECK(nl_route_parse("/", s, c, sizeof(s)) == NL_ROUTE_INDEX);
  CHECK(nl_route_parse("/index.html", s, c, sizeof(s)) == NL_ROUTE_INDEX);
  CHECK(nl_route_parse("/healthz", s, c, sizeof(s)) == NL_ROUTE_HEALTHZ);
  CHECK(nl_route_parse("/api/violations", s, c, sizeof(s)) ==
        NL_ROUTE_VIOLATIONS);
  CHECK(nl_route_parse("/api/streams", s, c, sizeof(s)) == NL_ROUTE_STREAMS);
  CHECK(nl_route_parse("/api/history/S/C", s, c, sizeof(s)) ==
        NL_ROUTE_HISTORY);
  CHECK(strcmp(s, "S") == 0 && strcmp(c, "C") == 0);
  CHECK(nl_route_parse("/api/history/a%2Fb/c%20d", s, c, sizeof(s)) ==
        NL_ROUTE_HISTORY);
  CHECK(strcmp(s, "a/b") == 0 && strcmp(c, "c d") == 0);
  static const char *const missing[] = {"/api/history/S",
                                        "/api/history/S/",
                                        "/api/history//C",
                                        "/api/history/S/C/",
                                        "/api/history/S/C/D",
                                        "/api/streams/",
                                        "/api",
                                        "/API/streams",
                                        "",
                                        "/healthz/x",
                                        "/api/history",
                                        "/api/history/"};
  for (size_t i = 0; i < sizeof(missing) / sizeof(missing[0]); i++)
    CHECK(nl_route_parse(missing[i], s, c, sizeof(s)) == NL_ROUTE_NOT_FOUND);
  CHECK(nl_route_parse("/api/history/%00/C", s, c, sizeof(s)) ==
        NL_ROUTE_BAD_NAME);
  CHECK(nl_route_parse("/api/history/S/%zz", s, c, sizeof(s)) ==
        NL_ROUTE_BAD_NAME);
  CHECK(nl_route_parse("/api/history/0123456789abcdefXYZ/C", s, c, sizeof(s)) ==
        NL_ROUTE_BAD_NAME);
}

static const nl_test_case tests[] = {
    NL_TEST(test_view_violations), NL_TEST(test_view_violations_stream_level),
    NL_TEST(test_view_streams),    NL_TEST(test_view_accounts_merged),
    NL_TEST(test_view_history),    NL_TEST(test_view_health_words),
    NL_TEST(test_route_decode),    NL_TEST(test_route_parse),
};

NL_TEST_MAIN(tests)
