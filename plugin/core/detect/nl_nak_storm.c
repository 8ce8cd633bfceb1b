/* nl_nak_storm.c: NAK_STORM, messages NAKed and redelivered in a loop
 * without progress: from the polls (redeliveries beyond what ack_wait
 * expiry explains, with the ack floor standing) and from the NAK
 * advisories (a message delivered again and again). The predicates are in
 * docs/detectors.md. */
#include "nl_classes.h"
#include "nl_fix.h"

#include "core/model/nl_advised.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdio.h>

/* A consumer whose max_deliver is set and at most this already bounds a
 * NAK loop the way the fix would (each message cycles at most max_deliver
 * times, then is exhausted: MAX_DELIVER_EXHAUSTED's business); an
 * unlimited or larger max_deliver is set to NL_NAK_RECOMMENDED. */
#define NL_NAK_LOOP_BOUND 10
#define NL_NAK_RECOMMENDED 5

/* Returns true when max_deliver bounds a NAK loop (see NL_NAK_LOOP_BOUND). */
static bool nl_nak_loop_bounded(int64_t max_deliver) {
  return max_deliver > 0 && max_deliver <= NL_NAK_LOOP_BOUND;
}

/* NAK_STORM: in each of the last n intervals, more redeliveries than
 * ack_wait expiry can explain, at least the minimum, more than the
 * messages outstanding (so some message came back more than once: a loop,
 * not each message retried once after a NAK with a delay), and the floor
 * standing. */
static bool polled_storm(const nl_consumer_state *st, const nl_consumer_snap *c,
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
  nl_fix_nak(c->stream, c->name, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "bound the loop with max_deliver %.0f (%s) and NAK with a delay "
           "(or terminate poison messages) so one bad message cannot cycle",
           rec,
           c->max_deliver > 0 ? "lowered from the current setting"
                              : "max_deliver is unlimited now");
  return true;
}

/* One stream sequence seen in the NAK window and how often. */
typedef struct {
  uint64_t seq;
  unsigned naks;
} seq_count;

/* The redeliveries the polls counted in the intervals that ended at or
 * after since_ns (each a lower bound: delivered.consumer_seq minus
 * delivered.stream_seq moved). */
static uint64_t polled_redeliveries_since(const nl_consumer_state *st,
                                          int64_t since_ns) {
  uint64_t sum = 0;
  nl_past_sample ps;
  for (unsigned k = 0; nl_state_past(st, k, &ps) && ps.t_ns >= since_ns; k++)
    sum += ps.redeliveries;
  return sum;
}

/* NAK_STORM from NAK advisories: at least nak_adv_min NAKs within the
 * window, one of them of a message delivered nak_adv_min_deliveries
 * times or more (a loop, not a one-off retry). The advisories are claims
 * (anyone allowed to publish in the account can send them): the polls
 * must also have counted at least half of nak_adv_min redeliveries since
 * the first of those NAKs, as the NAKed messages come back; forged NAKs on
 * a consumer that redelivers nothing raise nothing. */
