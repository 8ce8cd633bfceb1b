/* nl_advisory_subscribe.h: subscribing to the advisories and queueing them.
 *
 * Subscribes (read only) to every subject of nl_advisory_subjects on a
 * transport; each message is parsed on the cnats thread that delivers it
 * and pushed into a queue (unreadable ones and those that find the queue
 * full are counted, see nl_advisory_queue.h). An API audit of anything
 * but a consumer delete is dropped before it is parsed, uncounted. No
 * collectd calls. */
#ifndef NL_ADVISORY_SUBSCRIBE_H
#define NL_ADVISORY_SUBSCRIBE_H

#include "nl_advisory_queue.h"
#include "nl_transport.h"

/* The receiver of nl_transport_subscribe for advisories: ud is the
 * nl_advisory_queue. Stamps received_ns with the wall clock. */
void nl_advisory_subscribe_receive(void *ud, const char *subject,
                                   const char *data, size_t len);

/* Subscribes to all advisory subjects on t, and to the API audit
 * advisories (nl_advisory_api_subject) when api_audit is set, feeding q
 * (which must outlive t). Returns 0, or -1 with a one-line reason in err
 * (subscriptions made before the failure stay). */
int nl_advisory_subscribe_start(nl_transport *t, nl_advisory_queue *q,
                                bool api_audit, char *err, size_t errlen);

#endif
