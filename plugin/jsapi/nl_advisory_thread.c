/* nl_advisory_thread.c: the advisory path of one instance (see
 * nl_advisory_thread.h). */
#define _GNU_SOURCE /* pthread_setname_np */
#include "nl_advisory_thread.h"

#include "nl_advisory_subscribe.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records handed to feed at a time. */
#define BATCH 64

struct nl_advisory_thread {
  nl_advisory_queue *q;
  nl_adv_feed_fn feed;
  nl_adv_idle_fn idle;
  void *ud;
  size_t cap; /* Records the queue holds. */
  pthread_t thread;
  bool running;
  bool subscribed;
  /* Serialises feeding between the thread and nl_advisory_thread_drain, so that
   * records reach feed in order. */
  pthread_mutex_t feed_lock;
};

/* Takes and feeds batches until the queue is empty or max records were
 * fed (a queue that fills as fast as it is fed must not keep the caller).
 * Returns how many. */
static size_t feed_all(nl_advisory_thread *r, size_t max) {
  nl_advisory batch[BATCH];
  size_t total = 0, n;
  pthread_mutex_lock(&r->feed_lock);
  while (total < max &&
         (n = nl_advisory_queue_take(
              r->q, batch, max - total < BATCH ? max - total : BATCH)) > 0) {
    r->feed(r->ud, batch, n);
    total += n;
  }
  pthread_mutex_unlock(&r->feed_lock);
  return total;
}

static void *run(void *arg) {
  nl_advisory_thread *r = arg;
  while (nl_advisory_queue_wait(r->q, 1000)) {
    feed_all(r, r->cap);
    if (r->idle != NULL)
      r->idle(r->ud); /* Outside feed_lock: a drain never waits for it. */
  }
  return NULL;
}

nl_advisory_thread *nl_advisory_thread_start(size_t cap, nl_adv_feed_fn feed,
                                             nl_adv_idle_fn idle, void *ud,
                                             char *err, size_t errlen) {
  nl_advisory_thread *r = calloc(1, sizeof(*r));
  if (r == NULL || (r->q = nl_advisory_queue_create(cap)) == NULL) {
    free(r);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  r->cap = cap;
  r->feed = feed;
  r->idle = idle;
  r->ud = ud;
  pthread_mutex_init(&r->feed_lock, NULL);
  int rc = pthread_create(&r->thread, NULL, run, r);
  if (rc != 0) {
    snprintf(err, errlen, "cannot start the advisory thread: %s", strerror(rc));
    nl_advisory_thread_free(r);
    return NULL;
  }
  r->running = true;
  pthread_setname_np(r->thread, "nats_lens_adv"); /* Shown by ps and top. */
  return r;
}

int nl_advisory_thread_subscribe(nl_advisory_thread *r, nl_transport *t,
                                 bool api_audit, char *err, size_t errlen) {
  if (r->subscribed)
    return 0;
  r->subscribed = true;
  return nl_advisory_subscribe_start(t, r->q, api_audit, err, errlen);
}

size_t nl_advisory_thread_drain(nl_advisory_thread *r) {
  return r ? feed_all(r, r->cap) : 0;
}

void nl_advisory_thread_stop(nl_advisory_thread *r) {
  if (r == NULL || !r->running)
    return;
  nl_advisory_queue_close(r->q);
  pthread_join(r->thread, NULL);
  r->running = false;
}

void nl_advisory_thread_free(nl_advisory_thread *r) {
  if (r == NULL)
    return;
  nl_advisory_thread_stop(r);
  pthread_mutex_destroy(&r->feed_lock);
  nl_advisory_queue_free(r->q);
  free(r);
}

void nl_advisory_thread_counts(nl_advisory_thread *r,
                               nl_advisory_queue_counts *out) {
  nl_advisory_queue_get_counts(r->q, out);
}
