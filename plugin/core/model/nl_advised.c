/* nl_advised.c: what advisories told about a consumer (see nl_advised.h). */
#include "nl_advised.h"

#include "nl_gap.h"

#include <math.h>
#include <stdlib.h>

nl_advised *nl_advised_of(nl_consumer_state *st) {
  if (st->advised == NULL)
    st->advised = calloc(1, sizeof(*st->advised));
  return st->advised;
}

void nl_advised_poll(nl_consumer_state *st, const nl_consumer_snap *c) {
  nl_advised *x = c->max_deliver > 0 ? nl_advised_of(st) : st->advised;
  if (x != NULL)
    x->max_deliver = c->max_deliver;
}

/* Keeps exhausted sequence seq. */
static void add_exhausted(nl_advised *x, uint64_t seq, int64_t at_ns) {
  x->exhausted_seqs[x->n_exhausted % NL_ADVISED_EXHAUSTED] = seq;
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
static int claim_exhausted(nl_advised *x, const nl_consumer_state *st,
                           const nl_advisory *a) {
  const nl_sample *s0 = nl_state_latest(st);
  uint64_t delivered =
      s0 != NULL ? s0->delivered_stream_seq + s0->num_pending : 0;
  if (exhaustion_possible(x->max_deliver, a->stream_seq, a->deliveries,
                          delivered)) {
    add_exhausted(x, a->stream_seq, a->received_ns);
  } else if (exhaustion_possible(x->max_deliver, a->stream_seq, a->deliveries,
                                 UINT64_MAX) &&
             x->n_claimed < NL_ADVISED_CLAIMS) {
    x->claimed_seqs[x->n_claimed++] = a->stream_seq;
    x->exhausted_last_ns = a->received_ns;
  } else {
    x->claims_rejected++;
    return 1;
  }
  return 0;
}

unsigned nl_advised_confirm(nl_consumer_state *st, const nl_consumer_snap *c) {
  nl_advised *x = st->advised;
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

void nl_advised_rejected(nl_consumer_state *st, unsigned n) {
  if (n > 0 && st->advised != NULL)
    st->advised->claims_rejected += n;
}

/* Whether the evidence keeps advisories of kind. */
static bool kept(nl_adv_kind kind) {
  return kind == NL_ADV_NAK || kind == NL_ADV_MAX_DELIVER ||
         kind == NL_ADV_TERMINATED || kind == NL_ADV_ACK_SAMPLE ||
         kind == NL_ADV_QUORUM_LOST || kind == NL_ADV_LEADER_ELECTED;
}

int nl_advised_record(nl_consumer_state *st, const nl_advisory *a) {
  if (!kept(a->kind))
    return 0;
  nl_advised *x = nl_advised_of(st);
  if (x == NULL)
    return -1;
  switch (a->kind) {
  case NL_ADV_NAK:
    nl_state_add_nak(st);
    x->naks[x->n_naks % NL_ADVISED_NAKS] =
        (nl_advised_nak){a->received_ns, a->stream_seq, a->deliveries};
    x->n_naks++;
    break;
  case NL_ADV_MAX_DELIVER:
    return claim_exhausted(x, st, a);
  case NL_ADV_TERMINATED:
    x->n_terminated++;
    if (a->removed_from_stream) {
      int claimed = nl_gap_claim_removed(st, a);
      if (claimed == 1)
        x->claims_rejected++;
      if (claimed != 0)
        return claimed;
    }
    break;
  case NL_ADV_ACK_SAMPLE:
    x->acks[x->n_acks % NL_ADVISED_ACKS] = (nl_advised_ack){
        a->ack_time_ns > 0 ? a->ack_time_ns : 0, a->deliveries};
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

unsigned nl_advised_newest_exhausted(const nl_advised *x, uint64_t seqs[3]) {
  unsigned k = 0;
  uint64_t held = x->n_exhausted < NL_ADVISED_EXHAUSTED ? x->n_exhausted
                                                        : NL_ADVISED_EXHAUSTED;
  for (; k < 3 && k < held; k++)
    seqs[k] =
        x->exhausted_seqs[(x->n_exhausted - 1 - k) % NL_ADVISED_EXHAUSTED];
  return k;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

nl_ack_stats nl_advised_ack_stats(const nl_advised *x, int64_t ack_wait_ns) {
  nl_ack_stats r = {0, 0, 0, 0};
  if (x == NULL)
    return r;
  uint64_t held = x->n_acks < NL_ADVISED_ACKS ? x->n_acks : NL_ADVISED_ACKS;
  int64_t t[NL_ADVISED_ACKS];
  for (uint64_t i = 0; i < held; i++) {
    t[i] = x->acks[i].ack_time_ns;
    if (ack_wait_ns > 0 && t[i] > ack_wait_ns)
      r.over_wait++;
    if (x->acks[i].deliveries > 1)
      r.redelivered++;
  }
  r.samples = (unsigned)held;
  if (held >= NL_ADVISED_ACKS_MIN) {
    qsort(t, held, sizeof(t[0]), cmp_i64);
    size_t rank = (size_t)ceil(0.99 * (double)held); /* Nearest rank. */
    r.p99_s = nl_seconds(t[rank - 1]);
  }
  return r;
}
