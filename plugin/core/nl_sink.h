/* nl_sink.h: what the engine reports through, and the findings it keeps
 * after they cleared. */
#ifndef NL_SINK_H
#define NL_SINK_H

#include "core/model/nl_history.h"
#include "core/model/nl_snapshot.h"

/* What a stream's ledger holds at a poll: the running count of messages
 * its consumers lost, and the messages it stores that no consumer will
 * deliver (MESSAGES_STRANDED; 0 when none or not known). */
typedef struct {
  uint64_t lost_total;
  uint64_t stranded;
} nl_stream_ledger;

typedef struct {
  /* A consumer seen in this poll, after detection (st->active is current). */
  void (*consumer)(void *ud, const nl_consumer_snap *c, const nl_stream_snap *s,
                   const nl_consumer_state *st);
  /* A stream seen in this poll, with its ledger. Its stream-level classes
   * (nl_class_is_stream) are already detected: see nl_engine_stream_finding.
   * Their transitions carry the consumer NL_STREAM_FINDING_CONSUMER. */
  void (*stream)(void *ud, const nl_stream_snap *s,
                 const nl_stream_ledger *ledger);
  /* A finding started (active) or cleared (!active). For a clear, f is the
   * last active version. reason is NULL, or why a consumer's findings
   * cleared without a detection (for example "consumer deleted"). */
  void (*transition)(void *ud, const char *stream, const char *consumer,
                     const nl_finding *f, bool active, const char *reason);
  /* A consumer seen in this poll declares something (nats_lens.*
   * metadata) that cannot be read, and it was not told before
   * (nl_configured_bad_declaration): f says what, why, and the command that
   * writes a readable value. With the configuration classes on only. */
  void (*declaration)(void *ud, const char *stream, const char *consumer,
                      const nl_finding *f);
} nl_engine_sink;

/* A finding that cleared, as the engine keeps the latest NL_RESOLVED_MAX
 * of them (names owned by the engine). */
typedef struct {
  char *stream;
  char *consumer; /* NL_STREAM_FINDING_CONSUMER for a stream-level one. */
  nl_finding f;   /* As held when it cleared: since_ns, lost, redelivered. */
  int64_t resolved_ns;
  const char *reason; /* A string constant, or NULL (its condition ended). */
} nl_resolved;

#define NL_RESOLVED_MAX 32

#endif