static bool advised_storm(const nl_consumer_state *st,
                          const nl_detect_params *p, int64_t now_ns,
                          nl_finding *f) {
  const nl_advised *x = st->advised;
  if (x == NULL || x->n_naks == 0 || nl_nak_loop_bounded(x->max_deliver))
    return false;
  int64_t window = (int64_t)(p->nak_adv_window_s * 1e9);
  uint64_t held = x->n_naks < NL_ADVISED_NAKS ? x->n_naks : NL_ADVISED_NAKS;
  unsigned k = 0, n_seqs = 0;
  uint64_t max_del = 0;
  int64_t oldest = INT64_MAX;
  seq_count seqs[NL_ADVISED_NAKS];
  for (uint64_t i = 0; i < held; i++) {
    const nl_advised_nak *n = &x->naks[i];
    if (now_ns - n->t_ns > window)
      continue;
    k++;
    if (n->deliveries > max_del)
      max_del = n->deliveries;
    if (n->t_ns < oldest)
      oldest = n->t_ns;
    unsigned j = 0;
    while (j < n_seqs && seqs[j].seq != n->stream_seq)
      j++;
    if (j == n_seqs)
      seqs[n_seqs++] = (seq_count){n->stream_seq, 0};
    seqs[j].naks++;
  }
  if (k < p->nak_adv_min || max_del < p->nak_adv_min_deliveries ||
      polled_redeliveries_since(st, oldest) < (p->nak_adv_min + 1) / 2)
    return false;
  /* The rate over the window, as the description and the other evidence
   * count it (a burst rate read beside "5 in 5 s" reads as a
   * contradiction). */
  double rate = (double)k / p->nak_adv_window_s;
  /* The most NAKed sequences first. */
  for (unsigned i = 0; i < n_seqs; i++)
    for (unsigned j = i + 1; j < n_seqs; j++)
      if (seqs[j].naks > seqs[i].naks ||
          (seqs[j].naks == seqs[i].naks && seqs[j].seq < seqs[i].seq)) {
        seq_count t = seqs[i];
        seqs[i] = seqs[j];
        seqs[j] = t;
      }
  nl_finding_start(f, NL_NAK_STORM);
  nl_finding_add(f, "naks_per_s_in_window", rate);
  nl_finding_add(f, "naks_in_window", k);
  nl_finding_add(f, "window_s", p->nak_adv_window_s);
  nl_finding_add(f, "max_deliveries", (double)max_del);
  nl_finding_add(f, "cycling_sequences", n_seqs);
  static const char *const seq_names[3] = {"cycling_seq_1", "cycling_seq_2",
                                           "cycling_seq_3"};
  char list[128] = "";
  size_t used = 0;
  for (unsigned i = 0; i < n_seqs && i < 3; i++) {
    nl_finding_add(f, seq_names[i], (double)seqs[i].seq);
    if (used < sizeof(list))
      used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%" PRIu64,
                               i ? ", " : "", seqs[i].seq);
  }
  nl_finding_add(f, "max_deliver", (double)x->max_deliver);
  double rec = NL_NAK_RECOMMENDED;
  nl_finding_add(f, "recommended_max_deliver", rec);
  nl_finding_add(f, "from_advisories", 1);
  snprintf(f->description, sizeof(f->description),
           "%.1f NAKs/s (%u NAK advisories in %.0f s): stream sequence(s) "
           "%s%s are NAKed and redelivered in a loop, up to %" PRIu64
           " deliveries each",
           rate, k, p->nak_adv_window_s, list, n_seqs > 3 ? " ..." : "",
           max_del);
  nl_shell_names q;
  nl_shell_names_of(st->stream, st->name, &q);
  nl_fix_nak(st->stream, st->name, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "bound the loop with max_deliver %.0f and NAK with a delay (or "
           "terminate poison messages) so one bad message cannot cycle; "
           "look at stream sequence %s first (nats stream get %s %" PRIu64 ")",
           rec, list, q.stream, seqs[0].seq);
  return true;
}

/* The advisories' evidence where they prove a storm (a loop seen message
 * by message), else the polls'. */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  if (advised_storm(x->st, x->p, x->now_ns, f))
    return true;
  return polled_storm(x->st, x->c, x->p, f);
}

/* Between polls, the NAKs may complete the proof. */
static bool advised(const nl_consumer_ctx *x, void **state,
                    const nl_advisory *a, nl_finding *f) {
  return nl_advisory_is_evidence(a->kind) &&
         advised_storm(x->st, x->p, x->now_ns, f);
}

static const nl_option options[] = {
    {"NakStormMinRedeliveries", NL_OPTION_WHOLE, 2147483647, NULL, 3,
     offsetof(nl_detect_params, nak_storm_min_redeliveries)},
    {"NakStormIntervals", NL_OPTION_WHOLE, NL_HISTORY_LEN - 1,
     "the history holds " NL_HISTORY_LEN_TEXT " polls", 2,
     offsetof(nl_detect_params, nak_storm_intervals)},
    NL_OPTION_END,
};

const nl_class_def nl_class_nak_storm = {
    .cls = NL_NAK_STORM,
    .detect = detect,
    .advised = advised,
    /* A NAK loop's redeliveries are what the expiry rounds of
     * ACK_WAIT_VIOLATION and MISSING_PROGRESS would otherwise count. */
    .suppresses =
        NL_CLASS_BIT(NL_ACK_WAIT_VIOLATION) | NL_CLASS_BIT(NL_MISSING_PROGRESS),
    .options = options,
};
