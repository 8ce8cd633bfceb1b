/* nl_finding.h: the delivery-violation classes and what a finding carries. */
#ifndef NL_FINDING_H
#define NL_FINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every class of finding, one row each: X(ID, SUFFIX, SEVERITY, SCOPE).
 * ID names the class (NL_ID, "ID"), SUFFIX its collectd types
 * (nats_lens_SUFFIX in types.db.d/nats_lens.db), SEVERITY is WARNING or
 * CRITICAL, SCOPE is CONSUMER or STREAM (a stream-level finding has no
 * consumer; for CONSUMER_EXPIRED the consumer no longer exists). What a
 * class detects, and how, is its definition nl_class_SUFFIX in a file of
 * its own under detect/ (detect/nl_class.h). The order of the rows is the
 * order classes are listed in (values, summaries, the REST API); no
 * detection depends on it. Adding a class: one row here, its file under
 * detect/, its types.db line, its docs section and its tests
 * (docs/architecture.md). */
#define NL_CLASS_LIST(X)                                                       \
  X(ACK_WAIT_VIOLATION, ack_wait_violation, CRITICAL, CONSUMER)                \
  X(SEQUENCE_GAP, sequence_gap, CRITICAL, CONSUMER)                            \
  X(MAX_PENDING_THROTTLE, max_pending_throttle, WARNING, CONSUMER)             \
  X(NAK_STORM, nak_storm, WARNING, CONSUMER)                                   \
  X(MISSING_PROGRESS, missing_progress, CRITICAL, CONSUMER)                    \
  X(MAX_DELIVER_EXHAUSTED, max_deliver_exhausted, CRITICAL, CONSUMER)          \
  X(INTEREST_NO_CONSUMERS, interest_no_consumers, CRITICAL, STREAM)            \
  X(ACK_NONE_CONSUMER, ack_none_consumer, WARNING, CONSUMER)                   \
  X(ACK_ALL_PARALLEL, ack_all_parallel, WARNING, CONSUMER)                     \
  X(PUSH_UNBOUND, push_unbound, WARNING, CONSUMER)                             \
  X(RETENTION_RISK, retention_risk, WARNING, CONSUMER)                         \
  X(CONSUMER_UNOBSERVABLE, consumer_unobservable, WARNING, STREAM)             \
  X(STREAM_SINGLE_REPLICA, stream_single_replica, WARNING, STREAM)             \
  X(PUBLISH_REJECTED, publish_rejected, WARNING, STREAM)                       \
  X(CONSUMER_SINGLE_REPLICA, consumer_single_replica, WARNING, CONSUMER)       \
  X(SOURCE_STALLED, source_stalled, CRITICAL, STREAM)                          \
  X(RATE_LIMITED, rate_limited, WARNING, CONSUMER)                             \
  X(CONSUMER_EXPIRING, consumer_expiring, WARNING, CONSUMER)                   \
  X(CONSUMER_EXPIRED, consumer_expired, CRITICAL, STREAM)                      \
  X(MESSAGES_SKIPPED, messages_skipped, CRITICAL, CONSUMER)                    \
  X(MESSAGES_STRANDED, messages_stranded, WARNING, STREAM)                     \
  X(MESSAGES_DISCARDED, messages_discarded, WARNING, CONSUMER)                 \
  X(CONSUMER_PAST_STREAM, consumer_past_stream, CRITICAL, CONSUMER)            \
  X(STREAM_WENT_BACK, stream_went_back, CRITICAL, STREAM)                      \
  X(DELIVERY_STALLED, delivery_stalled, WARNING, CONSUMER)                     \
  X(STORAGE_LIMIT_RISK, storage_limit_risk, WARNING, STREAM)                   \
  X(STORAGE_LIMIT_REACHED, storage_limit_reached, CRITICAL, STREAM)            \
  X(STREAM_REPLICAS_AT_RISK, stream_replicas_at_risk, WARNING, STREAM)         \
  X(CONSUMER_REPLICAS_AT_RISK, consumer_replicas_at_risk, WARNING, CONSUMER)   \
  X(CONSUMER_THRESHOLD, consumer_threshold, CRITICAL, CONSUMER)                \
  X(STREAM_THRESHOLD, stream_threshold, CRITICAL, STREAM)

typedef enum {
#define NL_CLASS_ID(id, suffix, severity, scope) NL_##id,
  NL_CLASS_LIST(NL_CLASS_ID)
#undef NL_CLASS_ID
      NL_CLASS_COUNT
} nl_class;

