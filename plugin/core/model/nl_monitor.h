/* nl_monitor.h: the thresholds a team set for natscli's checks on a stream
 * or a consumer, as metadata "io.nats.monitor.*" (nats-server 2.10 and
 * later), read with the parse rules of natscli's monitor package (jsm.go
 * v0.4.1, which natscli v0.4.0 uses for `nats server check stream`,
 * `nats server check consumer` and `nats audit`).
 *
 * Only the keys nats-lens honours are read (docs/detectors.md,
 * STREAM_THRESHOLD and CONSUMER_THRESHOLD, lists them with their meaning);
 * other keys under the prefix are ignored. A value that cannot be read is
 * reported (the first one, in bad_*) and counts as not set. Nothing here
 * depends on collectd or on a network connection. */
#ifndef NL_MONITOR_H
#define NL_MONITOR_H

#include "nl_snapshot.h"

#define NL_MONITOR_PREFIX "io.nats.monitor."

/* Every key read, the prefix left out. */
typedef enum {
  NL_MON_ENABLED = 0, /* Both: "enabled", false turns the others off. */
  /* Consumer keys. */
  NL_MON_OUTSTANDING_ACK_CRITICAL,
  NL_MON_WAITING_CRITICAL,
  NL_MON_UNPROCESSED_CRITICAL,
  NL_MON_REDELIVERY_CRITICAL,
  NL_MON_LAST_DELIVERY_CRITICAL,
  NL_MON_LAST_ACK_CRITICAL,
  /* Stream keys. */
  NL_MON_MSGS_WARN,
  NL_MON_MSGS_CRITICAL,
  NL_MON_SUBJECTS_WARN,
  NL_MON_SUBJECTS_CRITICAL,
  NL_MON_LAG_CRITICAL,
  NL_MON_SEEN_CRITICAL,
  NL_MON_MIN_SOURCES,
  NL_MON_MAX_SOURCES,
  NL_MON_PEER_EXPECT,
  NL_MON_PEER_LAG_CRITICAL,
  NL_MON_PEER_SEEN_CRITICAL,
  NL_MON_KEY_COUNT
} nl_monitor_key;

/* How a key's value is read, as natscli reads it. */
typedef enum {
  NL_MON_INT,      /* Go strconv.Atoi: an optional sign and digits (int64). */
  NL_MON_UINT,     /* Go strconv.ParseUint base 10: digits only (uint64). */
  NL_MON_DURATION, /* jsm.go ParseDuration: "0", or number-unit pairs. */
  NL_MON_BOOL,     /* Go strconv.ParseBool: 1 t T TRUE true True, 0 f ... */
} nl_monitor_kind;

/* One value as read: n for INT, DURATION (nanoseconds) and BOOL (0 or 1),
 * u for UINT. A threshold of 0 or less is off, as in natscli. */
typedef struct {
  bool set;
  int64_t n;
  uint64_t u;
} nl_monitor_value;

typedef struct {
  nl_monitor_value v[NL_MON_KEY_COUNT];
  /* The key of the first value that could not be read (the full metadata
   * key, borrowed from the snapshot), its value (borrowed) and why;
   * bad_key is NULL when all were read. */
  const char *bad_key;
  const char *bad_value;
  nl_monitor_key bad; /* Which key bad_key is. */
  char bad_reason[96];
} nl_monitor;

/* The key's name without the prefix ("msgs-warn"), and how it is read. */
const char *nl_monitor_key_name(nl_monitor_key key);
nl_monitor_kind nl_monitor_key_kind(nl_monitor_key key);

/* The evidence names of the key's threshold ("msgs_warn",
 * "last_ack_critical_s": durations in seconds) and of a value of it that
 * cannot be read ("unreadable_msgs_warn"); static strings. */
const char *nl_monitor_key_evidence(nl_monitor_key key);
const char *nl_monitor_key_unreadable(nl_monitor_key key);

/* Reads text as kind into *out (set true). Returns 0, or -1 with the
 * reason in err (out unset). */
int nl_monitor_parse(nl_monitor_kind kind, const char *text,
                     nl_monitor_value *out, char *err, size_t errlen);

/* Reads the keys of a stream (stream true) or of a consumer, and
 * "enabled", among the n metadata entries of meta into out; never fails
 * (see bad_key). */
void nl_monitor_read(const nl_meta *meta, size_t n, bool stream,
                     nl_monitor *out);

/* Whether the team turned natscli's checks off for the object
 * ("enabled" read as false). */
bool nl_monitor_disabled(const nl_monitor *m);

/* Whether any threshold or a bad value is there to judge. */
bool nl_monitor_any(const nl_monitor *m);

#endif
