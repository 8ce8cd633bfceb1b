/* nl_detect_ext.h: the classes beyond the five, and advisory evidence.
 *
 * MAX_DELIVER_EXHAUSTED, PUSH_UNBOUND and RETENTION_RISK from a consumer's
 * history and its advisories; NAK_STORM from NAK advisories (next to the
 * polled NAK_STORM of nl_detect.c); the configuration classes
 * (ACK_NONE_CONSUMER, ACK_ALL_PARALLEL, and per stream
 * INTEREST_NO_CONSUMERS, STREAM_SINGLE_REPLICA, CONSUMER_UNOBSERVABLE)
 * through the rules of nl_audit.c. Predicates and reasoning are in
 * docs/detectors.md. Pure functions of their inputs; no locking (the
 * engine's caller serialises). */
#ifndef NL_DETECT_EXT_H
#define NL_DETECT_EXT_H

#include "core/model/nl_advisory.h"
#include "core/model/nl_gap.h"
#include "core/model/nl_seqclock.h"
#include "nl_audit.h"
#include "nl_detect.h"
#include "nl_detect_expiry.h"
#include "nl_detect_rate.h"
#include "nl_detect_rejected.h"
#include "nl_detect_retention.h"

#define NL_EXT_NAKS 32     /* Newest NAK advisories kept per consumer. */
#define NL_EXT_EXHAUSTED 8 /* Newest exhausted sequences kept. */
#define NL_EXT_ACKS 64     /* Newest ack samples kept. */
#define NL_EXT_ACKS_MIN 3  /* Ack samples needed for a P99 estimate. */
#define NL_EXT_CLAIMS 16   /* MAX_DELIVERIES claims waiting for a poll. */

typedef struct {
  int64_t t_ns; /* When it was received. */
  uint64_t stream_seq;
  uint64_t deliveries;
} nl_ext_nak;

/* One ack sample ($JS.EVENT.METRIC.CONSUMER.ACK, consumers with
 * sample_freq): the server's time from the latest delivery of the message
 * to the ack, and the delivery count of the delivery that was acked. */
typedef struct {
  int64_t ack_time_ns;
  uint64_t deliveries;
} nl_ext_ack;

/* Per consumer, allocated with the consumer's state when needed (one
 * allocation, no pointers). */
typedef struct nl_ext_state {
  /* From advisories. */
  nl_ext_nak naks[NL_EXT_NAKS]; /* Ring, index n_naks % NL_EXT_NAKS. */
  uint64_t n_naks;
  uint64_t exhausted_seqs[NL_EXT_EXHAUSTED]; /* Ring. */
  uint64_t n_exhausted;
  int64_t exhausted_last_ns;
  uint64_t n_terminated;
  nl_ext_ack acks[NL_EXT_ACKS]; /* Ring of ack samples. */
  uint64_t n_acks;
  uint64_t n_quorum_lost;
  uint64_t n_leader_elected;
  /* MAX_DELIVERIES claims the polls could not confirm yet (a message
   * delivered and exhausted since the latest poll): the next poll keeps
   * those it makes possible and drops the rest (nl_ext_confirm). */
  uint64_t claimed_seqs[NL_EXT_CLAIMS];
  unsigned n_claimed;
  uint64_t claims_rejected; /* Advisories the polled state contradicted. */
  /* SEQUENCE_GAP's removals without loss and the MSG_TERMINATED claims of
   * unacked messages the stream removed (nl_gap.h). */
  nl_gap_state gap;
  /* From the latest poll. */
  int64_t max_deliver;
  int64_t ack_wait_ns;
  bool dead_letter;         /* Dead-letter handling in sight. */
  int64_t unbound_since_ns; /* PUSH_UNBOUND: first poll unbound. */
  /* The unreadable declaration last told (nl_ext_bad_declaration): a hash
   * of its key and value, 0 when none. */
  uint64_t bad_declaration;
} nl_ext_state;

