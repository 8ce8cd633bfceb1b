/* test_class_sequence_gap.c: SEQUENCE_GAP at the boundaries of each of its
 * predicates (docs/detectors.md, SEQUENCE_GAP): the level of unread
 * messages evicted at the head, the three ways a loss is counted (behind
 * the head, passed the head within the interval, num_pending falling by
 * more than was delivered), what removed the messages (a limit, or a TTL,
 * a newer message on the subject, a schedule that fired, which are no
 * loss; max_age through the stream's sequence clock), the unacked losses
 * MSG_TERMINATED advisories claim, filtered consumers, the sequences a
 * stream never stored, and the state after a fix, a recreated consumer or
 * the condition gone.
 *
 * Each case is a script of polls of one stream "A" and its consumer "c",
 * run in a world of its own (1 s polls). */
#include "core/model/nl_advised.h"
#include "core/model/nl_gap.h"
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

/* One or more polls (times, at least 1) of stream A and consumer c. */
typedef struct {
  int times;
  uint64_t first, last, msgs;                       /* The stream. */
  uint64_t dseq, cseq, floor, pending, ack_pending; /* The consumer. */
} sg_row;

/* A MSG_TERMINATED advisory claiming the stream removed seq, fed before
 * poll `before` (counted from 0 over every row's polls), received 1 ns
 * before that poll, or at its very time (at_poll). */
typedef struct {
  int before;
  uint64_t seq;
  bool at_poll;
} sg_claim;

#define SG_ROWS 6
#define SG_CLAIMS 2

typedef struct {
  const char *name;
  /* The stream's limits and options (max_msgs 0: none). */
  int64_t max_msgs;
  int64_t max_age_s;
  bool ttl;
  int64_t per_subject;
  bool schedules;
  bool workqueue;
  bool filtered; /* The consumer. */
  sg_row rows[SG_ROWS];
  sg_claim claims[SG_CLAIMS]; /* seq 0: none. */
  /* Expected: the poll of the onset (-1: none); at the onset, the loss of
   * the interval, the unread level, the unacked loss, the range (0: not
   * reported) and the fix command ("" for none); at the end, the
   * consumer's lost and excused totals and the claims contradicted. */
  int raised_at;
  uint64_t lost_last, unread, unacked, first_lost, last_lost;
  const char *fix;
  uint64_t lost_total, excused, contradicted;
} sg_case;

/* Rows of the cases: the stream (first, last, msgs) and the consumer
 * (delivered stream and consumer sequences, floor, pending, ack pending). */
#define ROW(n, f, l, m, d, c, fl, p, a)                                        \
  { n, f, l, m, d, c, fl, p, a }

