/* nl_removal.c: what removed messages from a stream (see nl_removal.h). */
#include "nl_removal.h"

bool nl_removal_stream_full(const nl_stream_snap *s) {
  if (s->discard_new)
    return false; /* Publishers get errors instead: nothing is removed. */
  return (s->max_msgs > 0 && s->msgs * 10 >= (uint64_t)s->max_msgs * 9) ||
         (s->max_bytes > 0 && s->bytes * 10 >= (uint64_t)s->max_bytes * 9);
}

/* True when the clock shows that seq was stored less than max_age before
 * removed_ns, so max_age cannot have removed it. */
static bool younger_than_max_age(const nl_stream_snap *s,
                                 const nl_seqclock *clock, uint64_t seq,
                                 int64_t removed_ns) {
  int64_t before_ns;
  return clock != NULL && nl_seqclock_stored_after(clock, seq, &before_ns) &&
         removed_ns - before_ns < s->max_age_ns;
}

nl_removal_cause nl_removal_cause_of(const nl_stream_snap *s,
                                     const nl_seqclock *clock, uint64_t seq,
                                     int64_t removed_ns) {
  if (nl_removal_stream_full(s))
    return s->max_msgs > 0 && s->msgs * 10 >= (uint64_t)s->max_msgs * 9
               ? NL_REMOVED_BY_MAX_MSGS
               : NL_REMOVED_BY_MAX_BYTES;
  /* max_age removes the oldest message first: with nothing gone from the
   * head (seq 0), it removed nothing. */
  if (s->max_age_ns > 0 && seq > 0 &&
      !younger_than_max_age(s, clock, seq, removed_ns))
    return NL_REMOVED_BY_MAX_AGE;
  if (s->allow_msg_ttl)
    return NL_REMOVED_BY_MSG_TTL;
  if (s->max_msgs_per_subject > 0)
    return NL_REMOVED_BY_SUBJECT_LIMIT;
  return NL_REMOVED_OTHERWISE;
}

nl_removal_cause nl_removal_unread_cause(const nl_stream_snap *s,
                                         const nl_seqclock *clock, uint64_t seq,
                                         int64_t removed_ns, uint64_t removed,
                                         uint64_t added) {
  nl_removal_cause cause = nl_removal_cause_of(s, clock, seq, removed_ns);
  if (cause == NL_REMOVED_OTHERWISE && s->allow_msg_schedules &&
      removed <= added)
    return NL_REMOVED_BY_SCHEDULE;
  return cause;
}

bool nl_removal_by_limit(nl_removal_cause cause) {
  return cause == NL_REMOVED_BY_MAX_MSGS || cause == NL_REMOVED_BY_MAX_BYTES ||
         cause == NL_REMOVED_BY_MAX_AGE;
}

bool nl_removal_is_loss(nl_removal_cause cause) {
  return nl_removal_by_limit(cause) || cause == NL_REMOVED_OTHERWISE;
}

const char *nl_removal_cause_name(nl_removal_cause cause) {
  switch (cause) {
  case NL_REMOVED_BY_MAX_MSGS:
    return "the stream's max_msgs limit";
  case NL_REMOVED_BY_MAX_BYTES:
    return "the stream's max_bytes limit";
  case NL_REMOVED_BY_MAX_AGE:
    return "the stream's max_age limit";
  case NL_REMOVED_BY_MSG_TTL:
    return "the message's own TTL";
  case NL_REMOVED_BY_SUBJECT_LIMIT:
    return "a newer message on its subject (max_msgs_per_subject)";
  case NL_REMOVED_BY_SCHEDULE:
    return "a scheduled message that fired (its schedule subject purged)";
  default:
    return "a purge or a message delete";
  }
}
