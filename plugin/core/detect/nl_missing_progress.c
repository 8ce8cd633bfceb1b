/* nl_missing_progress.c: MISSING_PROGRESS, long tasks that run past the
 * redelivery delay without in-progress acks while most messages are acked
 * in time, so that they execute again in parallel. The predicate is in
 * docs/detectors.md. */
#include "nl_classes.h"
#include "nl_fix.h"
#include "nl_slow_processing.h"

#include <inttypes.h>
#include <stdio.h>

/* MISSING_PROGRESS: a few long tasks run past the redelivery delay without
 * in-progress acks while most messages are acked in time. Either the floor
 * has stood at least factor x delay with redeliveries while later messages
 * were acked, or expiry redeliveries recur and are a small share of the
 * deliveries (long tasks overlapping, so the floor moves from one to the
 * next). */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_state *st = x->st;
  const nl_consumer_snap *c = x->c;
  const nl_detect_params *p = x->p;
  nl_expiry_rounds rounds, *r = &rounds;
  nl_expiry_rounds_collect(st, c, p, r);
  const nl_sample *s0 = nl_state_latest(st);
  int64_t delay = nl_consumer_redelivery_delay_ns(c);
  if (c->ack_policy == NL_ACK_NONE || s0 == NULL || delay <= 0)
    return false;
  double limit = p->missing_progress_factor * (double)delay;
  int64_t stuck = s0->t_ns - st->stuck_since_ns;
  int64_t pinned = s0->t_ns - st->floor_since_ns;
  bool few = nl_expiry_rounds_few(r, p);
  bool now_stuck = st->acked_since_floor && st->redelivered_since_floor > 0 &&
                   (double)stuck >= limit && few;
  /* The stuck period lasts while later messages are acked, by the measure
   * of the expiry rounds (an ack within one delay and the interval): a
   * consumer that stopped acking altogether (hung, its requests still
   * waiting for redeliveries) has no long task among quick ones. */
  nl_past_sample s1;
  if (!nl_state_past(st, 1, &s1) ||
      s0->t_ns - st->last_ack_change_ns > delay + (s0->t_ns - s1.t_ns))
    now_stuck = false;
  bool long_tasks = r->recurring && few;
  /* Long tasks come one after another: when one finishes, the finding holds
   * for one more limit while the next may be building up. */
  bool grace = nl_finding_holding(st->active[NL_MISSING_PROGRESS]) &&
               st->last_stuck_end_ns > 0 &&
               (double)(s0->t_ns - st->last_stuck_end_ns) <= limit;
  if (!now_stuck && !long_tasks && !grace)
    return false;
  if (!now_stuck && !long_tasks) {
    *f = *st->active[NL_MISSING_PROGRESS]; /* Keep the last evidence. */
    nl_slow_add_ack_samples(st, c, f);
    return true;
  }
  double rec = nl_slow_recommend_ack_wait_s(st, c);
  nl_finding_start(f, NL_MISSING_PROGRESS);
  nl_finding_add(f, "stuck_stream_seq", (double)c->ack_floor_stream_seq + 1);
  nl_finding_add(f, "outstanding_s", nl_seconds(pinned));
  nl_finding_add(f, "ack_wait_s", nl_seconds(c->ack_wait_ns));
  nl_finding_add(f, "redeliveries_while_stuck",
                 (double)st->redelivered_since_floor);
  nl_finding_add(f, "redeliveries", (double)r->redeliveries);
  nl_finding_add(f, "redelivered_share", r->share);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "num_redelivered", (double)c->num_redelivered);
  nl_finding_add(f, "recommended_ack_wait_s", rec);
  char floor_text[128];
  nl_slow_ack_wait_floor(c, f, floor_text, sizeof(floor_text));
  if (now_stuck)
    snprintf(f->description, sizeof(f->description),
             "stream sequence %" PRIu64 " has been outstanding for %.0f s "
             "(%.1fx ack_wait %.0f s) and was redelivered %" PRIu32
             " times while later messages were acked: a long task is "
             "running without in-progress acks, so it executes again in "
             "parallel",
             c->ack_floor_stream_seq + 1, nl_seconds(pinned),
             (double)pinned / (double)delay, nl_seconds(c->ack_wait_ns),
             st->redelivered_since_floor);
  else
    snprintf(f->description, sizeof(f->description),
             "%" PRIu64 " redeliveries by ack_wait expiry in %.0f s, %.0f%% "
             "of the deliveries, while the other messages were acked in "
             "time: long tasks run past ack_wait %.0f s without in-progress "
             "acks, so they execute again in parallel",
             r->redeliveries, nl_seconds(r->window_ns), 100 * r->share,
             nl_seconds(c->ack_wait_ns));
  nl_fix_ack_wait(c, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "send in-progress acks (+WPI, msg.InProgress()) at least every "
           "%.0f s from long tasks; or raise ack_wait to %.0f s (1.5x the "
           "longest time a message was seen outstanding and one poll "
           "interval, %s)",
           nl_seconds(c->ack_wait_ns) / 2, rec, floor_text);
  nl_slow_add_ack_samples(st, c, f);
  return true;
}

static const nl_option options[] = {
    {"MissingProgressFactor", NL_OPTION_NUMBER, 100, NULL, 2.0,
     offsetof(nl_detect_params, missing_progress_factor)},
    NL_OPTION_END,
};

const nl_class_def nl_class_missing_progress = {
    .cls = NL_MISSING_PROGRESS,
    .detect = detect,
    .options = options,
};
