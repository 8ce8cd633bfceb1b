/* test_scope.c: Scope "server", one server's JSZ reply judged alone
 * (recorded from a 3-node nats-server 2.9.10 cluster), and the engine's
 * handling of what another server leads. */
#include "nl_fixture.h"
#include "nl_test.h"

#include "core/model/nl_jsz.h"
#include "core/nl_engine.h"

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* Reads line k (0-based) of a fixture of one reply per line into one
 * server's scoped result. */
static void scoped_reply(const char *fixture, int k, nl_jsz_result *r) {
  size_t len = 0;
  char *text = nl_test_read_fixture(fixture, &len);
  nl_jsz *z = nl_jsz_create(NULL, NULL);
  nl_jsz_scope_server(z);
  char err[256];
  char *line = text;
  for (int i = 0; line != NULL && i < k; i++) {
    line = strchr(line, '\n');
    line = line ? line + 1 : NULL;
  }
  CHECK(line != NULL);
  if (line != NULL) {
    char *end = strchr(line, '\n');
    size_t l = end ? (size_t)(end - line) : strlen(line);
    CHECK(nl_jsz_add_reply(z, line, l, err, sizeof(err)) == 0);
    CHECK(nl_jsz_complete(z));
    /* Another server's reply to the same request is ignored. */
    CHECK(nl_jsz_add_reply(z, text, strcspn(text, "\n"), err, sizeof(err)) ==
          0);
  }
  CHECK(nl_jsz_finish(z, r) == 0);
  nl_jsz_free(z);
  free(text);
}

/* A's ORDERS is led by n1, its consumer w by n3; B's ORDERS (R1) and its w
 * live on n3 alone. Each server's agent judges what it leads, and only
 * that: n1 the stream, n3 the consumers, n2 nothing; what another server
 * leads is neither missing nor unobservable. */
static void test_scope_server_leaders(void) {
  nl_jsz_result r;
  scoped_reply("jsz_cluster.jsonl", 0, &r); /* n1 */
  CHECK_EQ_U(r.servers, 1);
  const nl_jsz_account *a = nl_jsz_find(&r, "A");
  CHECK(a != NULL);
  if (a != NULL) {
    CHECK_EQ_U(a->set.n_streams, 1);
    CHECK(!a->set.streams[0].elsewhere);
    CHECK_EQ_U(a->set.n_consumers, 0);
    CHECK_EQ_U(a->set.n_elsewhere, 1);
    CHECK(nl_snapshot_set_elsewhere(&a->set, "ORDERS", "w") != NULL);
    CHECK(!a->set.elsewhere[0].leaderless);
    CHECK(a->set.streams[0].consumers_complete);
    CHECK(!a->set.stream_list_short);
    CHECK_EQ_U(a->set.n_missing_streams, 0);
    CHECK_EQ_U(a->set.unobservable, 0);
  }
  nl_jsz_result_clear(&r);

  scoped_reply("jsz_cluster.jsonl", 2, &r); /* n3 */
  a = nl_jsz_find(&r, "A");
  const nl_jsz_account *b = nl_jsz_find(&r, "B");
  CHECK(a != NULL && b != NULL);
  if (a != NULL && b != NULL) {
    CHECK_EQ_U(a->set.n_streams, 1);
    CHECK(a->set.streams[0].elsewhere); /* Kept for w's sake. */
    CHECK_EQ_U(a->set.n_consumers, 1);
    CHECK(strcmp(a->set.consumers[0].name, "w") == 0);
    CHECK_EQ_U(a->set.n_elsewhere, 0);
    CHECK_EQ_U(b->set.n_consumers, 1);
    CHECK(!b->set.streams[0].elsewhere);
  }
  nl_jsz_result_clear(&r);

  scoped_reply("jsz_cluster.jsonl", 1, &r); /* n2 */
  a = nl_jsz_find(&r, "A");
  CHECK(a != NULL);
  if (a != NULL) {
    CHECK_EQ_U(a->set.n_consumers, 0);
    CHECK(a->set.n_streams == 1 && a->set.streams[0].elsewhere);
    CHECK_EQ_U(a->set.n_elsewhere, 1);
    CHECK_EQ_U(a->set.unobservable, 0);
  }
  nl_jsz_result_clear(&r);
}

