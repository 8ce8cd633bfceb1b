/* test_expect.c: declared expectations (durations, --expect specs, their
 * application to a snapshot set) and the audit fields the parser adds
 * (stream subjects and cluster, push heartbeat, backoff steps, metadata). */
#include "core/model/nl_expect.h"
#include "core/model/nl_parse.h"
#include "nl_test.h"

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

static void test_expect_durations(void) {
  static const struct {
    const char *text;
    int64_t ns;
  } good[] = {
      {"30", 30 * SEC},
      {"2.5", 2500000000LL},
      {"30s", 30 * SEC},
      {"500ms", 500000000LL},
      {"1m30s", 90 * SEC},
      {"2h", 7200 * SEC},
      {"1h2m3s", 3723 * SEC},
      {"0.5m", 30 * SEC},
      {"250us", 250000},
      {"1\xc2\xb5s", 1000},
      {"7ns", 7},
  };
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    int64_t ns = -1;
    CHECK(nl_parse_duration(good[i].text, &ns) == 0);
    if (ns != good[i].ns)
      fprintf(stderr, "  %s gave %lld\n", good[i].text, (long long)ns);
    CHECK(ns == good[i].ns);
  }
  static const char *const bad[] = {
      "",
      "0",
      "0s",
      "-5s",
      "s",
      "5x",
      "5 s",
      "5s ",
      "1e3",
      "5s5",
      "..5s",
      "abc",
      "99999999999999999999h",
      NULL,
  };
  for (size_t i = 0; bad[i] != NULL; i++) {
    int64_t ns = 0;
    if (nl_parse_duration(bad[i], &ns) == 0)
      fprintf(stderr, "  \"%s\" accepted as %lld\n", bad[i], (long long)ns);
    CHECK(nl_parse_duration(bad[i], &ns) != 0);
  }
  CHECK(nl_parse_duration(NULL, &(int64_t){0}) != 0);
}

static void test_expect_specs(void) {
  nl_expect_spec sp;
  char err[256];
  CHECK(nl_expect_parse_spec("ORDERS/ship:max_processing=45s", &sp, err,
                             sizeof(err)) == 0);
  CHECK(strcmp(sp.stream_glob, "ORDERS") == 0);
  CHECK(strcmp(sp.consumer_glob, "ship") == 0);
  CHECK(strcmp(sp.key, "max_processing") == 0);
  CHECK(strcmp(sp.value, "45s") == 0);
  nl_expect_spec_free(&sp);
  CHECK(nl_expect_parse_spec("OR*/*:nats_lens.workers=4", &sp, err,
                             sizeof(err)) == 0);
  CHECK(strcmp(sp.key, "workers") == 0);
  CHECK(strcmp(sp.stream_glob, "OR*") == 0);
  nl_expect_spec_free(&sp);
  /* A consumer name with ':' splits at the last one before '='. */
  CHECK(nl_expect_parse_spec("S/a:b:dead_letter=DLQ:x", &sp, err,
                             sizeof(err)) == 0);
  CHECK(strcmp(sp.consumer_glob, "a:b") == 0);
  CHECK(strcmp(sp.value, "DLQ:x") == 0);
  nl_expect_spec_free(&sp);
  static const char *const bad[] = {
      "ORDERS:max_processing=30s",     /* no consumer */
      "ORDERS/ship",                   /* no declaration */
      "/ship:workers=2",               /* no stream */
      "ORDERS/:workers=2",             /* no consumer name */
      "ORDERS/ship:=2",                /* no key */
      "ORDERS/ship:workers=",          /* no value */
      "ORDERS/ship:workers=two",       /* not a number */
      "ORDERS/ship:workers=0",         /* below 1 */
      "ORDERS/ship:max_processing=1x", /* not a duration */
      "ORDERS/ship:colour=blue",       /* unknown key */
      NULL,
  };
  for (size_t i = 0; bad[i] != NULL; i++) {
    err[0] = '\0';
    CHECK(nl_expect_parse_spec(bad[i], &sp, err, sizeof(err)) != 0);
    CHECK(err[0] != '\0');
    CHECK(sp.key == NULL && sp.value == NULL);
  }
}

