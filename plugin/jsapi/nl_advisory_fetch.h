/* nl_advisory_fetch.h: reading a consumer announced by a CREATED advisory.
 *
 * When a consumer is created, the advisory path reads it and its stream
 * once ($JS.API.STREAM.INFO.<stream> and
 * $JS.API.CONSUMER.INFO.<stream>.<consumer>: read-only requests, each
 * bounded by the transport's timeout), so that the engine can raise its
 * configuration classes at once instead of at the next poll
 * (nl_engine_created). No collectd calls; no locking. */
#ifndef NL_ADVISORY_FETCH_H
#define NL_ADVISORY_FETCH_H

#include "core/model/nl_snapshot.h"
#include "nl_poll.h"

/* Reads stream and consumer through request (with ctx) and appends one
 * stream snapshot and its one consumer snapshot to set (which must be
 * empty). Returns 0, or -1 with a one-line reason in err (set may then
 * hold the stream only; the caller clears it either way). */
int nl_advisory_fetch_consumer(nl_request_fn request, void *ctx,
                               const char *stream, const char *consumer,
                               nl_snapshot_set *set, char *err, size_t errlen);

#endif
