/* nl_slow_processing.c: what ACK_WAIT_VIOLATION and MISSING_PROGRESS share
 * (see nl_slow_processing.h). */
#include "nl_slow_processing.h"

#include "core/model/nl_advised.h"
#include "core/model/nl_expect.h"
#include "nl_fix.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Collects, from the redelivery events within 10 x delay + 3 polls of the
 * newest sample, the redeliveries that ack_wait expiry explains and that
 * happened while the consumer was acking, and judges whether they recur.
 * Leaves r zeroed (not recurring) when the history is too short. */
void nl_expiry_rounds_collect(const nl_consumer_state *st,
                              const nl_consumer_snap *c,
                              const nl_detect_params *p, nl_expiry_rounds *r) {
  memset(r, 0, sizeof(*r));
  const nl_sample *s0 = nl_state_latest(st);
  nl_past_sample s1;
  int64_t delay = nl_consumer_redelivery_delay_ns(c);
  if (c->ack_policy == NL_ACK_NONE || !nl_state_past(st, 1, &s1) || delay <= 0)
    return;
  /* Expiry rounds recur about once per processing cycle, which can be
   * several times ack_wait: look back 10 x delay for a repeat. */
  int64_t dt = s0->t_ns - s1.t_ns;
  r->window_ns = 10 * delay + 3 * dt;
  int64_t later = 0;
  for (unsigned k = 0;; k++) {
    const nl_redelivery_event *e = nl_state_event(st, k);
    if (e == NULL || s0->t_ns - e->t_ns > r->window_ns)
      break;
    if (e->beyond_expiry || !e->while_acking)
      continue;
    /* The messages the clients held at a gap (a server restart) expire
     * within one delay of it: orphans, not a round of the consumer's own
     * processing. */
    if (st->gap_ns > 0 && e->first_ns <= st->gap_ns + delay + 2 * dt)
      continue;
    if (r->intervals == 0)
      r->newest_ns = e->t_ns;
    else if (later - e->t_ns > r->max_gap_ns)
      r->max_gap_ns = later - e->t_ns;
    later = e->t_ns;
    r->intervals += e->intervals;
    r->redeliveries += e->redeliveries;
    r->deliveries += e->deliveries;
    r->span_ns = r->newest_ns - e->first_ns;
  }
  r->share =
      r->deliveries > 0 ? (double)r->redeliveries / (double)r->deliveries : 0;
  /* Messages orphaned by a crashed worker all expire within one delay of
   * the crash: only redeliveries recurring over a longer span are the
   * consumer's own processing outlasting ack_wait. A finding holds while
   * rounds keep coming at their observed pace. */
  int64_t hold = 4 * delay + dt;
  if (r->max_gap_ns + r->max_gap_ns / 2 > hold)
    hold = r->max_gap_ns + r->max_gap_ns / 2;
  r->recurring = r->intervals >= p->ack_wait_min_intervals &&
                 r->redeliveries >= p->ack_wait_min_redeliveries &&
                 r->span_ns > delay + dt && s0->t_ns - r->newest_ns <= hold;
}

/* True when the recurring expiry redeliveries are the few long tasks of
 * MISSING_PROGRESS rather than the general slowness of
 * ACK_WAIT_VIOLATION. */
bool nl_expiry_rounds_few(const nl_expiry_rounds *r,
                          const nl_detect_params *p) {
  return r->share < p->ack_wait_min_share;
}

/* The ack_wait a duplicate-execution finding recommends: 1.5 x the
 * slowest processing seen, at least 2 x the current ack_wait, and at least
 * what the declared processing time asks for (a task as long as the team
 * says it can be must never be redelivered while it runs). A pin is
 * seen only at polls: the message was already outstanding when the poll
 * saw its floor arrive, and stays outstanding up to one interval after the
 * last poll that saw the floor standing. So the slowest processing is
 * taken as the longest pin plus the latest poll interval (a pin of 9.3 s
 * at 3 s polls stood for a 14 s task, and 1.5 x 9.3 s alone recommended
 * 14 s, which changes nothing). */
