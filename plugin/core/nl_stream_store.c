/* nl_stream_store.c: what the engine keeps per stream name between polls
 * (see nl_stream_store.h). */
#include "nl_stream_store.h"

#include "core/detect/nl_classes.h"
#include "core/model/nl_snapshot.h"

#include <stdlib.h>
#include <string.h>

/* An empty slot of the index. */
#define NL_STORE_NO_SLOT ((size_t)-1)

/* Frees what r owns. */
static void rec_free(nl_stream_rec *r) {
  free(r->name);
  free(r->clock);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    free(r->active[cls]);
  nl_slots_clear(r->slots, nl_class_release);
  free(r->slots);
}

void nl_store_free(nl_stream_store *store) {
  for (size_t i = 0; i < store->n; i++)
    rec_free(&store->recs[i]);
  free(store->recs);
  free(store->index);
  memset(store, 0, sizeof(*store));
}

/* The index slot that holds name's record, or the empty slot where it
 * would go; NULL when the index is empty. */
static size_t *slot_of(const nl_stream_store *store, const char *name) {
  if (store->n_index == 0)
    return NULL;
  size_t mask = store->n_index - 1;
  for (size_t i =
           (size_t)nl_hash_bytes(NL_HASH_BASIS, name, strlen(name)) & mask;
       ; i = (i + 1) & mask) {
    size_t *slot = &store->index[i];
    if (*slot == NL_STORE_NO_SLOT || strcmp(store->recs[*slot].name, name) == 0)
      return slot;
  }
}

/* Indexes every record again in the slots there are. */
static void index_all(nl_stream_store *store) {
  for (size_t i = 0; i < store->n_index; i++)
    store->index[i] = NL_STORE_NO_SLOT;
  for (size_t i = 0; i < store->n; i++)
    *slot_of(store, store->recs[i].name) = i;
}

/* Builds the index again with room for at least want records. Returns 0,
 * or -1 when memory runs out (the old index stays). */
static int index_rebuild(nl_stream_store *store, size_t want) {
  size_t n = 16;
  while (n < 2 * want)
    n *= 2;
  size_t *index = malloc(n * sizeof(*index));
  if (index == NULL)
    return -1;
  free(store->index);
  store->index = index;
  store->n_index = n;
  index_all(store);
  return 0;
}

nl_stream_rec *nl_store_find(const nl_stream_store *store, const char *name) {
  size_t *slot = slot_of(store, name);
  return slot != NULL && *slot != NL_STORE_NO_SLOT ? &store->recs[*slot] : NULL;
}

nl_stream_rec *nl_store_get(nl_stream_store *store, const char *name) {
  nl_stream_rec *found = nl_store_find(store, name);
  if (found != NULL)
    return found;
  if (2 * (store->n + 1) > store->n_index &&
      index_rebuild(store, 2 * (store->n + 1)) != 0)
    return NULL;
  if (store->n == store->cap) {
    size_t n = store->cap ? 2 * store->cap : 16;
    nl_stream_rec *r = realloc(store->recs, n * sizeof(*r));
    if (r == NULL)
      return NULL;
    store->recs = r;
    store->cap = n;
  }
  char *copy = strdup(name);
  if (copy == NULL)
    return NULL;
  store->recs[store->n] = (nl_stream_rec){.name = copy};
  *slot_of(store, copy) = store->n;
  return &store->recs[store->n++];
}

nl_class_slot *nl_store_slot(nl_stream_rec *r, nl_class cls) {
  if ((unsigned)cls >= NL_CLASS_COUNT)
    return NULL;
  if (r->slots == NULL)
    r->slots = calloc(NL_CLASS_COUNT, sizeof(*r->slots));
  return r->slots != NULL ? &r->slots[cls] : NULL;
}

void nl_store_forget(nl_stream_store *store, uint32_t gen, int64_t now_ns,
                     int64_t forget_ns) {
  size_t kept = 0;
  for (size_t i = 0; i < store->n; i++) {
    nl_stream_rec *r = &store->recs[i];
    if (r->seen_generation != gen && now_ns - r->last_seen_ns > forget_ns) {
      rec_free(r);
      continue;
    }
    store->recs[kept++] = *r;
  }
  if (kept == store->n)
    return;
  store->n = kept;
  /* The records moved: index them again in the slots there are, which
   * have room for more than are left. */
  index_all(store);
}
