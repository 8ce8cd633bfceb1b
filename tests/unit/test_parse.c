/* test_parse.c: JSON replies to snapshots, on inline and recorded replies. */
#include "core/model/nl_parse.h"
#include "nl_fixture.h"
#include "nl_test.h"

#include <stdlib.h>
#include <string.h>

static int parse_streams(const char *json, nl_snapshot_set *set,
                         nl_page_info *page, char *err) {
  return nl_parse_stream_list(json, strlen(json), set, page, err, 256);
}

static void test_parse_stream_list_inline(void) {
  const char *json =
      "{\"type\":\"io.nats.jetstream.api.v1.stream_list_response\","
      "\"total\":2,\"offset\":0,\"limit\":256,\"streams\":["
      "{\"config\":{\"name\":\"ORDERS\",\"retention\":\"workqueue\","
      "\"max_msgs\":100,\"max_bytes\":-1,\"max_age\":60000000000,"
      "\"discard\":\"new\",\"num_replicas\":3},"
      "\"state\":{\"messages\":5,\"bytes\":500,\"first_seq\":7,"
      "\"last_seq\":11,\"consumer_count\":2}},"
      "{\"config\":{\"name\":\"B\"},\"state\":{}}]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_streams(json, &set, &page, err) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 2);
  CHECK_EQ_U(page.total, 2);
  CHECK_EQ_U(page.limit, 256);
  nl_stream_snap *s = &set.streams[0];
  CHECK(strcmp(s->name, "ORDERS") == 0);
  CHECK(s->retention == NL_RETENTION_WORKQUEUE);
  CHECK(s->discard_new);
  CHECK_EQ_U(s->max_msgs, 100);
  CHECK(s->max_bytes == -1);
  CHECK_EQ_U(s->max_age_ns, 60000000000ULL);
  CHECK_EQ_U(s->replicas, 3);
  CHECK_EQ_U(s->first_seq, 7);
  CHECK_EQ_U(s->last_seq, 11);
  CHECK_EQ_U(s->consumer_count, 2);
  CHECK(set.streams[1].retention == NL_RETENTION_LIMITS);
  nl_snapshot_set_clear(&set);
}

static void test_parse_api_error(void) {
  const char *json = "{\"type\":\"io.nats.jetstream.api.v1.consumer_list_"
                     "response\",\"error\":{\"code\":404,\"err_code\":10059,"
                     "\"description\":\"stream not found\"}}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_streams(json, &set, &page, err) == NL_PARSE_API_ERROR);
  CHECK(strstr(err, "404") != NULL);
  CHECK(strstr(err, "stream not found") != NULL);
  nl_snapshot_set_clear(&set);
}

static void test_parse_malformed_replies(void) {
  static const char *const bad[] = {
      "",
      "{",
      "[]",
      "null",
      "\"streams\"",
      "{\"streams\":{}}",
      "{\"streams\":[1,2]} trailing",
      "{\"total\":1}",
      "{\"streams\":[{\"config\":{\"name\":5},\"state\":{}}]}x",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    nl_snapshot_set set = {0};
    nl_page_info page;
    char err[256] = "";
    int rc = parse_streams(bad[i], &set, &page, err);
    CHECK(rc == NL_PARSE_BAD_JSON);
    CHECK(err[0] != '\0');
    nl_snapshot_set_clear(&set);
  }
}