static const sg_case cases[] = {
    /* The level: first_seq > delivered.stream_seq + 1. At delivered + 1
     * nothing unread was evicted. */
    {.name = "head one past delivered: no gap",
     .max_msgs = 100,
     .rows = {ROW(3, 51, 150, 100, 50, 50, 50, 100, 0)},
     .raised_at = -1},
    /* One more: sequence 51 went unread, on the first poll already. */
    {.name = "head two past delivered: one unread evicted",
     .max_msgs = 100,
     .rows = {ROW(1, 52, 151, 100, 50, 50, 50, 100, 0)},
     .raised_at = 0,
     .lost_last = 1,
     .unread = 1,
     .first_lost = 51,
     .last_lost = 51,
     .fix = "nats stream edit A --max-msgs 201",
     .lost_total = 1},
    /* A work queue acked out of order: acked messages leave the stream,
     * so its first sequence (450) is far past the ack floor (400), but not
     * past what was delivered (500). */
    {.name = "work queue: head past the ack floor, not past delivered",
     .max_msgs = 1000,
     .workqueue = true,
     .rows = {ROW(3, 450, 520, 40, 500, 500, 400, 20, 20)},
     .raised_at = -1},
    /* Still behind the head: each evicted sequence counts once, however
     * many polls see it; three more evicted count three. */
    {.name = "behind the head: each sequence counted once",
     .max_msgs = 100,
     .rows = {ROW(1, 52, 151, 100, 50, 50, 50, 100, 0),
              ROW(3, 52, 151, 100, 50, 50, 50, 100, 0),
              ROW(1, 55, 154, 100, 50, 50, 50, 100, 0)},
     .raised_at = 0,
     .lost_last = 1,
     .unread = 1,
     .first_lost = 51,
     .last_lost = 51,
     .fix = "nats stream edit A --max-msgs 201",
     .lost_total = 4},
    /* Passed the head within the interval: 11-20 evicted above its
     * position 10, and it delivered ten (11-20, before their eviction):
     * none lost. */
    {.name = "passed the head, delivered as many as were evicted",
     .max_msgs = 100,
     .rows = {ROW(1, 1, 100, 100, 10, 10, 10, 90, 0),
              ROW(2, 21, 120, 100, 20, 20, 20, 100, 0)},
     .raised_at = -1},
    /* One delivery fewer than were evicted above it: 11 went before the
     * consumer read it, then it read 12-20 (nine). */
    {.name = "passed the head, delivered one fewer than were evicted",
     .max_msgs = 100,
     .rows = {ROW(1, 1, 100, 100, 10, 10, 10, 90, 0),
              ROW(1, 21, 120, 100, 20, 19, 20, 100, 0)},
     .raised_at = 1,
     .lost_last = 1,
     .unread = 0,
     .fix = "nats stream edit A --max-msgs 201",
     .lost_total = 1},
    /* num_pending falling by exactly what was delivered (ten, its stream
     * sequence moving 20 past other subjects' messages): no loss, though
     * the head is far past what this filtered consumer delivered (other
     * subjects evicted). */
    {.name = "filtered: pending fell by what was delivered",
     .max_msgs = 100,
     .filtered = true,
     .rows = {ROW(1, 1, 100, 100, 40, 40, 40, 50, 0),
              ROW(2, 81, 180, 100, 60, 50, 60, 40, 0)},
     .raised_at = -1},
    /* By one more than was delivered: one message of its own lost. */
    {.name = "filtered: pending fell by one more than was delivered",
     .max_msgs = 100,
     .filtered = true,
     .rows = {ROW(1, 1, 100, 100, 40, 40, 40, 50, 0),
              ROW(1, 81, 180, 100, 60, 50, 60, 39, 0)},
     .raised_at = 1,
     .lost_last = 1,
     .unread = 0,
     .fix = "nats stream edit A --max-msgs 200",
     .lost_total = 1},
    /* What removed them. A stream with message TTLs at 89 % of max_msgs is
     * not full: the TTL removed 1-5, no loss. */
    {.name = "TTL stream at 89 % of max_msgs: excused",
     .max_msgs = 100,
     .ttl = true,
     .rows = {ROW(1, 1, 94, 94, 0, 0, 0, 94, 0),
              ROW(2, 6, 94, 89, 0, 0, 0, 89, 0)},
     .raised_at = -1,
     .excused = 5},
    /* At 90 % it is full: max_msgs removed them, a loss. */
    {.name = "TTL stream at 90 % of max_msgs: a loss",
     .max_msgs = 100,
     .ttl = true,
     .rows = {ROW(1, 1, 95, 95, 0, 0, 0, 95, 0),
              ROW(1, 6, 95, 90, 0, 0, 0, 90, 0)},
     .raised_at = 1,
     .lost_last = 5,
     .unread = 5,
     .first_lost = 1,
     .last_lost = 5,
     .fix = "nats stream edit A --max-msgs 200",
     .lost_total = 5},
    /* A newer message on the subject (max_msgs_per_subject 1): no loss. */
    {.name = "per-subject limit 1: excused",
     .per_subject = 1,
     .rows = {ROW(1, 1, 10, 10, 0, 0, 0, 10, 0),
              ROW(2, 6, 15, 10, 0, 0, 0, 10, 0)},
     .raised_at = -1,
     .excused = 5},
    /* Without a per-subject limit (0) nothing but a purge or a delete
     * explains it: a loss, with no fix command. */
    {.name = "per-subject limit 0: a purge",
     .per_subject = 0,
     .rows = {ROW(1, 1, 10, 10, 0, 0, 0, 10, 0),
              ROW(1, 6, 15, 10, 0, 0, 0, 10, 0)},
     .raised_at = 1,
     .lost_last = 5,
     .unread = 5,
     .first_lost = 1,
     .last_lost = 5,
     .fix = "",
     .lost_total = 5},
    /* Schedules that fired (a consumer filtered on the schedule subject):
     * two removed while the stream added two, no loss. */
    {.name = "schedule: removed as many as the stream added",
     .schedules = true,
     .filtered = true,
     .rows = {ROW(1, 1, 7, 7, 0, 0, 0, 2, 0), ROW(3, 1, 9, 7, 0, 0, 0, 0, 0)},
     .raised_at = -1,
     .excused = 2},
    /* Two removed while the stream added one: a purge, counted one poll
     * later (the loss waits for the stream's next reply). */
    {.name = "schedule: removed one more than the stream added",
     .schedules = true,
     .filtered = true,
     .rows = {ROW(1, 1, 7, 7, 0, 0, 0, 2, 0), ROW(3, 1, 8, 6, 0, 0, 0, 0, 0)},
     .raised_at = 2,
     .lost_last = 2,
     .unread = 0,
     .fix = "",
     .lost_total = 2},
    /* max_age 10 s through the gap path: the clock saw the stream empty at
     * 0 s and 1-5 stored by 1 s; at 11 s the head passed them unread.
     * max_age removed them: a loss, with the max_age fix. */
    {.name = "max_age: unread removed 11 s after the clock saw them unstored",
     .max_age_s = 10,
     .rows = {ROW(1, 1, 0, 0, 0, 0, 0, 0, 0), ROW(10, 1, 5, 5, 0, 0, 0, 5, 0),
              ROW(1, 6, 5, 0, 0, 0, 0, 0, 0)},
     .raised_at = 11,
     .lost_last = 5,
     .unread = 5,
     .first_lost = 1,
     .last_lost = 5,
     .fix = "nats stream edit A --max-age 20s",
     .lost_total = 5},
    /* Removed exactly max_age after the poll that saw them unstored: the
     * clock cannot rule max_age out (the comparison is strict), a loss. */
    {.name = "max_age: unread removed exactly max_age after",
     .max_age_s = 10,
     .ttl = true,
     .rows = {ROW(1, 1, 0, 0, 0, 0, 0, 0, 0), ROW(9, 1, 5, 5, 0, 0, 0, 5, 0),
              ROW(1, 6, 5, 0, 0, 0, 0, 0, 0)},
     .raised_at = 10,
     .lost_last = 5,
     .unread = 5,
     .first_lost = 1,
     .last_lost = 5,
     .fix = "nats stream edit A --max-age 20s",
     .lost_total = 5},
    /* One second sooner they were younger than max_age: on a stream with
     * message TTLs, their TTL removed them, no loss. */
    {.name = "max_age: removed 1 s younger than max_age, TTL stream",
     .max_age_s = 10,
     .ttl = true,
     .rows = {ROW(1, 1, 0, 0, 0, 0, 0, 0, 0), ROW(8, 1, 5, 5, 0, 0, 0, 5, 0),
              ROW(3, 6, 5, 0, 0, 0, 0, 0, 0)},
     .raised_at = -1,
     .excused = 5},
    /* Without TTLs a purge removed them (the server moves the consumer
     * past a purge): a loss, and no fix command, since no max_age can
     * have removed them. */
    {.name = "max_age: removed 1 s younger than max_age, purged",
     .max_age_s = 10,
     .rows = {ROW(1, 1, 0, 0, 0, 0, 0, 0, 0), ROW(8, 1, 5, 5, 0, 0, 0, 5, 0),
              ROW(1, 6, 5, 0, 5, 0, 0, 0, 0)},
     .raised_at = 9,
     .lost_last = 5,
     .unread = 0,
     .fix = "",
     .lost_total = 5},
    /* Unacked messages removed (max_msgs 10, a worker holding 1-5): the
     * claim of the last sequence delivered, received 1 ns before the
     * poll, with the stream at 90 % of its limit: one unacked loss. */
    {.name = "claim of the last delivered sequence",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 0, 5, 5),
              ROW(1, 6, 14, 9, 5, 5, 5, 9, 0)},
     .claims = {{1, 5, false}},
     .raised_at = 1,
     .lost_last = 1,
     .unread = 0,
     .unacked = 1,
     .fix = "nats stream edit A --max-msgs 20",
     .lost_total = 1},
    /* One beyond what it delivered: the claim is contradicted. */
    {.name = "claim one beyond the delivered sequence",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 0, 5, 5),
              ROW(2, 6, 14, 9, 5, 5, 5, 9, 0)},
     .claims = {{1, 6, false}},
     .raised_at = -1,
     .contradicted = 1},
    /* At the ack floor of the poll before: acked, not pending. */
    {.name = "claim at the ack floor",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 2, 5, 3),
              ROW(2, 6, 14, 9, 5, 5, 5, 9, 0)},
     .claims = {{1, 2, false}},
     .raised_at = -1,
     .contradicted = 1},
    /* One above the floor: pending, removed, a loss. */
    {.name = "claim one above the ack floor",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 2, 5, 3),
              ROW(1, 6, 14, 9, 5, 5, 5, 9, 0)},
     .claims = {{1, 3, false}},
     .raised_at = 1,
     .lost_last = 1,
     .unread = 0,
     .unacked = 1,
     .fix = "nats stream edit A --max-msgs 20",
     .lost_total = 1},
    /* The claimed sequence is still the stream's first: still stored (a
     * client's +TERM with the server's reason), not counted. */
    {.name = "claimed sequence still stored",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 0, 5, 5),
              ROW(2, 5, 14, 10, 5, 5, 4, 9, 1)},
     .claims = {{1, 5, false}},
     .raised_at = -1},
    /* Received at the poll's own time: that poll may show the stream
     * before the removal; the next one counts it. */
    {.name = "claim received at the poll's time waits a poll",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 0, 5, 5),
              ROW(2, 6, 14, 9, 5, 5, 5, 9, 0)},
     .claims = {{1, 5, true}},
     .raised_at = 2,
     .lost_last = 1,
     .unread = 0,
     .unacked = 1,
     .fix = "nats stream edit A --max-msgs 20",
     .lost_total = 1},
    /* The stream at 80 % of max_msgs: no limit explains the removal (a
     * delete, a client's +TERM on a work queue): not counted. */
    {.name = "claim on a stream below 90 % of its limit",
     .max_msgs = 10,
     .rows = {ROW(1, 1, 10, 10, 5, 5, 0, 5, 5),
              ROW(2, 6, 13, 8, 5, 5, 5, 8, 0)},
     .claims = {{1, 5, false}},
     .raised_at = -1},
    /* Sequences never stored: nats-server 2.10.16 reports an emptied
     * interest stream with first_seq = last_seq = 10; a consumer at 9 is
     * not behind (first_seq = delivered + 1), so 10 was never stored for
     * it and its passing is no loss. */
    {.name = "empty stream, consumer not behind: never stored",
     .rows = {ROW(1, 10, 10, 0, 9, 9, 9, 0, 0),
              ROW(3, 11, 12, 2, 9, 9, 9, 2, 0)},
     .raised_at = -1},
    /* The same stream holding 10 (msgs 1): stored, and lost unread. */
    {.name = "stream holding one message: a loss",
     .rows = {ROW(1, 10, 10, 1, 9, 9, 9, 1, 0),
              ROW(1, 11, 12, 2, 9, 9, 9, 2, 0)},
     .raised_at = 1,
     .lost_last = 1,
     .unread = 1,
     .first_lost = 10,
     .last_lost = 10,
     .fix = "",
     .lost_total = 1},
    /* A consumer at 8 is behind the empty stream (first_seq = delivered +
     * 2): 9 is lost at once, and 10 later (nothing proves it unstored). */
    {.name = "empty stream, consumer behind: a loss",
     .rows = {ROW(1, 10, 10, 0, 8, 8, 8, 0, 0),
              ROW(1, 11, 12, 2, 8, 8, 8, 2, 0)},
     .raised_at = 0,
     .lost_last = 1,
     .unread = 1,
     .first_lost = 9,
     .last_lost = 9,
     .fix = "",
     .lost_total = 2},
};

