/* nl_snapshot.c: ownership helpers for poll snapshots. */
#define _GNU_SOURCE /* mremap */
#include "nl_snapshot.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void nl_meta_free(nl_meta *meta, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(meta[i].key);
    free(meta[i].value);
  }
  free(meta);
}

/* The value of key among the n entries of meta, or NULL. */
static const char *meta_get(const nl_meta *meta, size_t n, const char *key) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(meta[i].key, key) == 0)
      return meta[i].value;
  return NULL;
}

/* Sets key to value (both copied) among the *n entries of *meta, replacing
 * an entry with the same key. Returns 0, or -1 when NL_META_MAX entries are
 * held, a string is longer than NL_META_LEN_MAX or memory runs out. */
static int meta_set(nl_meta **meta, size_t *n, const char *key,
                    const char *value) {
  if (strlen(key) > NL_META_LEN_MAX || strlen(value) > NL_META_LEN_MAX)
    return -1;
  char *v = strdup(value);
  if (v == NULL)
    return -1;
  for (size_t i = 0; i < *n; i++) {
    if (strcmp((*meta)[i].key, key) == 0) {
      free((*meta)[i].value);
      (*meta)[i].value = v;
      return 0;
    }
  }
  char *k = strdup(key);
  nl_meta *m = *n < NL_META_MAX && k != NULL
                   ? realloc(*meta, (*n + 1) * sizeof(*m))
                   : NULL;
  if (m == NULL) {
    free(k);
    free(v);
    return -1;
  }
  *meta = m;
  (*meta)[(*n)++] = (nl_meta){k, v};
  return 0;
}

void nl_stream_snap_clear(nl_stream_snap *s) {
  free(s->name);
  for (size_t i = 0; i < s->n_subjects; i++)
    free(s->subjects[i]);
  free(s->subjects);
  free(s->cluster);
  nl_meta_free(s->meta, s->n_meta);
  for (size_t i = 0; i < s->n_links; i++)
    free(s->links[i].name);
  free(s->links);
  for (size_t i = 0; i < s->n_subject_counts; i++)
    free(s->subject_counts[i].subject);
  free(s->subject_counts);
  memset(s, 0, sizeof(*s));
}

void nl_consumer_snap_clear(nl_consumer_snap *c) {
  free(c->stream);
  free(c->name);
  free(c->filter);
  for (size_t i = 0; i < c->n_filters; i++)
    free(c->filters[i]);
  free(c->filters);
  nl_meta_free(c->meta, c->n_meta);
  memset(c, 0, sizeof(*c));
}

const char *nl_consumer_snap_meta(const nl_consumer_snap *c, const char *key) {
  return meta_get(c->meta, c->n_meta, key);
}

int nl_consumer_snap_set_meta(nl_consumer_snap *c, const char *key,
                              const char *value) {
  return meta_set(&c->meta, &c->n_meta, key, value);
}

const char *nl_stream_snap_meta(const nl_stream_snap *s, const char *key) {
  return meta_get(s->meta, s->n_meta, key);
}

int nl_stream_snap_set_meta(nl_stream_snap *s, const char *key,
                            const char *value) {
  return meta_set(&s->meta, &s->n_meta, key, value);
}

int64_t nl_consumer_redelivery_delay_ns(const nl_consumer_snap *c) {
  int64_t d = c->ack_wait_ns;
  if (c->backoff_first_ns > 0 &&
      (c->ack_wait_ns <= 0 || c->backoff_first_ns < c->ack_wait_ns))
    d = c->backoff_first_ns;
  return d > NL_DURATION_MAX_NS ? NL_DURATION_MAX_NS : d;
}

bool nl_consumer_wants_every(const nl_consumer_snap *c) {
  return c->ack_policy != NL_ACK_NONE &&
         c->deliver_policy != NL_DELIVER_LAST_PER_SUBJECT;
}