static void test_parse_hostile_items_are_skipped(void) {
  /* Wrong types, negative and huge numbers, a missing name, and a name far
   * longer than any NATS name: items are skipped or read safely. */
  char *json = malloc(8192);
  char longname[3000];
  memset(longname, 'x', sizeof(longname) - 1);
  longname[sizeof(longname) - 1] = '\0';
  snprintf(json, 8192,
           "{\"total\":5,\"offset\":0,\"limit\":256,\"streams\":["
           "{\"config\":{\"name\":\"%s\"},\"state\":{}},"
           "{\"config\":{},\"state\":{}},"
           "{\"config\":{\"name\":\"neg\",\"max_msgs\":\"many\"},"
           "\"state\":{\"messages\":-5,\"first_seq\":1e400,"
           "\"last_seq\":99999999999999999999999}},"
           "{\"config\":{\"name\":\"utf8-\\u00e9\\u6f22\"},\"state\":{}},"
           "17]}",
           longname);
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  int rc = parse_streams(json, &set, &page, err);
  CHECK(rc == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 2);
  CHECK_EQ_U(page.n_skipped, 3);
  if (set.n_streams == 2) {
    CHECK(strcmp(set.streams[0].name, "neg") == 0);
    CHECK_EQ_U(set.streams[0].msgs, 0);
    CHECK(set.streams[0].max_msgs == -1);
    CHECK(strcmp(set.streams[1].name, "utf8-\xc3\xa9\xe6\xbc\xa2") == 0);
  }
  nl_snapshot_set_clear(&set);
  free(json);
}

static void test_parse_consumer_list_inline(void) {
  const char *streams = "{\"total\":1,\"offset\":0,\"limit\":256,\"streams\":"
                        "[{\"config\":{\"name\":\"S\"},\"state\":{}}]}";
  const char *json =
      "{\"total\":3,\"offset\":0,\"limit\":256,\"missing\":[\"gone\"],"
      "\"consumers\":[{\"stream_name\":\"S\",\"name\":\"c1\","
      "\"created\":\"2026-11-29T21:40:01.5Z\",\"config\":{\"durable_name\":"
      "\"c1\",\"ack_policy\":\"all\",\"ack_wait\":2000000000,\"backoff\":"
      "[500000000,4000000000],\"max_deliver\":5,\"max_ack_pending\":7,"
      "\"filter_subject\":\"s.a\",\"deliver_subject\":\"push.x\","
      "\"deliver_group\":\"g\"},\"delivered\":{\"consumer_seq\":12,"
      "\"stream_seq\":10,\"last_active\":\"2026-11-29T21:40:02Z\"},"
      "\"ack_floor\":{\"consumer_seq\":9,\"stream_seq\":8,\"last_active\":"
      "\"2026-11-29T21:40:03.000000001Z\"},\"num_ack_pending\":3,"
      "\"num_redelivered\":1,\"num_waiting\":0,\"num_pending\":4,"
      "\"push_bound\":true},"
      "{\"config\":{},\"delivered\":{},\"ack_floor\":{}}]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_streams(streams, &set, &page, err) == NL_PARSE_OK);
  CHECK(nl_parse_consumer_list(json, strlen(json), 0, &set, &page, err,
                               sizeof(err)) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_consumers, 1);
  CHECK_EQ_U(page.n_missing, 1);
  CHECK_EQ_U(page.n_skipped, 1);
  CHECK_EQ_U(set.unobservable, 2);
  nl_consumer_snap *c = &set.consumers[0];
  CHECK(strcmp(c->stream, "S") == 0 && strcmp(c->name, "c1") == 0);
  CHECK(c->ack_policy == NL_ACK_ALL);
  CHECK_EQ_U(c->ack_wait_ns, 2000000000ULL);
  CHECK_EQ_U(c->backoff_first_ns, 500000000ULL);
  CHECK_EQ_U(nl_consumer_redelivery_delay_ns(c), 500000000ULL);
  CHECK_EQ_U(c->max_deliver, 5);
  CHECK_EQ_U(c->max_ack_pending, 7);
  CHECK(c->filtered && c->push && c->push_bound && c->has_deliver_group);
  CHECK(c->durable);
  CHECK(!c->deliver_all); /* No deliver_policy: not known to start at first. */
  CHECK_EQ_U(c->delivered_consumer_seq, 12);
  CHECK_EQ_U(c->delivered_stream_seq, 10);
  CHECK_EQ_U(c->ack_floor_stream_seq, 8);
  CHECK_EQ_U(c->ack_last_ns, 1795988403000000001ULL);
  CHECK_EQ_U(c->created_ns, 1795988401500000000ULL);
  CHECK_EQ_U(c->num_ack_pending, 3);
  CHECK_EQ_U(c->num_pending, 4);
  nl_snapshot_set_clear(&set);
}

