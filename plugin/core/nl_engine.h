/* nl_engine.h: one poll's snapshots through history and detectors.
 *
 * The engine owns the per-consumer registry. Each apply records every
 * consumer's snapshot, runs the detectors, and reports through a sink:
 * values per consumer and per stream, and a transition whenever a finding
 * starts or clears. It has no collectd or network calls. */
#ifndef NL_ENGINE_H
#define NL_ENGINE_H

#include "core/detect/nl_options.h"
#include "core/model/nl_advisory.h"
#include "core/model/nl_history.h"
#include "core/model/nl_snapshot.h"
#include "nl_sink.h"

typedef struct nl_engine nl_engine;

/* The reason of the clears of a consumer or stream whose leader is now
 * another server (Scope "server", nl_snapshot_set.elsewhere): its findings
 * are that server's agent's to judge, and the change is no fix. */
extern const char NL_REASON_LED_ELSEWHERE[];

/* Creates an engine with the given thresholds (copied). Returns NULL when
 * memory runs out. */
nl_engine *nl_engine_create(const nl_detect_params *params);
void nl_engine_free(nl_engine *e);

/* Applies one poll taken at now_ns. Consumers no longer listed are dropped
 * (their active findings clear with reason "consumer deleted"), except those
 * of streams whose consumer list was incomplete this poll, which are kept
 * unchanged, and those the set lists as led elsewhere: dropped with reason
 * NL_REASON_LED_ELSEWHERE, or kept when no server leads them. A stream
 * marked elsewhere gets no stream-level detection and no stream sink call;
 * its active stream-level findings clear with NL_REASON_LED_ELSEWHERE. Any sink
 * member may be NULL. Returns how many such unlisted consumers were kept
 * (unobservable this poll). */
size_t nl_engine_apply(nl_engine *e, const nl_snapshot_set *set, int64_t now_ns,
                       const nl_engine_sink *sink, void *ud);

/* Feeds one advisory (nl_advisory.h) received at now_ns into the engine:
 * records it for the consumer it names and raises at once what it proves
 * (MAX_DELIVER_EXHAUSTED, NAK_STORM), reporting transitions to sink; a
 * DELETED advisory clears the consumer's findings ("consumer deleted").
 * Advisories of consumers no poll has seen yet are counted and dropped.
 * Not thread-safe: serialise with nl_engine_apply. Returns true when the
 * advisory named a known consumer. */
bool nl_engine_advisory(nl_engine *e, const nl_advisory *a, int64_t now_ns,
                        const nl_engine_sink *sink, void *ud);

/* Takes in a consumer a CREATED advisory announced, read at now_ns:
 * set holds its stream (index 0) and the consumer (index 0, see
 * nl_advisory_fetch.h). A consumer the engine does not hold yet is recorded and
 * its configuration classes (ACK_NONE_CONSUMER, ACK_ALL_PARALLEL, and
 * ACK_WAIT_VIOLATION from a declared processing time) are raised at once,
 * reporting transitions to sink; the other classes wait for the next poll. A
 * consumer already held is left to the polls. Not thread-safe: serialise with
 * nl_engine_apply. Returns true when the consumer was taken in. */
bool nl_engine_created(nl_engine *e, const nl_snapshot_set *set, int64_t now_ns,
                       const nl_engine_sink *sink, void *ud);

/* Marks a gap in what the polls saw at now_ns (the connection to the server
 * was lost and made again: a restart, whose clients lost their messages
 * in flight, and whose consumers may report an ack floor restored from
 * older state): every consumer starts a new regime (nl_state_after_gap),
 * so that neither the orphans of the gap expiring nor a restored floor
 * are taken for recurring expiry or for a stuck long task. Findings stay
 * as they are. */
void nl_engine_gap(nl_engine *e, int64_t now_ns);

/* Returns the poll time the engine first held the consumer (its latest
 * incarnation) and sets *created_ns to its creation time, or returns 0
 * when the engine does not hold it. */
int64_t nl_engine_first_seen(nl_engine *e, const char *stream,
                             const char *consumer, int64_t *created_ns);

/* Returns true when the engine holds the consumer. */
bool nl_engine_knows(nl_engine *e, const char *stream, const char *consumer);

/* Advisories fed in, those of consumers not known yet, and those the polled
 * state contradicted (claims counted for nothing, see nl_advised_record). */
void nl_engine_advisory_counts(nl_engine *e, uint64_t *fed, uint64_t *unknown,
                               uint64_t *contradicted);

/* Fills *out with the ledger of the stream named stream (zeroes when none
 * is kept). */
void nl_engine_stream_ledger(nl_engine *e, const char *stream,
                             nl_stream_ledger *out);

/* Returns the active stream-level finding of class cls for the stream
 * named stream, or NULL. */
const nl_finding *nl_engine_stream_finding(nl_engine *e, const char *stream,
                                           nl_class cls);

/* One active finding: consumer is NULL for a stream-level one. The names
 * and the finding belong to the engine. */
typedef struct {
  const char *stream;
  const char *consumer;
  const nl_finding *f;
} nl_active;

/* Collects every active finding of the engine, consumer- and stream-level,
 * of the streams keep accepts (keep NULL: all), most severe first, then by
 * stream, consumer (stream-level first) and class, into *out (malloc'ed,
 * NULL when none) and *n. Returns 0, or -1 on allocation failure. The
 * entries are valid until the engine's next change. */
int nl_engine_active(nl_engine *e, bool (*keep)(const char *stream, void *ud),
                     void *ud, nl_active **out, size_t *n);

/* Returns how many streams the engine keeps totals for: those listed or
 * missing lately (streams gone for 10 minutes are forgotten). */
size_t nl_engine_streams_held(const nl_engine *e);

/* The k-th latest finding that cleared (0 is the latest), or NULL when
 * fewer than k + 1 did. Valid until the engine next changes. */
const nl_resolved *nl_engine_resolved(const nl_engine *e, size_t k);

/* Returns the registry (owned by the engine), for read-only views. */
nl_registry *nl_engine_registry(nl_engine *e);

/* Counts consumers held and active findings per class (stream-level
 * classes counted per stream). */
void nl_engine_counts(nl_engine *e, size_t *consumers,
                      size_t active[NL_CLASS_COUNT]);

#endif
