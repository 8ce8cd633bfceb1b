/* nl_advrun.c: the advisory path of one instance (see nl_advrun.h). */
#include "nl_advrun.h"

#include "nl_advsub.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records handed to feed at a time. */
#define BATCH 64

struct nl_advrun {
  nl_advqueue *q;
  nl_adv_feed_fn feed;
  void *ud;
  pthread_t thread;
  bool running;
  bool subscribed;
  /* Serialises feeding between the thread and nl_advrun_drain, so that
   * records reach feed in order. */
  pthread_mutex_t feed_lock;
};

/* Takes and feeds batches until the queue is empty. Returns how many. */
static size_t feed_all(nl_advrun *r) {
  nl_advisory batch[BATCH];
  size_t total = 0, n;
  pthread_mutex_lock(&r->feed_lock);
  while ((n = nl_advqueue_take(r->q, batch, BATCH)) > 0) {
    r->feed(r->ud, batch, n);
    total += n;
  }
  pthread_mutex_unlock(&r->feed_lock);
  return total;
}

static void *run(void *arg) {
  nl_advrun *r = arg;
  while (nl_advqueue_wait(r->q, 1000))
    feed_all(r);
  return NULL;
}

nl_advrun *nl_advrun_start(size_t cap, nl_adv_feed_fn feed, void *ud, char *err,
                           size_t errlen) {
  nl_advrun *r = calloc(1, sizeof(*r));
  if (r == NULL || (r->q = nl_advqueue_create(cap)) == NULL) {
    free(r);
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  r->feed = feed;
  r->ud = ud;
  pthread_mutex_init(&r->feed_lock, NULL);
  int rc = pthread_create(&r->thread, NULL, run, r);
  if (rc != 0) {
    snprintf(err, errlen, "cannot start the advisory thread: %s", strerror(rc));
    nl_advrun_free(r);
    return NULL;
  }
  r->running = true;
  return r;
}

int nl_advrun_subscribe(nl_advrun *r, nl_transport *t, char *err,
                        size_t errlen) {
  if (r->subscribed)
    return 0;
  r->subscribed = true;
  return nl_advsub_start(t, r->q, err, errlen);
}

size_t nl_advrun_drain(nl_advrun *r) { return r ? feed_all(r) : 0; }

void nl_advrun_stop(nl_advrun *r) {
  if (r == NULL || !r->running)
    return;
  nl_advqueue_close(r->q);
  pthread_join(r->thread, NULL);
  r->running = false;
}

void nl_advrun_free(nl_advrun *r) {
  if (r == NULL)
    return;
  nl_advrun_stop(r);
  pthread_mutex_destroy(&r->feed_lock);
  nl_advqueue_free(r->q);
  free(r);
}

void nl_advrun_counts(nl_advrun *r, nl_advqueue_counts *out) {
  nl_advqueue_get_counts(r->q, out);
}