static void test_parse_rfc3339(void) {
  int64_t ns = -1;
  CHECK(nl_parse_rfc3339("1970-01-01T00:00:01Z", &ns) == 0 && ns == 1000000000);
  CHECK(nl_parse_rfc3339("1970-01-01T01:00:01+01:00", &ns) == 0 &&
        ns == 1000000000);
  CHECK(nl_parse_rfc3339("0001-01-01T00:00:00Z", &ns) == 0 && ns == 0);
  CHECK(nl_parse_rfc3339("2026-11-29T21:40:01.123456789123Z", &ns) == 0 &&
        ns % 1000000000 == 123456789);
  CHECK(nl_parse_rfc3339("2026-11-29", &ns) == -1);
  CHECK(nl_parse_rfc3339("2026-13-29T21:40:01Z", &ns) == -1);
  CHECK(nl_parse_rfc3339("2026-11-29T21:40:01.Z", &ns) == -1);
  CHECK(nl_parse_rfc3339("2026-11-29T21:40:01Zjunk", &ns) == -1);
  CHECK(nl_parse_rfc3339(NULL, &ns) == -1);
}

/* Parses a recorded STREAM.LIST then a recorded CONSUMER.LIST page of the
 * first stream named in want_stream. */
static void test_parse_recorded_fixtures(void) {
  size_t len;
  char *sl = nl_test_read_fixture("stream_list.json", &len);
  CHECK(sl != NULL);
  if (sl == NULL)
    return;
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(nl_parse_stream_list(sl, len, &set, &page, err, sizeof(err)) ==
        NL_PARSE_OK);
  CHECK(set.n_streams >= 3);
  CHECK_EQ_U(page.n_skipped, 0);
  bool interest = false, workqueue = false;
  for (size_t i = 0; i < set.n_streams; i++) {
    interest |= set.streams[i].retention == NL_RETENTION_INTEREST;
    workqueue |= set.streams[i].retention == NL_RETENTION_WORKQUEUE;
    CHECK(set.streams[i].last_seq + 1 >= set.streams[i].first_seq);
  }
  CHECK(interest && workqueue);
  free(sl);
  char *cl = nl_test_read_fixture("consumer_list.json", &len);
  CHECK(cl != NULL);
  if (cl != NULL) {
    CHECK(nl_parse_consumer_list(cl, len, 0, &set, &page, err, sizeof(err)) ==
          NL_PARSE_OK);
    CHECK(set.n_consumers >= 4);
    CHECK_EQ_U(page.n_skipped, 0);
    bool push = false, none = false, acked = false;
    for (size_t i = 0; i < set.n_consumers; i++) {
      push |= set.consumers[i].push;
      none |= set.consumers[i].ack_policy == NL_ACK_NONE;
      acked |= set.consumers[i].ack_last_ns > 0;
      CHECK(set.consumers[i].ack_policy == NL_ACK_NONE ||
            set.consumers[i].ack_wait_ns > 0);
    }
    CHECK(push && none && acked);
    free(cl);
  }
  char *e = nl_test_read_fixture("api_error_no_stream.json", &len);
  CHECK(e != NULL);
  if (e != NULL) {
    CHECK(nl_parse_consumer_list(e, len, 0, &set, &page, err, sizeof(err)) ==
          NL_PARSE_API_ERROR);
    free(e);
  }
  nl_snapshot_set_clear(&set);
}

/* The reply of a clustered 2.9.10 STREAM.LIST while the only server of the
 * R1 stream UO is down (recorded): no items, UO in "missing". Names that
 * are not strings are skipped. */
