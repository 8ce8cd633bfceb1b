/* nl_messages_skipped.c: MESSAGES_SKIPPED, stream positions a consumer
 * will never deliver because of where it was created again: a consumer
 * deleted and created again under the same name (a redeploy, a client
 * that creates its consumer at start-up) that starts after where its
 * predecessor had acknowledged. The predicate is in docs/detectors.md.
 *
 * The predecessor comes from the history (st->prior, when the consumer
 * was created again between two polls) or from the consumers that left
 * its stream (a departure list in this class's state of the stream, when
 * a poll saw it gone). Each new incarnation is judged once, at its first
 * poll. */
#include "nl_classes.h"
#include "nl_fix.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A departure is kept this long for a consumer created again under its
 * name, and this many per stream (the oldest makes room). */
#define NL_DEPARTED_HOLD_NS (24 * 3600LL * 1000000000LL)
#define NL_DEPARTED_MAX 32
/* A skip stays reported this long after it was found, unless the consumer
 * is created again first. */
#define NL_SKIPPED_HOLD_NS (3600LL * 1000000000LL)
/* How much faster than the fastest pace its polls saw a predecessor is
 * taken to have moved after its latest poll. */
#define NL_SKIPPED_PACE_FACTOR 2.0

/* One consumer that left the stream: its name's key and its last poll. */
typedef struct {
  uint64_t name_key;
  int64_t gone_ns; /* The first poll that no longer listed it. */
  nl_incarnation inc;
} departed;

/* The class's state of a stream: the consumers that left it. */
typedef struct {
  departed items[NL_DEPARTED_MAX]; /* Oldest first. */
  size_t n;
} departed_list;

/* The class's state of a consumer's incarnation: what its judgement found
 * (count 0: no skip). */
typedef struct {
  bool judged;
  uint64_t count;     /* Messages skipped (a lower bound). */
  uint64_t first_seq; /* The skipped stream sequences. */
  uint64_t last_seq;
  uint64_t pred_floor; /* The predecessor's ack floor at its latest poll. */
  uint64_t start_seq;  /* Where this incarnation starts (at the latest). */
  int64_t found_ns;
  int64_t pred_gap_ns; /* From the predecessor's latest poll to its end. */
} skipped_state;

static uint64_t name_key(const char *name) {
  return nl_hash_bytes(14695981039346656037ULL, name, strlen(name));
}

static uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/* x rounded up to a whole number of messages (0 for none; capped far
 * above any stream), without libm: the plugin does not link it. */
static uint64_t messages_up(double x) {
  if (!(x > 0))
    return 0;
  if (x >= 1e18)
    return UINT64_MAX / 2;
  uint64_t n = (uint64_t)x;
  return (double)n < x ? n + 1 : n;
}

/* Takes out of list l the latest departure of a consumer named name that
 * is not the incarnation created at created_ns, kept less than
 * NL_DEPARTED_HOLD_NS before now_ns, into *out. */
static bool take_departed(departed_list *l, const char *name,
                          int64_t created_ns, int64_t now_ns, departed *out) {
  uint64_t key = name_key(name);
  for (size_t i = l->n; i-- > 0;) {
    if (l->items[i].name_key != key ||
        nl_created_same(l->items[i].inc.created_ns, created_ns) ||
        now_ns - l->items[i].gone_ns >= NL_DEPARTED_HOLD_NS)
      continue;
    *out = l->items[i];
    memmove(&l->items[i], &l->items[i + 1],
            (l->n - i - 1) * sizeof(l->items[0]));
    l->n--;
    return true;
  }
  return false;
}

/* The lowest stream sequence consumer c can have started after (its
 * start minus one), as its configuration and its first poll bound it;
 * pred is its predecessor. Returns false when nothing bounds it. */
static bool start_bound(const nl_consumer_snap *c, const nl_incarnation *pred,
                        uint64_t *out) {
  uint64_t lo = 0;
  bool known = false;
  if (c->delivered_consumer_seq == 0) {
    /* Nothing delivered yet: the server reports its start minus one. */
    *out = c->delivered_stream_seq;
    return true;
  }
  if (c->deliver_policy == NL_DELIVER_BY_START_SEQUENCE &&
      c->opt_start_seq > 0) {
    lo = c->opt_start_seq - 1;
    known = true;
  } else if (c->deliver_policy == NL_DELIVER_NEW) {
    /* It started at the stream's end when it was created, after its
     * predecessor's latest poll. */
    lo = pred->stream_last_seq;
    known = true;
  }
  if (!c->filtered) {
    /* Each of its positions from its start to delivered.stream_seq was
     * delivered at least once, unless deleted. */
    uint64_t by_count =
        sat_sub(c->delivered_stream_seq, c->delivered_consumer_seq);
    if (!known || by_count > lo)
      lo = by_count;
    known = true;
  }
  *out = lo;
  return known;
}

