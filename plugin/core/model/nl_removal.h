/* nl_removal.h: what removed messages from a stream, as far as its polled
 * state tells without reading a message.
 *
 * A stream removes a message when one of its limits is reached (max_msgs
 * or max_bytes with discard old, max_age), when the message's own TTL runs
 * out (nats-server 2.11+, allow_msg_ttl), when a newer message on its
 * subject replaces it (max_msgs_per_subject, as in a key-value bucket),
 * when it is a scheduled message that fired (nats-server 2.12+,
 * allow_msg_schedules: the server stores the message on its target
 * subject and purges the schedule), and when it is purged or deleted.
 * Only a limit is a setting that a fix can change; a TTL, a per-subject
 * replacement and a schedule are the publisher's design, and no setting
 * prevents a purge. SEQUENCE_GAP counts a loss, and prints its fix, by
 * this attribution (docs/detectors.md). Pure functions. */
#ifndef NL_REMOVAL_H
#define NL_REMOVAL_H

#include "nl_seqclock.h"
#include "nl_snapshot.h"

typedef enum {
  NL_REMOVED_BY_MAX_MSGS = 0,
  NL_REMOVED_BY_MAX_BYTES,
  NL_REMOVED_BY_MAX_AGE,
  NL_REMOVED_BY_MSG_TTL,       /* The message's own TTL. */
  NL_REMOVED_BY_SUBJECT_LIMIT, /* A newer message on its subject. */
  NL_REMOVED_BY_SCHEDULE,      /* A scheduled message that fired. */
  NL_REMOVED_OTHERWISE,        /* A purge or a message delete. */
} nl_removal_cause;

/* True when stream s is within 10 % of its max_msgs or max_bytes and
 * discards old messages: each new message removes the oldest. */
bool nl_removal_stream_full(const nl_stream_snap *s);

/* The most likely cause of stream s's removal of sequence seq, which had
 * happened by removed_ns (a poll's time, or when an advisory about it
 * arrived), given the stream's sequence clock (NULL when none is kept).
 * A limit comes first: max_msgs or max_bytes when the stream is full
 * (nl_removal_stream_full), else max_age unless the clock shows that seq
 * was stored less than max_age before removed_ns (without a clock it
 * cannot be ruled out) or seq is 0 (nothing has left the stream's head,
 * where max_age removes). Without a limit: the
 * message's TTL when the stream allows one, a newer message on its
 * subject when the stream has max_msgs_per_subject, else a purge or
 * delete. */
nl_removal_cause nl_removal_cause_of(const nl_stream_snap *s,
                                     const nl_seqclock *clock, uint64_t seq,
                                     int64_t removed_ns);

/* The cause of the removal of `removed` messages a consumer had not
 * received, the newest of them seq, from stream s by removed_ns, in an
 * interval in which the stream added `added` sequences: as
 * nl_removal_cause_of, except that on a stream with allow_msg_schedules
 * what it takes for a purge or delete is a scheduled message that fired
 * when removed <= added. A schedule that fires stores one message (on
 * its target) as it removes one (itself), and a new schedule on the same
 * subject replaces the one before, so a stream removes no more messages
 * for its schedules than it adds; a purge or delete of more is a loss. */
nl_removal_cause nl_removal_unread_cause(const nl_stream_snap *s,
                                         const nl_seqclock *clock, uint64_t seq,
                                         int64_t removed_ns, uint64_t removed,
                                         uint64_t added);

/* True for the three limits, which a fix can raise. */
bool nl_removal_by_limit(nl_removal_cause cause);

/* True when a message a consumer had not received (or not acked) that
 * left the stream for this cause is lost to it: by a limit, a purge or a
 * delete. A TTL, a newer message on the subject or a schedule that fired
 * is the design. */
bool nl_removal_is_loss(nl_removal_cause cause);

/* The cause in words, for descriptions ("the stream's max_msgs limit",
 * "the message's own TTL", "a purge or a message delete", ...). */
const char *nl_removal_cause_name(nl_removal_cause cause);

#endif