static void test_expect_apply_and_read(void) {
  nl_snapshot_set set = {0};
  nl_stream_snap *s = nl_snapshot_set_add_stream(&set);
  s->name = strdup("ORDERS");
  const char *names[] = {"ship", "bill", "audit"};
  for (int i = 0; i < 3; i++) {
    nl_consumer_snap *c = nl_snapshot_set_add_consumer(&set);
    c->stream = strdup("ORDERS");
    c->name = strdup(names[i]);
  }
  /* The server's metadata for "ship" is overridden by the spec. */
  nl_consumer_snap_set_meta(&set.consumers[0], "nats_lens.max_processing",
                            "5s");
  nl_expect_spec specs[3];
  char err[256];
  CHECK(nl_expect_parse_spec("ORDERS/ship:max_processing=45s", &specs[0], err,
                             sizeof(err)) == 0);
  CHECK(nl_expect_parse_spec("ORD*/*:workers=3", &specs[1], err, sizeof(err)) ==
        0);
  CHECK(nl_expect_parse_spec("OTHER/*:workers=3", &specs[2], err,
                             sizeof(err)) == 0);
  size_t matched[3];
  CHECK_EQ_U(nl_expect_apply(specs, 3, &set, matched), 4);
  CHECK_EQ_U(matched[0], 1);
  CHECK_EQ_U(matched[1], 3);
  CHECK_EQ_U(matched[2], 0);
  nl_expectations e;
  nl_expect_read(&set.consumers[0], &e);
  CHECK(e.max_processing_ns == 45 * SEC);
  CHECK(e.workers == 3);
  CHECK(e.dead_letter == NULL);
  CHECK(e.bad_key == NULL);
  nl_expect_read(&set.consumers[2], &e);
  CHECK(e.max_processing_ns == 0);
  CHECK(e.workers == 3);
  /* An unreadable declaration is reported and treated as absent. */
  nl_consumer_snap_set_meta(&set.consumers[2], "nats_lens.workers", "many");
  nl_expect_read(&set.consumers[2], &e);
  CHECK(e.workers == 0);
  CHECK(e.bad_key != NULL && strcmp(e.bad_key, "workers") == 0);
  CHECK(e.bad_value != NULL && strcmp(e.bad_value, "many") == 0);
  for (int i = 0; i < 3; i++)
    nl_expect_spec_free(&specs[i]);
  nl_snapshot_set_clear(&set);
}

static void test_snapshot_meta_limits(void) {
  nl_consumer_snap c = {0};
  char key[32], big[NL_META_LEN_MAX + 2];
  for (int i = 0; i < NL_META_MAX; i++) {
    snprintf(key, sizeof(key), "nats_lens.k%d", i);
    CHECK(nl_consumer_snap_set_meta(&c, key, "v") == 0);
  }
  CHECK(nl_consumer_snap_set_meta(&c, "nats_lens.one_more", "v") != 0);
  CHECK(nl_consumer_snap_set_meta(&c, "nats_lens.k3", "replaced") == 0);
  CHECK(strcmp(nl_consumer_snap_meta(&c, "nats_lens.k3"), "replaced") == 0);
  CHECK(nl_consumer_snap_meta(&c, "nats_lens.none") == NULL);
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  CHECK(nl_consumer_snap_set_meta(&c, "nats_lens.k4", big) != 0);
  CHECK_EQ_U(c.n_meta, NL_META_MAX);
  nl_consumer_snap_clear(&c);
  CHECK(c.meta == NULL && c.n_meta == 0);
}

