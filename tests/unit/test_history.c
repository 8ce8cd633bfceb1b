/* test_history.c: the per-consumer history keeps every poll it holds
 * exactly, in its compact form. */
#include "core/model/nl_history.h"
#include "nl_test.h"

#include <stdint.h>

#define SEC 1000000000LL
#define MS 1000000LL

/* A consumer with ack_wait 30 s, polled at t_ns with the given counts. */
static nl_consumer_state *observe(nl_registry *reg, int64_t t_ns,
                                  uint64_t delivered, uint64_t pending,
                                  uint64_t ack_pending, uint32_t gen) {
  nl_stream_snap s = {.name = "S", .first_seq = 1};
  nl_consumer_snap c = {
      .stream = "S",
      .name = "C",
      .created_ns = 1,
      .ack_wait_ns = 30 * SEC,
      .ack_policy = NL_ACK_EXPLICIT,
      .delivered_consumer_seq = delivered,
      .delivered_stream_seq = delivered,
      .num_pending = pending,
      .num_ack_pending = ack_pending,
  };
  bool was_reset;
  return nl_registry_observe(reg, &c, &s, t_ns, gen, 0, &was_reset);
}

/* Every poll held reads back as it was observed, across large steps in
 * both directions of num_pending, for more polls than the history holds. */
static void test_history_past_samples_exact(void) {
  nl_registry *reg = nl_registry_create(NULL);
  static const uint64_t delivered[] = {0,
                                       7,
                                       7,
                                       4000000000ULL,
                                       4000000001ULL,
                                       8000000000ULL,
                                       8000000002ULL,
                                       8000000002ULL,
                                       9000000000ULL};
  /* Steps of num_pending up to the most the compact form holds each way,
   * above 2^32. */
  static const uint64_t pending[] = {
      10000000005ULL, 12000000000ULL, 10000000001ULL,
      12147483648ULL, 10000000010ULL, 12147483000ULL,
      14294966647ULL, 13000000000ULL, 10900000000ULL};
  static const uint64_t ack_pending[] = {0, 1, 2, 3, 4, 5, 6, 7, UINT32_MAX};
  const unsigned n = sizeof(delivered) / sizeof(delivered[0]);
  nl_consumer_state *st = NULL;
  for (unsigned i = 0; i < n; i++) {
    st = observe(reg, (int64_t)(i + 1) * 5 * SEC + i * MS, delivered[i],
                 pending[i], ack_pending[i], i + 1);
    CHECK(st != NULL);
    if (st == NULL)
      break;
    unsigned held = i + 1 < NL_HISTORY_LEN ? i + 1 : NL_HISTORY_LEN;
    CHECK_EQ_U(st->count, held);
    for (unsigned k = 0; k < held; k++) {
      nl_past_sample p;
      CHECK(nl_state_past(st, k, &p));
      unsigned j = i - k;
      CHECK_EQ_U(p.t_ns, (int64_t)(j + 1) * 5 * SEC + j * MS);
      CHECK_EQ_U(p.delivered_consumer_seq, delivered[j]);
      CHECK_EQ_U(p.num_pending, pending[j]);
      CHECK_EQ_U(p.num_ack_pending, ack_pending[j]);
    }
    nl_past_sample none;
    CHECK(!nl_state_past(st, held, &none));
  }
  CHECK(st != NULL &&
        nl_state_latest(st)->delivered_consumer_seq == delivered[n - 1]);
  nl_registry_free(reg);
}

/* A step too large for the compact form (2^32 or more deliveries, or
 * num_pending moving by more than 2^31 in one interval) restarts the
 * history at the new poll instead of storing a wrong difference. */
static void test_history_restarts_on_huge_step(void) {
  nl_registry *reg = nl_registry_create(NULL);
  observe(reg, 5 * SEC, 10, 100, 0, 1);
  nl_consumer_state *st = observe(reg, 10 * SEC, 20, 100, 0, 2);
  CHECK_EQ_U(st->count, 2);
  st = observe(reg, 15 * SEC, 20 + (1ULL << 32), 100, 0, 3);
  CHECK_EQ_U(st->count, 1);
  nl_past_sample p;
  CHECK(nl_state_past(st, 0, &p) &&
        p.delivered_consumer_seq == 20 + (1ULL << 32));
  st = observe(reg, 20 * SEC, 21 + (1ULL << 32), 100, 0, 4);
  CHECK_EQ_U(st->count, 2);
  /* A rise of num_pending by 2^31, then a fall by 2^31 + 1. */
  st = observe(reg, 25 * SEC, 22 + (1ULL << 32), 100 + (1ULL << 31), 0, 5);
  CHECK_EQ_U(st->count, 1);
  st = observe(reg, 30 * SEC, 23 + (1ULL << 32), 99, 0, 6);
  CHECK_EQ_U(st->count, 1);
  /* The largest steps that fit are kept: 2^32 - 1 deliveries, num_pending
   * up by 2^31 - 1 and down by 2^31. */
  st = observe(reg, 35 * SEC, 23 + (1ULL << 32) + UINT32_MAX,
               99 + (uint64_t)INT32_MAX, 0, 7);
  CHECK_EQ_U(st->count, 2);
  st = observe(reg, 40 * SEC, 23 + (1ULL << 32) + UINT32_MAX,
               99 + (uint64_t)INT32_MAX - (1ULL << 31), 0, 8);
  CHECK_EQ_U(st->count, 3);
  CHECK(nl_state_past(st, 2, &p) &&
        p.delivered_consumer_seq == 23 + (1ULL << 32) && p.num_pending == 99);
  /* Polls more than 2^32 ms (49.7 days) apart. */
  st = observe(reg, 40 * SEC + (1LL << 32) * MS, 24 + (1ULL << 32) + UINT32_MAX,
               99, 0, 9);
  CHECK_EQ_U(st->count, 1);
  nl_registry_free(reg);
}

/* Older poll times are kept to the millisecond, truncated, without the
 * error growing with age. */
static void test_history_times_to_the_millisecond(void) {
  nl_registry *reg = nl_registry_create(NULL);
  observe(reg, 5 * SEC + 400000, 1, 0, 0, 1);
  observe(reg, 10 * SEC + 900000, 2, 0, 0, 2);
  nl_consumer_state *st = observe(reg, 15 * SEC, 3, 0, 0, 3);
  nl_past_sample p;
  CHECK(nl_state_past(st, 0, &p) && p.t_ns == 15 * SEC);
  CHECK(nl_state_past(st, 1, &p) && p.t_ns == 10 * SEC);
  CHECK(nl_state_past(st, 2, &p) && p.t_ns == 5 * SEC);
  nl_registry_free(reg);
}

static const nl_test_case tests[] = {
    NL_TEST(test_history_past_samples_exact),
    NL_TEST(test_history_restarts_on_huge_step),
    NL_TEST(test_history_times_to_the_millisecond),
};

NL_TEST_MAIN(tests)
