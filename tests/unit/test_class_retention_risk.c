/* test_class_retention_risk.c: RETENTION_RISK at the boundaries of its
 * forecast and of its raise, hold and clear (docs/detectors.md,
 * RETENTION_RISK): raised under the horizon, held under 1.2 x the horizon
 * (the onset's evidence kept in that band), a rise sustained over 30 s and
 * (up to the latest poll) and extrapolated at most 4 x as far, a trend
 * kept from 5 % of the limit and dropped under it, three polls before a
 * first raise,
 * SEQUENCE_GAP suppressing it, and the state after a fix, a recreated
 * consumer or the condition gone.
 *
 * The scenarios control the forecast exactly. Consumer "c" of stream "R"
 * is filtered, so its exposure E is its backlog (num_pending), rising by a
 * whole number of messages a second; the stream is at its max_bytes, so
 * its limit in messages L is the number of messages it holds, which each
 * poll sets (the average message size changes; the configuration does
 * not). The forecast is then (L - E) / G with G the rise of E a second. */
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

/* The stream's max_bytes: its bytes are set to it at every poll. */
#define MAX_BYTES 1000000000LL

/* One or more polls (times, at least 1). Before each poll but the very
 * first, the clock moves by step_ns (0: 1 s) and E by rise (a fall is
 * delivered, or lost when lost is set). L is limit, or E + room when limit
 * is 0. fix doubles max_bytes and recreate creates the consumer again, at
 * the row's first poll. */
typedef struct {
  int times;
  int64_t rise;
  int64_t room;
  int64_t limit;
  int64_t step_ns;
  bool lost;
  bool fix;
  bool recreate;
} rr_row;

#define RR_ROWS 5

typedef struct {
  const char *name;
  double horizon;       /* RetentionHorizon; 0: 100 s. */
  int64_t e0;           /* E at the first poll; 0: 1000. */
  uint64_t ack_pending; /* Of E, the messages delivered and not acked. */
  rr_row rows[RR_ROWS];
  /* Expected: the poll of the first onset (-1: none) and its forecast_s
   * (-1: not checked), the poll of the second onset (0: none), the poll of
   * the first clearing (-1: none), whether it is held at the end and its
   * forecast_s then (0: not checked), and the poll of SEQUENCE_GAP's
   * onset (0: none). */
  int raised_at;
  double onset_forecast;
  int reraised_at;
  int cleared_at;
  bool held_at_end;
  double end_forecast;
  int gap_at;
} rr_case;

/* A rise of 10 messages a second. */
#define R10(n, room)                                                           \
  { n, 10, room, 0, 0, false, false, false }
/* No rise. */
#define FLAT(n, room)                                                          \
  { n, 0, room, 0, 0, false, false, false }

