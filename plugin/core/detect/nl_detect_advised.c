/* nl_detect_advised.c: what advisories tell about a consumer, as claims
 * the polls check: MAX_DELIVERIES (MAX_DELIVER_EXHAUSTED), MSG_NAKED
 * (NAK_STORM between polls, and the NAK credit that explains
 * redeliveries) and the ack-time samples (see nl_detect_advised.h). */
#include "nl_detect_advised.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

nl_ext_state *nl_ext_of(nl_consumer_state *st) {
  if (st->ext == NULL)
    st->ext = calloc(1, sizeof(*st->ext));
  return st->ext;
}

/* Keeps exhausted sequence seq. */
static void add_exhausted(nl_ext_state *x, uint64_t seq, int64_t at_ns) {
  x->exhausted_seqs[x->n_exhausted % NL_EXT_EXHAUSTED] = seq;
  x->n_exhausted++;
  x->exhausted_last_ns = at_ns;
}

/* Whether a MAX_DELIVERIES advisory for seq with deliveries is possible
 * for a consumer with max_deliver that has delivered up to delivered. */
static bool exhaustion_possible(int64_t max_deliver, uint64_t seq,
                                uint64_t deliveries, uint64_t delivered) {
  return max_deliver > 0 && seq > 0 && seq <= delivered &&
         (deliveries == 0 || deliveries >= (uint64_t)max_deliver);
}

/* Takes a MAX_DELIVERIES claim: kept when the latest poll makes it
 * possible (the sequence was stored for the consumer then: delivered or
 * pending), left for the next poll when only the sequence is beyond what
 * that poll saw, else rejected. Returns 1 when rejected. */
static int claim_exhausted(nl_ext_state *x, const nl_consumer_state *st,
                           const nl_advisory *a) {
  const nl_sample *s0 = nl_state_latest(st);
  uint64_t delivered =
      s0 != NULL ? s0->delivered_stream_seq + s0->num_pending : 0;
  if (exhaustion_possible(x->max_deliver, a->stream_seq, a->deliveries,
                          delivered)) {
    add_exhausted(x, a->stream_seq, a->received_ns);
  } else if (exhaustion_possible(x->max_deliver, a->stream_seq, a->deliveries,
                                 UINT64_MAX) &&
             x->n_claimed < NL_EXT_CLAIMS) {
    x->claimed_seqs[x->n_claimed++] = a->stream_seq;
    x->exhausted_last_ns = a->received_ns;
  } else {
    x->claims_rejected++;
    return 1;
  }
  return 0;
}

unsigned nl_ext_confirm(nl_consumer_state *st, const nl_consumer_snap *c) {
  nl_ext_state *x = st->ext;
  if (x == NULL || x->n_claimed == 0)
    return 0;
  unsigned dropped = 0;
  for (unsigned i = 0; i < x->n_claimed; i++) {
    if (exhaustion_possible(c->max_deliver, x->claimed_seqs[i], 0,
                            c->delivered_stream_seq)) {
      add_exhausted(x, x->claimed_seqs[i], x->exhausted_last_ns);
    } else {
      x->claims_rejected++;
      dropped++;
    }
  }
  x->n_claimed = 0;
  return dropped;
}

int nl_ext_record(nl_consumer_state *st, const nl_advisory *a) {
  nl_ext_state *x = nl_ext_of(st);
  if (x == NULL)
    return -1;
  switch (a->kind) {
  case NL_ADV_NAK:
    nl_state_add_nak(st);
    x->naks[x->n_naks % NL_EXT_NAKS] =
        (nl_ext_nak){a->received_ns, a->stream_seq, a->deliveries};
    x->n_naks++;
    break;
  case NL_ADV_MAX_DELIVER:
    return claim_exhausted(x, st, a);
  case NL_ADV_TERMINATED:
    x->n_terminated++;
    if (a->removed_from_stream && nl_gap_claim_removed(&x->gap, st, a) != 0) {
      x->claims_rejected++;
      return 1;
    }
    break;
  case NL_ADV_ACK_SAMPLE:
    x->acks[x->n_acks % NL_EXT_ACKS] =
        (nl_ext_ack){a->ack_time_ns > 0 ? a->ack_time_ns : 0, a->deliveries};
    x->n_acks++;
    break;
  case NL_ADV_QUORUM_LOST:
    x->n_quorum_lost++;
    break;
  case NL_ADV_LEADER_ELECTED:
    x->n_leader_elected++;
    break;
  default:
    break;
  }
  return 0;
}

/* Writes the newest k (at most 3) exhausted sequences, newest first, into
 * seqs; returns k. */
