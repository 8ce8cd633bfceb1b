/* nl_publish_rejected.h: PUBLISH_REJECTED, a stream with discard new at one
 * of its limits, which refuses new publishes with an error that only the
 * publisher sees.
 *
 * The predicate, why it is right and what each nats-server version shows
 * are in docs/detectors.md. Pure functions of their inputs. */
#ifndef NL_PUBLISH_REJECTED_H
#define NL_PUBLISH_REJECTED_H

#include "core/model/nl_finding.h"
#include "core/model/nl_snapshot.h"

/* The limit a stream with discard new sits at. */
typedef enum {
  NL_FULL_NONE = 0, /* Room, or not discard new. */
  NL_FULL_MSGS,     /* messages >= max_msgs. */
  NL_FULL_BYTES,    /* A message of the stream's average size no longer
                       fits under max_bytes. */
  NL_FULL_SUBJECTS, /* Discard new per subject, and every subject the
                       stream holds is at max_msgs_per_subject. */
} nl_full_limit;

/* What PUBLISH_REJECTED keeps of a stream's previous poll (its class
 * state). */
typedef struct {
  bool have_prev;
  uint64_t last_seq;
  nl_full_limit limit;   /* At that poll. */
  int64_t full_since_ns; /* The first poll of the run at a limit, or 0. */
} nl_full_prev;

/* Returns the limit stream s sits at, read from its configuration and
 * state (see nl_full_limit), or NL_FULL_NONE. A write-once stream
 * (max_msgs_per_subject 1 with discard new per subject) at its
 * per-subject limit is not full: refusing a second message per subject is
 * what it is for. */
nl_full_limit nl_stream_full(const nl_stream_snap *s);

/* The run of polls at a limit brought to this poll of s at now_ns. */
nl_full_prev nl_full_next(const nl_full_prev *prev, const nl_stream_snap *s,
                          int64_t now_ns);

/* PUBLISH_REJECTED for stream s polled at now_ns; prev is what the
 * previous poll of it kept (have_prev false at the first). Raised while s
 * sits at a limit (nl_stream_full) and is not declared full by design
 * (nats_lens.full_ok); at max_bytes only once two polls in a row saw it
 * there with no message stored between them (a stream that takes messages
 * is not refusing them: nats-server 2.9 compares the payload alone against
 * the room left, and such a stream still stores a message and evicts its
 * oldest). Returns true and fills f (evidence, fix, how long it has been
 * full). */
bool nl_detect_publish_rejected(const nl_stream_snap *s,
                                const nl_full_prev *prev, int64_t now_ns,
                                nl_finding *f);

#endif