double nl_slow_recommend_ack_wait_s(const nl_consumer_state *st,
                                    const nl_consumer_snap *c) {
  double longest = nl_seconds(st->longest_pin_ns);
  nl_past_sample now, before;
  if (longest > 0 && nl_state_past(st, 0, &now) &&
      nl_state_past(st, 1, &before) && now.t_ns > before.t_ns)
    longest += nl_seconds(now.t_ns - before.t_ns);
  double rec = ceil(1.5 * longest);
  double twice = ceil(2.0 * nl_seconds(c->ack_wait_ns));
  double declared = nl_fix_declared_ack_wait_s(c);
  if (twice > rec)
    rec = twice;
  return declared > rec ? declared : rec;
}

/* Adds to f the processing time c declares, when it declares one, and
 * writes into buf what the recommended ack_wait is at least (see
 * recommend_ack_wait_s), for the recommendation. */
void nl_slow_ack_wait_floor(const nl_consumer_snap *c, nl_finding *f, char *buf,
                            size_t len) {
  nl_expectations e;
  nl_expect_read(c, &e);
  if (e.max_processing_ns <= 0) {
    snprintf(buf, len, "at least 2x the current ack_wait");
    return;
  }
  nl_finding_add(f, "declared_max_processing_s",
                 nl_seconds(e.max_processing_ns));
  snprintf(buf, len,
           "at least 2x the current ack_wait and 1.5x the declared "
           "processing time of %.1f s",
           nl_seconds(e.max_processing_ns));
}

/* Adds the ack samples' evidence to f, an active ACK_WAIT_VIOLATION or
 * MISSING_PROGRESS of consumer c, and with a P99 estimate recommends
 * ack_wait 1.5 x P99 when that is more than the polled recommendation,
 * saying in the recommendation how the value was derived. A finding that
 * already carries the samples (a held copy) is left as it is. */
static void add_samples(const nl_consumer_snap *c, const nl_ack_stats *a,
                        nl_finding *f) {
  if (a->samples == 0 || nl_finding_get(f, "ack_samples", -1) >= 0)
    return;
  nl_finding_add(f, "ack_samples", a->samples);
  nl_finding_add(f, "ack_samples_over_wait", a->over_wait);
  nl_finding_add(f, "ack_samples_redelivered", a->redelivered);
  if (a->p99_s <= 0)
    return;
  nl_finding_add(f, "processing_p99_s", a->p99_s);
  double polled = nl_finding_get(f, "recommended_ack_wait_s", 0);
  double rec = ceil(1.5 * a->p99_s);
  char how[NL_TEXT_MAX];
  if (rec > polled) {
    nl_finding_set(f, "recommended_ack_wait_s", rec);
    nl_fix_ack_wait(c, rec, f->fix_command, sizeof(f->fix_command));
    snprintf(how, sizeof(how),
             "ack_wait %.0f s: 1.5x the processing-time P99 (%.1f s) of "
             "the last %u ack samples (sample_freq), of which %u took "
             "longer than ack_wait %.1f s",
             rec, a->p99_s, a->samples, a->over_wait,
             nl_seconds(c->ack_wait_ns));
    if (f->cls == NL_MISSING_PROGRESS)
      snprintf(f->recommendation, sizeof(f->recommendation),
               "send in-progress acks (+WPI, msg.InProgress()) at least "
               "every %.0f s from long tasks; or raise %s",
               nl_seconds(c->ack_wait_ns) / 2, how);
    else
      snprintf(f->recommendation, sizeof(f->recommendation),
               "%s; for push consumers also lower max_ack_pending so "
               "messages do not wait in the client's buffer",
               how);
  } else {
    /* The samples cannot raise the polled value: say why they are lower. */
    snprintf(how, sizeof(how),
             "%s (1.5x the P99 ack_time of the last %u ack samples, %.1f "
             "s, is not more: the server measures ack_time from a "
             "message's expiry or latest delivery, so slow messages look "
             "fast)",
             f->recommendation, a->samples, a->p99_s);
    snprintf(f->recommendation, sizeof(f->recommendation), "%s", how);
  }
}

void nl_slow_add_ack_samples(const nl_consumer_state *st,
                             const nl_consumer_snap *c, nl_finding *f) {
  if (st->advised == NULL || st->advised->n_acks == 0)
    return;
  nl_ack_stats a = nl_advised_ack_stats(st->advised, c->ack_wait_ns);
  add_samples(c, &a, f);
}
