/* test_hostile.c: hostile and broken server replies.
 *
 * Every reply here is one a broken, buggy or malicious server (or anything
 * answering on its subjects) could send. Each must give a result or a clear
 * error, and what is parsed must then pass through the history and the
 * detectors without a crash or undefined behaviour; `make test SANITIZE=1`
 * runs these under ASan and UBSan. */
#include "core/model/nl_parse.h"
#include "core/nl_engine.h"
#include "nl_fixture.h"
#include "nl_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* A page of $JS.API.CONSUMER.LIST for stream "S" holding the given items. */
static char *consumer_page(const char *items) {
  size_t n = strlen(items) + 128;
  char *json = malloc(n);
  snprintf(json, n,
           "{\"total\":1,\"offset\":0,\"limit\":256,\"consumers\":[%s]}",
           items);
  return json;
}

/* Parses one consumer page for a stream "S" into set (which gets the
 * stream). Returns the parse code. */
static int parse_consumers(const char *json, nl_snapshot_set *set,
                           nl_page_info *page, char *err) {
  nl_stream_snap *s = nl_snapshot_set_add_stream(set);
  s->name = strdup("S");
  s->first_seq = 1;
  s->last_seq = 1000;
  return nl_parse_consumer_list(json, strlen(json), 0, set, page, err, 256);
}

/* One consumer item with the given config, delivered and ack_floor members
 * and extra top-level members (JSON text, without braces). */
static char *consumer_item(const char *name_json, const char *config,
                           const char *delivered, const char *floor,
                           const char *extra) {
  char *item = malloc(8192);
  snprintf(item, 8192,
           "{\"stream_name\":\"S\",\"name\":%s,"
           "\"created\":\"2026-11-29T21:40:01Z\",\"config\":{%s},"
           "\"delivered\":{%s},\"ack_floor\":{%s}%s%s}",
           name_json, config, delivered, floor, extra[0] ? "," : "", extra);
  return item;
}

static void test_hostile_truncated_replies(void) {
  /* Every proper prefix of a real reply is malformed JSON: an error with a
   * reason, never a partial success or a crash. */
  size_t len;
  char *full = nl_test_read_fixture("stream_list.json", &len);
  CHECK(full != NULL);
  if (full == NULL)
    return;
  size_t bad = 0, truncated = 0;
  for (size_t cut = 0; cut < len; cut += 7) {
    char *copy = malloc(cut + 1);
    memcpy(copy, full, cut);
    nl_snapshot_set set = {0};
    nl_page_info page;
    char err[256] = "";
    int rc = nl_parse_stream_list(copy, cut, &set, &page, err, sizeof(err));
    if (rc != NL_PARSE_BAD_JSON || err[0] == '\0' ||
        strstr(err, "continue") != NULL)
      bad++;
    if (cut > 0 && strncmp(err, "truncated JSON", 14) != 0 &&
        strncmp(err, "malformed JSON", 14) != 0)
      bad++;
    truncated += strncmp(err, "truncated JSON", 14) == 0;
    nl_snapshot_set_clear(&set);
    free(copy);
  }
  CHECK_EQ_U(bad, 0);
  CHECK(truncated > 0); /* Cut inside a value, said so. */
  free(full);
}