static void test_parse_stream_list_missing(void) {
  const char *json =
      "{\"type\":\"io.nats.jetstream.api.v1.stream_list_response\","
      "\"total\":1,\"offset\":0,\"limit\":256,\"streams\":[],"
      "\"missing\":[\"UO\",7,\"\"]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_streams(json, &set, &page, err) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 0);
  CHECK_EQ_U(set.n_missing_streams, 1);
  CHECK_EQ_U(page.n_missing, 3);
  CHECK_EQ_U(page.n_skipped, 2);
  CHECK(nl_snapshot_set_is_missing(&set, "UO"));
  CHECK(!nl_snapshot_set_is_missing(&set, "U"));
  nl_snapshot_set_clear(&set);
}

/* The cluster object of a 2.9.10 STREAM.LIST item while n2 is down and
 * 500 messages behind (recorded on a 3-node cluster, shortened), and of a
 * leaderless one; entries without a name, or past NL_REPLICAS_MAX, are
 * dropped and counted; a long or unprintable name is cut or masked. */
static void test_parse_replicas(void) {
  const char *json =
      "{\"type\":\"io.nats.jetstream.api.v1.stream_list_response\","
      "\"total\":3,\"offset\":0,\"limit\":256,\"streams\":["
      "{\"config\":{\"name\":\"R\",\"num_replicas\":3},\"state\":{},"
      "\"cluster\":{\"name\":\"NL\",\"leader\":\"n1\",\"replicas\":["
      "{\"name\":\"n2\",\"current\":false,\"active\":20373473912,"
      "\"lag\":500,\"peer\":\"44jzkV9D\"},"
      "{\"name\":\"n3\",\"current\":true,\"offline\":true,"
      "\"active\":-5,\"peer\":\"BXScrY9i\"},{\"current\":true},7]}},"
      "{\"config\":{\"name\":\"L\"},\"state\":{},"
      "\"cluster\":{\"name\":\"NL\",\"replicas\":["
      "{\"name\":\"a\\u0001b\"},{\"name\":\"2\"},{\"name\":\"3\"},"
      "{\"name\":\"4\"},{\"name\":\"5\"},{\"name\":\"6\"},"
      "{\"name\":\"7\"},{\"name\":\"8\"},{\"name\":\"9\"}]}},"
      "{\"config\":{\"name\":\"U\"},\"state\":{}}]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(parse_streams(json, &set, &page, err) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 3);
  if (set.n_streams == 3) {
    const nl_replica_set *g = &set.streams[0].group;
    CHECK(g->clustered && !g->no_leader && !set.streams[0].no_leader);
    CHECK_EQ_U(g->n, 2);
    CHECK_EQ_U(g->dropped, 2);
    CHECK(strcmp(g->peers[0].name, "n2") == 0);
    CHECK(!g->peers[0].current && !g->peers[0].offline);
    CHECK_EQ_U(g->peers[0].active_ns, 20373473912LL);
    CHECK_EQ_U(g->peers[0].lag, 500);
    CHECK(g->peers[1].current && g->peers[1].offline);
    CHECK(g->peers[1].active_ns == -1);
    CHECK_EQ_U(g->peers[1].lag, 0);
    g = &set.streams[1].group;
    CHECK(g->clustered && g->no_leader && set.streams[1].no_leader);
    CHECK_EQ_U(g->n, NL_REPLICAS_MAX);
    CHECK_EQ_U(g->dropped, 1);
    CHECK(strcmp(g->peers[0].name, "a?b") == 0);
    CHECK(!set.streams[2].group.clustered && set.streams[2].group.n == 0);
  }
  nl_snapshot_set_clear(&set);
}

static const nl_test_case tests[] = {
    NL_TEST(test_parse_stream_list_inline),
    NL_TEST(test_parse_api_error),
    NL_TEST(test_parse_malformed_replies),
    NL_TEST(test_parse_hostile_items_are_skipped),
    NL_TEST(test_parse_consumer_list_inline),
    NL_TEST(test_parse_rfc3339),
    NL_TEST(test_parse_recorded_fixtures),
    NL_TEST(test_parse_stream_list_missing),
    NL_TEST(test_parse_replicas),
};

NL_TEST_MAIN(tests)
