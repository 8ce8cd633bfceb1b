/* nl_health.h: publishing health events and summaries of one instance.
 *
 * Holds the options (on/off, subject prefix, summary interval) and decides
 * what to send; the sending itself goes through a publish function, so the
 * logic runs without a server in unit tests. No collectd calls. */
#ifndef NL_HEALTH_H
#define NL_HEALTH_H

#include "core/nl_engine.h"
#include "nl_event.h"

/* Publishes len bytes of data on subject without waiting for the server.
 * Returns 0, or -1 with a one-line reason in err. */
typedef int (*nl_publish_fn)(void *ctx, const char *subject, const char *data,
                             size_t len, char *err, size_t errlen);

typedef struct {
  /* Options. */
  bool enabled;                         /* HealthEvents (default true). */
  char prefix[NL_EVENT_PREFIX_MAX + 1]; /* HealthSubjectPrefix. */
  int64_t summary_interval_ns;          /* SummaryInterval; 0 = off. */
  /* The account the summaries count (SystemAccount mode: one nl_health
   * per account, with its own prefix), else NULL; not owned. */
  const char *account;
  /* Scope "server": the name of the server whose agent sends the
   * summaries, else NULL; not owned. */
  const char *server;
  /* State. */
  int64_t last_summary_ns; /* 0 before the first summary. */
  uint64_t published;
  uint64_t failed;
} nl_health;

/* Sets the defaults: enabled, prefix NL_EVENT_PREFIX_DEFAULT, no summary. */
void nl_health_init(nl_health *h);

/* Sets the subject prefix. Returns 0, or -1 (prefix unchanged) when it is
 * not valid (see nl_event_prefix_valid). */
int nl_health_set_prefix(nl_health *h, const char *prefix);

/* Publishes one event for a finding's state change (see nl_event). Returns 0
 * when sent or when events are off, -1 (reason in err) when it could not be
 * built or sent. */
int nl_health_transition(nl_health *h, nl_publish_fn publish, void *ctx,
                         const nl_event *ev, char *err, size_t errlen);

/* Publishes a summary of engine e when summaries are on and an interval
 * (less 5% for timer jitter) passed since the last one; the first is due at
 * once. Returns 1
 * when one was sent, 0 when none was due, -1 (reason in err) on failure;
 * a failed summary is retried on the next call. */
int nl_health_summary(nl_health *h, nl_publish_fn publish, void *ctx,
                      nl_engine *e, const char *instance, size_t streams,
                      int64_t now_ns, char *err, size_t errlen);

#endif
