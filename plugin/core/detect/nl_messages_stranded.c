/* nl_messages_stranded.c: MESSAGES_STRANDED, messages a work-queue or
 * interest stream stores that no consumer will deliver: the stream has no
 * consumer at all, or its consumers' filters leave the subjects they are
 * on untaken. They stay until a limit removes them, or fill the stream.
 * The predicate is in docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_names.h"
#include "core/model/nl_subject.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* What the class keeps of a stream: since when the latest poll's count
 * of stranded messages has been above zero. */
typedef struct {
  int64_t since_ns; /* 0 while none are stranded. */
} stranded_state;

/* What one poll shows of stream x: the stranded messages, the subjects
 * they are on and the first of them (NULL: none, or no consumer at all),
 * and the consumers listed. Returns false when the poll cannot tell (its
 * consumers or its subject counts were not all read). */
typedef struct {
  uint64_t msgs, subjects, consumers;
  const char *first;
} stranded_count;

static bool count_stranded(const nl_stream_ctx *x, stranded_count *n) {
  const nl_stream_snap *s = x->s;
  *n = (stranded_count){0};
  if (!s->consumers_complete)
    return false;
  for (size_t j = 0; j < x->set->n_consumers; j++)
    n->consumers += x->set->consumers[j].stream_index == x->index;
  if (n->consumers == 0) {
    n->msgs = s->msgs;
    n->subjects = s->num_subjects;
    return true;
  }
  if (s->subject_counts_read) {
    n->msgs = nl_subject_uncovered(x->set, x->index, &n->subjects, &n->first);
    return true;
  }
  /* Asked for and not read: not known. Not asked for: every subject is
   * taken by some consumer's filter. */
  return !nl_subject_counts_wanted(x->set, x->index);
}

/* The finding for stream x with n stranded for held_s seconds. */
static void describe(const nl_stream_ctx *x, const stranded_count *n,
                     double held_s, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  nl_finding_start(f, NL_MESSAGES_STRANDED);
  nl_finding_add(f, "stranded", (double)n->msgs);
  nl_finding_add(f, "subjects", (double)n->subjects);
  nl_finding_add(f, "consumers", (double)n->consumers);
  nl_finding_add(f, "stranded_s", floor(held_s));
  nl_finding_add(f, "stream_msgs", (double)s->msgs);
  const char *kind =
      s->retention == NL_RETENTION_WORKQUEUE ? "work-queue" : "interest";
  char name[128], subject[128] = "";
  nl_printable(s->name, false, name, sizeof(name));
  if (n->first != NULL)
    nl_printable(n->first, false, subject, sizeof(subject));
  if (n->consumers == 0)
    snprintf(f->description, sizeof(f->description),
             "%s stream %s has held %" PRIu64
             " message(s) for %.0f s with no consumer at all: nothing will "
             "deliver them, and they stay until a limit removes them or "
             "they fill the stream",
             kind, name, n->msgs, held_s);
  else
    snprintf(f->description, sizeof(f->description),
             "%s stream %s has held %" PRIu64 " message(s) on %" PRIu64
             " subject(s) that none of its %" PRIu64
             " consumer(s) takes (first: %s) for %.0f s: no consumer will "
             "deliver them, and they stay until a limit removes them or "
             "they fill the stream",
             kind, name, n->msgs, n->subjects, n->consumers, subject, held_s);
  nl_shell_names q;
  nl_shell_names_of(s->name, "", &q);
  if (n->consumers == 0)
    snprintf(f->recommendation, sizeof(f->recommendation),
             "start the consumer that reads this stream (its application "
             "creates it), or, if nothing should, remove the messages "
             "(nats stream purge %s -f) and stop publishing to it",
             q.stream);
  else
    snprintf(f->recommendation, sizeof(f->recommendation),
             "create a consumer whose filter takes %s (and a client that "
             "reads it), or stop publishing to that subject; to drop what "
             "is there: nats stream purge %s --subject SUBJECT -f",
             subject, q.stream);
}

static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  *x->stranded = 0;
  if (s->retention != NL_RETENTION_WORKQUEUE &&
      s->retention != NL_RETENTION_INTEREST) {
    nl_class_state_drop(&nl_class_messages_stranded, state);
    return false;
  }
  const nl_finding *held = x->held[NL_MESSAGES_STRANDED];
  stranded_count n;
  if (!count_stranded(x, &n)) {
    /* No new evidence either way: a held finding holds. */
    if (held == NULL)
      return false;
    *f = *held;
    return true;
  }
  *x->stranded = n.msgs;
  stranded_state *k = *state;
  if (n.msgs == 0) {
    if (k != NULL)
      k->since_ns = 0;
    return false;
  }
  if ((k = nl_class_state(&nl_class_messages_stranded, state)) == NULL)
    return false;
  if (k->since_ns == 0)
    k->since_ns = x->now_ns;
  double held_s = nl_seconds(x->now_ns - k->since_ns);
  if (held_s < x->p->stranded_s)
    return false;
  describe(x, &n, held_s, f);
  return true;
}

static const nl_option options[] = {
    {"StrandedSeconds", NL_OPTION_NUMBER, 7 * 86400.0, NULL, 600.0,
     offsetof(nl_detect_params, stranded_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_messages_stranded = {
    .cls = NL_MESSAGES_STRANDED,
    .state_size = sizeof(stranded_state),
    .detect_stream = detect_stream,
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
    .options = options,
};
