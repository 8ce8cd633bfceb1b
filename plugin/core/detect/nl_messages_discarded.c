/* nl_messages_discarded.c: MESSAGES_DISCARDED, messages a consumer that
 * wants every message had not received when the stream removed them by
 * design: a newer message on the subject (max_msgs_per_subject, as in a
 * key-value bucket) or the message's own TTL. No stream limit was reached
 * and nobody deleted them, so SEQUENCE_GAP stays silent; yet a consumer
 * that acknowledges each message and starts at every message (not at the
 * newest per subject) will never process them. What was removed is
 * counted by the history (nl_history) and attributed by nl_gap. The
 * predicate is in docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_gap.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdio.h>

/* The fix for a per-subject limit: enough history per subject for the
 * consumer's backlog (the limit plus what it lost, at least double). */
static void fix_subject_limit(const nl_consumer_snap *c,
                              const nl_stream_snap *s, uint64_t total,
                              nl_finding *f) {
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  uint64_t limit =
      s->max_msgs_per_subject > 0 ? (uint64_t)s->max_msgs_per_subject : 1;
  uint64_t rec = limit + total;
  if (rec < 2 * limit)
    rec = 2 * limit;
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats stream edit %s --max-msgs-per-subject %" PRIu64, q.stream,
           rec);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "max_msgs_per_subject %" PRIu64 " (the limit %" PRIu64
           " plus the messages the consumer lost, at least double), so the "
           "consumer's backlog on a subject stays stored until it reads "
           "it; or, when only the newest message per subject matters, "
           "create the consumer with deliver policy last_per_subject",
           rec, limit);
}

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  (void)state;
  const nl_consumer_state *st = x->st;
  const nl_gap_state *g = nl_gap_of(st);
  if (g == NULL || g->discarded_last == 0)
    return false;
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  nl_finding_start(f, NL_MESSAGES_DISCARDED);
  nl_finding_add(f, "discarded_since_last_poll", (double)g->discarded_last);
  nl_finding_add(f, "discarded_total", (double)st->discarded_total);
  if (g->discarded_first > 0) {
    nl_finding_add(f, "first_discarded_seq", (double)g->discarded_first);
    nl_finding_add(f, "last_discarded_seq", (double)g->discarded_last_seq);
  }
  nl_finding_add(f, "delivered_stream_seq", (double)c->delivered_stream_seq);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "max_msgs_per_subject", (double)s->max_msgs_per_subject);
  const char *by = nl_removal_cause_name(g->discard_cause);
  snprintf(f->description, sizeof(f->description),
           "%" PRIu64 " messages (%" PRIu64 " in total) were removed by %s "
           "before this consumer, which acknowledges every message, "
           "received them: it will never process them",
           g->discarded_last, st->discarded_total, by);
  if (g->discard_cause == NL_REMOVED_BY_SUBJECT_LIMIT) {
    fix_subject_limit(c, s, st->discarded_total, f);
  } else {
    f->fix_command[0] = '\0';
    snprintf(f->recommendation, sizeof(f->recommendation),
             "no fix command: %s removed them, as the publisher set it; "
             "let the consumer keep up (more workers, a larger "
             "max_ack_pending), or publish with a TTL longer than the "
             "consumer's backlog takes to read",
             by);
  }
  return true;
}

const nl_class_def nl_class_messages_discarded = {
    .cls = NL_MESSAGES_DISCARDED,
    .detect = detect,
};
