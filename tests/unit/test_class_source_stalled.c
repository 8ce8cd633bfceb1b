/* test_class_source_stalled.c: SOURCE_STALLED
 * (plugin/core/detect/nl_source_stalled.c, nl_source_text.c) at the
 * boundaries of each rule of docs/detectors.md, table-driven on the unit
 * tests' world.
 *
 * Each case is a copy stream C with one link to an origin O (a stream of
 * the same poll unless the link is external) and a script of steps: the
 * origin or the copy changed, the link's report changed, polls at given
 * times. After a step a case may expect the finding raised or not and the
 * copy stream's count of lost messages (what the engine reports for the
 * stream, to which the class adds the messages it counts as skipped).
 * The boundaries: NL_SOURCE_STALL_S (30 s) of waiting, of gain without
 * progress, of silence and of an origin newer than the copy, at, one
 * nanosecond below and above; NL_SOURCE_FRESH_S (5 s) of a live link;
 * NL_SOURCE_SETTLED_POLLS (2); the origin created again (its creation time
 * beyond 50 ms, its last sequence back, a mirror's position beyond it, the
 * one second of a restored origin's older messages); external and filtered
 * links; and the resets (the copy created again, its sources changed, a
 * condition gone and the clearing hold). */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

#define MS 1000000LL

/* A copy C of origin O in a world, and what the engine reported of C. */
typedef struct {
  world w;
  nl_source_link link;
  nl_stream_snap *o, *c;
  size_t listed;      /* Streams listed: 2, or 1 without the origin. */
  uint64_t lost;      /* C's lost count, as the last poll reported it. */
  int c_seen;         /* Polls that reported C (its classes judged). */
  int64_t last_poll;  /* The time of the last poll. */
  const char *reason; /* Of the last clear of C's finding. */
} src;

static void src_transition(void *ud, const char *stream, const char *consumer,
                           const nl_finding *f, bool active,
                           const char *reason) {
  src *x = ud;
  on_transition(&x->w, stream, consumer, f, active, reason);
  if (!active && strcmp(stream, "C") == 0)
    x->reason = reason;
}

static void src_stream(void *ud, const nl_stream_snap *s,
                       const nl_stream_ledger *ledger) {
  uint64_t lost = ledger->lost_total;
  src *x = ud;
  if (strcmp(s->name, "C") == 0) {
    x->lost = lost;
    x->c_seen++;
  }
}

/* One poll of the listed streams at the world's time; the next poll comes
 * a second later unless a step says otherwise. */
static void src_poll(src *x) {
  nl_snapshot_set set = {0};
  set.streams = x->w.streams;
  set.n_streams = x->listed;
  nl_engine_sink sink = {.transition = src_transition, .stream = src_stream};
  nl_engine_apply(x->w.engine, &set, x->w.t, &sink, x);
  x->last_poll = x->w.t;
  x->w.t += SEC;
}

/* The copy C (index 0, so that its origin's absence can be a shorter
 * list) and its origin O (index 1) of 50 messages, all taken; the link
 * live and idle (heard from half a second ago, no lag). */
static void src_init(src *x, bool mirror) {
  memset(x, 0, sizeof(*x));
  world_init(&x->w, true);
  int64_t t0 = x->w.t;
  x->c = add_stream(&x->w, "C");
  x->o = add_stream(&x->w, "O");
  x->listed = 2;
  nl_stream_snap *o = x->o, *c = x->c;
  o->created_ns = t0 - 3600 * SEC;
  o->first_ts_ns = o->created_ns + SEC;
  o->last_seq = o->msgs = 50;
  o->last_ts_ns = t0 - 100 * SEC;
  c->created_ns = t0 - 3000 * SEC;
  /* A mirror keeps its origin's numbering; a sourced stream numbers its
   * own messages (it took others before). */
  c->last_seq = c->msgs = mirror ? 50 : 80;
  c->last_ts_ns = t0 - 100 * SEC;
  c->is_mirror = mirror;
  x->link.name = "O";
  x->link.key = 7;
  x->link.have_info = true;
  x->link.active_ns = SEC / 2;
  c->links = &x->link;
  c->n_links = 1;
}