uint64_t nl_consumer_filter_key(const nl_consumer_snap *c) {
  /* A sum of each filter's hash does not depend on their order. */
  uint64_t key = 0;
  for (size_t i = 0; i < c->n_filters; i++)
    key += nl_hash_bytes(14695981039346656037ULL, c->filters[i],
                         strlen(c->filters[i]));
  return key + (c->filters_cut ? 1 : 0);
}

uint64_t nl_hash_bytes(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++)
    h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

static uint64_t fnv_i64(uint64_t h, int64_t v) {
  return nl_hash_bytes(h, &v, sizeof(v));
}

static uint64_t fnv_str(uint64_t h, const char *str) {
  return str ? nl_hash_bytes(h, str, strlen(str) + 1) : fnv_i64(h, -1);
}

bool nl_created_same(int64_t a, int64_t b) {
  return a >= b ? a - b <= NL_CREATED_SLACK_NS : b - a <= NL_CREATED_SLACK_NS;
}

/* Hashes the "nats_lens." declarations among the n entries of meta into
 * h. The other metadata kept (natscli's io.nats.monitor.* thresholds) is
 * the team's alerting, not how the object delivers: editing it is no fix
 * of any finding, and must not clear one at once. */
static uint64_t fnv_declarations(uint64_t h, const nl_meta *meta, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strncmp(meta[i].key, "nats_lens.", 10) == 0)
      h = fnv_str(fnv_str(h, meta[i].key), meta[i].value);
  return h;
}

uint64_t nl_config_key(const nl_consumer_snap *c, int64_t created_ns,
                       const nl_stream_snap *s) {
  uint64_t h = NL_HASH_BASIS;
  h = fnv_i64(h, s->retention);
  h = fnv_i64(h, s->discard_new);
  h = fnv_i64(h, s->max_msgs);
  h = fnv_i64(h, s->max_bytes);
  h = fnv_i64(h, s->max_age_ns);
  h = fnv_i64(h, s->max_msgs_per_subject);
  h = fnv_i64(h, s->allow_msg_ttl);
  h = fnv_i64(h, s->allow_msg_schedules);
  h = fnv_i64(h, s->replicas);
  h = fnv_i64(h, s->cluster != NULL);
  for (size_t i = 0; i < s->n_subjects; i++)
    h = fnv_str(h, s->subjects[i]);
  h = fnv_i64(h, s->discard_new_per_subject);
  h = fnv_i64(h, s->consumer_inactive_limit_ns);
  h = fnv_declarations(h, s->meta, s->n_meta);
  h = fnv_i64(h, s->is_mirror);
  for (size_t i = 0; i < s->n_links; i++)
    h = fnv_i64(h, (int64_t)s->links[i].key);
  if (c == NULL)
    h = fnv_i64(h, created_ns);
  if (c != NULL) {
    int64_t v[] = {created_ns,
                   c->ack_policy,
                   c->ack_wait_ns,
                   c->backoff_first_ns,
                   (int64_t)c->backoff_steps,
                   c->max_deliver,
                   c->max_ack_pending,
                   c->filtered,
                   c->push,
                   c->durable,
                   c->has_deliver_group,
                   c->idle_heartbeat_ns,
                   c->flow_control,
                   c->pinned_client,
                   c->num_replicas,
                   c->mem_storage,
                   (int64_t)c->rate_limit_bps,
                   c->headers_only,
                   c->inactive_threshold_ns};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
      h = fnv_i64(h, v[i]);
    h = fnv_declarations(h, c->meta, c->n_meta);
  }
  return h ? h : 1;
}

/* Arrays of this many bytes or more are mapped from the kernel directly,
 * not taken from malloc. A poll's consumer array (about 5.7 MB at 10,000
 * consumers) is freed at the end of the poll; from malloc, glibc would
 * raise its mmap threshold to that size once the array was freed, and
 * keep the next poll's array in a thread arena whose unused top it does
 * not trim below twice that size: megabytes of collectd's resident memory
 * held for nothing between polls. */
#define MAPPED_ARRAY_MIN ((size_t)128 * 1024)

