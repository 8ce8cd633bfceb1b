/* nl_subject.c: subjects and their wildcards (see nl_subject.h). */
#include "nl_subject.h"

#include <string.h>

/* The length of the token at p (up to the next '.' or the end). */
static size_t token_len(const char *p) { return strcspn(p, "."); }

/* Moves *p past its token and the '.' after it; false at the end. */
static bool next_token(const char **p, size_t n) {
  *p += n;
  if (**p == '\0')
    return false;
  (*p)++;
  return true;
}

bool nl_subject_matches(const char *filter, const char *subject) {
  return nl_subject_covers(filter, subject);
}

bool nl_subject_covers(const char *outer, const char *inner) {
  const char *o = outer, *i = inner;
  for (;;) {
    size_t on = token_len(o), in = token_len(i);
    if (on == 1 && o[0] == '>')
      return in > 0; /* One or more tokens left: all covered. */
    if (in == 1 && i[0] == '>')
      return false; /* Only ">" covers ">". */
    bool same = on == 1 && o[0] == '*' ? in > 0
                                       : !(in == 1 && i[0] == '*') &&
                                             on == in && memcmp(o, i, on) == 0;
    if (!same)
      return false;
    bool o_more = next_token(&o, on), i_more = next_token(&i, in);
    if (!o_more || !i_more)
      return o_more == i_more;
  }
}

/* The consumers of stream i of set: calls fn for each filter subject of
 * each; returns false when one has none (unfiltered) or lost some
 * (filters_cut), or when a call returns false. */
static bool each_filter(const nl_snapshot_set *set, size_t i,
                        bool (*fn)(const char *filter, void *ud), void *ud,
                        size_t *n_consumers) {
  *n_consumers = 0;
  for (size_t j = 0; j < set->n_consumers; j++) {
    const nl_consumer_snap *c = &set->consumers[j];
    if (c->stream_index != i)
      continue;
    (*n_consumers)++;
    if (c->n_filters == 0 || c->filters_cut)
      return false;
    for (size_t k = 0; k < c->n_filters; k++)
      if (!fn(c->filters[k], ud))
        return false;
  }
  return true;
}

/* Whether the stream subject ud is covered by none of the filters seen:
 * each filter called with it clears the flag when it covers it. */
typedef struct {
  const char *subject;
  bool covered;
} cover_probe;

static bool probe_cover(const char *filter, void *ud) {
  cover_probe *p = ud;
  if (nl_subject_covers(filter, p->subject))
    p->covered = true;
  return true;
}

bool nl_subject_counts_wanted(const nl_snapshot_set *set, size_t i) {
  const nl_stream_snap *s = &set->streams[i];
  if ((s->retention != NL_RETENTION_WORKQUEUE &&
       s->retention != NL_RETENTION_INTEREST) ||
      !s->consumers_complete || s->elsewhere || s->msgs == 0 ||
      s->num_subjects > NL_SUBJECT_COUNTS_MAX || s->n_subjects == 0)
    return false;
  for (size_t k = 0; k < s->n_subjects; k++) {
    cover_probe p = {s->subjects[k], false};
    size_t n;
    if (!each_filter(set, i, probe_cover, &p, &n) || n == 0)
      return false; /* Unfiltered: every subject taken; none: no filter. */
    if (!p.covered)
      return true;
  }
  return false;
}

static bool probe_match(const char *filter, void *ud) {
  cover_probe *p = ud;
  if (nl_subject_matches(filter, p->subject))
    p->covered = true;
  return true;
}

uint64_t nl_subject_uncovered(const nl_snapshot_set *set, size_t i,
                              uint64_t *subjects, const char **first) {
  const nl_stream_snap *s = &set->streams[i];
  uint64_t msgs = 0, n_subjects = 0;
  if (first != NULL)
    *first = NULL;
  for (size_t k = 0; k < s->n_subject_counts; k++) {
    cover_probe p = {s->subject_counts[k].subject, false};
    size_t n;
    if (!each_filter(set, i, probe_match, &p, &n))
      p.covered = true; /* An unfiltered consumer takes everything. */
    if (p.covered || s->subject_counts[k].count == 0)
      continue;
    msgs += s->subject_counts[k].count;
    n_subjects++;
    if (first != NULL && *first == NULL)
      *first = p.subject;
  }
  if (subjects != NULL)
    *subjects = n_subjects;
  return msgs;
}