/* A set of classes, one bit each (NL_CLASS_BIT). */
typedef uint64_t nl_class_mask;
#define NL_CLASS_BIT(cls) ((nl_class_mask)1 << (cls))
_Static_assert(NL_CLASS_COUNT <= 64, "nl_class_mask holds every class");

typedef enum {
  NL_SEVERITY_WARNING = 1,
  NL_SEVERITY_CRITICAL = 2,
} nl_severity;

#define NL_EVIDENCE_MAX 16
#define NL_TEXT_MAX 512
/* Room for a fix command naming a stream and a consumer of the server's
 * longest names (255 bytes), each quoted as one shell word. */
#define NL_FIX_MAX 2304

/* Room for the consumer name a stream-level finding is about. */
#define NL_ABOUT_MAX 256

/* One named number that proves a finding. The name is a static string. */
typedef struct {
  const char *name;
  double value;
} nl_evidence;

typedef struct {
  nl_class cls;
  nl_severity severity;
  int64_t since_ns; /* Poll time of the onset. */
  nl_evidence evidence[NL_EVIDENCE_MAX];
  int n_evidence;
  char description[NL_TEXT_MAX];
  char fix_command[NL_FIX_MAX];
  char recommendation[NL_TEXT_MAX]; /* The recommended value, and how. */
  /* The consumer a stream-level finding is about, for its headline
   * (CONSUMER_EXPIRED: the consumer the server removed), cut to fit; ""
   * when none. */
  char about[NL_ABOUT_MAX];
  /* Kept by the engine while the finding is held (nl_engine.c): the
   * configuration (nl_config_key) at the latest poll its condition held,
   * 0 when not known; and, while its condition is missing, the poll time
   * it first was and how many polls in a row. */
  uint64_t config_key;
  int64_t absent_since_ns;
  uint32_t absent_polls;
  /* What it cost while held: messages lost and redeliveries counted since
   * its onset (the counters of its consumer, or its stream's lost count),
   * and those counters at the onset. */
  uint64_t lost;
  uint64_t redelivered;
  uint64_t onset_lost;
  uint64_t onset_redelivered;
  /* The earliest time the server's own data shows the condition holding,
   * when that is before since_ns (0: not known). Set by a detector as a
   * hint on each detection; the engine keeps the earliest. It does not
   * depend on when collectd started. */
  int64_t condition_since_ns;
} nl_finding;

/* Returns true when f is held and its condition held at the latest poll
 * (not only kept by the engine's clearing hold). */
static inline bool nl_finding_holding(const nl_finding *f) {
  return f != NULL && f->absent_polls == 0;
}

/* Returns the class name ("ACK_WAIT_VIOLATION", ...), or "UNKNOWN". */
const char *nl_class_name(nl_class cls);

/* Returns the lower-case class name used in collectd type names
 * ("ack_wait_violation", ...). */
const char *nl_class_type_suffix(nl_class cls);

/* Returns the fixed severity of a class. */
nl_severity nl_class_severity(nl_class cls);

/* Returns true for a class about a stream as a whole: its findings have no
 * consumer (the consumer name is NL_STREAM_FINDING_CONSUMER). */
bool nl_class_is_stream(nl_class cls);

/* The consumer name that stream-level findings carry in transitions. */
#define NL_STREAM_FINDING_CONSUMER ""

/* Returns "critical" or "warning". */
const char *nl_severity_name(nl_severity sev);

/* Empties f and gives it class cls with the class's severity. */
void nl_finding_start(nl_finding *f, nl_class cls);

/* Appends one evidence number to f; extra entries past NL_EVIDENCE_MAX are
 * dropped. name must be a static string. */
void nl_finding_add(nl_finding *f, const char *name, double value);

/* Returns the value of the named evidence number, or def when absent. */
double nl_finding_get(const nl_finding *f, const char *name, double def);

/* Sets evidence name of f to value: the existing entry, else a new one as
 * nl_finding_add. */
void nl_finding_set(nl_finding *f, const char *name, double value);

/* Writes "name=value, name=value" for the evidence into buf (always
 * NUL-terminated), whole items only: when they do not all fit, the last
 * that fits is followed by ", ..." (or buf is left empty). Returns buf. */
char *nl_finding_format_evidence(const nl_finding *f, char *buf, size_t len);

/* Takes f's fix command back when it would not do what it says: when the
 * stream or the consumer (NULL or "" for none) has a name the nats CLI
 * would not take as it is (nl_cli_name_usable), or the command did not
 * fit. The recommendation then says why no command is printed. */
void nl_finding_guard_fix(nl_finding *f, const char *stream,
                          const char *consumer);

#endif
