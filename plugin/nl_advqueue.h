/* nl_advqueue.h: a bounded queue of advisories between threads.
 *
 * The cnats delivery threads push parsed advisories; the plugin's advisory
 * thread and the read callback take them. Pushing never blocks and never
 * allocates: when the queue is full the record is dropped and counted.
 * Every function is thread-safe. */
#ifndef NL_ADVQUEUE_H
#define NL_ADVQUEUE_H

#include "nl_advisory.h"

typedef struct nl_advqueue nl_advqueue;

/* Creates a queue holding at most cap records (at least 1). Returns NULL
 * when memory runs out. */
nl_advqueue *nl_advqueue_create(size_t cap);

/* Frees the queue. No thread may use it any more. NULL is allowed. */
void nl_advqueue_free(nl_advqueue *q);

/* Appends a copy of a. Returns true, or false when the queue is full or
 * closed (the record is dropped and counted). */
bool nl_advqueue_push(nl_advqueue *q, const nl_advisory *a);

/* Moves up to max records, oldest first, into out without waiting. Returns
 * how many. */
size_t nl_advqueue_take(nl_advqueue *q, nl_advisory *out, size_t max);

/* Waits until the queue holds a record, is closed, or timeout_ms passed.
 * Returns false once the queue is closed. */
bool nl_advqueue_wait(nl_advqueue *q, int64_t timeout_ms);

/* Closes the queue: pushes are dropped from now on and waiters wake. */
void nl_advqueue_close(nl_advqueue *q);

/* Counts since creation: records pushed, dropped (queue full or closed),
 * and advisories the receiver could not parse (nl_advqueue_reject). */
typedef struct {
  uint64_t received;
  uint64_t dropped;
  uint64_t rejected;
} nl_advqueue_counts;

void nl_advqueue_reject(nl_advqueue *q);
void nl_advqueue_get_counts(nl_advqueue *q, nl_advqueue_counts *out);

#endif
