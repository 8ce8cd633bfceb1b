/* test_class_missing_progress.c: the boundaries of MISSING_PROGRESS
 * (detect/nl_missing_progress.c): the standing floor with a redelivery for
 * factor x delay, the grace after a long task ends, the precedence of
 * ACK_WAIT_VIOLATION over it, and its resets, case by case.
 *
 * The long-tasks rule (expiry rounds recurring as a small share of the
 * deliveries) is judged by the rounds of nl_slow_processing.c, whose
 * boundaries, and the share between the two classes, are in
 * test_class_ack_wait_violation.c.
 *
 * The consumer's redelivery delay is 10 s and the polls are 1 s apart, so
 * that the stuck rule (2 x delay = 20 s) decides before expiry rounds,
 * 10 s apart, can recur over more than delay + dt = 11 s. */
#include "core/nl_engine.h"
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

#define MS 1000000LL
#define NONE (-1)
#define MAX_POLLS 80

/* A check that names the case it fails in. */
#define EXPECT(k, cond)                                                        \
  do {                                                                         \
    if (!(cond)) {                                                             \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: case \"%s\": check failed: %s\n", __FILE__,    \
              __LINE__, (k)->name, #cond);                                     \
    }                                                                          \
  } while (0)

#define EXPECT_EQ(k, got, want)                                                \
  do {                                                                         \
    long long g_ = (long long)(got), w_ = (long long)(want);                   \
    if (g_ != w_) {                                                            \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: case \"%s\": %s is %lld, expected %lld\n",     \
              __FILE__, __LINE__, (k)->name, #got, g_, w_);                    \
    }                                                                          \
  } while (0)

/* A world whose engine runs with MissingProgressFactor factor (0: the
 * default). */