static const rr_case cases[] = {
    /* Sustained 30 s (the span starts counting at the first poll), the
     * forecast 99 s under a horizon of 100 s: raised. */
    {.name = "forecast 1 s under the horizon",
     .rows = {R10(30, 2000), R10(1, 990)},
     .raised_at = 30,
     .onset_forecast = 99,
     .cleared_at = -1,
     .held_at_end = true},
    /* At the horizon exactly: not under it. */
    {.name = "forecast at the horizon",
     .rows = {R10(30, 2000), R10(20, 1000)},
     .raised_at = -1,
     .cleared_at = -1},
    /* The same forecast under a horizon one double larger: raised. */
    {.name = "forecast at the horizon, horizon one double larger",
     .horizon = 100.00000000000001,
     .rows = {R10(30, 2000), R10(1, 1000)},
     .raised_at = 30,
     .onset_forecast = 100,
     .cleared_at = -1,
     .held_at_end = true},
    /* Between the horizon and 1.2 x it (119.9 s): never raised. */
    {.name = "in the band at onset",
     .rows = {R10(30, 2000), R10(40, 1199)},
     .raised_at = -1,
     .cleared_at = -1},
    /* Raised at 90 s, then in the band for 40 s: held, with the onset's
     * evidence. */
    {.name = "in the band while held",
     .rows = {R10(30, 2000), R10(1, 900), R10(40, 1199)},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = -1,
     .held_at_end = true,
     .end_forecast = 90},
    /* Back under the horizon while held: the evidence is the new one. */
    {.name = "under the horizon again while held",
     .rows = {R10(30, 2000), R10(1, 900), R10(5, 1100), R10(1, 800)},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = -1,
     .held_at_end = true,
     .end_forecast = 80},
    /* At 1.2 x the horizon exactly: the condition is gone (poll 31) and
     * the finding clears after the hold (30 s and two polls). */
    {.name = "at 1.2 x the horizon while held",
     .rows = {R10(30, 2000), R10(1, 900), R10(40, 1200)},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = 61},
    /* The same under a horizon one double larger: 120 s is in its band. */
    {.name = "at 1.2 x the horizon, horizon one double larger",
     .horizon = 100.00000000000001,
     .rows = {R10(30, 2000), R10(1, 900), R10(40, 1200)},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = -1,
     .held_at_end = true,
     .end_forecast = 90},
    /* Out of the band for one poll, then back in it: the band holds a
     * finding whose condition held at the poll before; once missing, it
     * takes a forecast under the horizon to hold it again, and the
     * finding clears after the hold. */
    {.name = "back in the band after leaving it",
     .rows = {R10(30, 2000), R10(1, 900), R10(1, 1200), R10(40, 1100)},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = 61},
    /* 5 s polls and one 10 s late: the rise spans exactly 30 s at the
     * sixth poll (forecast 10 s, horizon 3600 s). */
    {.name = "span of 30 s",
     .horizon = 3600,
     .rows = {{5, 50, 100, 0, 5 * SEC, false, false, false},
              {1, 100, 100, 0, 10 * SEC, false, false, false}},
     .raised_at = 5,
     .onset_forecast = 10,
     .cleared_at = -1,
     .held_at_end = true},
    /* The late poll 1 ns sooner: a span 1 ns short of 30 s; raised a poll
     * later. */
    {.name = "span 1 ns short of 30 s",
     .horizon = 3600,
     .rows = {{5, 50, 100, 0, 5 * SEC, false, false, false},
              {1, 100, 100, 0, 10 * SEC - 1, false, false, false},
              {1, 50, 100, 0, 5 * SEC, false, false, false}},
     .raised_at = 6,
     .onset_forecast = 9,
     .cleared_at = -1,
     .held_at_end = true},
    /* A forecast of 120 s at a span of 30 s is 4 x the span: trusted. */
    {.name = "forecast 4 x the span",
     .horizon = 3600,
     .rows = {R10(30, 2000), R10(1, 1200)},
     .raised_at = 30,
     .onset_forecast = 120,
     .cleared_at = -1,
     .held_at_end = true},
    /* 120.1 s is not, until the span is 31 s (measured to the latest
     * poll). */
    {.name = "forecast just over 4 x the span",
     .horizon = 3600,
     .rows = {R10(30, 2000), R10(6, 1201)},
     .raised_at = 31,
     .onset_forecast = 120,
     .cleared_at = -1,
     .held_at_end = true},
    /* E at L: eviction has begun (forecast 0), raised on the third
     * poll. */
    {.name = "at the limit for three polls",
     .rows = {FLAT(3, 0)},
     .raised_at = 2,
     .onset_forecast = 0,
     .cleared_at = -1,
     .held_at_end = true},
    /* A rise that levels off (E steady from poll 20, 50 s from L): by the
     * time the span is 30 s there is no rise left to extrapolate. */
    {.name = "a rise that levels off",
     .rows = {R10(20, 500), FLAT(30, 500)},
     .raised_at = -1,
     .cleared_at = -1},
    /* At the limit for two polls only, then one message below it. */
    {.name = "at the limit for two polls",
     .rows = {FLAT(2, 0), FLAT(10, 1)},
     .raised_at = -1,
     .cleared_at = -1},
    /* The backlog counts what was delivered and not acked: at the limit
     * with one message of it unacked. */
    {.name = "at the limit with one message unacked",
     .ack_pending = 1,
     .rows = {FLAT(3, 0)},
     .raised_at = 2,
     .onset_forecast = 0,
     .cleared_at = -1,
     .held_at_end = true},
    /* One message below it, with no rise: nothing to forecast. */
    {.name = "one message below the limit",
     .rows = {FLAT(12, 1)},
     .raised_at = -1,
     .cleared_at = -1},
    /* L 1000, E from 50 at 10/s: its trend is kept from 50 (5 %, no longer
     * far, poll 0), and the span counts from there: raised 30 s later,
     * forecast 65 s. */
    {.name = "rise from 5 % of the limit",
     .e0 = 50,
     .rows = {{40, 10, 0, 1000, 0, false, false, false}},
     .raised_at = 30,
     .onset_forecast = 65,
     .cleared_at = -1,
     .held_at_end = true},
    /* From 49: far from the limit at poll 0; its trend starts at poll 1
     * (59). */
    {.name = "rise from one message under 5 %",
     .e0 = 49,
     .rows = {{40, 10, 0, 1000, 0, false, false, false}},
     .raised_at = 31,
     .onset_forecast = 64,
     .cleared_at = -1,
     .held_at_end = true},
    /* E at 190 falls to 50 (5 %, delivered) and rises again: still kept,
     * the new rise counts from the fall (poll 10): raised at poll 40. */
    {.name = "fall to 5 % of the limit",
     .e0 = 100,
     .rows = {{10, 10, 0, 1000, 0, false, false, false},
              {1, -140, 0, 1000, 0, false, false, false},
              {30, 10, 0, 1000, 0, false, false, false}},
     .raised_at = 40,
     .onset_forecast = 65,
     .cleared_at = -1,
     .held_at_end = true},
    /* To 49, under 5 %: far from the limit, its trend is dropped and
     * starts again once E is no longer far (59 at poll 11): raised at poll
     * 41. */
    {.name = "fall to one message under 5 %",
     .e0 = 100,
     .rows = {{10, 10, 0, 1000, 0, false, false, false},
              {1, -141, 0, 1000, 0, false, false, false},
              {36, 10, 0, 1000, 0, false, false, false}},
     .raised_at = 41,
     .onset_forecast = 64,
     .cleared_at = -1,
     .held_at_end = true},
    /* At the limit while a message is lost unread at every poll:
     * SEQUENCE_GAP (poll 1) suppresses it. */
    {.name = "at the limit with a loss each poll",
     .rows = {FLAT(1, 0), {10, -1, 0, 0, 0, true, false, false}},
     .raised_at = -1,
     .cleared_at = -1,
     .gap_at = 1},
    /* The same fall delivered: no loss, raised on the third poll. */
    {.name = "at the limit with a delivery each poll",
     .rows = {FLAT(1, 0), {10, -1, 0, 0, 0, false, false, false}},
     .raised_at = 2,
     .onset_forecast = 0,
     .cleared_at = -1,
     .held_at_end = true},
    /* The fix: max_bytes doubled (the forecast far off): cleared at
     * once. */
    {.name = "limit raised",
     .rows = {R10(30, 2000), R10(1, 900), {5, 10, 5000, 0, 0, false, true}},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = 31},
    /* Caught up (E to 10, delivered), no fix: cleared after the hold. */
    {.name = "caught up",
     .rows = {R10(30, 2000), R10(1, 900), {1, -1290, 2000, 0}, FLAT(35, 2000)},
     .raised_at = 30,
     .onset_forecast = 90,
     .cleared_at = 61},
    /* Created again with nothing to receive: cleared at once, and at the
     * limit again it takes three polls of the new history to raise it. */
    {.name = "recreated",
     .rows = {FLAT(3, 0),
              {1, -990, 2000, 0, 0, false, false, true},
              {1, 990, 0},
              FLAT(3, 0)},
     .raised_at = 2,
     .onset_forecast = 0,
     .reraised_at = 5,
     .cleared_at = 3,
     .held_at_end = true},
};

