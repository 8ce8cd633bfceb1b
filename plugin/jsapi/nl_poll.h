/* nl_poll.h: one poll of the JetStream API through a request function.
 *
 * The poll lists streams (paged $JS.API.STREAM.LIST), keeps those the
 * include/exclude globs select, and lists each one's consumers (paged
 * $JS.API.CONSUMER.LIST.<stream>). It knows nothing of the transport: the
 * caller passes a request function, so fixtures can stand in for a server. */
#ifndef NL_POLL_H
#define NL_POLL_H

#include "core/model/nl_select.h"
#include "core/model/nl_snapshot.h"
#include "nl_transport.h"

/* Sends payload to subject and waits for one reply. On success returns 0 and
 * sets *reply (malloc'd, caller frees) and *reply_len; on failure returns
 * the kind of failure (a negative nl_transport_status; -1 when no kind
 * applies) with a one-line reason in err. */
typedef int (*nl_request_fn)(void *ctx, const char *subject,
                             const char *payload, char **reply,
                             size_t *reply_len, char *err, size_t errlen);

typedef struct {
  nl_stream_select select; /* The streams listed for their consumers. */
  const char *api_prefix;  /* "$JS.API" when NULL. */
  size_t max_pages;        /* Per listing; 0 means 1000. */
  int64_t budget_ns;       /* Stop requesting after this long; 0: no limit. */
  /* Ask for the account's JetStream usage and limits ($JS.API.INFO) at
   * this poll. */
  bool account_info;
} nl_poll_config;

typedef struct {
  uint64_t requests;
  uint64_t errors;
  uint64_t bytes_received;
  uint64_t streams_incomplete; /* Streams whose consumers were not all read. */
  bool cut_off;                /* The budget ran out before the poll ended. */
  char first_error[256];       /* The first error of this poll, or "". */
  int first_status; /* Its nl_transport_status (ERROR for a bad reply). */
  /* Why the account's usage ($JS.API.INFO) could not be read, or "": kept
   * apart from the poll's errors, since the streams were read (a user
   * without permission for it, for one, still gets every other class). */
  char account_error[256];
} nl_poll_stats;

/* Runs one poll into set (which must be empty) and fills stats. Returns 0
 * when the stream list was read (some consumer lists may still have failed;
 * those streams have consumers_complete false), or -1 when it was not. */
int nl_poll_run(const nl_poll_config *cfg, nl_request_fn request, void *ctx,
                nl_snapshot_set *set, nl_poll_stats *stats);

#endif
