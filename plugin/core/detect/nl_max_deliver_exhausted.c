/* nl_max_deliver_exhausted.c: MAX_DELIVER_EXHAUSTED, messages that reached
 * max_deliver and will never be delivered again, with no dead-letter
 * handling in sight: from the MAX_DELIVERIES advisories (nl_advised, as
 * claims the polls confirm) and the lower bound num_redelivered shows. The
 * predicate is in docs/detectors.md. */
#include "nl_classes.h"
#include "nl_fix.h"

#include "core/model/nl_advised.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdio.h>

/* What the class keeps of a consumer with max_deliver set, from its latest
 * poll. */
typedef struct {
  bool dead_letter; /* Dead-letter handling in sight (nl_audit). */
} exhausted_state;

/* MAX_DELIVER_EXHAUSTED: messages reached max_deliver (MAX_DELIVERIES
 * advisories, or at least num_redelivered - num_ack_pending by polling)
 * with no dead-letter handling in sight. c is NULL between polls. */
static bool exhausted(const nl_consumer_state *st, const exhausted_state *ks,
                      const nl_consumer_snap *c, nl_finding *f) {
  const nl_advised *x = st->advised;
  /* With dead-letter handling in sight, or max_deliver unlimited now (the
   * two fixes it recommends), nothing more is exhausted unseen. */
  if (x == NULL || (ks != NULL && ks->dead_letter) || x->max_deliver <= 0)
    return false;
  uint64_t lower = 0;
  if (c != NULL && c->max_deliver > 0 && c->ack_policy != NL_ACK_NONE &&
      c->num_redelivered > c->num_ack_pending)
    lower = c->num_redelivered - c->num_ack_pending;
  if (x->n_exhausted == 0 && lower == 0)
    return false;
  uint64_t seqs[3];
  unsigned k = nl_advised_newest_exhausted(x, seqs);
  nl_finding_start(f, NL_MAX_DELIVER_EXHAUSTED);
  uint64_t n = x->n_exhausted > lower ? x->n_exhausted : lower;
  /* The essentials first (a notification's message keeps only the
   * evidence that fits): how many, the limit, and which messages. */
  nl_finding_add(f, "exhausted", (double)n);
  nl_finding_add(f, "max_deliver", (double)x->max_deliver);
  static const char *const seq_names[3] = {"exhausted_seq_1", "exhausted_seq_2",
                                           "exhausted_seq_3"};
  for (unsigned i = 0; i < k; i++)
    nl_finding_add(f, seq_names[i], (double)seqs[i]);
  nl_finding_add(f, "exhausted_advisories", (double)x->n_exhausted);
  nl_finding_add(f, "lower_bound_polled", (double)lower);
  nl_finding_add(f, "dead_letter_streams", 0);
  char list[128] = "";
  size_t used = 0;
  for (unsigned i = 0; i < k && used < sizeof(list); i++)
    used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%" PRIu64,
                             i ? ", " : "", seqs[i]);
  nl_shell_names q;
  nl_shell_names_of(st->stream, st->name, &q);
  if (k > 0)
    snprintf(f->description, sizeof(f->description),
             "%" PRIu64 " message(s) reached max_deliver %" PRId64
             " and will never be delivered again, and no stream keeps the "
             "MAX_DELIVERIES advisories (no dead-letter handling): stream "
             "sequence(s) %s%s",
             n, x->max_deliver, list,
             x->n_exhausted > k ? " and earlier ones" : "");
  else
    snprintf(f->description, sizeof(f->description),
             "at least %" PRIu64 " message(s) reached max_deliver %" PRId64
             " (num_redelivered minus num_ack_pending) and will never be "
             "delivered again, with no dead-letter handling; their "
             "sequences are known only from MAX_DELIVERIES advisories",
             lower, x->max_deliver);
  nl_consumer_snap stub = {.stream = st->stream, .name = st->name};
  nl_fix_dead_letter(&stub, f->fix_command, sizeof(f->fix_command));
  if (k > 0)
    snprintf(f->recommendation, sizeof(f->recommendation),
             "fetch each exhausted message (nats stream get %s %" PRIu64
             ", and the other sequences) and publish it again once its "
             "cause is fixed; keep future ones in a dead-letter stream "
             "(the fix command), or raise max_deliver",
             q.stream, seqs[0]);
  else
    snprintf(f->recommendation, sizeof(f->recommendation),
             "keep the MAX_DELIVERIES advisories in a dead-letter stream "
             "(the fix command) so exhausted messages can be found and "
             "replayed (nats stream get %s SEQ); or raise max_deliver",
             q.stream);
  return true;
}

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  exhausted_state *k = *state;
  if (x->c->max_deliver > 0)
    k = nl_class_state(&nl_class_max_deliver_exhausted, state);
  if (k != NULL)
    k->dead_letter =
        x->c->max_deliver > 0 && nl_audit_dead_letter(x->set, x->c);
  return exhausted(x->st, k, x->c, f);
}

/* Between polls, the MAX_DELIVERIES advisories the polls make possible. */
static bool advised(const nl_consumer_ctx *x, void **state,
                    const nl_advisory *a, nl_finding *f) {
  return nl_advisory_is_evidence(a->kind) && exhausted(x->st, *state, NULL, f);
}

const nl_class_def nl_class_max_deliver_exhausted = {
    .cls = NL_MAX_DELIVER_EXHAUSTED,
    .state_size = sizeof(exhausted_state),
    .detect = detect,
    .advised = advised,
};
