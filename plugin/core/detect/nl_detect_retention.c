/* nl_detect_retention.c: RETENTION_RISK (see nl_detect_retention.h). */
#include "nl_detect_retention.h"

#include "nl_audit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The limits that evict from s messages a consumer has not received: the
 * count or size limit in messages (*limit) and max_age in seconds
 * (*max_age); 0 for none, and none at all under discard new. Returns the
 * kind of the count or size limit. */
static nl_limit_kind limits_of(const nl_stream_snap *s, double *limit,
                               double *max_age) {
  *limit = s->discard_new ? 0 : nl_audit_limit_messages(s);
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

/* Time left before value reaches limit at the sustained rise of t, or
 * INFINITY when no rise is sustained long enough to extrapolate that far.
 * Sets *growth and *span from the rise. */
static double trusted_eta(const nl_trend *t, double value, double limit,
                          double *growth, double *span) {
  nl_rise r;
  if (!nl_trend_rise(t, &r))
    return INFINITY;
  double eta = eta_at(value, limit, r.growth_per_s);
  if (r.span_s < NL_RETENTION_MIN_SPAN_S || r.span_s * NL_RETENTION_TRUST < eta)
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
  else if (t != NULL && value >= NL_RETENTION_MATTERS * limit)
    eta = trusted_eta(t, value, limit, &g, &span);
  if (eta < fc->seconds) {
    fc->seconds = eta;
    fc->limit = kind;
    fc->growth_per_s = g;
    fc->sustained_s = span;
  }
}

/* Returns st's watch, allocating it; NULL when memory runs out. */
static nl_retention_watch *watch_of(nl_consumer_state *st) {
  if (st->retention == NULL) {
    nl_retention_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
      return NULL;
    nl_trend_init(&w->exposure, NL_RETENTION_BUCKET_NS);
    nl_trend_init(&w->age, NL_RETENTION_BUCKET_NS);
    st->retention = w;
  }
  return st->retention;
}

nl_forecast nl_retention_observe(nl_consumer_state *st,
                                 const nl_consumer_snap *c,
                                 const nl_stream_snap *s,
                                 const nl_seqclock *clock, int64_t now_ns) {
  nl_forecast fc = {INFINITY, NL_LIMIT_NONE, 0, 0, 0, -1, false, true};
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
    if (!nl_seqclock_age(clock, next, now_ns, &fc.age_s))
      fc.age_s = -1;
  }
  double exp_share = limit > 0 ? fc.exposure / limit : 0;
  double age_share = max_age > 0 && fc.age_s > 0 ? fc.age_s / max_age : 0;
  fc.matters =
      exp_share >= NL_RETENTION_MATTERS || age_share >= NL_RETENTION_MATTERS;
  fc.far = exp_share < NL_RETENTION_FAR && age_share < NL_RETENTION_FAR;
  nl_retention_watch *w = fc.matters ? watch_of(st) : st->retention;
  if (w != NULL) {
    nl_trend_add(&w->exposure, now_ns, fc.exposure);
    nl_trend_add(&w->age, now_ns, fc.age_s > 0 ? fc.age_s : 0);
  }
  if (limit > 0)
    take_eta(&fc, w ? &w->exposure : NULL, fc.exposure, limit, count_kind);
  if (max_age > 0 && fc.age_s >= 0)
    take_eta(&fc, w ? &w->age : NULL, fc.age_s, max_age, NL_LIMIT_AGE);
  return fc;
}

