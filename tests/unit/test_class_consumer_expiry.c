/* test_class_consumer_expiry.c: CONSUMER_EXPIRING and CONSUMER_EXPIRED
 * (plugin/core/detect/nl_consumer_expiry.c) at the boundaries of each rule
 * of docs/detectors.md, table-driven on the unit tests' world.
 *
 * Every case is one pull consumer C of stream S with an
 * inactive_threshold, polled once a second while its client is busy
 * (each poll shows a delivery and an ack 0.1 s before it, and nothing
 * left to take), then away (a message published on each poll and none
 * delivered), then at the times the case gives. The boundaries: the
 * warning at half the threshold (NL_EXPIRY_WARN_SHARE) and beyond the
 * longest idle gap survived plus one poll interval, long-lived at twice
 * the threshold, at, one nanosecond below and above; a consumer listed
 * past its threshold, the jitter and the slack (and twice the redelivery
 * delay of a held message) is active unseen; the removal no sooner than
 * the threshold less the slack (NL_EXPIRY_SLACK_NS) after the last
 * activity, by the poll or by a DELETED advisory within the slack of the
 * polls around it; an API delete, a gap, a stream created again; the
 * list of NL_EXPIRED_MAX (8) consumers; the hold of NL_EXPIRED_HOLD_NS
 * (1 h); a consumer created again with a threshold below, at and above
 * the recommended one; and the resets of the warning. */
#include "nl_test.h"
#include "nl_world.h"

#include "core/detect/nl_consumer_expiry.h"

#include <stdio.h>
#include <string.h>

#define MS 1000000LL
#define S SEC

/* The watch CONSUMER_EXPIRING keeps of consumer name of S, or NULL. */
static const nl_expiry_watch *watch_of(world *w, const char *name) {
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), "S", name);
  const nl_class_slot *slot =
      st != NULL ? nl_state_slot(st, NL_CONSUMER_EXPIRING) : NULL;
  return slot != NULL ? slot->state : NULL;
}

/* The held finding of cls of S/C (stream-level: of S), or NULL. */
static const nl_finding *held_of(world *w, const char *name, nl_class cls) {
  if (nl_class_is_stream(cls))
    return nl_engine_stream_finding(w->engine, "S", cls);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), "S", name);
  return st != NULL ? st->active[cls] : NULL;
}

/* How a consumer is set up and driven: busy, then away. */
typedef struct {
  int64_t threshold;
  int busy;          /* Busy polls, the first at the world's start (base). */
  int64_t act_until; /* Its client's activity stops at base + this
                        (0: it goes on through the busy polls). */
  int64_t gap_first; /* Seconds away with work waiting right after the
                        first poll (a gap it survives), 0 none. */
  bool ephemeral, push, ack_none, paused, waiting, nothing, interest;
  /* Held at the last busy poll and after: messages unacknowledged (the
   * latest delivered 0.1 s before that poll), out of max_ack_pending (0:
   * 1000), with this ack_wait (0: 30 s). */
  uint64_t ack_pending;
  int64_t max_ack_pending, ack_wait;
  int64_t skew; /* The server's clock runs this far behind the plugin's. */
  int away;     /* Away polls, a second apart after the last busy one. */
} drive;

/* Adds to w (and its stream S, made at the first call) consumer name set
 * up as d says, created now. Returns it. */
static nl_consumer_snap *start(world *w, const drive *d, const char *name) {
  nl_stream_snap *s = w->n_streams ? &w->streams[0] : add_stream(w, "S");
  s->retention = d->interest ? NL_RETENTION_INTEREST : NL_RETENTION_LIMITS;
  nl_consumer_snap *c = add_consumer(w, 0, name);
  c->inactive_threshold_ns = d->threshold;
  c->created_ns = w->t - d->skew;
  c->durable = !d->ephemeral;
  c->push = d->push;
  c->push_bound = d->push;
  c->ack_policy = d->ack_none ? NL_ACK_NONE : NL_ACK_EXPLICIT;
  if (d->ack_wait > 0)
    c->ack_wait_ns = d->ack_wait;
  if (d->max_ack_pending > 0)
    c->max_ack_pending = d->max_ack_pending;
  return c;
}

/* One poll of w at plugin time t; the consumers' server time is t -
 * skew. */
static void poll_at(world *w, int64_t t, int64_t skew) {
  w->t = t;
  for (size_t i = 0; i < w->n_consumers; i++)
    w->consumers[i].server_ts_ns = skew > 0 ? t - skew : 0;
  world_poll(w);
}

/* A message published to S that c's client does not take. */
static void publish(world *w, nl_consumer_snap *c, const drive *d) {
  nl_stream_snap *s = &w->streams[0];
  s->last_seq++;
  s->msgs++;
  if (!d->nothing)
    c->num_pending++;
}

/* The busy polls of consumer c (driven as d) from base; returns the time
 * of the last one. */
