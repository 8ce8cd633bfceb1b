/* nl_class.h: what a class of finding is, as the engine runs it.
 *
 * Each class is one definition (nl_class_def) in a file of its own under
 * detect/ (a close family of classes may share one), named
 * nl_class_<suffix> after its row in NL_CLASS_LIST (model/nl_finding.h).
 * A definition is a table of operations in the manner of an ops table:
 * the engine calls them, keeps the class's private state in a slot it
 * owns (one per consumer or stream, freed without knowing its type), and
 * decides from the definition's fields how a finding is raised, which
 * other classes it suppresses, and when it clears. No class is named in
 * the engine: it loops over the table (nl_class_defs, nl_classes.h).
 *
 * Detection at a poll, for each consumer (and likewise for each stream):
 * 1. every class's detect gives its finding from the traffic, if any;
 * 2. every class's configured gives its finding from the configuration
 *    and declarations alone, if any;
 * 3. in the order of precedence (a class before those it suppresses), a
 *    class raised from the traffic and not suppressed keeps its traffic
 *    finding, else takes its configuration finding; a class raised either
 *    way suppresses the traffic findings of the classes in its mask. A
 *    finding from the configuration is never suppressed: it is a fault
 *    whatever the traffic. The masks must not form a circle (a unit test
 *    checks the table);
 * 4. a class with a raise debounce is held back until its condition has
 *    held for raise_polls polls and raise_s seconds (while not held);
 * 5. the held findings follow (nl_lifecycle.h): raised at once, cleared
 *    once the condition has been missing for the clearing hold, or at once
 *    after a fix (the configuration changed).
 * Between polls an advisory may raise a class through its advised op (it
 * never clears one), and a consumer a CREATED advisory announced is judged
 * by the configured ops alone.
 *
 * Every operation is optional (NULL). They are pure functions of what they
 * are given and of their own state; none may keep a pointer into the poll.
 * A state is a zeroed allocation of state_size bytes, made by the class
 * when it first needs it (nl_class_state, nl_classes.h) and freed by the engine
 * with free() after release, when the consumer or stream goes, is reset, or (a
 * stream's) on the events of forget. */
#ifndef NL_CLASS_H
#define NL_CLASS_H

#include "core/model/nl_advisory.h"
#include "core/model/nl_finding.h"
#include "core/model/nl_forecast.h"
#include "core/model/nl_history.h"
#include "core/model/nl_seqclock.h"
#include "core/model/nl_snapshot.h"
#include "nl_configured.h"
#include "nl_params.h"

/* What the consumer classes see of one consumer. */
typedef struct nl_consumer_ctx {
  nl_consumer_state *st;       /* Its history, this poll included; its held
                                  findings are st->active. */
  const nl_consumer_snap *c;   /* This poll; NULL between polls. */
  const nl_stream_snap *s;     /* Its stream; NULL between polls. */
  const nl_snapshot_set *set;  /* The poll; NULL between polls. */
  size_t index;                /* Of c in set. */
  const nl_seqclock *clock;    /* The stream's sequence clock, or NULL. */
  const nl_forecast *forecast; /* This poll's (nl_forecast_observe); NULL
                                  between polls. */
  const nl_detect_params *p;
  int64_t now_ns;
  /* The configuration rules' findings for c, read once per poll; NULL
   * between polls. */
  nl_configured *configured;
  /* The state class cls keeps for the consumer's stream (the slot of its
   * stream record, as a stream class's is), for a class whose consumers
   * share what their stream remembers; NULL when it cannot be kept
   * (memory) or between polls. */
  void **(*stream_state)(const struct nl_consumer_ctx *x, nl_class cls);
  const void *lookup; /* For stream_state. */
} nl_consumer_ctx;

/* What the stream classes see of one stream. */
typedef struct nl_stream_ctx {
  const nl_snapshot_set *set;
  /* Its index in set->streams, or for a stream STREAM.LIST reported
   * missing (s NULL) in set->missing_streams. */
  size_t index;
  const nl_stream_snap *s; /* NULL for a missing stream. */
  const char *name;
  /* What its consumers received since the poll before, or
   * NL_DELIVERED_UNKNOWN. */
  uint64_t delivered_delta;
  /* Its running count of lost messages: a class that finds messages the
   * stream lost adds them (it is the cost of its findings). */
  uint64_t *lost_total;
  /* The messages it stores that no consumer will deliver, as the class
   * that finds them counts them at this poll (0: none or not known). */
  uint64_t *stranded;
  /* A stream of this poll by name, when listed and led by the polled
   * server (an origin of a mirror or source), else NULL. */
  const nl_stream_snap *(*stream_named)(const struct nl_stream_ctx *x,
                                        const char *name);
  const void *lookup; /* For stream_named. */
  const nl_detect_params *p;
  int64_t now_ns;
  nl_finding *const *held; /* Its held findings, by class. */
  nl_configured *configured;
} nl_stream_ctx;