static void test_hostile_wrong_types(void) {
  /* Objects where numbers belong, strings for numbers, arrays for objects,
   * null everywhere: the item is skipped or read with defaults. */
  const char *items =
      "{\"name\":[\"x\"],\"config\":{},\"delivered\":{},\"ack_floor\":{}},"
      "{\"name\":\"c1\",\"config\":[],\"delivered\":{},\"ack_floor\":{}},"
      "{\"name\":\"c2\",\"config\":{},\"delivered\":null,\"ack_floor\":{}},"
      "{\"name\":\"c3\",\"config\":{\"ack_wait\":\"30s\",\"ack_policy\":7,"
      "\"backoff\":\"1s\",\"max_ack_pending\":{},\"filter_subject\":true,"
      "\"deliver_subject\":[1]},\"delivered\":{\"consumer_seq\":\"12\","
      "\"stream_seq\":12.5,\"last_active\":12},\"ack_floor\":{\"stream_seq\":"
      "true,\"last_active\":\"yesterday\"},\"num_pending\":\"lots\","
      "\"num_ack_pending\":null,\"push_bound\":\"yes\",\"created\":[]},"
      "null,true,\"c4\",[]";
  char *json = consumer_page(items);
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_consumers(json, &set, &page, err) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_consumers, 1);
  CHECK_EQ_U(page.n_skipped, 7);
  CHECK_EQ_U(set.unobservable, 7);
  if (set.n_consumers == 1) {
    nl_consumer_snap *c = &set.consumers[0];
    CHECK(strcmp(c->name, "c3") == 0);
    CHECK_EQ_U(c->ack_wait_ns, 0);
    CHECK(c->ack_policy == NL_ACK_EXPLICIT);
    CHECK(c->max_ack_pending == -1);
    CHECK(!c->filtered && !c->push && !c->push_bound);
    CHECK_EQ_U(c->delivered_consumer_seq, 0);
    CHECK_EQ_U(c->delivered_stream_seq, 0);
    CHECK_EQ_U(c->num_pending, 0);
    CHECK_EQ_U(c->created_ns, 0);
    CHECK_EQ_U(c->ack_last_ns, 0);
  }
  nl_snapshot_set_clear(&set);
  free(json);
  /* The paging members of the wrong type count as absent. */
  const char *page_json = "{\"total\":\"9\",\"offset\":-4,\"limit\":[],"
                          "\"consumers\":[]}";
  nl_snapshot_set set2 = {0};
  CHECK(parse_consumers(page_json, &set2, &page, err) == NL_PARSE_OK);
  CHECK_EQ_U(page.total, 0);
  CHECK_EQ_U(page.offset, 0);
  CHECK_EQ_U(page.limit, 0);
  nl_snapshot_set_clear(&set2);
}

static void test_hostile_numbers(void) {
  /* Huge, negative, fractional and out-of-range numbers. */
  char *item = consumer_item(
      "\"big\"",
      "\"ack_wait\":9223372036854775807,\"backoff\":[-5,1e300],"
      "\"max_deliver\":-9223372036854775808,\"max_ack_pending\":1e999",
      "\"consumer_seq\":18446744073709551616,\"stream_seq\":-1,"
      "\"last_active\":\"9999-12-31T23:59:59.999999999Z\"",
      "\"consumer_seq\":1.5,\"stream_seq\":99999999999999999999999999999,"
      "\"last_active\":\"0000-01-01T00:00:00Z\"",
      "\"num_pending\":-7,\"num_ack_pending\":9223372036854775807,"
      "\"num_redelivered\":18446744073709551615");
  char *json = consumer_page(item);
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  int rc = parse_consumers(json, &set, &page, err);
  CHECK(rc == NL_PARSE_OK || rc == NL_PARSE_BAD_JSON);
  if (rc == NL_PARSE_OK && set.n_consumers == 1) {
    nl_consumer_snap *c = &set.consumers[0];
    CHECK(c->ack_wait_ns == INT64_MAX);
    CHECK(c->backoff_first_ns == -5);
    CHECK_EQ_U(c->delivered_stream_seq, 0);
    CHECK_EQ_U(c->num_pending, 0);
    CHECK(c->ack_last_ns == 0);
    /* Past year 2262 a time does not fit int64 nanoseconds: unreadable. */
    CHECK(c->delivered_last_ns == 0);
    /* Delays are capped so that the detectors' arithmetic stays in range. */
    CHECK(nl_consumer_redelivery_delay_ns(c) <= NL_DURATION_MAX_NS);
  } else {
    CHECK(err[0] != '\0');
  }
  nl_snapshot_set_clear(&set);
  free(json);
  free(item);
}

/* Feeds the engine one consumer whose durations are at the limits of int64
 * through polls with redeliveries, acks and a pinned floor, so that every
 * detector's arithmetic runs on them. */