static int64_t busy(world *w, nl_consumer_snap *c, const drive *d,
                    int64_t base) {
  nl_stream_snap *s = &w->streams[0];
  int64_t t = base;
  for (int k = 0; k < d->busy; k++) {
    t = base + k * S;
    int64_t sn = t - d->skew;
    bool gone = d->gap_first > 0 && k >= 1 && k < d->gap_first;
    if (gone) {
      publish(w, c, d);
    } else {
      int64_t act = sn - 100 * MS;
      if (d->act_until > 0 && act > base - d->skew + d->act_until)
        act = base - d->skew + d->act_until;
      s->last_seq += 2;
      s->msgs = d->interest ? 0 : s->last_seq;
      c->delivered_consumer_seq += 2 + c->num_pending;
      c->delivered_stream_seq = c->ack_floor_stream_seq =
          c->ack_floor_consumer_seq = s->last_seq;
      c->delivered_last_ns = c->ack_last_ns = act;
      c->num_pending = 0;
    }
    if (k == d->busy - 1 && d->ack_pending > 0)
      c->num_ack_pending = d->ack_pending;
    poll_at(w, t, d->skew);
  }
  return t;
}

/* The away polls of c: a message published before each, none taken; the
 * client's absence as the case has it. */
static void away(world *w, nl_consumer_snap *c, const drive *d, int64_t tb,
                 int from, int to) {
  for (int k = from; k <= to; k++) {
    publish(w, c, d);
    c->paused = d->paused;
    c->num_waiting = d->waiting;
    c->push_bound = false;
    poll_at(w, tb + k * S, d->skew);
  }
}

/* ---- CONSUMER_EXPIRING at its boundaries. ---- */

/* An expectation that may be left out. */
typedef enum { ANY = 0, NO, YES } expect;

typedef struct {
  const char *name;
  drive d;
  /* After the away polls: a poll at tb + prev (0: none), then the final
   * one at tb + at (0: none). */
  int64_t prev, at;
  /* Expected at the final poll: the condition holds (a finding raised and
   * holding), the onsets so far, the watch's unseen flag, and one
   * evidence value (NULL: none). */
  bool cond;
  int onsets;
  expect unseen;
  const char *ev;
  double ev_value;
} warn_case;

#define T20 (20 * S)
/* A durable consumer of 20 s, long-lived (45 busy polls), away for
 * `away` polls. */
#define STD(away)                                                              \
  { T20, 45, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, away }

static const warn_case warn_cases[] = {
    /* Half the threshold: 10 s of 20 s. */
    {.name = "half: 1 ns short of 10 s", .d = STD(9), .at = 10 * S - 1},
    {.name = "half: at 10 s",
     .d = STD(9),
     .at = 10 * S,
     .cond = true,
     .onsets = 1,
     .unseen = NO,
     .ev = "time_left_s",
     .ev_value = 10},
    {.name = "half: 1 ns past 10 s",
     .d = STD(9),
     .at = 10 * S + 1,
     .cond = true,
     .onsets = 1,
     .unseen = NO,
     .ev = "idle_share",
     .ev_value = 0.5},
    {.name = "half: of 21 s, 1 ns short of 10.5 s",
     .d = {.threshold = 21 * S, .busy = 45, .away = 10},
     .at = 10500 * MS - 1},
    {.name = "half: of 21 s, at 10.5 s",
     .d = {.threshold = 21 * S, .busy = 45, .away = 10},
     .at = 10500 * MS,
     .cond = true,
     .onsets = 1,
     .ev = "recommended_inactive_threshold_s",
     .ev_value = 63},
    /* The longest idle gap survived (14 s, right after the first poll)
     * plus one poll interval: the poll before the final one must already
     * be past 14 s of idle time. */
    {.name = "gap: the poll before at the gap survived",
     .d = {.threshold = T20, .busy = 45, .gap_first = 14, .away = 13},
     .prev = 14 * S,
     .at = 15 * S},
    {.name = "gap: the poll before 1 ns past it",
     .d = {.threshold = T20, .busy = 45, .gap_first = 14, .away = 13},
     .prev = 14 * S + 1,
     .at = 15 * S,
     .cond = true,
     .onsets = 1,
     .ev = "longest_gap_s",
     .ev_value = 14},
    /* Long-lived: polled for twice the threshold (40 s from base; the
     * last busy poll at 28 s). */
    {.name = "long-lived: 1 ns short of 40 s polled",
     .d = {.threshold = T20, .busy = 29, .away = 11},
     .at = 12 * S - 1},
    {.name = "long-lived: at 40 s polled",
     .d = {.threshold = T20, .busy = 29, .away = 11},
     .at = 12 * S,
     .cond = true,
     .onsets = 1,
     .ev = "idle_s",
     .ev_value = 12},
    /* An ephemeral must have been used a threshold after its creation. */
    {.name = "ephemeral: used 1 ns short of a threshold after its creation",
     .d = {.threshold = T20,
           .busy = 45,
           .act_until = T20 - 1,
           .ephemeral = true,
           .away = 9},
     .at = 10 * S},
    {.name = "ephemeral: used a threshold after its creation",
     .d = {.threshold = T20,
           .busy = 45,
           .act_until = T20,
           .ephemeral = true,
           .away = 9},
     .at = 10 * S,
     .cond = true,
     .onsets = 1,
     .ev = "durable"},
    /* Listed past the threshold, the jitter and the slack (22 s): its
     * clients are active unseen, and the warning's condition ends. */
    {.name = "unseen: listed 22 s idle is still warned",
     .d = STD(21),
     .at = 22 * S,
     .cond = true,
     .onsets = 1,
     .unseen = NO,
     .ev = "time_left_s"},
    {.name = "unseen: listed 1 ns more is active unseen",
     .d = STD(21),
     .at = 22 * S + 1,
     .onsets = 1,
     .unseen = YES},
    /* A held message (ack_wait 5 s, delivered 0.1 s before the last busy
     * poll): idle from 4.9 s on, and twice its delay more allowed. */
    {.name = "unseen: a held message allows 32 s",
     .d = {.threshold = T20,
           .busy = 45,
           .ack_pending = 1,
           .ack_wait = 5 * S,
           .away = 36},
     .at = 36900 * MS,
     .cond = true,
     .onsets = 1,
     .unseen = NO,
     .ev = "num_ack_pending",
     .ev_value = 1},
    {.name = "unseen: a held message, 1 ns past 32 s",
     .d = {.threshold = T20,
           .busy = 45,
           .ack_pending = 1,
           .ack_wait = 5 * S,
           .away = 36},
     .at = 36900 * MS + 1,
     .onsets = 1,
     .unseen = YES},
    /* Look-alikes: nothing to lose, or clients shown present. */
    {.name = "look-alike: ack none",
     .d = {.threshold = T20, .busy = 45, .ack_none = true, .away = 15}},
    {.name = "look-alike: paused",
     .d = {.threshold = T20, .busy = 45, .paused = true, .away = 15}},
    {.name = "look-alike: nothing pending",
     .d = {.threshold = T20, .busy = 45, .nothing = true, .away = 15}},
    {.name = "look-alike: a pull request waiting",
     .d = {.threshold = T20, .busy = 45, .waiting = true, .away = 15}},
    /* Room under max_ack_pending (ack_wait 1 s, one message held): at it,
     * nothing is there for a client to take; one below, there is. */
    {.name = "room: at max_ack_pending a client gets nothing",
     .d = {.threshold = T20,
           .busy = 45,
           .ack_pending = 1,
           .max_ack_pending = 1,
           .ack_wait = 1 * S,
           .away = 15}},
    {.name = "room: one below max_ack_pending",
     .d = {.threshold = T20,
           .busy = 45,
           .ack_pending = 1,
           .max_ack_pending = 2,
           .ack_wait = 1 * S,
           .away = 15},
     .cond = true,
     .onsets = 1,
     .ev = "idle_s",
     .ev_value = 14},
    /* A push consumer: idle from the first poll without a subscriber (1 s
     * after the last busy poll). */
    {.name = "push: 1 ns short of 10 s unbound",
     .d = {.threshold = T20, .busy = 45, .push = true, .away = 10},
     .at = 11 * S - 1},
    {.name = "push: 10 s unbound",
     .d = {.threshold = T20, .busy = 45, .push = true, .away = 10},
     .at = 11 * S,
     .cond = true,
     .onsets = 1,
     .ev = "idle_s",
     .ev_value = 10},
    /* The server's clock, 5 s behind the plugin's, is the idle time's. */
    {.name = "server clock: 1 ns short of 10 s",
     .d = {.threshold = T20, .busy = 45, .skew = 5 * S, .away = 9},
     .at = 10 * S - 1},
    {.name = "server clock: at 10 s",
     .d = {.threshold = T20, .busy = 45, .skew = 5 * S, .away = 9},
     .at = 10 * S,
     .cond = true,
     .onsets = 1,
     .ev = "idle_s",
     .ev_value = 10},
};

