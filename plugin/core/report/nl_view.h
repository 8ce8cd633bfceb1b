/* nl_view.h: the JSON documents of the REST API, rendered from the engine.
 *
 * Pure functions over the history registry and the snapshot set of the
 * latest poll: no locking, no network, no collectd. The shapes are in
 * docs/rest-api.md. Every function returns malloc'd compact JSON text (the
 * caller frees) and sets *len, or returns NULL when memory runs out. */
#ifndef NL_VIEW_H
#define NL_VIEW_H

#include "core/model/nl_history.h"
#include "core/model/nl_snapshot.h"
#include "core/nl_engine.h"
#include "nl_series.h"

/* Returns "ok", "warning" or "critical": the highest severity among the
 * active findings of st (NULL counts as none). */
const char *nl_view_health(const nl_consumer_state *st);

/* GET /api/violations: every active finding of e, consumer- and
 * stream-level (nl_engine_active: most severe first, then by stream,
 * consumer and class); each in the shape of a firing health event
 * (detected_at is the onset; a stream-level one has no consumer). */
char *nl_view_violations(nl_engine *e, const char *instance, int64_t now_ns,
                         size_t *len);

/* The two arrays of /api/violations for engine e of one account (account
 * NULL: no account field): *active, its active findings in the shape of
 * firing events, and *resolved, those that cleared lately, each item
 * naming account. Returns 0 with both set (the caller puts them), or -1
 * out of memory (both NULL). */
int nl_view_violation_arrays(nl_engine *e, const char *instance,
                             const char *account, struct json_object **active,
                             struct json_object **resolved);

/* GET /api/violations over several accounts: the items of the arrays
 * (n of each, from nl_view_violation_arrays; borrowed) in one document,
 * active findings most severe first, then by account, stream and
 * consumer; the latest NL_RESOLVED_MAX resolved ones, latest first. */
char *nl_view_violations_merged(struct json_object *const *active,
                                struct json_object *const *resolved, size_t n,
                                const char *instance, int64_t now_ns,
                                size_t *len);

/* GET /api/streams: the streams and consumers of set (the latest poll,
 * taken at poll_ns; 0 when none happened yet), each consumer with its
 * snapshot, its running totals and active classes from e, and each stream
 * with its own active (stream-level) classes; a stream's health is the
 * worst of its own findings and its consumers'. Streams come most severe
 * first, then by name. */
char *nl_view_streams(const nl_snapshot_set *set, nl_engine *e,
                      const char *instance, int64_t poll_ns, int64_t now_ns,
                      size_t *len);

/* One stream of the /api/streams document, rendered on its own, so that a
 * request can select and page streams without rendering them again. */
typedef struct {
  char *text; /* The stream's JSON object, compact. */
  size_t len;
  char *problems; /* The same with only the consumers that have a finding. */
  size_t problems_len;
  int rank;      /* 0 critical, 1 warning, 2 ok. */
  char *names;   /* The stream's name, then its consumers', each ending '\n'. */
  char *account; /* The stream's account (SystemAccount), else NULL. */
} nl_view_stream_part;

/* The streams of one poll, most severe first, then by name. */
typedef struct {
  nl_view_stream_part *parts;
  size_t n;
  int64_t polled_ns;
  uint64_t unobservable;
} nl_view_streams_doc;

/* Renders every stream of set as in nl_view_streams, one part each, into
 * *out. Returns 0, or -1 out of memory (then *out holds nothing). */
int nl_view_streams_parts(const nl_snapshot_set *set, nl_engine *e,
                          int64_t poll_ns, nl_view_streams_doc *out);

/* The same for the streams of one account: each stream object and part
 * names the account. */
int nl_view_streams_parts_account(const nl_snapshot_set *set, nl_engine *e,
                                  const char *account, int64_t poll_ns,
                                  nl_view_streams_doc *out);

/* Moves the parts of the n documents docs into one, most severe first,
 * then by account and name (polled_ns is the latest, unobservable the
 * sum), and leaves each of docs empty. Returns 0, or -1 out of memory
 * (then *out holds nothing and docs are unchanged). */
int nl_view_streams_merge(nl_view_streams_doc *docs, size_t n,
                          nl_view_streams_doc *out);

void nl_view_streams_doc_free(nl_view_streams_doc *d);

/* Which streams a request asks for: from offset, at most limit (0: all),
 * whose name or a consumer's name holds q (ASCII case ignored; NULL or
 * empty: any), named exactly stream (NULL: any), in state "ok", "warning",
 * "critical" or "problem" (not ok; NULL: any), of account (NULL: any;
 * SystemAccount); with problems_only, each with only its consumers that
 * have a finding. */
typedef struct {
  size_t offset;
  size_t limit;
  const char *q;
  const char *state;
  const char *stream;
  bool problems_only;
  const char *account; /* Only the streams of this account (NULL: any). */
} nl_view_streams_query;

/* GET /api/streams with a query (NULL: everything): the document of
 * nl_view_streams, streams most severe first, with "total" (streams in the
 * poll), "matched" (streams the query selects) and "offset". */
char *nl_view_streams_page(const nl_view_streams_doc *d,
                           const nl_view_streams_query *q, const char *instance,
                           int64_t now_ns, size_t *len);

/* GET /api/history/<stream>/<consumer>: the samples in the consumer's
 * history ring, oldest first. Returns NULL and sets *found to false when
 * reg holds no such consumer (found is true on success and on memory
 * failure). */
char *nl_view_history(nl_registry *reg, const char *stream,
                      const char *consumer, const char *instance,
                      int64_t now_ns, bool *found, size_t *len);

/* The same, with the consumer's longer history (nl_series, may be NULL)
 * under "longer". */
char *nl_view_history_series(nl_registry *reg, const char *stream,
                             const char *consumer, const char *instance,
                             int64_t now_ns, const nl_series *longer,
                             bool *found, size_t *len);

#endif
