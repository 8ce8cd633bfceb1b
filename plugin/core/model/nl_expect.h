/* nl_expect.h: what a team declares about a consumer that the server cannot
 * know (how long processing takes, how many workers share it, where
 * exhausted messages go).
 *
 * Declarations live in the consumer's metadata under keys starting with
 * "nats_lens." (nats-server 2.10 and later); for older servers, or to
 * override, the same declarations can be given as expectation specs
 * ("STREAM/CONSUMER:key=value") that are applied to a snapshot set as if the
 * server had returned them. Unknown "nats_lens." metadata keys are ignored.
 * Nothing here depends on collectd or on a network connection. */
#ifndef NL_EXPECT_H
#define NL_EXPECT_H

#include "nl_snapshot.h"

#define NL_EXPECT_PREFIX "nats_lens."

/* A consumer's declarations, read from its metadata. */
typedef struct {
  int64_t max_processing_ns; /* Longest processing time; 0: not declared. */
  int64_t workers;           /* Parallel workers; 0: not declared. */
  const char *dead_letter;   /* Where exhausted messages go (borrowed from
                                the snapshot); NULL: not declared. */
  /* The first declaration that could not be read: its key (without the
   * prefix) and value (borrowed), and why; bad_key is NULL when all were
   * read. */
  const char *bad_key;
  const char *bad_value;
  char bad_reason[128];
} nl_expectations;

/* One --expect option: globs for the stream and consumer names, and one
 * declaration (key without the prefix). All strings owned. */
typedef struct {
  char *stream_glob;
  char *consumer_glob;
  char *key;
  char *value;
} nl_expect_spec;

/* Parses a duration: a whole or decimal number of seconds ("30", "2.5"),
 * or Go syntax ("500ms", "30s", "1m30s", "2h"; units ns, us, ms, s, m, h).
 * Returns 0 and sets *out_ns (> 0), or -1 for anything else (empty,
 * negative, zero, unknown unit, overflow). */
int nl_parse_duration(const char *text, int64_t *out_ns);

/* Returns true when key (without the prefix) is a declaration this version
 * reads: "max_processing", "workers" or "dead_letter". */
bool nl_expect_key_known(const char *key);

/* Checks value for key (without the prefix). Returns 0, or -1 with the
 * reason in err. */
int nl_expect_check_value(const char *key, const char *value, char *err,
                          size_t errlen);

/* Reads c's declarations into out. Never fails: unreadable values are
 * reported in out->bad_key / bad_reason and otherwise treated as absent. */
void nl_expect_read(const nl_consumer_snap *c, nl_expectations *out);

/* A stream's declarations, read from its metadata (nats-server 2.10+) or
 * set by the plugin's StreamDeclaration option (any version). */
typedef struct {
  /* nats_lens.full_ok "true": the stream is full by design (its
   * publishers expect their publishes to be refused at its limits). */
  bool full_ok;
  /* As in nl_expectations: the first declaration that could not be read. */
  const char *bad_key;
  const char *bad_value;
  char bad_reason[128];
} nl_stream_expectations;

/* Returns true when key (without the prefix) is a stream declaration this
 * version reads: "full_ok". */
bool nl_expect_stream_key_known(const char *key);

/* Checks value for the stream declaration key (without the prefix).
 * Returns 0, or -1 with the reason in err. */
int nl_expect_stream_check_value(const char *key, const char *value, char *err,
                                 size_t errlen);

/* Reads s's declarations into out. Never fails, as nl_expect_read. */
void nl_expect_stream_read(const nl_stream_snap *s,
                           nl_stream_expectations *out);

/* Applies stream declarations, in order, to every stream of set whose name
 * matches the spec's stream glob (its consumer glob is not used): each is
 * set as metadata "nats_lens.KEY", replacing what the server returned.
 * Returns how many (spec, stream) pairs matched. */
size_t nl_expect_apply_streams(const nl_expect_spec *specs, size_t n,
                               nl_snapshot_set *set);

/* Parses "STREAM/CONSUMER:key=value" (globs allowed in both names; a key
 * may carry the "nats_lens." prefix) into out. Returns 0, or -1 with a
 * one-line reason in err (out is then empty). */
int nl_expect_parse_spec(const char *arg, nl_expect_spec *out, char *err,
                         size_t errlen);

/* Frees the strings of a spec and zeroes it. */
void nl_expect_spec_free(nl_expect_spec *spec);

/* Applies specs, in order, to every consumer of set whose stream and name
 * match: the declaration is set as metadata "nats_lens.KEY", replacing what
 * the server returned. Returns how many (spec, consumer) pairs matched;
 * matched[i] (when matched is not NULL) counts the matches of specs[i]. */
size_t nl_expect_apply(const nl_expect_spec *specs, size_t n,
                       nl_snapshot_set *set, size_t *matched);

#endif