/* A stream's delivered_delta when one of its consumers has no poll before
 * the latest: what its consumers received is not known. */
#define NL_DELIVERED_UNKNOWN UINT64_MAX

/* A consumer the poll no longer lists, handed to the class that keeps
 * what it leaves (gone): its history, its stream as listed with all its
 * consumers, and the poll's time. */
typedef struct {
  const nl_consumer_state *st;
  const nl_stream_snap *s;
  int64_t now_ns;
} nl_gone_ctx;

/* Events on which a stream class's state is forgotten (forget). */
#define NL_FORGET_ELSEWHERE 1u /* Another server leads the stream now. */
#define NL_FORGET_GONE 2u      /* The stream was not listed. */
#define NL_FORGET_RECREATED 4u /* The stream was created again. */

typedef struct nl_class_def {
  nl_class cls;      /* Its row of NL_CLASS_LIST. */
  size_t state_size; /* Of its private state; 0 for none. */
  /* Frees what a state points to (NULL: nothing does). */
  void (*release)(void *state);

  /* Consumer classes. The finding from this poll's traffic. */
  bool (*detect)(const nl_consumer_ctx *x, void **state, nl_finding *f);
  /* The finding from the consumer's configuration and declarations (also
   * for a consumer a CREATED advisory announced, with x->st's history
   * empty). */
  bool (*configured)(const nl_consumer_ctx *x, void **state, nl_finding *f);
  /* Between polls: the finding advisory a (just recorded) proves, with
   * x->c, x->s, x->set and x->forecast NULL. */
  bool (*advised)(const nl_consumer_ctx *x, void **state, const nl_advisory *a,
                  nl_finding *f);
  /* Keeps what advisory a says of the consumer (every advisory of a known
   * consumer is offered to every class). */
  void (*record)(nl_consumer_state *st, void **state, const nl_advisory *a);
  /* The consumer is gone: keeps what it leaves in the state of class
   * gone_to for its stream (to_state): a stream class's, or the class's
   * own state for the stream, which its consumers read through
   * stream_state (nl_consumer_ctx). Called for every consumer the poll
   * no longer lists whose stream is listed completely and not led
   * elsewhere, with its own state (NULL when it keeps none). */
  void (*gone)(const nl_gone_ctx *g, const void *state, void **to_state);
  nl_class gone_to;

  /* Stream classes. The finding from this poll of a listed stream. */
  bool (*detect_stream)(const nl_stream_ctx *x, void **state, nl_finding *f);
  /* The finding for a stream STREAM.LIST reported missing (nothing of it
   * was seen, so a held finding of the class clears only by its hold). */
  bool (*missing)(const nl_stream_ctx *x, void **state, nl_finding *f);
  /* What beside the stream's configuration a fix changes, mixed into the
   * configuration key (a held finding clears at once when the key
   * changes); NULL for nothing. */
  uint64_t (*key)(const void *state);
  /* Judged after the poll's consumers that are gone have been handed to
   * their gone ops, and only for streams where it keeps state or holds a
   * finding. */
  bool after_sweep;
  /* NL_FORGET_* events that drop the state of a stream (for a consumer
   * class: what it keeps for the stream, gone_to being itself). */
  unsigned forget;

  /* Raise debounce: a new finding waits until its condition has held on
   * raise_polls polls in a row over at least raise_s seconds (0: none). */
  unsigned raise_polls;
  double raise_s;
  /* The classes whose traffic findings it suppresses while raised. */
  nl_class_mask suppresses;
  /* The audit rules (nl_audit's bits) its configuration findings come
   * from (nl_configured_find). */
  unsigned audit_rules;
  /* Its configuration options, ended by NL_OPTION_END; NULL for none. */
  const nl_option *options;
} nl_class_def;

#endif