static void run_warn_case(const warn_case *k) {
  world w;
  world_init(&w, true);
  int64_t base = w.t, tb;
  nl_consumer_snap *c = start(&w, &k->d, "C");
  tb = busy(&w, c, &k->d, base);
  away(&w, c, &k->d, tb, 1, k->d.away);
  int before = w.onsets[NL_CONSUMER_EXPIRING];
  if (k->prev > 0) {
    publish(&w, c, &k->d);
    poll_at(&w, tb + k->prev, k->d.skew);
  }
  if (k->at > 0) {
    publish(&w, c, &k->d);
    poll_at(&w, tb + k->at, k->d.skew);
  }
  const nl_finding *f = held_of(&w, "C", NL_CONSUMER_EXPIRING);
  bool cond = nl_finding_holding(f);
  const nl_expiry_watch *x = watch_of(&w, "C");
  bool ok =
      cond == k->cond && w.onsets[NL_CONSUMER_EXPIRING] == k->onsets &&
      (k->unseen == ANY || (x != NULL && x->unseen == (k->unseen == YES)));
  /* A boundary case raises at its final poll, not before. */
  if (k->at > 0 && k->cond && k->unseen == ANY)
    ok = ok && before == 0;
  if (!ok)
    fprintf(stderr,
            "  case \"%s\": condition %d, onsets %d (%d before the final "
            "poll), unseen %d; expected %d, %d, %d\n",
            k->name, cond, w.onsets[NL_CONSUMER_EXPIRING], before,
            x != NULL ? x->unseen : -1, k->cond, k->onsets, (int)k->unseen - 1);
  CHECK(ok);
  if (k->ev != NULL) {
    double v = f != NULL ? nl_finding_get(f, k->ev, -99) : -98;
    if (v != k->ev_value)
      fprintf(stderr, "  case \"%s\": %s = %.17g, expected %.17g\n", k->name,
              k->ev, v, k->ev_value);
    CHECK(v == k->ev_value);
  }
  /* The scenario happened: the consumer was polled with a threshold. */
  CHECK(x != NULL && x->threshold_ns == k->d.threshold);
  world_free(&w);
}

/* Runs the cases of warn_cases whose name starts with prefix (a group of
 * one rule); at least one must. */
