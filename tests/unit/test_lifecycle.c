/* test_lifecycle.c: the life of a held finding (plugin/core/nl_lifecycle.c)
 * at its boundaries, table-driven.
 *
 * The first table drives nl_lifecycle_update directly, one detection per
 * step, with the times, configuration keys, hints and costs of each step
 * given exactly: the clearing hold at, one nanosecond below and above its
 * 30 s; the two polls at, one below and one above; a fix (a new key)
 * clearing at once; an advisory's detection (key 0) only raising; the
 * condition_since hints; the costs counted since the onset; one finding
 * set twice. The second table runs the same rules through the engine with
 * real classes (PUBLISH_REJECTED, MAX_DELIVER_EXHAUSTED), so that what the
 * engine hands the lifecycle (keys, cost bases, the clearing hold of its
 * parameters) is checked too. */
#include "nl_test.h"
#include "nl_world.h"

#include "core/nl_lifecycle.h"

#include <stdlib.h>
#include <string.h>

/* The time of the first step of every case. */
#define T0 (1700000000LL * SEC)

/* A hint value meaning "no hint" (condition_since_ns 0). */
#define NO_HINT INT64_MIN

/* What the sink of the direct cases saw. */
typedef struct {
  int onsets, clears;
  const char *reason;
} seen;

static void on_change(void *ud, const char *stream, const char *consumer,
                      const nl_finding *f, bool active, const char *reason) {
  (void)stream, (void)consumer, (void)f;
  seen *s = ud;
  if (active) {
    s->onsets++;
  } else {
    s->clears++;
    s->reason = reason;
  }
}

/* One detection handed to the lifecycle, and what must hold after it. */
typedef struct {
  int64_t at_ns;  /* Since T0. */
  bool on;        /* The condition holds. */
  uint64_t key;   /* The configuration seen; 0: an advisory's detection. */
  int64_t hint;   /* condition_since hint since T0, or NO_HINT (never 0). */
  uint64_t lost;  /* The cost base: lost now ... */
  uint64_t lost0; /* ... and before the interval that ended now. */
  double value;   /* The evidence "v" of the finding found. */
  /* Expected after the step: a finding held, and the transitions so
   * far. */
  bool held;
  int onsets, clears;
} step;

#define MAX_STEPS 8

/* What the held finding must show after the last step; not checked when
 * left out (config_key 0: every case that checks names its key). */
typedef struct {
  int64_t since;      /* since_ns, since T0. */
  int64_t cond_since; /* condition_since_ns since T0, or NO_HINT for 0. */
  uint64_t lost, onset_lost;
  double value;
  uint32_t absent_polls;
  uint64_t config_key;
} final_state;

typedef struct {
  const char *name;
  int64_t hold_ns;
  step steps[MAX_STEPS]; /* Ended by the first step left out. */
  final_state end;
} life_case;

#define S (SEC)
#define K1 11u
#define K2 22u

/* An onset at 0 s under K1, the start of most cases. */
#define RAISE_K1                                                               \
  { 0, true, K1, NO_HINT, 0, 0, 1, true, 1, 0 }

/* Each step: {at_ns, on, key, hint, lost, lost0, value, held, onsets,
 * clears} (see step). */
