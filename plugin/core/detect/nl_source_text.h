/* nl_source_text.h: what a SOURCE_STALLED finding says (evidence,
 * description, fix command, recommendation) for the cause the rules of
 * nl_source_stalled.c found. */
#ifndef NL_SOURCE_TEXT_H
#define NL_SOURCE_TEXT_H

#include "core/model/nl_finding.h"
#include "core/model/nl_snapshot.h"

/* Why a link counts as stalled, weakest first (the finding names the
 * strongest of its links). */
typedef enum {
  NL_SOURCE_NONE = 0,
  /* The copy has heard nothing from the origin, not even its heartbeat. */
  NL_SOURCE_SILENT,
  /* Its latest delivery left messages waiting and it took none since. */
  NL_SOURCE_WAITING,
  /* The origin gained messages and the copy took none. */
  NL_SOURCE_STALLED_GAIN,
  /* A sourced stream took nothing since its origin was created, though
   * the origin holds messages. */
  NL_SOURCE_NEWER,
  /* The origin was seen deleted and created again, and the copy skipped
   * its messages or (a mirror) holds a position beyond them. */
  NL_SOURCE_RECREATED,
} nl_source_cause;

/* One link as the rules saw it at this poll. */
typedef struct {
  const nl_source_link *link;
  const nl_stream_snap *origin; /* NULL when not visible. */
  uint64_t lost;                /* Counted as skipped (a lower bound). */
  uint64_t origin_start;        /* The new origin started after this. */
  bool recreated;               /* The origin was seen created again. */
  bool ahead;             /* A mirror's position is beyond the origin's last. */
  int64_t no_progress_ns; /* Since the copy's last sequence last changed. */
  int64_t silent_ns;      /* Since the copy last heard from the origin. */
} nl_source_view;

/* Fills f (started as SOURCE_STALLED) for copy, whose link v has cause
 * cause, with links_stalled links of copy having one. */
void nl_source_finding(const nl_stream_snap *copy, nl_source_cause cause,
                       const nl_source_view *v, unsigned links_stalled,
                       nl_finding *f);

#endif
