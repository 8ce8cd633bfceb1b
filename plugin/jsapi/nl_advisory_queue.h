/* nl_advisory_queue.h: a bounded queue of advisories between threads.
 *
 * The cnats delivery threads push parsed advisories; the plugin's advisory
 * thread and the read callback take them. Pushing never blocks and never
 * allocates: when the queue is full the record is dropped and counted.
 * Every function is thread-safe. */
#ifndef NL_ADVISORY_QUEUE_H
#define NL_ADVISORY_QUEUE_H

#include "core/model/nl_advisory.h"

typedef struct nl_advisory_queue nl_advisory_queue;

/* Creates a queue holding at most cap records (at least 1). Returns NULL
 * when memory runs out. */
nl_advisory_queue *nl_advisory_queue_create(size_t cap);

/* Frees the queue. No thread may use it any more. NULL is allowed. */
void nl_advisory_queue_free(nl_advisory_queue *q);

/* Appends a copy of a. Returns true, or false when the queue is full or
 * closed (the record is dropped and counted). */
bool nl_advisory_queue_push(nl_advisory_queue *q, const nl_advisory *a);

/* Moves up to max records, oldest first, into out without waiting. Returns
 * how many. */
size_t nl_advisory_queue_take(nl_advisory_queue *q, nl_advisory *out,
                              size_t max);

/* Waits until the queue holds a record, is closed, or timeout_ms passed.
 * Returns false once the queue is closed. */
bool nl_advisory_queue_wait(nl_advisory_queue *q, int64_t timeout_ms);

/* Closes the queue: pushes are dropped from now on and waiters wake. */
void nl_advisory_queue_close(nl_advisory_queue *q);

/* Counts since creation: records pushed, dropped (queue full or closed),
 * and advisories the receiver could not parse (nl_advisory_queue_reject). */
typedef struct {
  uint64_t received;
  uint64_t dropped;
  uint64_t rejected;
} nl_advisory_queue_counts;

void nl_advisory_queue_reject(nl_advisory_queue *q);
void nl_advisory_queue_get_counts(nl_advisory_queue *q,
                                  nl_advisory_queue_counts *out);

#endif
