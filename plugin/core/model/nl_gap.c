/* nl_gap.c: what SEQUENCE_GAP learns beyond the polled counts (see
 * nl_gap.h and docs/detectors.md, SEQUENCE_GAP). */
#include "nl_gap.h"

#include <stdlib.h>

/* Whether seq lies in claim k or next to it. */
static bool touches(const nl_gap_claim *k, uint64_t seq) {
  uint64_t below = k->first_seq - 1; /* Ranges start at 1 or later. */
  uint64_t above = k->last_seq == UINT64_MAX ? UINT64_MAX : k->last_seq + 1;
  return seq >= below && seq <= above;
}

/* Merges into claim i every other claim it now overlaps or touches. */
static void merge_into(nl_gap_state *g, unsigned i) {
  for (unsigned j = 0; j < g->n_claims;) {
    nl_gap_claim *a = &g->claims[i], *b = &g->claims[j];
    if (j == i || !(touches(a, b->first_seq) || touches(a, b->last_seq) ||
                    touches(b, a->first_seq))) {
      j++;
      continue;
    }
    if (b->first_seq < a->first_seq)
      a->first_seq = b->first_seq;
    if (b->last_seq > a->last_seq)
      a->last_seq = b->last_seq;
    if (b->received_ns > a->received_ns)
      a->received_ns = b->received_ns;
    g->claims[j] = g->claims[--g->n_claims];
    if (i == g->n_claims)
      i = j; /* The claim merged into moved to j. */
  }
}

/* Returns st->gap, allocating it zeroed; NULL when memory runs out. */
static nl_gap_state *gap_of(nl_consumer_state *st) {
  if (st->gap == NULL)
    st->gap = calloc(1, sizeof(*st->gap));
  return st->gap;
}

int nl_gap_claim_removed(nl_consumer_state *st, const nl_advisory *a) {
  const nl_sample *s0 = nl_state_latest(st);
  uint64_t seq = a->stream_seq;
  if (seq == 0 || (s0 != NULL && seq <= s0->ack_floor_stream_seq))
    return 1; /* Acked at the latest poll: it was not pending. */
  nl_gap_state *g = gap_of(st);
  if (g == NULL)
    return -1;
  if (seq <= g->unacked_through)
    return 0; /* Counted already. */
  for (unsigned i = 0; i < g->n_claims; i++)
    if (seq >= g->claims[i].first_seq && seq <= g->claims[i].last_seq) {
      if (a->received_ns > g->claims[i].received_ns)
        g->claims[i].received_ns = a->received_ns;
      return 0;
    }
  for (unsigned i = 0; i < g->n_claims; i++) {
    nl_gap_claim *k = &g->claims[i];
    if (!touches(k, seq))
      continue;
    if (seq < k->first_seq)
      k->first_seq = seq;
    else
      k->last_seq = seq;
    if (a->received_ns > k->received_ns)
      k->received_ns = a->received_ns;
    merge_into(g, i);
    return 0;
  }
  /* With every range taken the claim is left out: the count stays a lower
   * bound. */
  if (g->n_claims < NL_GAP_CLAIM_RANGES)
    g->claims[g->n_claims++] = (nl_gap_claim){seq, seq, a->received_ns};
  return 0;
}

/* Checks claim k against poll c of stream s: the sequences beyond what the
 * consumer delivered are contradicted (returned); of the others, those not
 * counted yet that the stream's head has passed are counted as lost when
 * a limit removed them. */
static uint64_t check_claim(nl_gap_state *g, const nl_gap_claim *k,
                            const nl_consumer_snap *c, const nl_stream_snap *s,
                            const nl_seqclock *clock) {
  uint64_t lo = k->first_seq, hi = k->last_seq, bad = 0;
  uint64_t delivered = c->delivered_stream_seq;
  if (hi > delivered) {
    bad = hi - (lo > delivered ? lo : delivered + 1) + 1;
    if (lo > delivered)
      return bad;
    hi = delivered;
  }
  if (lo <= g->unacked_through)
    lo = g->unacked_through + 1;
  /* An interior removal (a newer message on the subject, a TTL, a delete)
   * or a client's +TERM that left the message stored stays uncounted. */
  if (s->first_seq <= hi)
    hi = s->first_seq > 0 ? s->first_seq - 1 : 0;
  if (lo > hi)
    return bad;
  nl_removal_cause cause = nl_removal_cause_of(s, clock, hi, k->received_ns);
  if (!nl_removal_by_limit(cause))
    return bad;
  g->unacked_last += hi - lo + 1;
  g->unacked_through = hi;
  g->cause = cause;
  g->has_cause = true;
  return bad;
}

