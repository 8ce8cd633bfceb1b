/* nl_poller.h: the thread that polls one instance, so that collectd's read
 * callback never waits on the network.
 *
 * The read callback only kicks the poller (nl_poller_kick): it records the
 * read's plugin context and wakes the thread, which then runs one
 * poll with that context set (so values carry the instance's interval). A
 * kick that comes while a poll still runs is kept as one (the next poll
 * starts as soon as this one ends) and counted as an overrun. */
#ifndef NL_POLLER_H
#define NL_POLLER_H

#include "collectd.h"

#include "plugin.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct nl_poller nl_poller;

/* One poll, on the poller's thread, with the plugin context of the read
 * that asked for it. */
typedef void (*nl_poller_run_fn)(void *ud);

/* Starts the thread (named name, at most 15 characters shown). Returns the
 * poller, or NULL with a one-line reason in err. Call after collectd has
 * forked into the background (from an init callback). */
nl_poller *nl_poller_start(const char *name, nl_poller_run_fn run, void *ud,
                           char *err, size_t errlen);

/* Asks for a poll with the calling read's plugin context. Never
 * waits for a poll: returns true when the thread was idle, false when a poll
 * is still running (the request is kept and counted as an overrun). */
bool nl_poller_kick(nl_poller *p);

/* Reads that came while a poll was running, since the start. */
uint64_t nl_poller_overruns(nl_poller *p);

/* How long the poll in progress has run (0 when idle). */
cdtime_t nl_poller_running_for(nl_poller *p);

/* Waits for the poll in progress to end (make its requests fail first, by
 * closing the connection), stops the thread and frees the poller. Accepts
 * NULL. */
void nl_poller_stop(nl_poller *p);

#endif
