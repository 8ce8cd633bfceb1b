/* nl_detect_retention.h: RETENTION_RISK, the forecast of messages a
 * consumer will lose to the stream's limits.
 *
 * A forecast is made only from what the polls prove: the messages the
 * consumer still needs (exposure) against the count or size limit, and the
 * age of its oldest unreceived message (bounded from below by the stream's
 * sequence clock) against max_age, each with a rise sustained long enough
 * to extrapolate (nl_trend). The raise, hold and clear rule is in
 * docs/detectors.md. Pure functions of their inputs and of the consumer's
 * retention watch (st->retention, allocated while the backlog matters). */
#ifndef NL_DETECT_RETENTION_H
#define NL_DETECT_RETENTION_H

#include "core/model/nl_seqclock.h"
#include "core/model/nl_trend.h"
#include "nl_detect.h"

/* Bucket length of the retention trends after a restart. */
#define NL_RETENTION_BUCKET_NS 5000000000LL
/* A rise is extrapolated at most this many times its sustained span. */
#define NL_RETENTION_TRUST 4.0
/* ... and only once sustained this long. */
#define NL_RETENTION_MIN_SPAN_S 30.0
/* Exposure (or age) that matters, and that is far from mattering, as
 * shares of the limit. */
#define NL_RETENTION_MATTERS 0.10
#define NL_RETENTION_FAR 0.05
/* What a consumer's retention forecast keeps between polls. */
typedef struct nl_retention_watch {
  nl_trend exposure; /* Messages the consumer still needs. */
  nl_trend age;      /* Lower bound on its oldest unreceived's age. */
} nl_retention_watch;

/* The stream limit a RETENTION_RISK forecast comes from. */
typedef enum {
  NL_LIMIT_NONE = 0,
  NL_LIMIT_MSGS,  /* max_msgs */
  NL_LIMIT_BYTES, /* max_bytes, at the average message size */
  NL_LIMIT_AGE,   /* max_age */
} nl_limit_kind;

/* What a RETENTION_RISK forecast found. */
typedef struct {
  double seconds;      /* Until unreceived messages are evicted: 0 when they
                          are being evicted, INFINITY when nothing proves
                          eviction (no sustained rise, or too far out). */
  nl_limit_kind limit; /* The limit that evicts first. */
  double exposure;     /* Stream messages that must stay for the consumer. */
  double growth_per_s; /* Sustained rise per second of the binding measure
                          (messages, or seconds of age per second). */
  double sustained_s;  /* How long that rise has been sustained. */
  double age_s;        /* Lower bound on the oldest unreceived message's
                          age; < 0 when unknown. */
  bool matters;        /* Exposure or age at least NL_RETENTION_MATTERS. */
  bool far;            /* Both below NL_RETENTION_FAR (or no limit). */
} nl_forecast;

/* Updates st's retention watch with consumer c of stream s seen at now_ns
 * (clock: the stream's sequence clock, or NULL without max_age) and
 * returns the forecast. Allocates st->retention when the exposure or age
 * matters and frees it when both are far and no finding is held. */
nl_forecast nl_retention_observe(nl_consumer_state *st,
                                 const nl_consumer_snap *c,
                                 const nl_stream_snap *s,
                                 const nl_seqclock *clock, int64_t now_ns);

/* Seconds until the limits of s (those of the forecast above) start
 * evicting messages the consumer has not received, from fc's exposure and
 * age at the rates given: the exposure growing growth messages a second,
 * the oldest unreceived message ageing age_growth seconds a second. 0 once
 * eviction has begun; INFINITY without a limit that applies, or when
 * nothing rises towards one. Sets *kind to the limit that evicts first
 * (NL_LIMIT_NONE when none applies). A forecast at rates the caller
 * measured, without the sustained rise RETENTION_RISK asks for. */
double nl_retention_eta(const nl_forecast *fc, const nl_stream_snap *s,
                        double growth, double age_growth, nl_limit_kind *kind);

/* RETENTION_RISK from forecast fc: raised when fc is under the horizon,
 * and, once raised, present while under 1.2 x the horizon (the engine's
 * clearing hold keeps it a while longer). Fills f and returns true while
 * present. */
bool nl_retention_detect(nl_consumer_state *st, const nl_consumer_snap *c,
                         const nl_stream_snap *s, const nl_detect_params *p,
                         const nl_forecast *fc, nl_finding *f);

#endif