static void world_with(world *w, bool config_classes, double factor) {
  world_init(w, config_classes);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = config_classes;
  p.push_unbound_s = 2;
  if (factor > 0)
    p.missing_progress_factor = factor;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

static nl_consumer_state *state_of(world *w) {
  return nl_registry_find(nl_engine_registry(w->engine), "MP", "task");
}

static const nl_finding *held(world *w, nl_class cls) {
  nl_consumer_state *st = state_of(w);
  return st != NULL ? st->active[cls] : NULL;
}

/* What the history holds of the standing floor at the last poll, for the
 * silent cases to show that their scenario happened. */
typedef enum {
  FLOOR_ANY,       /* Not looked at. */
  FLOOR_STUCK,     /* Standing with later messages acked past it. */
  FLOOR_NOT_ACKED, /* Standing with nothing acked past it. */
  FLOOR_UNPROVEN,  /* Perhaps restored: not standing for the rules. */
} floor_seen;

/* A long task, stream sequence 101, at the ack floor (100) of consumer
 * MP/task from before the first poll, with 29 later messages delivered;
 * from poll acks_from on, later messages are acked past it (ack_floor's
 * last_active advances), `fresh` new ones delivered each poll, and
 * `again[i]` redelivered by expiry in the interval that ends at poll i.
 * When the task is done the floor follows 30 behind the newest delivery
 * with `pending` outstanding (no floor stands any more). A consumer that
 * stops acking (acks_stop) takes no new message from then on. */
typedef struct {
  const char *name;
  unsigned polls; /* Polls 0 .. polls - 1. */
  unsigned again[MAX_POLLS];
  unsigned fresh;
  unsigned pending;   /* num_ack_pending (0: 2). */
  unsigned acks_from; /* The first poll with acks (0: poll 1). */
  unsigned acks_stop; /* The first poll without acks again (0: never). */
  /* The floor moves to 10 below the newest delivery at move_poll and
   * stands there again (another long task; 0: it does not). */
  unsigned move_poll;
  unsigned done_poll;  /* The long tasks end from this poll (0: never). */
  unsigned shift_poll; /* This poll is moved by shift_ms. */
  int64_t shift_ms;
  unsigned gap_poll; /* A gap in what was seen, at this poll (0: none). */
  double factor;     /* MissingProgressFactor (0: 2). */
  /* nats_lens.max_processing, with the configuration classes on (NULL:
   * none, and off). */
  const char *declared;
  int mp_onset; /* Poll of the onset, or NONE. */
  int awv_onset;
  /* At the last poll: MISSING_PROGRESS held with its condition seen (1),
   * held without it (0), or not looked at (-1). */
  int holding;
  floor_seen floor;
  unsigned stuck_redeliveries; /* With FLOOR_STUCK: counted while stuck. */
} stuck_case;

static void run_stuck(const stuck_case *k) {
  world w;
  world_with(&w, k->declared != NULL, k->factor);
  nl_stream_snap *s = add_stream(&w, "MP");
  s->last_seq = s->msgs = 100000;
  nl_consumer_snap *c = add_consumer(&w, 0, "task");
  c->ack_wait_ns = 10 * SEC;
  if (k->declared != NULL)
    EXPECT(k, nl_consumer_snap_set_meta(c, "nats_lens.max_processing",
                                        k->declared) == 0);
  c->delivered_stream_seq = c->delivered_consumer_seq = 130;
  c->ack_floor_stream_seq = 100;
  c->num_pending = 20;
  unsigned pending = k->pending ? k->pending : 2;
  unsigned acks_from = k->acks_from ? k->acks_from : 1;
  int64_t base = w.t;
  c->ack_last_ns = base - 5 * SEC;
  int mp = NONE, awv = NONE;
  uint64_t total = 0;
  for (unsigned i = 0; i < k->polls; i++) {
    int64_t t = base + (int64_t)i * SEC;
    if (k->shift_ms != 0 && i == k->shift_poll)
      t += k->shift_ms * MS;
    if (k->gap_poll != 0 && i == k->gap_poll)
      nl_engine_gap(w.engine, t);
    /* A consumer that stopped acking takes no new message either. */
    bool stopped = k->acks_stop != 0 && i >= k->acks_stop;
    unsigned fresh = stopped ? 0 : k->fresh;
    if (i > 0) {
      c->delivered_stream_seq += fresh;
      c->delivered_consumer_seq += fresh + k->again[i];
      total += k->again[i];
    }
    if (i >= acks_from && !stopped)
      c->ack_last_ns = t - SEC / 10;
    if (k->move_poll != 0 && i == k->move_poll)
      c->ack_floor_stream_seq = c->delivered_stream_seq - 10;
    if (k->done_poll != 0 && i >= k->done_poll)
      c->ack_floor_stream_seq = c->delivered_stream_seq - 30;
    c->num_ack_pending = pending;
    c->num_redelivered = k->again[i] ? 1 : 0;
    w.t = t;
    world_poll(&w);
    if (mp == NONE && w.onsets[NL_MISSING_PROGRESS] > 0)
      mp = (int)i;
    if (awv == NONE && w.onsets[NL_ACK_WAIT_VIOLATION] > 0)
      awv = (int)i;
  }
  EXPECT_EQ(k, mp, k->mp_onset);
  EXPECT_EQ(k, awv, k->awv_onset);
  EXPECT_EQ(k, w.onsets[NL_NAK_STORM], 0);
  /* The scenario happened: every redelivery was counted, and none as a
   * NAK's (each is an expiry the stuck rule may count). */
  nl_consumer_state *st = state_of(&w);
  EXPECT(k, st != NULL && st->redelivered_total == total);
  for (unsigned e = 0; st != NULL && e < NL_EVENTS_LEN; e++) {
    const nl_redelivery_event *ev = nl_state_event(st, e);
    EXPECT(k, ev == NULL || !ev->beyond_expiry);
  }
  if (k->floor == FLOOR_STUCK) {
    EXPECT(k, st != NULL && st->acked_since_floor && !st->floor_unproven);
    EXPECT(k,
           st != NULL && st->redelivered_since_floor == k->stuck_redeliveries);
  }
  if (k->floor == FLOOR_NOT_ACKED)
    EXPECT(k, st != NULL && !st->acked_since_floor && !st->floor_unproven &&
                  st->longest_pin_ns >= 40 * SEC);
  if (k->floor == FLOOR_UNPROVEN)
    EXPECT(k, st != NULL && st->floor_unproven && !st->acked_since_floor);
  if (k->holding >= 0) {
    EXPECT(k, held(&w, NL_MISSING_PROGRESS) != NULL);
    EXPECT_EQ(k, nl_finding_holding(held(&w, NL_MISSING_PROGRESS)), k->holding);
  }
  /* The evidence names the task at the floor (kept through the grace). */
  if (mp != NONE && k->holding == 1 && k->move_poll == 0) {
    const nl_finding *f = held(&w, NL_MISSING_PROGRESS);
    EXPECT(k, f != NULL && nl_finding_get(f, "stuck_stream_seq", 0) == 101);
  }
  world_free(&w);
}

static const stuck_case stuck_cases[] = {
    /* Later messages acked past the task from poll 1; it is redelivered
     * at 11 and 21: the floor has stood 2 x delay at poll 21. */
    {.name = "stuck exactly 2 x delay with a redelivery",
     .polls = 22,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 1},
    /* The first ack past the floor 1 ms later: 1 ms short at poll 21. */
    {.name = "stuck 1 ms short of 2 x delay",
     .polls = 23,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .shift_poll = 1,
     .shift_ms = 1,
     .mp_onset = 22,
     .awv_onset = NONE,
     .holding = 1},
    /* MissingProgressFactor 2.5: 25 s. */
    {.name = "stuck exactly 2.5 x delay with a factor of 2.5",
     .polls = 27,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .factor = 2.5,
     .mp_onset = 26,
     .awv_onset = NONE,
     .holding = 1},
    /* A long task that sends in-progress acks is never redelivered: the
     * floor stands 40 s with later messages acked, and that is healthy. */
    {.name = "stuck without a redelivery (in-progress acks)",
     .polls = 42,
     .fresh = 4,
     .mp_onset = NONE,
     .awv_onset = NONE,
     .holding = -1,
     .floor = FLOOR_STUCK,
     .stuck_redeliveries = 0},
    /* The only redelivery came before later messages were acked (the
     * stuck period starts at poll 3): it does not count. */
    {.name = "redelivered only before the stuck period",
     .polls = 30,
     .again = {[1] = 1},
     .fresh = 4,
     .acks_from = 3,
     .mp_onset = NONE,
     .awv_onset = NONE,
     .holding = -1,
     .floor = FLOOR_STUCK,
     .stuck_redeliveries = 0},
    /* One redelivery during it does, 2 x delay after its start. */
    {.name = "redelivered once during the stuck period",
     .polls = 24,
     .again = {[4] = 1},
     .fresh = 4,
     .acks_from = 3,
     .mp_onset = 23,
     .awv_onset = NONE,
     .holding = 1},
    /* Nothing acked past the floor: a single slow message is no stuck
     * period, however often it comes back. */
    {.name = "floor standing with nothing acked past it",
     .polls = 42,
     .again = {[11] = 1, [21] = 1, [31] = 1, [41] = 1},
     .fresh = 0,
     .acks_from = 60,
     .mp_onset = NONE,
     .awv_onset = NONE,
     .holding = -1,
     .floor = FLOOR_NOT_ACKED},
    /* The share of the rounds: exactly a quarter is ACK_WAIT_VIOLATION's
     * (once the rounds recur, at 31), never a stuck long task. */
    {.name = "stuck with a round's share exactly 0.25",
     .polls = 32,
     .again = {[11] = 1, [21] = 1, [31] = 1},
     .fresh = 3,
     .mp_onset = NONE,
     .awv_onset = 31,
     .holding = -1},
    /* A fifth is a few long tasks. */
    {.name = "stuck with a round's share 0.2",
     .polls = 32,
     .again = {[11] = 1, [21] = 1, [31] = 1},
     .fresh = 4,
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 1},
    /* The grace: the task is done at poll 25; the finding holds for one
     * more 2 x delay (to poll 45) while the next may be building up. */
    {.name = "grace: exactly 2 x delay after the task ended",
     .polls = 46,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .done_poll = 25,
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 1},
    /* The task done 1 ms earlier: over at poll 45. */
    {.name = "grace: 1 ms more than 2 x delay after the task ended",
     .polls = 46,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .done_poll = 25,
     .shift_poll = 25,
     .shift_ms = -1,
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 0},
    /* After a gap (a server restart) the floor may be one the server
     * restored: it does not stand until it moves. The round at 11 falls
     * within delay + 2 polls of the gap, and 21 and 31 alone span only
     * 10 s: nothing. */
    {.name = "floor standing since a gap",
     .polls = 41,
     .again = {[11] = 1, [21] = 1, [31] = 1},
     .fresh = 4,
     .gap_poll = 1,
     .mp_onset = NONE,
     .awv_onset = NONE,
     .holding = -1,
     .floor = FLOOR_UNPROVEN},
    /* The floor moves forward at 3 (proven) and stands again: stuck from
     * the first ack after it (4), so raised at 24. */
    {.name = "floor proven by moving after a gap",
     .polls = 25,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .gap_poll = 1,
     .move_poll = 3,
     .mp_onset = 24,
     .awv_onset = NONE,
     .holding = 1},
    /* A declared processing time not shorter than the delay raises
     * ACK_WAIT_VIOLATION at the first poll, and it suppresses the long
     * task's MISSING_PROGRESS. */
    {.name = "declared exactly the delay",
     .polls = 32,
     .again = {[11] = 1, [21] = 1, [31] = 1},
     .fresh = 4,
     .declared = "10s",
     .mp_onset = NONE,
     .awv_onset = 0,
     .holding = -1},
    /* 1 ns shorter: no ACK_WAIT_VIOLATION, and the stuck task is found. */
    {.name = "declared 1 ns under the delay",
     .polls = 22,
     .again = {[11] = 1, [21] = 1},
     .fresh = 4,
     .declared = "9999999999ns",
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 1},
    /* ACK_WAIT_VIOLATION from the traffic suppresses MISSING_PROGRESS:
     * the task is done at 22 and MISSING_PROGRESS would hold through its
     * grace, but at 23 most deliveries are redelivered (the rounds' share
     * 10/22) and recur over 12 s: ACK_WAIT_VIOLATION, and
     * MISSING_PROGRESS's condition is suppressed. */
    {.name = "ACK_WAIT_VIOLATION suppresses the grace",
     .polls = 24,
     .again = {[11] = 1, [21] = 1, [23] = 8},
     .fresh = 4,
     .pending = 10,
     .done_poll = 22,
     .mp_onset = 21,
     .awv_onset = 23,
     .holding = 0},
    /* A consumer still delivered to that stopped acking (the whole
     * consumer hung after poll 2, its pull requests still waiting): the
     * task comes back at 14 and 24, more than delay + dt after the last
     * ack. No later message is being acked: no long task among quick
     * ones, and no MISSING_PROGRESS. */
    {.name = "a consumer still delivered to that stopped acking",
     .polls = 40,
     .again = {[14] = 1, [24] = 1, [34] = 1},
     .fresh = 4,
     .acks_stop = 3,
     .mp_onset = NONE,
     .awv_onset = NONE,
     .holding = -1,
     .floor = FLOOR_STUCK,
     .stuck_redeliveries = 3},
    /* The same consumer acking on: the long task is found at 21. */
    {.name = "the same consumer acking on",
     .polls = 22,
     .again = {[14] = 1},
     .fresh = 4,
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 1},
    /* The stuck period lasts while later messages are acked, as a round
     * counts while the consumer acks: at poll 21, where the floor has
     * stood 2 x delay, the last ack (poll 10) is exactly delay + dt
     * old. */
    {.name = "last ack exactly delay + dt before the stuck limit",
     .polls = 22,
     .again = {[5] = 1},
     .fresh = 4,
     .acks_stop = 11,
     .mp_onset = 21,
     .awv_onset = NONE,
     .holding = 1},
    /* 1 ms older: the consumer stopped acking before the limit. */
    {.name = "last ack 1 ms more than delay + dt before the stuck limit",
     .polls = 30,
     .again = {[5] = 1},
     .fresh = 4,
     .acks_stop = 11,
     .shift_poll = 10,
     .shift_ms = -1,
     .mp_onset = NONE,
     .awv_onset = NONE,
     .holding = -1,
     .floor = FLOOR_STUCK,
     .stuck_redeliveries = 1},
};

static void test_mp_stuck_boundaries(void) {
  for (size_t i = 0; i < sizeof(stuck_cases) / sizeof(stuck_cases[0]); i++)
    run_stuck(&stuck_cases[i]);
}

/* ---- After a reset ---------------------------------------------------- */

typedef enum {
  RESET_FIX,      /* ack_wait raised to 30 s: the configuration changed. */
  RESET_RECREATE, /* Deleted and created again: a new history. */
  RESET_GONE,     /* The long task ends; acks go on. */
} reset_kind;

typedef struct {
  const char *name;
  reset_kind kind;
  /* Polls from the reset (included) to the one that clears it. */
  int clears_after;
  /* The consumer created again: its own long task is redelivered this
   * many polls after the reset (0: never, it sends in-progress acks). */
  int redelivered_after;
  int next_onset; /* Polls from the reset to the next onset, or NONE. */
} reset_case;

static const reset_case reset_cases[] = {
    /* A fix clears at the next poll, and nothing comes back. */
    {.name = "ack_wait raised",
     .kind = RESET_FIX,
     .clears_after = 1,
     .next_onset = NONE},
    /* Created again: cleared at once. The new consumer's floor stands with
     * later messages acked and no redelivery: nothing comes back (its
     * redeliveries while stuck start from none). */
    {.name = "consumer created again, its task sending in-progress acks",
     .kind = RESET_RECREATE,
     .clears_after = 1,
     .next_onset = NONE},
    /* Its task redelivered 3 s after: its stuck period starts at its first
     * ack past the floor (one poll after the reset), so the finding comes
     * back 2 x delay later, not at once. */
    {.name = "consumer created again, its task redelivered",
     .kind = RESET_RECREATE,
     .clears_after = 1,
     .redelivered_after = 3,
     .next_onset = 21},
    /* The task ends at the reset (poll 22): the grace holds to 42, the
     * condition is missing from 43, and the finding clears 30 s later,
     * at 73: 52 polls from the reset. */
    {.name = "long task ends",
     .kind = RESET_GONE,
     .clears_after = 52,
     .next_onset = NONE},
};

static void test_mp_after_reset(void) {
  for (size_t i = 0; i < sizeof(reset_cases) / sizeof(reset_cases[0]); i++) {
    const reset_case *k = &reset_cases[i];
    world w;
    world_with(&w, false, 0);
    nl_stream_snap *s = add_stream(&w, "MP");
    s->last_seq = s->msgs = 100000;
    nl_consumer_snap *c = add_consumer(&w, 0, "task");
    c->ack_wait_ns = 10 * SEC;
    c->delivered_stream_seq = c->delivered_consumer_seq = 130;
    c->ack_floor_stream_seq = 100;
    c->num_pending = 20;
    c->ack_last_ns = w.t - 5 * SEC;
    /* Stuck from poll 1, redelivered at 11 and 21: raised at 21; the
     * reset at 22. */
    int onset = NONE, cleared = NONE, next = NONE;
    for (int p = 0; p < 100; p++) {
      if (p == 22) {
        if (k->kind == RESET_FIX)
          c->ack_wait_ns = 30 * SEC;
        if (k->kind == RESET_RECREATE) {
          c->created_ns += SEC;
          c->delivered_stream_seq = c->delivered_consumer_seq = 40;
          c->ack_floor_stream_seq = 10;
        }
      }
      unsigned again = (p == 11 || p == 21) ? 1 : 0;
      if (k->redelivered_after > 0 && p == 22 + k->redelivered_after)
        again = 1;
      if (p > 0 && p != 22) {
        c->delivered_stream_seq += 4;
        c->delivered_consumer_seq += 4 + again;
      }
      /* The task ends at the reset, except on the consumer created again,
       * whose floor stands on. */
      if (p >= 22 && k->kind != RESET_RECREATE)
        c->ack_floor_stream_seq = c->delivered_stream_seq - 30;
      c->ack_last_ns = w.t - SEC / 10;
      c->num_ack_pending = 2;
      int before = w.onsets[NL_MISSING_PROGRESS];
      world_poll(&w);
      if (onset == NONE && w.onsets[NL_MISSING_PROGRESS] > 0)
        onset = p;
      if (p >= 22 && next == NONE && w.onsets[NL_MISSING_PROGRESS] > before)
        next = p - 22;
      if (cleared == NONE && w.clears[NL_MISSING_PROGRESS] > 0)
        cleared = p - 22 + 1;
      if (p == 21)
        EXPECT(k, nl_finding_holding(held(&w, NL_MISSING_PROGRESS)));
    }
    EXPECT_EQ(k, onset, 21);
    EXPECT_EQ(k, cleared, k->clears_after);
    EXPECT_EQ(k, next, k->next_onset);
    EXPECT_EQ(k, w.onsets[NL_MISSING_PROGRESS], 1 + (k->next_onset != NONE));
    EXPECT_EQ(k, w.onsets[NL_ACK_WAIT_VIOLATION], 0);
    nl_consumer_state *st = state_of(&w);
    EXPECT(k,
           st != NULL && st->resets == (k->kind == RESET_RECREATE ? 1u : 0u));
    /* The consumer created again did stand: later messages acked past
     * its floor. */
    if (k->kind == RESET_RECREATE)
      EXPECT(k, st != NULL && st->acked_since_floor &&
                    st->redelivered_since_floor ==
                        (k->redelivered_after > 0 ? 1u : 0u));
    world_free(&w);
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_mp_stuck_boundaries),
    NL_TEST(test_mp_after_reset),
};

NL_TEST_MAIN(tests)
