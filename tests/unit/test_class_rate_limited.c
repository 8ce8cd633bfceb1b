/* test_class_rate_limited.c: RATE_LIMITED at the boundaries of its
 * predicate (docs/detectors.md, RATE_LIMITED): the window of
 * RateLimitedSeconds and of NL_RATE_MIN_POLLS polls, sent at 0.8 of the
 * limit, behind by 5 % of the arrivals over each half of the window, the
 * latest half window while held, and the run that starts again when a poll
 * cannot be judged, the limit changes, a counter goes back or the consumer
 * is created again.
 *
 * The scenarios make the estimated bytes of a delivery exactly 100: stream
 * "RL" (file storage) stores 77 bytes a message (47 beyond the record's
 * 30), and the reply subject of consumer "c" is 53 bytes while its
 * delivered sequences have six digits and its num_pending four. Its limit
 * of 16,000 bit/s is 2,000 B/s, 20 messages a second; 0.8 of it is 16 a
 * second, 80 in a poll of 5 s. RateLimitedSeconds is 60 (12 polls of
 * 5 s). */
#include "core/detect/nl_options.h"
#include "core/detect/nl_rate_limited.h"
#include "nl_test.h"
#include "nl_world.h"

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

#define LIMIT_BPS 16000
#define STORED 77

/* What the poll cannot judge for a moment. */
typedef enum {
  JUDGED = 0,
  UNBOUND,    /* No subscriber. */
  PAUSED,     /* Paused (2.11+). */
  AT_MAX_ACK, /* At max_ack_pending: its acks set the pace. */
} rl_hold;

/* One or more polls (times, at least 1). Before each poll but the very
 * first, the clock moves by step_ns (0: 5 s), `arrived` messages are
 * stored for the consumer and it is sent `sent` messages, `repeated` of
 * them deliveries again of messages it was sent before (and acks them).
 * At the row's first poll: bps (when not 0) becomes its limit, back moves
 * its delivered stream sequence back by one (restored state), recreate
 * creates it again; hold applies to each of its polls. */
typedef struct {
  int times;
  uint64_t sent, arrived;
  int64_t step_ns;
  uint64_t repeated;
  rl_hold hold;
  uint64_t bps;
  bool back;
  bool recreate;
} rl_row;

#define RL_ROWS 4

typedef struct {
  const char *name;
  rl_row rows[RL_ROWS];
  /* Expected: the poll of the onset (-1: none), its window_s and
   * window_polls, and the poll of the clearing (-1: none). */
  int raised_at;
  double window_s, window_polls;
  int cleared_at;
} rl_case;

/* Polls of 5 s sending s and storing a messages each. */
#define R(n, s, a)                                                             \
  { n, s, a, 0, 0, JUDGED, 0, false, false }

