/* nl_health.c: publishing health events and summaries of one instance. */
#include "nl_health.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nl_health_init(nl_health *h) {
  memset(h, 0, sizeof(*h));
  h->enabled = true;
  snprintf(h->prefix, sizeof(h->prefix), "%s", NL_EVENT_PREFIX_DEFAULT);
}

int nl_health_set_prefix(nl_health *h, const char *prefix) {
  if (!nl_event_prefix_valid(prefix))
    return -1;
  snprintf(h->prefix, sizeof(h->prefix), "%s", prefix);
  return 0;
}

/* Sends text on subject and counts the outcome; frees text. */
static int send_text(nl_health *h, nl_publish_fn publish, void *ctx,
                     const char *subject, char *text, size_t len, char *err,
                     size_t errlen) {
  if (text == NULL) {
    snprintf(err, errlen, "out of memory building the event");
    h->failed++;
    return -1;
  }
  int rc = publish(ctx, subject, text, len, err, errlen);
  free(text);
  if (rc != 0) {
    h->failed++;
    return -1;
  }
  h->published++;
  return 0;
}

int nl_health_transition(nl_health *h, nl_publish_fn publish, void *ctx,
                         const nl_event *ev, char *err, size_t errlen) {
  if (!h->enabled)
    return 0;
  char subject[NL_EVENT_SUBJECT_MAX];
  if (nl_event_subject(h->prefix, ev->stream, ev->consumer, subject,
                       sizeof(subject)) != 0) {
    snprintf(err, errlen, "cannot build the event subject");
    h->failed++;
    return -1;
  }
  size_t len = 0;
  char *text = nl_event_json(ev, &len);
  return send_text(h, publish, ctx, subject, text, len, err, errlen);
}

int nl_health_summary(nl_health *h, nl_publish_fn publish, void *ctx,
                      nl_engine *e, const char *instance, size_t streams,
                      int64_t now_ns, char *err, size_t errlen) {
  if (!h->enabled || h->summary_interval_ns <= 0)
    return 0;
  /* Polls start a few milliseconds early or late: allow 5% so that a
   * summary interval equal to the poll interval sends one every poll. */
  if (h->last_summary_ns != 0 &&
      now_ns - h->last_summary_ns < h->summary_interval_ns / 20 * 19)
    return 0;
  nl_event_summary s = {.instance = instance,
                        .account = h->account,
                        .server = h->server,
                        .at_ns = now_ns,
                        .streams = streams};
  nl_engine_counts(e, &s.consumers, s.active);
  char subject[NL_EVENT_SUBJECT_MAX];
  if (nl_event_summary_subject(h->prefix, subject, sizeof(subject)) != 0) {
    snprintf(err, errlen, "cannot build the summary subject");
    h->failed++;
    return -1;
  }
  size_t len = 0;
  char *text = nl_event_summary_json(&s, &len);
  if (send_text(h, publish, ctx, subject, text, len, err, errlen) != 0)
    return -1;
  h->last_summary_ns = now_ns;
  return 1;
}