/* A world whose engine has RetentionHorizon horizon. */
static void horizon_world(world *w, double horizon) {
  world_init(w, false);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.push_unbound_s = 2;
  p.retention_horizon_s = horizon;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

static const nl_consumer_state *state_of(world *w) {
  return nl_registry_find(nl_engine_registry(w->engine), "R", "c");
}

static void run_case(const rr_case *k) {
  world w;
  horizon_world(&w, k->horizon > 0 ? k->horizon : 100);
  nl_stream_snap *s = add_stream(&w, "R");
  s->max_bytes = MAX_BYTES;
  s->last_seq = 1000000;
  nl_consumer_snap *c = add_consumer(&w, 0, "c");
  c->filtered = true;
  int64_t e = k->e0 > 0 ? k->e0 : 1000;
  int64_t t = w.t;
  int poll = 0, raised_at = -1, cleared_at = -1, reraised_at = 0, gap_at = 0;
  double onset_forecast = -1, onset_exposure = -1;
  for (int i = 0; i < RR_ROWS && k->rows[i].times > 0; i++) {
    const rr_row *r = &k->rows[i];
    for (int n = 0; n < r->times; n++, poll++) {
      if (poll > 0) {
        t += r->step_ns > 0 ? r->step_ns : SEC;
        e += r->rise;
        if (r->rise < 0 && !r->lost)
          c->delivered_consumer_seq += (uint64_t)-r->rise;
      }
      if (n == 0 && r->fix)
        s->max_bytes *= 2;
      if (n == 0 && r->recreate)
        c->created_ns += 100 * SEC;
      c->num_pending = (uint64_t)e - k->ack_pending;
      c->num_ack_pending = k->ack_pending;
      c->delivered_stream_seq = c->delivered_consumer_seq;
      s->msgs = (uint64_t)(r->limit > 0 ? r->limit : e + r->room);
      s->bytes = (uint64_t)s->max_bytes;
      s->last_seq += 100;
      s->first_seq = s->last_seq - s->msgs + 1;
      w.t = t;
      int onsets = w.onsets[NL_RETENTION_RISK];
      int clears = w.clears[NL_RETENTION_RISK];
      world_poll(&w);
      if (w.onsets[NL_RETENTION_RISK] > onsets) {
        if (raised_at < 0) {
          raised_at = poll;
          onset_forecast =
              nl_finding_get(&w.last[NL_RETENTION_RISK], "forecast_s", -1);
          onset_exposure = nl_finding_get(&w.last[NL_RETENTION_RISK],
                                          "exposure_messages", -1);
          EXPECT_EQ(k, onset_exposure, e);
        } else if (reraised_at == 0) {
          reraised_at = poll;
        }
      }
      if (w.clears[NL_RETENTION_RISK] > clears && cleared_at < 0)
        cleared_at = poll;
      if (w.onsets[NL_SEQUENCE_GAP] > 0 && gap_at == 0)
        gap_at = poll;
      /* Never raised at a poll that sees SEQUENCE_GAP's condition. */
      const nl_consumer_state *now = state_of(&w);
      EXPECT(k, !(now != NULL &&
                  nl_finding_holding(now->active[NL_SEQUENCE_GAP]) &&
                  w.onsets[NL_RETENTION_RISK] > onsets));
    }
  }
  EXPECT_EQ(k, raised_at, k->raised_at);
  if (k->raised_at >= 0 && k->onset_forecast >= 0)
    EXPECT_EQ(k, onset_forecast, k->onset_forecast);
  EXPECT_EQ(k, reraised_at, k->reraised_at);
  EXPECT_EQ(k, cleared_at, k->cleared_at);
  EXPECT_EQ(k, gap_at, k->gap_at);
  EXPECT_EQ(k, w.onsets[NL_RETENTION_RISK],
            (k->raised_at >= 0) + (k->reraised_at > 0));
  const nl_consumer_state *st = state_of(&w);
  EXPECT(k, st != NULL);
  if (st != NULL) {
    const nl_finding *held = st->active[NL_RETENTION_RISK];
    EXPECT_EQ(k, held != NULL, k->held_at_end);
    if (held != NULL && k->end_forecast > 0)
      EXPECT_EQ(k, nl_finding_get(held, "forecast_s", -1), k->end_forecast);
    /* The scenario: the backlog polled last, and a trend kept for it (E
     * mattered) unless it was caught up. */
    const nl_sample *latest = nl_state_latest(st);
    EXPECT(k, latest != NULL &&
                  latest->num_pending + latest->num_ack_pending == (uint64_t)e);
    EXPECT_EQ(k, st->forecast != NULL, e * 20 >= (int64_t)s->msgs);
  }
  world_free(&w);
}

static void test_retention_risk_boundaries(void) {
  /* The horizons written "one double larger" are that. */
  CHECK(cases[2].horizon == nextafter(100.0, 200.0));
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    run_case(&cases[i]);
}

/* An unfiltered consumer's exposure: the messages from its oldest unacked
 * one (above its ack floor) to the head that the stream still stores, at
 * least its backlog. Stream "U" (max_msgs 100, holding first-last, msgs of
 * them) and consumer "c" stand for five polls. */
typedef struct {
  const char *name;
  uint64_t first, last, msgs;
  uint64_t floor, dseq, pending, ack_pending;
  int raised_at; /* -1: none. */
} rr_unfiltered_case;

static const rr_unfiltered_case unfiltered_cases[] = {
    /* 51-150 from the floor at 50: 100, the limit (its backlog is 95:
     * five of 51-60 unacked, four acked above the floor). */
    {"exposure from the ack floor at the limit", 51, 150, 100, 50, 60, 90, 5,
     2},
    /* The floor one higher: 99. */
    {"exposure from the ack floor one below the limit", 51, 150, 100, 51, 60,
     90, 5, -1},
    /* A work queue whose acked messages left the stream: the stream holds
     * 60 of 51-150, and those are what must stay. */
    {"exposure of a work queue: what the stream still holds", 51, 150, 60, 50,
     60, 50, 10, -1},
};

static void run_unfiltered_case(const rr_unfiltered_case *k) {
  world w;
  horizon_world(&w, 100);
  nl_stream_snap *s = add_stream(&w, "U");
  s->max_msgs = 100;
  s->first_seq = k->first;
  s->last_seq = k->last;
  s->msgs = k->msgs;
  nl_consumer_snap *c = add_consumer(&w, 0, "c");
  c->ack_floor_stream_seq = c->ack_floor_consumer_seq = k->floor;
  c->delivered_stream_seq = c->delivered_consumer_seq = k->dseq;
  c->num_pending = k->pending;
  c->num_ack_pending = k->ack_pending;
  int raised_at = -1;
  for (int poll = 0; poll < 5; poll++) {
    world_poll(&w);
    if (raised_at < 0 && w.onsets[NL_RETENTION_RISK] > 0)
      raised_at = poll;
  }
  EXPECT_EQ(k, raised_at, k->raised_at);
  EXPECT_EQ(k, w.onsets[NL_SEQUENCE_GAP], 0);
  /* The scenario: its exposure mattered (a trend is kept for it). */
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "U", "c");
  EXPECT(k, st != NULL && st->forecast != NULL && st->count == 5);
  world_free(&w);
}

static void test_retention_risk_unfiltered_exposure(void) {
  for (size_t i = 0; i < sizeof(unfiltered_cases) / sizeof(unfiltered_cases[0]);
       i++)
    run_unfiltered_case(&unfiltered_cases[i]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_retention_risk_boundaries),
    NL_TEST(test_retention_risk_unfiltered_exposure),
};

NL_TEST_MAIN(tests)