static unsigned newest_exhausted(const nl_ext_state *x, uint64_t seqs[3]) {
  unsigned k = 0;
  uint64_t held =
      x->n_exhausted < NL_EXT_EXHAUSTED ? x->n_exhausted : NL_EXT_EXHAUSTED;
  for (; k < 3 && k < held; k++)
    seqs[k] = x->exhausted_seqs[(x->n_exhausted - 1 - k) % NL_EXT_EXHAUSTED];
  return k;
}

/* MAX_DELIVER_EXHAUSTED: messages reached max_deliver (MAX_DELIVERIES
 * advisories, or at least num_redelivered - num_ack_pending by polling)
 * with no dead-letter handling in sight. c is NULL between polls. */
bool nl_advised_exhausted(const nl_consumer_state *st,
                          const nl_consumer_snap *c, nl_finding *f) {
  const nl_ext_state *x = st->ext;
  /* With dead-letter handling in sight, or max_deliver unlimited now (the
   * two fixes it recommends), nothing more is exhausted unseen. */
  if (x == NULL || x->dead_letter || x->max_deliver <= 0)
    return false;
  uint64_t lower = 0;
  if (c != NULL && c->max_deliver > 0 && c->ack_policy != NL_ACK_NONE &&
      c->num_redelivered > c->num_ack_pending)
    lower = c->num_redelivered - c->num_ack_pending;
  if (x->n_exhausted == 0 && lower == 0)
    return false;
  uint64_t seqs[3];
  unsigned k = newest_exhausted(x, seqs);
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
  nl_audit_dead_letter_command(&stub, f->fix_command, sizeof(f->fix_command));
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
bool nl_advised_nak_storm(const nl_consumer_state *st,
                          const nl_detect_params *p, int64_t now_ns,
                          nl_finding *f) {
  const nl_ext_state *x = st->ext;
  if (x == NULL || x->n_naks == 0 || nl_nak_loop_bounded(x->max_deliver))
    return false;
  int64_t window = (int64_t)(p->nak_adv_window_s * 1e9);
  uint64_t held = x->n_naks < NL_EXT_NAKS ? x->n_naks : NL_EXT_NAKS;
  unsigned k = 0, n_seqs = 0;
  uint64_t max_del = 0;
  int64_t oldest = INT64_MAX;
  seq_count seqs[NL_EXT_NAKS];
  for (uint64_t i = 0; i < held; i++) {
    const nl_ext_nak *n = &x->naks[i];
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
  nl_detect_nak_fix(st->stream, st->name, rec, f->fix_command,
                    sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "bound the loop with max_deliver %.0f and NAK with a delay (or "
           "terminate poison messages) so one bad message cannot cycle; "
           "look at stream sequence %s first (nats stream get %s %" PRIu64 ")",
           rec, list, q.stream, seqs[0].seq);
  return true;
}

void nl_ext_detect_advisory(const nl_consumer_state *st,
                            const nl_detect_params *p, int64_t now_ns,
                            bool active[NL_CLASS_COUNT],
                            nl_finding out[NL_CLASS_COUNT]) {
  active[NL_MAX_DELIVER_EXHAUSTED] =
      nl_advised_exhausted(st, NULL, &out[NL_MAX_DELIVER_EXHAUSTED]);
  active[NL_NAK_STORM] =
      nl_advised_nak_storm(st, p, now_ns, &out[NL_NAK_STORM]);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

nl_ack_stats nl_ext_ack_stats(const nl_ext_state *x, int64_t ack_wait_ns) {
  nl_ack_stats r = {0, 0, 0, 0};
  if (x == NULL)
    return r;
  uint64_t held = x->n_acks < NL_EXT_ACKS ? x->n_acks : NL_EXT_ACKS;
  int64_t t[NL_EXT_ACKS];
  for (uint64_t i = 0; i < held; i++) {
    t[i] = x->acks[i].ack_time_ns;
    if (ack_wait_ns > 0 && t[i] > ack_wait_ns)
      r.over_wait++;
    if (x->acks[i].deliveries > 1)
      r.redelivered++;
  }
  r.samples = (unsigned)held;
  if (held >= NL_EXT_ACKS_MIN) {
    qsort(t, held, sizeof(t[0]), cmp_i64);
    size_t rank = (size_t)ceil(0.99 * (double)held); /* Nearest rank. */
    r.p99_s = nl_seconds(t[rank - 1]);
  }
  return r;
}

/* Adds the ack samples' evidence to f, an active ACK_WAIT_VIOLATION or
 * MISSING_PROGRESS of consumer c, and with a P99 estimate recommends
 * ack_wait 1.5 x P99 when that is more than the polled recommendation,
 * saying in the recommendation how the value was derived. A finding that
 * already carries the samples (a held copy) is left as it is. */
void nl_advised_ack_samples(const nl_consumer_snap *c, const nl_ack_stats *a,
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
    nl_detect_ack_wait_fix(c, rec, f->fix_command, sizeof(f->fix_command));
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
