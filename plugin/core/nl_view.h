/* nl_view.h: the JSON documents of the REST API, rendered from the engine.
 *
 * Pure functions over the history registry and the snapshot set of the
 * latest poll: no locking, no network, no collectd. The shapes are in
 * docs/rest-api.md. Every function returns malloc'd compact JSON text (the
 * caller frees) and sets *len, or returns NULL when memory runs out. */
#ifndef NL_VIEW_H
#define NL_VIEW_H

#include "nl_engine.h"
#include "nl_history.h"
#include "nl_snapshot.h"

/* Returns "ok", "warning" or "critical": the highest severity among the
 * active findings of st (NULL counts as none). */
const char *nl_view_health(const nl_consumer_state *st);

/* GET /api/violations: every active finding of e, consumer- and
 * stream-level (nl_engine_active: most severe first, then by stream,
 * consumer and class); each in the shape of a firing health event
 * (detected_at is the onset; a stream-level one has no consumer). */
char *nl_view_violations(nl_engine *e, const char *instance, int64_t now_ns,
                         size_t *len);

/* GET /api/streams: the streams and consumers of set (the latest poll,
 * taken at poll_ns; 0 when none happened yet), each consumer with its
 * snapshot, its running totals and active classes from e, and each stream
 * with its own active (stream-level) classes; a stream's health is the
 * worst of its own findings and its consumers'. */
char *nl_view_streams(const nl_snapshot_set *set, nl_engine *e,
                      const char *instance, int64_t poll_ns, int64_t now_ns,
                      size_t *len);

/* GET /api/history/<stream>/<consumer>: the samples in the consumer's
 * history ring, oldest first. Returns NULL and sets *found to false when
 * reg holds no such consumer (found is true on success and on memory
 * failure). */
char *nl_view_history(nl_registry *reg, const char *stream,
                      const char *consumer, const char *instance,
                      int64_t now_ns, bool *found, size_t *len);

#endif
