/* nl_event.h: health events as JSON text, and the subjects they go to.
 *
 * Each state change of a finding becomes one JSON message on
 * "<prefix>.violations.<stream>.<consumer>"; a periodic summary (counts per
 * class) goes to "<prefix>.summary". The schema is in docs/health-events.md.
 * Everything here is pure: json-c only, no network and no collectd. */
#ifndef NL_EVENT_H
#define NL_EVENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/model/nl_finding.h"

/* The default subject prefix, the one the research tool used. */
#define NL_EVENT_PREFIX_DEFAULT "nats.lens.health"
/* Longest prefix accepted, in bytes. */
#define NL_EVENT_PREFIX_MAX 200
/* Longest stream or consumer token in a subject, in bytes. Longer names are
 * cut and given a hash suffix (see nl_name_token). */
#define NL_EVENT_TOKEN_MAX 128
/* Room for any subject nl_event_subject builds. */
#define NL_EVENT_SUBJECT_MAX                                                   \
  (NL_EVENT_PREFIX_MAX + sizeof(".violations..") + 2 * NL_EVENT_TOKEN_MAX)

/* One state change of a finding. */
typedef struct {
  const char *instance; /* The collectd Instance block name. */
  /* The account the stream belongs to (SystemAccount mode), else NULL. */
  const char *account;
  /* Scope "server": the server whose agent judged it, else NULL. */
  const char *server;
  const char *stream;
  const char *consumer;
  const nl_finding *finding; /* For a clear, the last active version. */
  bool firing;               /* true: started; false: resolved. */
  /* Scope "server": an onset after the consumer's leader moved to this
   * agent's server ("takeover": true), or, for a clear, the leader moved
   * away (state "handed_over" instead of "resolved": no fix). */
  bool takeover;
  bool handed_over;
  const char *reason; /* NULL, or why it cleared without detection. */
  int64_t at_ns;      /* Time of the change (ns since the epoch). */
} nl_event;

/* Counts for one summary message. */
typedef struct {
  const char *instance;
  const char *account; /* As in nl_event: NULL unless SystemAccount. */
  const char *server;  /* As in nl_event: NULL unless Scope "server". */
  int64_t at_ns;
  size_t consumers; /* Consumers watched. */
  size_t streams;   /* Streams seen in the latest poll. */
  size_t active[NL_CLASS_COUNT];
} nl_event_summary;

/* Returns true when prefix can start a subject: 1 to NL_EVENT_PREFIX_MAX
 * bytes of tokens separated by single '.', none empty, none holding white
 * space, control characters or a wildcard. */
bool nl_event_prefix_valid(const char *prefix);

/* Writes "<prefix>.violations.<stream>.<consumer>" into out. Names that
 * cannot stand as one subject token are replaced deterministically (see
 * nl_name_token), so the result never holds a wildcard and always has
 * exactly two tokens after ".violations."; an empty consumer (a
 * stream-level finding, NL_STREAM_FINDING_CONSUMER) is "-". Returns 0, or -1
 * when prefix is not valid or out is too small. */
int nl_event_subject(const char *prefix, const char *stream,
                     const char *consumer, char *out, size_t len);

/* Writes "<prefix>.summary" into out. Returns 0, or -1 as above. */
int nl_event_summary_subject(const char *prefix, char *out, size_t len);

/* Returns a new json-c object holding the event (the caller puts it), or
 * NULL when memory runs out. */
struct json_object *nl_event_object(const nl_event *ev);

/* Returns the finding's "violation" object: type, each evidence number,
 * fix_command and recommendation; or NULL when memory runs out. */
struct json_object *nl_event_violation_object(const nl_finding *f);

/* Returns the event as compact JSON text (malloc'd, the caller frees) and
 * sets *len, or returns NULL when memory runs out. */
char *nl_event_json(const nl_event *ev, size_t *len);

/* Returns the summary as compact JSON text (malloc'd) and sets *len, or
 * returns NULL when memory runs out. */
char *nl_event_summary_json(const nl_event_summary *s, size_t *len);

#endif
