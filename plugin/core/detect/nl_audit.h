/* nl_audit.h: configuration-level risks, found in one snapshot.
 *
 * The audit looks at the configuration (and the current counts) of the
 * streams and consumers of a snapshot set, with the declarations of
 * nl_expect.h, and needs no traffic and no history. Its classes are a
 * namespace of their own, apart from the detector classes of nl_finding.h
 * (whose values the collectd plugin dispatches); findings carry the same
 * nl_finding fields. The rules, with their predicates and fixes, are in
 * docs/check.md. No collectd, no network. */
#ifndef NL_AUDIT_H
#define NL_AUDIT_H

#include "core/model/nl_finding.h"
#include "core/model/nl_select.h"
#include "core/model/nl_snapshot.h"

typedef enum {
  NL_AUDIT_ACK_NONE = 0,
  NL_AUDIT_ACK_ALL_PARALLEL,
  NL_AUDIT_MAX_DELIVER_UNLIMITED,
  NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER,
  NL_AUDIT_MAX_ACK_PENDING_TINY,
  NL_AUDIT_ACK_WAIT_BELOW_PROCESSING,
  NL_AUDIT_INTEREST_NO_CONSUMERS,
  NL_AUDIT_RETENTION_BELOW_BACKLOG,
  NL_AUDIT_R1_ON_CLUSTER,
  NL_AUDIT_PUSH_NO_HEARTBEAT,
  NL_AUDIT_INVALID_EXPECTATION,
  NL_AUDIT_UNOBSERVABLE,
  NL_AUDIT_CONSUMER_SINGLE_REPLICA,
  NL_AUDIT_CLASS_COUNT
} nl_audit_class;

/* Thresholds; nl_audit_params_default() gives the documented defaults. */
typedef struct {
  /* A bounded max_deliver up to this many attempts needs dead-letter
   * handling (MAX_DELIVER_NO_DEAD_LETTER). */
  int64_t tiny_max_deliver;
  /* A max_ack_pending below this is tiny (MAX_ACK_PENDING_TINY), unless
   * the consumer declares its workers. */
  int64_t min_max_ack_pending;
  /* RETENTION_BELOW_BACKLOG warns when a full stream's limit holds less
   * than backlog / this fraction. */
  double backlog_fraction;
} nl_audit_params;

void nl_audit_params_default(nl_audit_params *p);

/* Returns the class name ("ACK_NONE", ...), or "UNKNOWN". */
const char *nl_audit_class_name(nl_audit_class cls);

typedef struct {
  nl_audit_class cls;
  const char *stream;   /* Borrowed from the snapshot set. */
  const char *consumer; /* Borrowed; NULL for a finding about a stream. */
  nl_finding f;         /* f.cls is NL_CLASS_COUNT (not a detector class). */
} nl_audit_finding;

typedef struct {
  nl_audit_finding *items;
  size_t n;
  size_t cap;
} nl_audit_result;

/* Audits every stream of set that select chooses (NULL: all) and its
 * consumers, appending findings to out, streams in set order and each
 * stream's own findings before its consumers'. Streams that select leaves
 * out still count as dead-letter destinations. The findings borrow names
 * from set: use them only while set lives. Returns 0, or -1 when memory
 * runs out (out then holds what was found so far). */
int nl_audit_run(const nl_snapshot_set *set, const nl_stream_select *select,
                 const nl_audit_params *p, nl_audit_result *out);

/* Audits one stream (by index in set) or one consumer, like nl_audit_run
 * but only with the rules whose bits (1u << nl_audit_class) are set in
 * rules (0: every rule). The collectd plugin raises its configuration
 * classes through these, so that it and nats-lens-check never disagree.
 * Returns 0, or -1 when memory runs out. */
int nl_audit_stream(const nl_snapshot_set *set, size_t index,
                    const nl_audit_params *p, unsigned rules,
                    nl_audit_result *out);
int nl_audit_consumer(const nl_snapshot_set *set, size_t index,
                      const nl_audit_params *p, unsigned rules,
                      nl_audit_result *out);
/* Audits the stream set->missing_streams[index] (reported missing by
 * STREAM.LIST): the UNOBSERVABLE rule, when rules allow it. */
int nl_audit_missing_stream(const nl_snapshot_set *set, size_t index,
                            const nl_audit_params *p, unsigned rules,
                            nl_audit_result *out);

/* INTEREST_NO_CONSUMERS seen over one interval, for streams that do have
 * consumers: interest retention, last_seq rose since prev while the stored
 * messages did not grow, and the stream's consumers received nothing
 * (delivered_delta, the sum of their delivered.consumer_seq increases).
 * Returns true and fills f (f->cls NL_CLASS_COUNT, severity critical). */
bool nl_audit_interest_dropping(const nl_stream_snap *s,
                                const nl_stream_snap *prev,
                                uint64_t delivered_delta, nl_finding *f);

/* Returns true when consumer c has dead-letter handling in sight: it
 * declares nats_lens.dead_letter, or a stream of set (may be NULL) captures
 * its MAX_DELIVERIES advisories. */
bool nl_audit_dead_letter(const nl_snapshot_set *set,
                          const nl_consumer_snap *c);

/* Frees the findings and zeroes the result. */
void nl_audit_result_free(nl_audit_result *r);

/* Returns true when a subject of stream s captures subject (NATS wildcard
 * matching: '*' one token, '>' the rest). */
bool nl_stream_captures(const nl_stream_snap *s, const char *subject);

#endif
