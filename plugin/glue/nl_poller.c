/* nl_poller.c: the poll thread of one instance (see nl_poller.h). */
#include "nl_poller.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nl_poller {
  nl_poller_run_fn run;
  void *ud;
  pthread_t thread;
  /* Guards the fields below; held only to change them, never for a poll. */
  pthread_mutex_t lock;
  pthread_cond_t wake;
  bool due;            /* A read asked for a poll that has not started. */
  bool stopping;       /* nl_poller_stop was called. */
  plugin_ctx_t ctx;    /* Its plugin context (interval, name). */
  cdtime_t started_at; /* When the poll in progress started; 0 if idle. */
  uint64_t overruns;
};

/* The thread: waits for a kick, runs the poll it asks for with the read's
 * context, and repeats until stopped. */
static void *poller_main(void *arg) {
  nl_poller *p = arg;
  pthread_mutex_lock(&p->lock);
  for (;;) {
    while (!p->due && !p->stopping)
      pthread_cond_wait(&p->wake, &p->lock);
    if (p->stopping)
      break;
    p->due = false;
    plugin_set_ctx(p->ctx);
    p->started_at = cdtime();
    pthread_mutex_unlock(&p->lock);
    p->run(p->ud);
    pthread_mutex_lock(&p->lock);
    p->started_at = 0;
  }
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

nl_poller *nl_poller_start(const char *name, nl_poller_run_fn run, void *ud,
                           char *err, size_t errlen) {
  nl_poller *p = calloc(1, sizeof(*p));
  if (p == NULL) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  p->run = run;
  p->ud = ud;
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->wake, NULL);
  int rc = plugin_thread_create(&p->thread, poller_main, p, name);
  if (rc != 0) {
    snprintf(err, errlen, "cannot start the poll thread: %s", strerror(rc));
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return NULL;
  }
  return p;
}

bool nl_poller_kick(nl_poller *p) {
  plugin_ctx_t ctx = plugin_get_ctx();
  pthread_mutex_lock(&p->lock);
  bool idle = p->started_at == 0;
  if (!idle)
    p->overruns++;
  p->due = true;
  p->ctx = ctx;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  return idle;
}

uint64_t nl_poller_overruns(nl_poller *p) {
  pthread_mutex_lock(&p->lock);
  uint64_t n = p->overruns;
  pthread_mutex_unlock(&p->lock);
  return n;
}

cdtime_t nl_poller_running_for(nl_poller *p) {
  pthread_mutex_lock(&p->lock);
  cdtime_t started = p->started_at;
  pthread_mutex_unlock(&p->lock);
  cdtime_t now = cdtime();
  return started != 0 && now > started ? now - started : 0;
}

void nl_poller_stop(nl_poller *p) {
  if (p == NULL)
    return;
  pthread_mutex_lock(&p->lock);
  p->stopping = true;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  free(p);
}
