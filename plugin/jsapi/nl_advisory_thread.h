/* nl_advisory_thread.h: the advisory path of one instance.
 *
 * Owns the advisory queue (nl_advisory_queue.h), subscribes to the advisories
 * on the instance's transport (nl_advisory_subscribe.h), and runs a small
 * thread that waits on the queue and hands each batch to a feed function at
 * once, so that what an advisory proves is reported well within one poll
 * interval. The feed function must do its own locking against the poller (the
 * engine is not thread-safe) and must not wait on the network; the poller
 * can also drain the queue itself with nl_advisory_thread_drain. Slow work
 * (requests to the server) goes in the idle function, which only the
 * thread calls, with no lock of this file held. No collectd calls. */
#ifndef NL_ADVISORY_THREAD_H
#define NL_ADVISORY_THREAD_H

#include "nl_advisory_queue.h"
#include "nl_transport.h"

/* Receives n advisories, oldest first, on the runner's thread or in
 * nl_advisory_thread_drain. */
typedef void (*nl_adv_feed_fn)(void *ud, const nl_advisory *a, size_t n);

/* Called on the runner's thread after each batch and at least once a
 * second; may make network requests. */
typedef void (*nl_adv_idle_fn)(void *ud);

typedef struct nl_advisory_thread nl_advisory_thread;

/* Creates the queue (cap records) and starts the thread calling feed and
 * idle (which may be NULL). Returns NULL (reason in err) on failure. */
nl_advisory_thread *nl_advisory_thread_start(size_t cap, nl_adv_feed_fn feed,
                                             nl_adv_idle_fn idle, void *ud,
                                             char *err, size_t errlen);

/* Subscribes on t unless done already (t must be connected), with the API
 * audit advisories too when api_audit is set. Returns 0, or -1 with a
 * reason in err; a failed subscription is not retried. */
int nl_advisory_thread_subscribe(nl_advisory_thread *r, nl_transport *t,
                                 bool api_audit, char *err, size_t errlen);

/* Feeds what is queued now, on the caller's thread, at most one queue's
 * worth (so a queue filled as fast as it is fed cannot keep the caller),
 * waiting only for a batch the thread is feeding, never for its idle work.
 * Returns how many. */
size_t nl_advisory_thread_drain(nl_advisory_thread *r);

/* Stops the thread (waits for it); feed is not called any more. The queue
 * keeps accepting (and dropping) until nl_advisory_thread_free. NULL is
 * allowed. */
void nl_advisory_thread_stop(nl_advisory_thread *r);

/* Frees everything; call after the transport that feeds the queue was
 * freed. NULL is allowed. */
void nl_advisory_thread_free(nl_advisory_thread *r);

/* Counts of the queue (received, dropped, rejected). */
void nl_advisory_thread_counts(nl_advisory_thread *r,
                               nl_advisory_queue_counts *out);

#endif
