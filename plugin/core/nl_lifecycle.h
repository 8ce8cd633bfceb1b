/* nl_lifecycle.h: the life of a held finding, from its onset to its clear.
 *
 * Each detection brings the held finding of a class in line with it: a
 * finding raised now starts at once (a transition), a held one takes the
 * new evidence and keeps its onset and cost, and one whose condition is
 * missing clears once it has been missing for the clearing hold and
 * NL_CLEAR_POLLS polls in a row, or at once when the configuration changed
 * since it last held (a fix). The latest findings that cleared are kept
 * (nl_resolved). No locking: the engine's caller serialises. */
#ifndef NL_LIFECYCLE_H
#define NL_LIFECYCLE_H

#include "nl_sink.h"

typedef struct {
  int64_t hold_ns; /* The clearing hold (nl_detect_params.clear_hold_s). */
  /* The latest findings that cleared: a ring, n_resolved of them so far. */
  nl_resolved resolved[NL_RESOLVED_MAX];
  uint64_t n_resolved;
} nl_lifecycle;

/* The counters a finding's cost is measured on (see nl_finding): now, and
 * before the interval that ended now (an onset counts its own interval). */
typedef struct {
  uint64_t lost;
  uint64_t redelivered;
  uint64_t lost_before;
  uint64_t redelivered_before;
} nl_cost_base;

/* Brings *held, the held finding of one class (NULL: none), in line with
 * one detection of that class under stream and consumer: on tells whether
 * the condition holds, found is its finding then (its fix guarded against
 * names the CLI would not take). key is the configuration seen
 * (nl_config_key), 0 when no poll is behind the detection (an advisory):
 * such a detection only raises or updates. Reports each change to sink.
 * Out of memory, an onset waits for a later detection. */
void nl_lifecycle_update(nl_lifecycle *lc, nl_finding **held, bool on,
                         nl_finding *found, const char *stream,
                         const char *consumer, uint64_t key, nl_cost_base base,
                         int64_t now_ns, const nl_engine_sink *sink, void *ud);

/* Reports that held (of stream/consumer) cleared for reason (NULL: its
 * condition ended), keeping it among the latest resolved findings. The
 * caller frees held. */
void nl_lifecycle_clear(nl_lifecycle *lc, const char *stream,
                        const char *consumer, const nl_finding *held,
                        const char *reason, int64_t now_ns,
                        const nl_engine_sink *sink, void *ud);

/* The k-th latest finding that cleared (0 is the latest), or NULL. */
const nl_resolved *nl_lifecycle_resolved(const nl_lifecycle *lc, size_t k);

/* Frees what lc keeps. */
void nl_lifecycle_free(nl_lifecycle *lc);

#endif