static void run_warn_cases(const char *prefix) {
  int n = 0;
  for (size_t i = 0; i < sizeof(warn_cases) / sizeof(warn_cases[0]); i++)
    if (strncmp(warn_cases[i].name, prefix, strlen(prefix)) == 0) {
      run_warn_case(&warn_cases[i]);
      n++;
    }
  CHECK(n > 0);
}

static void test_expiring_half(void) { run_warn_cases("half:"); }

static void test_expiring_gap(void) { run_warn_cases("gap:"); }

static void test_expiring_long_lived(void) { run_warn_cases("long-lived:"); }

static void test_expiring_ephemeral(void) { run_warn_cases("ephemeral:"); }

static void test_expiring_unseen(void) { run_warn_cases("unseen:"); }

static void test_expiring_look_alikes(void) { run_warn_cases("look-alike:"); }

static void test_expiring_room(void) { run_warn_cases("room:"); }

static void test_expiring_push(void) { run_warn_cases("push:"); }

static void test_expiring_server_clock(void) {
  run_warn_cases("server clock:");
}

/* Every case of warn_cases is in one of the groups above. */
static void test_expiring_groups(void) {
  static const char *const groups[] = {
      "half:",       "gap:",  "long-lived:", "ephemeral:",   "unseen:",
      "look-alike:", "room:", "push:",       "server clock:"};
  for (size_t i = 0; i < sizeof(warn_cases) / sizeof(warn_cases[0]); i++) {
    int in = 0;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
      in += strncmp(warn_cases[i].name, groups[g], strlen(groups[g])) == 0;
    if (in != 1)
      fprintf(stderr, "  case \"%s\" is in %d groups\n", warn_cases[i].name,
              in);
    CHECK(in == 1);
  }
}

/* ---- CONSUMER_EXPIRED: when the consumer goes. ---- */

typedef enum { ADV_NONE, ADV_DELETED, ADV_API } adv;

typedef struct {
  const char *name;
  drive d; /* Threshold 10 s. */
  /* Since the last busy poll tb: the consumer is no longer listed at the
   * poll at gone_at; an advisory of kind adv (server time tb + adv_at)
   * comes in between; a gap in what the polls saw at tb + gap_at (0:
   * none); the stream's last sequence goes back (created again). */
  int64_t gone_at;
  adv adv;
  int64_t adv_at, gap_at;
  bool stream_back;
  /* Expected: raised, and its evidence from_advisory, idle_s, (on an
   * interest stream) removed_with_it, and the recommended threshold
   * (0: 30 s, three times the threshold). */
  bool raised;
  double from_advisory, idle_s, removed, recommended;
} gone_case;

#define T10 (10 * S)
/* A durable consumer of 10 s, long-lived (25 busy polls), away for 8
 * polls: its last activity at tb - 0.1 s, its last poll at tb + 8 s. */
#define G8                                                                     \
  { T10, 25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8 }

static const gone_case gone_cases[] = {
    /* The threshold less the slack after the last activity: 9 s after
     * tb - 0.1 s. */
    {.name = "poll: gone 1 ns short of the threshold less the slack",
     .d = G8,
     .gone_at = 8900 * MS - 1},
    {.name = "poll: gone at the threshold less the slack",
     .d = G8,
     .gone_at = 8900 * MS,
     .raised = true,
     .idle_s = 9},
    {.name = "poll: gone 1 ns past it",
     .d = G8,
     .gone_at = 8900 * MS + 1,
     .raised = true,
     .idle_s = 9},
    /* A DELETED advisory within the slack of the polls around it times the
     * delete. */
    {.name = "advisory: 1 ns short of the threshold less the slack",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 8900 * MS - 1},
    {.name = "advisory: at the threshold less the slack",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 8900 * MS,
     .raised = true,
     .from_advisory = 1,
     .idle_s = 9},
    {.name = "advisory: the slack before the last poll is taken",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 7 * S},
    {.name = "advisory: 1 ns earlier is stale, the poll times it",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 7 * S - 1,
     .raised = true,
     .idle_s = 20},
    {.name = "advisory: the slack after the poll is taken",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 21 * S,
     .raised = true,
     .from_advisory = 1,
     .idle_s = 21},
    {.name = "advisory: 1 ns later is not",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 21 * S + 1,
     .raised = true,
     .idle_s = 20},
    /* Not an expiry. */
    {.name = "api: an audited delete is never an expiry",
     .d = G8,
     .gone_at = 20 * S,
     .adv = ADV_API,
     .adv_at = 8500 * MS},
    {.name = "gap: at the last poll, every timer may have started again",
     .d = G8,
     .gone_at = 20 * S,
     .gap_at = 8 * S},
    {.name = "gap: 1 ns before the last poll, which saw it after",
     .d = G8,
     .gone_at = 20 * S,
     .gap_at = 8 * S - 1,
     .raised = true,
     .idle_s = 20},
    {.name = "stream: created again (its last sequence back)",
     .d = G8,
     .gone_at = 20 * S,
     .stream_back = true},
    {.name = "nothing: nothing unread or unacknowledged",
     .d = {.threshold = T10, .busy = 25, .nothing = true, .away = 8},
     .gone_at = 20 * S},
    /* Long-lived: its last poll 20 s after its first (twice 10 s). */
    {.name = "long-lived: last poll 19 s after the first",
     .d = {.threshold = T10, .busy = 13, .away = 7},
     .gone_at = 20 * S},
    {.name = "long-lived: last poll 20 s after the first",
     .d = {.threshold = T10, .busy = 13, .away = 8},
     .gone_at = 20 * S,
     .raised = true,
     .idle_s = 20},
    /* The server's clock 5 s behind: the poll's time less the skew. */
    {.name = "server clock: gone at the threshold less the slack",
     .d = {.threshold = T10, .busy = 25, .skew = 5 * S, .away = 8},
     .gone_at = 8900 * MS,
     .raised = true,
     .idle_s = 9},
    {.name = "server clock: 1 ns short",
     .d = {.threshold = T10, .busy = 25, .skew = 5 * S, .away = 8},
     .gone_at = 8900 * MS - 1},
    {.name =
         "server clock: an advisory the slack before the last poll is taken",
     .d = {.threshold = T10, .busy = 25, .skew = 5 * S, .away = 8},
     .gone_at = 20 * S,
     .adv = ADV_DELETED,
     .adv_at = 7 * S},
    /* Three times the longest of the threshold and the gaps seen: a gap
     * of 14 s survived (clients active unseen) is the longest. */
    {.name = "recommended: three times a gap survived beyond the threshold",
     .d = {.threshold = T10, .busy = 25, .gap_first = 14, .away = 8},
     .gone_at = 20 * S,
     .raised = true,
     .idle_s = 20,
     .recommended = 42},
    /* An interest stream drops what only it wanted: its 8 unread, and the
     * 2 published since (none kept), at most what it had unread. */
    {.name = "interest: dropped with it, at most its unread",
     .d = {.threshold = T10, .busy = 25, .interest = true, .away = 8},
     .gone_at = 20 * S,
     .raised = true,
     .idle_s = 20,
     .removed = 8},
};