static const nl_consumer_state *state_of(world *w) {
  return nl_registry_find(nl_engine_registry(w->engine), "A", "c");
}

/* Sets stream s and consumer c as row r says. */
static void apply_row(nl_stream_snap *s, nl_consumer_snap *c, const sg_row *r) {
  s->first_seq = r->first;
  s->last_seq = r->last;
  s->msgs = r->msgs;
  c->delivered_stream_seq = r->dseq;
  c->delivered_consumer_seq = r->cseq;
  c->ack_floor_stream_seq = r->floor;
  c->ack_floor_consumer_seq = r->floor;
  c->num_pending = r->pending;
  c->num_ack_pending = r->ack_pending;
}

/* Feeds the claim of case k due before poll `poll`. */
static void feed_claims(world *w, const sg_case *k, int poll) {
  for (int i = 0; i < SG_CLAIMS; i++) {
    const sg_claim *cl = &k->claims[i];
    if (cl->seq == 0 || cl->before != poll)
      continue;
    nl_advisory a = {.kind = NL_ADV_TERMINATED,
                     .stream_seq = cl->seq,
                     .deliveries = 1,
                     .removed_from_stream = true};
    snprintf(a.stream, sizeof(a.stream), "A");
    snprintf(a.consumer, sizeof(a.consumer), "c");
    a.received_ns = cl->at_poll ? w->t : w->t - 1;
    world_advise_msg(w, &a);
  }
}

