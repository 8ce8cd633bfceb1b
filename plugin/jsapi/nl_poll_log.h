/* nl_poll_log.h: a record of every reply a poll received, for evaluation.
 *
 * With the Instance option PollLog, each reply of a poll's listings
 * ($JS.API.STREAM.LIST and $JS.API.CONSUMER.LIST.<stream> pages) is
 * appended to a file as one JSON line: the poll's time (collectd's read
 * time, the time of the poll's values), the subject, the request and the
 * reply as the server sent it. Evaluation tools replay these lines to apply
 * other detectors to the very snapshots the plugin judged. It is a
 * debugging aid: the file grows by the size of every poll until it reaches
 * NL_POLL_LOG_MAX_BYTES, and then no more is written.
 *
 * Only the poll thread writes; no locking. */
#ifndef NL_POLL_LOG_H
#define NL_POLL_LOG_H

#include "nl_poll.h"

#include <stdbool.h>
#include <stdint.h>

/* The log stops growing at this size (1 GiB). */
#define NL_POLL_LOG_MAX_BYTES ((uint64_t)1 << 30)

typedef struct nl_poll_log nl_poll_log;

/* Opens path for appending. Returns 0, or -1 with a one-line reason in
 * err. */
int nl_poll_log_open(const char *path, nl_poll_log **out, char *err,
                     size_t errlen);

/* Closes the file; NULL is ignored. */
void nl_poll_log_close(nl_poll_log *log);

/* Starts recording one poll made at poll_time_ns (nanoseconds since the
 * epoch) through request with ctx: nl_poll_log_request forwards to them
 * until the next call. */
void nl_poll_log_begin(nl_poll_log *log, int64_t poll_time_ns,
                       nl_request_fn request, void *ctx);

/* An nl_request_fn whose ctx is the nl_poll_log: forwards the request and,
 * when it succeeded, appends a line for the reply. A failed write never
 * fails the request. */
int nl_poll_log_request(void *ctx, const char *subject, const char *payload,
                        char **reply, size_t *reply_len, char *err,
                        size_t errlen);

/* True once the log stopped growing (full, or a write failed), so that
 * the caller can say so once; clears the flag it reads. */
bool nl_poll_log_take_stopped(nl_poll_log *log, char *why, size_t whylen);

#endif
