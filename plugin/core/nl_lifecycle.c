/* nl_lifecycle.c: the life of a held finding (see nl_lifecycle.h). */
#include "nl_lifecycle.h"

#include "core/detect/nl_params.h"

#include <stdlib.h>
#include <string.h>

static uint64_t grown(uint64_t now, uint64_t then) {
  return now > then ? now - then : 0;
}

void nl_lifecycle_clear(nl_lifecycle *lc, const char *stream,
                        const char *consumer, const nl_finding *held,
                        const char *reason, int64_t now_ns,
                        const nl_engine_sink *sink, void *ud) {
  nl_resolved *r = &lc->resolved[lc->n_resolved % NL_RESOLVED_MAX];
  char *st = strdup(stream), *co = strdup(consumer);
  if (st != NULL && co != NULL) {
    free(r->stream);
    free(r->consumer);
    *r = (nl_resolved){st, co, *held, now_ns, reason};
    lc->n_resolved++;
  } else {
    free(st);
    free(co);
  }
  if (sink && sink->transition)
    sink->transition(ud, stream, consumer, held, false, reason);
}

const nl_resolved *nl_lifecycle_resolved(const nl_lifecycle *lc, size_t k) {
  if (k >= NL_RESOLVED_MAX || k >= lc->n_resolved)
    return NULL;
  return &lc->resolved[(lc->n_resolved - 1 - k) % NL_RESOLVED_MAX];
}

void nl_lifecycle_free(nl_lifecycle *lc) {
  for (size_t i = 0; i < NL_RESOLVED_MAX; i++) {
    free(lc->resolved[i].stream);
    free(lc->resolved[i].consumer);
  }
}

/* Whether held, whose condition is missing at now_ns under configuration
 * key, clears now; counts the missing poll. It clears at once when the
 * configuration changed since the condition last held (a fix), else once
 * the condition has been missing for hold_ns and NL_CLEAR_POLLS polls in a
 * row: a condition hovering at its threshold gives one onset, not one per
 * dip. */
static bool clear_due(nl_finding *held, uint64_t key, int64_t now_ns,
                      int64_t hold_ns) {
  if (held->config_key != 0 && key != 0 && key != held->config_key)
    return true;
  if (held->absent_polls == 0)
    held->absent_since_ns = now_ns;
  if (held->absent_polls < UINT32_MAX)
    held->absent_polls++;
  return held->absent_polls >= NL_CLEAR_POLLS &&
         now_ns - held->absent_since_ns >= hold_ns;
}

void nl_lifecycle_update(nl_lifecycle *lc, nl_finding **held_slot, bool on,
                         nl_finding *found, const char *stream,
                         const char *consumer, uint64_t key, nl_cost_base base,
                         int64_t now_ns, const nl_engine_sink *sink, void *ud) {
  nl_finding *held = *held_slot;
  if (held != NULL) {
    held->lost = grown(base.lost, held->onset_lost);
    held->redelivered = grown(base.redelivered, held->onset_redelivered);
  }
  if (on) {
    nl_finding_guard_fix(found, stream, consumer);
    found->config_key = key != 0 ? key : held ? held->config_key : 0;
    found->absent_since_ns = 0;
    found->absent_polls = 0;
    int64_t hint = found->condition_since_ns;
    if (hint <= 0 || hint >= now_ns)
      hint = 0;
    if (held != NULL) {
      int64_t kept = held->condition_since_ns;
      found->condition_since_ns =
          kept > 0 && (hint == 0 || kept < hint) ? kept : hint;
      if (found->condition_since_ns >= held->since_ns)
        found->condition_since_ns = 0;
      found->since_ns = held->since_ns;
      found->onset_lost = held->onset_lost;
      found->onset_redelivered = held->onset_redelivered;
      found->lost = held->lost;
      found->redelivered = held->redelivered;
      *held = *found;
      return;
    }
    held = malloc(sizeof(*held));
    if (held == NULL)
      return; /* Reported on a later poll when memory allows. */
    found->since_ns = now_ns;
    found->condition_since_ns = hint;
    found->onset_lost = base.lost_before;
    found->onset_redelivered = base.redelivered_before;
    found->lost = grown(base.lost, base.lost_before);
    found->redelivered = grown(base.redelivered, base.redelivered_before);
    *held = *found;
    *held_slot = held;
    if (sink && sink->transition)
      sink->transition(ud, stream, consumer, held, true, NULL);
  } else if (held != NULL && key != 0 &&
             clear_due(held, key, now_ns, lc->hold_ns)) {
    nl_lifecycle_clear(lc, stream, consumer, held, NULL, now_ns, sink, ud);
    free(held);
    *held_slot = NULL;
  }
}