static void run_gone_case(const gone_case *k) {
  world w;
  world_init(&w, true);
  int64_t base = w.t, tb;
  nl_consumer_snap *c = start(&w, &k->d, "C");
  tb = busy(&w, c, &k->d, base);
  away(&w, c, &k->d, tb, 1, k->d.away);
  nl_stream_snap *s = &w.streams[0];
  int64_t last = tb + k->d.away * S;
  if (k->gap_at > 0)
    nl_engine_gap(w.engine, tb + k->gap_at);
  if (k->adv != ADV_NONE) {
    nl_advisory a = {.kind = k->adv == ADV_API ? NL_ADV_API_DELETE
                                               : NL_ADV_DELETED};
    strcpy(a.stream, "S");
    strcpy(a.consumer, "C");
    a.timestamp_ns = tb + k->adv_at - k->d.skew;
    a.received_ns = last + S / 10;
    w.t = last + S / 10;
    world_advise_msg(&w, &a);
  }
  /* Gone: the stream as listed then. */
  w.n_consumers = 0;
  s->consumer_count = 0;
  s->last_seq += 2;
  if (k->d.interest)
    s->msgs = 0;
  if (k->stream_back)
    s->last_seq = 3;
  poll_at(&w, tb + k->gone_at, k->d.skew);
  const nl_finding *f = held_of(&w, NULL, NL_CONSUMER_EXPIRED);
  bool ok = (f != NULL) == k->raised &&
            w.onsets[NL_CONSUMER_EXPIRED] == (k->raised ? 1 : 0);
  if (!ok)
    fprintf(stderr, "  case \"%s\": raised %d, expected %d\n", k->name,
            f != NULL, k->raised);
  CHECK(ok);
  if (f != NULL && k->raised) {
    double adv = nl_finding_get(f, "from_advisory", -1);
    double idle = nl_finding_get(f, "idle_s", -1);
    double removed = nl_finding_get(f, "removed_with_it", 0);
    if (adv != k->from_advisory || idle != k->idle_s || removed != k->removed)
      fprintf(stderr,
              "  case \"%s\": from_advisory %g idle_s %g removed %g; "
              "expected %g %g %g\n",
              k->name, adv, idle, removed, k->from_advisory, k->idle_s,
              k->removed);
    CHECK(adv == k->from_advisory && idle == k->idle_s &&
          removed == k->removed);
    CHECK(nl_finding_get(f, "inactive_threshold_s", 0) == 10);
    double rec = k->recommended > 0 ? k->recommended : 30;
    CHECK_EQ_U(nl_finding_get(f, "recommended_inactive_threshold_s", 0), rec);
    CHECK(nl_finding_get(f, "expired_consumers", 0) == 1);
  }
  /* The scenario happened: every poll listed it until the one that found
   * it gone, and it is gone. */
  CHECK_EQ_U(w.listed, k->d.busy + k->d.away);
  CHECK(!nl_engine_knows(w.engine, "S", "C"));
  world_free(&w);
}

/* Runs the cases of gone_cases whose name starts with prefix (a group of
 * one rule); at least one must. */
static void run_gone_cases(const char *prefix) {
  int n = 0;
  for (size_t i = 0; i < sizeof(gone_cases) / sizeof(gone_cases[0]); i++)
    if (strncmp(gone_cases[i].name, prefix, strlen(prefix)) == 0) {
      run_gone_case(&gone_cases[i]);
      n++;
    }
  CHECK(n > 0);
}

static void test_expired_by_poll(void) { run_gone_cases("poll:"); }

static void test_expired_by_advisory(void) { run_gone_cases("advisory:"); }

