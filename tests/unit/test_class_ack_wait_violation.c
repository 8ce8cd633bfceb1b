/* test_class_ack_wait_violation.c: the boundaries of ACK_WAIT_VIOLATION
 * (detect/nl_ack_wait_violation.c) and of the expiry rounds it shares with
 * MISSING_PROGRESS (detect/nl_slow_processing.c), case by case.
 *
 * Each table below covers one rule of docs/detectors.md; each row is a
 * scenario run in a fresh world, with its expected outcome. The rows come
 * in threes where they can: exactly at a threshold, one step below, one
 * step above. Time is stepped by 1 ms where the history keeps older polls
 * to the millisecond, and by 1 ns where it keeps the exact time. */
#include "core/nl_engine.h"
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

#define MS 1000000LL
#define NONE (-1)
#define MAX_POLLS 52

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

/* Options a case changes from their defaults (0: the default). */
typedef struct {
  unsigned min_intervals;
  unsigned min_redeliveries;
  double min_share;
} options;

/* A world whose engine runs with the options of o. */
static void world_with(world *w, bool config_classes, const options *o) {
  world_init(w, config_classes);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = config_classes;
  p.push_unbound_s = 2;
  if (o->min_intervals)
    p.ack_wait_min_intervals = o->min_intervals;
  if (o->min_redeliveries)
    p.ack_wait_min_redeliveries = o->min_redeliveries;
  if (o->min_share > 0)
    p.ack_wait_min_share = o->min_share;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

static nl_consumer_state *state_of(world *w, const char *stream,
                                   const char *consumer) {
  return nl_registry_find(nl_engine_registry(w->engine), stream, consumer);
}

/* The held finding of cls, or NULL. */
static const nl_finding *held(world *w, const char *stream,
                              const char *consumer, nl_class cls) {
  nl_consumer_state *st = state_of(w, stream, consumer);
  return st != NULL ? st->active[cls] : NULL;
}

/* Whether the held finding of cls saw its condition at the latest poll (not
 * only kept by the clearing hold). */
static bool holding(world *w, const char *stream, const char *consumer,
                    nl_class cls) {
  return nl_finding_holding(held(w, stream, consumer, cls));
}

/* ---- The expiry rounds ------------------------------------------------ */

/* A consumer of stream AW delivering `fresh` new messages a poll, 1 s
 * apart, with `again[i]` redelivered by ack_wait expiry in the interval
 * that ends at poll i. While it acks, the floor follows 20 messages behind
 * the newest (20 outstanding, each older than the delay, so expiry is
 * possible and explains every redelivery); when it stops acking, the floor
 * and the time of the last ack stand and the outstanding messages pile
 * up. */
typedef struct rounds_case rounds_case;

/* What a case checks beyond its onsets, after its last poll: onset is the
 * finding of ACK_WAIT_VIOLATION at its onset (zeroed when not raised). */
typedef void (*rounds_inspect)(const rounds_case *k, world *w,
                               const nl_finding *onset);

struct rounds_case {
  const char *name;
  unsigned polls; /* Polls 0 .. polls - 1. */
  unsigned again[MAX_POLLS];
  unsigned fresh;
  /* This poll is moved by shift_ms (shift_ms 0: none is). */
  unsigned shift_poll;
  int64_t shift_ms;
  unsigned acks_stop; /* The first poll without acks (0: it never stops). */
  unsigned gap_poll;  /* A gap in what was seen, at this poll (0: none). */
  /* The redelivery delay is the first backoff step of this length, under
   * ack_wait 30 s (0: ack_wait 2 s without backoff). */
  int64_t backoff_ms;
  options opt;
  int awv_onset; /* Poll of the onset, or NONE. */
  int mp_onset;
  /* At the last poll: ACK_WAIT_VIOLATION held with its condition seen (1),
   * held without it (0), or not looked at (-1). */
  int holding;
  rounds_inspect inspect; /* NULL: nothing more. */
};

/* Runs k in a fresh world and checks its outcome. */
static void run_rounds(const rounds_case *k) {
  world w;
  world_with(&w, false, &k->opt);
  nl_stream_snap *s = add_stream(&w, "AW");
  s->last_seq = s->msgs = 100000;
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  if (k->backoff_ms > 0) {
    c->ack_wait_ns = 30 * SEC;
    c->backoff_first_ns = k->backoff_ms * MS;
    c->backoff_steps = 2;
    c->max_deliver = 5;
  } else {
    c->ack_wait_ns = 2 * SEC;
  }
  c->delivered_stream_seq = c->delivered_consumer_seq = 1000;
  c->num_pending = 20;
  int64_t base = w.t;
  int awv = NONE, mp = NONE;
  uint64_t total = 0;
  nl_finding onset;
  memset(&onset, 0, sizeof(onset));
  for (unsigned i = 0; i < k->polls; i++) {
    int64_t t = base + (int64_t)i * SEC;
    if (k->shift_ms != 0 && i == k->shift_poll)
      t += k->shift_ms * MS;
    if (k->gap_poll != 0 && i == k->gap_poll)
      nl_engine_gap(w.engine, t);
    if (i > 0) {
      c->delivered_stream_seq += k->fresh;
      c->delivered_consumer_seq += k->fresh + k->again[i];
      total += k->again[i];
    }
    if (k->acks_stop == 0 || i < k->acks_stop) {
      c->ack_last_ns = t - SEC / 10;
      c->ack_floor_stream_seq = c->delivered_stream_seq - 20;
    }
    c->num_ack_pending = c->delivered_stream_seq - c->ack_floor_stream_seq;
    c->num_redelivered = k->again[i];
    w.t = t;
    world_poll(&w);
    if (awv == NONE && w.onsets[NL_ACK_WAIT_VIOLATION] > 0) {
      awv = (int)i;
      onset = w.last[NL_ACK_WAIT_VIOLATION];
    }
    if (mp == NONE && w.onsets[NL_MISSING_PROGRESS] > 0)
      mp = (int)i;
  }
  EXPECT_EQ(k, awv, k->awv_onset);
  EXPECT_EQ(k, mp, k->mp_onset);
  EXPECT_EQ(k, w.onsets[NL_NAK_STORM], 0);
  /* The scenario happened: every redelivery was counted. */
  nl_consumer_state *st = state_of(&w, "AW", "slow");
  EXPECT(k, st != NULL && st->redelivered_total == total);
  if (k->holding >= 0) {
    EXPECT(k, held(&w, "AW", "slow", NL_ACK_WAIT_VIOLATION) != NULL);
    EXPECT_EQ(k, holding(&w, "AW", "slow", NL_ACK_WAIT_VIOLATION), k->holding);
  }
  if (k->inspect != NULL)
    k->inspect(k, &w, &onset);
  world_free(&w);
}

/* The evidence of two rounds (polls 1 and 5) of two redeliveries each
 * among two new messages, at the onset. */
static void evidence_of_two_rounds(const rounds_case *k, world *w,
                                   const nl_finding *f) {
  (void)w;
  EXPECT(k, nl_finding_get(f, "redeliveries", 0) == 4);
  EXPECT(k, nl_finding_get(f, "intervals_with_redeliveries", 0) == 2);
  EXPECT(k, nl_finding_get(f, "window_s", 0) == 23);
  EXPECT(k, nl_finding_get(f, "recurring_over_s", 0) == 4);
  EXPECT(k, nl_finding_get(f, "redelivered_share", 0) == 0.5);
  EXPECT(k, nl_finding_get(f, "ack_wait_s", 0) == 2);
  EXPECT(k, nl_finding_get(f, "num_ack_pending", 0) == 20);
  /* Twice ack_wait: nothing was seen standing longer. */
  EXPECT(k, nl_finding_get(f, "recommended_ack_wait_s", 0) == 4);
  EXPECT(k,
         strcmp(f->fix_command, "nats consumer edit AW slow --wait 4s") == 0);
}

/* The rounds the history holds that happened while the consumer acked. */
static unsigned rounds_while_acking(world *w) {
  nl_consumer_state *st = state_of(w, "AW", "slow");
  unsigned n = 0;
  for (unsigned e = 0; st != NULL && e < NL_EVENTS_LEN; e++) {
    const nl_redelivery_event *ev = nl_state_event(st, e);
    n += ev != NULL && ev->while_acking && !ev->beyond_expiry;
  }
  return n;
}

/* Both rounds happened while the consumer acked. */
static void both_rounds_while_acking(const rounds_case *k, world *w,
                                     const nl_finding *f) {
  (void)f;
  EXPECT_EQ(k, rounds_while_acking(w), 2);
}

/* Only the first round did: the second came to a consumer that stopped. */
static void first_round_while_acking(const rounds_case *k, world *w,
                                     const nl_finding *f) {
  (void)f;
  EXPECT_EQ(k, rounds_while_acking(w), 1);
}

/* The stopped consumer's rounds are all held (the history is full of
 * them), none of them while it acked and none beyond expiry: the reason
 * nothing is raised. */
static void no_round_while_acking(const rounds_case *k, world *w,
                                  const nl_finding *f) {
  (void)f;
  nl_consumer_state *st = state_of(w, "AW", "slow");
  EXPECT(k, st != NULL && st->n_events >= NL_EVENTS_LEN);
  for (unsigned e = 0; st != NULL && e < NL_EVENTS_LEN; e++) {
    const nl_redelivery_event *ev = nl_state_event(st, e);
    EXPECT(k, ev != NULL && !ev->while_acking && !ev->beyond_expiry);
  }
}

/* The delay is 2 s and the polls 1 s apart unless a case says otherwise:
 * the rounds must span more than delay + dt = 3 s, lie within the window
 * 10 x delay + 3 x dt = 23 s, and the newest be within the hold
 * max(4 x delay + dt, 1.5 x the longest gap between rounds) of the latest
 * poll. Two new messages and two redeliveries a poll give a share of 0.5. */
static const rounds_case rounds_cases[] = {
    /* Two rounds (the default minimum of intervals and of redeliveries)
     * spread over 4 s: raised at the second. */
    {.name = "two rounds spread over more than delay + dt",
     .polls = 8,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1,
     .inspect = evidence_of_two_rounds},
    /* One round is a crash's orphans expiring once: nothing. */
    {.name = "one round alone",
     .polls = 12,
     .again = {[5] = 4},
     .fresh = 2,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    /* The spread: exactly delay + dt is not more than it. */
    {.name = "span exactly delay + dt",
     .polls = 10,
     .again = {[1] = 2, [4] = 2},
     .fresh = 2,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    /* One ms more (the first round 1 ms earlier). */
    {.name = "span 1 ms over delay + dt",
     .polls = 6,
     .again = {[1] = 2, [4] = 2},
     .fresh = 2,
     .shift_poll = 1,
     .shift_ms = -1,
     .awv_onset = 4,
     .mp_onset = NONE,
     .holding = 1},
    /* The window: a round exactly 10 x delay + 3 x dt before the latest
     * poll still counts. */
    {.name = "oldest round at the window's edge",
     .polls = 25,
     .again = {[1] = 2, [24] = 2},
     .fresh = 2,
     .awv_onset = 24,
     .mp_onset = NONE,
     .holding = 1},
    /* One ms further back it does not, and the newest round is alone. */
    {.name = "oldest round 1 ms outside the window",
     .polls = 25,
     .again = {[1] = 2, [24] = 2},
     .fresh = 2,
     .shift_poll = 1,
     .shift_ms = -1,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    /* The minimum of redeliveries (default 2): one in each of two
     * rounds. */
    {.name = "exactly the default minimum of redeliveries",
     .polls = 6,
     .again = {[1] = 1, [5] = 1},
     .fresh = 1,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1},
    {.name = "one redelivery below a minimum of 3",
     .polls = 10,
     .again = {[1] = 1, [5] = 1},
     .fresh = 1,
     .opt = {.min_redeliveries = 3},
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    {.name = "exactly a minimum of 5 redeliveries",
     .polls = 6,
     .again = {[1] = 2, [5] = 3},
     .fresh = 2,
     .opt = {.min_redeliveries = 5},
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1},
    /* The minimum of intervals. */
    {.name = "two rounds below a minimum of 3 intervals",
     .polls = 10,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .opt = {.min_intervals = 3},
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    {.name = "exactly a minimum of 3 intervals",
     .polls = 6,
     .again = {[1] = 2, [3] = 2, [5] = 2},
     .fresh = 2,
     .opt = {.min_intervals = 3},
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1},
    /* The share between the two classes: one redelivery among four
     * deliveries is exactly a quarter, ACK_WAIT_VIOLATION. */
    {.name = "share exactly 0.25",
     .polls = 6,
     .again = {[1] = 1, [5] = 1},
     .fresh = 3,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1},
    /* One among five is below: a few long tasks, MISSING_PROGRESS. */
    {.name = "share 0.2, below a quarter",
     .polls = 6,
     .again = {[1] = 1, [5] = 1},
     .fresh = 4,
     .awv_onset = NONE,
     .mp_onset = 5,
     .holding = -1},
    /* Exactly a quarter against a minimum share one double above it. */
    {.name = "share 0.25 below a minimum share of the next double",
     .polls = 6,
     .again = {[1] = 1, [5] = 1},
     .fresh = 3,
     .opt = {.min_share = 0x1.0000000000001p-2},
     .awv_onset = NONE,
     .mp_onset = 5,
     .holding = -1},
    /* While acking: the last ack at poll 2, the round at poll 5, exactly
     * delay + dt later, still counts. */
    {.name = "round exactly delay + dt after the last ack",
     .polls = 6,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .acks_stop = 3,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1,
     .inspect = both_rounds_while_acking},
    /* 1 ms later it is a redelivery to a consumer that stopped acking. */
    {.name = "round 1 ms more than delay + dt after the last ack",
     .polls = 6,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .acks_stop = 3,
     .shift_poll = 2,
     .shift_ms = -1,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1,
     .inspect = first_round_while_acking},
    /* A consumer still delivered to that stopped acking (a stalled or
     * crashed worker whose client still takes messages): its outstanding
     * messages expire and come back every delay, round after round, and
     * none of it is processing that outlasts ack_wait. */
    {.name = "a consumer still delivered to that stopped acking",
     .polls = 30,
     .again = {[5] = 4,
               [7] = 4,
               [9] = 4,
               [11] = 4,
               [13] = 4,
               [15] = 4,
               [17] = 4,
               [19] = 4,
               [21] = 4,
               [23] = 4,
               [25] = 4,
               [27] = 4,
               [29] = 4},
     .fresh = 2,
     .acks_stop = 3,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1,
     .inspect = no_round_while_acking},
    /* After a gap (poll 2) the clients' orphans expire within delay + 2
     * polls: a round at exactly gap + 4 s is not counted, and the round
     * before the gap no longer is. */
    {.name = "round exactly delay + 2 polls after a gap",
     .polls = 12,
     .again = {[1] = 2, [6] = 2, [10] = 2},
     .fresh = 2,
     .gap_poll = 2,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    /* 1 ms later it is a round of the consumer's own. */
    {.name = "round 1 ms more than delay + 2 polls after a gap",
     .polls = 11,
     .again = {[1] = 2, [6] = 2, [10] = 2},
     .fresh = 2,
     .gap_poll = 2,
     .shift_poll = 6,
     .shift_ms = 1,
     .awv_onset = 10,
     .mp_onset = NONE,
     .holding = 1},
    /* The delay is the first backoff step (2 s) under ack_wait 30 s. */
    {.name = "backoff: rounds spread over more than the first step + dt",
     .polls = 6,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .backoff_ms = 2000,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1},
    {.name = "backoff: span exactly the first step + dt",
     .polls = 10,
     .again = {[1] = 2, [4] = 2},
     .fresh = 2,
     .backoff_ms = 2000,
     .awv_onset = NONE,
     .mp_onset = NONE,
     .holding = -1},
    /* The hold: 4 x delay + dt. At poll 14 the newest round (poll 5) is
     * 9 s old: still seen. */
    {.name = "hold: newest round exactly 4 x delay + dt old",
     .polls = 15,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 1},
    /* The newest round 1 ms earlier: gone at poll 14. */
    {.name = "hold: newest round 1 ms older than 4 x delay + dt",
     .polls = 15,
     .again = {[1] = 2, [5] = 2},
     .fresh = 2,
     .shift_poll = 5,
     .shift_ms = -1,
     .awv_onset = 5,
     .mp_onset = NONE,
     .holding = 0},
    /* The hold at the rounds' own pace: 8 s between them hold for 12 s
     * (more than 4 x delay + dt). */
    {.name = "hold: newest round exactly 1.5 x the gap old",
     .polls = 22,
     .again = {[1] = 2, [9] = 2},
     .fresh = 2,
     .awv_onset = 9,
     .mp_onset = NONE,
     .holding = 1},
    {.name = "hold: newest round 1 ms older than 1.5 x the gap",
     .polls = 22,
     .again = {[1] = 2, [9] = 2},
     .fresh = 2,
     .shift_poll = 9,
     .shift_ms = -1,
     .awv_onset = 9,
     .mp_onset = NONE,
     .holding = 0},
};

static void test_awv_expiry_round_boundaries(void) {
  for (size_t i = 0; i < sizeof(rounds_cases) / sizeof(rounds_cases[0]); i++)
    run_rounds(&rounds_cases[i]);
}

/* ---- The declared processing time ------------------------------------- */

/* A consumer of stream DP declaring nats_lens.max_processing, polled with
 * nothing redelivered. */
typedef struct {
  const char *name;
  int64_t ack_wait_ns;
  int64_t backoff_first_ns; /* 0: none. */
  const char *declared;     /* NULL: no declaration. */
  bool ack_none;
  bool config_classes;
  bool raised; /* At the first poll, from the declaration. */
  double recommended_s;
} declared_case;

static const declared_case declared_cases[] = {
    /* Not longer than the declared time: a task that long is delivered
     * again while it runs. */
    {.name = "ack_wait exactly the declared time",
     .ack_wait_ns = 2 * SEC,
     .declared = "2s",
     .config_classes = true,
     .raised = true,
     .recommended_s = 3},
    {.name = "ack_wait 1 ns longer than the declared time",
     .ack_wait_ns = 2 * SEC,
     .declared = "1999999999ns",
     .config_classes = true,
     .raised = false},
    {.name = "ack_wait 1 ns shorter than the declared time",
     .ack_wait_ns = 2 * SEC,
     .declared = "2000000001ns",
     .config_classes = true,
     .raised = true,
     .recommended_s = 4},
    /* The first backoff step is the delay, whatever ack_wait is. */
    {.name = "backoff: first step exactly the declared time",
     .ack_wait_ns = 30 * SEC,
     .backoff_first_ns = 2 * SEC,
     .declared = "2s",
     .config_classes = true,
     .raised = true,
     .recommended_s = 3},
    {.name = "backoff: first step 1 ns longer than the declared time",
     .ack_wait_ns = 30 * SEC,
     .backoff_first_ns = 2 * SEC,
     .declared = "1999999999ns",
     .config_classes = true,
     .raised = false},
    /* Look-alikes: no declaration, an AckNone consumer, and the check
     * command's engine (configuration classes off). */
    {.name = "no declaration",
     .ack_wait_ns = 2 * SEC,
     .config_classes = true,
     .raised = false},
    {.name = "AckNone consumer declaring a long task",
     .ack_wait_ns = 2 * SEC,
     .declared = "5s",
     .ack_none = true,
     .config_classes = true,
     .raised = false},
    {.name = "configuration classes off",
     .ack_wait_ns = 2 * SEC,
     .declared = "5s",
     .config_classes = false,
     .raised = false},
};

static void test_awv_declared_boundaries(void) {
  for (size_t i = 0; i < sizeof(declared_cases) / sizeof(declared_cases[0]);
       i++) {
    const declared_case *k = &declared_cases[i];
    world w;
    options none = {0};
    world_with(&w, k->config_classes, &none);
    add_stream(&w, "DP")->last_seq = 100;
    nl_consumer_snap *c = add_consumer(&w, 0, "task");
    c->ack_wait_ns = k->ack_wait_ns;
    c->backoff_first_ns = k->backoff_first_ns;
    if (k->backoff_first_ns > 0) {
      c->backoff_steps = 2;
      c->max_deliver = 5;
    }
    if (k->ack_none) {
      c->ack_policy = NL_ACK_NONE;
      c->durable = false;
    }
    if (k->declared != NULL)
      EXPECT(k, nl_consumer_snap_set_meta(c, "nats_lens.max_processing",
                                          k->declared) == 0);
    c->delivered_stream_seq = c->delivered_consumer_seq = 100;
    c->ack_floor_stream_seq = 100;
    c->ack_last_ns = w.t - SEC;
    world_poll(&w);
    EXPECT_EQ(k, w.onsets[NL_ACK_WAIT_VIOLATION], k->raised);
    const nl_finding *f = held(&w, "DP", "task", NL_ACK_WAIT_VIOLATION);
    EXPECT_EQ(k, f != NULL, k->raised);
    if (f != NULL) {
      EXPECT(k, nl_finding_get(f, "from_declaration", 0) == 1);
      EXPECT(k, f->n_evidence > 0 &&
                    strcmp(f->evidence[0].name, "from_declaration") == 0);
      EXPECT(k, nl_finding_get(f, "recommended_ack_wait_s", 0) ==
                    k->recommended_s);
    }
    /* Held while the declaration stands, and nothing else raised. */
    for (int p = 0; p < 40; p++) {
      c->delivered_stream_seq = ++c->delivered_consumer_seq;
      c->ack_floor_stream_seq = c->delivered_stream_seq;
      c->ack_last_ns = w.t - SEC / 10;
      world_poll(&w);
    }
    EXPECT_EQ(k, w.onsets[NL_ACK_WAIT_VIOLATION], k->raised);
    EXPECT_EQ(k, w.clears[NL_ACK_WAIT_VIOLATION], 0);
    EXPECT_EQ(k, holding(&w, "DP", "task", NL_ACK_WAIT_VIOLATION), k->raised);
    EXPECT_EQ(k, w.onsets[NL_MISSING_PROGRESS], 0);
    world_free(&w);
  }
}

/* ---- After a reset ---------------------------------------------------- */

typedef enum {
  RESET_FIX,      /* ack_wait raised to 4 s, as the finding's fix says. */
  RESET_RECREATE, /* Deleted and created again: a new history. */
  RESET_DECLARATION_FIX, /* The declared time lowered under ack_wait. */
  RESET_GONE,            /* The rounds stop; acks go on. */
} reset_kind;

typedef struct {
  const char *name;
  reset_kind kind;
  /* Polls from the reset (included) to the one that clears it. */
  int clears_after;
  /* Poll (counted from the reset) of the next onset, or NONE. */
  int next_onset;
} reset_case;

static const reset_case reset_cases[] = {
    /* A fix clears at the next poll and the finding stays clear, though
     * the rounds seen before it would still recur under the new ack_wait
     * (8 s apart, more than 4 s + dt): they no longer count. */
    {.name = "ack_wait raised as the fix says",
     .kind = RESET_FIX,
     .clears_after = 1,
     .next_onset = NONE},
    /* A declaration lowered under ack_wait: the same. */
    {.name = "declaration lowered",
     .kind = RESET_DECLARATION_FIX,
     .clears_after = 1,
     .next_onset = NONE},
    /* Created again: cleared at once, and the new consumer's rounds must
     * recur again before the finding comes back: a first round (poll 1
     * after the reset) is not enough, the second, 4 s later, is. */
    {.name = "consumer created again",
     .kind = RESET_RECREATE,
     .clears_after = 1,
     .next_onset = 5},
    /* The rounds stop at poll 9 (the reset at 10): the condition is seen
     * through the hold of 4 x delay + dt (poll 18), missing from poll 19,
     * and clears 30 s later (poll 49), 40 polls after the reset. */
    {.name = "rounds stop",
     .kind = RESET_GONE,
     .clears_after = 40,
     .next_onset = NONE},
};

static void test_awv_after_reset(void) {
  for (size_t i = 0; i < sizeof(reset_cases) / sizeof(reset_cases[0]); i++) {
    const reset_case *k = &reset_cases[i];
    world w;
    options none = {0};
    world_with(&w, k->kind == RESET_DECLARATION_FIX, &none);
    nl_stream_snap *s = add_stream(&w, "AW");
    s->last_seq = s->msgs = 100000;
    nl_consumer_snap *c = add_consumer(&w, 0, "slow");
    c->ack_wait_ns = 2 * SEC;
    if (k->kind == RESET_DECLARATION_FIX)
      EXPECT(k, nl_consumer_snap_set_meta(c, "nats_lens.max_processing",
                                          "3s") == 0);
    c->delivered_stream_seq = c->delivered_consumer_seq = 1000;
    c->num_pending = 20;
    /* Rounds at polls 1, 5, 7 and 9 (and on, after a recreation, at 11
     * and 15): raised at 5; or, declared, no round and raised at 0. */
    int onset = NONE, cleared = NONE, next = NONE;
    for (int p = 0; p < 80; p++) {
      bool after = p >= 10;
      if (p == 10) {
        if (k->kind == RESET_FIX)
          c->ack_wait_ns = 4 * SEC;
        if (k->kind == RESET_DECLARATION_FIX)
          EXPECT(k, nl_consumer_snap_set_meta(c, "nats_lens.max_processing",
                                              "1s") == 0);
        if (k->kind == RESET_RECREATE) {
          c->created_ns += SEC;
          c->delivered_stream_seq = c->delivered_consumer_seq = 30;
        }
      }
      unsigned again = 0;
      if (k->kind == RESET_DECLARATION_FIX)
        again = 0; /* Raised from the declaration alone. */
      else if (!after)
        again = (p == 1 || p == 5 || p == 7 || p == 9) ? 2 : 0;
      else if (k->kind == RESET_RECREATE && (p == 11 || p == 15))
        again = 2;
      if (p > 0 && p != 10) {
        c->delivered_stream_seq += 2;
        c->delivered_consumer_seq += 2 + again;
      }
      c->ack_last_ns = w.t - SEC / 10;
      c->ack_floor_stream_seq = c->delivered_stream_seq - 20;
      c->num_ack_pending = 20;
      int before = w.onsets[NL_ACK_WAIT_VIOLATION];
      world_poll(&w);
      if (onset == NONE && w.onsets[NL_ACK_WAIT_VIOLATION] > 0)
        onset = p;
      if (after && w.onsets[NL_ACK_WAIT_VIOLATION] > before && next == NONE)
        next = p - 10;
      if (after && cleared == NONE && w.clears[NL_ACK_WAIT_VIOLATION] > 0)
        cleared = p - 10 + 1;
      if (p == 9)
        EXPECT(k, holding(&w, "AW", "slow", NL_ACK_WAIT_VIOLATION));
    }
    EXPECT_EQ(k, onset, k->kind == RESET_DECLARATION_FIX ? 0 : 5);
    EXPECT_EQ(k, cleared, k->clears_after);
    EXPECT_EQ(k, next, k->next_onset);
    EXPECT_EQ(k, w.onsets[NL_ACK_WAIT_VIOLATION], 1 + (k->next_onset != NONE));
    EXPECT_EQ(k, w.onsets[NL_MISSING_PROGRESS], 0);
    nl_consumer_state *st = state_of(&w, "AW", "slow");
    EXPECT(k,
           st != NULL && st->resets == (k->kind == RESET_RECREATE ? 1u : 0u));
    world_free(&w);
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_awv_expiry_round_boundaries),
    NL_TEST(test_awv_declared_boundaries),
    NL_TEST(test_awv_after_reset),
};

NL_TEST_MAIN(tests)
