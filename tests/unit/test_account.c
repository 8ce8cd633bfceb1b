/* test_account.c: the account information ($JS.API.INFO) to storage pools
 * (plugin/core/model/nl_account.c): replies of 2.9.10 and 2.12.0 as they
 * were recorded, tiers, and the untrusted text that must give an error. */
#include "core/model/nl_account.h"
#include "core/model/nl_parse.h"
#include "nl_test.h"

#include <string.h>

/* Parses text into a fresh set; returns the code, the set in *set. */
static int parse(const char *text, nl_snapshot_set *set) {
  char err[256];
  memset(set, 0, sizeof(*set));
  return nl_parse_account_info(text, strlen(text), set, err, sizeof(err));
}

static void test_account_recorded_replies(void) {
  /* 2.9.10: no reserved figures; max_memory 0 is no memory at all. */
  static const char v29[] =
      "{\"type\":\"io.nats.jetstream.api.v1.account_info_response\","
      "\"memory\":0,\"storage\":199369,\"streams\":1,\"consumers\":0,"
      "\"limits\":{\"max_memory\":0,\"max_storage\":200000,\"max_streams\":"
      "-1,\"max_consumers\":-1,\"max_ack_pending\":-1,"
      "\"memory_max_stream_bytes\":-1,\"storage_max_stream_bytes\":-1,"
      "\"max_bytes_required\":false},\"api\":{\"total\":6,\"errors\":3}}";
  nl_snapshot_set set;
  CHECK(parse(v29, &set) == NL_PARSE_OK);
  CHECK(set.pools_read);
  CHECK_EQ_U(set.n_pools, 1);
  CHECK(!set.pools[0].memory);
  CHECK_EQ_U(set.pools[0].replicas, 0);
  CHECK_EQ_U(set.pools[0].used, 199369);
  CHECK_EQ_U(set.pools[0].limit, 200000);
  CHECK_EQ_U(set.pools[0].reserved, 0);
  /* 2.12.0: reserved_storage from a stream's max_bytes. */
  static const char v212[] =
      "{\"type\":\"io.nats.jetstream.api.v1.account_info_response\","
      "\"memory\":10,\"storage\":99168,\"reserved_memory\":0,"
      "\"reserved_storage\":100000,\"streams\":1,\"consumers\":0,"
      "\"limits\":{\"max_memory\":5000,\"max_storage\":200000},"
      "\"api\":{\"level\":2,\"total\":6,\"errors\":1}}";
  CHECK(parse(v212, &set) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_pools, 2);
  CHECK(set.pools[0].memory);
  CHECK_EQ_U(set.pools[0].limit, 5000);
  CHECK_EQ_U(set.pools[1].reserved, 100000);
  /* No limits (the server's unlimited account): read, no pool. */
  CHECK(parse("{\"memory\":0,\"storage\":5,\"limits\":{\"max_memory\":-1,"
              "\"max_storage\":-1}}",
              &set) == NL_PARSE_OK);
  CHECK(set.pools_read);
  CHECK_EQ_U(set.n_pools, 0);
}

static void test_account_tiers(void) {
  /* Tiered: top-level limits 0; R1 judged, R3 left out (its limit is
   * applied differently by 2.9 and 2.10+). */
  static const char tiered[] =
      "{\"memory\":0,\"storage\":3000,\"limits\":{},\"tiers\":{"
      "\"R1\":{\"memory\":0,\"storage\":1000,\"limits\":{\"max_memory\":-1,"
      "\"max_storage\":4000}},"
      "\"R3\":{\"memory\":0,\"storage\":2000,\"limits\":{\"max_memory\":-1,"
      "\"max_storage\":9000}},\"X\":7}}";
  nl_snapshot_set set;
  CHECK(parse(tiered, &set) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_pools, 1);
  CHECK_EQ_U(set.pools[0].replicas, 1);
  CHECK_EQ_U(set.pools[0].limit, 4000);
  /* The pool of an R1 file stream; none for an R3 or a memory one. */
  nl_stream_snap s = {.replicas = 1};
  CHECK(nl_storage_pool_of(&set, &s) == &set.pools[0]);
  s.replicas = 3;
  CHECK(nl_storage_pool_of(&set, &s) == NULL);
  s.replicas = 1;
  s.memory_storage = true;
  CHECK(nl_storage_pool_of(&set, &s) == NULL);
}

/* The pool with the least room binds: the account-wide one, else the
 * tier's. */
static void test_account_binding_pool(void) {
  nl_snapshot_set set = {0};
  set.pools[0] = (nl_storage_pool){false, 0, 900, 1000, 0};
  set.pools[1] = (nl_storage_pool){false, 1, 100, 1000, 0};
  set.n_pools = 2;
  nl_stream_snap s = {.replicas = 0};
  CHECK(nl_storage_pool_of(&set, &s) == &set.pools[0]);
  set.pools[1].used = 950;
  CHECK(nl_storage_pool_of(&set, &s) == &set.pools[1]);
}

static void test_account_bad_replies(void) {
  static const char *bad[] = {
      "",
      "[]",
      "not json",
      "{\"memory\":0}",                                      /* No limits. */
      "{\"memory\":-5,\"limits\":{\"max_storage\":10}}",     /* Negative. */
      "{\"storage\":\"9\",\"limits\":{\"max_storage\":10}}", /* A string. */
      "{\"storage\":1.5,\"limits\":{\"max_storage\":10}}",   /* Not whole. */
      "{\"storage\":1,\"limits\":{\"max_storage\":-2}}",     /* Below -1. */
      "{\"storage\":1,\"limits\":{\"max_storage\":10},\"tiers\":{\"R1\":"
      "{\"storage\":-1,\"limits\":{}}}}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    nl_snapshot_set set;
    CHECK(parse(bad[i], &set) == NL_PARSE_BAD_JSON);
    CHECK(!set.pools_read);
    CHECK_EQ_U(set.n_pools, 0);
  }
  nl_snapshot_set set;
  CHECK(parse("{\"error\":{\"code\":503,\"err_code\":10039,\"description\":"
              "\"jetstream not enabled for account\"}}",
              &set) == NL_PARSE_API_ERROR);
  CHECK(!set.pools_read);
}

static const nl_test_case tests[] = {
    NL_TEST(test_account_recorded_replies),
    NL_TEST(test_account_tiers),
    NL_TEST(test_account_binding_pool),
    NL_TEST(test_account_bad_replies),
};

NL_TEST_MAIN(tests)
