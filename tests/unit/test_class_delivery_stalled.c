/* test_class_delivery_stalled.c: DELIVERY_STALLED
 * (plugin/core/detect/nl_delivery_stalled.c) at the boundaries of its rule
 * (docs/detectors.md, DELIVERY_STALLED), with the default floor (120 s)
 * and ceiling (86400 s).
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

/* A push consumer with a subscriber: critical. With flow control the
 * finding names the unanswered flow control and says so in its evidence;
 * without it, the server that does not serve. A pull consumer without
 * waiting requests is a warning with no flow_control evidence. */
static void test_stall_causes(void) {
  struct {
    bool push, flow_control;
    uint64_t waiting;
    int severity;
    double fc_evidence; /* -1: absent. */
    const char *says;
  } cases[] = {
      {true, true, 0, NL_SEVERITY_CRITICAL, 1, "flow-control request"},
      {true, false, 0, NL_SEVERITY_CRITICAL, 0, "not serving"},
      {false, false, 3, NL_SEVERITY_CRITICAL, -1, "not serving"},
      {false, false, 0, NL_SEVERITY_WARNING, -1, "no longer asks"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    scene k;
    scene_start(&k, 1, 1);
    k.c->push = cases[i].push;
    k.c->push_bound = cases[i].push;
    k.c->flow_control = cases[i].flow_control;
    k.c->num_waiting = cases[i].waiting;
    CHECK_EQ_U(seconds_to_raise(&k, 300), 120);
    const nl_finding *f = &k.w.last[NL_DELIVERY_STALLED];
    CHECK((int)f->severity == cases[i].severity);
    CHECK(nl_finding_get(f, "flow_control", -1) == cases[i].fc_evidence);
    CHECK(strstr(f->description, cases[i].says) != NULL);
    CHECK(f->fix_command[0] == '\0');
    world_free(&k.w);
  }
}

/* A batch reader that delivers every 40 s: four of its intervals, 160 s,
 * not the floor. At 159 s silent, at 160 s raised. */
static void test_stall_learnt(void) {
  scene k;
  scene_start(&k, 40, 1);
  CHECK_EQ_U(seconds_to_raise(&k, 400), 160);
  world_free(&k.w);
}

/* Deliveries every 30000 s (a batch job): four of them pass the ceiling
 * (86400 s), which rules. */
static void test_stall_ceiling(void) {
  scene k;
  scene_start(&k, 30000, 600);
  int64_t at = seconds_to_raise(&k, 400);
  CHECK(at >= 86400 && at < 87000);
  CHECK_EQ_U(nl_finding_get(&k.w.last[NL_DELIVERY_STALLED], "limit_s", -1),
             86400);
  world_free(&k.w);
}

/* A consumer the plugin never saw deliver (a backlog kept for a reader
 * that has not come): no history, silent for 1000 s; its first delivery
 * starts the rule, having taught that it came 1000 s after work waited
 * (4000 s next time). */
static void test_stall_never_delivered_silent(void) {
  scene k;
  memset(&k, 0, sizeof(k));
  world_init(&k.w, false);
  k.s = add_stream(&k.w, "S");
  k.s->last_seq = k.s->msgs = 1000;
  k.c = add_consumer(&k.w, 0, "C");
  k.c->num_pending = 1000;
  for (int i = 0; i < 1000; i++)
    world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_DELIVERY_STALLED], 0);
  k.c->delivered_consumer_seq = k.c->delivered_stream_seq = 1;
  k.c->num_pending = 999;
  world_poll(&k.w);
  CHECK_EQ_U(seconds_to_raise(&k, 5000), 4000);
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

/* An application stopped for 100 s, then delivering again: silent; the
 * pause, which ended in deliveries, is learnt (101 s, so 404 s next
 * time); a delivery clears a raised one. */
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
  CHECK_EQ_U(seconds_to_raise(&k, 600), 404);
  k.c->delivered_consumer_seq++;
  int n = world_polls_to_clear(&k.w, "S", "C", NL_DELIVERY_STALLED, 200);
  CHECK(n > 0 && n < 200);
  world_free(&k.w);
}

/* Created again: what it learnt (40 s, so 160 s) is forgotten; it is
 * judged once it delivers, by the floor. */
static void test_stall_recreated(void) {
  scene k;
  scene_start(&k, 40, 1);
  k.c->created_ns = k.w.t;
  k.c->delivered_consumer_seq = 0;
  world_poll(&k.w);
  k.c->delivered_consumer_seq = 1;
  CHECK_EQ_U(seconds_to_raise(&k, 300), 120);
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_stall_floor),
    NL_TEST(test_stall_asked_critical),
    NL_TEST(test_stall_causes),
    NL_TEST(test_stall_learnt),
    NL_TEST(test_stall_ceiling),
    NL_TEST(test_stall_explained),
    NL_TEST(test_stall_resumes),
    NL_TEST(test_stall_recreated),
    NL_TEST(test_stall_never_delivered_silent),
};

NL_TEST_MAIN(tests)