double nl_retention_eta(const nl_forecast *fc, const nl_stream_snap *s,
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

/* Writes the stream-limit change that holds the forecast's exposure plus
 * its growth over two horizons into f's fix command. */
static void retention_fix(const nl_consumer_state *st, const nl_stream_snap *s,
                          const nl_forecast *fc, double horizon,
                          nl_finding *f) {
  nl_shell_names q;
  nl_shell_names_of(s->name, st->name, &q);
  if (fc->limit == NL_LIMIT_AGE) {
    /* Room for the oldest unreceived message to age over two horizons. */
    double rec = ceil(nl_seconds(s->max_age_ns) + 2 * horizon);
    nl_finding_add(f, "recommended_max_age_s", rec);
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-age %.0fs", q.stream, rec);
  } else {
    double grow = fc->growth_per_s > 0 ? fc->growth_per_s * 2 * horizon : 0;
    double need = ceil((fc->exposure + grow) / 1000) * 1000;
    if (fc->limit == NL_LIMIT_BYTES && s->msgs > 0) {
      double rec = ceil(need * (double)s->bytes / (double)s->msgs);
      if (rec < 2.0 * (double)s->max_bytes)
        rec = 2.0 * (double)s->max_bytes;
      nl_finding_add(f, "recommended_max_bytes", rec);
      snprintf(f->fix_command, sizeof(f->fix_command),
               "nats stream edit %s --max-bytes %.0f", q.stream, rec);
    } else {
      double rec =
          need > 2.0 * (double)s->max_msgs ? need : 2.0 * (double)s->max_msgs;
      nl_finding_add(f, "recommended_max_msgs", rec);
      snprintf(f->fix_command, sizeof(f->fix_command),
               "nats stream edit %s --max-msgs %.0f", q.stream, rec);
    }
  }
  snprintf(f->recommendation, sizeof(f->recommendation),
           "let consumer %s catch up (more workers, or faster processing); "
           "until it does, raise the limit that evicts first so that the "
           "backlog and its growth over two horizons fit (the fix command)",
           q.consumer);
}

bool nl_retention_detect(nl_consumer_state *st, const nl_consumer_snap *c,
                         const nl_stream_snap *s, const nl_detect_params *p,
                         const nl_forecast *fc, nl_finding *f) {
  const nl_finding *held = st->active[NL_RETENTION_RISK];
  double horizon = p->retention_horizon_s;
  /* Raised under the horizon; present, once raised, under the wider
   * threshold. */
  bool holding = nl_finding_holding(held);
  bool on = fc->seconds < (holding ? 1.2 * horizon : horizon) &&
            (holding || st->count >= 3);
  if (!on) {
    if (fc->far && st->retention != NULL) {
      free(st->retention);
      st->retention = NULL;
    }
    return false;
  }
  if (holding && !(fc->seconds < horizon)) {
    /* In the margin: the evidence of the onset stands. */
    *f = *held;
    return true;
  }
  static const char *const limit_names[] = {"", "max_msgs", "max_bytes",
                                            "max_age"};
  double backlog = (double)c->num_pending + (double)c->num_ack_pending;
  nl_finding_start(f, NL_RETENTION_RISK);
  nl_finding_add(f, "forecast_s", floor(fc->seconds));
  nl_finding_add(f, "horizon_s", horizon);
  nl_finding_add(f, "backlog", backlog);
  nl_finding_add(f, "exposure_messages", fc->exposure);
  if (fc->limit == NL_LIMIT_AGE) {
    nl_finding_add(f, "oldest_unreceived_age_s", floor(fc->age_s));
    nl_finding_add(f, "age_growth_s_per_s", fc->growth_per_s);
  } else {
    nl_finding_add(f, "exposure_growth_per_s", fc->growth_per_s);
  }
  nl_finding_add(f, "sustained_s", floor(fc->sustained_s));
  nl_finding_add(f, "limit_messages", floor(nl_audit_limit_messages(s)));
  nl_finding_add(f, "stream_messages", (double)s->msgs);
  nl_finding_add(f, "max_age_s", nl_seconds(s->max_age_ns));
  if (fc->limit == NL_LIMIT_AGE)
    snprintf(f->description, sizeof(f->description),
             "the consumer's oldest unreceived message is at least %.0f s "
             "old and falling further behind for %.0f s: the stream's "
             "max_age %.0f s evicts it in about %.0f s unless the consumer "
             "catches up (backlog %.0f)",
             fc->age_s, fc->sustained_s, nl_seconds(s->max_age_ns), fc->seconds,
             backlog);
  else
    snprintf(f->description, sizeof(f->description),
             "%.0f stream messages must stay for this consumer, rising "
             "%.1f/s for %.0f s: the stream's %s starts evicting messages "
             "it has not received in about %.0f s (backlog %.0f) unless it "
             "catches up",
             fc->exposure, fc->growth_per_s, fc->sustained_s,
             limit_names[fc->limit], fc->seconds, backlog);
  retention_fix(st, s, fc, horizon, f);
  return true;
}
