/* nl_finding.h: the delivery-violation classes and what a finding carries. */
#ifndef NL_FINDING_H
#define NL_FINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  NL_ACK_WAIT_VIOLATION = 0,
  NL_SEQUENCE_GAP,
  NL_MAX_PENDING_THROTTLE,
  NL_NAK_STORM,
  NL_MISSING_PROGRESS,
  /* Classes added with advisory-driven detection (docs/detectors.md). */
  NL_MAX_DELIVER_EXHAUSTED,
  NL_INTEREST_NO_CONSUMERS, /* Stream-level. */
  NL_ACK_NONE_CONSUMER,
  NL_ACK_ALL_PARALLEL,
  NL_PUSH_UNBOUND,
  NL_RETENTION_RISK,
  NL_CONSUMER_UNOBSERVABLE, /* Stream-level. */
  NL_STREAM_SINGLE_REPLICA, /* Stream-level. */
  NL_PUBLISH_REJECTED,      /* Stream-level. */
  NL_CONSUMER_SINGLE_REPLICA,
  NL_SOURCE_STALLED, /* Stream-level: the copy (mirror or sources). */
  NL_RATE_LIMITED,
  NL_CONSUMER_EXPIRING,
  NL_CONSUMER_EXPIRED, /* Stream-level: the consumer no longer exists. */
  NL_CLASS_COUNT
} nl_class;

typedef enum {
  NL_SEVERITY_WARNING = 1,
  NL_SEVERITY_CRITICAL = 2,
} nl_severity;

#define NL_EVIDENCE_MAX 16
#define NL_TEXT_MAX 512
/* Room for a fix command naming a stream and a consumer of the server's
 * longest names (255 bytes), each quoted as one shell word. */
#define NL_FIX_MAX 2304

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
