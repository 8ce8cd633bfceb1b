/* nl_advised.h: what advisories told about a consumer, kept as claims the
 * polls check.
 *
 * The server's advisories (nl_advisory.h) arrive between polls. What they
 * say of a consumer is kept here: the NAKs (MSG_NAKED), the messages that
 * reached max_deliver (MAX_DELIVERIES), the ack-time samples, and counts
 * of the others. An advisory is a claim anyone allowed to publish in the
 * account can make, so each is checked against the consumer as polled: a
 * MAX_DELIVERIES advisory counts only when the latest poll makes it
 * possible, one for a later sequence waits for the next poll
 * (nl_advised_confirm), and a MSG_TERMINATED that says the stream removed
 * the message is a claim the next poll checks (nl_gap_claim_removed). The
 * classes that read this evidence are in detect/. Pure data and logic, no
 * locking (the engine's caller serialises). */
#ifndef NL_ADVISED_H
#define NL_ADVISED_H

#include "nl_advisory.h"
#include "nl_history.h"

#define NL_ADVISED_NAKS 32     /* Newest NAK advisories kept per consumer. */
#define NL_ADVISED_EXHAUSTED 8 /* Newest exhausted sequences kept. */
#define NL_ADVISED_ACKS 64     /* Newest ack samples kept. */
#define NL_ADVISED_ACKS_MIN 3  /* Ack samples needed for a P99 estimate. */
#define NL_ADVISED_CLAIMS 16   /* MAX_DELIVERIES claims waiting for a poll. */

/* One MSG_NAKED advisory. */
typedef struct {
  int64_t t_ns; /* When it was received. */
  uint64_t stream_seq;
  uint64_t deliveries;
} nl_advised_nak;

/* One ack sample ($JS.EVENT.METRIC.CONSUMER.ACK, consumers with
 * sample_freq): the server's time from the latest delivery of the message
 * to the ack, and the delivery count of the delivery that was acked. */
typedef struct {
  int64_t ack_time_ns;
  uint64_t deliveries;
} nl_advised_ack;

/* Per consumer (st->advised), allocated at its first advisory or at a poll
 * of a consumer with max_deliver set (one allocation, no pointers). */
typedef struct nl_advised {
  nl_advised_nak naks[NL_ADVISED_NAKS]; /* Ring, index n_naks % size. */
  uint64_t n_naks;
  uint64_t exhausted_seqs[NL_ADVISED_EXHAUSTED]; /* Ring. */
  uint64_t n_exhausted;
  int64_t exhausted_last_ns;
  uint64_t n_terminated;
  nl_advised_ack acks[NL_ADVISED_ACKS]; /* Ring of ack samples. */
  uint64_t n_acks;
  uint64_t n_quorum_lost;
  uint64_t n_leader_elected;
  /* MAX_DELIVERIES claims the polls could not confirm yet (a message
   * delivered and exhausted since the latest poll): the next poll keeps
   * those it makes possible and drops the rest (nl_advised_confirm). */
  uint64_t claimed_seqs[NL_ADVISED_CLAIMS];
  unsigned n_claimed;
  uint64_t claims_rejected; /* Advisories the polled state contradicted. */
  /* max_deliver at the latest poll (advisories are judged by it). */
  int64_t max_deliver;
  /* The unreadable declaration last told (detect/nl_configured.h): a hash
   * of its key and value, 0 when none. */
  uint64_t bad_declaration;
} nl_advised;

/* Whether an advisory of kind brings evidence that can raise a class
 * between polls (a NAK, or a message that reached max_deliver). */
static inline bool nl_advisory_is_evidence(nl_adv_kind kind) {
  return kind == NL_ADV_NAK || kind == NL_ADV_MAX_DELIVER;
}

/* Returns st->advised, allocating it zeroed; NULL when memory runs out. */
nl_advised *nl_advised_of(nl_consumer_state *st);

/* Takes what poll c of st tells the evidence (its max_deliver), allocating
 * st->advised for a consumer with max_deliver set: a MAX_DELIVERIES
 * advisory is judged by it before the next poll. */
void nl_advised_poll(nl_consumer_state *st, const nl_consumer_snap *c);

/* Records advisory a of the consumer st (allocating st->advised). Returns
 * 0, 1 when the polled state contradicts it (not recorded), or -1 when
 * memory runs out. A MAX_DELIVERIES advisory counts only when the consumer
 * as last polled makes it possible (max_deliver set, at least as many
 * deliveries claimed as max_deliver, a sequence stored for the consumer
 * then), and one for a later sequence waits for the next poll, which keeps
 * it only if the consumer has delivered it (nl_advised_confirm). A
 * MSG_TERMINATED that says the stream removed the message is a claim the
 * next poll checks (nl_gap_claim_removed). A NAK also explains the next
 * redelivery the polls count (nl_state_add_nak). */
int nl_advised_record(nl_consumer_state *st, const nl_advisory *a);

/* Confirms or drops the waiting MAX_DELIVERIES claims of st against poll
 * c of it. Returns how many it dropped. */
unsigned nl_advised_confirm(nl_consumer_state *st, const nl_consumer_snap *c);

/* Counts n claims of st that a poll contradicted (nl_gap_poll's). */
void nl_advised_rejected(nl_consumer_state *st, unsigned n);

/* Writes the newest k (at most 3) exhausted sequences of x, newest first,
 * into seqs; returns k. */
unsigned nl_advised_newest_exhausted(const nl_advised *x, uint64_t seqs[3]);

/* What the ack samples held say, against ack_wait. */
typedef struct {
  unsigned samples;     /* Held, at most NL_ADVISED_ACKS (the newest). */
  unsigned over_wait;   /* With ack_time > ack_wait. */
  unsigned redelivered; /* With deliveries > 1. */
  double p99_s;         /* The P99 of ack_time (nearest rank); 0 when fewer
                           than NL_ADVISED_ACKS_MIN samples are held. */
} nl_ack_stats;

/* Summarises the ack samples of x (may be NULL) against ack_wait_ns. */
nl_ack_stats nl_advised_ack_stats(const nl_advised *x, int64_t ack_wait_ns);

#endif
