/* test_class_push_unbound.c: PUSH_UNBOUND at the boundaries of its
 * predicate (docs/detectors.md, PUSH_UNBOUND): a push consumer with a
 * backlog (num_pending + num_ack_pending) and no subscriber for at least
 * PushUnboundSeconds, the unbound time starting again after it was bound,
 * after its backlog was gone, after a pause and when it is created again;
 * critical when its backlog will be evicted within the horizon (by
 * max_age within max_age less the age of its oldest message, or by the
 * forecast of the count limit); and how it clears.
 *
 * Each case is a script of polls of stream "P" (holding the consumer's
 * backlog, messages 1 to last) and its push consumer "c". */
#include "core/detect/nl_options.h"
#include "nl_test.h"
#include "nl_world.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A check of case k that names the case when it fails. */
#define EXPECT(k, cond)                                                        \
  do {                                                                         \
    if (!(cond)) {                                                             \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: case \"%s\": check failed: %s\n", __FILE__,    \
              __LINE__, (k)->name, #cond);                                     \
    }                                                                          \
  } while (0)

#define EXPECT_EQ(k, a, b)                                                     \
  do {                                                                         \
    double va_ = (double)(a), vb_ = (double)(b);                               \
    if (va_ != vb_) {                                                          \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: case \"%s\": %s == %.17g, expected %.17g\n",   \
              __FILE__, __LINE__, (k)->name, #a, va_, vb_);                    \
    }                                                                          \
  } while (0)

/* One or more polls (times, at least 1) of consumer c, step_ns (0: 1 s)
 * after the poll before. recreate creates it again at the row's first
 * poll; gone leaves it out of the polls (deleted). */
typedef struct {
  int times;
  bool bound;
  bool paused;
  uint64_t pending, ack_pending;
  int64_t step_ns;
  bool pull;
  bool recreate;
  bool gone;
} pu_row;

#define PU_ROWS 4

typedef struct {
  const char *name;
  double unbound_s; /* PushUnboundSeconds; 0: 2 s. */
  double horizon;   /* RetentionHorizon; 0: 3600 s. */
  int64_t max_age_ns;
  bool discard_new;
  int64_t max_msgs; /* 0: none. */
  int64_t msgs;     /* The stream's messages when set (else its last). */
  pu_row rows[PU_ROWS];
  /* Expected: the poll of the onset (-1: none), its severity, unbound_s
   * and eviction_forecast_s (-1: not reported), and the poll of the
   * clearing (-1: none). */
  int raised_at;
  nl_severity severity;
  double unbound, eviction;
  int cleared_at;
} pu_case;

#define UNBOUND(n)                                                             \
  { n, false, false, 10, 0, 0, false, false, false }
#define BOUND(n)                                                               \
  { n, true, false, 10, 0, 0, false, false, false }
#define W NL_SEVERITY_WARNING
#define C NL_SEVERITY_CRITICAL

