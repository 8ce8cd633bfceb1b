/* test_class_nak_storm.c: the boundaries of NAK_STORM
 * (detect/nl_nak_storm.c), case by case: the polled rule (NakStormIntervals
 * intervals, each with redeliveries beyond expiry, at least
 * NakStormMinRedeliveries, more than the messages outstanding, the floor
 * standing), the loop max_deliver already bounds, the floor proving nothing
 * after a gap; the rule of NAK advisories (nak_adv_min NAKs in
 * nak_adv_window_s, one of a message delivered nak_adv_min_deliveries
 * times, and the polls' redeliveries since); its precedence over
 * ACK_WAIT_VIOLATION and MISSING_PROGRESS; and its resets. */
#include "core/model/nl_advised.h"
#include "core/nl_engine.h"
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

#define MS 1000000LL
#define NONE (-1)
#define MAX_POLLS 16

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
  unsigned intervals;
  unsigned min_redeliveries;
} options;

static void world_with(world *w, bool config_classes, const options *o) {
  world_init(w, config_classes);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = config_classes;
  p.push_unbound_s = 2;
  if (o->intervals)
    p.nak_storm_intervals = o->intervals;
  if (o->min_redeliveries)
    p.nak_storm_min_redeliveries = o->min_redeliveries;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

static nl_consumer_state *state_of(world *w, const char *stream,
                                   const char *consumer) {
  return nl_registry_find(nl_engine_registry(w->engine), stream, consumer);
}

static const nl_finding *held(world *w, const char *stream,
                              const char *consumer, nl_class cls) {
  nl_consumer_state *st = state_of(w, stream, consumer);
  return st != NULL ? st->active[cls] : NULL;
}

/* ---- The polled rule -------------------------------------------------- */

/* Consumer NS/loop (ack_wait 30 s unless said) with its ack floor at 10
 * and message 11, a poison message, outstanding; `again[i]` redeliveries in
 * the interval that ends at poll i, polls 1 s apart, no new message. */
typedef struct {
  const char *name;
  unsigned polls;
  unsigned again[MAX_POLLS];
  /* Messages outstanding (num_ack_pending) at each poll; 0: `pending`,
   * and that 0: 1. More than one: messages 11 .. 10 + pending. */
  unsigned nap[MAX_POLLS];
  unsigned pending;
  /* Each redelivery announced by a NAK advisory (delivery count 2) before
   * its poll: NAK-driven, whatever the expiry bound. */
  bool naks;
  int64_t ack_wait_s;    /* 0: 30. */
  int64_t max_deliver;   /* 0: -1 (unlimited). */
  bool max_deliver_zero; /* max_deliver 0 (unlimited too). */
  /* The poison message is terminated and the next one cycles: the floor
   * moves up by one at this poll (0: never). */
  unsigned move_poll;
  /* The floor goes back to 1 at this poll (a restored one; 0: never). */
  unsigned back_poll;
  unsigned gap_poll;    /* A gap in what was seen, at this poll (0: none). */
  const char *declared; /* max_processing, configuration classes on. */
  options opt;
  int onset; /* Poll of the NAK_STORM onset, or NONE. */
  int awv_onset;
  /* The intervals the history took for beyond expiry (NAK-driven): the
   * silent cases' loops were seen as loops. */
  unsigned beyond;
} polled_case;

/* Runs k; returns its onset finding in *onset_f when raised. */
static void run_polled(const polled_case *k, nl_finding *onset_f) {
  world w;
  world_with(&w, k->declared != NULL, &k->opt);
  nl_stream_snap *s = add_stream(&w, "NS");
  s->last_seq = s->msgs = 1000;
  nl_consumer_snap *c = add_consumer(&w, 0, "loop");
  c->ack_wait_ns = (k->ack_wait_s ? k->ack_wait_s : 30) * SEC;
  c->max_deliver = k->max_deliver_zero ? 0
                   : k->max_deliver    ? k->max_deliver
                                       : -1;
  if (k->declared != NULL)
    EXPECT(k, nl_consumer_snap_set_meta(c, "nats_lens.max_processing",
                                        k->declared) == 0);
  unsigned pending = k->pending ? k->pending : 1;
  c->ack_floor_stream_seq = 10;
  c->delivered_stream_seq = c->delivered_consumer_seq = 10 + pending;
  c->ack_last_ns = w.t - SEC;
  c->num_pending = 100;
  int onset = NONE, awv = NONE;
  uint64_t total = 0;
  unsigned beyond = 0;
  for (unsigned i = 0; i < k->polls; i++) {
    if (k->gap_poll != 0 && i == k->gap_poll)
      nl_engine_gap(w.engine, w.t);
    /* The NAK advisories arrive in the half second before the poll. */
    int64_t at = w.t;
    for (unsigned n = 0; k->naks && n < k->again[i]; n++) {
      w.t = at - SEC / 2 + (int64_t)n * MS;
      world_advise(&w, NL_ADV_NAK, "NS", "loop", 11 + n % pending, 2);
    }
    w.t = at;
    c->delivered_consumer_seq += k->again[i];
    total += k->again[i];
    if (k->move_poll != 0 && i == k->move_poll) {
      c->ack_floor_stream_seq++;
      c->delivered_stream_seq++;
      c->delivered_consumer_seq++;
      c->ack_last_ns = w.t - SEC / 10;
    }
    if (k->back_poll != 0 && i == k->back_poll)
      c->ack_floor_stream_seq = 1;
    c->num_ack_pending = k->nap[i] ? k->nap[i] : pending;
    c->num_redelivered = c->num_ack_pending;
    world_poll(&w);
    const nl_sample *s0 = nl_state_latest(state_of(&w, "NS", "loop"));
    beyond += s0 != NULL && s0->beyond_expiry;
    if (onset == NONE && w.onsets[NL_NAK_STORM] > 0) {
      onset = (int)i;
      if (onset_f != NULL)
        *onset_f = w.last[NL_NAK_STORM];
    }
    if (awv == NONE && w.onsets[NL_ACK_WAIT_VIOLATION] > 0)
      awv = (int)i;
  }
  EXPECT_EQ(k, onset, k->onset);
  EXPECT_EQ(k, awv, k->awv_onset);
  EXPECT_EQ(k, beyond, k->beyond);
  EXPECT_EQ(k, w.onsets[NL_MISSING_PROGRESS], 0);
  nl_consumer_state *st = state_of(&w, "NS", "loop");
  /* The scenario happened: every redelivery counted. */
  EXPECT(k, st != NULL && st->redelivered_total == total);
  /* A declared finding is never suppressed: it holds beside the storm. */
  if (k->declared != NULL)
    EXPECT(k,
           nl_finding_holding(held(&w, "NS", "loop", NL_ACK_WAIT_VIOLATION)));
  world_free(&w);
}

static const polled_case polled_cases[] = {
    /* Two intervals of exactly the minimum (3): raised at the second. */
    {.name = "two intervals of exactly the minimum",
     .polls = 4,
     .again = {[1] = 3, [2] = 3},
     .onset = 2,
     .awv_onset = NONE,
     .beyond = 2},
    /* One of them one below: a transient NAK, not a storm. */
    {.name = "the second interval one below the minimum",
     .polls = 5,
     .again = {[1] = 3, [2] = 2},
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 2},
    {.name = "the first interval one below the minimum",
     .polls = 4,
     .again = {[1] = 2, [2] = 3, [3] = 3},
     .onset = 3,
     .awv_onset = NONE,
     .beyond = 3},
    /* One interval of 40: transient. */
    {.name = "a single interval",
     .polls = 6,
     .again = {[1] = 40},
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 1},
    /* NakStormMinRedeliveries 5. */
    {.name = "exactly a minimum of 5",
     .polls = 3,
     .again = {[1] = 5, [2] = 5},
     .opt = {.min_redeliveries = 5},
     .onset = 2,
     .awv_onset = NONE,
     .beyond = 2},
    {.name = "one below a minimum of 5",
     .polls = 4,
     .again = {[1] = 5, [2] = 4},
     .opt = {.min_redeliveries = 5},
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 2},
    /* NakStormIntervals 3. */
    {.name = "exactly 3 intervals of 3",
     .polls = 4,
     .again = {[1] = 3, [2] = 3, [3] = 3},
     .opt = {.intervals = 3},
     .onset = 3,
     .awv_onset = NONE,
     .beyond = 3},
    {.name = "2 intervals of 3 intervals",
     .polls = 5,
     .again = {[1] = 3, [2] = 3},
     .opt = {.intervals = 3},
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 2},
    /* More than the messages outstanding: 4 messages each NAKed once (the
     * advisories explain every redelivery) is a retry, not a loop. */
    {.name = "redeliveries exactly the messages outstanding",
     .polls = 5,
     .again = {[1] = 4, [2] = 4, [3] = 4},
     .pending = 4,
     .naks = true,
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 3},
    /* One more: some message came back twice. */
    {.name = "redeliveries one more than the messages outstanding",
     .polls = 3,
     .again = {[1] = 5, [2] = 5},
     .pending = 4,
     .naks = true,
     .onset = 2,
     .awv_onset = NONE,
     .beyond = 2},
    /* The outstanding messages are the more of both ends: 5 at the start
     * of the second interval, 4 at its end, and 5 redeliveries. */
    {.name = "redeliveries the outstanding at the interval's start",
     .polls = 4,
     .again = {[1] = 6, [2] = 5},
     .nap = {[0] = 5, [1] = 5, [2] = 4, [3] = 4},
     .pending = 5,
     .naks = true,
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 2},
    /* Beyond expiry: with ack_wait 2 s two outstanding messages can
     * expire at most 2 x (1 s / 2 s + 1) = 3 times a second. */
    {.name = "redeliveries exactly the expiry bound",
     .polls = 5,
     .again = {[1] = 3, [2] = 3, [3] = 3},
     .pending = 2,
     .ack_wait_s = 2,
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 0},
    {.name = "redeliveries one above the expiry bound",
     .polls = 3,
     .again = {[1] = 4, [2] = 4},
     .pending = 2,
     .ack_wait_s = 2,
     .onset = 2,
     .awv_onset = NONE,
     .beyond = 2},
    /* The floor standing: it moved at poll 2, so the intervals ending at
     * 3 and 4 are the first two with it standing. */
    {.name = "floor moved one interval too recently",
     .polls = 5,
     .again = {[1] = 3, [2] = 3, [3] = 3, [4] = 3},
     .move_poll = 2,
     .onset = 4,
     .awv_onset = NONE,
     .beyond = 4},
    /* The loop max_deliver bounds (set, at most 10) is
     * MAX_DELIVER_EXHAUSTED's business. */
    {.name = "max_deliver exactly 10",
     .polls = 6,
     .again = {[1] = 20, [2] = 20, [3] = 20, [4] = 20, [5] = 20},
     .max_deliver = 10,
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 5},
    {.name = "max_deliver 11",
     .polls = 3,
     .again = {[1] = 20, [2] = 20},
     .max_deliver = 11,
     .onset = 2,
     .awv_onset = NONE,
     .beyond = 2},
    {.name = "max_deliver 0 (unlimited)",
     .polls = 3,
     .again = {[1] = 20, [2] = 20},
     .max_deliver_zero = true,
     .onset = 2,
     .awv_onset = NONE,
     .beyond = 2},
    /* After a gap the floor may be one a restarted server restored: a
     * loop is not proven by it until it moves forward (at 6), and then
     * stands two intervals (7, 8). */
    {.name = "floor standing since a gap",
     .polls = 10,
     .again = {[2] = 3,
               [3] = 3,
               [4] = 3,
               [5] = 3,
               [6] = 3,
               [7] = 3,
               [8] = 3,
               [9] = 3},
     .gap_poll = 1,
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 8},
    {.name = "floor proven by moving after a gap",
     .polls = 10,
     .again = {[2] = 3,
               [3] = 3,
               [4] = 3,
               [5] = 3,
               [6] = 3,
               [7] = 3,
               [8] = 3,
               [9] = 3},
     .gap_poll = 1,
     .move_poll = 6,
     .onset = 8,
     .awv_onset = NONE,
     .beyond = 8},
    /* A floor that went back (restored) proves nothing either. */
    {.name = "floor standing since it went back",
     .polls = 10,
     .again = {[2] = 3,
               [3] = 3,
               [4] = 3,
               [5] = 3,
               [6] = 3,
               [7] = 3,
               [8] = 3,
               [9] = 3},
     .back_poll = 1,
     .onset = NONE,
     .awv_onset = NONE,
     .beyond = 8},
    /* A declared finding is never suppressed: ACK_WAIT_VIOLATION from a
     * declared processing time (3 s, with ack_wait 2 s) holds from the
     * first poll through the storm. */
    {.name = "declared processing time beside the storm",
     .polls = 8,
     .again =
         {[1] = 20, [2] = 20, [3] = 20, [4] = 20, [5] = 20, [6] = 20, [7] = 20},
     .ack_wait_s = 2,
     .declared = "3s",
     .onset = 2,
     .awv_onset = 0,
     .beyond = 7},
};

static void test_nak_polled_boundaries(void) {
  for (size_t i = 0; i < sizeof(polled_cases) / sizeof(polled_cases[0]); i++)
    run_polled(&polled_cases[i], NULL);
}

/* The evidence of the first case at its onset. */
static void test_nak_polled_evidence(void) {
  const polled_case *k = &polled_cases[0];
  nl_finding f;
  memset(&f, 0, sizeof(f));
  run_polled(k, &f);
  EXPECT(k, nl_finding_get(&f, "redeliveries", 0) == 6);
  EXPECT(k, nl_finding_get(&f, "window_s", 0) == 2);
  EXPECT(k, nl_finding_get(&f, "redeliveries_per_s", 0) == 3);
  EXPECT(k, nl_finding_get(&f, "expiry_bound_per_s", 0) == 1.0 / 30);
  EXPECT(k, nl_finding_get(&f, "num_ack_pending", 0) == 1);
  EXPECT(k, nl_finding_get(&f, "ack_floor_stream_seq", 0) == 10);
  EXPECT(k, nl_finding_get(&f, "redelivery_delay_s", 0) == 30);
  EXPECT(k, nl_finding_get(&f, "max_deliver", 0) == -1);
  EXPECT(k, nl_finding_get(&f, "recommended_max_deliver", 0) == 5);
  EXPECT(k, strcmp(f.fix_command,
                   "nats consumer edit NS loop --max-deliver 5") == 0);
}

/* ---- The rule of NAK advisories --------------------------------------- */

/* One poll (at_ns after the first; the first is at 0) with `again`
 * redeliveries in the interval that ends at it. */
typedef struct {
  int64_t at_ns;
  unsigned again;
} timed_poll;

/* One NAK advisory (at_ns after the first poll) of stream sequence seq
 * delivered `deliveries` times. */
typedef struct {
  int64_t at_ns;
  uint64_t seq;
  uint64_t deliveries;
} timed_nak;

/* Raised between polls, at the NAK that completes the predicate. */
#define BETWEEN_POLLS (-2)

/* Consumer NA/loop (ack_wait 30 s, messages 5 to 7 outstanding above its
 * standing floor, no ack) polled and sent NAK advisories at the times given; at
 * equal times the poll comes first. */
typedef struct {
  const char *name;
  timed_poll polls[8]; /* Ended by a poll at 0 after the first. */
  timed_nak naks[8];   /* Ended by deliveries 0. */
  int64_t max_deliver; /* 0: -1 (unlimited). */
  /* Index of the poll that raises it, BETWEEN_POLLS, or NONE. */
  int raised;
  /* At the last poll: held with the condition seen (1), held without it
   * (0), or not looked at (-1). */
  int holding;
} advised_case;

/* The poll at 0, 1 s and 2 s (3 redeliveries there); five NAKs of a
 * message between 1.1 and 1.5 s, the fifth of its third delivery. */
#define POLLS_0_1_2                                                            \
  {                                                                            \
    {0, 0}, {1 * SEC, 0}, { 2 * SEC, 3 }                                       \
  }
#define NAKS_5_OF_3                                                            \
  {                                                                            \
    {1100 * MS, 5, 1}, {1200 * MS, 6, 1}, {1300 * MS, 5, 2},                   \
        {1400 * MS, 6, 2}, {                                                   \
      1500 * MS, 5, 3                                                          \
    }                                                                          \
  }

static const advised_case advised_cases[] = {
    /* Exactly 5 NAKs, one of a third delivery, and 3 redeliveries polled
     * since the first (half of 5, rounded up). */
    {.name = "exactly the minimum NAKs, deliveries and redeliveries",
     .polls = POLLS_0_1_2,
     .naks = NAKS_5_OF_3,
     .raised = 2,
     .holding = 1},
    {.name = "one NAK short",
     .polls = POLLS_0_1_2,
     .naks = {{1100 * MS, 5, 1},
              {1200 * MS, 6, 1},
              {1300 * MS, 5, 2},
              {1500 * MS, 5, 3}},
     .raised = NONE,
     .holding = -1},
    {.name = "at most a second delivery",
     .polls = POLLS_0_1_2,
     .naks = {{1100 * MS, 5, 1},
              {1200 * MS, 6, 1},
              {1300 * MS, 5, 2},
              {1400 * MS, 6, 2},
              {1500 * MS, 7, 2}},
     .raised = NONE,
     .holding = -1},
    /* The NAKed messages came back only twice in the polls' count. */
    {.name = "one polled redelivery short",
     .polls = {{0, 0}, {1 * SEC, 0}, {2 * SEC, 2}},
     .naks = NAKS_5_OF_3,
     .raised = NONE,
     .holding = -1},
    /* The poll at 1 s counted 3 redeliveries and the first NAK came at the
     * same time: the fifth NAK completes the proof between polls. */
    {.name = "polled redeliveries at the first NAK's time",
     .polls = {{0, 0}, {1 * SEC, 3}, {2 * SEC, 0}},
     .naks = {{1 * SEC, 5, 1},
              {1100 * MS, 6, 1},
              {1200 * MS, 5, 2},
              {1300 * MS, 6, 2},
              {1400 * MS, 5, 3}},
     .raised = BETWEEN_POLLS,
     .holding = 1},
    /* The first NAK 1 ns after that poll: its redeliveries were before the
     * NAKs, and none come after them. */
    {.name = "polled redeliveries 1 ns before the first NAK",
     .polls = {{0, 0}, {1 * SEC, 3}, {2 * SEC, 0}},
     .naks = {{1 * SEC + 1, 5, 1},
              {1100 * MS, 6, 1},
              {1200 * MS, 5, 2},
              {1300 * MS, 6, 2},
              {1400 * MS, 5, 3}},
     .raised = NONE,
     .holding = -1},
    /* The window (5 s): the first NAK exactly 5 s before the poll. */
    {.name = "first NAK exactly the window before the poll",
     .polls = {{0, 0}, {1 * SEC, 0}, {7 * SEC, 3}},
     .naks = {{2 * SEC, 5, 1},
              {6500 * MS, 6, 1},
              {6600 * MS, 5, 2},
              {6700 * MS, 6, 2},
              {6800 * MS, 5, 3}},
     .raised = 2,
     .holding = 1},
    {.name = "first NAK 1 ns more than the window before the poll",
     .polls = {{0, 0}, {1 * SEC, 0}, {7 * SEC, 3}},
     .naks = {{2 * SEC - 1, 5, 1},
              {6500 * MS, 6, 1},
              {6600 * MS, 5, 2},
              {6700 * MS, 6, 2},
              {6800 * MS, 5, 3}},
     .raised = NONE,
     .holding = -1},
    /* The loop max_deliver bounds. */
    {.name = "max_deliver exactly 10",
     .polls = POLLS_0_1_2,
     .naks = NAKS_5_OF_3,
     .max_deliver = 10,
     .raised = NONE,
     .holding = -1},
    {.name = "max_deliver 11",
     .polls = POLLS_0_1_2,
     .naks = NAKS_5_OF_3,
     .max_deliver = 11,
     .raised = 2,
     .holding = 1},
    /* It holds while the NAKs are in the window at the poll: the first of
     * them (1.1 s) is exactly 5 s before the last poll. */
    {.name = "held while the first NAK is exactly the window old",
     .polls = {{0, 0},
               {1 * SEC, 0},
               {2 * SEC, 3},
               {3 * SEC, 0},
               {4 * SEC, 0},
               {5 * SEC, 0},
               {6100 * MS, 0}},
     .naks = NAKS_5_OF_3,
     .raised = 2,
     .holding = 1},
    {.name = "missing once the first NAK is 1 ns more than the window old",
     .polls = {{0, 0},
               {1 * SEC, 0},
               {2 * SEC, 3},
               {3 * SEC, 0},
               {4 * SEC, 0},
               {5 * SEC, 0},
               {6100 * MS + 1, 0}},
     .naks = NAKS_5_OF_3,
     .raised = 2,
     .holding = 0},
};

static void test_nak_advised_boundaries(void) {
  for (size_t i = 0; i < sizeof(advised_cases) / sizeof(advised_cases[0]);
       i++) {
    const advised_case *k = &advised_cases[i];
    world w;
    options none = {0};
    world_with(&w, false, &none);
    nl_stream_snap *s = add_stream(&w, "NA");
    s->last_seq = s->msgs = 1000;
    nl_consumer_snap *c = add_consumer(&w, 0, "loop");
    c->max_deliver = k->max_deliver ? k->max_deliver : -1;
    c->ack_floor_stream_seq = 4;
    c->delivered_stream_seq = c->delivered_consumer_seq = 7;
    c->num_ack_pending = 3;
    c->num_pending = 100;
    int64_t base = w.t;
    int raised = NONE, last_poll = NONE;
    unsigned p = 0, n = 0, naks = 0;
    uint64_t total = 0;
    const unsigned max_p = sizeof(k->polls) / sizeof(k->polls[0]);
    const unsigned max_n = sizeof(k->naks) / sizeof(k->naks[0]);
    for (;;) {
      bool more_polls = p < max_p && (p == 0 || k->polls[p].at_ns != 0);
      bool more_naks = n < max_n && k->naks[n].deliveries != 0;
      if (!more_polls && !more_naks)
        break;
      bool poll_next =
          more_polls && (!more_naks || k->polls[p].at_ns <= k->naks[n].at_ns);
      if (poll_next) {
        c->delivered_consumer_seq += k->polls[p].again;
        total += k->polls[p].again;
        w.t = base + k->polls[p].at_ns;
        world_poll(&w);
        last_poll = (int)p;
        if (raised == NONE && w.onsets[NL_NAK_STORM] > 0)
          raised = (int)p;
        p++;
      } else {
        w.t = base + k->naks[n].at_ns;
        world_advise(&w, NL_ADV_NAK, "NA", "loop", k->naks[n].seq,
                     k->naks[n].deliveries);
        naks++;
        if (raised == NONE && w.onsets[NL_NAK_STORM] > 0)
          raised = BETWEEN_POLLS;
        n++;
      }
    }
    EXPECT_EQ(k, raised, k->raised);
    EXPECT(k, last_poll >= 2);
    /* The NAKs reached the consumer, and the polls counted its
     * redeliveries. */
    nl_consumer_state *st = state_of(&w, "NA", "loop");
    EXPECT(k, st != NULL && st->advised != NULL && st->advised->n_naks == naks);
    EXPECT(k, st != NULL && st->redelivered_total == total);
    const nl_finding *f = held(&w, "NA", "loop", NL_NAK_STORM);
    if (k->holding >= 0) {
      EXPECT(k, f != NULL);
      EXPECT_EQ(k, nl_finding_holding(f), k->holding);
    }
    if (raised != NONE && f != NULL) {
      EXPECT(k, nl_finding_get(f, "from_advisories", 0) == 1);
      EXPECT(k, nl_finding_get(f, "max_deliveries", 0) == 3);
      EXPECT(k, nl_finding_get(f, "cycling_seq_1", 0) == 5);
    }
    EXPECT_EQ(k, w.onsets[NL_ACK_WAIT_VIOLATION], 0);
    EXPECT_EQ(k, w.onsets[NL_MISSING_PROGRESS], 0);
    world_free(&w);
  }
}

/* ---- Precedence over the slow-processing classes ---------------------- */

/* Consumer NP/slow (ack_wait 2 s, 20 outstanding, the floor moving, acks
 * going on) with expiry rounds at polls 1 and 5 (`expiry` redeliveries
 * each, `fresh` new messages a poll), which alone raise the class named at
 * poll 5; and at poll 5 a NAK loop proven by its advisories (five NAKs
 * between 4.1 and 4.5 s, the fifth of a fifth delivery, and their five
 * redeliveries counted at poll 5). NAK_STORM holds while the NAKs are in
 * its 5 s window (to poll 9) and suppresses the class; from poll 10 the
 * class, whose rounds are still recent, is raised. */
typedef struct {
  const char *name;
  unsigned expiry;
  unsigned fresh;
  bool nak_loop;
  nl_class cls; /* The class the rounds raise. */
  int storm_onset;
  int cls_onset;
} precedence_case;

static const precedence_case precedence_cases[] = {
    /* Without the loop, the rounds raise ACK_WAIT_VIOLATION at 5. */
    {.name = "slow processing alone",
     .expiry = 4,
     .fresh = 2,
     .nak_loop = false,
     .cls = NL_ACK_WAIT_VIOLATION,
     .storm_onset = NONE,
     .cls_onset = 5},
    {.name = "NAK_STORM suppresses ACK_WAIT_VIOLATION",
     .expiry = 4,
     .fresh = 2,
     .nak_loop = true,
     .cls = NL_ACK_WAIT_VIOLATION,
     .storm_onset = 5,
     .cls_onset = 10},
    /* A small share of redeliveries: long tasks, MISSING_PROGRESS. */
    {.name = "long tasks alone",
     .expiry = 2,
     .fresh = 8,
     .nak_loop = false,
     .cls = NL_MISSING_PROGRESS,
     .storm_onset = NONE,
     .cls_onset = 5},
    {.name = "NAK_STORM suppresses MISSING_PROGRESS",
     .expiry = 2,
     .fresh = 8,
     .nak_loop = true,
     .cls = NL_MISSING_PROGRESS,
     .storm_onset = 5,
     .cls_onset = 10},
};

static void test_nak_precedence(void) {
  for (size_t i = 0; i < sizeof(precedence_cases) / sizeof(precedence_cases[0]);
       i++) {
    const precedence_case *k = &precedence_cases[i];
    world w;
    options none = {0};
    world_with(&w, false, &none);
    nl_stream_snap *s = add_stream(&w, "NP");
    s->last_seq = s->msgs = 100000;
    nl_consumer_snap *c = add_consumer(&w, 0, "slow");
    c->ack_wait_ns = 2 * SEC;
    c->delivered_stream_seq = c->delivered_consumer_seq = 1000;
    c->num_pending = 20;
    int storm = NONE, cls = NONE;
    nl_class other = k->cls == NL_ACK_WAIT_VIOLATION ? NL_MISSING_PROGRESS
                                                     : NL_ACK_WAIT_VIOLATION;
    for (int p = 0; p < 14; p++) {
      unsigned again = (p == 1 || p == 5) ? k->expiry : 0;
      if (p == 5 && k->nak_loop) {
        int64_t at = w.t;
        for (uint64_t d = 1; d <= 5; d++) {
          w.t = at - SEC + (int64_t)d * 100 * MS;
          world_advise(&w, NL_ADV_NAK, "NP", "slow", 995, d);
        }
        w.t = at;
        again += 5;
      }
      if (p > 0) {
        c->delivered_stream_seq += k->fresh;
        c->delivered_consumer_seq += k->fresh + again;
      }
      c->ack_last_ns = w.t - SEC / 10;
      c->ack_floor_stream_seq = c->delivered_stream_seq - 20;
      c->num_ack_pending = 20;
      world_poll(&w);
      if (storm == NONE && w.onsets[NL_NAK_STORM] > 0)
        storm = p;
      if (cls == NONE && w.onsets[k->cls] > 0)
        cls = p;
    }
    EXPECT_EQ(k, storm, k->storm_onset);
    EXPECT_EQ(k, cls, k->cls_onset);
    EXPECT_EQ(k, w.onsets[other], 0);
    nl_consumer_state *st = state_of(&w, "NP", "slow");
    EXPECT(k, st != NULL && st->redelivered_total ==
                                2 * k->expiry + (k->nak_loop ? 5 : 0));
    world_free(&w);
  }
}

/* ---- After a reset ---------------------------------------------------- */

typedef enum {
  RESET_FIX,      /* max_deliver set to 5: the loop is bounded. */
  RESET_RECREATE, /* Deleted and created again: a new history. */
  RESET_GONE,     /* The poison message is terminated. */
} reset_kind;

typedef struct {
  const char *name;
  reset_kind kind;
  int clears_after; /* Polls from the reset (included) to the clearing. */
  int next_onset;   /* Polls from the reset to the next onset, or NONE. */
} reset_case;

static const reset_case reset_cases[] = {
    /* The fix clears at once, though the loop goes on (bounded now). */
    {.name = "max_deliver bounded",
     .kind = RESET_FIX,
     .clears_after = 1,
     .next_onset = NONE},
    /* Created again: cleared at once; the loop going on in the new
     * consumer needs two intervals of its own (the reset's poll is its
     * first). */
    {.name = "consumer created again",
     .kind = RESET_RECREATE,
     .clears_after = 1,
     .next_onset = 2},
    /* The loop ends at the reset: missing from then on, cleared 30 s and
     * at least two polls later. */
    {.name = "poison message terminated",
     .kind = RESET_GONE,
     .clears_after = 31,
     .next_onset = NONE},
};

static void test_nak_after_reset(void) {
  for (size_t i = 0; i < sizeof(reset_cases) / sizeof(reset_cases[0]); i++) {
    const reset_case *k = &reset_cases[i];
    world w;
    options none = {0};
    world_with(&w, false, &none);
    add_stream(&w, "NS")->last_seq = 1000;
    nl_consumer_snap *c = add_consumer(&w, 0, "loop");
    c->ack_floor_stream_seq = 10;
    c->delivered_stream_seq = c->delivered_consumer_seq = 11;
    c->num_ack_pending = 1;
    c->num_pending = 100;
    /* A loop of 40 redeliveries a second from poll 1: raised at 2; the
     * reset at 4. */
    int onset = NONE, cleared = NONE, next = NONE;
    for (int p = 0; p < 50; p++) {
      if (p == 4) {
        if (k->kind == RESET_FIX)
          c->max_deliver = 5;
        if (k->kind == RESET_RECREATE) {
          c->created_ns += SEC;
          c->delivered_stream_seq = c->delivered_consumer_seq = 3;
          c->ack_floor_stream_seq = 2;
        }
        if (k->kind == RESET_GONE) {
          c->ack_floor_stream_seq = c->delivered_stream_seq;
          c->num_ack_pending = 0;
          c->ack_last_ns = w.t - SEC / 10;
        }
      }
      /* The loop goes on, except on the reset's poll of the consumer
       * created again (its first), and after the poison message ends. */
      if (p > 0 && !(k->kind == RESET_RECREATE && p == 4) &&
          !(k->kind == RESET_GONE && p >= 4))
        c->delivered_consumer_seq += 40;
      int before = w.onsets[NL_NAK_STORM];
      world_poll(&w);
      if (onset == NONE && w.onsets[NL_NAK_STORM] > 0)
        onset = p;
      if (p >= 4 && next == NONE && w.onsets[NL_NAK_STORM] > before)
        next = p - 4;
      if (p >= 4 && cleared == NONE && w.clears[NL_NAK_STORM] > 0)
        cleared = p - 4 + 1;
    }
    EXPECT_EQ(k, onset, 2);
    EXPECT_EQ(k, cleared, k->clears_after);
    EXPECT_EQ(k, next, k->next_onset);
    EXPECT_EQ(k, w.onsets[NL_NAK_STORM], 1 + (k->next_onset != NONE));
    nl_consumer_state *st = state_of(&w, "NS", "loop");
    EXPECT(k,
           st != NULL && st->resets == (k->kind == RESET_RECREATE ? 1u : 0u));
    /* The bounded loop went on being counted. */
    if (k->kind == RESET_FIX)
      EXPECT(k, st != NULL && st->redelivered_total == 49 * 40);
    world_free(&w);
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_nak_polled_boundaries),  NL_TEST(test_nak_polled_evidence),
    NL_TEST(test_nak_advised_boundaries), NL_TEST(test_nak_precedence),
    NL_TEST(test_nak_after_reset),
};

NL_TEST_MAIN(tests)
