/* nl_detect.c: the five delivery-violation detectors (see
 * docs/detectors.md for each predicate and why it holds). */
#include "nl_detect.h"

#include "core/model/nl_expect.h"
#include "core/model/nl_gap.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void nl_detect_params_default(nl_detect_params *p) {
  p->ack_wait_min_intervals = 2;
  p->ack_wait_min_redeliveries = 2;
  p->ack_wait_min_share = 0.25;
  p->nak_storm_min_redeliveries = 3;
  p->nak_storm_intervals = 2;
  p->missing_progress_factor = 2.0;
  p->nak_adv_window_s = 5.0;
  p->nak_adv_min = 5;
  p->nak_adv_min_deliveries = 3;
  p->push_unbound_s = 60.0;
  p->rate_limited_s = 180.0;
  p->retention_horizon_s = 3600.0;
  p->clear_hold_s = 30.0;
  p->config_classes = false;
}

void nl_detect_nak_fix(const char *stream, const char *consumer,
                       double max_deliver, char *buf, size_t len) {
  nl_shell_names q;
  nl_shell_names_of(stream, consumer, &q);
  snprintf(buf, len, "nats consumer edit %s %s --max-deliver %.0f", q.stream,
           q.consumer, max_deliver);
}

void nl_detect_ack_wait_fix(const nl_consumer_snap *c, double ack_wait_s,
                            char *buf, size_t len) {
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  /* With a backoff the server replaces ack_wait by the first step, so
   * --wait alone would change nothing: the same number of steps (max_deliver
   * stays valid), starting at the recommended delay. */
  if (c->backoff_steps > 0)
    snprintf(buf, len,
             "nats consumer edit %s %s --backoff linear --backoff-steps %zu "
             "--backoff-min %.0fs --backoff-max %.0fs",
             q.stream, q.consumer, c->backoff_steps, ack_wait_s,
             ack_wait_s * (double)c->backoff_steps);
  else
    snprintf(buf, len, "nats consumer edit %s %s --wait %.0fs", q.stream,
             q.consumer, ack_wait_s);
}