static const pu_case cases[] = {
    /* Unbound at 0, 1 and 2 s: 2 s is PushUnboundSeconds. */
    {.name = "unbound for exactly PushUnboundSeconds",
     .rows = {UNBOUND(3)},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* PushUnboundSeconds one double above 2 s: one poll later. */
    {.name = "PushUnboundSeconds one double above the time unbound",
     .unbound_s = 2.0000000000000004,
     .rows = {UNBOUND(4)},
     .raised_at = 3,
     .severity = W,
     .unbound = 3,
     .eviction = -1,
     .cleared_at = -1},
    /* The third poll 1 ns sooner: 1 ns short of 2 s. */
    {.name = "unbound 1 ns short of PushUnboundSeconds",
     .rows = {UNBOUND(2),
              {1, false, false, 10, 0, SEC - 1, false, false, false},
              UNBOUND(1)},
     .raised_at = 3,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* The backlog is one message delivered and not acked. */
    {.name = "backlog of one unacked message",
     .rows = {{3, false, false, 0, 1, 0, false, false, false}},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* Nothing waiting: nothing is held back. */
    {.name = "no backlog",
     .rows = {{10, false, false, 0, 0, 0, false, false, false}},
     .raised_at = -1,
     .cleared_at = -1},
    /* A subscriber bound: delivering. */
    {.name = "bound with a backlog",
     .rows = {BOUND(10)},
     .raised_at = -1,
     .cleared_at = -1},
    /* A pull consumer is never bound. */
    {.name = "pull consumer",
     .rows = {{10, false, false, 10, 0, 0, true, false, false}},
     .raised_at = -1,
     .cleared_at = -1},
    /* Unbound at 0 and 1 s, bound at 2 s, unbound again from 3 s: its
     * time starts again at 3 s, 2 s is reached at 5 s. */
    {.name = "bound, unbound and bound again",
     .rows = {UNBOUND(2), BOUND(1), UNBOUND(3)},
     .raised_at = 5,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* The backlog gone for a poll: its time starts again too. */
    {.name = "backlog gone for a poll",
     .rows = {UNBOUND(2),
              {1, false, false, 0, 0, 0, false, false, false},
              UNBOUND(3)},
     .raised_at = 5,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* Paused (2.11+) for 5 s: undelivered by choice; its time starts when
     * the pause ends. */
    {.name = "paused, then resumed",
     .rows = {{5, false, true, 10, 0, 0, false, false, false}, UNBOUND(3)},
     .raised_at = 7,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* Created again while unbound: a new consumer, its time from then. */
    {.name = "created again while unbound",
     .rows = {UNBOUND(2), {3, false, false, 10, 0, 0, false, true, false}},
     .raised_at = 4,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* max_age 102 s, horizon 100 s: nothing delivered, the backlog (2 s
     * old at the onset) is evicted in 100 s, at the horizon: a warning. */
    {.name = "max_age evicts at the horizon",
     .horizon = 100,
     .max_age_ns = 102 * SEC,
     .rows = {UNBOUND(3)},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = 100,
     .cleared_at = -1},
    /* max_age 1 ns shorter: within the horizon, critical. */
    {.name = "max_age evicts 1 ns within the horizon",
     .horizon = 100,
     .max_age_ns = 102 * SEC - 1,
     .rows = {UNBOUND(3)},
     .raised_at = 2,
     .severity = C,
     .unbound = 2,
     .eviction = 99,
     .cleared_at = -1},
    /* A stream that discards new messages evicts nothing. */
    {.name = "max_age with discard new",
     .horizon = 100,
     .max_age_ns = 10 * SEC,
     .discard_new = true,
     .rows = {UNBOUND(3)},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* The backlog at max_msgs: eviction has begun (forecast 0). */
    {.name = "backlog at max_msgs",
     .max_msgs = 10,
     .rows = {UNBOUND(3)},
     .raised_at = 2,
     .severity = C,
     .unbound = 2,
     .eviction = 0,
     .cleared_at = -1},
    /* One message under it, steady: nothing forecast. */
    {.name = "backlog one under max_msgs",
     .max_msgs = 11,
     .rows = {UNBOUND(3)},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = -1},
    /* Bound again after the onset: cleared after the hold (30 s). */
    {.name = "bound again after the onset",
     .rows = {UNBOUND(3), BOUND(40)},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = 33},
    /* Its backlog drained (by another route): the same. */
    {.name = "backlog gone after the onset",
     .rows = {UNBOUND(3), {40, false, false, 0, 0, 0, false, false, false}},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = 33},
    /* Deleted: cleared at once. */
    {.name = "deleted after the onset",
     .rows = {UNBOUND(3), {1, false, false, 10, 0, 0, false, false, true}},
     .raised_at = 2,
     .severity = W,
     .unbound = 2,
     .eviction = -1,
     .cleared_at = 3},
};

/* A world whose engine has PushUnboundSeconds unbound_s and
 * RetentionHorizon horizon. */
static void unbound_world(world *w, double unbound_s, double horizon) {
  world_init(w, false);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.push_unbound_s = unbound_s;
  p.retention_horizon_s = horizon;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

static void run_case(const pu_case *k) {
  world w;
  unbound_world(&w, k->unbound_s > 0 ? k->unbound_s : 2,
                k->horizon > 0 ? k->horizon : 3600);
  nl_stream_snap *s = add_stream(&w, "P");
  s->max_age_ns = k->max_age_ns;
  s->discard_new = k->discard_new;
  s->max_msgs = k->max_msgs > 0 ? k->max_msgs : -1;
  nl_consumer_snap *c = add_consumer(&w, 0, "c");
  int64_t t = w.t;
  int poll = 0, raised_at = -1, cleared_at = -1, listed = 0;
  for (int i = 0; i < PU_ROWS && k->rows[i].times > 0; i++) {
    const pu_row *r = &k->rows[i];
    for (int n = 0; n < r->times; n++, poll++) {
      if (poll > 0)
        t += r->step_ns > 0 ? r->step_ns : SEC;
      if (n == 0 && r->recreate)
        c->created_ns += 100 * SEC;
      c->push = !r->pull;
      c->push_bound = r->bound;
      c->paused = r->paused;
      c->num_pending = r->pending;
      c->num_ack_pending = r->ack_pending;
      c->delivered_stream_seq = c->delivered_consumer_seq = r->ack_pending;
      s->last_seq = r->ack_pending + r->pending;
      s->msgs = s->last_seq;
      w.n_consumers = r->gone ? 0 : 1;
      s->consumer_count = r->gone ? 0 : 1;
      listed += !r->gone;
      w.t = t;
      int clears = w.clears[NL_PUSH_UNBOUND];
      world_poll(&w);
      if (raised_at < 0 && w.onsets[NL_PUSH_UNBOUND] > 0)
        raised_at = poll;
      if (cleared_at < 0 && w.clears[NL_PUSH_UNBOUND] > clears)
        cleared_at = poll;
    }
  }
  EXPECT_EQ(k, raised_at, k->raised_at);
  EXPECT_EQ(k, w.onsets[NL_PUSH_UNBOUND], k->raised_at >= 0 ? 1 : 0);
  EXPECT_EQ(k, cleared_at, k->cleared_at);
  if (k->raised_at >= 0 && raised_at >= 0) {
    const nl_finding *f = &w.last[NL_PUSH_UNBOUND];
    EXPECT_EQ(k, f->severity, k->severity);
    EXPECT_EQ(k, nl_finding_get(f, "unbound_s", -1), k->unbound);
    EXPECT_EQ(k, nl_finding_get(f, "eviction_forecast_s", -1), k->eviction);
    EXPECT_EQ(k, nl_finding_get(f, "num_pending", -1), k->rows[0].pending);
    EXPECT_EQ(k, nl_finding_get(f, "num_ack_pending", -1),
              k->rows[0].ack_pending);
  }
  /* The scenario: every poll that listed the consumer reached its
   * history (world_free), and its latest poll is the script's last. */
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "P", "c");
  if (w.n_consumers > 0) {
    const nl_sample *latest = st != NULL ? nl_state_latest(st) : NULL;
    EXPECT(k, latest != NULL && latest->t_ns == t &&
                  latest->num_pending == c->num_pending);
  } else {
    EXPECT(k, st == NULL);
  }
  EXPECT(k, listed > 0);
  world_free(&w);
}

static void test_push_unbound_boundaries(void) {
  /* The values written "one double above" are that. */
  CHECK(cases[1].unbound_s == nextafter(2.0, 3.0));
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    run_case(&cases[i]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_push_unbound_boundaries),
};

NL_TEST_MAIN(tests)
