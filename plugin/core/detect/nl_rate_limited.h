/* nl_rate_limited.h: RATE_LIMITED, a push consumer held below the rate it
 * must sustain by its own rate_limit_bps.
 *
 * The server sends a rate-limited push consumer's messages at most
 * rate_limit_bps / 8 bytes a second, each counted as its subject, reply
 * subject, headers and payload, after a first burst of one maximum message
 * size. The polls count messages, not bytes: the detector keeps
 * checkpoints of the consumer's counters and its stream's last sequence
 * over a window of at least rate_limited_s seconds and at least
 * NL_RATE_MIN_POLLS polls (whichever is longer), weighs the deliveries of the
 * window, at the bytes each costs the limit (estimated from the stream's
 * average stored message), against the limit, and the messages that arrived for
 * the consumer against those it was sent, over each half of the window. Raise,
 * hold and clear are in docs/detectors.md. Pure functions of their inputs and
 * of the consumer's rate watch (st->rate, allocated while the consumer has a
 * rate limit). */
#ifndef NL_RATE_LIMITED_H
#define NL_RATE_LIMITED_H

#include "core/model/nl_snapshot.h"

/* Checkpoints kept, at least a window / NL_RATE_SPACING apart: they span
 * two windows of seconds, or NL_RATE_POINTS polls when the polls are
 * further apart. */
#define NL_RATE_POINTS 16
#define NL_RATE_SPACING 8
/* A window holds at least this many polls after its first (it is longer
 * than rate_limited_s when the polls are further apart than a sixth of
 * it). */
#define NL_RATE_MIN_POLLS 6
/* At its limit: the bytes sent in the window are at least this share of
 * what the limit lets through (the bytes of a delivery are an estimate). */
#define NL_RATE_AT_LIMIT 0.8
/* Falling behind: the messages that arrived exceed those sent by at least
 * this share of the arrivals. */
#define NL_RATE_BEHIND 0.05

/* One poll of a rate-limited consumer, as a checkpoint. */
typedef struct {
  int64_t t_ns;
  uint64_t consumer_seq; /* delivered.consumer_seq: every delivery. */
  uint64_t stream_seq;   /* delivered.stream_seq. */
  uint64_t last_seq;     /* The stream's last sequence. */
  uint64_t num_pending;
  uint64_t backlog; /* num_pending + num_ack_pending. */
  uint32_t poll;    /* Its place in the run of judged polls (1 first). */
} nl_rate_point;

/* What RATE_LIMITED keeps of a consumer between polls: the current run of
 * polls that can be judged (push, bound, not paused, messages waiting, not
 * at max_ack_pending, the same limit, counters not going back). */
typedef struct nl_rate_watch {
  nl_rate_point pts[NL_RATE_POINTS]; /* Ring, oldest at head. */
  uint8_t n;
  uint8_t head;
  uint64_t limit_bps; /* The limit of the run. */
  nl_rate_point last; /* The latest poll of the run (poll 0: none). */
} nl_rate_watch;

/* Returns the bytes one delivery of consumer c costs its rate limit, as
 * the server counts them (subject, reply subject, headers, payload),
 * estimated from the average message s stores (its bytes per message less
 * the store's own bytes per record) and the length of the reply subject
 * the server builds for c's next delivery. 0 when s stores nothing. */
double nl_rate_bytes_per_delivery(const nl_consumer_snap *c,
                                  const nl_stream_snap *s);

#endif
