/* nl_forecast.c: when the stream's limits will evict messages a consumer
 * has not received yet (see nl_forecast.h). */
#include "nl_forecast.h"

#include <math.h>
#include <stdlib.h>

const char *nl_limit_name(nl_limit_kind kind) {
  static const char *const names[] = {"", "max_msgs", "max_bytes", "max_age"};
  return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "";
}

/* The limits that evict from s messages a consumer has not received: the
 * count or size limit in messages (*limit) and max_age in seconds
 * (*max_age); 0 for none, and none at all under discard new. Returns the
 * kind of the count or size limit. */
static nl_limit_kind limits_of(const nl_stream_snap *s, double *limit,
                               double *max_age) {
  *limit = s->discard_new ? 0 : nl_stream_limit_messages(s);
  *max_age = s->discard_new ? 0 : nl_seconds(s->max_age_ns);
  return s->max_msgs > 0 && *limit >= (double)s->max_msgs ? NL_LIMIT_MSGS
                                                          : NL_LIMIT_BYTES;
}

/* Time until value reaches limit, rising growth a second: 0 at the limit,
 * INFINITY when it does not rise. */
static double eta_at(double value, double limit, double growth) {
  if (value >= limit)
    return 0;
  return growth > 0 ? (limit - value) / growth : INFINITY;
}

double nl_forecast_trusted_eta(const nl_trend *t, double value, double limit,
                               double *growth, double *span) {
  nl_rise r;
  if (!nl_trend_rise(t, &r))
    return INFINITY;
  double eta = eta_at(value, limit, r.growth_per_s);
  if (r.span_s < NL_FORECAST_MIN_SPAN_S || r.span_s * NL_FORECAST_TRUST < eta)
    return INFINITY;
  *growth = r.growth_per_s;
  *span = r.span_s;
  return eta;
}

/* Makes the time until value (with trend t, or NULL) reaches limit fc's
 * forecast, from limit kind kind, when it is sooner than fc's: 0 at the
 * limit, else the trusted extrapolation of a sustained rise of a value
 * that matters. */
static void take_eta(nl_forecast *fc, const nl_trend *t, double value,
                     double limit, nl_limit_kind kind) {
  double eta = INFINITY, g = 0, span = 0;
  if (value >= limit)
    eta = 0;
  else if (t != NULL && value >= NL_FORECAST_MATTERS * limit)
    eta = nl_forecast_trusted_eta(t, value, limit, &g, &span);
  if (eta < fc->seconds) {
    fc->seconds = eta;
    fc->limit = kind;
    fc->growth_per_s = g;
    fc->sustained_s = span;
  }
}

/* Returns st's watch, allocating it; NULL when memory runs out. */
static nl_forecast_watch *watch_of(nl_consumer_state *st) {
  if (st->forecast == NULL) {
    nl_forecast_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
      return NULL;
    nl_trend_init(&w->exposure, NL_FORECAST_BUCKET_NS);
    nl_trend_init(&w->age, NL_FORECAST_BUCKET_NS);
    w->seconds = INFINITY;
    st->forecast = w;
  }
  return st->forecast;
}

nl_forecast nl_forecast_observe(nl_consumer_state *st,
                                const nl_consumer_snap *c,
                                const nl_stream_snap *s,
                                const nl_seqclock *clock, int64_t now_ns) {
  nl_forecast fc = {INFINITY, NL_LIMIT_NONE, 0, 0, 0, -1, -1, true};
  double backlog = (double)c->num_pending + (double)c->num_ack_pending;
  double limit, max_age;
  nl_limit_kind count_kind = limits_of(s, &limit, &max_age);
  /* Stream messages from the oldest one not yet acked to the head, as far
   * as the stream still stores them (acked messages of a work queue are
   * gone); a filtered consumer needs at least its backlog, and so does a
   * consumer whose floor may be one a restarted server restored. */
  fc.exposure = backlog;
  if (!c->filtered && !st->floor_unproven &&
      s->last_seq > c->ack_floor_stream_seq) {
    double x = (double)(s->last_seq - c->ack_floor_stream_seq);
    fc.exposure = x < (double)s->msgs ? x : (double)s->msgs;
    if (fc.exposure < backlog)
      fc.exposure = backlog;
  }
  /* The oldest unreceived message of an unfiltered consumer follows the
   * last one delivered; for a filtered one it is unknown. */
  if (max_age > 0 && clock != NULL && !c->filtered && c->num_pending > 0) {
    uint64_t next = c->delivered_stream_seq + 1;
    if (next < s->first_seq)
      next = s->first_seq;
    /* Messages removed after it (their own TTL, a newer message on the
     * subject, a delete) leave the oldest stored one no older than the
     * num_pending-th from the head: the age stays a lower bound. */
    if (s->last_seq >= c->num_pending &&
        s->last_seq + 1 - c->num_pending > next)
      next = s->last_seq + 1 - c->num_pending;
    if (!nl_seqclock_age(clock, next, now_ns, &fc.age_min_s) ||
        !nl_seqclock_age_estimate(clock, next, now_ns, &fc.age_s))
      fc.age_s = fc.age_min_s = -1;
  }
  double exp_share = limit > 0 ? fc.exposure / limit : 0;
  double age_share = max_age > 0 && fc.age_s > 0 ? fc.age_s / max_age : 0;
  fc.far = exp_share < NL_FORECAST_FAR && age_share < NL_FORECAST_FAR;
  /* The trends start before the share matters, so that a rise is seen
   * from its beginning rather than from when it first matters. */
  nl_forecast_watch *w = !fc.far ? watch_of(st) : st->forecast;
  if (w != NULL) {
    nl_trend_add(&w->exposure, now_ns, fc.exposure);
    nl_trend_add(&w->age, now_ns, fc.age_s > 0 ? fc.age_s : 0);
  }
  if (limit > 0)
    take_eta(&fc, w ? &w->exposure : NULL, fc.exposure, limit, count_kind);
  if (max_age > 0 && fc.age_s >= 0)
    take_eta(&fc, w ? &w->age : NULL, fc.age_s, max_age, NL_LIMIT_AGE);
  /* Far from every limit, nothing can be forecast (a rise is extrapolated
   * only from a share that matters): the trends start again once it is
   * no longer far. */
  if (fc.far && st->forecast != NULL) {
    free(st->forecast);
    st->forecast = NULL;
  }
  if (st->forecast != NULL) {
    st->forecast->seconds = fc.seconds;
    st->forecast->limit = fc.limit;
  }
  return fc;
}

bool nl_forecast_latest(const nl_consumer_state *st, double *seconds,
                        nl_limit_kind *limit) {
  const nl_forecast_watch *w = st->forecast;
  if (w == NULL || !isfinite(w->seconds))
    return false;
  *seconds = w->seconds;
  *limit = (nl_limit_kind)w->limit;
  return true;
}

double nl_forecast_eta(const nl_forecast *fc, const nl_stream_snap *s,
                       double growth, double age_growth, nl_limit_kind *kind) {
  double limit, max_age, eta = INFINITY;
  nl_limit_kind count_kind = limits_of(s, &limit, &max_age);
  *kind = NL_LIMIT_NONE;
  if (limit > 0) {
    eta = eta_at(fc->exposure, limit, growth);
    *kind = count_kind;
  }
  if (max_age > 0 && fc->age_s >= 0) {
    double by_age = eta_at(fc->age_s, max_age, age_growth);
    if (by_age < eta || *kind == NL_LIMIT_NONE) {
      eta = by_age;
      *kind = NL_LIMIT_AGE;
    }
  }
  return eta;
}
