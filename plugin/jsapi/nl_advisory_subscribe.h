/* nl_advisory_subscribe.h: subscribing to the advisories and queueing them.
 *
 * Subscribes (read only) to every subject of nl_advisory_subjects on a
 * transport; each message is parsed on the cnats thread that delivers it
 * and pushed into a queue (unreadable ones and those that find the queue
 * full are counted, see nl_advisory_queue.h). No collectd calls. */
#ifndef NL_ADVISORY_SUBSCRIBE_H
#define NL_ADVISORY_SUBSCRIBE_H

#include "nl_advisory_queue.h"
#include "nl_transport.h"

/* The receiver of nl_transport_subscribe for advisories: ud is the
 * nl_advisory_queue. Stamps received_ns with the wall clock. */
void nl_advisory_subscribe_receive(void *ud, const char *subject,
                                   const char *data, size_t len);

/* Subscribes to all advisory subjects on t, feeding q (which must outlive
 * t). Returns 0, or -1 with a one-line reason in err (subscriptions made
 * before the failure stay). */
int nl_advisory_subscribe_start(nl_transport *t, nl_advisory_queue *q,
                                char *err, size_t errlen);

#endif
