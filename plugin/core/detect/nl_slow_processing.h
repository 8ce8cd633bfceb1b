/* nl_slow_processing.h: what ACK_WAIT_VIOLATION and MISSING_PROGRESS
 * share: the rounds of redeliveries that ack_wait expiry explains, the
 * ack_wait they recommend, and the evidence of ack samples.
 *
 * Both read processing that outlasts the redelivery delay from the same
 * rounds: most deliveries redelivered is ACK_WAIT_VIOLATION, a few long
 * tasks MISSING_PROGRESS (docs/detectors.md). Pure functions. */
#ifndef NL_SLOW_PROCESSING_H
#define NL_SLOW_PROCESSING_H

#include "core/model/nl_history.h"
#include "core/model/nl_snapshot.h"
#include "nl_params.h"

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
} nl_expiry_rounds;

/* Collects, from the redelivery events within 10 x delay + 3 polls of the
 * newest sample, the redeliveries that ack_wait expiry explains and that
 * happened while the consumer was acking, and judges whether they recur.
 * Leaves r zeroed (not recurring) when the history is too short. */
void nl_expiry_rounds_collect(const nl_consumer_state *st,
                              const nl_consumer_snap *c,
                              const nl_detect_params *p, nl_expiry_rounds *r);

/* True when the recurring expiry redeliveries are the few long tasks of
 * MISSING_PROGRESS rather than the general slowness of
 * ACK_WAIT_VIOLATION. */
bool nl_expiry_rounds_few(const nl_expiry_rounds *r, const nl_detect_params *p);

/* The ack_wait a duplicate-execution finding recommends, in seconds (see
 * nl_slow_processing.c). */
double nl_slow_recommend_ack_wait_s(const nl_consumer_state *st,
                                    const nl_consumer_snap *c);

/* Adds to f the processing time c declares, when it declares one, and
 * writes into buf what the recommended ack_wait is at least, for the
 * recommendation. */
void nl_slow_ack_wait_floor(const nl_consumer_snap *c, nl_finding *f, char *buf,
                            size_t len);

/* Adds the ack samples of st (advisories, consumers with sample_freq) to
 * f, a raised ACK_WAIT_VIOLATION or MISSING_PROGRESS of consumer c, and
 * with a P99 estimate recommends ack_wait 1.5 x P99 when that is more than
 * the polled recommendation, saying in the recommendation how the value
 * was derived. A finding that already carries the samples (a held copy) is
 * left as it is; nothing without samples. */
void nl_slow_add_ack_samples(const nl_consumer_state *st,
                             const nl_consumer_snap *c, nl_finding *f);

#endif
