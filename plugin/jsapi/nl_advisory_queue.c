/* nl_advisory_queue.c: a bounded, mutex-guarded ring of advisories. */
#include "nl_advisory_queue.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct nl_advisory_queue {
  pthread_mutex_t lock;
  pthread_cond_t nonempty;
  nl_advisory *ring;
  size_t cap;
  size_t head; /* Index of the oldest record. */
  size_t n;
  bool closed;
  nl_advisory_queue_counts counts;
};

nl_advisory_queue *nl_advisory_queue_create(size_t cap) {
  nl_advisory_queue *q = calloc(1, sizeof(*q));
  if (q == NULL)
    return NULL;
  q->cap = cap ? cap : 1;
  q->ring = calloc(q->cap, sizeof(*q->ring));
  if (q->ring == NULL) {
    free(q);
    return NULL;
  }
  pthread_mutex_init(&q->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&q->nonempty, &attr);
  pthread_condattr_destroy(&attr);
  return q;
}

void nl_advisory_queue_free(nl_advisory_queue *q) {
  if (q == NULL)
    return;
  pthread_cond_destroy(&q->nonempty);
  pthread_mutex_destroy(&q->lock);
  free(q->ring);
  free(q);
}

bool nl_advisory_queue_push(nl_advisory_queue *q, const nl_advisory *a) {
  pthread_mutex_lock(&q->lock);
  bool ok = !q->closed && q->n < q->cap;
  if (ok) {
    q->ring[(q->head + q->n) % q->cap] = *a;
    q->n++;
    q->counts.received++;
    pthread_cond_signal(&q->nonempty);
  } else {
    q->counts.dropped++;
  }
  pthread_mutex_unlock(&q->lock);
  return ok;
}

size_t nl_advisory_queue_take(nl_advisory_queue *q, nl_advisory *out,
                              size_t max) {
  pthread_mutex_lock(&q->lock);
  size_t k = 0;
  for (; k < max && q->n > 0; k++) {
    out[k] = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->n--;
  }
  pthread_mutex_unlock(&q->lock);
  return k;
}

bool nl_advisory_queue_wait(nl_advisory_queue *q, int64_t timeout_ms) {
  struct timespec until;
  clock_gettime(CLOCK_MONOTONIC, &until);
  until.tv_sec += timeout_ms / 1000;
  until.tv_nsec += (timeout_ms % 1000) * 1000000;
  if (until.tv_nsec >= 1000000000) {
    until.tv_sec++;
    until.tv_nsec -= 1000000000;
  }
  pthread_mutex_lock(&q->lock);
  while (q->n == 0 && !q->closed &&
         pthread_cond_timedwait(&q->nonempty, &q->lock, &until) == 0)
    ;
  bool open = !q->closed;
  pthread_mutex_unlock(&q->lock);
  return open;
}

void nl_advisory_queue_close(nl_advisory_queue *q) {
  pthread_mutex_lock(&q->lock);
  q->closed = true;
  pthread_cond_broadcast(&q->nonempty);
  pthread_mutex_unlock(&q->lock);
}

void nl_advisory_queue_reject(nl_advisory_queue *q) {
  pthread_mutex_lock(&q->lock);
  q->counts.rejected++;
  pthread_mutex_unlock(&q->lock);
}

void nl_advisory_queue_get_counts(nl_advisory_queue *q,
                                  nl_advisory_queue_counts *out) {
  pthread_mutex_lock(&q->lock);
  *out = q->counts;
  pthread_mutex_unlock(&q->lock);
}
