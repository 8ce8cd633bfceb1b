/* nl_params.h: the detectors' thresholds, and the type of the
 * configuration options that set them.
 *
 * One struct holds every threshold (the engine keeps a copy). Each option
 * a user can set is a row (nl_option) of the class it tunes, in that
 * class's definition (nl_class.h), or of the engine's own rows
 * (nl_options.c); the collectd glue reads any option it finds in those
 * rows (nl_options.h), so a class that adds an option adds a field below
 * and a row in its own file. */
#ifndef NL_PARAMS_H
#define NL_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

/* Thresholds; nl_detect_params_default() gives the defaults chosen from
 * test evidence. */
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
  /* NAK_STORM from NAK advisories: at least nak_adv_min NAKs within
   * nak_adv_window_s, one of them of a message delivered at least
   * nak_adv_min_deliveries times. */
  double nak_adv_window_s;
  unsigned nak_adv_min;
  unsigned nak_adv_min_deliveries;
  /* PUSH_UNBOUND: a push consumer with a backlog and no subscriber for at
   * least this long. */
  double push_unbound_s;
  /* RETENTION_RISK: forecast time to eviction below this. */
  double retention_horizon_s;
  /* STORAGE_LIMIT_RISK: forecast time until the account's storage is
   * full below this (seconds); STORAGE_LIMIT_REACHED judges streams that
   * stored a message within it. */
  double storage_horizon_s;
  /* RATE_LIMITED: the window over which a rate-limited push consumer must
   * be seen delivering at its limit and falling behind (seconds; at least
   * NL_RATE_MIN_POLLS polls too, nl_rate_limited.h). */
  double rate_limited_s;
  /* MESSAGES_STRANDED: messages a work queue or interest stream holds
   * that no consumer takes, seen for at least this long (seconds). */
  double stranded_s;
  /* DELIVERY_STALLED: a consumer with work waiting and nothing delivered
   * is reported after four times the longest interval between its
   * deliveries seen while work waited, but never before stall_min_s nor
   * later than stall_max_s (seconds). */
  double stall_min_s;
  double stall_max_s;
  /* STREAM_REPLICAS_AT_RISK, CONSUMER_REPLICAS_AT_RISK: a replica not
   * current, or a stream without a leader, for at least this long
   * (seconds). */
  double replica_grace_s;
  /* Every class: a held finding whose condition is no longer seen clears
   * once it has been missing for at least this long and on at least
   * NL_CLEAR_POLLS polls in a row; at once when the configuration changed
   * (a fix was applied) or the consumer or stream is gone. */
  double clear_hold_s;
  /* The configuration classes (ACK_NONE_CONSUMER, ACK_ALL_PARALLEL,
   * CONSUMER_SINGLE_REPLICA, INTEREST_NO_CONSUMERS, STREAM_SINGLE_REPLICA,
   * CONSUMER_UNOBSERVABLE, and ACK_WAIT_VIOLATION from a declared
   * processing time), raised through nl_audit's rules. Off by default:
   * nats-lens-check reports those rules itself; the collectd plugin turns
   * them on. */
  bool config_classes;
} nl_detect_params;

#define NL_CLEAR_POLLS 2

/* How an option's value is read. */
typedef enum {
  NL_OPTION_WHOLE,   /* A whole number of at least 1 (an unsigned field). */
  NL_OPTION_NUMBER,  /* A number greater than 0 (a double field). */
  NL_OPTION_OR_ZERO, /* A number of at least 0 (a double field). */
} nl_option_kind;

/* One configuration option: its key in an <Instance> block, how it is
 * read, its largest value (and, when it has a reason beyond good sense,
 * that reason), its default, and the field of nl_detect_params it sets. */
typedef struct {
  const char *key;
  nl_option_kind kind;
  double max;
  const char *max_why; /* NULL, or why max is the largest value. */
  double def;
  size_t offset;
} nl_option;

/* The end of a table of options. */
#define NL_OPTION_END                                                          \
  { NULL, NL_OPTION_WHOLE, 0, NULL, 0, 0 }

#endif
