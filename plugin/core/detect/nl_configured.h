/* nl_configured.h: the configuration rules' findings for one consumer or
 * stream at one poll.
 *
 * The configuration classes (ACK_NONE_CONSUMER, ACK_ALL_PARALLEL,
 * CONSUMER_SINGLE_REPLICA, INTEREST_NO_CONSUMERS, STREAM_SINGLE_REPLICA,
 * CONSUMER_UNOBSERVABLE, and ACK_WAIT_VIOLATION from a declared processing
 * time) are raised through the rules of nl_audit, so that the plugin and
 * nats-lens-check never disagree. The rules every class of the entity's
 * scope names (nl_class_def.audit_rules) run once, at the first class
 * that asks, and each class takes its own rule's finding. Nothing runs
 * while the configuration classes are off. Pure; the engine serialises. */
#ifndef NL_CONFIGURED_H
#define NL_CONFIGURED_H

#include "core/model/nl_history.h"
#include "nl_audit.h"
#include "nl_params.h"

/* Which entity of the poll the rules read. */
typedef enum {
  NL_CONFIGURED_CONSUMER, /* set->consumers[index] */
  NL_CONFIGURED_STREAM,   /* set->streams[index] */
  NL_CONFIGURED_MISSING,  /* set->missing_streams[index] */
} nl_configured_kind;

typedef struct nl_configured {
  const nl_snapshot_set *set;
  nl_configured_kind kind;
  size_t index;
  bool on;        /* The configuration classes are on. */
  unsigned rules; /* The rules to run (nl_audit's bits). */
  const nl_audit_params *audit;
  nl_audit_result *scratch; /* Owned by the caller, reused. */
  bool ran;                 /* The rules ran for this entity. */
  bool failed;              /* ... and memory ran out. */
} nl_configured;

/* Sets k up for entity index of kind in set, to run rules (none while
 * config_classes is off) into scratch. */
void nl_configured_start(nl_configured *k, const nl_snapshot_set *set,
                         nl_configured_kind kind, size_t index, bool on,
                         unsigned rules, const nl_audit_params *audit,
                         nl_audit_result *scratch);

/* Returns the finding of audit rule rule for k's entity (running the
 * rules at the first call), or NULL when the rule does not hold or the
 * configuration classes are off. The finding borrows from the poll. */
const nl_finding *nl_configured_find(nl_configured *k, nl_audit_class rule);

/* Raises class cls from rule alone: when k's entity breaks the rule, fills
 * f with its finding under cls (nl_configured_take) and returns true. */
bool nl_configured_raise(nl_configured *k, nl_audit_class rule, nl_class cls,
                         nl_finding *f);

/* Takes the finding a of class cls raised from the configuration into f:
 * the audit's finding under the class (with the audit's severity, which
 * is the class's: a unit test keeps them equal). */
void nl_configured_take(const nl_finding *a, nl_class cls, nl_finding *f);

/* Whether consumer k (a consumer entity) declares something (nats_lens.*
 * metadata) that cannot be read and that was not told yet for st: then
 * fills f with the audit's INVALID_EXPECTATION finding (what cannot be
 * read, why, and the command that writes a readable value) and remembers
 * it in st->advised, so that it is told once, and again only when the
 * consumer declares another unreadable value or has declared none in
 * between. Such a declaration counts as not made. Nothing while the
 * configuration classes are off. Uses k's scratch (k's rules' findings
 * must be read before). */
bool nl_configured_bad_declaration(nl_configured *k, nl_consumer_state *st,
                                   nl_finding *f);

#endif
