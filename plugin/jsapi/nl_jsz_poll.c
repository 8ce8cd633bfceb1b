/* nl_jsz_poll.c: one poll of every account through the system account. */
#include "nl_jsz_poll.h"

#include <stdio.h>
#include <string.h>

/* What the gather's reply function works on. */
typedef struct {
  nl_jsz *z;
  nl_poll_stats *stats;
  const char *subject;
} gathering;

/* Records the first error of the poll (of kind status) on subject. */
static void note_error(nl_poll_stats *stats, const char *subject, int status,
                       const char *why) {
  stats->errors++;
  if (stats->first_error[0] == '\0') {
    snprintf(stats->first_error, sizeof(stats->first_error), "%s: %s", subject,
             why);
    stats->first_status = status;
  }
}

static bool take_reply(void *ud, const char *data, size_t len) {
  gathering *g = ud;
  char err[320];
  g->stats->bytes_received += len;
  if (nl_jsz_add_reply(g->z, data, len, err, sizeof(err)) != 0)
    note_error(g->stats, g->subject, NL_TRANSPORT_ERROR, err);
  return nl_jsz_complete(g->z);
}

/* One poll on subject: every server's reply (PING), or one server's alone
 * (server_scope). */
static int poll_subject(nl_gather_fn gather, void *ctx, const char *subject,
                        bool server_scope, const nl_stream_select *accounts,
                        const nl_stream_select *streams, nl_jsz_result *out,
                        nl_poll_stats *stats) {
  memset(stats, 0, sizeof(*stats));
  memset(out, 0, sizeof(*out));
  nl_jsz *z = nl_jsz_create(accounts, streams);
  if (z == NULL) {
    note_error(stats, subject, NL_TRANSPORT_ERROR, "out of memory");
    return -1;
  }
  if (server_scope)
    nl_jsz_scope_server(z);
  gathering g = {z, stats, subject};
  char err[320];
  stats->requests = 1;
  int n =
      gather(ctx, subject, NL_JSZ_REQUEST, take_reply, &g, err, sizeof(err));
  if (n < 0)
    note_error(stats, subject, n, err);
  else if (n == 0)
    note_error(stats, subject, NL_TRANSPORT_TIMEOUT,
               server_scope ? "the server did not answer in time"
                            : "no server answered in time");
  int rc = nl_jsz_finish(z, out);
  nl_jsz_free(z);
  if (rc != 0) {
    note_error(stats, subject, NL_TRANSPORT_ERROR, "out of memory");
    return -1;
  }
  if (out->servers == 0) {
    nl_jsz_result_clear(out);
    return -1;
  }
  if (!server_scope && out->servers < out->expected) {
    snprintf(err, sizeof(err),
             "%zu of the cluster's %zu servers answered; what only the "
             "others lead is unobservable",
             out->servers, out->expected);
    note_error(stats, subject, NL_TRANSPORT_TIMEOUT, err);
    stats->streams_incomplete++;
  }
  for (size_t i = 0; i < out->n_accounts; i++) {
    const nl_snapshot_set *set = &out->accounts[i].set;
    stats->streams_incomplete += set->n_missing_streams;
    for (size_t j = 0; j < set->n_streams; j++)
      stats->streams_incomplete += !set->streams[j].consumers_complete;
  }
  return 0;
}

int nl_jsz_poll_run(nl_gather_fn gather, void *ctx,
                    const nl_stream_select *accounts,
                    const nl_stream_select *streams, nl_jsz_result *out,
                    nl_poll_stats *stats) {
  return poll_subject(gather, ctx, NL_JSZ_SUBJECT, false, accounts, streams,
                      out, stats);
}

int nl_jsz_poll_server(nl_gather_fn gather, void *ctx, const char *server_id,
                       const nl_stream_select *accounts,
                       const nl_stream_select *streams, nl_jsz_result *out,
                       nl_poll_stats *stats) {
  char subject[NL_JSZ_SERVER_SUBJECT_MAX];
  snprintf(subject, sizeof(subject), NL_JSZ_SERVER_SUBJECT, server_id);
  return poll_subject(gather, ctx, subject, true, accounts, streams, out,
                      stats);
}
