/* nl_snapshot.c: ownership helpers for poll snapshots. */
#include "nl_snapshot.h"

#include <stdlib.h>
#include <string.h>

void nl_stream_snap_clear(nl_stream_snap *s) {
  free(s->name);
  for (size_t i = 0; i < s->n_subjects; i++)
    free(s->subjects[i]);
  free(s->subjects);
  free(s->cluster);
  memset(s, 0, sizeof(*s));
}

void nl_consumer_snap_clear(nl_consumer_snap *c) {
  free(c->stream);
  free(c->name);
  for (size_t i = 0; i < c->n_meta; i++) {
    free(c->meta[i].key);
    free(c->meta[i].value);
  }
  free(c->meta);
  memset(c, 0, sizeof(*c));
}

const char *nl_consumer_snap_meta(const nl_consumer_snap *c, const char *key) {
  for (size_t i = 0; i < c->n_meta; i++)
    if (strcmp(c->meta[i].key, key) == 0)
      return c->meta[i].value;
  return NULL;
}

int nl_consumer_snap_set_meta(nl_consumer_snap *c, const char *key,
                              const char *value) {
  if (strlen(key) > NL_META_LEN_MAX || strlen(value) > NL_META_LEN_MAX)
    return -1;
  char *v = strdup(value);
  if (v == NULL)
    return -1;
  for (size_t i = 0; i < c->n_meta; i++) {
    if (strcmp(c->meta[i].key, key) == 0) {
      free(c->meta[i].value);
      c->meta[i].value = v;
      return 0;
    }
  }
  char *k = strdup(key);
  nl_meta *m = c->n_meta < NL_META_MAX && k != NULL
                   ? realloc(c->meta, (c->n_meta + 1) * sizeof(*m))
                   : NULL;
  if (m == NULL) {
    free(k);
    free(v);
    return -1;
  }
  c->meta = m;
  c->meta[c->n_meta++] = (nl_meta){k, v};
  return 0;
}

int64_t nl_consumer_redelivery_delay_ns(const nl_consumer_snap *c) {
  int64_t d = c->ack_wait_ns;
  if (c->backoff_first_ns > 0 &&
      (c->ack_wait_ns <= 0 || c->backoff_first_ns < c->ack_wait_ns))
    d = c->backoff_first_ns;
  return d > NL_DURATION_MAX_NS ? NL_DURATION_MAX_NS : d;
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

int nl_snapshot_set_add_missing(nl_snapshot_set *set, const char *name) {
  if (grow((void **)&set->missing_streams, set->n_missing_streams,
           &set->cap_missing_streams, sizeof(*set->missing_streams)) != 0)
    return -1;
  char *copy = strdup(name);
  if (copy == NULL)
    return -1;
  set->missing_streams[set->n_missing_streams++] = copy;
  return 0;
}

bool nl_snapshot_set_is_missing(const nl_snapshot_set *set, const char *name) {
  for (size_t i = 0; i < set->n_missing_streams; i++)
    if (strcmp(set->missing_streams[i], name) == 0)
      return true;
  return false;
}

void nl_snapshot_set_clear(nl_snapshot_set *set) {
  for (size_t i = 0; i < set->n_streams; i++)
    nl_stream_snap_clear(&set->streams[i]);
  for (size_t i = 0; i < set->n_consumers; i++)
    nl_consumer_snap_clear(&set->consumers[i]);
  for (size_t i = 0; i < set->n_missing_streams; i++)
    free(set->missing_streams[i]);
  free(set->streams);
  free(set->consumers);
  free(set->missing_streams);
  memset(set, 0, sizeof(*set));
}
