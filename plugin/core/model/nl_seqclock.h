/* nl_seqclock.h: when a stream's last sequence reached a value.
 *
 * The engine samples each max_age stream's last_seq at its polls, keeping
 * NL_SEQCLOCK_POINTS samples at least spacing_ns apart plus the latest, so
 * the samples reach back about twice max_age. From them it bounds the age
 * of a message from below without reading it: message n was stored no
 * later than the first poll that saw last_seq >= n. Pure data. */
#ifndef NL_SEQCLOCK_H
#define NL_SEQCLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define NL_SEQCLOCK_POINTS 32

typedef struct {
  int64_t t_ns[NL_SEQCLOCK_POINTS]; /* Ring, oldest at head when full. */
  uint64_t seq[NL_SEQCLOCK_POINTS];
  uint8_t n;
  uint8_t head;
  int64_t latest_ns; /* The latest poll, kept apart from the ring. */
  uint64_t latest_seq;
} nl_seqclock;

/* Records last_seq seen at now_ns. A sequence or time going back (the
 * stream was recreated or purged to a lower sequence) restarts the clock. */
void nl_seqclock_add(nl_seqclock *c, int64_t now_ns, uint64_t last_seq,
                     int64_t spacing_ns);

/* Sets *age_s to a lower bound on the age at now_ns of the message with
 * sequence seq, and returns true; returns false when no poll held has seen
 * seq stored yet. A message older than every sample held gets the age of
 * the oldest sample. */
bool nl_seqclock_age(const nl_seqclock *c, uint64_t seq, int64_t now_ns,
                     double *age_s);

/* Sets *age_s to an estimate of the age at now_ns of the message with
 * sequence seq, and returns true; returns false when no poll held has seen
 * seq stored yet. Between the last poll that had not seen it and the
 * first that had, the messages are taken as stored at an even pace, so
 * that the estimate of a steadily moving sequence grows steadily, where the
 * lower bound of nl_seqclock_age falls back at each poll held. It lies
 * between that lower bound and the upper bound the earlier poll gives; a
 * message older than every sample held gets the age of the oldest
 * sample. */
bool nl_seqclock_age_estimate(const nl_seqclock *c, uint64_t seq,
                              int64_t now_ns, double *age_s);

/* Sets *t_ns to the latest poll held at which message seq was not stored
 * yet (the last sequence was below it) and returns true: the message is
 * younger than that poll. Returns false when no poll held saw the stream
 * before seq. */
bool nl_seqclock_stored_after(const nl_seqclock *c, uint64_t seq,
                              int64_t *t_ns);

#endif
