/* nl_detect_ext.c: the consumer classes beyond the five, from each poll:
 * PUSH_UNBOUND, RETENTION_RISK (nl_detect_retention.c), RATE_LIMITED
 * (nl_detect_rate.c), the configuration
 * classes, and the advisory evidence (nl_detect_advised.c) joined with
 * what the poll shows (see nl_detect_ext.h and docs/detectors.md). */
#include "core/model/nl_expect.h"
#include "nl_detect_advised.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PUSH_UNBOUND: a push consumer with a backlog and no bound subscriber for
 * at least push_unbound_s; critical when retention will evict the backlog
 * within the horizon. Nothing is delivered while it is unbound, so a
 * max_age evicts the backlog within max_age less the age of its oldest
 * message (at most max_age) for certain; the count and size limits only
 * by the RETENTION_RISK forecast. */
static bool detect_unbound(nl_ext_state *x, const nl_consumer_state *st,
                           const nl_consumer_snap *c, const nl_stream_snap *s,
                           const nl_detect_params *p, int64_t now_ns,
                           const nl_forecast *fc, nl_finding *f) {
  double forecast = fc->seconds;
  if (s->max_age_ns > 0 && !s->discard_new) {
    double by_age = nl_seconds(s->max_age_ns) - (fc->age_s > 0 ? fc->age_s : 0);
    if (by_age < forecast)
      forecast = by_age;
  }
  uint64_t backlog = c->num_pending + c->num_ack_pending;
  /* A paused consumer (2.11+) is undelivered by choice: its unbound time
   * starts when the pause ends. */
  if (!c->push || c->push_bound || c->paused || backlog == 0) {
    x->unbound_since_ns = 0;
    return false;
  }
  if (x->unbound_since_ns == 0)
    x->unbound_since_ns = now_ns;
  double unbound_s = nl_seconds(now_ns - x->unbound_since_ns);
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

/* The audit rules behind the consumer configuration classes, and the
 * declared processing time behind ACK_WAIT_VIOLATION. */
#define CONSUMER_RULES                                                         \
  ((1u << NL_AUDIT_ACK_NONE) | (1u << NL_AUDIT_ACK_ALL_PARALLEL) |             \
   (1u << NL_AUDIT_ACK_WAIT_BELOW_PROCESSING) |                                \
   (1u << NL_AUDIT_CONSUMER_SINGLE_REPLICA))

/* ACK_WAIT_VIOLATION from the declared processing time (the audit's
 * ACK_WAIT_BELOW_PROCESSING finding d): the first redelivery comes before a
 * task as long as declared is done, so the duplicate execution is certain
 * before any redelivery is seen. Expiry rounds the polls saw keep their own
 * finding (its recommendation already covers the declaration); otherwise
 * d is the finding, and MISSING_PROGRESS, the same fault seen in a few
 * long tasks, is not raised beside it. */
static void take_declared(const nl_finding *d, bool active[NL_CLASS_COUNT],
                          nl_finding out[NL_CLASS_COUNT]) {
  if (active[NL_ACK_WAIT_VIOLATION])
    return;
  nl_finding *f = &out[NL_ACK_WAIT_VIOLATION];
  *f = *d;
  f->cls = NL_ACK_WAIT_VIOLATION;
  /* First, so that a notification cut at its length still says it. */
  f->n_evidence = 0;
  nl_finding_add(f, "from_declaration", 1);
  for (int i = 0; i < d->n_evidence; i++)
    nl_finding_add(f, d->evidence[i].name, d->evidence[i].value);
  active[NL_ACK_WAIT_VIOLATION] = true;
  active[NL_MISSING_PROGRESS] = false;
}

void nl_ext_take_audit(const nl_audit_result *r,
                       nl_finding *const held[NL_CLASS_COUNT],
                       bool active[NL_CLASS_COUNT],
                       nl_finding out[NL_CLASS_COUNT]) {
  for (size_t i = 0; i < r->n; i++) {
    nl_class cls = nl_audit_plugin_class(r->items[i].cls);
    if (cls == NL_CLASS_COUNT)
      continue;
    if (cls == NL_ACK_WAIT_VIOLATION) {
      take_declared(&r->items[i].f, active, out);
      continue;
    }
    if (cls == NL_ACK_ALL_PARALLEL && !nl_finding_holding(held[cls]) &&
        nl_finding_get(&r->items[i].f, "parallel_seen", 0) == 0)
      continue;
    out[cls] = r->items[i].f;
    out[cls].cls = cls;
    active[cls] = true;
  }
}

void nl_ext_detect_consumer(nl_consumer_state *st, const nl_consumer_snap *c,
                            const nl_stream_snap *s, const nl_detect_params *p,
                            const nl_ext_poll *ctx, int64_t now_ns,
                            bool active[NL_CLASS_COUNT],
                            nl_finding out[NL_CLASS_COUNT]) {
  for (int cls = NL_MAX_DELIVER_EXHAUSTED; cls < NL_CLASS_COUNT; cls++)
    active[cls] = false;
  bool needs = c->max_deliver > 0 || c->push || st->ext != NULL;
  nl_ext_state *x = needs ? nl_ext_of(st) : NULL;
  if (x != NULL) {
    x->max_deliver = c->max_deliver;
    x->ack_wait_ns = c->ack_wait_ns;
    x->dead_letter =
        c->max_deliver > 0 && nl_audit_dead_letter(ctx ? ctx->set : NULL, c);
  }
  nl_forecast fc =
      nl_retention_observe(st, c, s, ctx ? ctx->clock : NULL, now_ns);
  if (x != NULL) {
    active[NL_MAX_DELIVER_EXHAUSTED] =
        nl_advised_exhausted(st, c, &out[NL_MAX_DELIVER_EXHAUSTED]);
    active[NL_PUSH_UNBOUND] =
        detect_unbound(x, st, c, s, p, now_ns, &fc, &out[NL_PUSH_UNBOUND]);
    nl_finding nak;
    if (nl_advised_nak_storm(st, p, now_ns, &nak)) {
      active[NL_NAK_STORM] = true;
      out[NL_NAK_STORM] = nak;
      active[NL_MISSING_PROGRESS] = false;
      active[NL_ACK_WAIT_VIOLATION] = false;
    }
  }
  /* After the NAKs: a declared processing time longer than the redelivery
   * delay is a fault whatever the redeliveries were. */
  if (ctx != NULL && ctx->scratch != NULL)
    nl_ext_detect_config(st, ctx, p, active, out);
  if (x != NULL && x->n_acks > 0 &&
      (active[NL_ACK_WAIT_VIOLATION] || active[NL_MISSING_PROGRESS])) {
    nl_ack_stats a = nl_ext_ack_stats(x, c->ack_wait_ns);
    if (active[NL_ACK_WAIT_VIOLATION])
      nl_advised_ack_samples(c, &a, &out[NL_ACK_WAIT_VIOLATION]);
    if (active[NL_MISSING_PROGRESS])
      nl_advised_ack_samples(c, &a, &out[NL_MISSING_PROGRESS]);
  }
  active[NL_RETENTION_RISK] =
      !active[NL_SEQUENCE_GAP] &&
      nl_retention_detect(st, c, s, p, &fc, &out[NL_RETENTION_RISK]);
  /* The cause beside the loss to come: RATE_LIMITED carries the same
   * forecast; each has its own fix (docs/detectors.md). */
  active[NL_RATE_LIMITED] =
      nl_rate_detect(st, c, s, p, &fc, now_ns, &out[NL_RATE_LIMITED]);
  nl_expiry_observe(st, c, s, now_ns);
  active[NL_CONSUMER_EXPIRING] =
      nl_expiry_detect(st, c, s, &out[NL_CONSUMER_EXPIRING]);
}

void nl_ext_detect_config(const nl_consumer_state *st, const nl_ext_poll *ctx,
                          const nl_detect_params *p,
                          bool active[NL_CLASS_COUNT],
                          nl_finding out[NL_CLASS_COUNT]) {
  active[NL_ACK_NONE_CONSUMER] = false;
  active[NL_ACK_ALL_PARALLEL] = false;
  active[NL_CONSUMER_SINGLE_REPLICA] = false;
  if (!p->config_classes)
    return;
  ctx->scratch->n = 0;
  nl_audit_consumer(ctx->set, ctx->consumer_index, ctx->audit, CONSUMER_RULES,
                    ctx->scratch);
  nl_ext_take_audit(ctx->scratch, st->active, active, out);
}

bool nl_ext_bad_declaration(nl_consumer_state *st, const nl_ext_poll *ctx,
                            const nl_detect_params *p, nl_finding *f) {
  if (!p->config_classes || ctx->consumer_index >= ctx->set->n_consumers)
    return false;
  const nl_consumer_snap *c = &ctx->set->consumers[ctx->consumer_index];
  uint64_t bad = 0;
  if (c->n_meta > 0) {
    nl_expectations e;
    nl_expect_read(c, &e);
    if (e.bad_key != NULL) {
      /* The key and value with the terminating NUL of each: "a" "bc" and
       * "ab" "c" differ. */
      bad = nl_hash_bytes(NL_HASH_BASIS, e.bad_key, strlen(e.bad_key) + 1);
      bad = nl_hash_bytes(bad, e.bad_value, strlen(e.bad_value) + 1);
      bad = bad ? bad : 1;
    }
  }
  if (bad == 0) {
    if (st->ext != NULL)
      st->ext->bad_declaration = 0;
    return false;
  }
  nl_ext_state *x = nl_ext_of(st);
  if (x == NULL || x->bad_declaration == bad)
    return false;
  ctx->scratch->n = 0;
  nl_audit_consumer(ctx->set, ctx->consumer_index, ctx->audit,
                    1u << NL_AUDIT_INVALID_EXPECTATION, ctx->scratch);
  if (ctx->scratch->n == 0)
    return false;
  x->bad_declaration = bad;
  *f = ctx->scratch->items[0].f;
  return true;
}