static const rl_case cases[] = {
    /* Sent 16 a second (0.8 of the limit), 20 arriving: raised when the
     * window spans 60 s, at the 13th poll. */
    {"at 0.8 of the limit and behind", {R(20, 80, 100)}, 12, 60, 12, -1},
    /* A limit above the arrivals: sent at the limit while the backlog
     * drains, not behind. */
    {"draining at the limit", {R(20, 100, 80)}, -1, 0, 0, -1},
    /* A standing backlog drained at the limit with nothing arriving. */
    {"draining with nothing arriving", {R(20, 100, 0)}, -1, 0, 0, -1},
    /* Held at max_ack_pending throughout: its acks set the pace. */
    {"at max_ack_pending throughout",
     {{20, 80, 100, 0, 0, AT_MAX_ACK, 0, false, false}},
     -1,
     0,
     0,
     -1},
    /* One message a poll fewer: under 0.8 of the limit, not held by it. */
    {"one message a poll under 0.8 of the limit",
     {R(20, 79, 100)},
     -1,
     0,
     0,
     -1},
    /* 95 sent of 100 arriving: behind by exactly 5 % of the arrivals. */
    {"behind by 5 % of the arrivals", {R(20, 95, 100)}, 12, 60, 12, -1},
    /* 96 of 100: 4 %, within the estimate's error. */
    {"behind by 4 % of the arrivals", {R(20, 96, 100)}, -1, 0, 0, -1},
    /* The second poll 1 ns early: the 13th poll is 1 ns short of 60 s
     * after the first; the window is whole a poll later. */
    {"window 1 ns short of RateLimitedSeconds",
     {R(1, 80, 100),
      {1, 80, 100, 5 * SEC - 1, 0, JUDGED, 0, false, false},
      R(20, 80, 100)},
     13,
     64,
     13,
     -1},
    /* Polls of 12 s: 60 s after five polls, but the window takes six. */
    {"polls bind: six polls of 12 s",
     {{10, 192, 240, 12 * SEC, 0, JUDGED, 0, false, false}},
     6,
     72,
     6,
     -1},
    /* Polls of 9 s: six polls span 54 s, the window takes seven. */
    {"seconds bind: seven polls of 9 s",
     {{10, 144, 180, 9 * SEC, 0, JUDGED, 0, false, false}},
     7,
     63,
     7,
     -1},
    /* Ten of the 80 sent are repeated deliveries: they count toward the
     * limit (the sent rise of delivered.consumer_seq). */
    {"repeated deliveries count toward the limit",
     {{20, 80, 100, 0, 10, JUDGED, 0, false, false}},
     12,
     60,
     12,
     -1},
    /* And as sent: 84 arriving against 80 sent is 4.8 % short, not
     * behind, though only 70 of them were new (repeated deliveries count
     * as sent, so that a consumer is never found shorter than it is). */
    {"repeated deliveries count as sent",
     {{20, 80, 84, 0, 10, JUDGED, 0, false, false}},
     -1,
     0,
     0,
     -1},
    /* Behind over the first half of each window only (then keeping up):
     * a burst, never raised though the whole window is behind. */
    {"behind over the first half only",
     {R(7, 80, 100), R(13, 80, 80)},
     -1,
     0,
     0,
     -1},
    /* Keeping up, then behind: raised once both halves of the window are
     * behind (the window from 10 s to 70 s). */
    {"behind over the second half first",
     {R(7, 80, 80), R(13, 80, 100)},
     14,
     60,
     12,
     -1},
    /* The limit set to 16,007 bit/s at poll 6 (the same 2,000 B/s): a new
     * run from there, raised 60 s later. */
    {"limit changed at the seventh poll",
     {R(6, 80, 100), {14, 80, 100, 0, 0, JUDGED, 16007, false, false}},
     18,
     60,
     12,
     -1},
    /* Its delivered stream sequence one back at poll 6: a new run. */
    {"delivered stream sequence back at the seventh poll",
     {R(6, 80, 100), {14, 80, 100, 0, 0, JUDGED, 0, true, false}},
     18,
     60,
     12,
     -1},
    /* No subscriber at poll 6: a new run from poll 7. */
    {"unbound at the seventh poll",
     {R(6, 80, 100),
      {1, 80, 100, 0, 0, UNBOUND, 0, false, false},
      R(13, 80, 100)},
     19,
     60,
     12,
     -1},
    /* Paused at poll 6: the same. */
    {"paused at the seventh poll",
     {R(6, 80, 100),
      {1, 80, 100, 0, 0, PAUSED, 0, false, false},
      R(13, 80, 100)},
     19,
     60,
     12,
     -1},
    /* At max_ack_pending at poll 6: the same. */
    {"at max_ack_pending at the seventh poll",
     {R(6, 80, 100),
      {1, 80, 100, 0, 0, AT_MAX_ACK, 0, false, false},
      R(13, 80, 100)},
     19,
     60,
     12,
     -1},
    /* Created again at poll 6: a new history, a new run. */
    {"created again at the seventh poll",
     {R(6, 80, 100), {14, 80, 100, 0, 0, JUDGED, 0, false, true}},
     18,
     60,
     12,
     -1},
    /* Raised, then keeping up from poll 13: the latest half window (from
     * the checkpoint at least 30 s back) is behind until poll 18, and the
     * finding clears after the hold, at poll 24. */
    {"keeping up after the onset",
     {R(13, 80, 100), R(20, 80, 80)},
     12,
     60,
     12,
     24},
    /* The fix: the limit doubled while raised clears it at once. */
    {"limit doubled after the onset",
     {R(13, 80, 100), {5, 80, 100, 0, 0, JUDGED, 2 * LIMIT_BPS, false, false}},
     12,
     60,
     12,
     13},
};