static void test_expired_api_delete(void) { run_gone_cases("api:"); }

static void test_expired_gap(void) { run_gone_cases("gap:"); }

static void test_expired_stream_recreated(void) { run_gone_cases("stream:"); }

static void test_expired_nothing_to_lose(void) { run_gone_cases("nothing:"); }

static void test_expired_long_lived(void) { run_gone_cases("long-lived:"); }

static void test_expired_server_clock(void) { run_gone_cases("server clock:"); }

static void test_expired_recommended(void) { run_gone_cases("recommended:"); }

static void test_expired_interest(void) { run_gone_cases("interest:"); }

/* Every case of gone_cases is in one of the groups above. */
static void test_expired_groups(void) {
  static const char *const groups[] = {
      "poll:",    "advisory:",   "api:",          "gap:",         "stream:",
      "nothing:", "long-lived:", "server clock:", "recommended:", "interest:"};
  for (size_t i = 0; i < sizeof(gone_cases) / sizeof(gone_cases[0]); i++) {
    int in = 0;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
      in += strncmp(gone_cases[i].name, groups[g], strlen(groups[g])) == 0;
    if (in != 1)
      fprintf(stderr, "  case \"%s\" is in %d groups\n", gone_cases[i].name,
              in);
    CHECK(in == 1);
  }
}

/* ---- CONSUMER_EXPIRED: the list of 8, the hold of 1 h, a consumer
 * created again. ---- */

static const char *const names[] = {"C0", "C1", "C2", "C3", "C4",
                                    "C5", "C6", "C7", "C8"};

/* A world where n consumers of S (threshold 10 s, long-lived, away with
 * work waiting) expire one per poll, the last in the array first (it is
 * the oldest entry of the list); returns the time of the last removal. */
static int64_t expire_n(world *w, int n) {
  const drive d = G8;
  int64_t base = w->t;
  nl_consumer_snap *cs[9];
  for (int i = 0; i < n; i++)
    cs[i] = start(w, &d, names[i]);
  /* Busy together, then away together. */
  nl_stream_snap *s = &w->streams[0];
  int64_t tb = base;
  for (int k = 0; k < d.busy; k++) {
    tb = base + k * S;
    s->last_seq += 2;
    s->msgs = s->last_seq;
    for (int i = 0; i < n; i++) {
      cs[i]->delivered_consumer_seq += 2;
      cs[i]->delivered_stream_seq = cs[i]->ack_floor_stream_seq =
          cs[i]->ack_floor_consumer_seq = s->last_seq;
      cs[i]->delivered_last_ns = cs[i]->ack_last_ns = tb - 100 * MS;
    }
    poll_at(w, tb, 0);
  }
  for (int k = 1; k <= d.away; k++) {
    s->last_seq++;
    s->msgs++;
    for (int i = 0; i < n; i++)
      cs[i]->num_pending++;
    poll_at(w, tb + k * S, 0);
  }
  int64_t t = tb + d.away * S;
  for (int i = 0; i < n; i++) {
    w->n_consumers--;
    s->consumer_count--;
    t += S;
    poll_at(w, t, 0);
  }
  return t;
}

/* Lists consumer i again, created now with threshold t_ns (0: none). */
static void create_again(world *w, int i, int64_t t_ns) {
  nl_consumer_snap *c = &w->consumers[i];
  c->created_ns = w->t;
  c->inactive_threshold_ns = t_ns;
  c->num_pending = 0;
  c->delivered_consumer_seq = c->delivered_stream_seq = 0;
  c->ack_floor_consumer_seq = c->ack_floor_stream_seq = 0;
  c->delivered_last_ns = c->ack_last_ns = 0;
  if ((size_t)i + 1 > w->n_consumers)
    w->n_consumers = (size_t)i + 1;
  w->streams[0].consumer_count = w->n_consumers;
}

typedef struct {
  const char *name;
  int expired;   /* Consumers that expire, one per poll. */
  int recreated; /* Then created again with the recommended threshold:
                    all but the first that expired (the oldest). */
  /* Expected after them: expired_consumers, and whether the finding is
   * still held. */
  int listed;
  bool held;
} list_case;

static const list_case list_cases[] = {
    {.name = "list: 7 kept",
     .expired = 7,
     .recreated = 6,
     .listed = 7,
     .held = true},
    {.name = "list: 8 kept, the oldest among them",
     .expired = 8,
     .recreated = 7,
     .listed = 8,
     .held = true},
    {.name = "list: the 9th drops the oldest",
     .expired = 9,
     .recreated = 8,
     .listed = 8,
     .held = false},
    {.name = "list: all created again clears at once",
     .expired = 3,
     .recreated = 3,
     .listed = 3,
     .held = false},
};

static void run_list_case(const list_case *k) {
  world w;
  world_init(&w, true);
  add_stream(&w, "S");
  expire_n(&w, k->expired);
  const nl_finding *f = held_of(&w, NULL, NL_CONSUMER_EXPIRED);
  double listed = f != NULL ? nl_finding_get(f, "expired_consumers", 0) : -1;
  if (listed != k->listed)
    fprintf(stderr, "  case \"%s\": expired_consumers %g, expected %d\n",
            k->name, listed, k->listed);
  CHECK(listed == k->listed);
  /* The oldest entry is the consumer that went first: the last in the
   * array; create the others again. */
  int n = k->recreated == k->expired ? k->expired : k->expired - 1;
  for (int i = 0; i < n; i++)
    create_again(&w, i, 30 * S);
  poll_at(&w, w.t + S, 0);
  bool held = held_of(&w, NULL, NL_CONSUMER_EXPIRED) != NULL;
  if (held != k->held)
    fprintf(stderr, "  case \"%s\": held %d, expected %d\n", k->name, held,
            k->held);
  CHECK(held == k->held);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRED], 1);
  world_free(&w);
}

