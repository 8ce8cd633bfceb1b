/* nl_advrun.h: the advisory path of one instance.
 *
 * Owns the advisory queue (nl_advqueue.h), subscribes to the advisories on
 * the instance's transport (nl_advsub.h), and runs a small thread that
 * waits on the queue and hands each batch to a feed function at once, so
 * that what an advisory proves is reported well within one poll interval.
 * The feed function must do its own locking against the poller (the
 * engine is not thread-safe); the poller can also drain the queue itself
 * with nl_advrun_drain. No collectd calls. */
#ifndef NL_ADVRUN_H
#define NL_ADVRUN_H

#include "nl_advqueue.h"
#include "nl_transport.h"

/* Receives n advisories, oldest first, on the runner's thread or in
 * nl_advrun_drain. */
typedef void (*nl_adv_feed_fn)(void *ud, const nl_advisory *a, size_t n);

typedef struct nl_advrun nl_advrun;

/* Creates the queue (cap records) and starts the thread calling feed.
 * Returns NULL (reason in err) on failure. */
nl_advrun *nl_advrun_start(size_t cap, nl_adv_feed_fn feed, void *ud, char *err,
                           size_t errlen);

/* Subscribes on t unless done already (t must be connected). Returns 0, or
 * -1 with a reason in err; a failed subscription is not retried. */
int nl_advrun_subscribe(nl_advrun *r, nl_transport *t, char *err,
                        size_t errlen);

/* Feeds whatever is queued now, on the caller's thread. Returns how many. */
size_t nl_advrun_drain(nl_advrun *r);

/* Stops the thread (waits for it); feed is not called any more. The queue
 * keeps accepting (and dropping) until nl_advrun_free. NULL is allowed. */
void nl_advrun_stop(nl_advrun *r);

/* Frees everything; call after the transport that feeds the queue was
 * freed. NULL is allowed. */
void nl_advrun_free(nl_advrun *r);

/* Counts of the queue (received, dropped, rejected). */
void nl_advrun_counts(nl_advrun *r, nl_advqueue_counts *out);

#endif
