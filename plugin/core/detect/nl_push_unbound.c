/* nl_push_unbound.c: PUSH_UNBOUND, a push consumer with a backlog and no
 * subscriber on its deliver subject: nothing is delivered, and the backlog
 * is exposed to the stream's limits. The predicate is in
 * docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* What the class keeps of a push consumer while it is unbound with a
 * backlog. */
typedef struct {
  int64_t since_ns; /* The first poll of the run unbound. */
} unbound_state;

/* PUSH_UNBOUND: a push consumer with a backlog and no bound subscriber for
 * at least push_unbound_s; critical when retention will evict the backlog
 * within the horizon. Nothing is delivered while it is unbound, so a
 * max_age evicts the backlog within max_age less the age of its oldest
 * message (at most max_age) for certain; the count and size limits only
 * by the RETENTION_RISK forecast. */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_state *st = x->st;
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  const nl_detect_params *p = x->p;
  const nl_forecast *fc = x->forecast;
  double forecast = fc->seconds;
  if (s->max_age_ns > 0 && !s->discard_new) {
    double by_age =
        nl_seconds(s->max_age_ns) - (fc->age_min_s > 0 ? fc->age_min_s : 0);
    if (by_age < forecast)
      forecast = by_age;
  }
  uint64_t backlog = c->num_pending + c->num_ack_pending;
  /* A paused consumer (2.11+) is undelivered by choice: its unbound time
   * starts when the pause ends. */
  if (!c->push || c->push_bound || c->paused || backlog == 0) {
    nl_class_state_drop(&nl_class_push_unbound, state);
    return false;
  }
  unbound_state *u = nl_class_state(&nl_class_push_unbound, state);
  if (u == NULL)
    return false;
  if (u->since_ns == 0)
    u->since_ns = x->now_ns;
  double unbound_s = nl_seconds(x->now_ns - u->since_ns);
  if (unbound_s < p->push_unbound_s)
    return false;
  bool evicting = forecast < p->retention_horizon_s;
  nl_finding_start(f, NL_PUSH_UNBOUND);
  if (evicting)
    f->severity = NL_SEVERITY_CRITICAL;
  nl_finding_add(f, "unbound_s", floor(unbound_s));
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  if (isfinite(forecast))
    nl_finding_add(f, "eviction_forecast_s", floor(forecast));
  nl_shell_names q;
  nl_shell_names_of(st->stream, st->name, &q);
  snprintf(f->description, sizeof(f->description),
           "push consumer with %" PRIu64 " messages waiting and no "
           "subscriber on its deliver subject for %.0f s: nothing is "
           "delivered%s",
           backlog, unbound_s,
           evicting ? ", and the stream's limits will evict the backlog "
                      "before anyone receives it"
                    : "; the backlog is exposed to the stream's limits");
  snprintf(f->fix_command, sizeof(f->fix_command), "nats consumer info %s %s",
           q.stream, q.consumer);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "start the subscriber of the consumer's deliver subject (shown "
           "by the fix command) again; if nothing will subscribe any more, "
           "move the work to a pull consumer (nats consumer copy %s %s "
           "%s_pull --pull) or remove the consumer",
           q.stream, q.consumer, q.consumer);
  return true;
}

static const nl_option options[] = {
    {"PushUnboundSeconds", NL_OPTION_NUMBER, 86400 * 7, NULL, 60.0,
     offsetof(nl_detect_params, push_unbound_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_push_unbound = {
    .cls = NL_PUSH_UNBOUND,
    .state_size = sizeof(unbound_state),
    .detect = detect,
    .options = options,
};