static void test_expired_list(void) {
  for (size_t i = 0; i < sizeof(list_cases) / sizeof(list_cases[0]); i++)
    run_list_case(&list_cases[i]);
}

typedef struct {
  const char *name;
  /* The consumer created again (after expiring) with this threshold, -1:
   * not created again. */
  int64_t threshold;
  /* The next poll comes this long after the one that found it gone. */
  int64_t after;
  /* Expected: the finding's condition holds at that poll (held and
   * holding), held at all, its recreated_threshold_s (-1: absent). */
  bool cond, held;
  double recreated_s;
} again_case;

static const again_case again_cases[] = {
    /* The recommended threshold is 30 s. */
    {.name = "again: 1 ns short of the recommended threshold stays",
     .threshold = 30 * S - 1,
     .after = S,
     .cond = true,
     .held = true,
     .recreated_s = 29.999999999},
    {.name = "again: the recommended threshold clears at once",
     .threshold = 30 * S,
     .after = S,
     .cond = false,
     .held = false,
     .recreated_s = -1},
    {.name = "again: above it clears at once",
     .threshold = 30 * S + 1,
     .after = S,
     .cond = false,
     .held = false,
     .recreated_s = -1},
    {.name = "again: no threshold clears at once",
     .threshold = 0,
     .after = S,
     .cond = false,
     .held = false,
     .recreated_s = -1},
    {.name = "again: as it was (10 s) stays",
     .threshold = 10 * S,
     .after = S,
     .cond = true,
     .held = true,
     .recreated_s = 10},
    /* Nobody creates it again: retired after an hour. */
    {.name = "hold: 1 ns short of an hour",
     .threshold = -1,
     .after = 3600 * S - 1,
     .cond = true,
     .held = true,
     .recreated_s = -1},
    {.name = "hold: at an hour the condition ends",
     .threshold = -1,
     .after = 3600 * S,
     .cond = false,
     .held = true,
     .recreated_s = -1},
    {.name = "hold: created again too short an hour later, still held",
     .threshold = 10 * S,
     .after = 3600 * S,
     .cond = true,
     .held = true,
     .recreated_s = 10},
};

static void run_again_case(const again_case *k) {
  world w;
  world_init(&w, true);
  add_stream(&w, "S");
  int64_t gone = expire_n(&w, 1);
  CHECK(held_of(&w, NULL, NL_CONSUMER_EXPIRED) != NULL);
  if (k->threshold >= 0) {
    w.t = gone + k->after;
    create_again(&w, 0, k->threshold);
  }
  poll_at(&w, gone + k->after, 0);
  const nl_finding *f = held_of(&w, NULL, NL_CONSUMER_EXPIRED);
  double rs = f != NULL ? nl_finding_get(f, "recreated_threshold_s", -1) : -1;
  bool ok = nl_finding_holding(f) == k->cond && (f != NULL) == k->held &&
            (!k->cond || rs == k->recreated_s);
  if (!ok)
    fprintf(stderr,
            "  case \"%s\": holding %d, held %d, recreated_threshold_s %.12g\n",
            k->name, nl_finding_holding(f), f != NULL, rs);
  CHECK(ok);
  /* A fix is a change of configuration: cleared at once, by no hold. */
  if (!k->held)
    CHECK_EQ_U(w.clears[NL_CONSUMER_EXPIRED], 1);
  world_free(&w);
}

static void test_expired_created_again_and_hold(void) {
  for (size_t i = 0; i < sizeof(again_cases) / sizeof(again_cases[0]); i++)
    run_again_case(&again_cases[i]);
}

/* ---- CONSUMER_EXPIRING: the resets. ---- */

typedef enum {
  X_END = 0,   /* The end of the steps (a step left out). */
  X_AWAY,      /* arg away polls (a message each). */
  X_BACK,      /* The client comes back: takes all and acks, now. */
  X_THRESHOLD, /* The threshold becomes arg seconds (a fix). */
  X_DRAINED,   /* Nothing unread or unacknowledged any more. */
  X_RECREATE,  /* Deleted and created again, as it was. */
  X_BUSY,      /* arg polls with the client busy (nothing left waiting). */
  X_POLLS,     /* arg polls with nothing else changed. */
} x_op;

typedef struct {
  x_op op;
  int arg;
  int raised; /* After the step: 1, 0, or -1 not checked. */
} x_step;

typedef struct {
  const char *name;
  x_step steps[10];
  int onsets, clears;
} reset_case;