static void test_parse_audit_fields(void) {
  const char *streams =
      "{\"total\":2,\"offset\":0,\"limit\":256,\"streams\":["
      "{\"config\":{\"name\":\"ORDERS\",\"subjects\":[\"orders.>\",7,"
      "\"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.ORDERS.*\"],"
      "\"num_replicas\":1},\"state\":{},"
      "\"cluster\":{\"name\":\"east\",\"leader\":\"n1\"}},"
      "{\"config\":{\"name\":\"LOCAL\",\"subjects\":\"not an array\"},"
      "\"state\":{},\"cluster\":{\"leader\":\"n1\"}}]}";
  const char *consumers =
      "{\"total\":4,\"offset\":0,\"limit\":256,\"consumers\":["
      "{\"name\":\"push\",\"config\":{\"deliver_subject\":\"d.push\","
      "\"idle_heartbeat\":5000000000,\"flow_control\":true,"
      "\"backoff\":[1000000000,2000000000,4000000000],"
      "\"metadata\":{\"nats_lens.max_processing\":\"45s\","
      "\"nats_lens.workers\":4,\"team\":\"billing\","
      "\"nats_lens.dead_letter\":\"ORDERS_DLQ\"}},"
      "\"delivered\":{},\"ack_floor\":{}},"
      "{\"name\":\"plain\",\"config\":{\"idle_heartbeat\":-3,"
      "\"metadata\":[\"not\",\"an\",\"object\"],\"priority_policy\":7},"
      "\"delivered\":{},\"ack_floor\":{}},"
      /* Priority groups as nats-server 2.11.10 lists them. */
      "{\"name\":\"pin\",\"config\":{\"ack_policy\":\"all\","
      "\"priority_groups\":[\"g\"],\"priority_policy\":\"pinned_client\","
      "\"priority_timeout\":10000000000},\"delivered\":{},\"ack_floor\":{},"
      "\"num_waiting\":2,\"priority_groups\":[{\"group\":\"g\","
      "\"pinned_client_id\":\"czV2moHToC12WbEeumhh1X\","
      "\"pinned_ts\":\"2026-12-03T10:10:06.929530946Z\"}]},"
      "{\"name\":\"over\",\"config\":{\"priority_groups\":[\"g\"],"
      "\"priority_policy\":\"overflow\"},\"delivered\":{},\"ack_floor\":{},"
      "\"priority_groups\":[{\"group\":\"g\","
      "\"pinned_ts\":\"0001-01-01T00:00:00Z\"}]}]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(nl_parse_stream_list(streams, strlen(streams), &set, &page, err,
                             sizeof(err)) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 2);
  if (set.n_streams == 2) {
    CHECK_EQ_U(set.streams[0].n_subjects, 2);
    CHECK(strcmp(set.streams[0].subjects[0], "orders.>") == 0);
    CHECK(set.streams[0].cluster != NULL &&
          strcmp(set.streams[0].cluster, "east") == 0);
    CHECK_EQ_U(set.streams[1].n_subjects, 0);
    CHECK(set.streams[1].cluster == NULL);
  }
  CHECK(nl_parse_consumer_list(consumers, strlen(consumers), 0, &set, &page,
                               err, sizeof(err)) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_consumers, 4);
  if (set.n_consumers == 4) {
    nl_consumer_snap *c = &set.consumers[0];
    CHECK(c->push);
    CHECK(c->idle_heartbeat_ns == 5 * SEC);
    CHECK(c->flow_control);
    CHECK_EQ_U(c->backoff_steps, 3);
    CHECK(c->backoff_first_ns == SEC);
    /* Only nats_lens.* string values are kept. */
    CHECK_EQ_U(c->n_meta, 2);
    CHECK(nl_consumer_snap_meta(c, "team") == NULL);
    CHECK(nl_consumer_snap_meta(c, "nats_lens.workers") == NULL);
    const char *mp = nl_consumer_snap_meta(c, "nats_lens.max_processing");
    CHECK(mp != NULL && strcmp(mp, "45s") == 0);
    c = &set.consumers[1];
    CHECK(c->idle_heartbeat_ns == 0);
    CHECK(!c->flow_control);
    CHECK_EQ_U(c->backoff_steps, 0);
    CHECK_EQ_U(c->n_meta, 0);
    CHECK(!c->pinned_client);
    CHECK(set.consumers[2].pinned_client);
    CHECK_EQ_U(set.consumers[2].num_waiting, 2);
    CHECK(!set.consumers[3].pinned_client);
    CHECK(!set.consumers[0].pinned_client);
  }
  nl_snapshot_set_clear(&set);
}

static const nl_test_case tests[] = {
    NL_TEST(test_expect_durations),      NL_TEST(test_expect_specs),
    NL_TEST(test_expect_apply_and_read), NL_TEST(test_snapshot_meta_limits),
    NL_TEST(test_parse_audit_fields),
};

NL_TEST_MAIN(tests)
