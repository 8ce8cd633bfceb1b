/* nl_advisory.h: JetStream consumer advisories and ack metrics, parsed.
 *
 * The server publishes an advisory the moment certain consumer events
 * happen (a message reaching max_deliver, a NAK, a consumer created ...).
 * This parser turns one such message (its subject and JSON body) into a
 * compact, fixed-size record that can be queued between threads. It reads
 * untrusted text: any input gives a record or an error, never a crash. No
 * collectd, no network. */
#ifndef NL_ADVISORY_H
#define NL_ADVISORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  NL_ADV_MAX_DELIVER = 0, /* A message reached max_deliver. */
  NL_ADV_NAK,             /* A message was NAKed. */
  NL_ADV_TERMINATED,      /* A message was terminated (+TERM or limits). */
  NL_ADV_CREATED,         /* A consumer was created. */
  NL_ADV_DELETED,         /* A consumer was deleted. */
  NL_ADV_LEADER_ELECTED,  /* A clustered consumer got a new leader. */
  NL_ADV_QUORUM_LOST,     /* A clustered consumer lost its quorum. */
  NL_ADV_ACK_SAMPLE,      /* An ack metric (consumers with sample_freq). */
  /* The server's API audit of a successful consumer delete request
   * ($JS.EVENT.ADVISORY.API for $JS.API.CONSUMER.DELETE.<stream>.<name>):
   * someone deleted the consumer, the server did not remove it. */
  NL_ADV_API_DELETE,
  NL_ADV_KIND_COUNT
} nl_adv_kind;

/* Longest stream or consumer name kept in a record; advisories naming
 * longer ones are rejected. */
#define NL_ADV_NAME_MAX 255

/* Longest part of a MSG_TERMINATED "reason" kept in a record. */
#define NL_ADV_REASON_MAX 63

typedef struct {
  nl_adv_kind kind;
  char stream[NL_ADV_NAME_MAX + 1];
  char consumer[NL_ADV_NAME_MAX + 1];
  int64_t timestamp_ns; /* The server's "timestamp"; 0 when absent. */
  int64_t received_ns;  /* Set by the receiver (wall clock), not the parser. */
  uint64_t stream_seq;  /* 0 when the kind has none. */
  uint64_t consumer_seq;
  uint64_t deliveries;
  int64_t ack_time_ns; /* NL_ADV_ACK_SAMPLE: time from delivery to ack. */
  /* NL_ADV_TERMINATED: true when the server terminated the message because
   * the stream removed it (nats-server 2.10.4+ sends "reason" "Message
   * deleted by stream limits" or "Unacknowledged message was deleted");
   * false for a client +TERM (with or without a reason of its own) and for
   * servers that send no reason (2.9), whatever the cause. */
  bool removed_from_stream;
  /* NL_ADV_TERMINATED: the "reason" as sent, cut to NL_ADV_REASON_MAX bytes,
   * bytes outside printable ASCII as '?'; "" when absent or not a string. */
  char reason[NL_ADV_REASON_MAX + 1];
} nl_advisory;

/* The subjects to subscribe to, NULL-terminated (read only: the plugin
 * never publishes on them). */
extern const char *const nl_advisory_subjects[];

/* The subject of the server's API audit advisories, one for every API
 * request of the account (subscribed with the ApiAudit option only: each
 * carries the request and its reply). */
extern const char nl_advisory_api_subject[];

/* Returns false for a message of subject that can only be an API audit of
 * something other than a consumer delete (not to be parsed, nor counted as
 * rejected: every API request of the account sends one), true for anything
 * else. A cheap test of the raw text; nl_advisory_parse decides. */
bool nl_advisory_wanted(const char *subject, const char *data, size_t len);

/* Returns a short name of a kind ("max_deliver", "nak", ...). */
const char *nl_adv_kind_name(nl_adv_kind kind);

/* Parses one advisory. subject may be NULL; when given, its last two tokens
 * must name the same stream and consumer as the body (for an API audit, it
 * must be nl_advisory_api_subject, and the request's subject names them).
 * Returns 0 and fills *out (received_ns 0), or -1 with a one-line reason in err
 * for anything that is not a consumer advisory of a known type with valid
 * names. */
int nl_advisory_parse(const char *subject, const char *data, size_t len,
                      nl_advisory *out, char *err, size_t errlen);

#endif