/* Judges the new incarnation of consumer x against its predecessor pred,
 * which ended no later than end_ns; fills k when it skipped messages. */
static void judge(const nl_consumer_ctx *x, const nl_incarnation *pred,
                  int64_t end_ns, skipped_state *k) {
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  /* A work queue starts every consumer at its first message; a reader of
   * other subjects or of the newest messages only, a predecessor whose
   * floor may be an old one, or a stream created again in between, are
   * no predecessor to compare with. */
  if (s->retention == NL_RETENTION_WORKQUEUE || !nl_consumer_wants_every(c) ||
      c->deliver_policy == NL_DELIVER_ALL || !pred->wants_every ||
      pred->floor_unproven || pred->filter_key != nl_consumer_filter_key(c) ||
      (pred->stream_created_ns != 0 && s->created_ns != 0 &&
       !nl_created_same(pred->stream_created_ns, s->created_ns)) ||
      s->last_seq < pred->stream_last_seq)
    return;
  uint64_t start;
  if (!start_bound(c, pred, &start))
    return;
  /* What it may have acknowledged between its latest poll and its end. */
  int64_t gap = end_ns > pred->t_ns ? end_ns - pred->t_ns : 0;
  double pace = pred->floor_rate_max > pred->deliver_rate_max
                    ? pred->floor_rate_max
                    : pred->deliver_rate_max;
  uint64_t margin =
      messages_up(NL_SKIPPED_PACE_FACTOR * pace * nl_seconds(gap));
  uint64_t floor = pred->ack_floor_stream_seq + margin;
  if (floor < pred->ack_floor_stream_seq || start <= floor)
    return;
  uint64_t n = 0;
  if (!c->filtered && s->retention == NL_RETENTION_LIMITS) {
    /* Every position in the range, less those its predecessor had acked
     * above its floor and those the stream may have deleted. */
    n = start - floor;
    uint64_t acked_above =
        sat_sub(sat_sub(pred->delivered_stream_seq, pred->ack_floor_stream_seq),
                pred->num_ack_pending);
    n = sat_sub(sat_sub(n, acked_above), s->num_deleted);
  }
  if (start >= pred->stream_last_seq) {
    /* It starts past everything its predecessor had outstanding: that is
     * skipped, less what it may have processed before it ended. */
    uint64_t done = messages_up(NL_SKIPPED_PACE_FACTOR *
                                pred->deliver_rate_max * nl_seconds(gap));
    uint64_t left = sat_sub(pred->num_pending + pred->num_ack_pending, done);
    if (left > start - floor)
      left = start - floor;
    if (left > n)
      n = left;
  }
  if (n == 0)
    return;
  k->count = n;
  k->first_seq = floor + 1;
  k->last_seq = start;
  k->pred_floor = pred->ack_floor_stream_seq;
  k->start_seq = start + 1;
  k->found_ns = x->now_ns;
  k->pred_gap_ns = gap;
  x->st->skipped_total += n;
}

/* When, on the plugin's clock, consumer x's incarnation was created at the
 * latest: its age on the server's clock (nats-server 2.10+ reports when
 * it answered) taken back from the poll's time; without it, the poll's
 * time. The predecessor ended before. */
static int64_t created_by(const nl_consumer_ctx *x) {
  const nl_consumer_snap *c = x->c;
  if (c->server_ts_ns > 0 && c->created_ns > 0 &&
      c->server_ts_ns > c->created_ns)
    return x->now_ns - (c->server_ts_ns - c->created_ns);
  return x->now_ns;
}

/* The predecessor of x's incarnation, judged once: from the history when
 * it was created again between two polls, else from its stream's
 * departures. */
static void judge_once(const nl_consumer_ctx *x, skipped_state *k) {
  k->judged = true;
  nl_incarnation *prior = x->st->prior;
  if (prior != NULL && !prior->judged &&
      nl_created_same(prior->succeeded_by_ns, x->st->created_ns)) {
    prior->judged = true;
    judge(x, prior, created_by(x), k);
    return;
  }
  void **slot =
      x->stream_state != NULL ? x->stream_state(x, NL_MESSAGES_SKIPPED) : NULL;
  departed d;
  if (slot != NULL && *slot != NULL &&
      take_departed(*slot, x->st->name, x->st->created_ns, x->now_ns, &d)) {
    int64_t end = created_by(x);
    judge(x, &d.inc, d.gone_ns < end ? d.gone_ns : end, k);
  }
}

