/* nl_snapshot.c: ownership helpers for poll snapshots. */
#include "nl_snapshot.h"

#include <stdlib.h>
#include <string.h>

void nl_stream_snap_clear(nl_stream_snap *s) {
  free(s->name);
  memset(s, 0, sizeof(*s));
}

void nl_consumer_snap_clear(nl_consumer_snap *c) {
  free(c->stream);
  free(c->name);
  memset(c, 0, sizeof(*c));
}

int64_t nl_consumer_redelivery_delay_ns(const nl_consumer_snap *c) {
  if (c->backoff_first_ns > 0 &&
      (c->ack_wait_ns <= 0 || c->backoff_first_ns < c->ack_wait_ns))
    return c->backoff_first_ns;
  return c->ack_wait_ns;
}

/* Grows an array of elements of size elem so that it holds one more. Returns
 * 0, or -1 when memory runs out (the array is then unchanged). */
static int grow(void **items, size_t n, size_t *cap, size_t elem) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 16;
  void *p = realloc(*items, ncap * elem);
  if (p == NULL)
    return -1;
  *items = p;
  *cap = ncap;
  return 0;
}

nl_stream_snap *nl_snapshot_set_add_stream(nl_snapshot_set *set) {
  if (grow((void **)&set->streams, set->n_streams, &set->cap_streams,
           sizeof(*set->streams)) != 0)
    return NULL;
  nl_stream_snap *s = &set->streams[set->n_streams++];
  memset(s, 0, sizeof(*s));
  return s;
}

nl_consumer_snap *nl_snapshot_set_add_consumer(nl_snapshot_set *set) {
  if (grow((void **)&set->consumers, set->n_consumers, &set->cap_consumers,
           sizeof(*set->consumers)) != 0)
    return NULL;
  nl_consumer_snap *c = &set->consumers[set->n_consumers++];
  memset(c, 0, sizeof(*c));
  return c;
}

void nl_snapshot_set_clear(nl_snapshot_set *set) {
  for (size_t i = 0; i < set->n_streams; i++)
    nl_stream_snap_clear(&set->streams[i]);
  for (size_t i = 0; i < set->n_consumers; i++)
    nl_consumer_snap_clear(&set->consumers[i]);
  free(set->streams);
  free(set->consumers);
  memset(set, 0, sizeof(*set));
}