static const reset_case reset_cases[] = {
    /* 24 s: its half (12 s) not reached at 11 s, reached at 12 s. */
    {.name = "reset: a new threshold clears at once, judged afresh",
     .steps = {{X_AWAY, 10, 1},
               {X_THRESHOLD, 24, -1},
               {X_AWAY, 1, 0},
               {X_AWAY, 1, 1},
               {X_END, 0, -1}},
     .onsets = 2,
     .clears = 1},
    {.name = "reset: the client back, held 30 polls, cleared at the 31st",
     .steps = {{X_AWAY, 10, 1},
               {X_BACK, 0, -1},
               {X_POLLS, 30, 1},
               {X_POLLS, 1, 0},
               {X_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: nothing pending any more, cleared by the hold",
     .steps = {{X_AWAY, 10, 1},
               {X_DRAINED, 0, -1},
               {X_POLLS, 30, 1},
               {X_POLLS, 1, 0},
               {X_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    /* Its first poll as the new consumer at 11 s after the old one's last
     * busy poll: long-lived again 40 s later, at 51 s. */
    {.name = "reset: created again, cleared at once, long-lived anew",
     .steps = {{X_AWAY, 10, 1},
               {X_RECREATE, 0, -1},
               {X_BUSY, 1, 0},
               {X_BUSY, 28, 0},
               {X_AWAY, 11, 0},
               {X_AWAY, 1, 1},
               {X_END, 0, -1}},
     .onsets = 2,
     .clears = 1},
};

static void run_reset_case(const reset_case *k) {
  world w;
  world_init(&w, true);
  drive d = STD(0);
  int64_t base = w.t, tb;
  nl_consumer_snap *c = start(&w, &d, "C");
  tb = busy(&w, c, &d, base);
  int64_t t = tb;
  int step = 0;
  for (const x_step *p = k->steps; p->op != X_END; p++, step++) {
    switch (p->op) {
    case X_AWAY:
      for (int i = 0; i < p->arg; i++) {
        t += S;
        publish(&w, c, &d);
        poll_at(&w, t, 0);
      }
      break;
    case X_BACK:
      c->delivered_stream_seq = w.streams[0].last_seq;
      c->delivered_consumer_seq += c->num_pending;
      c->ack_floor_stream_seq = c->delivered_stream_seq;
      c->ack_floor_consumer_seq = c->delivered_consumer_seq;
      c->delivered_last_ns = c->ack_last_ns = t + S / 2;
      c->num_pending = 0;
      break;
    case X_THRESHOLD:
      c->inactive_threshold_ns = p->arg * S;
      break;
    case X_DRAINED:
      c->num_pending = 0;
      d.nothing = true;
      break;
    case X_RECREATE:
      c->created_ns = t + S / 2;
      c->num_pending = 0;
      c->delivered_consumer_seq = c->delivered_stream_seq = 0;
      c->ack_floor_consumer_seq = c->ack_floor_stream_seq = 0;
      c->delivered_last_ns = c->ack_last_ns = 0;
      break;
    case X_BUSY:
      for (int i = 0; i < p->arg; i++) {
        t += S;
        nl_stream_snap *st = &w.streams[0];
        st->last_seq += 2;
        st->msgs = st->last_seq;
        c->delivered_consumer_seq += 2;
        c->delivered_stream_seq = c->ack_floor_stream_seq =
            c->ack_floor_consumer_seq = st->last_seq;
        c->delivered_last_ns = c->ack_last_ns = t - 100 * MS;
        c->num_pending = 0;
        poll_at(&w, t, 0);
      }
      break;
    case X_POLLS:
      for (int i = 0; i < p->arg; i++) {
        t += S;
        poll_at(&w, t, 0);
      }
      break;
    case X_END:
      break;
    }
    if (p->raised >= 0) {
      bool on = held_of(&w, "C", NL_CONSUMER_EXPIRING) != NULL;
      if (on != (p->raised == 1))
        fprintf(stderr, "  case \"%s\", step %d: raised %d, expected %d\n",
                k->name, step + 1, on, p->raised);
      CHECK(on == (p->raised == 1));
    }
  }
  bool ok = w.onsets[NL_CONSUMER_EXPIRING] == k->onsets &&
            w.clears[NL_CONSUMER_EXPIRING] == k->clears;
  if (!ok)
    fprintf(stderr, "  case \"%s\": %d onsets, %d clears\n", k->name,
            w.onsets[NL_CONSUMER_EXPIRING], w.clears[NL_CONSUMER_EXPIRING]);
  CHECK(ok);
  world_free(&w);
}

static void test_expiring_resets(void) {
  for (size_t i = 0; i < sizeof(reset_cases) / sizeof(reset_cases[0]); i++)
    run_reset_case(&reset_cases[i]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_expiring_half),
    NL_TEST(test_expiring_gap),
    NL_TEST(test_expiring_long_lived),
    NL_TEST(test_expiring_ephemeral),
    NL_TEST(test_expiring_unseen),
    NL_TEST(test_expiring_look_alikes),
    NL_TEST(test_expiring_room),
    NL_TEST(test_expiring_push),
    NL_TEST(test_expiring_server_clock),
    NL_TEST(test_expiring_groups),
    NL_TEST(test_expiring_resets),
    NL_TEST(test_expired_by_poll),
    NL_TEST(test_expired_by_advisory),
    NL_TEST(test_expired_api_delete),
    NL_TEST(test_expired_gap),
    NL_TEST(test_expired_stream_recreated),
    NL_TEST(test_expired_nothing_to_lose),
    NL_TEST(test_expired_long_lived),
    NL_TEST(test_expired_server_clock),
    NL_TEST(test_expired_recommended),
    NL_TEST(test_expired_interest),
    NL_TEST(test_expired_groups),
    NL_TEST(test_expired_list),
    NL_TEST(test_expired_created_again_and_hold),
};

NL_TEST_MAIN(tests)