/* Whether k's skipped messages are still stored in stream s: the fix
 * can still deliver them. */
static bool still_stored(const skipped_state *k, const nl_stream_snap *s) {
  return s->msgs > 0 && k->last_seq >= s->first_seq;
}

/* The finding for consumer x whose incarnation skipped what k says. */
static void describe(const nl_consumer_ctx *x, const skipped_state *k,
                     nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  bool stored = still_stored(k, s);
  uint64_t from = k->first_seq > s->first_seq ? k->first_seq : s->first_seq;
  nl_finding_start(f, NL_MESSAGES_SKIPPED);
  nl_finding_add(f, "skipped", (double)k->count);
  nl_finding_add(f, "first_skipped_seq", (double)k->first_seq);
  nl_finding_add(f, "last_skipped_seq", (double)k->last_seq);
  nl_finding_add(f, "predecessor_ack_floor", (double)k->pred_floor);
  nl_finding_add(f, "start_seq", (double)k->start_seq);
  nl_finding_add(f, "still_stored", stored ? 1 : 0);
  nl_finding_add(f, "skipped_total", (double)x->st->skipped_total);
  nl_finding_add(f, "predecessor_gap_s", floor(nl_seconds(k->pred_gap_ns)));
  char safe[128];
  nl_printable(c->name, false, safe, sizeof(safe));
  snprintf(f->description, sizeof(f->description),
           "consumer %s was created again starting at stream sequence "
           "%" PRIu64 " while the one before it under this name had "
           "acknowledged only up to %" PRIu64 ": at least %" PRIu64
           " message(s) in sequences %" PRIu64 "-%" PRIu64
           " will never be delivered to it (%s)",
           safe, k->start_seq, k->pred_floor, k->count, k->first_seq,
           k->last_seq,
           stored ? "still stored: creating it again at the first of them "
                    "delivers them"
                  : "the stream no longer holds them");
  if (stored)
    nl_fix_consumer_recreate(c, from, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "%s; when a consumer is created again (a redeploy), start it "
           "where the one before acknowledged (deliver policy "
           "by_start_sequence at its ack floor + 1), or keep the durable "
           "consumer instead of deleting it",
           stored
               ? "create it again starting at the first skipped message "
                 "(the fix command; messages it received since are "
                 "delivered again, which at-least-once allows)"
               : "the skipped messages are gone from the stream: replay them "
                 "from their source if they matter");
}

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  skipped_state *k = *state;
  if (k == NULL || !k->judged) {
    k = nl_class_state(&nl_class_messages_skipped, state);
    if (k == NULL)
      return false;
    judge_once(x, k);
  }
  if (k->count == 0 || x->now_ns - k->found_ns >= NL_SKIPPED_HOLD_NS)
    return false;
  describe(x, k, f);
  return true;
}

/* A consumer gone from its stream: its last poll is kept among the
 * stream's departures, for one created again under its name. */
static void gone(const nl_gone_ctx *g, const void *state, void **to_state) {
  (void)state;
  nl_incarnation inc;
  if (g->s->retention == NL_RETENTION_WORKQUEUE || !g->st->wants_every ||
      !nl_state_incarnation(g->st, &inc))
    return;
  departed_list *l = *to_state;
  if (l == NULL && (l = *to_state = calloc(1, sizeof(*l))) == NULL)
    return;
  /* The old departures go, and the oldest makes room. */
  size_t kept = 0;
  for (size_t i = 0; i < l->n; i++)
    if (g->now_ns - l->items[i].gone_ns < NL_DEPARTED_HOLD_NS)
      l->items[kept++] = l->items[i];
  l->n = kept;
  if (l->n == NL_DEPARTED_MAX) {
    memmove(&l->items[0], &l->items[1], (l->n - 1) * sizeof(l->items[0]));
    l->n--;
  }
  l->items[l->n++] = (departed){name_key(g->st->name), g->now_ns, inc};
}

const nl_class_def nl_class_messages_skipped = {
    .cls = NL_MESSAGES_SKIPPED,
    .state_size = sizeof(skipped_state),
    .detect = detect,
    .gone = gone,
    .gone_to = NL_MESSAGES_SKIPPED,
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
};