double nl_detect_declared_ack_wait_s(const nl_consumer_snap *c) {
  nl_expectations e;
  nl_expect_read(c, &e);
  return ceil(1.5 * nl_seconds(e.max_processing_ns));
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
static double recommend_ack_wait_s(const nl_consumer_state *st,
                                   const nl_consumer_snap *c) {
  double longest = nl_seconds(st->longest_pin_ns);
  nl_past_sample now, before;
  if (longest > 0 && nl_state_past(st, 0, &now) &&
      nl_state_past(st, 1, &before) && now.t_ns > before.t_ns)
    longest += nl_seconds(now.t_ns - before.t_ns);
  double rec = ceil(1.5 * longest);
  double twice = ceil(2.0 * nl_seconds(c->ack_wait_ns));
  double declared = nl_detect_declared_ack_wait_s(c);
  if (twice > rec)
    rec = twice;
  return declared > rec ? declared : rec;
}

/* Adds to f the processing time c declares, when it declares one, and
 * writes into buf what the recommended ack_wait is at least (see
 * recommend_ack_wait_s), for the recommendation. */
static void ack_wait_floor(const nl_consumer_snap *c, nl_finding *f, char *buf,
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

/* NAK_STORM: in each of the last n intervals, more redeliveries than
 * ack_wait expiry can explain, at least the minimum, more than the
 * messages outstanding (so some message came back more than once: a loop,
 * not each message retried once after a NAK with a delay), and the floor
 * standing. */
static bool detect_nak_storm(const nl_consumer_state *st,
                             const nl_consumer_snap *c,
                             const nl_detect_params *p, nl_finding *f) {
  unsigned n = p->nak_storm_intervals ? p->nak_storm_intervals : 1;
  if (n > NL_HISTORY_LEN - 1)
    n = NL_HISTORY_LEN - 1;
  if (c->ack_policy == NL_ACK_NONE || st->count < n + 1 ||
      nl_nak_loop_bounded(c->max_deliver))
    return false;
  /* A floor perhaps restored by a restarted server (nats-server 2.9.10
   * keeps one at 0 while anything is pending) proves no lack of progress:
   * NAK-with-delay retries would look like a loop. A real loop still shows
   * by its NAK advisories (a message delivered again and again). */
  if (st->floor_unproven)
    return false;
  uint64_t sum = 0;
  nl_past_sample s, before;
  for (unsigned k = 0; k < n; k++) {
    nl_state_past(st, k, &s);
    nl_state_past(st, k + 1, &before);
    uint32_t outstanding = s.num_ack_pending > before.num_ack_pending
                               ? s.num_ack_pending
                               : before.num_ack_pending;
    if (!s.beyond_expiry || s.floor_moved ||
        s.redeliveries < p->nak_storm_min_redeliveries ||
        s.redeliveries <= outstanding)
      return false;
    sum += s.redeliveries;
  }
  nl_past_sample sn;
  nl_state_past(st, n, &sn);
  double dt = nl_seconds(nl_state_latest(st)->t_ns - sn.t_ns);
  double delay = nl_seconds(nl_consumer_redelivery_delay_ns(c));
  nl_finding_start(f, NL_NAK_STORM);
  nl_finding_add(f, "redeliveries", (double)sum);
  nl_finding_add(f, "redeliveries_per_s", dt > 0 ? (double)sum / dt : 0);
  nl_finding_add(f, "window_s", dt);
  nl_finding_add(f, "expiry_bound_per_s",
                 delay > 0 ? (double)c->num_ack_pending / delay : 0);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "ack_floor_stream_seq", (double)c->ack_floor_stream_seq);
  nl_finding_add(f, "redelivery_delay_s", delay);
  nl_finding_add(f, "max_deliver", (double)c->max_deliver);
  double rec = NL_NAK_RECOMMENDED;
  nl_finding_add(f, "recommended_max_deliver", rec);
  snprintf(
      f->description, sizeof(f->description),
      "%.1f redeliveries/s over %.0f s while the ack floor stays at %" PRIu64
      "; ack_wait expiry of %" PRIu64
      " outstanding messages explains at most %.2f/s, so messages are "
      "NAKed and redelivered in a loop without progress",
      dt > 0 ? (double)sum / dt : 0, dt, c->ack_floor_stream_seq,
      c->num_ack_pending, delay > 0 ? (double)c->num_ack_pending / delay : 0);
  nl_detect_nak_fix(c->stream, c->name, rec, f->fix_command,
                    sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "bound the loop with max_deliver %.0f (%s) and NAK with a delay "
           "(or terminate poison messages) so one bad message cannot cycle",
           rec,
           c->max_deliver > 0 ? "lowered from the current setting"
                              : "max_deliver is unlimited now");
  return true;
}

/* What the recent expiry-driven redeliveries show. */
typedef struct {
  unsigned intervals;    /* Polled intervals that saw them. */
  uint64_t redeliveries; /* Their sum. */
  uint64_t deliveries;   /* All deliveries in the same intervals. */
  int64_t newest_ns;     /* Poll time of the newest, 0 when none. */
  int64_t span_ns;       /* Newest minus oldest. */
  int64_t max_gap_ns;    /* Longest time between two of them. */
  int64_t window_ns;     /* How far back they were collected. */
  /* They recur (in several intervals, spread over more than one delay)
   * and the newest is recent: the consumer's processing keeps outlasting
   * the redelivery delay. */
  bool recurring;
  /* Redeliveries among the deliveries of those intervals: the share of
   * work that outlasts the delay (0 when there were none). */
  double share;
} expiry_rounds;

/* Collects, from the redelivery events within 10 x delay + 3 polls of the
 * newest sample, the redeliveries that ack_wait expiry explains and that
 * happened while the consumer was acking, and judges whether they recur.
 * Leaves r zeroed (not recurring) when the history is too short. */
static void collect_expiry_rounds(const nl_consumer_state *st,
                                  const nl_consumer_snap *c,
                                  const nl_detect_params *p, expiry_rounds *r) {
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
static bool few_redelivered(const expiry_rounds *r, const nl_detect_params *p) {
  return r->share < p->ack_wait_min_share;
}

/* MISSING_PROGRESS: a few long tasks run past the redelivery delay without
 * in-progress acks while most messages are acked in time. Either the floor
 * has stood at least factor x delay with redeliveries while later messages
 * were acked, or expiry redeliveries recur and are a small share of the
 * deliveries (long tasks overlapping, so the floor moves from one to the
 * next). */
static bool detect_missing_progress(const nl_consumer_state *st,
                                    const nl_consumer_snap *c,
                                    const nl_detect_params *p,
                                    const expiry_rounds *r, nl_finding *f) {
  const nl_sample *s0 = nl_state_latest(st);
  int64_t delay = nl_consumer_redelivery_delay_ns(c);
  if (c->ack_policy == NL_ACK_NONE || s0 == NULL || delay <= 0)
    return false;
  double limit = p->missing_progress_factor * (double)delay;
  int64_t stuck = s0->t_ns - st->stuck_since_ns;
  int64_t pinned = s0->t_ns - st->floor_since_ns;
  bool few = few_redelivered(r, p);
  bool now_stuck = st->acked_since_floor && st->redelivered_since_floor > 0 &&
                   (double)stuck >= limit && few;
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
    return true;
  }
  double rec = recommend_ack_wait_s(st, c);
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
  ack_wait_floor(c, f, floor_text, sizeof(floor_text));
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
  nl_detect_ack_wait_fix(c, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "send in-progress acks (+WPI, msg.InProgress()) at least every "
           "%.0f s from long tasks; or raise ack_wait to %.0f s (1.5x the "
           "longest time a message was seen outstanding and one poll "
           "interval, %s)",
           nl_seconds(c->ack_wait_ns) / 2, rec, floor_text);
  return true;
}

/* ACK_WAIT_VIOLATION: expiry-driven redeliveries recur while acks keep
 * arriving (the consumer is alive), and they are a large share of the
 * deliveries (most messages outlast the redelivery delay). */
static bool detect_ack_wait(const nl_consumer_state *st,
                            const nl_consumer_snap *c,
                            const nl_detect_params *p, const expiry_rounds *r,
                            nl_finding *f) {
  if (!r->recurring || few_redelivered(r, p))
    return false;
  double rec = recommend_ack_wait_s(st, c);
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
  ack_wait_floor(c, f, floor_text, sizeof(floor_text));
  snprintf(f->description, sizeof(f->description),
           "%" PRIu64 " redeliveries by ack_wait expiry in %u polls within "
           "%.0f s (%.0f%% of the deliveries) while the consumer keeps "
           "acking: processing takes longer than ack_wait %.1f s, so "
           "messages still being worked on are delivered again (duplicate "
           "execution)",
           r->redeliveries, r->intervals, nl_seconds(r->window_ns),
           100 * r->share, nl_seconds(c->ack_wait_ns));
  nl_detect_ack_wait_fix(c, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "ack_wait %.0f s: 1.5x the longest time a message was seen "
           "outstanding (%.1f s) and one poll interval, %s; for push "
           "consumers also lower max_ack_pending so messages do not wait in "
           "the client's buffer",
           rec, nl_seconds(st->longest_pin_ns), floor_text);
  return true;
}

void nl_detect_removal_fix(const nl_consumer_snap *c, const nl_stream_snap *s,
                           nl_removal_cause cause, uint64_t lost_total,
                           nl_finding *f) {
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  if (cause == NL_REMOVED_BY_MAX_MSGS) {
    uint64_t rec = (uint64_t)s->max_msgs + lost_total + c->num_pending;
    if (rec < 2 * (uint64_t)s->max_msgs)
      rec = 2 * (uint64_t)s->max_msgs;
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-msgs %" PRIu64, q.stream, rec);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_msgs %" PRIu64 ": the current limit %" PRId64
             " plus the consumer's backlog and the messages lost, at least "
             "double; or scale the consumer so it keeps up",
             rec, s->max_msgs);
  } else if (cause == NL_REMOVED_BY_MAX_BYTES) {
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-bytes %" PRId64, q.stream,
             2 * s->max_bytes);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_bytes %" PRId64 " (double the limit that evicted unread "
             "messages); or scale the consumer so it keeps up",
             2 * s->max_bytes);
  } else if (cause == NL_REMOVED_BY_MAX_AGE) {
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-age %.0fs", q.stream,
             2 * nl_seconds(s->max_age_ns));
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_age %.0f s (double the age limit that evicted unread "
             "messages); or scale the consumer so it keeps up",
             2 * nl_seconds(s->max_age_ns));
  } else if (cause != NL_REMOVED_OTHERWISE) {
    /* A TTL or a newer message on the subject: the publisher's design. */
    f->fix_command[0] = '\0';
    snprintf(f->recommendation, sizeof(f->recommendation),
             "no fix command: %s removed the messages, as the publisher "
             "designed; no stream limit was reached",
             nl_removal_cause_name(cause));
  } else {
    /* No limit removed them: raising one would change nothing. */
    f->fix_command[0] = '\0';
    snprintf(f->recommendation, sizeof(f->recommendation),
             "no fix command: no stream limit was reached, so %s removed "
             "the messages, which no setting prevents; find who purges or "
             "deletes messages of stream %s (nats stream info %s), or let "
             "the consumer keep up",
             nl_removal_cause_name(cause), q.stream, q.stream);
  }
}

