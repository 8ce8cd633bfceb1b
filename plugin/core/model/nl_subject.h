/* nl_subject.h: NATS subjects and the wildcards of stream subjects and
 * consumer filters ("*" one token, ">" one or more trailing tokens), and
 * which of a stream's stored subjects no consumer takes. Pure functions. */
#ifndef NL_SUBJECT_H
#define NL_SUBJECT_H

#include "nl_snapshot.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether the subject filter (wildcards allowed) matches the literal
 * subject. */
bool nl_subject_matches(const char *filter, const char *subject);

/* Whether every subject that inner (wildcards allowed) matches is matched
 * by outer. */
bool nl_subject_covers(const char *outer, const char *inner);

/* Most subjects a stream may hold for the poll to ask for the count of
 * each (nl_subject_counts_wanted). */
#define NL_SUBJECT_COUNTS_MAX 1000

/* Whether the poll should ask for the message count of each subject of
 * stream i of set (STREAM.INFO with subjects_filter): a work-queue or
 * interest stream holding messages of at most NL_SUBJECT_COUNTS_MAX
 * subjects, whose consumers were all listed, each with its filters, none
 * of them unfiltered, and some subject of the stream no single filter
 * covers. Its consumers must be listed in set already. */
bool nl_subject_counts_wanted(const nl_snapshot_set *set, size_t i);

/* Of stream i of set, whose subject counts were read: the messages stored
 * on subjects none of its consumers takes, and how many such subjects;
 * *first (may be NULL) the first of them, or NULL. */
uint64_t nl_subject_uncovered(const nl_snapshot_set *set, size_t i,
                              uint64_t *subjects, const char **first);

#endif
