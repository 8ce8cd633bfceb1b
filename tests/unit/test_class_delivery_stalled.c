/* test_class_delivery_stalled.c: DELIVERY_STALLED
 * (plugin/core/detect/nl_delivery_stalled.c) at the boundaries of its rule
 * (docs/detectors.md, DELIVERY_STALLED), with the default floor (120 s)
 * and ceiling (3600 s).
 *
 * Every case is one stream S with messages pending for a pull consumer C
 * that delivers one message every `every` seconds for eleven deliveries
 * (it learns ten intervals of `every`), then stops: it is polled every
 * `step` seconds from then on, and the case says what else holds. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  world w;
  nl_stream_snap *s;
  nl_consumer_snap *c;
} scene;

/* C delivers one message every `every` seconds (one poll each), eleven
 * times, with 500 pending; then polls come every `step` seconds. */
static void scene_start(scene *k, int64_t every, int64_t step) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, false);
  k->s = add_stream(&k->w, "S");
  k->s->last_seq = k->s->msgs = 1000;
  k->c = add_consumer(&k->w, 0, "C");
  k->c->num_pending = 500;
  k->w.step_ns = every * SEC;
  for (int i = 0; i < 11; i++) {
    k->c->delivered_consumer_seq++;
    k->c->delivered_stream_seq++;
    k->c->ack_floor_consumer_seq++;
    k->c->ack_floor_stream_seq++;
    world_poll(&k->w);
  }
  k->w.step_ns = step * SEC;
}

static bool stalled(scene *k) {
  return active_for(&k->w, "S", "C", NL_DELIVERY_STALLED);
}

/* Polls until C is reported or max polls; returns the seconds without a
 * delivery at the poll that raised it (its stalled_s; -1: never). */
static int64_t seconds_to_raise(scene *k, int max) {
  for (int i = 0; i < max; i++) {
    world_poll(&k->w);
    if (stalled(k))
      return (int64_t)nl_finding_get(&k->w.last[NL_DELIVERY_STALLED],
                                     "stalled_s", -1);
  }
  return -1;
}

/* Deliveries every second: the floor (120 s) rules. Raised at 120 s, not
 * at 119 s; a warning (no pull request waits), with its evidence. */
static void test_stall_floor(void) {
  scene k;
  scene_start(&k, 1, 1);
  int64_t at = seconds_to_raise(&k, 300);
  CHECK_EQ_U(at, 120);
  CHECK(k.w.last[NL_DELIVERY_STALLED].severity == NL_SEVERITY_WARNING);
  CHECK_EQ_U(
      nl_finding_get(&k.w.last[NL_DELIVERY_STALLED], "expected_interval_s", -1),
      1);
  CHECK_EQ_U(nl_finding_get(&k.w.last[NL_DELIVERY_STALLED], "limit_s", -1),
             120);
  CHECK_EQ_U(
      nl_finding_get(&k.w.last[NL_DELIVERY_STALLED], "intervals_learnt", -1),
      10);
  world_free(&k.w);
}

/* Pull requests waiting and nothing delivered: critical. */
static void test_stall_asked_critical(void) {
  scene k;
  scene_start(&k, 1, 1);
  k.c->num_waiting = 2;
  CHECK_EQ_U(seconds_to_raise(&k, 300), 120);
  CHECK(k.w.last[NL_DELIVERY_STALLED].severity == NL_SEVERITY_CRITICAL);
  world_free(&k.w);
}

/* A batch reader that delivers every 40 s: four of its intervals, 160 s,
 * not the floor. At 159 s silent, at 160 s raised. */
static void test_stall_learnt(void) {
  scene k;
  scene_start(&k, 40, 1);
  CHECK_EQ_U(seconds_to_raise(&k, 400), 160);
  world_free(&k.w);
}

/* Deliveries every 2000 s: the ceiling (3600 s) rules. */
static void test_stall_ceiling(void) {
  scene k;
  scene_start(&k, 2000, 60);
  int64_t at = seconds_to_raise(&k, 200);
  CHECK(at >= 3600 && at < 3660);
  CHECK_EQ_U(nl_finding_get(&k.w.last[NL_DELIVERY_STALLED], "limit_s", -1),
             3600);
  world_free(&k.w);
}

/* What explains the stop keeps it silent for 600 s, and the clock starts
 * again when it ends: paused, at max_ack_pending, a push consumer with no
 * subscriber, a priority policy; and nothing pending. */
static void test_stall_explained(void) {
  for (int v = 0; v < 5; v++) {
    scene k;
    scene_start(&k, 1, 1);
    if (v == 0)
      k.c->paused = true;
    else if (v == 1)
      k.c->num_ack_pending = k.c->max_ack_pending = 10;
    else if (v == 2)
      k.c->push = true;
    else if (v == 3)
      k.c->has_priority_policy = true;
    else
      k.c->num_pending = 0;
    for (int i = 0; i < 600; i++)
      world_poll(&k.w);
    CHECK(!stalled(&k));
    k.c->paused = false;
    k.c->num_ack_pending = 0;
    k.c->push = false;
    k.c->has_priority_policy = false;
    k.c->num_pending = 500;
    int64_t at = seconds_to_raise(&k, 300);
    if (at != 120)
      fprintf(stderr, "  variant %d: raised at %lld s\n", v, (long long)at);
    CHECK(at == 120);
    CHECK_EQ_U(k.w.onsets[NL_DELIVERY_STALLED], 1);
    world_free(&k.w);
  }
}

/* An application stopped for 100 s, then delivering again: silent, and
 * the pause does not teach the rule to wait longer (the third quartile of
 * the intervals is still 1 s); a delivery clears a raised one. */
static void test_stall_resumes(void) {
  scene k;
  scene_start(&k, 1, 1);
  for (int i = 0; i < 100; i++)
    world_poll(&k.w);
  k.c->delivered_consumer_seq++;
  world_poll(&k.w);
  for (int i = 0; i < 100; i++)
    world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_DELIVERY_STALLED], 0);
  CHECK_EQ_U(seconds_to_raise(&k, 300), 120);
  k.c->delivered_consumer_seq++;
  int n = world_polls_to_clear(&k.w, "S", "C", NL_DELIVERY_STALLED, 200);
  CHECK(n > 0 && n < 200);
  world_free(&k.w);
}

/* Created again: what it learnt is forgotten, and its first poll starts
 * the clock. */
static void test_stall_recreated(void) {
  scene k;
  scene_start(&k, 40, 1);
  k.c->created_ns = k.w.t;
  k.c->delivered_consumer_seq = 0;
  CHECK_EQ_U(seconds_to_raise(&k, 300), 120);
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_stall_floor),     NL_TEST(test_stall_asked_critical),
    NL_TEST(test_stall_learnt),    NL_TEST(test_stall_ceiling),
    NL_TEST(test_stall_explained), NL_TEST(test_stall_resumes),
    NL_TEST(test_stall_recreated),
};

NL_TEST_MAIN(tests)
