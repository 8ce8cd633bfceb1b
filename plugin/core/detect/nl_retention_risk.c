/* nl_retention_risk.c: RETENTION_RISK, the forecast (nl_forecast) that
 * the stream's limits will evict messages a consumer has not received,
 * raised within the horizon. The raise, hold and clear rule is in
 * docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_names.h"

#include <math.h>
#include <stdio.h>

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

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_state *st = x->st;
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  const nl_detect_params *p = x->p;
  const nl_forecast *fc = x->forecast;
  const nl_finding *held = st->active[NL_RETENTION_RISK];
  double horizon = p->retention_horizon_s;
  /* Raised under the horizon; present, once raised, under the wider
   * threshold. */
  bool holding = nl_finding_holding(held);
  bool on = fc->seconds < (holding ? 1.2 * horizon : horizon) &&
            (holding || st->count >= 3);
  if (!on)
    return false;
  if (holding && !(fc->seconds < horizon)) {
    /* In the margin: the evidence of the onset stands. */
    *f = *held;
    return true;
  }
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
  nl_finding_add(f, "limit_messages", floor(nl_stream_limit_messages(s)));
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
             nl_limit_name(fc->limit), fc->seconds, backlog);
  retention_fix(st, s, fc, horizon, f);
  return true;
}

static const nl_option options[] = {
    {"RetentionHorizon", NL_OPTION_NUMBER, 86400 * 365, NULL, 3600.0,
     offsetof(nl_detect_params, retention_horizon_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_retention_risk = {
    .cls = NL_RETENTION_RISK,
    .detect = detect,
    .options = options,
};