static const life_case life_cases[] = {
    /* The clearing hold (30 s) and the two polls. */
    {.name = "hold: clears at exactly 30 s, on the second missing poll",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "hold: one nanosecond short of 30 s stays, then clears at 30 s",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S - 1, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "hold: one nanosecond past 30 s clears",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S + 1, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "hold: measured from the first missing poll, not from the onset",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {20 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {50 * S - 1, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {50 * S, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name =
         "polls: one missing poll never clears, however long after the onset",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1, {1000 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 1,
             .config_key = K1}},
    {.name = "polls: without a hold, one missing poll stays",
     .hold_ns = 0,
     .steps = {RAISE_K1, {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 1,
             .config_key = K1}},
    {.name = "polls: without a hold, the second missing poll clears",
     .hold_ns = 0,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {1 * S + 1, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "polls: a third missing poll within the hold does not clear early",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {2 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {16 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "hold: the condition back restarts the count",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {2 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {20 * S, true, K1, NO_HINT, 0, 0, 2, true, 1, 0},
               {21 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {51 * S - 1, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {51 * S, false, K1, NO_HINT, 0, 0, 0, false, 1, 1}}},
    /* A fix: the configuration changed since the condition last held. */
    {.name = "fix: a new key clears at the first missing poll",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1, {1 * S, false, K2, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name =
         "fix: a new key while the condition holds keeps it, under that key",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, true, K2, NO_HINT, 0, 0, 2, true, 1, 0},
               {2 * S, false, K2, NO_HINT, 0, 0, 0, true, 1, 0},
               {32 * S, false, K2, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "fix: a new key after missing polls clears at once",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {2 * S, false, K2, NO_HINT, 0, 0, 0, false, 1, 1}}},
    /* An advisory's detection (key 0): it raises or updates, never clears
     * or counts as a missing poll. */
    {.name = "advisory: missing conditions from advisories count for nothing",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, 0, NO_HINT, 0, 0, 0, true, 1, 0},
               {2 * S, false, 0, NO_HINT, 0, 0, 0, true, 1, 0},
               {40 * S, false, 0, NO_HINT, 0, 0, 0, true, 1, 0},
               {41 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 1,
             .config_key = K1}},
    {.name =
         "advisory: no finding, nothing raised when its condition is missing",
     .hold_ns = 30 * S,
     .steps = {{0, false, 0, NO_HINT, 0, 0, 0, false, 0, 0},
               {1 * S, false, K1, NO_HINT, 0, 0, 0, false, 0, 0}}},
    {.name =
         "advisory: raised by an advisory, the key is not known: held by the "
         "hold",
     .hold_ns = 30 * S,
     .steps = {{0, true, 0, NO_HINT, 0, 0, 1, true, 1, 0},
               {1 * S, false, K2, NO_HINT, 0, 0, 0, true, 1, 0},
               {31 * S, false, K2, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name =
         "advisory then poll: one onset, the poll's key is taken, a fix clears",
     .hold_ns = 30 * S,
     .steps = {{0, true, 0, NO_HINT, 0, 0, 1, true, 1, 0},
               {1 * S, true, K1, NO_HINT, 0, 0, 2, true, 1, 0},
               {2 * S, false, K2, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "advisory after a poll: its update keeps the poll's key",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, true, 0, NO_HINT, 0, 0, 3, true, 1, 0},
               {2 * S, false, K2, NO_HINT, 0, 0, 0, false, 1, 1}}},
    {.name = "advisory then poll: the onset time is the advisory's",
     .hold_ns = 30 * S,
     .steps = {{5 * S, true, 0, NO_HINT, 0, 0, 1, true, 1, 0},
               {6 * S, true, K1, NO_HINT, 0, 0, 2, true, 1, 0}},
     .end = {.since = 5 * S,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 2,
             .absent_polls = 0,
             .config_key = K1}},
    /* One finding set twice: the onset and its cost are kept, the
     * evidence is the latest. */
    {.name =
         "one finding set twice: one onset, evidence updated, onset time and "
         "cost kept",
     .hold_ns = 30 * S,
     .steps = {{0, true, K1, NO_HINT, 10, 7, 1, true, 1, 0},
               {10 * S, true, K1, NO_HINT, 15, 12, 2, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 8,
             .onset_lost = 7,
             .value = 2,
             .absent_polls = 0,
             .config_key = K1}},
    {.name =
         "one finding set twice after missing polls: the missing count starts "
         "again",
     .hold_ns = 30 * S,
     .steps = {RAISE_K1,
               {1 * S, false, K1, NO_HINT, 0, 0, 0, true, 1, 0},
               {2 * S, true, K1, NO_HINT, 0, 0, 5, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 5,
             .absent_polls = 0,
             .config_key = K1}},
    /* Costs: the onset counts its own interval; while held, everything
     * since. */
    {.name = "cost: the onset's own interval counts",
     .hold_ns = 30 * S,
     .steps = {{0, true, K1, NO_HINT, 10, 7, 1, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 3,
             .onset_lost = 7,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "cost: still counted while the condition is missing and held",
     .hold_ns = 30 * S,
     .steps = {{0, true, K1, NO_HINT, 10, 7, 1, true, 1, 0},
               {1 * S, false, K1, NO_HINT, 20, 15, 0, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 13,
             .onset_lost = 7,
             .value = 1,
             .absent_polls = 1,
             .config_key = K1}},
    {.name = "cost: a counter that went back counts nothing",
     .hold_ns = 30 * S,
     .steps = {{0, true, K1, NO_HINT, 10, 7, 1, true, 1, 0},
               {1 * S, true, K1, NO_HINT, 3, 3, 1, true, 1, 0}},
     .end = {.since = 0,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 7,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    /* condition_since hints: only a time before the onset counts, and the
     * earliest is kept. */
    {.name = "hint: one nanosecond before the onset is kept",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, 10 * S - 1, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = 10 * S - 1,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "hint: at the onset itself is no hint",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, 10 * S, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "hint: after the onset is no hint",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, 10 * S + 1, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "hint: a later detection's earlier hint is taken",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, 5 * S, 0, 0, 1, true, 1, 0},
               {11 * S, true, K1, 2 * S, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = 2 * S,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "hint: a later detection's later hint does not move it",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, 2 * S, 0, 0, 1, true, 1, 0},
               {11 * S, true, K1, 5 * S, 0, 0, 1, true, 1, 0},
               {12 * S, true, K1, NO_HINT, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = 2 * S,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "hint: first given while held, one nanosecond before the onset",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, NO_HINT, 0, 0, 1, true, 1, 0},
               {11 * S, true, K1, 10 * S - 1, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = 10 * S - 1,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
    {.name = "hint: first given while held, at the onset, is no hint",
     .hold_ns = 30 * S,
     .steps = {{10 * S, true, K1, NO_HINT, 0, 0, 1, true, 1, 0},
               {11 * S, true, K1, 10 * S, 0, 0, 1, true, 1, 0}},
     .end = {.since = 10 * S,
             .cond_since = NO_HINT,
             .lost = 0,
             .onset_lost = 0,
             .value = 1,
             .absent_polls = 0,
             .config_key = K1}},
};

/* Whether p is a step of its case (the first left out is all zero; every
 * step given has a hint, NO_HINT at least). */
static bool step_given(const step *p) { return p->hint != 0; }

/* Runs case lc; reports its name with the first failed check. */
static void run_life_case(const life_case *lc) {
  nl_lifecycle life;
  memset(&life, 0, sizeof(life));
  life.hold_ns = lc->hold_ns;
  nl_finding *held = NULL;
  seen s = {0, 0, NULL};
  nl_engine_sink sink = {.transition = on_change};
  for (int i = 0; i < MAX_STEPS && (i == 0 || step_given(&lc->steps[i])); i++) {
    const step *p = &lc->steps[i];
    nl_finding found;
    memset(&found, 0, sizeof(found));
    nl_finding_start(&found, NL_PUBLISH_REJECTED);
    nl_finding_add(&found, "v", p->value);
    snprintf(found.fix_command, sizeof(found.fix_command),
             "nats stream edit S --max-msgs 10");
    found.condition_since_ns = p->hint == NO_HINT ? 0 : T0 + p->hint;
    /* Redeliveries are counted as lost messages are: twice as many here,
     * so that the two are not mixed up. */
    nl_cost_base base = {p->lost, 2 * p->lost, p->lost0, 2 * p->lost0};
    nl_lifecycle_update(&life, &held, p->on, &found, "S", "", p->key, base,
                        T0 + p->at_ns, &sink, &s);
    bool ok = (held != NULL) == p->held && s.onsets == p->onsets &&
              s.clears == p->clears;
    if (!ok)
      fprintf(stderr,
              "  case \"%s\", step %d: held %d onsets %d clears %d, "
              "expected %d %d %d\n",
              lc->name, i + 1, held != NULL, s.onsets, s.clears, p->held,
              p->onsets, p->clears);
    CHECK(ok);
    if (!ok)
      break;
  }
  const final_state *e = &lc->end;
  if (e->config_key != 0) {
    CHECK_CASE(lc->name, held != NULL);
  }
  if (e->config_key != 0 && held != NULL) {
    int64_t cs = e->cond_since == NO_HINT ? 0 : T0 + e->cond_since;
    bool ok = held->since_ns == T0 + e->since &&
              held->condition_since_ns == cs && held->lost == e->lost &&
              held->onset_lost == e->onset_lost &&
              held->redelivered == 2 * e->lost &&
              held->onset_redelivered == 2 * e->onset_lost &&
              nl_finding_get(held, "v", -1) == e->value &&
              held->absent_polls == e->absent_polls &&
              held->config_key == e->config_key;
    if (!ok)
      fprintf(
          stderr,
          "  case \"%s\": since %lld cond %lld lost %llu onset_lost "
          "%llu v %g absent %u key %llu\n",
          lc->name, (long long)(held->since_ns - T0),
          (long long)(held->condition_since_ns ? held->condition_since_ns - T0
                                               : -1),
          (unsigned long long)held->lost, (unsigned long long)held->onset_lost,
          nl_finding_get(held, "v", -1), held->absent_polls,
          (unsigned long long)held->config_key);
    CHECK(ok);
  }
  /* A clear with no reason is its condition ending (or a fix), kept
   * among the resolved findings. */
  if (s.clears > 0) {
    const nl_resolved *r = nl_lifecycle_resolved(&life, 0);
    CHECK_CASE(lc->name, s.reason == NULL);
    CHECK_CASE(lc->name, r != NULL && strcmp(r->stream, "S") == 0 &&
                             r->reason == NULL && r->f.since_ns >= T0);
  }
  free(held);
  nl_lifecycle_free(&life);
}

/* Runs the cases of life_cases whose name starts with prefix (a group of
 * one rule); at least one must. */
static void run_life_cases(const char *prefix) {
  int n = 0;
  for (size_t i = 0; i < sizeof(life_cases) / sizeof(life_cases[0]); i++)
    if (strncmp(life_cases[i].name, prefix, strlen(prefix)) == 0) {
      run_life_case(&life_cases[i]);
      n++;
    }
  CHECK(n > 0);
}

static void test_lifecycle_hold(void) { run_life_cases("hold:"); }

static void test_lifecycle_polls(void) { run_life_cases("polls:"); }

static void test_lifecycle_fix(void) { run_life_cases("fix:"); }

static void test_lifecycle_advisory(void) { run_life_cases("advisory"); }

static void test_lifecycle_set_twice(void) {
  run_life_cases("one finding set twice");
}

static void test_lifecycle_cost(void) { run_life_cases("cost:"); }

static void test_lifecycle_hint(void) { run_life_cases("hint:"); }

/* Every case of life_cases is in one of the groups above. */
static void test_lifecycle_groups(void) {
  static const char *const groups[] = {
      "hold:", "polls:", "fix:", "advisory", "one finding set twice",
      "cost:", "hint:"};
  for (size_t i = 0; i < sizeof(life_cases) / sizeof(life_cases[0]); i++) {
    int in = 0;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
      in += strncmp(life_cases[i].name, groups[g], strlen(groups[g])) == 0;
    if (in != 1)
      fprintf(stderr, "  case \"%s\" is in %d groups\n", life_cases[i].name,
              in);
    CHECK(in == 1);
  }
}

/* A finding's fix command with a name the nats CLI would not take is
 * taken back at the onset and at every update. */
static void test_lifecycle_guards_fix(void) {
  nl_lifecycle life;
  memset(&life, 0, sizeof(life));
  life.hold_ns = 30 * SEC;
  nl_finding *held = NULL;
  seen s = {0, 0, NULL};
  nl_engine_sink sink = {.transition = on_change};
  for (int i = 0; i < 2; i++) {
    nl_finding found;
    memset(&found, 0, sizeof(found));
    nl_finding_start(&found, NL_PUBLISH_REJECTED);
    snprintf(found.fix_command, sizeof(found.fix_command),
             "nats stream edit -S --max-msgs 10");
    nl_lifecycle_update(&life, &held, true, &found, "-S", "", K1,
                        (nl_cost_base){0, 0, 0, 0}, T0 + i * SEC, &sink, &s);
    CHECK(held != NULL && held->fix_command[0] == '\0');
  }
  CHECK_EQ_U(s.onsets, 1);
  free(held);
  nl_lifecycle_free(&life);
}

/* The engine's cases: a world whose clearing hold is hold_s, a stream "M"
 * with discard new at its max_msgs, and the steps of each case. */
typedef enum {
  W_END = 0,  /* The end of the steps (a step left out). */
  W_FULL,     /* The stream at its max_msgs (5 of 5). */
  W_FULLER,   /* Still at it, holding one more (6 of 5). */
  W_ROOM,     /* Room: 4 of 5. */
  W_FIX,      /* max_msgs raised to 10: a fix. */
  W_STEP,     /* The next poll comes this many seconds later (arg). */
  W_ADVISORY, /* MAX_DELIVERIES of consumer D's message (arg). */
  W_UNLIMIT,  /* D's max_deliver unlimited: a fix. */
  W_POLL,     /* One poll. */
} w_op;

typedef struct {
  w_op op;
  int arg;
} w_step;

typedef struct {
  const char *name;
  double hold_s;
  w_step steps[24];
  /* Expected at the end: onsets and clears of PUBLISH_REJECTED (M) and
   * MAX_DELIVER_EXHAUSTED (D), and the polls after which M cleared (0:
   * not checked). */
  int m_onsets, m_clears, d_onsets, d_clears;
  int m_cleared_at_poll;
} w_case;

static const w_case w_cases[] = {
    /* The hold of 30 s at 1 s polls: 31 polls after the first without the
     * condition (the first, and 30 s more). */
    {.name = "engine: drained, cleared by the hold at 1 s polls",
     .hold_s = 30,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_ROOM, 0}, {W_POLL, 31}, {W_END, 0}},
     .m_onsets = 1,
     .m_clears = 1,
     .m_cleared_at_poll = 32},
    {.name = "engine: one poll short of the hold at 1 s polls",
     .hold_s = 30,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_ROOM, 0}, {W_POLL, 30}, {W_END, 0}},
     .m_onsets = 1},
    /* Polls 60 s apart: the hold is over at the second missing poll, not
     * the first. */
    {.name = "engine: slow polls, the second missing poll clears",
     .hold_s = 30,
     .steps = {{W_FULL, 0},
               {W_POLL, 0},
               {W_STEP, 60},
               {W_ROOM, 0},
               {W_POLL, 0},
               {W_POLL, 0},
               {W_END, 0}},
     .m_onsets = 1,
     .m_clears = 1,
     .m_cleared_at_poll = 3},
    {.name = "engine: slow polls, one missing poll stays",
     .hold_s = 30,
     .steps = {{W_FULL, 0},
               {W_POLL, 0},
               {W_STEP, 60},
               {W_ROOM, 0},
               {W_POLL, 0},
               {W_END, 0}},
     .m_onsets = 1},
    /* ClearHoldSeconds 0: two polls still. */
    {.name = "engine: no hold, the second missing poll clears",
     .hold_s = 0,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_ROOM, 0}, {W_POLL, 2}, {W_END, 0}},
     .m_onsets = 1,
     .m_clears = 1,
     .m_cleared_at_poll = 3},
    {.name = "engine: no hold, one missing poll stays",
     .hold_s = 0,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_ROOM, 0}, {W_POLL, 0}, {W_END, 0}},
     .m_onsets = 1},
    /* ClearHoldSeconds 10 at 1 s polls: 11 polls. */
    {.name = "engine: a hold of 10 s, one poll short",
     .hold_s = 10,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_ROOM, 0}, {W_POLL, 10}, {W_END, 0}},
     .m_onsets = 1},
    {.name = "engine: a hold of 10 s, at it",
     .hold_s = 10,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_ROOM, 0}, {W_POLL, 11}, {W_END, 0}},
     .m_onsets = 1,
     .m_clears = 1,
     .m_cleared_at_poll = 12},
    /* A fix clears at the first poll that sees it with the condition
     * gone; while the condition holds under the new configuration, the
     * finding stays. */
    {.name = "engine: a fix clears at once",
     .hold_s = 30,
     .steps = {{W_FULL, 0}, {W_POLL, 0}, {W_FIX, 0}, {W_POLL, 0}, {W_END, 0}},
     .m_onsets = 1,
     .m_clears = 1,
     .m_cleared_at_poll = 2},
    {.name = "engine: one finding set twice keeps one onset and its time",
     .hold_s = 30,
     .steps = {{W_FULL, 0},
               {W_POLL, 0},
               {W_FULLER, 0},
               {W_POLL, 0},
               {W_FULL, 0},
               {W_POLL, 3},
               {W_END, 0}},
     .m_onsets = 1},
    /* Raised by an advisory, then held by the polls: one onset; the
     * polls' configuration is the finding's, so the fix clears at once. */
    {.name = "engine: raised by an advisory, then by a poll, then fixed",
     .hold_s = 30,
     .steps = {{W_POLL, 0},
               {W_ADVISORY, 7},
               {W_POLL, 0},
               {W_ADVISORY, 8},
               {W_POLL, 0},
               {W_UNLIMIT, 0},
               {W_POLL, 0},
               {W_END, 0}},
     .d_onsets = 1,
     .d_clears = 1},
};

/* Applies the steps of case k to a world, checking what is said of each
 * step as it goes; returns at the end. */
static void run_w_case(const w_case *k) {
  world w;
  world_init(&w, true);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = true;
  p.push_unbound_s = 2;
  p.clear_hold_s = k->hold_s;
  nl_engine_free(w.engine);
  w.engine = nl_engine_create(&p);
  nl_stream_snap *m = add_stream(&w, "M");
  m->discard_new = true;
  m->max_msgs = 5;
  m->msgs = 4;
  m->last_seq = 4;
  add_stream(&w, "MD");
  nl_consumer_snap *d = add_consumer(&w, 1, "D");
  d->max_deliver = 3;
  d->delivered_stream_seq = d->delivered_consumer_seq = 20;
  int polls = 0, cleared_at = 0;
  int64_t d_since = 0, m_since = 0;
  for (const w_step *s = k->steps; s->op != W_END; s++) {
    switch (s->op) {
    case W_FULL:
      m->msgs = 5;
      m->last_seq++;
      break;
    case W_FULLER:
      m->msgs = 6;
      m->last_seq++;
      break;
    case W_ROOM:
      m->msgs = 4;
      break;
    case W_FIX:
      m->max_msgs = 10;
      break;
    case W_STEP:
      w.step_ns = s->arg * SEC;
      break;
    case W_ADVISORY: {
      int64_t at = w.t;
      world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "D", (uint64_t)s->arg, 3);
      if (d_since == 0 && active_for(&w, "MD", "D", NL_MAX_DELIVER_EXHAUSTED))
        d_since = at;
      break;
    }
    case W_UNLIMIT:
      d->max_deliver = -1;
      break;
    case W_POLL:
      for (int i = 0; i < (s->arg > 0 ? s->arg : 1); i++) {
        bool was = active_for(&w, "M", NULL, NL_PUBLISH_REJECTED);
        world_poll(&w);
        polls++;
        if (was && !active_for(&w, "M", NULL, NL_PUBLISH_REJECTED) &&
            cleared_at == 0)
          cleared_at = polls;
        const nl_finding *f =
            nl_engine_stream_finding(w.engine, "M", NL_PUBLISH_REJECTED);
        if (f != NULL && m_since == 0)
          m_since = f->since_ns;
        /* A finding held keeps its onset time. */
        CHECK_CASE(k->name, f == NULL || f->since_ns == m_since);
        nl_consumer_state *st =
            nl_registry_find(nl_engine_registry(w.engine), "MD", "D");
        const nl_finding *g =
            st != NULL ? st->active[NL_MAX_DELIVER_EXHAUSTED] : NULL;
        CHECK_CASE(k->name, g == NULL || g->since_ns == d_since);
      }
      break;
    case W_END:
      break;
    }
  }
  bool ok = w.onsets[NL_PUBLISH_REJECTED] == k->m_onsets &&
            w.clears[NL_PUBLISH_REJECTED] == k->m_clears &&
            w.onsets[NL_MAX_DELIVER_EXHAUSTED] == k->d_onsets &&
            w.clears[NL_MAX_DELIVER_EXHAUSTED] == k->d_clears &&
            (k->m_cleared_at_poll == 0 || cleared_at == k->m_cleared_at_poll);
  if (!ok)
    fprintf(stderr,
            "  case \"%s\": M %d onsets %d clears (cleared at poll %d), D %d "
            "onsets %d clears\n",
            k->name, w.onsets[NL_PUBLISH_REJECTED],
            w.clears[NL_PUBLISH_REJECTED], cleared_at,
            w.onsets[NL_MAX_DELIVER_EXHAUSTED],
            w.clears[NL_MAX_DELIVER_EXHAUSTED]);
  CHECK(ok);
  /* A finding whose condition held at the last poll (one set again and
   * again) carries that poll's evidence. */
  const nl_finding *f =
      nl_engine_stream_finding(w.engine, "M", NL_PUBLISH_REJECTED);
  if (nl_finding_holding(f)) {
    CHECK_CASE(k->name, nl_finding_get(f, "messages", 0) == (double)m->msgs);
  }
  CHECK_CASE(k->name, polls > 0);
  world_free(&w);
}

static void test_lifecycle_engine_table(void) {
  for (size_t k = 0; k < sizeof(w_cases) / sizeof(w_cases[0]); k++)
    run_w_case(&w_cases[k]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_lifecycle_hold),       NL_TEST(test_lifecycle_polls),
    NL_TEST(test_lifecycle_fix),        NL_TEST(test_lifecycle_advisory),
    NL_TEST(test_lifecycle_set_twice),  NL_TEST(test_lifecycle_cost),
    NL_TEST(test_lifecycle_hint),       NL_TEST(test_lifecycle_groups),
    NL_TEST(test_lifecycle_guards_fix), NL_TEST(test_lifecycle_engine_table),
};

NL_TEST_MAIN(tests)
