/* test_jsz.c: the system account's JSZ replies merged into one snapshot
 * set per account, on replies recorded from nats-server 2.9.10. */
#include "nl_fixture.h"
#include "nl_test.h"

#include "core/model/nl_jsz.h"
#include "core/model/nl_parse.h"

#include <stdlib.h>
#include <string.h>

/* Feeds each line of a fixture (one reply per line) to z. Returns the
 * number of replies fed. */
static int feed_lines(nl_jsz *z, const char *fixture) {
  size_t len = 0;
  char *text = nl_test_read_fixture(fixture, &len);
  int n = 0;
  char err[256];
  for (char *line = text; line != NULL && *line != '\0';) {
    char *end = strchr(line, '\n');
    size_t l = end ? (size_t)(end - line) : strlen(line);
    if (l > 0) {
      CHECK(nl_jsz_add_reply(z, line, l, err, sizeof(err)) == 0);
      n++;
    }
    line = end ? end + 1 : NULL;
  }
  free(text);
  return n;
}

/* One server, three accounts; A and B both hold a stream ORDERS with a
 * consumer w: each account's set holds its own. */
static void test_jsz_single_server_accounts(void) {
  nl_jsz *z = nl_jsz_create(NULL, NULL);
  CHECK_EQ_U(feed_lines(z, "jsz_single.json"), 1);
  CHECK(nl_jsz_complete(z));
  nl_jsz_result r;
  CHECK(nl_jsz_finish(z, &r) == 0);
  CHECK_EQ_U(r.servers, 1);
  CHECK_EQ_U(r.expected, 1);
  CHECK_EQ_U(r.n_accounts, 3);
  const nl_jsz_account *a = nl_jsz_find(&r, "A");
  const nl_jsz_account *b = nl_jsz_find(&r, "B");
  const nl_jsz_account *c = nl_jsz_find(&r, "C");
  CHECK(a != NULL && b != NULL && c != NULL);
  if (a && b && c) {
    CHECK(strcmp(a->name, "A") == 0);
    CHECK_EQ_U(a->set.n_streams, 1);
    CHECK_EQ_U(a->set.n_consumers, 1);
    CHECK_EQ_U(b->set.n_consumers, 1);
    CHECK(a->set.streams[0].consumers_complete);
    CHECK(!a->set.stream_list_short);
    CHECK_EQ_U(a->set.unobservable, 0);
    /* Same names, each account's own subjects and limits. */
    CHECK(strcmp(a->set.streams[0].subjects[0], "orders.a") == 0);
    CHECK(strcmp(b->set.streams[0].subjects[0], "orders.b") == 0);
    CHECK(strcmp(a->set.consumers[0].stream, "ORDERS") == 0);
    CHECK(strcmp(a->set.consumers[0].name, "w") == 0);
    CHECK_EQ_U(a->set.consumers[0].max_ack_pending, 10);
    CHECK_EQ_U(a->set.consumers[0].stream_index, 0);
    CHECK_EQ_U(c->set.n_streams, 1);
    CHECK_EQ_U(c->set.n_consumers, 0);
    CHECK(nl_test_stream(&c->set, "EV") != NULL);
  }
  nl_jsz_result_clear(&r);
  nl_jsz_free(z);
}

/* Three servers: A's ORDERS (R3) is led by n1 while its consumer w is led
 * by n3; every server reports both. Each is taken once, from its own
 * leader; B's R1 ORDERS lives on n3 alone. */
static void test_jsz_cluster_leaders(void) {
  nl_jsz *z = nl_jsz_create(NULL, NULL);
  CHECK_EQ_U(feed_lines(z, "jsz_cluster.jsonl"), 3);
  CHECK(nl_jsz_complete(z));
  nl_jsz_result r;
  CHECK(nl_jsz_finish(z, &r) == 0);
  CHECK_EQ_U(r.servers, 3);
  CHECK_EQ_U(r.expected, 3);
  const nl_jsz_account *a = nl_jsz_find(&r, "A");
  const nl_jsz_account *b = nl_jsz_find(&r, "B");
  CHECK(a != NULL && b != NULL);
  if (a && b) {
    CHECK_EQ_U(a->set.n_streams, 1);
    CHECK_EQ_U(a->set.n_consumers, 1);
    CHECK_EQ_U(a->set.streams[0].msgs, 7);
    CHECK_EQ_U(a->set.consumers[0].num_pending, 7);
    CHECK(a->set.streams[0].consumers_complete);
    CHECK(a->set.streams[0].cluster != NULL);
    CHECK_EQ_U(b->set.n_consumers, 1);
    CHECK_EQ_U(b->set.consumers[0].ack_wait_ns, 7000000000ULL);
    CHECK_EQ_U(a->set.unobservable + b->set.unobservable, 0);
  }
  nl_jsz_result_clear(&r);
  nl_jsz_free(z);
}

/* The stream leader of A's ORDERS (n1) killed: its followers still name
 * it, so the stream is missing (its consumers unobservable) and, with two
 * of three servers heard, every set is short of what may exist; B's
 * ORDERS, led by n3, is read as before. */