static void run_case(const sg_case *k) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "A");
  s->max_msgs = k->max_msgs > 0 ? k->max_msgs : -1;
  s->max_age_ns = k->max_age_s * SEC;
  s->allow_msg_ttl = k->ttl;
  s->max_msgs_per_subject = k->per_subject;
  s->allow_msg_schedules = k->schedules;
  if (k->workqueue)
    s->retention = NL_RETENTION_WORKQUEUE;
  nl_consumer_snap *c = add_consumer(&w, 0, "c");
  c->filtered = k->filtered;
  int poll = 0, raised_at = -1;
  for (int i = 0; i < SG_ROWS && k->rows[i].times > 0; i++) {
    for (int n = 0; n < k->rows[i].times; n++, poll++) {
      apply_row(s, c, &k->rows[i]);
      feed_claims(&w, k, poll);
      world_poll(&w);
      if (raised_at < 0 && w.onsets[NL_SEQUENCE_GAP] > 0)
        raised_at = poll;
    }
  }
  EXPECT_EQ(k, raised_at, k->raised_at);
  EXPECT_EQ(k, w.onsets[NL_SEQUENCE_GAP], k->raised_at >= 0 ? 1 : 0);
  /* The evidence at the onset. */
  const nl_finding *f = &w.last[NL_SEQUENCE_GAP];
  if (k->raised_at >= 0 && raised_at >= 0) {
    EXPECT_EQ(k, nl_finding_get(f, "lost_since_last_poll", -1), k->lost_last);
    EXPECT_EQ(k, nl_finding_get(f, "unread_evicted", -1), k->unread);
    EXPECT_EQ(k, nl_finding_get(f, "unacked_evicted", 0), k->unacked);
    EXPECT_EQ(k, nl_finding_get(f, "first_lost_seq", 0), k->first_lost);
    EXPECT_EQ(k, nl_finding_get(f, "last_lost_seq", 0), k->last_lost);
    EXPECT_EQ(k, nl_finding_get(f, "filtered", -1), k->filtered ? 1 : 0);
    EXPECT(k, strcmp(f->fix_command, k->fix) == 0);
    if (strcmp(f->fix_command, k->fix) != 0)
      fprintf(stderr, "    fix: \"%s\"\n", f->fix_command);
  }
  /* What the model counted, which for a silent case shows the scenario
   * happened (the removal seen and excused, the claim judged). */
  const nl_consumer_state *st = state_of(&w);
  EXPECT(k, st != NULL);
  if (st != NULL) {
    const nl_gap_state *g = nl_gap_of(st);
    EXPECT_EQ(k, st->lost_total, k->lost_total);
    EXPECT_EQ(k, g != NULL ? g->excused_total : 0, k->excused);
    EXPECT_EQ(k, st->count, poll < NL_HISTORY_LEN ? poll : NL_HISTORY_LEN);
  }
  uint64_t fed, unknown, contradicted;
  nl_engine_advisory_counts(w.engine, &fed, &unknown, &contradicted);
  EXPECT_EQ(k, contradicted, k->contradicted);
  EXPECT_EQ(k, unknown, 0);
  world_free(&w);
}

