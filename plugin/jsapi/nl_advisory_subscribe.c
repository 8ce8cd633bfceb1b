/* nl_advisory_subscribe.c: subscribing to the advisories and queueing them. */
#include "nl_advisory_subscribe.h"

#include <stdio.h>
#include <time.h>

void nl_advisory_subscribe_receive(void *ud, const char *subject,
                                   const char *data, size_t len) {
  nl_advisory_queue *q = ud;
  nl_advisory a;
  char err[256];
  if (nl_advisory_parse(subject, data, len, &a, err, sizeof(err)) != 0) {
    nl_advisory_queue_reject(q);
    return;
  }
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  a.received_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
  nl_advisory_queue_push(q, &a);
}

int nl_advisory_subscribe_start(nl_transport *t, nl_advisory_queue *q,
                                char *err, size_t errlen) {
  for (size_t i = 0; nl_advisory_subjects[i] != NULL; i++) {
    char why[256];
    if (nl_transport_subscribe(t, nl_advisory_subjects[i],
                               nl_advisory_subscribe_receive, q, why,
                               sizeof(why)) != 0) {
      snprintf(err, errlen, "%s: %s", nl_advisory_subjects[i], why);
      return -1;
    }
  }
  return 0;
}
