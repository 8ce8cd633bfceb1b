/* nl_fix.h: the text of fix commands, one builder per change a finding or
 * an audit rule recommends, shared by the classes and the audit so that
 * the same fault is always fixed by the same command. Names are quoted
 * as shell words; nl_finding_guard_fix takes back a command whose names
 * the nats CLI would not take. A test applies each command to a real
 * server (tests/integration/test_fix_commands.sh). */
#ifndef NL_FIX_H
#define NL_FIX_H

#include "core/model/nl_finding.h"
#include "core/model/nl_removal.h"
#include "core/model/nl_snapshot.h"

/* Writes into buf (len bytes) the fix of a NAK loop on consumer/stream:
 * `nats consumer edit` with max_deliver set. */
void nl_fix_nak(const char *stream, const char *consumer, double max_deliver,
                char *buf, size_t len);

/* Writes into buf the command that makes consumer c's first redelivery
 * come after ack_wait_s seconds (names shell-quoted): --wait, or for a
 * consumer with a backoff (whose first step the server uses as ack_wait) a
 * linear backoff of as many steps starting there. */
void nl_fix_ack_wait(const nl_consumer_snap *c, double ack_wait_s, char *buf,
                     size_t len);

/* The first redelivery delay consumer c's declared processing time
 * (nats_lens.max_processing, nl_expect.h) asks for: 1.5 x it, in whole
 * seconds rounded up; 0 when it declares none (or one that cannot be
 * read). */
double nl_fix_declared_ack_wait_s(const nl_consumer_snap *c);

/* Writes into f's fix_command and recommendation what keeps stream s from
 * removing messages consumer c has not received, for a removal whose cause
 * is known: the limit's change for a limit (lost_total messages already
 * lost and c's backlog size the new max_msgs); for any other cause no fix
 * command (no setting would have kept the messages) and a recommendation
 * that names the cause. */
void nl_fix_removal(const nl_consumer_snap *c, const nl_stream_snap *s,
                    nl_removal_cause cause, uint64_t lost_total, nl_finding *f);

/* The same without a polled history: the cause nl_removal_cause_of gives
 * without a sequence clock (the limit that is at least 90 % used:
 * max_msgs, else max_bytes, else max_age). */
void nl_fix_limit(const nl_consumer_snap *c, const nl_stream_snap *s,
                  uint64_t lost_total, nl_finding *f);

/* Writes into buf the command that creates a dead-letter stream keeping
 * the MAX_DELIVERIES advisories of c. */
void nl_fix_dead_letter(const nl_consumer_snap *c, char *buf, size_t len);

/* A consumer as a fix command creates it again: a durable pull consumer
 * with these settings, the nats CLI's defaults for the rest. */
typedef struct {
  const char *stream, *name;
  nl_ack_policy ack_policy;
  int64_t ack_wait_ns;
  int64_t max_deliver;           /* <= 0: unlimited (not given). */
  int64_t max_ack_pending;       /* <= 0: the default (not given). */
  int64_t inactive_threshold_ns; /* 0: none (not given). */
  const char *filter;            /* Its one filter subject; "" for none. */
} nl_fix_consumer;

/* Writes into buf the `nats consumer add ... --pull --defaults` that
 * creates k starting at stream sequence start (--deliver START; 0:
 * --deliver all), prefixed by the `nats consumer rm -f` that deletes the
 * one of that name first when remove_first. Returns false, with buf empty,
 * when the nats CLI would not take the consumer's name. */
bool nl_fix_consumer_add(const nl_fix_consumer *k, uint64_t start,
                         bool remove_first, char *buf, size_t len);

/* Writes into buf the command that deletes polled consumer c and creates
 * it again starting at stream sequence start, with its settings
 * (nl_fix_consumer_add). Returns false, with buf empty, when the command
 * cannot say what c is: a push consumer, or one with several filters. */
bool nl_fix_consumer_recreate(const nl_consumer_snap *c, uint64_t start,
                              char *buf, size_t len);

#endif