static void test_sequence_gap_boundaries(void) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    run_case(&cases[i]);
}

/* What happens after the finding is raised: stream A (max_msgs 100) drops
 * 1-50 while consumer c has read nothing (raised at the second poll);
 * then, from the third poll on, the action of the case. */
typedef enum {
  AFTER_NOTHING,       /* Still behind: it stays. */
  AFTER_CATCH_UP,      /* Reads to the head: the condition goes. */
  AFTER_CATCH_UP_FIX,  /* Reads to the head, with max_msgs raised. */
  AFTER_FIX_BEHIND,    /* max_msgs raised, still behind. */
  AFTER_FIX_THEN_READ, /* max_msgs raised, and a poll later it reads. */
  AFTER_RECREATED,     /* Deleted and created again at the head. */
  AFTER_DELETED,       /* Deleted: no longer listed. */
} sg_after;

typedef struct {
  const char *name;
  sg_after after;
  int polls_to_clear; /* From the third poll on; -1: still raised after 60. */
} sg_reset_case;

static const sg_reset_case reset_cases[] = {
    /* No change: the level stays, and so does the finding. */
    {"still behind", AFTER_NOTHING, -1},
    /* The condition gone: cleared after the clearing hold (the first poll
     * without it and 30 s more). */
    {"caught up", AFTER_CATCH_UP, 31},
    /* A fix with the condition gone: cleared at once. */
    {"caught up under a raised limit", AFTER_CATCH_UP_FIX, 1},
    /* A fix with the consumer still behind: the condition is seen under
     * the new limit, so the finding stays. */
    {"limit raised while behind", AFTER_FIX_BEHIND, -1},
    /* Seen under the new limit once, then caught up: the hold, not at
     * once. */
    {"limit raised, caught up a poll later", AFTER_FIX_THEN_READ, 32},
    /* Created again at the head: a new history, cleared at once. */
    {"recreated at the head", AFTER_RECREATED, 1},
    /* Deleted: cleared at once. */
    {"deleted", AFTER_DELETED, 1},
};