void nl_detect_limit_fix(const nl_consumer_snap *c, const nl_stream_snap *s,
                         uint64_t lost_total, nl_finding *f) {
  uint64_t newest = s->first_seq > 0 ? s->first_seq - 1 : 0;
  nl_detect_removal_fix(c, s, nl_removal_cause_of(s, NULL, newest, 0),
                        lost_total, f);
}

/* SEQUENCE_GAP: messages removed from the stream before this consumer
 * received them (counted by nl_history), or delivered and not yet acked
 * (nl_gap: MSG_TERMINATED advisories the polls confirm), by a limit, a
 * purge or a delete; a message's own TTL and a newer message on its
 * subject are no loss (nl_gap_poll takes them out). */
static bool detect_sequence_gap(const nl_consumer_state *st,
                                const nl_consumer_snap *c,
                                const nl_stream_snap *s, nl_finding *f) {
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
  nl_detect_removal_fix(c, s, cause, st->lost_total, f);
  return true;
}

/* MAX_PENDING_THROTTLE: ack-pending at the cap with messages waiting. A
 * paused consumer (nats-server 2.11+) delivers nothing by choice: not a
 * throttle while the pause lasts. */
static bool detect_max_pending(const nl_consumer_snap *c, nl_finding *f) {
  if (c->paused || c->ack_policy == NL_ACK_NONE || c->max_ack_pending <= 0 ||
      c->num_ack_pending < (uint64_t)c->max_ack_pending || c->num_pending == 0)
    return false;
  uint64_t rec = 2 * (uint64_t)c->max_ack_pending;
  nl_finding_start(f, NL_MAX_PENDING_THROTTLE);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "max_ack_pending", (double)c->max_ack_pending);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "num_waiting", (double)c->num_waiting);
  nl_finding_add(f, "recommended_max_ack_pending", (double)rec);
  /* At the cap with messages waiting, the server delivers nothing new: the
   * consumer has been held there at least since its last delivery. */
  f->condition_since_ns = c->delivered_last_ns;
  snprintf(f->description, sizeof(f->description),
           "%" PRIu64 " messages await ack, the max_ack_pending limit of "
           "%" PRId64 ", while %" PRIu64 " more are waiting: the server has "
           "stopped delivering to this consumer",
           c->num_ack_pending, c->max_ack_pending, c->num_pending);
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer edit %s %s --max-pending %" PRIu64, q.stream,
           q.consumer, rec);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "max_ack_pending %" PRIu64 " (double the limit reached); if the "
           "workers hold messages without acking, fix the acks first: a "
           "higher limit only delays the stall",
           rec);
  return true;
}

void nl_detect_consumer(const nl_consumer_state *st, const nl_consumer_snap *c,
                        const nl_stream_snap *s, const nl_detect_params *p,
                        bool active[NL_CLASS_COUNT],
                        nl_finding out[NL_CLASS_COUNT]) {
  active[NL_NAK_STORM] = detect_nak_storm(st, c, p, &out[NL_NAK_STORM]);
  expiry_rounds rounds;
  collect_expiry_rounds(st, c, p, &rounds);
  active[NL_MISSING_PROGRESS] =
      !active[NL_NAK_STORM] &&
      detect_missing_progress(st, c, p, &rounds, &out[NL_MISSING_PROGRESS]);
  active[NL_ACK_WAIT_VIOLATION] =
      !active[NL_NAK_STORM] && !active[NL_MISSING_PROGRESS] &&
      detect_ack_wait(st, c, p, &rounds, &out[NL_ACK_WAIT_VIOLATION]);
  active[NL_SEQUENCE_GAP] =
      detect_sequence_gap(st, c, s, &out[NL_SEQUENCE_GAP]);
  active[NL_MAX_PENDING_THROTTLE] =
      detect_max_pending(c, &out[NL_MAX_PENDING_THROTTLE]);
}
