/* nl_advisory_subscribe.c: subscribing to the advisories and queueing them. */
#include "nl_advisory_subscribe.h"

#include <stdio.h>
#include <time.h>

void nl_advisory_subscribe_receive(void *ud, const char *subject,
                                   const char *data, size_t len) {
  nl_advisory_queue *q = ud;
  nl_advisory a;
  char err[256];
  if (!nl_advisory_wanted(subject, data, len))
    return;
  if (nl_advisory_parse(subject, data, len, &a, err, sizeof(err)) != 0) {
    nl_advisory_queue_reject(q);
    return;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  a.received_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  nl_advisory_queue_push(q, &a);
}

/* Subscribes to subject on t, feeding q. Returns 0, or -1 with a reason
 * in err. */
static int subscribe_one(nl_transport *t, nl_advisory_queue *q,
                         const char *subject, char *err, size_t errlen) {
  char why[256];
  if (nl_transport_subscribe(t, subject, nl_advisory_subscribe_receive, q, why,
                             sizeof(why)) == 0)
    return 0;
  snprintf(err, errlen, "%s: %s", subject, why);
  return -1;
}

int nl_advisory_subscribe_start(nl_transport *t, nl_advisory_queue *q,
                                bool api_audit, char *err, size_t errlen) {
  for (size_t i = 0; nl_advisory_subjects[i] != NULL; i++)
    if (subscribe_one(t, q, nl_advisory_subjects[i], err, errlen) != 0)
      return -1;
  return api_audit ? subscribe_one(t, q, nl_advisory_api_subject, err, errlen)
                   : 0;
}