static void run_reset_case(const sg_reset_case *k) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "A");
  s->max_msgs = 100;
  nl_consumer_snap *c = add_consumer(&w, 0, "c");
  s->last_seq = s->msgs = c->num_pending = 100;
  world_poll(&w);
  s->first_seq = 51;
  s->last_seq = 150;
  world_poll(&w);
  EXPECT(k, active_for(&w, "A", "c", NL_SEQUENCE_GAP));
  EXPECT_EQ(k, nl_finding_get(&w.last[NL_SEQUENCE_GAP], "lost_total", 0), 50);
  const nl_consumer_state *st = state_of(&w);
  uint32_t resets = st != NULL ? st->resets : 0;
  if (k->after == AFTER_CATCH_UP_FIX || k->after == AFTER_FIX_BEHIND ||
      k->after == AFTER_FIX_THEN_READ)
    s->max_msgs = 300;
  switch (k->after) {
  case AFTER_CATCH_UP:
  case AFTER_CATCH_UP_FIX:
    c->delivered_stream_seq = c->ack_floor_stream_seq = 150;
    c->delivered_consumer_seq = c->ack_floor_consumer_seq = 100;
    c->num_pending = 0;
    break;
  case AFTER_RECREATED:
    /* Deliver policy all from the stream's first sequence. */
    c->created_ns += 100 * SEC;
    c->delivered_stream_seq = c->ack_floor_stream_seq = 50;
    c->delivered_consumer_seq = c->ack_floor_consumer_seq = 0;
    c->num_pending = 100;
    break;
  case AFTER_DELETED:
    w.n_consumers = 0;
    s->consumer_count = 0;
    break;
  default:
    break;
  }
  int polls = 0;
  while (polls < 60 && (k->after == AFTER_DELETED
                            ? st != NULL && st->active[NL_SEQUENCE_GAP] != NULL
                            : active_for(&w, "A", "c", NL_SEQUENCE_GAP))) {
    if (k->after == AFTER_FIX_THEN_READ && polls == 1) {
      c->delivered_stream_seq = c->ack_floor_stream_seq = 150;
      c->delivered_consumer_seq = c->ack_floor_consumer_seq = 100;
      c->num_pending = 0;
    }
    world_poll(&w);
    polls++;
    if (k->after == AFTER_DELETED)
      st = state_of(&w);
  }
  EXPECT_EQ(k, polls, k->polls_to_clear < 0 ? 60 : k->polls_to_clear);
  EXPECT_EQ(k, w.onsets[NL_SEQUENCE_GAP], 1);
  EXPECT_EQ(k, w.clears[NL_SEQUENCE_GAP], k->polls_to_clear < 0 ? 0 : 1);
  st = state_of(&w);
  if (k->after == AFTER_DELETED) {
    EXPECT(k, st == NULL);
  } else {
    /* The scenario: no new loss after the raise (the running total of a
     * consumer created again is not in question here); a recreated
     * consumer's history was reset. */
    EXPECT(k, st != NULL && st->lost_last == 0);
    if (k->after != AFTER_RECREATED)
      EXPECT(k, st != NULL && st->lost_total == 50);
    EXPECT_EQ(k, st != NULL ? st->resets : 0,
              resets + (k->after == AFTER_RECREATED ? 1 : 0));
  }
  world_free(&w);
}

static void test_sequence_gap_after_the_raise(void) {
  for (size_t i = 0; i < sizeof(reset_cases) / sizeof(reset_cases[0]); i++)
    run_reset_case(&reset_cases[i]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_sequence_gap_boundaries),
    NL_TEST(test_sequence_gap_after_the_raise),
};

NL_TEST_MAIN(tests)
