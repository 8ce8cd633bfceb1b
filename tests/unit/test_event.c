/* test_event.c: health event JSON, subjects and the publishing policy. */
#include "core/report/nl_event.h"
#include "core/report/nl_health.h"
#include "nl_test.h"

#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* A NAK_STORM finding with whole, fractional and non-finite evidence. */
static void sample_finding(nl_finding *f) {
  memset(f, 0, sizeof(*f));
  f->cls = NL_NAK_STORM;
  f->severity = NL_SEVERITY_WARNING;
  f->since_ns = 1700000000LL * SEC + 250000000;
  nl_finding_add(f, "redeliveries", 12);
  nl_finding_add(f, "redeliveries_per_s", 5.5);
  nl_finding_add(f, "expiry_bound_per_s", NAN);
  nl_finding_add(f, "recommended_max_deliver", 5);
  snprintf(f->description, sizeof(f->description), "NAKed in a \"loop\"");
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer edit ORDERS proc --max-deliver 5");
  snprintf(f->recommendation, sizeof(f->recommendation), "max_deliver 5");
}

static const char *str_field(struct json_object *o, const char *key) {
  struct json_object *v = NULL;
  if (!json_object_object_get_ex(o, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return "";
  return json_object_get_string(v);
}

static bool is_null(struct json_object *o, const char *key) {
  struct json_object *v = NULL;
  return json_object_object_get_ex(o, key, &v) && v == NULL;
}

static void test_event_firing_json_fields(void) {
  nl_finding f;
  sample_finding(&f);
  nl_event ev = {.instance = "prod",
                 .stream = "ORDERS",
                 .consumer = "proc",
                 .finding = &f,
                 .firing = true,
                 .at_ns = f.since_ns};
  size_t len = 0;
  char *text = nl_event_json(&ev, &len);
  CHECK(text != NULL);
  if (text == NULL)
    return;
  CHECK_EQ_U(len, strlen(text));
  CHECK(strchr(text, '\n') == NULL);
  struct json_object *o = json_tokener_parse(text);
  CHECK(o != NULL);
  CHECK(strcmp(str_field(o, "type"), "NAK_STORM") == 0);
  CHECK(strcmp(str_field(o, "state"), "firing") == 0);
  CHECK(strcmp(str_field(o, "severity"), "warning") == 0);
  CHECK(strcmp(str_field(o, "instance"), "prod") == 0);
  CHECK(strcmp(str_field(o, "stream_name"), "ORDERS") == 0);
  CHECK(strcmp(str_field(o, "consumer_name"), "proc") == 0);
  CHECK(strcmp(str_field(o, "description"), "NAKed in a \"loop\"") == 0);
  CHECK(strcmp(str_field(o, "detected_at"), "2023-11-14T22:13:20.250Z") == 0);
  CHECK(strcmp(str_field(o, "firing_since"), "2023-11-14T22:13:20.250Z") == 0);
  CHECK(is_null(o, "reason"));
  struct json_object *v = NULL, *n = NULL;
  CHECK(json_object_object_get_ex(o, "violation", &v));
  CHECK(strcmp(str_field(v, "type"), "NAK_STORM") == 0);
  CHECK(strcmp(str_field(v, "fix_command"),
               "nats consumer edit ORDERS proc --max-deliver 5") == 0);
  CHECK(strcmp(str_field(v, "recommendation"), "max_deliver 5") == 0);
  CHECK(json_object_object_get_ex(v, "redeliveries", &n) &&
        json_object_is_type(n, json_type_int) && json_object_get_int(n) == 12);
  CHECK(json_object_object_get_ex(v, "redeliveries_per_s", &n) &&
        json_object_is_type(n, json_type_double) &&
        json_object_get_double(n) == 5.5);
  CHECK(json_object_object_get_ex(v, "recommended_max_deliver", &n) &&
        json_object_get_int(n) == 5);
  /* NaN is not JSON: it must come out as null. */
  CHECK(is_null(v, "expiry_bound_per_s"));
  CHECK(strstr(text, "NaN") == NULL && strstr(text, "nan") == NULL);
  json_object_put(o);
  free(text);
}

static void test_event_resolved_json(void) {
  nl_finding f;
  sample_finding(&f);
  nl_event ev = {.instance = "prod",
                 .stream = "ORDERS",
                 .consumer = "proc",
                 .finding = &f,
                 .firing = false,
                 .reason = "consumer deleted",
                 .at_ns = f.since_ns + 90 * SEC};
  char *text = nl_event_json(&ev, NULL);
  struct json_object *o = text ? json_tokener_parse(text) : NULL;
  CHECK(o != NULL);
  CHECK(strcmp(str_field(o, "state"), "resolved") == 0);
  CHECK(strcmp(str_field(o, "reason"), "consumer deleted") == 0);
  CHECK(strcmp(str_field(o, "detected_at"), "2023-11-14T22:14:50.250Z") == 0);
  CHECK(strcmp(str_field(o, "firing_since"), "2023-11-14T22:13:20.250Z") == 0);
  json_object_put(o);
  free(text);
}

static void test_event_names_not_utf8_stay_valid_json(void) {
  nl_finding f;
  sample_finding(&f);
  nl_event ev = {.instance = "i",
                 .stream = "bad\xff\xfe",
                 .consumer = "caf\xc3\xa9",
                 .finding = &f,
                 .firing = true,
                 .at_ns = 1};
  char *text = nl_event_json(&ev, NULL);
  struct json_tokener *tok = json_tokener_new();
  json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
  struct json_object *o =
      text ? json_tokener_parse_ex(tok, text, (int)strlen(text)) : NULL;
  CHECK(o != NULL);
  CHECK(strcmp(str_field(o, "stream_name"), "bad??") == 0);
  CHECK(strcmp(str_field(o, "consumer_name"), "caf\xc3\xa9") == 0);
  json_object_put(o);
  json_tokener_free(tok);
  free(text);
}

/* Counts the tokens of a subject and checks none is a wildcard or empty. */
static int subject_tokens(const char *subject) {
  int n = 0;
  const char *p = subject;
  for (;;) {
    const char *dot = strchr(p, '.');
    size_t len = dot ? (size_t)(dot - p) : strlen(p);
    if (len == 0 || (len == 1 && (*p == '*' || *p == '>')))
      return -1;
    for (size_t i = 0; i < len; i++)
      if ((unsigned char)p[i] <= ' ')
        return -1;
    n++;
    if (dot == NULL)
      return n;
    p = dot + 1;
  }
}

static void test_event_subjects(void) {
  char s[NL_EVENT_SUBJECT_MAX], s2[NL_EVENT_SUBJECT_MAX];
  CHECK(nl_event_subject("nats.lens.health", "ORDERS", "proc", s, sizeof(s)) ==
        0);
  CHECK(strcmp(s, "nats.lens.health.violations.ORDERS.proc") == 0);
  CHECK(nl_event_summary_subject("nats.lens.health", s, sizeof(s)) == 0);
  CHECK(strcmp(s, "nats.lens.health.summary") == 0);

  /* Names that cannot be one token are replaced, never wildcards. */
  static const char *const hostile[] = {"a.b", "*",    ">",  "a b",
                                        "",    "x\ty", "a.>"};
  for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
    CHECK(nl_event_subject("p", hostile[i], hostile[i], s, sizeof(s)) == 0);
    CHECK(subject_tokens(s) == 4);
    CHECK(strncmp(s, "p.violations.", 13) == 0);
    /* Deterministic. */
    CHECK(nl_event_subject("p", hostile[i], hostile[i], s2, sizeof(s2)) == 0);
    CHECK(strcmp(s, s2) == 0);
  }
  /* "a.b" and "a_b" must not share a subject. */
  CHECK(nl_event_subject("p", "a.b", "c", s, sizeof(s)) == 0);
  CHECK(nl_event_subject("p", "a_b", "c", s2, sizeof(s2)) == 0);
  CHECK(strcmp(s, s2) != 0);
  CHECK(strcmp(s2, "p.violations.a_b.c") == 0);
  CHECK(strcmp(s, "p.violations.a_b~108bf50c.c") == 0); /* As documented. */
  /* A stream-level finding (no consumer) has the consumer token "-". */
  CHECK(nl_event_subject("p", "IN", "", s, sizeof(s)) == 0);
  CHECK(strcmp(s, "p.violations.IN.-") == 0);
  /* A very long name is cut to a bounded token. */
  char longname[2000];
  memset(longname, 'x', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  CHECK(nl_event_subject("p", longname, "c", s, sizeof(s)) == 0);
  CHECK(strlen(s) < NL_EVENT_SUBJECT_MAX);
  CHECK(subject_tokens(s) == 4);
  /* A bad prefix or a small buffer fails. */
  CHECK(nl_event_subject("p.*", "a", "b", s, sizeof(s)) == -1);
  CHECK(nl_event_subject("p", "a", "b", s, 8) == -1);
}

static void test_event_prefix_valid(void) {
  CHECK(nl_event_prefix_valid("nats.lens.health"));
  CHECK(nl_event_prefix_valid("a"));
  CHECK(nl_event_prefix_valid("team-1.lens_x"));
  static const char *const bad[] = {"",     ".a",  "a.",   "a..b",
                                    "a.*",  "a.>", "a b",  "a.*.b",
                                    "a\tb", ">",   "x.>.y"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    CHECK(!nl_event_prefix_valid(bad[i]));
  char longp[NL_EVENT_PREFIX_MAX + 2];
  memset(longp, 'a', sizeof(longp) - 1);
  longp[sizeof(longp) - 1] = '\0';
  CHECK(!nl_event_prefix_valid(longp));
  longp[NL_EVENT_PREFIX_MAX] = '\0';
  CHECK(nl_event_prefix_valid(longp));
}

static void test_event_summary_json(void) {
  nl_event_summary sum = {.instance = "prod",
                          .at_ns = 1700000000LL * SEC,
                          .consumers = 7,
                          .streams = 3};
  sum.active[NL_SEQUENCE_GAP] = 2;
  sum.active[NL_NAK_STORM] = 1;
  char *text = nl_event_summary_json(&sum, NULL);
  struct json_object *o = text ? json_tokener_parse(text) : NULL, *v, *a;
  CHECK(o != NULL);
  CHECK(strcmp(str_field(o, "type"), "summary") == 0);
  CHECK(strcmp(str_field(o, "instance"), "prod") == 0);
  CHECK(strcmp(str_field(o, "at"), "2023-11-14T22:13:20.000Z") == 0);
  CHECK(json_object_object_get_ex(o, "consumers_watched", &v) &&
        json_object_get_int(v) == 7);
  CHECK(json_object_object_get_ex(o, "streams", &v) &&
        json_object_get_int(v) == 3);
  CHECK(json_object_object_get_ex(o, "active_total", &v) &&
        json_object_get_int(v) == 3);
  CHECK(json_object_object_get_ex(o, "active", &a));
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    CHECK(json_object_object_get_ex(a, nl_class_name(cls), &v) &&
          json_object_get_int(v) == (int)sum.active[cls]);
  json_object_put(o);
  free(text);
}

/* A publish function that records what it was given. */
typedef struct {
  int calls;
  bool fail;
  char subject[NL_EVENT_SUBJECT_MAX];
  char data[4096];
} fake_bus;

static int fake_publish(void *ctx, const char *subject, const char *data,
                        size_t len, char *err, size_t errlen) {
  fake_bus *b = ctx;
  b->calls++;
  if (b->fail) {
    snprintf(err, errlen, "not connected");
    return -1;
  }
  snprintf(b->subject, sizeof(b->subject), "%s", subject);
  snprintf(b->data, sizeof(b->data), "%.*s", (int)len, data);
  return 0;
}

static void test_health_transition_policy(void) {
  nl_health h;
  nl_health_init(&h);
  CHECK(h.enabled);
  CHECK(strcmp(h.prefix, "nats.lens.health") == 0);
  nl_finding f;
  sample_finding(&f);
  nl_event ev = {.instance = "i",
                 .stream = "S",
                 .consumer = "C",
                 .finding = &f,
                 .firing = true,
                 .at_ns = 1};
  fake_bus bus = {0};
  char err[128];
  CHECK(nl_health_transition(&h, fake_publish, &bus, &ev, err, sizeof(err)) ==
        0);
  CHECK_EQ_U(bus.calls, 1);
  CHECK(strcmp(bus.subject, "nats.lens.health.violations.S.C") == 0);
  CHECK(strstr(bus.data, "\"state\":\"firing\"") != NULL);

  CHECK(nl_health_set_prefix(&h, "ops.lens") == 0);
  CHECK(nl_health_set_prefix(&h, "ops.>") == -1);
  CHECK(strcmp(h.prefix, "ops.lens") == 0);
  nl_health_transition(&h, fake_publish, &bus, &ev, err, sizeof(err));
  CHECK(strcmp(bus.subject, "ops.lens.violations.S.C") == 0);

  bus.fail = true;
  CHECK(nl_health_transition(&h, fake_publish, &bus, &ev, err, sizeof(err)) ==
        -1);
  CHECK_EQ_U(h.failed, 1);
  CHECK_EQ_U(h.published, 2);

  h.enabled = false;
  int before = bus.calls;
  CHECK(nl_health_transition(&h, fake_publish, &bus, &ev, err, sizeof(err)) ==
        0);
  CHECK_EQ_U(bus.calls, before);
}

static void test_health_summary_schedule(void) {
  nl_detect_params p;
  nl_detect_params_default(&p);
  nl_engine *e = nl_engine_create(&p);
  nl_health h;
  nl_health_init(&h);
  fake_bus bus = {0};
  char err[128];
  int64_t t = 1700000000LL * SEC;
  /* Off by default. */
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 0, t, err,
                          sizeof(err)) == 0);
  CHECK_EQ_U(bus.calls, 0);
  h.summary_interval_ns = 10 * SEC;
  /* The first is due at once, the next after one interval (less jitter). */
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 2, t, err,
                          sizeof(err)) == 1);
  CHECK(strcmp(bus.subject, "nats.lens.health.summary") == 0);
  CHECK(strstr(bus.data, "\"streams\":2") != NULL);
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 2, t + 5 * SEC, err,
                          sizeof(err)) == 0);
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 2,
                          t + 10 * SEC - 3000000, err, sizeof(err)) == 1);
  CHECK_EQ_U(bus.calls, 2);
  /* A failed summary is retried on the next call. */
  bus.fail = true;
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 2, t + 20 * SEC, err,
                          sizeof(err)) == -1);
  bus.fail = false;
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 2, t + 21 * SEC, err,
                          sizeof(err)) == 1);
  /* Events off turns summaries off too. */
  h.enabled = false;
  CHECK(nl_health_summary(&h, fake_publish, &bus, e, "i", 2, t + 60 * SEC, err,
                          sizeof(err)) == 0);
  nl_engine_free(e);
}