/* Records advisory a of the consumer st (allocating st->ext). Returns 0, 1
 * when the polled state contradicts it (not recorded), or -1 when memory
 * runs out. An advisory is a claim anyone allowed to
 * publish in the account can make: a MAX_DELIVERIES advisory counts only
 * when the consumer as last polled makes it possible (max_deliver set, at
 * least as many deliveries claimed as max_deliver, a sequence stored for
 * the consumer then), and one for a later sequence waits for the next poll,
 * which keeps it only if the consumer has delivered it (nl_ext_confirm).
 * A MSG_TERMINATED that says the stream removed the message is a claim
 * the next poll checks (nl_gap_claim_removed). */
int nl_ext_record(nl_consumer_state *st, const nl_advisory *a);

/* Confirms or drops the waiting MAX_DELIVERIES claims of st against poll
 * c of it. Returns how many it dropped. */
unsigned nl_ext_confirm(nl_consumer_state *st, const nl_consumer_snap *c);

/* What the ack samples held say, against ack_wait. */
typedef struct {
  unsigned samples;     /* Held, at most NL_EXT_ACKS (the newest). */
  unsigned over_wait;   /* With ack_time > ack_wait. */
  unsigned redelivered; /* With deliveries > 1. */
  double p99_s;         /* The P99 of ack_time (nearest rank); 0 when fewer
                           than NL_EXT_ACKS_MIN samples are held. */
} nl_ack_stats;

/* Summarises the ack samples of x (may be NULL) against ack_wait_ns. */
nl_ack_stats nl_ext_ack_stats(const nl_ext_state *x, int64_t ack_wait_ns);

/* Sets active/out from the audit findings in r, mapped to plugin classes,
 * with the audit's severity (the same as the class's, so that the plugin
 * and nats-lens-check never disagree). ACK_ALL_PARALLEL starts only with
 * parallel workers seen (parallel_seen) and holds while the rule matches
 * at all. ACK_WAIT_BELOW_PROCESSING (a declared processing time not
 * shorter than the redelivery delay) raises ACK_WAIT_VIOLATION, with the
 * evidence from_declaration, unless the polls' expiry rounds already
 * raise it; MISSING_PROGRESS is then not raised. */
void nl_ext_take_audit(const nl_audit_result *r,
                       nl_finding *const held[NL_CLASS_COUNT],
                       bool active[NL_CLASS_COUNT],
                       nl_finding out[NL_CLASS_COUNT]);

/* What one poll gives the consumer detectors besides the consumer. */
typedef struct {
  const nl_snapshot_set *set;
  size_t consumer_index;    /* Of the consumer in set. */
  const nl_seqclock *clock; /* The stream's sequence clock, or NULL. */
  nl_audit_result *scratch; /* Reused between calls; freed by the caller. */
  const nl_audit_params *audit;
} nl_ext_poll;

/* Runs the consumer classes beyond the five on consumer c (index
 * ctx->consumer_index of ctx->set) whose history st holds the current
 * sample and whose five classes are already in active/out: sets
 * active/out for MAX_DELIVER_EXHAUSTED, ACK_NONE_CONSUMER,
 * ACK_ALL_PARALLEL, PUSH_UNBOUND, RETENTION_RISK and RATE_LIMITED; when the NAK
 * advisories prove a storm, sets NAK_STORM from them and clears
 * MISSING_PROGRESS and ACK_WAIT_VIOLATION (the redeliveries were NAKs);
 * then a declared processing time raises ACK_WAIT_VIOLATION
 * (nl_ext_take_audit) whatever the NAKs were; an active ACK_WAIT_VIOLATION or
 * MISSING_PROGRESS gets the ack samples' evidence and, with enough samples, a
 * recommended ack_wait of at least 1.5 x their P99. Stream-level classes are
 * set inactive. Updates st->ext. */
void nl_ext_detect_consumer(nl_consumer_state *st, const nl_consumer_snap *c,
                            const nl_stream_snap *s, const nl_detect_params *p,
                            const nl_ext_poll *ctx, int64_t now_ns,
                            bool active[NL_CLASS_COUNT],
                            nl_finding out[NL_CLASS_COUNT]);