typedef enum {
  END = 0,         /* The end of the steps (a step left out). */
  POLL,            /* arg polls, a second apart (1 when 0). */
  GAP,             /* The next poll comes arg ns after the last one. */
  ACTIVE,          /* The link last heard from its origin arg ns ago. */
  LAG,             /* The link's lag. */
  ERROR,           /* The link reports error code arg. */
  PUBLISH,         /* The origin stores arg messages. */
  TAKE,            /* The copy takes arg messages (now). */
  RECREATE,        /* The origin deleted and created again (just before the
                      next poll) holding arg new messages. */
  RESTORED,        /* ... holding its old messages, its oldest stored arg ns
                      before its new creation time. */
  CREATED_SHIFT,   /* The origin's creation time moves by arg ns (a
                      restarted server's reading). */
  ORIGIN_BACK,     /* The origin's last sequence goes back to arg, its
                      creation time unknown (0). */
  NEWER,           /* The origin created arg ns after the copy's newest
                      message (before the first poll). */
  COPY_RECREATED,  /* The copy created again from its configuration: it
                      takes the origin's arg messages from the first. */
  SOURCES_CHANGED, /* The copy's link is another one (a new key). */
  UNLIST_ORIGIN,   /* The origin is no longer in the poll. */
  MIRROR_BACK,     /* The mirror's last sequence goes back to arg (it
                      follows the new origin's numbering, keeping its
                      messages). */
} op;

typedef struct {
  op op;
  int64_t arg;
  int raised;   /* After the step: 1 raised, 0 not, -1 not checked. */
  int64_t lost; /* After the step: C's lost count, or -1. */
} src_step;

#define MAX_STEPS 12

typedef struct {
  const char *name;
  bool mirror, external, filtered, start_set;
  src_step steps[MAX_STEPS];
  /* At the end: onsets and clears of C's finding, and an evidence value
   * (name NULL: none). */
  int onsets, clears;
  const char *ev;
  double ev_value;
} src_case;

#define S SEC
#define STALL (30 * SEC)