/* An agent's events (Scope "server"): the server named, an onset after a
 * leader move marked takeover, and a handover is its own state, never
 * "resolved". */
static void test_event_agent_fields(void) {
  nl_finding f;
  sample_finding(&f);
  nl_event ev = {.instance = "prod",
                 .server = "n2",
                 .stream = "ORDERS",
                 .consumer = "proc",
                 .finding = &f,
                 .firing = true,
                 .takeover = true,
                 .at_ns = f.since_ns};
  char *text = nl_event_json(&ev, NULL);
  struct json_object *o = text ? json_tokener_parse(text) : NULL, *b = NULL;
  CHECK(o != NULL);
  CHECK(strcmp(str_field(o, "server"), "n2") == 0);
  CHECK(json_object_object_get_ex(o, "takeover", &b) &&
        json_object_get_boolean(b));
  json_object_put(o);
  free(text);
  ev.firing = ev.takeover = false;
  ev.handed_over = true;
  ev.reason = "led by another server";
  text = nl_event_json(&ev, NULL);
  o = text ? json_tokener_parse(text) : NULL;
  CHECK(o != NULL);
  CHECK(strcmp(str_field(o, "state"), "handed_over") == 0);
  CHECK(!json_object_object_get_ex(o, "takeover", &b));
  json_object_put(o);
  free(text);
}

static const nl_test_case tests[] = {
    NL_TEST(test_event_firing_json_fields),
    NL_TEST(test_event_resolved_json),
    NL_TEST(test_event_names_not_utf8_stay_valid_json),
    NL_TEST(test_event_subjects),
    NL_TEST(test_event_prefix_valid),
    NL_TEST(test_event_summary_json),
    NL_TEST(test_health_transition_policy),
    NL_TEST(test_health_summary_schedule),
    NL_TEST(test_event_agent_fields),
};

NL_TEST_MAIN(tests)
