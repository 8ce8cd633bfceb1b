/* nl_ack_wait_violation.c: ACK_WAIT_VIOLATION, processing that takes
 * longer than ack_wait, so that messages still being worked on are
 * delivered again (duplicate execution). Raised from recurring expiry
 * rounds while the consumer keeps acking, or from a declared processing
 * time (nats_lens.max_processing) not shorter than the redelivery delay.
 * The predicates are in docs/detectors.md. */
#include "nl_classes.h"
#include "nl_fix.h"
#include "nl_slow_processing.h"

#include <inttypes.h>
#include <stdio.h>

/* ACK_WAIT_VIOLATION: expiry-driven redeliveries recur while acks keep
 * arriving (the consumer is alive), and they are a large share of the
 * deliveries (most messages outlast the redelivery delay). */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_state *st = x->st;
  const nl_consumer_snap *c = x->c;
  nl_expiry_rounds rounds, *r = &rounds;
  nl_expiry_rounds_collect(st, c, x->p, r);
  if (!r->recurring || nl_expiry_rounds_few(r, x->p))
    return false;
  double rec = nl_slow_recommend_ack_wait_s(st, c);
  nl_finding_start(f, NL_ACK_WAIT_VIOLATION);
  nl_finding_add(f, "redeliveries", (double)r->redeliveries);
  nl_finding_add(f, "intervals_with_redeliveries", (double)r->intervals);
  nl_finding_add(f, "window_s", nl_seconds(r->window_ns));
  nl_finding_add(f, "recurring_over_s", nl_seconds(r->span_ns));
  nl_finding_add(f, "redelivered_share", r->share);
  nl_finding_add(f, "ack_wait_s", nl_seconds(c->ack_wait_ns));
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "num_redelivered", (double)c->num_redelivered);
  nl_finding_add(f, "longest_outstanding_s", nl_seconds(st->longest_pin_ns));
  nl_finding_add(f, "recommended_ack_wait_s", rec);
  char floor_text[128];
  nl_slow_ack_wait_floor(c, f, floor_text, sizeof(floor_text));
  snprintf(f->description, sizeof(f->description),
           "%" PRIu64 " redeliveries by ack_wait expiry in %u polls within "
           "%.0f s (%.0f%% of the deliveries) while the consumer keeps "
           "acking: processing takes longer than ack_wait %.1f s, so "
           "messages still being worked on are delivered again (duplicate "
           "execution)",
           r->redeliveries, r->intervals, nl_seconds(r->window_ns),
           100 * r->share, nl_seconds(c->ack_wait_ns));
  nl_fix_ack_wait(c, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "ack_wait %.0f s: 1.5x the longest time a message was seen "
           "outstanding (%.1f s) and one poll interval, %s; for push "
           "consumers also lower max_ack_pending so messages do not wait in "
           "the client's buffer",
           rec, nl_seconds(st->longest_pin_ns), floor_text);
  nl_slow_add_ack_samples(st, c, f);
  return true;
}

/* ACK_WAIT_VIOLATION from the declared processing time (the audit's
 * ACK_WAIT_BELOW_PROCESSING finding): the first redelivery comes before a
 * task as long as declared is done, so the duplicate execution is certain
 * before any redelivery is seen. Taken when the polls' expiry rounds raise
 * nothing (their finding's recommendation already covers the declaration)
 * or theirs is suppressed. */
static bool configured(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_finding *d =
      nl_configured_find(x->configured, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING);
  if (d == NULL)
    return false;
  *f = *d;
  f->cls = NL_ACK_WAIT_VIOLATION;
  /* First, so that a notification cut at its length still says it. */
  f->n_evidence = 0;
  nl_finding_add(f, "from_declaration", 1);
  for (int i = 0; i < d->n_evidence; i++)
    nl_finding_add(f, d->evidence[i].name, d->evidence[i].value);
  if (x->c != NULL)
    nl_slow_add_ack_samples(x->st, x->c, f);
  return true;
}

static const nl_option options[] = {
    {"AckWaitMinIntervals", NL_OPTION_WHOLE, 2147483647, NULL, 2,
     offsetof(nl_detect_params, ack_wait_min_intervals)},
    {"AckWaitMinRedeliveries", NL_OPTION_WHOLE, 2147483647, NULL, 2,
     offsetof(nl_detect_params, ack_wait_min_redeliveries)},
    NL_OPTION_END,
};

const nl_class_def nl_class_ack_wait_violation = {
    .cls = NL_ACK_WAIT_VIOLATION,
    .detect = detect,
    .configured = configured,
    .audit_rules = 1u << NL_AUDIT_ACK_WAIT_BELOW_PROCESSING,
    /* A declared processing time is the same fault MISSING_PROGRESS sees
     * in a few long tasks; and when most deliveries are redelivered, the
     * few long tasks are no better an explanation. */
    .suppresses = NL_CLASS_BIT(NL_MISSING_PROGRESS),
    .options = options,
};