static void run_extreme_delays(int64_t ack_wait, int64_t backoff) {
  nl_detect_params p;
  nl_detect_params_default(&p);
  nl_engine *e = nl_engine_create(&p);
  nl_stream_snap s = {.name = "S",
                      .first_seq = 1,
                      .last_seq = 1000,
                      .max_msgs = -1,
                      .max_bytes = -1,
                      .consumers_complete = true};
  nl_consumer_snap c = {.stream = "S",
                        .name = "c",
                        .created_ns = 1,
                        .ack_wait_ns = ack_wait,
                        .backoff_first_ns = backoff,
                        .max_deliver = -1,
                        .max_ack_pending = 5};
  int64_t t = 1700000000LL * SEC;
  for (int i = 0; i < 40; i++, t += SEC) {
    c.delivered_stream_seq += 1;
    c.delivered_consumer_seq += 1 + (i % 3 == 0 ? 40 : 0);
    c.ack_last_ns = t - SEC / 2;
    c.num_ack_pending = 5;
    c.num_pending = 100;
    c.ack_floor_stream_seq = 3;
    nl_snapshot_set set = {
        .streams = &s, .n_streams = 1, .consumers = &c, .n_consumers = 1};
    nl_engine_apply(e, &set, t, NULL, NULL);
  }
  /* The polls reached the history and the detectors: 14 redeliveries of
   * the 40 polls counted, the consumer at its cap with messages waiting
   * raised, and every number of every finding finite. */
  nl_consumer_state *st = nl_registry_find(nl_engine_registry(e), "S", "c");
  CHECK(st != NULL && st->count > 0);
  CHECK(st != NULL && st->redelivered_total >= 13 * 40);
  CHECK(st != NULL && st->active[NL_MAX_PENDING_THROTTLE] != NULL);
  for (int cls = 0; st != NULL && cls < NL_CLASS_COUNT; cls++)
    for (int i = 0; st->active[cls] && i < st->active[cls]->n_evidence; i++)
      CHECK(isfinite(st->active[cls]->evidence[i].value));
  nl_engine_free(e);
}

static void test_hostile_extreme_durations(void) {
  run_extreme_delays(INT64_MAX, 0);
  run_extreme_delays(INT64_MAX, INT64_MAX);
  run_extreme_delays(INT64_MAX / 3, INT64_MAX / 5);
  run_extreme_delays(-1, -1);
  run_extreme_delays(INT64_MIN, INT64_MIN);
  run_extreme_delays(1, 1);
}

static void test_hostile_names(void) {
  /* UTF-8, characters illegal in NATS names, a name with an embedded NUL,
   * an empty name and one far too long. */
  char longname[NL_NAME_MAX + 20];
  memset(longname, 'x', sizeof(longname));
  longname[0] = '"';
  longname[sizeof(longname) - 2] = '"';
  longname[sizeof(longname) - 1] = '\0';
  const char *names[] = {
      "\"caf\\u00e9-\\u6f22\\ud83d\\ude00\"", /* valid UTF-8 */
      "\"a.b\"",                              /* dot, illegal in NATS */
      "\"*\"",
      "\">\"",
      "\"sp ace\\ttab\\nnl\"",
      "\"sl/ash\"",
      "\"nul\\u0000hidden\"", /* would alias "nul" if cut at the NUL */
      "\"\"",
      "\"\\udc00broken\"", /* lone surrogate */
      longname,
  };
  size_t n = sizeof(names) / sizeof(names[0]);
  char *items = calloc(1, n * 9000);
  for (size_t i = 0; i < n; i++) {
    char *item = consumer_item(names[i], "\"ack_wait\":30000000000",
                               "\"consumer_seq\":1,\"stream_seq\":1",
                               "\"consumer_seq\":1,\"stream_seq\":1", "");
    if (i > 0)
      strcat(items, ",");
    strcat(items, item);
    free(item);
  }
  char *json = consumer_page(items);
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_consumers(json, &set, &page, err) == NL_PARSE_OK);
  /* Empty, too long and NUL-bearing names are unreadable items. */
  CHECK_EQ_U(page.n_skipped, 3);
  CHECK_EQ_U(set.n_consumers, n - 3);
  for (size_t i = 0; i < set.n_consumers; i++) {
    CHECK(strlen(set.consumers[i].name) > 0);
    CHECK(strlen(set.consumers[i].name) <= NL_NAME_MAX);
    CHECK(strcmp(set.consumers[i].name, "nul") != 0);
  }
  /* The engine holds each as a distinct consumer. */
  nl_detect_params p;
  nl_detect_params_default(&p);
  nl_engine *e = nl_engine_create(&p);
  set.streams[0].consumers_complete = true;
  nl_engine_apply(e, &set, 1700000000LL * SEC, NULL, NULL);
  nl_engine_apply(e, &set, 1700000001LL * SEC, NULL, NULL);
  CHECK_EQ_U(nl_registry_size(nl_engine_registry(e)), set.n_consumers);
  nl_engine_free(e);
  nl_snapshot_set_clear(&set);
  free(json);
  free(items);
}

