/* nl_sequence_gap.c: SEQUENCE_GAP, messages the stream removed before the
 * consumer received them, or delivered and not yet acked, by a limit, a
 * purge or a delete (silent loss). What is lost is counted by the history
 * (nl_history) and attributed by nl_gap (a message's own TTL, a newer
 * message on its subject, a schedule that fired are no loss). The
 * predicate is in docs/detectors.md. */
#include "nl_classes.h"
#include "nl_fix.h"

#include "core/model/nl_gap.h"

#include <inttypes.h>
#include <stdio.h>

/* SEQUENCE_GAP: messages removed from the stream before this consumer
 * received them (counted by nl_history), or delivered and not yet acked
 * (nl_gap: MSG_TERMINATED advisories the polls confirm), by a limit, a
 * purge or a delete; a message's own TTL and a newer message on its
 * subject are no loss (nl_gap_poll takes them out). */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_state *st = x->st;
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  uint64_t level = 0;
  /* Sequences the stream never stored for it are not unread ones. */
  uint64_t read = nl_state_read_through(st, c->delivered_stream_seq);
  /* Nor are those removed without loss. */
  read = nl_gap_read_through(st, read);
  if (!c->filtered && s->first_seq > read + 1)
    level = s->first_seq - 1 - read;
  if (st->lost_last == 0 && level == 0)
    return false;
  const nl_loss_range *range =
      st->loss != NULL && st->loss->first_seq > 0 ? st->loss : NULL;
  const nl_gap_state *g = nl_gap_of(st);
  uint64_t unacked = g != NULL ? g->unacked_total : 0;
  uint64_t newest = s->first_seq > 0 ? s->first_seq - 1 : 0;
  nl_removal_cause cause = g != NULL && g->has_cause
                               ? g->cause
                               : nl_removal_cause_of(s, NULL, newest, 0);
  nl_finding_start(f, NL_SEQUENCE_GAP);
  nl_finding_add(f, "lost_since_last_poll", (double)st->lost_last);
  nl_finding_add(f, "lost_total", (double)st->lost_total);
  nl_finding_add(f, "unread_evicted", (double)level);
  if (unacked > 0)
    nl_finding_add(f, "unacked_evicted", (double)unacked);
  if (range != NULL) {
    nl_finding_add(f, "first_lost_seq", (double)range->first_seq);
    nl_finding_add(f, "last_lost_seq", (double)range->last_seq);
  }
  nl_finding_add(f, "stream_first_seq", (double)s->first_seq);
  nl_finding_add(f, "delivered_stream_seq", (double)c->delivered_stream_seq);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "filtered", c->filtered ? 1 : 0);
  const char *by = nl_removal_cause_name(cause);
  if (range != NULL)
    snprintf(f->description, sizeof(f->description),
             "stream sequences %" PRIu64 "-%" PRIu64 " (%" PRIu64
             " messages, %" PRIu64 " in total) were removed by %s "
             "before the consumer received them (silent loss)",
             range->first_seq, range->last_seq,
             range->last_seq - range->first_seq + 1, st->lost_total, by);
  else if (g != NULL && g->unacked_last > 0 && g->unacked_last == st->lost_last)
    snprintf(f->description, sizeof(f->description),
             "%" PRIu64 " messages delivered and not yet acked (%" PRIu64
             " lost in total) were removed by %s: if the worker fails "
             "them, their redelivery will never come (silent loss)",
             g->unacked_last, st->lost_total, by);
  else
    snprintf(f->description, sizeof(f->description),
             "at least %" PRIu64 " messages (%" PRIu64 " in total) were "
             "removed from the stream by %s before the consumer received "
             "them or while they awaited an ack (silent loss)",
             st->lost_last > level ? st->lost_last : level, st->lost_total, by);
  nl_fix_removal(c, s, cause, st->lost_total, f);
  return true;
}

const nl_class_def nl_class_sequence_gap = {
    .cls = NL_SEQUENCE_GAP,
    .detect = detect,
    /* Messages already lost are what RETENTION_RISK would forecast. */
    .suppresses = NL_CLASS_BIT(NL_RETENTION_RISK),
};