typedef struct {
  int onsets;
  int clears;
  const char *reason;
  int stream_values;
} scope_counts;

static void count_transition(void *ud, const char *stream, const char *consumer,
                             const nl_finding *f, bool active,
                             const char *reason) {
  (void)stream, (void)consumer, (void)f;
  scope_counts *c = ud;
  if (active)
    c->onsets++;
  else {
    c->clears++;
    c->reason = reason;
  }
}

static void count_stream(void *ud, const nl_stream_snap *s,
                         const nl_stream_ledger *ledger) {
  uint64_t lost = ledger->lost_total;
  (void)s, (void)lost;
  ((scope_counts *)ud)->stream_values++;
}

/* A throttled consumer (MAX_PENDING_THROTTLE at the first poll) whose
 * leader moves to another server: it is dropped with the reason
 * NL_REASON_LED_ELSEWHERE, never "consumer deleted"; with no leader at all
 * it is kept; a stream led elsewhere gets no stream values. */
static void test_scope_engine_led_elsewhere(void) {
  nl_detect_params p;
  nl_detect_params_default(&p);
  nl_engine *e = nl_engine_create(&p);
  nl_stream_snap s = {.name = "ORDERS",
                      .max_msgs = -1,
                      .max_bytes = -1,
                      .first_seq = 1,
                      .last_seq = 50,
                      .msgs = 50,
                      .replicas = 3,
                      .consumer_count = 1,
                      .consumers_complete = true};
  nl_consumer_snap c = {.stream = "ORDERS",
                        .name = "stuck",
                        .created_ns = 1600000000LL * SEC,
                        .ack_wait_ns = 60 * SEC,
                        .max_ack_pending = 5,
                        .max_deliver = -1,
                        .num_ack_pending = 5,
                        .num_pending = 45,
                        .delivered_consumer_seq = 5,
                        .delivered_stream_seq = 5};
  nl_snapshot_set set = {0};
  set.streams = &s;
  set.n_streams = 1;
  set.consumers = &c;
  set.n_consumers = 1;
  scope_counts n = {0};
  nl_engine_sink sink = {.stream = count_stream,
                         .transition = count_transition};
  int64_t t = 1700000000LL * SEC;
  nl_engine_apply(e, &set, t, &sink, &n);
  CHECK_EQ_U(n.onsets, 1);
  CHECK_EQ_U(n.stream_values, 1);
  int64_t created = 0;
  CHECK(nl_engine_first_seen(e, "ORDERS", "stuck", &created) == t);
  CHECK(created == c.created_ns);

  /* No leader: kept, unobservable, nothing cleared. */
  nl_snapshot_set away = {0};
  away.streams = &s;
  away.n_streams = 1;
  CHECK(nl_snapshot_set_add_elsewhere(&away, "ORDERS", "stuck", true) == 0);
  CHECK_EQ_U(nl_engine_apply(e, &away, t + SEC, &sink, &n), 1);
  CHECK_EQ_U(n.clears, 0);
  CHECK(nl_engine_knows(e, "ORDERS", "stuck"));

  /* Led by another server, and the stream too. */
  away.elsewhere[0].leaderless = false;
  s.elsewhere = true;
  n.stream_values = 0;
  CHECK_EQ_U(nl_engine_apply(e, &away, t + 2 * SEC, &sink, &n), 0);
  CHECK_EQ_U(n.clears, 1);
  CHECK(n.reason == NL_REASON_LED_ELSEWHERE);
  CHECK_EQ_U(n.stream_values, 0);
  CHECK(!nl_engine_knows(e, "ORDERS", "stuck"));
  for (size_t i = 0; i < away.n_elsewhere; i++) {
    free(away.elsewhere[i].stream);
    free(away.elsewhere[i].name);
  }
  free(away.elsewhere);

  /* Led here again, later: first seen anew. */
  s.elsewhere = false;
  nl_engine_apply(e, &set, t + 3 * SEC, &sink, &n);
  CHECK(nl_engine_first_seen(e, "ORDERS", "stuck", &created) == t + 3 * SEC);
  CHECK_EQ_U(n.onsets, 2);
  nl_engine_free(e);
}

static const nl_test_case tests[] = {
    NL_TEST(test_scope_server_leaders),
    NL_TEST(test_scope_engine_led_elsewhere),
};

NL_TEST_MAIN(tests)