/* A world whose engine has RateLimitedSeconds 60. */
static void rate_world(world *w) {
  world_init(w, false);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.push_unbound_s = 2;
  p.rate_limited_s = 60;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

static void run_case(const rl_case *k) {
  world w;
  rate_world(&w);
  nl_stream_snap *s = add_stream(&w, "RL");
  nl_consumer_snap *c = add_consumer(&w, 0, "c");
  c->push = true;
  c->rate_limit_bps = LIMIT_BPS;
  c->delivered_stream_seq = c->delivered_consumer_seq = 100000;
  s->last_seq = 105000;
  int64_t t = w.t;
  int poll = 0, raised_at = -1, cleared_at = -1;
  uint64_t least_pending = UINT64_MAX, onset_bps = 0;
  bool exact = true;
  for (int i = 0; i < RL_ROWS && k->rows[i].times > 0; i++) {
    const rl_row *r = &k->rows[i];
    for (int n = 0; n < r->times; n++, poll++) {
      if (poll > 0) {
        t += r->step_ns > 0 ? r->step_ns : 5 * SEC;
        s->last_seq += r->arrived;
        c->delivered_stream_seq += r->sent - r->repeated;
        c->delivered_consumer_seq += r->sent;
      }
      if (n == 0 && r->bps > 0)
        c->rate_limit_bps = r->bps;
      if (n == 0 && r->back)
        c->delivered_stream_seq -= r->sent - r->repeated + 1;
      if (n == 0 && r->recreate)
        c->created_ns += 100 * SEC;
      c->push_bound = r->hold != UNBOUND;
      c->paused = r->hold == PAUSED;
      c->num_ack_pending = r->hold == AT_MAX_ACK ? 1000 : 0;
      c->ack_floor_stream_seq = c->delivered_stream_seq;
      c->ack_floor_consumer_seq = c->delivered_consumer_seq;
      c->num_pending = s->last_seq - c->delivered_stream_seq;
      s->msgs = s->last_seq;
      s->bytes = s->msgs * STORED;
      if (c->num_pending < least_pending)
        least_pending = c->num_pending;
      /* The premise: a delivery costs the limit 100 bytes. */
      exact &= nl_rate_bytes_per_delivery(c, s) == 100;
      w.t = t;
      int clears = w.clears[NL_RATE_LIMITED];
      world_poll(&w);
      if (raised_at < 0 && w.onsets[NL_RATE_LIMITED] > 0) {
        raised_at = poll;
        onset_bps = c->rate_limit_bps;
      }
      if (cleared_at < 0 && w.clears[NL_RATE_LIMITED] > clears)
        cleared_at = poll;
    }
  }
  EXPECT(k, exact);
  EXPECT_EQ(k, raised_at, k->raised_at);
  EXPECT_EQ(k, w.onsets[NL_RATE_LIMITED], k->raised_at >= 0 ? 1 : 0);
  EXPECT_EQ(k, cleared_at, k->cleared_at);
  if (k->raised_at >= 0 && raised_at >= 0) {
    const nl_finding *f = &w.last[NL_RATE_LIMITED];
    EXPECT_EQ(k, nl_finding_get(f, "window_s", -1), k->window_s);
    EXPECT_EQ(k, nl_finding_get(f, "window_polls", -1), k->window_polls);
    EXPECT_EQ(k, nl_finding_get(f, "bytes_per_delivery", -1), 100);
    EXPECT_EQ(k, nl_finding_get(f, "rate_limit_bps", -1), onset_bps);
  }
  /* The scenario: the consumer was polled at the script's last poll and
   * never ran out of messages (num_pending from 5,000, with four digits
   * throughout). */
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "RL", "c");
  const nl_sample *latest = st != NULL ? nl_state_latest(st) : NULL;
  EXPECT(k, latest != NULL && latest->t_ns == t &&
                latest->delivered_consumer_seq == c->delivered_consumer_seq);
  EXPECT(k, least_pending >= 1000 && c->num_pending <= 9999);
  /* And the class kept its watch of the consumer, under its last limit. */
  const nl_class_slot *slot =
      st != NULL ? nl_state_slot(st, NL_RATE_LIMITED) : NULL;
  const nl_rate_watch *watch = slot != NULL ? slot->state : NULL;
  EXPECT(k, watch != NULL && watch->limit_bps == c->rate_limit_bps);
  world_free(&w);
}

static void test_rate_limited_boundaries(void) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    run_case(&cases[i]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_rate_limited_boundaries),
};

NL_TEST_MAIN(tests)
