/* nl_detect.h: the detectors, as pure functions of a consumer's history.
 *
 * The predicates and the reasoning behind them are in docs/detectors.md. */
#ifndef NL_DETECT_H
#define NL_DETECT_H

#include "core/model/nl_finding.h"
#include "core/model/nl_history.h"
#include "core/model/nl_names.h"
#include "core/model/nl_removal.h"
#include "core/model/nl_snapshot.h"

/* Thresholds, all configurable; nl_detect_params_default() gives the
 * defaults chosen from test evidence. */
typedef struct {
  /* ACK_WAIT_VIOLATION: expiry-driven redeliveries in at least this many
   * polled intervals within the window, adding up to at least this many. */
  unsigned ack_wait_min_intervals;
  unsigned ack_wait_min_redeliveries;
  /* ACK_WAIT_VIOLATION when those redeliveries are at least this share of
   * all deliveries in their intervals (most work outlasts ack_wait);
   * MISSING_PROGRESS below it (a few long tasks). */
  double ack_wait_min_share;
  /* NAK_STORM: redeliveries beyond expiry, at least this many per interval,
   * in this many consecutive intervals with the ack floor standing. */
  unsigned nak_storm_min_redeliveries;
  unsigned nak_storm_intervals;
  /* MISSING_PROGRESS: the ack floor stood for at least this many times the
   * redelivery delay while later messages were acked. */
  double missing_progress_factor;
  /* The classes beyond the five (nl_detect_ext.h). NAK_STORM from NAK
   * advisories: at least nak_adv_min NAKs within nak_adv_window_s, one of
   * them of a message delivered at least nak_adv_min_deliveries times. */
  double nak_adv_window_s;
  unsigned nak_adv_min;
  unsigned nak_adv_min_deliveries;
  /* PUSH_UNBOUND: a push consumer with a backlog and no subscriber for at
   * least this long. */
  double push_unbound_s;
  /* RETENTION_RISK: forecast time to eviction below this. */
  double retention_horizon_s;
  /* RATE_LIMITED: the window over which a rate-limited push consumer must
   * be seen delivering at its limit and falling behind (seconds; at least
   * NL_RATE_MIN_POLLS polls too, nl_detect_rate.h). */
  double rate_limited_s;
  /* Every class: a held finding whose condition is no longer seen clears
   * once it has been missing for at least this long and on at least
   * NL_CLEAR_POLLS polls in a row; at once when the configuration changed
   * (a fix was applied) or the consumer or stream is gone. */
  double clear_hold_s;
  /* The configuration classes (ACK_NONE_CONSUMER, ACK_ALL_PARALLEL,
   * INTEREST_NO_CONSUMERS, STREAM_SINGLE_REPLICA, CONSUMER_UNOBSERVABLE),
   * raised through nl_audit's rules. Off by default: nats-lens-check
   * reports those rules itself; the collectd plugin turns them on. */
  bool config_classes;
} nl_detect_params;

#define NL_CLEAR_POLLS 2

/* NAK_STORM: a consumer whose max_deliver is set and at most this already
 * bounds a NAK loop the way the fix would (each message cycles at most
 * max_deliver times, then is exhausted: MAX_DELIVER_EXHAUSTED's business);
 * an unlimited or larger max_deliver is set to NL_NAK_RECOMMENDED. */
#define NL_NAK_LOOP_BOUND 10
#define NL_NAK_RECOMMENDED 5

/* Returns true when max_deliver bounds a NAK loop (see NL_NAK_LOOP_BOUND). */
static inline bool nl_nak_loop_bounded(int64_t max_deliver) {
  return max_deliver > 0 && max_deliver <= NL_NAK_LOOP_BOUND;
}

void nl_detect_params_default(nl_detect_params *p);

/* Writes into f's fix_command and recommendation the stream-limit change
 * that stops s from evicting messages consumer c has not received: the
 * limit that is at least 90 % used (max_msgs, else max_bytes), else
 * max_age; lost_total messages already lost and c's backlog size the new
 * max_msgs. Without a polled history: nl_detect_removal_fix with the cause
 * nl_removal_cause_of gives without a sequence clock. */
void nl_detect_limit_fix(const nl_consumer_snap *c, const nl_stream_snap *s,
                         uint64_t lost_total, nl_finding *f);

/* The same for a removal whose cause is known: the limit's change for a
 * limit; for any other cause no fix command (no setting would have kept
 * the messages) and a recommendation that names the cause. */
void nl_detect_removal_fix(const nl_consumer_snap *c, const nl_stream_snap *s,
                           nl_removal_cause cause, uint64_t lost_total,
                           nl_finding *f);

/* Runs every detector on consumer c (of stream s) whose history st already
 * holds the current sample. For each class sets active[cls] and, when
 * active, fills out[cls] (class, severity, evidence, description, fix
 * command and recommendation). out[cls] is left unspecified for inactive
 * classes. */
void nl_detect_consumer(const nl_consumer_state *st, const nl_consumer_snap *c,
                        const nl_stream_snap *s, const nl_detect_params *p,
                        bool active[NL_CLASS_COUNT],
                        nl_finding out[NL_CLASS_COUNT]);

/* Writes into buf (len bytes) the fix of a NAK loop on consumer/stream:
 * `nats consumer edit` with max_deliver set. */
void nl_detect_nak_fix(const char *stream, const char *consumer,
                       double max_deliver, char *buf, size_t len);

/* The first redelivery delay consumer c's declared processing time
 * (nats_lens.max_processing, nl_expect.h) asks for: 1.5 x it, in whole
 * seconds rounded up; 0 when it declares none (or one that cannot be
 * read). */
double nl_detect_declared_ack_wait_s(const nl_consumer_snap *c);

/* Writes into buf the command that makes consumer c's first redelivery
 * come after ack_wait_s seconds (names shell-quoted): --wait, or for a
 * consumer with a backoff (whose first step the server uses as ack_wait) a
 * linear backoff of as many steps starting there. */
void nl_detect_ack_wait_fix(const nl_consumer_snap *c, double ack_wait_s,
                            char *buf, size_t len);

#endif