static void test_hostile_stream_names(void) {
  /* Stream names with a NUL or too long are skipped, like consumers. */
  const char *json = "{\"total\":3,\"streams\":["
                     "{\"config\":{\"name\":\"A\\u0000B\"},\"state\":{}},"
                     "{\"config\":{\"name\":\"a.b\"},\"state\":{}},"
                     "{\"config\":{\"name\":\"ok\"},\"state\":[]}]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(nl_parse_stream_list(json, strlen(json), &set, &page, err,
                             sizeof(err)) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 1);
  CHECK_EQ_U(page.n_skipped, 2);
  if (set.n_streams == 1)
    CHECK(strcmp(set.streams[0].name, "a.b") == 0);
  nl_snapshot_set_clear(&set);
}

static void test_hostile_deep_and_odd_json(void) {
  /* Deep nesting past json-c's depth limit, a top-level array, duplicate
   * keys, an error member of the wrong type, and a huge reply. */
  size_t depth = 5000;
  char *deep = malloc(2 * depth + 64);
  char *p = deep;
  p += sprintf(p, "{\"streams\":");
  for (size_t i = 0; i < depth; i++)
    *p++ = '[';
  for (size_t i = 0; i < depth; i++)
    *p++ = ']';
  strcpy(p, "}");
  const char *odd[] = {
      deep,
      "[{\"streams\":[]}]",
      "{\"streams\":[],\"streams\":7}",
      "{\"error\":\"boom\",\"streams\":[]}",
      "{\"error\":{\"code\":\"x\",\"description\":[]}}",
      "{\"streams\":[{\"config\":{\"name\":\"s\"},\"state\":{}}],\"total\":"
      "1e999}",
      "\xff\xfe{}",
  };
  for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
    nl_snapshot_set set = {0};
    nl_page_info page;
    char err[256] = "";
    int rc = nl_parse_stream_list(odd[i], strlen(odd[i]), &set, &page, err,
                                  sizeof(err));
    CHECK(rc == NL_PARSE_OK || err[0] != '\0');
    nl_snapshot_set_clear(&set);
  }
  free(deep);
  /* An API error whose description is huge is cut to one line. */
  size_t big = 100000;
  char *huge = malloc(big + 100);
  strcpy(huge, "{\"error\":{\"code\":503,\"description\":\"");
  memset(huge + strlen(huge), 'd', big);
  strcpy(huge + strlen("{\"error\":{\"code\":503,\"description\":\"") + big,
         "\"}}");
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256] = "";
  int rc =
      nl_parse_stream_list(huge, strlen(huge), &set, &page, err, sizeof(err));
  CHECK(rc == NL_PARSE_API_ERROR);
  CHECK(strstr(err, "503") != NULL);
  CHECK(strlen(err) < sizeof(err));
  nl_snapshot_set_clear(&set);
  free(huge);
}

static const nl_test_case tests[] = {
    NL_TEST(test_hostile_truncated_replies),
    NL_TEST(test_hostile_wrong_types),
    NL_TEST(test_hostile_numbers),
    NL_TEST(test_hostile_extreme_durations),
    NL_TEST(test_hostile_names),
    NL_TEST(test_hostile_stream_names),
    NL_TEST(test_hostile_deep_and_odd_json),
};

NL_TEST_MAIN(tests)
