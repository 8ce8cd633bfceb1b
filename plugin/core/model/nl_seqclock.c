/* nl_seqclock.c: when a stream's last sequence reached a value. */
#include "nl_seqclock.h"

#include <string.h>

/* The i-th sample of the ring, oldest first. */
static unsigned ring_index(const nl_seqclock *c, unsigned i) {
  return (c->head + i) % NL_SEQCLOCK_POINTS;
}

void nl_seqclock_add(nl_seqclock *c, int64_t now_ns, uint64_t last_seq,
                     int64_t spacing_ns) {
  if (c->n > 0 && (last_seq < c->latest_seq || now_ns < c->latest_ns))
    memset(c, 0, sizeof(*c));
  unsigned newest = c->n ? ring_index(c, c->n - 1u) : 0;
  if (c->n == 0 || now_ns - c->t_ns[newest] >= spacing_ns) {
    unsigned at;
    if (c->n < NL_SEQCLOCK_POINTS) {
      at = ring_index(c, c->n);
      c->n++;
    } else {
      at = c->head;
      c->head = (uint8_t)((c->head + 1) % NL_SEQCLOCK_POINTS);
    }
    c->t_ns[at] = now_ns;
    c->seq[at] = last_seq;
  }
  c->latest_ns = now_ns;
  c->latest_seq = last_seq;
}

bool nl_seqclock_age(const nl_seqclock *c, uint64_t seq, int64_t now_ns,
                     double *age_s) {
  if (c->n == 0 || c->latest_seq < seq)
    return false;
  int64_t seen_ns = c->latest_ns;
  for (unsigned i = 0; i < c->n; i++) {
    unsigned k = ring_index(c, i);
    if (c->seq[k] >= seq) {
      seen_ns = c->t_ns[k];
      break;
    }
  }
  *age_s = now_ns > seen_ns ? (double)(now_ns - seen_ns) / 1e9 : 0;
  return true;
}

bool nl_seqclock_age_estimate(const nl_seqclock *c, uint64_t seq,
                              int64_t now_ns, double *age_s) {
  if (c->n == 0 || c->latest_seq < seq)
    return false;
  /* The first poll held that had seen seq, and the one before it. */
  int64_t seen_ns = c->latest_ns, before_ns = 0;
  uint64_t seen_seq = c->latest_seq, before_seq = 0;
  bool have_before = false;
  for (unsigned i = 0; i < c->n; i++) {
    unsigned k = ring_index(c, i);
    if (c->seq[k] >= seq) {
      seen_ns = c->t_ns[k];
      seen_seq = c->seq[k];
      break;
    }
    have_before = true;
    before_ns = c->t_ns[k];
    before_seq = c->seq[k];
  }
  int64_t at_ns = seen_ns;
  if (have_before && seen_seq > before_seq && seen_ns > before_ns)
    at_ns = before_ns + (int64_t)((double)(seen_ns - before_ns) *
                                  (double)(seq - before_seq) /
                                  (double)(seen_seq - before_seq));
  *age_s = now_ns > at_ns ? (double)(now_ns - at_ns) / 1e9 : 0;
  return true;
}

bool nl_seqclock_stored_after(const nl_seqclock *c, uint64_t seq,
                              int64_t *t_ns) {
  if (c->n > 0 && c->latest_seq < seq) {
    *t_ns = c->latest_ns;
    return true;
  }
  for (unsigned i = c->n; i > 0; i--) {
    unsigned k = ring_index(c, i - 1);
    if (c->seq[k] < seq) {
      *t_ns = c->t_ns[k];
      return true;
    }
  }
  return false;
}
