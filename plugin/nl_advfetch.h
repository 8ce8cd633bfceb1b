/* nl_advfetch.h: reading a consumer announced by a CREATED advisory.
 *
 * When a consumer is created, the advisory path reads it and its stream
 * once ($JS.API.STREAM.INFO.<stream> and
 * $JS.API.CONSUMER.INFO.<stream>.<consumer>: read-only requests, each
 * bounded by the transport's timeout), so that the engine can raise its
 * configuration classes at once instead of at the next poll
 * (nl_engine_created). No collectd calls; no locking. */
#ifndef NL_ADVFETCH_H
#define NL_ADVFETCH_H

#include "nl_poll.h"
#include "nl_snapshot.h"

/* Reads stream and consumer through request (with ctx) and appends one
 * stream snapshot and its one consumer snapshot to set (which must be
 * empty). Returns 0, or -1 with a one-line reason in err (set may then
 * hold the stream only; the caller clears it either way). */
int nl_advfetch_consumer(nl_request_fn request, void *ctx, const char *stream,
                         const char *consumer, nl_snapshot_set *set, char *err,
                         size_t errlen);

#endif