/* Moves the loss st counted in its latest interval into g's hold, out of
 * st's counts, with the stream's additions of the interval. */
static void hold_loss(nl_gap_state *g, nl_consumer_state *st, uint64_t added) {
  g->held = st->lost_last;
  g->held_added = added;
  g->held_first = st->loss != NULL ? st->loss->first_seq : 0;
  g->held_last = st->loss != NULL ? st->loss->last_seq : 0;
  st->lost_total -= st->lost_last;
  st->lost_last = 0;
}

/* Puts the loss g held back into st's counts for the latest interval,
 * with its range when this interval knows none; returns what the stream
 * added while it was held. */
static uint64_t release_loss(nl_gap_state *g, nl_consumer_state *st) {
  uint64_t added = g->held_added;
  st->lost_last += g->held;
  st->lost_total += g->held;
  if (st->loss != NULL && st->loss->first_seq == 0) {
    st->loss->first_seq = g->held_first;
    st->loss->last_seq = g->held_last;
  }
  g->held = g->held_added = g->held_first = g->held_last = 0;
  return added;
}

/* Takes the loss the history counted in st's latest interval back out of
 * its counts when the stream removed those messages for a cause that is
 * no loss (for a schedule that fired: no more than the stream added in
 * the interval, or in the two when the loss was held); else holds it for
 * one poll on a schedule stream (nl_gap_state.held) or keeps the cause
 * for the fix. */
static void attribute_unread(nl_gap_state *g, nl_consumer_state *st,
                             const nl_stream_snap *s, const nl_seqclock *clock,
                             int64_t now_ns) {
  /* The newest sequence the stream's head has passed (0: none yet). */
  uint64_t newest = s->first_seq > 0 ? s->first_seq - 1 : 0;
  const nl_sample *cur = nl_state_latest(st);
  bool was_held = g->held > 0;
  uint64_t added = (cur != NULL ? cur->stream_added : 0);
  if (was_held)
    added += release_loss(g, st);
  nl_removal_cause cause =
      nl_removal_unread_cause(s, clock, newest, now_ns, st->lost_last, added);
  if (nl_removal_is_loss(cause)) {
    if (cause == NL_REMOVED_OTHERWISE && s->allow_msg_schedules && !was_held) {
      hold_loss(g, st, added);
      return;
    }
    g->cause = cause;
    g->has_cause = true;
    return;
  }
  if (st->wants_every && cause != NL_REMOVED_BY_SCHEDULE) {
    g->discarded_last = st->lost_last;
    g->discard_cause = cause;
    g->discarded_first = st->loss != NULL ? st->loss->first_seq : 0;
    g->discarded_last_seq = st->loss != NULL ? st->loss->last_seq : 0;
    st->discarded_total += st->lost_last;
  }
  g->excused_total += st->lost_last;
  st->lost_total -= st->lost_last;
  st->lost_last = 0;
  if (st->loss != NULL)
    st->loss->first_seq = st->loss->last_seq = 0;
  if (newest > g->excused_through)
    g->excused_through = newest;
}

unsigned nl_gap_poll(nl_consumer_state *st, const nl_consumer_snap *c,
                     const nl_stream_snap *s, const nl_seqclock *clock,
                     int64_t now_ns) {
  nl_gap_state *g = st->lost_last > 0 ? gap_of(st) : st->gap;
  if (g == NULL)
    return 0;
  if (g->excused_through > s->last_seq)
    g->excused_through = 0; /* The stream went back: created again. */
  g->discarded_last = 0;
  if (st->lost_last > 0 || g->held > 0)
    attribute_unread(g, st, s, clock, now_ns);
  g->unacked_last = 0;
  uint64_t bad = 0;
  unsigned kept = 0;
  for (unsigned i = 0; i < g->n_claims; i++) {
    /* A poll that began before the advisory arrived may show the stream
     * before the removal: the claim waits for the next one. */
    if (g->claims[i].received_ns >= now_ns)
      g->claims[kept++] = g->claims[i];
    else
      bad += check_claim(g, &g->claims[i], c, s, clock);
  }
  g->n_claims = kept;
  g->unacked_total += g->unacked_last;
  st->lost_last += g->unacked_last;
  st->lost_total += g->unacked_last;
  return bad > UINT32_MAX ? UINT32_MAX : (unsigned)bad;
}

uint64_t nl_gap_read_through(const nl_consumer_state *st, uint64_t read) {
  const nl_gap_state *g = nl_gap_of(st);
  return g != NULL && g->excused_through > read ? g->excused_through : read;
}

const nl_gap_state *nl_gap_of(const nl_consumer_state *st) { return st->gap; }
