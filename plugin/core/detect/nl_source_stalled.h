/* nl_source_stalled.h: SOURCE_STALLED, a mirror or sourced stream that
 * stopped taking messages from its origin.
 *
 * A stream that copies another (its mirror, or one of its sources) is
 * judged per upstream link from what each poll lists: the link as the copy
 * reports it (lag, active, error) and, when the origin is a stream of the
 * same poll (same account, not external), the origin's own state. The
 * predicates and why they are right are in docs/detectors.md
 * ("SOURCE_STALLED"). Pure: no locking, no I/O (the engine serialises). */
#ifndef NL_SOURCE_STALLED_H
#define NL_SOURCE_STALLED_H

#include "core/model/nl_finding.h"
#include "core/model/nl_snapshot.h"

/* How long a copy may take nothing that its origin has, or hear nothing
 * from its origin, before it counts as stalled: twice the longest time a
 * healthy link needs to notice a silent origin and retry (10 to 20 s from
 * nats-server 2.10, 3 s on 2.9). */
#define NL_SOURCE_STALL_S 30.0

/* A link whose copy heard from the origin (a message or the 1 s
 * heartbeat) at most this long ago has a live consumer on the origin. */
#define NL_SOURCE_FRESH_S 5.0

/* Polls in a row with the origin and the copy unchanged and the link live
 * before the copy's deficit is taken as final (messages skipped, not in
 * flight). */
#define NL_SOURCE_SETTLED_POLLS 2

/* A copy stream's upstream links between polls (the class's state). */
typedef struct nl_source_state nl_source_state;

/* What one detection gives. */
typedef struct {
  bool active;         /* SOURCE_STALLED's condition holds. */
  nl_finding finding;  /* When active. */
  uint64_t lost_delta; /* Messages newly counted as skipped by the copy. */
} nl_source_result;

/* Detects SOURCE_STALLED for copy, a stream polled at now_ns. origins has
 * one entry per link of copy (copy->links): the origin stream as this poll
 * lists it, or NULL when it is not visible (external, not listed, led by
 * another server); origins may be NULL when none is. *st holds what the
 * detection keeps between polls: it is allocated on the first poll of a
 * stream with links and freed (set to NULL) when the stream has none.
 * Out of memory, nothing is detected. */
void nl_detect_source(nl_source_state **st, const nl_stream_snap *copy,
                      const nl_stream_snap *const *origins, int64_t now_ns,
                      nl_source_result *out);

#endif