static void test_jsz_cluster_leader_down(void) {
  nl_jsz *z = nl_jsz_create(NULL, NULL);
  CHECK_EQ_U(feed_lines(z, "jsz_cluster_node_down.jsonl"), 2);
  CHECK(!nl_jsz_complete(z));
  nl_jsz_result r;
  CHECK(nl_jsz_finish(z, &r) == 0);
  CHECK_EQ_U(r.servers, 2);
  CHECK_EQ_U(r.expected, 3);
  const nl_jsz_account *a = nl_jsz_find(&r, "A");
  const nl_jsz_account *b = nl_jsz_find(&r, "B");
  CHECK(a != NULL && b != NULL);
  if (a && b) {
    CHECK_EQ_U(a->set.n_streams, 0);
    CHECK(nl_snapshot_set_is_missing(&a->set, "ORDERS"));
    CHECK(a->set.stream_list_short);
    CHECK_EQ_U(b->set.n_consumers, 1);
    CHECK(b->set.stream_list_short);
  }
  nl_jsz_result_clear(&r);
  nl_jsz_free(z);
}

/* Account and stream globs select; a server heard twice counts once;
 * error replies and malformed text are refused with a reason. */
static void test_jsz_select_and_hostile(void) {
  char *only_a[] = {"A"}, *no_c[] = {"C"}, *not_orders[] = {"ORD*"};
  nl_stream_select acc = {only_a, 1, NULL, 0};
  nl_jsz *z = nl_jsz_create(&acc, NULL);
  feed_lines(z, "jsz_single.json");
  feed_lines(z, "jsz_single.json");
  nl_jsz_result r;
  CHECK(nl_jsz_finish(z, &r) == 0);
  CHECK_EQ_U(r.servers, 1);
  CHECK_EQ_U(r.n_accounts, 1);
  CHECK(nl_jsz_find(&r, "A") != NULL);
  CHECK_EQ_U(r.accounts_skipped, 2);
  nl_jsz_result_clear(&r);
  nl_jsz_free(z);

  nl_stream_select exc = {NULL, 0, no_c, 1}, streams = {NULL, 0, not_orders, 1};
  z = nl_jsz_create(&exc, &streams);
  feed_lines(z, "jsz_single.json");
  CHECK(nl_jsz_finish(z, &r) == 0);
  CHECK_EQ_U(r.n_accounts, 2);
  CHECK(nl_jsz_find(&r, "C") == NULL);
  CHECK(nl_jsz_find(&r, "A") != NULL &&
        nl_jsz_find(&r, "A")->set.n_streams == 0);
  nl_jsz_result_clear(&r);

  static const char *const bad[] = {
      "",
      "{",
      "[]",
      "{\"server\":{\"id\":\"X\",\"name\":\"x\"},\"error\":{\"code\":503,"
      "\"description\":\"jetstream not enabled\"}}",
      "{\"server\":{\"id\":\"X\",\"name\":\"x\"},\"data\":{\"disabled\":true}}",
      "{\"data\":{}}",
      "{\"server\":{\"id\":\"X\",\"name\":\"x\"},\"data\":{\"account_details\":"
      "7}}",
  };
  char err[256];
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    err[0] = '\0';
    int rc = nl_jsz_add_reply(z, bad[i], strlen(bad[i]), err, sizeof(err));
    /* The last is a readable reply with nothing usable in it. */
    if (i + 1 < sizeof(bad) / sizeof(bad[0]))
      CHECK(rc != 0 && err[0] != '\0');
    else
      CHECK(rc == 0);
  }
  CHECK(nl_jsz_finish(z, &r) == 0);
  CHECK_EQ_U(r.replies_rejected, 6);
  CHECK_EQ_U(r.n_accounts, 0);
  nl_jsz_result_clear(&r);
  nl_jsz_free(z);
}

/* The system account's view of mirrors and sources: each copy's report
 * and configuration in its stream detail, each account's origin O in its
 * own set (A's and B's copies of O are compared with their own O). */
static void test_jsz_copies(void) {
  nl_jsz *z = nl_jsz_create(NULL, NULL);
  CHECK_EQ_U(feed_lines(z, "jsz_copies.json"), 1);
  nl_jsz_result r;
  CHECK(nl_jsz_finish(z, &r) == 0);
  const char *accounts[] = {"A", "B"};
  const uint64_t held[] = {3, 2};
  for (size_t i = 0; i < 2; i++) {
    const nl_jsz_account *a = nl_jsz_find(&r, accounts[i]);
    CHECK(a != NULL);
    if (a == NULL)
      continue;
    const nl_stream_snap *o = nl_test_stream(&a->set, "O");
    const nl_stream_snap *m = nl_test_stream(&a->set, "M");
    const nl_stream_snap *s = nl_test_stream(&a->set, "SRC");
    CHECK(o != NULL && m != NULL && s != NULL);
    if (o == NULL || m == NULL || s == NULL)
      continue;
    CHECK(o->n_links == 0 && o->created_ns > 0 && o->last_seq == held[i]);
    CHECK(m->is_mirror && m->n_links == 1 && !m->links[0].filtered);
    CHECK(s->n_links == 1 && s->links[0].filtered);
    CHECK(strcmp(m->links[0].name, "O") == 0 && m->links[0].have_info &&
          m->links[0].active_ns >= 0 && m->links[0].lag == 0);
    CHECK(s->links[0].have_info && s->links[0].error_code == 0);
    CHECK_EQ_U(m->last_seq, held[i]);
  }
  nl_jsz_result_clear(&r);
  nl_jsz_free(z);
}

static const nl_test_case tests[] = {
    NL_TEST(test_jsz_single_server_accounts),
    NL_TEST(test_jsz_cluster_leaders),
    NL_TEST(test_jsz_cluster_leader_down),
    NL_TEST(test_jsz_select_and_hostile),
    NL_TEST(test_jsz_copies),
};

NL_TEST_MAIN(tests)
