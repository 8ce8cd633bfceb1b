/* nl_gap.h: what SEQUENCE_GAP learns beyond the polled counts of
 * nl_history: which removals were no loss (a message's own TTL, a newer
 * message on its subject, a scheduled message that fired), and the
 * delivered but unacked messages the stream removed, as MSG_TERMINATED
 * advisories claim them (nats-server 2.10.4+ sends the reason) and the
 * polls confirm them.
 *
 * A claim is untrusted (a client's +TERM may carry any reason text): it
 * counts only when the consumer had delivered that sequence and had not
 * acked it at the poll before, the stream's first sequence has passed it
 * at the first poll after the advisory arrived, and a stream limit
 * explains the removal (nl_removal). A per-subject replacement, a TTL, a
 * schedule's purge, or a client +TERM on a work queue leaves it
 * uncounted. Pure logic, no locking (the engine's caller serialises). */
#ifndef NL_GAP_H
#define NL_GAP_H

#include "nl_advisory.h"
#include "nl_history.h"
#include "nl_removal.h"
#include "nl_seqclock.h"

/* Ranges of claimed sequences kept per consumer until a poll checks them
 * (the stream removes contiguous runs at its head, so a few ranges hold a
 * burst of thousands). */
#define NL_GAP_CLAIM_RANGES 8

typedef struct {
  uint64_t first_seq, last_seq;
  int64_t received_ns; /* When the latest of them arrived. */
} nl_gap_claim;

/* Per consumer (st->gap), allocated at its first loss or claim (one
 * allocation, no pointers). */
typedef struct nl_gap_state {
  nl_gap_claim claims[NL_GAP_CLAIM_RANGES];
  unsigned n_claims;
  /* The highest sequence counted as an unacked loss: a claim at or below
   * it is not counted again. */
  uint64_t unacked_through;
  uint64_t unacked_total; /* Unacked messages counted lost. */
  uint64_t unacked_last;  /* ... in the latest interval. */
  /* The highest sequence removed unread for a cause that is no loss: the
   * consumer is not behind a loss up to it. */
  uint64_t excused_through;
  uint64_t excused_total; /* Messages removed unread and not counted. */
  /* A loss on a schedule stream that no cause excused, held for one
   * poll: the poll asks for the stream before its consumers, so a
   * schedule that fires between the two replies shows as a message gone
   * from the consumer's pending with no copy added to the stream yet.
   * The next poll judges the two intervals together. */
  uint64_t held;                  /* Messages held (0: none). */
  uint64_t held_added;            /* What the stream added meanwhile. */
  uint64_t held_first, held_last; /* Their range, when known. */
  /* Of the messages removed unread for a cause that is no loss to a
   * reader of the newest per subject, those a consumer that wants every
   * message (nl_consumer_wants_every) lost in the latest interval: a
   * newer message on the subject or the message's own TTL removed them
   * (MESSAGES_DISCARDED; their total is st->discarded_total). Their range
   * when known (0: not known). */
  uint64_t discarded_last;
  uint64_t discarded_first, discarded_last_seq;
  nl_removal_cause discard_cause;
  /* The cause of the latest loss counted, for the fix (valid when
   * has_cause). */
  nl_removal_cause cause;
  bool has_cause;
} nl_gap_state;

/* Takes a MSG_TERMINATED advisory a of consumer st that claims the stream
 * removed the message (a->removed_from_stream): kept in st->gap
 * (allocated) for the next poll, merged into a range of claims. Returns 1
 * when the polled state contradicts it (sequence 0, or at or below the ack
 * floor of the latest poll: that message was acked, not pending), -1 when
 * memory runs out, else 0. */
int nl_gap_claim_removed(nl_consumer_state *st, const nl_advisory *a);

/* Applies poll c of consumer st (stream s, whose sequence clock is clock
 * or NULL), taken at now_ns, after nl_registry_observe recorded it: a loss
 * the history counted in this interval that the stream removed for a
 * cause that is no loss is taken back out of st's loss counts (on a
 * schedule stream, a loss no cause excuses waits one poll for the copy a
 * fired schedule stores, see nl_gap_state.held); the claims
 * that arrived before now_ns are checked, and those confirmed are added
 * to them. Returns how many claimed sequences the poll contradicts (beyond
 * what the consumer had delivered; the caller counts them against the
 * advisories, nl_advised_rejected). */
unsigned nl_gap_poll(nl_consumer_state *st, const nl_consumer_snap *c,
                     const nl_stream_snap *s, const nl_seqclock *clock,
                     int64_t now_ns);

/* The highest sequence st's consumer cannot be behind a loss at: read
 * (what it read or was never stored for it, nl_state_read_through) or
 * what was removed without loss, whichever is higher. */
uint64_t nl_gap_read_through(const nl_consumer_state *st, uint64_t read);

/* st's gap state, or NULL when nothing was kept for it. */
const nl_gap_state *nl_gap_of(const nl_consumer_state *st);

#endif