/* Frees an array of cap elements of size elem made by grow(). */
static void array_free(void *items, size_t cap, size_t elem) {
  if (items != NULL && cap * elem >= MAPPED_ARRAY_MIN)
    munmap(items, cap * elem);
  else
    free(items);
}

/* Returns room for ncap elements of size elem holding the n of items (cap
 * of them allocated), or NULL when memory runs out (items unchanged). */
static void *array_resize(void *items, size_t n, size_t cap, size_t ncap,
                          size_t elem) {
  size_t old_bytes = cap * elem, bytes = ncap * elem;
  if (bytes < MAPPED_ARRAY_MIN)
    return realloc(items, bytes);
  void *p;
  if (old_bytes >= MAPPED_ARRAY_MIN) {
    p = mremap(items, old_bytes, bytes, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? NULL : p;
  }
  p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
           0);
  if (p == MAP_FAILED)
    return NULL;
  if (n > 0)
    memcpy(p, items, n * elem);
  free(items);
  return p;
}

/* Grows an array of elements of size elem so that it holds one more. Returns
 * 0, or -1 when memory runs out (the array is then unchanged). */
static int grow(void **items, size_t n, size_t *cap, size_t elem) {
  if (n < *cap)
    return 0;
  size_t ncap = *cap ? *cap * 2 : 16;
  if (ncap > SIZE_MAX / elem)
    return -1;
  void *p = array_resize(*items, n, *cap, ncap, elem);
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

int nl_snapshot_set_add_elsewhere(nl_snapshot_set *set, const char *stream,
                                  const char *name, bool leaderless) {
  if (grow((void **)&set->elsewhere, set->n_elsewhere, &set->cap_elsewhere,
           sizeof(*set->elsewhere)) != 0)
    return -1;
  nl_consumer_ref r = {strdup(stream), strdup(name), leaderless};
  if (r.stream == NULL || r.name == NULL) {
    free(r.stream);
    free(r.name);
    return -1;
  }
  set->elsewhere[set->n_elsewhere++] = r;
  return 0;
}

static int ref_order(const void *a, const void *b) {
  const nl_consumer_ref *x = a, *y = b;
  int c = strcmp(x->stream, y->stream);
  return c != 0 ? c : strcmp(x->name, y->name);
}

const nl_consumer_ref *nl_snapshot_set_elsewhere(const nl_snapshot_set *set,
                                                 const char *stream,
                                                 const char *name) {
  if (set->n_elsewhere == 0)
    return NULL;
  nl_consumer_ref key = {(char *)stream, (char *)name, false};
  return bsearch(&key, set->elsewhere, set->n_elsewhere,
                 sizeof(*set->elsewhere), ref_order);
}

void nl_snapshot_set_clear(nl_snapshot_set *set) {
  for (size_t i = 0; i < set->n_streams; i++)
    nl_stream_snap_clear(&set->streams[i]);
  for (size_t i = 0; i < set->n_consumers; i++)
    nl_consumer_snap_clear(&set->consumers[i]);
  for (size_t i = 0; i < set->n_missing_streams; i++)
    free(set->missing_streams[i]);
  for (size_t i = 0; i < set->n_elsewhere; i++) {
    free(set->elsewhere[i].stream);
    free(set->elsewhere[i].name);
  }
  array_free(set->elsewhere, set->cap_elsewhere, sizeof(*set->elsewhere));
  array_free(set->streams, set->cap_streams, sizeof(*set->streams));
  array_free(set->consumers, set->cap_consumers, sizeof(*set->consumers));
  array_free(set->missing_streams, set->cap_missing_streams,
             sizeof(*set->missing_streams));
  memset(set, 0, sizeof(*set));
}

double nl_stream_limit_messages(const nl_stream_snap *s) {
  double limit = s->max_msgs > 0 ? (double)s->max_msgs : 0;
  if (s->max_bytes > 0 && s->msgs > 0 && s->bytes > 0) {
    double by_size = (double)s->max_bytes * (double)s->msgs / (double)s->bytes;
    if (limit == 0 || by_size < limit)
      limit = by_size;
  }
  return limit;
}
