/* nl_detect_advised.h: the evidence advisories bring about a consumer, for
 * the consumer detectors (nl_detect_ext.c); nl_detect_ext.h declares the
 * recording itself (nl_ext_record, nl_ext_confirm, nl_ext_ack_stats). */
#ifndef NL_DETECT_ADVISED_H
#define NL_DETECT_ADVISED_H

#include "nl_detect_ext.h"

/* Returns st->ext, allocating it zeroed; NULL when memory runs out. */
nl_ext_state *nl_ext_of(nl_consumer_state *st);

/* MAX_DELIVER_EXHAUSTED of st from its confirmed MAX_DELIVERIES records
 * and, with poll c (NULL between polls), the lower bound num_redelivered
 * shows. Fills f and returns true when active. */
bool nl_advised_exhausted(const nl_consumer_state *st,
                          const nl_consumer_snap *c, nl_finding *f);

/* NAK_STORM of st from its NAK advisories within the window at now_ns.
 * Fills f and returns true when active. */
bool nl_advised_nak_storm(const nl_consumer_state *st,
                          const nl_detect_params *p, int64_t now_ns,
                          nl_finding *f);

/* Adds the ack samples' evidence a to f, an active ACK_WAIT_VIOLATION or
 * MISSING_PROGRESS of consumer c, and with a P99 estimate recommends
 * ack_wait 1.5 x P99 when that is more than the polled recommendation. A
 * finding that already carries the samples is left as it is. */
void nl_advised_ack_samples(const nl_consumer_snap *c, const nl_ack_stats *a,
                            nl_finding *f);

#endif
