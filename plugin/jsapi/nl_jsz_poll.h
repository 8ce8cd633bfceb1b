/* nl_jsz_poll.h: one poll of every account through the system account.
 *
 * Sends NL_JSZ_REQUEST to NL_JSZ_SUBJECT once and gathers the servers'
 * replies until every server of the cluster answered or the request's
 * timeout passed, then merges them (core/nl_jsz.h). One request per poll,
 * whatever the number of accounts, streams and consumers. It knows nothing
 * of the transport: the caller passes a gather function. */
#ifndef NL_JSZ_POLL_H
#define NL_JSZ_POLL_H

#include "core/model/nl_jsz.h"
#include "nl_poll.h"

/* Sends payload to subject and passes each reply to fn until fn returns
 * true or a timeout; returns the number of replies, or a negative
 * nl_transport_status with a reason in err (nl_transport_gather). */
typedef int (*nl_gather_fn)(void *ctx, const char *subject, const char *payload,
                            nl_reply_fn fn, void *ud, char *err, size_t errlen);

/* Runs one poll into *out (cleared by the caller with nl_jsz_result_clear)
 * and fills stats. Returns 0 when at least one server answered with a
 * readable reply (fewer servers than the cluster holds is recorded as an
 * error in stats, and the sets are marked short), or -1 when none did
 * (stats->first_error says why). */
int nl_jsz_poll_run(nl_gather_fn gather, void *ctx,
                    const nl_stream_select *accounts,
                    const nl_stream_select *streams, nl_jsz_result *out,
                    nl_poll_stats *stats);

/* Scope "server": one poll of what the server whose id is server_id
 * leads, through one request to that server alone,
 * $SYS.REQ.SERVER.<server_id>.JSZ, read as nl_jsz_scope_server says.
 * Returns as nl_jsz_poll_run; the cluster's size is in out->expected but a
 * single reply is a complete poll. */
#define NL_JSZ_SERVER_SUBJECT "$SYS.REQ.SERVER.%s.JSZ"
#define NL_JSZ_SERVER_SUBJECT_MAX 128
int nl_jsz_poll_server(nl_gather_fn gather, void *ctx, const char *server_id,
                       const nl_stream_select *accounts,
                       const nl_stream_select *streams, nl_jsz_result *out,
                       nl_poll_stats *stats);

#endif