/* The consumer configuration classes alone (ACK_NONE_CONSUMER,
 * ACK_ALL_PARALLEL, and ACK_WAIT_VIOLATION from a declared processing
 * time, through nl_audit's rules; see nl_ext_take_audit) of consumer
 * ctx->consumer_index of ctx->set, whose state st holds the active
 * findings: sets active/out for the first two, and raises (never clears)
 * ACK_WAIT_VIOLATION; nothing when p->config_classes is off. ctx->scratch
 * must be set. */
void nl_ext_detect_config(const nl_consumer_state *st, const nl_ext_poll *ctx,
                          const nl_detect_params *p,
                          bool active[NL_CLASS_COUNT],
                          nl_finding out[NL_CLASS_COUNT]);

/* Whether consumer ctx->consumer_index of ctx->set declares something
 * (nats_lens.* metadata) that cannot be read and that was not told yet for
 * st: then fills f with the audit's INVALID_EXPECTATION finding (what
 * cannot be read, why, and the command that writes a readable value) and
 * remembers it in st->ext, so that it is told once, and again only when
 * the consumer declares another unreadable value or has declared none in
 * between. Such a declaration counts as not made. Nothing when
 * p->config_classes is off. ctx->scratch must be set. */
bool nl_ext_bad_declaration(nl_consumer_state *st, const nl_ext_poll *ctx,
                            const nl_detect_params *p, nl_finding *f);

/* The classes that advisories prove between polls (MAX_DELIVER_EXHAUSTED
 * and NAK_STORM) for st at now_ns: sets active/out for those two only. */
void nl_ext_detect_advisory(const nl_consumer_state *st,
                            const nl_detect_params *p, int64_t now_ns,
                            bool active[NL_CLASS_COUNT],
                            nl_finding out[NL_CLASS_COUNT]);

/* What the engine keeps per stream between polls for the stream classes. */
typedef struct {
  bool have_prev;
  uint64_t last_seq;
  uint64_t msgs;
  uint64_t consumer_count;
  int64_t t_ns;
  /* Poll time since which the stream has had no consumer, 0 while it has
   * one. */
  int64_t empty_since_ns;
  /* PUBLISH_REJECTED: the run of polls at a limit. */
  nl_full_prev full;
} nl_ext_stream_prev;

/* A stream's delivered_delta when one of its consumers has no poll before
 * the latest: what its consumers received is not known. */
#define NL_DELIVERED_UNKNOWN UINT64_MAX

/* INTEREST_NO_CONSUMERS for an interest stream without any consumer and
 * without a publish seen dropped: only once it has been so for this long.
 * A stream is often created a moment before its consumers. */
#define NL_INTEREST_EMPTY_S 60.0

/* Runs the stream classes on stream index of set, polled at now_ns:
 * INTEREST_NO_CONSUMERS (no consumers for NL_INTEREST_EMPTY_S, or
 * publishes dropped over the interval since prev while the stream's
 * consumers received delivered_delta messages),
 * STREAM_SINGLE_REPLICA and CONSUMER_UNOBSERVABLE. held tells which are
 * active now (for hysteresis). Sets active/out for those three only;
 * nothing when p->config_classes is off. */
void nl_ext_detect_stream(const nl_snapshot_set *set, size_t index,
                          const nl_ext_stream_prev *prev,
                          uint64_t delivered_delta, int64_t now_ns,
                          nl_finding *const held[NL_CLASS_COUNT],
                          const nl_detect_params *p, nl_audit_result *scratch,
                          const nl_audit_params *audit,
                          bool active[NL_CLASS_COUNT],
                          nl_finding out[NL_CLASS_COUNT]);

/* CONSUMER_UNOBSERVABLE for the stream set->missing_streams[index]
 * (reported missing by STREAM.LIST). Sets active/out for that class only;
 * nothing when p->config_classes is off. */
void nl_ext_detect_missing_stream(const nl_snapshot_set *set, size_t index,
                                  const nl_detect_params *p,
                                  nl_audit_result *scratch,
                                  const nl_audit_params *audit,
                                  bool active[NL_CLASS_COUNT],
                                  nl_finding out[NL_CLASS_COUNT]);

#endif