/* Each step: {op, arg, raised, lost} (see src_step). */
static const src_case src_cases[] = {
    /* Rule 4, waiting: lag > 0 and the copy unchanged for 30 s (the
     * first poll at 0 s; polls at 0 to 29 s, then the poll at stake). */
    {.name = "waiting: 1 ns short of 30 s",
     .steps = {{LAG, 5, -1, -1},
               {POLL, 30, 0, 0},
               {GAP, S - 1, -1, -1},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "waiting: at 30 s",
     .steps = {{LAG, 5, -1, -1},
               {POLL, 30, 0, 0},
               {GAP, S, -1, -1},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "lag",
     .ev_value = 5},
    {.name = "waiting: 1 ns past 30 s",
     .steps = {{LAG, 5, -1, -1},
               {POLL, 30, 0, 0},
               {GAP, S + 1, -1, -1},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "no_progress_s",
     .ev_value = 30.000000001},
    {.name = "waiting: a copy that takes with a lag is not waiting",
     .steps = {{LAG, 5, -1, -1},
               {POLL, 20, 0, 0},
               {TAKE, 1, -1, -1},
               {POLL, 25, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "waiting: an external origin, at 30 s",
     .external = true,
     .steps = {{LAG, 3, -1, -1}, {POLL, 31, 1, 0}, {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "origin_visible"},
    {.name = "waiting: a filtered link, at 30 s",
     .filtered = true,
     .steps = {{LAG, 3, -1, -1},
               {POLL, 30, 0, 0},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "lag",
     .ev_value = 3},
    /* Rule 5, silent: active of 30 s or more at once, or never heard
     * from (-1) for 30 s of polls. */
    {.name = "silent: active 1 ns short of 30 s",
     .steps = {{ACTIVE, STALL - 1, -1, -1}, {POLL, 3, 0, 0}, {END, 0, -1, -1}}},
    {.name = "silent: active at 30 s, raised at the first poll",
     .steps = {{ACTIVE, STALL, -1, -1}, {POLL, 1, 1, 0}, {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "active_s",
     .ev_value = 30},
    {.name = "silent: never heard from, 1 ns short of 30 s",
     .steps = {{ACTIVE, -1, -1, -1},
               {POLL, 30, 0, 0},
               {GAP, S - 1, -1, -1},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "silent: never heard from, at 30 s",
     .steps = {{ACTIVE, -1, -1, -1}, {POLL, 31, 1, 0}, {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "active_s",
     .ev_value = -1},
    {.name = "silent: heard once in between, the 30 s start again",
     .steps = {{ACTIVE, -1, -1, -1},
               {POLL, 20, 0, 0},
               {ACTIVE, S / 2, -1, -1},
               {POLL, 1, 0, 0},
               {ACTIVE, -1, -1, -1},
               {POLL, 30, 0, 0},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1},
    {.name = "silent: an external origin's error is named",
     .external = true,
     .steps = {{ACTIVE, STALL, -1, -1},
               {ERROR, 10059, -1, -1},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "error_code",
     .ev_value = 10059},
    /* Rule 3, no progress: the origin gains after the copy's last change
     * (the mark is the poll after it, at 1 s; the gain first seen at
     * 2 s), and 30 s pass from that gain. */
    {.name = "gain: 1 ns short of 30 s after the gain",
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 30, 0, 0},
               {GAP, S - 1, -1, -1},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "gain: at 30 s after the gain",
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 30, 0, 0},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "origin_last_seq",
     .ev_value = 51},
    {.name = "gain: a mirror that keeps up is silent",
     .mirror = true,
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {TAKE, 1, -1, -1},
               {POLL, 40, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "gain: an external origin is not compared",
     .external = true,
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 40, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "gain: a filtered link may match none of it",
     .filtered = true,
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 40, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "gain: a copy that took once resets the 30 s",
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 20, 0, 0},
               {TAKE, 1, -1, -1},
               {POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 30, 0, 0},
               {POLL, 1, 1, 0},
               {END, 0, -1, -1}},
     .onsets = 1},
    /* Rule 2, newer: a sourced copy's newest message more than 1 s older
     * than its origin's creation, the origin holding messages, for 30 s of
     * polls. */
    {.name = "newer: exactly 1 s older is not newer",
     .steps = {{NEWER, S, -1, -1}, {POLL, 40, 0, 0}, {END, 0, -1, -1}}},
    {.name = "newer: 1 ns more than 1 s, 1 ns short of 30 s",
     .steps = {{NEWER, S + 1, -1, -1},
               {POLL, 30, 0, 0},
               {GAP, S - 1, -1, -1},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "newer: 1 ns more than 1 s, at 30 s",
     .steps = {{NEWER, S + 1, -1, -1}, {POLL, 31, 1, 0}, {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "origin_recreated",
     .ev_value = 1},
    {.name = "newer: a mirror keeps its origin's times",
     .mirror = true,
     .steps = {{NEWER, 10 * S, -1, -1}, {POLL, 40, 0, 0}, {END, 0, -1, -1}}},
    {.name = "newer: a configured start may take none of it",
     .start_set = true,
     .steps = {{NEWER, 10 * S, -1, -1}, {POLL, 40, 0, 0}, {END, 0, -1, -1}}},
    /* Rule 1, recreated: a mirror whose position is beyond the new
     * origin's last sequence skipped all it holds, counted at once. */
    {.name = "recreated: mirror position one above the new origin",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 49, -1, -1},
               {POLL, 1, 1, 49},
               {POLL, 60, 1, 49},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "last_lost_seq",
     .ev_value = 49},
    {.name = "recreated: mirror position equal to the new origin, counted once "
             "settled",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 50, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 50},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "lost_total",
     .ev_value = 50},
    {.name =
         "recreated: new origin one past the mirror's position, capped at it",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 51, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 50},
               {POLL, 20, 1, 50},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "last_lost_seq",
     .ev_value = 50},
    {.name = "recreated: a mirror gone back to the new origin's last is not "
             "beyond it: counted once settled",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {MIRROR_BACK, 20, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 20},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "lost_total",
     .ev_value = 20},
    {.name = "recreated: mirror of an empty new origin skipped nothing yet",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 0, -1, -1},
               {POLL, 5, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 1, 1, 1},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "first_lost_seq",
     .ev_value = 1},
    {.name =
         "recreated: a mirror's count grows while the new origin stays below",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 1, 1, 20},
               {PUBLISH, 10, -1, -1},
               {POLL, 1, 1, 30},
               {POLL, 5, 1, 30},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "last_lost_seq",
     .ev_value = 30},
    {.name = "recreated twice: the counts add up",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 1, 1, 20},
               {RECREATE, 10, -1, -1},
               {POLL, 1, 1, 30},
               {POLL, 5, 1, 30},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "lost_total",
     .ev_value = 30},
    {.name = "recreated: a sourced copy skips at most the old origin's last",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 51, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 50},
               {POLL, 5, 1, 50},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "last_lost_seq",
     .ev_value = 50},
    /* A sourced copy: counted once settled, two polls in a row unchanged
     * with the link live (heard from within 5 s, after the new origin was
     * first seen). */
    {.name = "settled: one quiet poll is not settled",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 2, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "settled: two quiet polls",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 20},
               {POLL, 60, 1, 20},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "lost_total",
     .ev_value = 20},
    {.name = "fresh: heard from 5 s ago is live",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {ACTIVE, 5 * S, -1, -1},
               {POLL, 1, 0, 0},
               {GAP, 10 * S, -1, -1},
               {POLL, 1, 0, 0},
               {GAP, 10 * S, -1, -1},
               {POLL, 1, 1, 20},
               {END, 0, -1, -1}},
     .onsets = 1},
    {.name = "fresh: heard from 1 ns more than 5 s ago is not",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {ACTIVE, 5 * S + 1, -1, -1},
               {POLL, 1, 0, 0},
               {GAP, 10 * S, -1, -1},
               {POLL, 1, 0, 0},
               {GAP, 10 * S, -1, -1},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "fresh: heard from just after the new origin was seen is live",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {ACTIVE, S - 1, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 20},
               {END, 0, -1, -1}},
     .onsets = 1},
    {.name =
         "fresh: heard from when the new origin was seen may be the old one",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {ACTIVE, S, -1, -1},
               {POLL, 3, 0, 0},
               {POLL, 1, 1, 20},
               {END, 0, -1, -1}},
     .onsets = 1},
    {.name = "fresh: a lag is not idle",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {LAG, 1, -1, -1},
               {POLL, 10, 0, 0},
               {END, 0, -1, -1}}},
    /* What tells the origin was created again. */
    {.name = "recreated: created 50 ms later is the same origin",
     .steps = {{POLL, 3, 0, 0},
               {CREATED_SHIFT, 50 * MS, -1, -1},
               {POLL, 10, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "recreated: created 1 ns more than 50 ms later is another",
     .steps = {{POLL, 3, 0, 0},
               {CREATED_SHIFT, 50 * MS + 1, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 50},
               {END, 0, -1, -1}},
     .onsets = 1,
     .ev = "origin_recreated",
     .ev_value = 1},
    {.name = "recreated: a last sequence gone back, creation time unknown",
     .steps = {{POLL, 3, 0, 0},
               {ORIGIN_BACK, 20, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 20},
               {END, 0, -1, -1}},
     .onsets = 1},
    {.name = "recreated: the same last sequence and creation is no recreation",
     .steps = {{POLL, 3, 0, 0},
               {ORIGIN_BACK, 50, -1, -1},
               {POLL, 10, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "restored: oldest message 1 s before its creation is new",
     .steps = {{POLL, 3, 0, 0},
               {RESTORED, S, -1, -1},
               {POLL, 2, 0, 0},
               {POLL, 1, 1, 50},
               {END, 0, -1, -1}},
     .onsets = 1},
    {.name = "restored: 1 ns more than 1 s before keeps its numbering",
     .steps = {{POLL, 3, 0, 0},
               {RESTORED, S + 1, -1, -1},
               {POLL, 20, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "recreated: a filtered link counts nothing",
     .filtered = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 20, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "recreated: an external link counts nothing",
     .external = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 20, 0, 0},
               {END, 0, -1, -1}}},
    {.name = "recreated: an origin no longer listed counts nothing more",
     .steps = {{POLL, 3, 0, 0},
               {UNLIST_ORIGIN, 0, -1, -1},
               {POLL, 20, 0, 0},
               {END, 0, -1, -1}}},
    /* Resets. */
    {.name = "reset: the copy created again clears at once and counts no more",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 3, 1, 20},
               {COPY_RECREATED, 20, -1, -1},
               {POLL, 1, 0, 20},
               {POLL, 60, 0, 20},
               {END, 0, -1, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: a mirror created again clears at once and counts no more",
     .mirror = true,
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 1, 1, 20},
               {COPY_RECREATED, 20, -1, -1},
               {POLL, 1, 0, 20},
               {POLL, 60, 0, 20},
               {END, 0, -1, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: its sources changed clears at once",
     .steps = {{POLL, 3, 0, 0},
               {RECREATE, 20, -1, -1},
               {POLL, 3, 1, 20},
               {SOURCES_CHANGED, 0, -1, -1},
               {TAKE, 20, -1, -1},
               {POLL, 1, 0, 20},
               {POLL, 60, 0, 20},
               {END, 0, -1, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: heard from again, held 30 polls, cleared at the 31st",
     .steps = {{ACTIVE, STALL, -1, -1},
               {POLL, 1, 1, 0},
               {ACTIVE, S / 2, -1, -1},
               {POLL, 30, 1, 0},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: a stall that took again clears after the hold",
     .steps = {{POLL, 2, 0, 0},
               {PUBLISH, 1, -1, -1},
               {POLL, 31, 1, 0},
               {TAKE, 1, -1, -1},
               {POLL, 30, 1, 0},
               {POLL, 1, 0, 0},
               {END, 0, -1, -1}},
     .onsets = 1,
     .clears = 1},
};

/* Applies step p to x. */
static void apply(src *x, const src_step *p) {
  nl_stream_snap *o = x->o, *c = x->c;
  switch (p->op) {
  case POLL:
    for (int i = 0; i < (p->arg > 0 ? p->arg : 1); i++)
      src_poll(x);
    break;
  case GAP:
    x->w.t = x->last_poll + p->arg;
    break;
  case ACTIVE:
    x->link.active_ns = p->arg;
    break;
  case LAG:
    x->link.lag = (uint64_t)p->arg;
    break;
  case ERROR:
    x->link.error_code = p->arg;
    break;
  case PUBLISH:
    o->last_seq += (uint64_t)p->arg;
    o->msgs += (uint64_t)p->arg;
    o->last_ts_ns = x->w.t - MS;
    break;
  case TAKE:
    c->last_seq += (uint64_t)p->arg;
    c->msgs += (uint64_t)p->arg;
    c->last_ts_ns = x->w.t - MS;
    break;
  case RECREATE:
    o->created_ns = o->first_ts_ns = x->w.t - S / 10;
    o->last_seq = o->msgs = (uint64_t)p->arg;
    o->first_seq = p->arg > 0 ? 1 : 0;
    o->last_ts_ns = p->arg > 0 ? x->w.t - MS : 0;
    break;
  case RESTORED:
    o->created_ns = x->w.t - S / 10;
    o->first_ts_ns = o->created_ns - p->arg;
    break;
  case CREATED_SHIFT:
    o->created_ns += p->arg;
    break;
  case ORIGIN_BACK:
    o->created_ns = o->first_ts_ns = 0;
    o->last_seq = o->msgs = (uint64_t)p->arg;
    break;
  case NEWER:
    o->created_ns = c->last_ts_ns + p->arg;
    o->first_ts_ns = o->created_ns + S;
    break;
  case COPY_RECREATED:
    c->created_ns = x->w.t - S / 10;
    c->last_seq = c->msgs = (uint64_t)p->arg;
    c->first_seq = 1;
    c->last_ts_ns = x->w.t - MS;
    break;
  case SOURCES_CHANGED:
    x->link.key = 8;
    break;
  case UNLIST_ORIGIN:
    x->listed = 1;
    break;
  case MIRROR_BACK:
    c->last_seq = (uint64_t)p->arg;
    break;
  case END:
    break;
  }
}

static void run_src_case(const src_case *k) {
  src x;
  src_init(&x, k->mirror);
  x.link.external = k->external;
  x.link.filtered = k->filtered;
  x.link.start_set = k->start_set;
  int polls = 0;
  for (int i = 0; i < MAX_STEPS && k->steps[i].op != END; i++) {
    const src_step *p = &k->steps[i];
    apply(&x, p);
    if (p->op == POLL)
      polls += p->arg > 0 ? (int)p->arg : 1;
    bool on = active_for(&x.w, "C", NULL, NL_SOURCE_STALLED);
    bool ok = (p->raised < 0 || on == (p->raised == 1)) &&
              (p->lost < 0 || x.lost == (uint64_t)p->lost);
    if (!ok)
      fprintf(stderr,
              "  case \"%s\", step %d (after %d polls): raised %d, lost "
              "%llu; expected %d, %lld\n",
              k->name, i + 1, polls, on, (unsigned long long)x.lost, p->raised,
              (long long)p->lost);
    CHECK(ok);
  }
  bool ok = x.w.onsets[NL_SOURCE_STALLED] == k->onsets &&
            x.w.clears[NL_SOURCE_STALLED] == k->clears;
  if (!ok)
    fprintf(stderr, "  case \"%s\": %d onsets, %d clears\n", k->name,
            x.w.onsets[NL_SOURCE_STALLED], x.w.clears[NL_SOURCE_STALLED]);
  CHECK(ok);
  /* The origin is never the one raised. */
  CHECK(!active_for(&x.w, "O", NULL, NL_SOURCE_STALLED));
  /* The finding held at the end, else the latest raised. */
  const nl_finding *f =
      nl_engine_stream_finding(x.w.engine, "C", NL_SOURCE_STALLED);
  if (f == NULL && x.w.onsets[NL_SOURCE_STALLED] > 0)
    f = &x.w.last[NL_SOURCE_STALLED];
  if (k->ev != NULL) {
    double v = f != NULL ? nl_finding_get(f, k->ev, -99) : -98;
    if (v != k->ev_value)
      fprintf(stderr, "  case \"%s\": %s = %.17g, expected %.17g\n", k->name,
              k->ev, v, k->ev_value);
    CHECK(v == k->ev_value);
  }
  /* What the finding says was skipped is what the copy's lost count
   * holds, from the new origin's first message. */
  if (f != NULL && nl_finding_get(f, "lost_total", -1) > 0) {
    CHECK_EQ_U((uint64_t)nl_finding_get(f, "lost_total", 0), x.lost);
    CHECK(nl_finding_get(f, "first_lost_seq", 0) == 1);
  }
  /* The scenario happened: every poll judged the copy. */
  CHECK(polls > 0 && x.c_seen == polls);
  world_free(&x.w);
}

/* Runs the cases of src_cases whose name starts with prefix (a group of
 * one rule); at least one must. */
static void run_src_cases(const char *prefix) {
  int n = 0;
  for (size_t i = 0; i < sizeof(src_cases) / sizeof(src_cases[0]); i++)
    if (strncmp(src_cases[i].name, prefix, strlen(prefix)) == 0) {
      run_src_case(&src_cases[i]);
      n++;
    }
  CHECK(n > 0);
}

static void test_source_stalled_waiting(void) { run_src_cases("waiting:"); }

static void test_source_stalled_silent(void) { run_src_cases("silent:"); }

static void test_source_stalled_gain(void) { run_src_cases("gain:"); }

static void test_source_stalled_newer(void) { run_src_cases("newer:"); }

static void test_source_stalled_recreated(void) { run_src_cases("recreated"); }

static void test_source_stalled_settled(void) { run_src_cases("settled:"); }

static void test_source_stalled_fresh(void) { run_src_cases("fresh:"); }

static void test_source_stalled_restored(void) { run_src_cases("restored:"); }

static void test_source_stalled_resets(void) { run_src_cases("reset:"); }

/* Every case of src_cases is in one of the groups above. */
static void test_source_stalled_groups(void) {
  static const char *const groups[] = {
      "waiting:", "silent:", "gain:",     "newer:", "recreated",
      "settled:", "fresh:",  "restored:", "reset:"};
  for (size_t i = 0; i < sizeof(src_cases) / sizeof(src_cases[0]); i++) {
    int in = 0;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
      in += strncmp(src_cases[i].name, groups[g], strlen(groups[g])) == 0;
    if (in != 1)
      fprintf(stderr, "  case \"%s\" is in %d groups\n", src_cases[i].name, in);
    CHECK(in == 1);
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_source_stalled_waiting),
    NL_TEST(test_source_stalled_silent),
    NL_TEST(test_source_stalled_gain),
    NL_TEST(test_source_stalled_newer),
    NL_TEST(test_source_stalled_recreated),
    NL_TEST(test_source_stalled_settled),
    NL_TEST(test_source_stalled_fresh),
    NL_TEST(test_source_stalled_restored),
    NL_TEST(test_source_stalled_resets),
    NL_TEST(test_source_stalled_groups),
};

NL_TEST_MAIN(tests)
