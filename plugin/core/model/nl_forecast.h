/* nl_forecast.h: when the stream's limits will evict messages a consumer
 * has not received yet.
 *
 * A forecast is made only from what the polls prove: the messages the
 * consumer still needs (exposure) against the count or size limit, and the
 * age of its oldest unreceived message (bounded from below by the stream's
 * sequence clock) against max_age, each with a rise sustained long enough
 * to extrapolate (nl_trend). RETENTION_RISK raises on it, and PUSH_UNBOUND
 * and RATE_LIMITED quote it (docs/detectors.md). The engine makes one
 * forecast per consumer and poll; the trends live in st->forecast, kept
 * from when the exposure or the age is no longer far from its limit
 * (NL_FORECAST_FAR) until both are far again; a forecast is made once
 * either matters (NL_FORECAST_MATTERS) and its rise is trusted. Pure data
 * and logic, no locking. */
#ifndef NL_FORECAST_H
#define NL_FORECAST_H

#include "nl_history.h"
#include "nl_seqclock.h"
#include "nl_snapshot.h"
#include "nl_trend.h"

/* Bucket length of the forecast's trends after a restart. */
#define NL_FORECAST_BUCKET_NS 5000000000LL
/* A rise is extrapolated at most this many times its sustained span. */
#define NL_FORECAST_TRUST 4.0
/* ... and only once sustained this long. */
#define NL_FORECAST_MIN_SPAN_S 30.0
/* Exposure (or age) that matters, and that is far from mattering, as
 * shares of the limit. */
#define NL_FORECAST_MATTERS 0.10
#define NL_FORECAST_FAR 0.05

/* What a consumer's forecast keeps between polls (st->forecast). */
typedef struct nl_forecast_watch {
  nl_trend exposure; /* Messages the consumer still needs. */
  nl_trend age;      /* Estimate of its oldest unreceived's age. */
  /* The latest forecast (nl_forecast_latest): seconds, INFINITY for
   * none, and the limit it comes from. */
  double seconds;
  int limit;
} nl_forecast_watch;

/* The stream limit a forecast comes from. */
typedef enum {
  NL_LIMIT_NONE = 0,
  NL_LIMIT_MSGS,  /* max_msgs */
  NL_LIMIT_BYTES, /* max_bytes, at the average message size */
  NL_LIMIT_AGE,   /* max_age */
} nl_limit_kind;

/* Returns the name of the limit ("max_msgs", ...), "" for none. */
const char *nl_limit_name(nl_limit_kind kind);

/* What a forecast found. */
typedef struct {
  double seconds;      /* Until unreceived messages are evicted: 0 when they
                          are being evicted, INFINITY when nothing proves
                          eviction (no sustained rise, or too far out). */
  nl_limit_kind limit; /* The limit that evicts first. */
  double exposure;     /* Stream messages that must stay for the consumer. */
  double growth_per_s; /* Sustained rise per second of the binding measure
                          (messages, or seconds of age per second). */
  double sustained_s;  /* How long that rise has been sustained. */
  double age_s;        /* Estimate of the oldest unreceived message's age
                          (nl_seqclock_age_estimate): what the trend and
                          the forecast follow; < 0 when unknown. */
  double age_min_s;    /* A lower bound on that age (nl_seqclock_age);
                          < 0 when unknown. */
  bool far;            /* Both below NL_FORECAST_FAR (or no limit). */
} nl_forecast;

/* Updates st's forecast trends with consumer c of stream s seen at now_ns
 * (clock: the stream's sequence clock, or NULL without max_age) and
 * returns the forecast. Allocates st->forecast when the exposure or age
 * matters and frees it when both are far. */
nl_forecast nl_forecast_observe(nl_consumer_state *st,
                                const nl_consumer_snap *c,
                                const nl_stream_snap *s,
                                const nl_seqclock *clock, int64_t now_ns);

/* The latest forecast made for st: returns true and sets *seconds to the
 * time until the stream's limits start evicting messages st's consumer has
 * not received (0 once they do) and *limit to the limit, when the polls
 * trust one; false when they do not (no sustained rise, too far out, or
 * far from every limit). */
bool nl_forecast_latest(const nl_consumer_state *st, double *seconds,
                        nl_limit_kind *limit);

/* Seconds until the limits of s (those of the forecast above) start
 * evicting messages the consumer has not received, from fc's exposure and
 * age at the rates given: the exposure growing growth messages a second,
 * the oldest unreceived message ageing age_growth seconds a second. 0 once
 * eviction has begun; INFINITY without a limit that applies, or when
 * nothing rises towards one. Sets *kind to the limit that evicts first
 * (NL_LIMIT_NONE when none applies). A forecast at rates the caller
 * measured, without the sustained rise nl_forecast_observe asks for. */
double nl_forecast_eta(const nl_forecast *fc, const nl_stream_snap *s,
                       double growth, double age_growth, nl_limit_kind *kind);

/* Time left before value reaches limit at the sustained rise of t (0 at
 * the limit), or INFINITY when no rise is sustained for
 * NL_FORECAST_MIN_SPAN_S nor long enough to extrapolate that far
 * (NL_FORECAST_TRUST). Sets *growth and *span from the rise when it
 * returns a finite time. STORAGE_LIMIT_RISK forecasts the account's
 * storage with it. */
double nl_forecast_trusted_eta(const nl_trend *t, double value, double limit,
                               double *growth, double *span);

#endif
