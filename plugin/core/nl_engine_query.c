/* nl_engine_query.c: what the engine is asked between polls: the findings
 * it holds and has cleared, its counts, and the consumers it knows (see
 * nl_engine.h). */
#include "nl_engine.h"

#include "nl_engine_state.h"

#include <stdlib.h>
#include <string.h>

nl_registry *nl_engine_registry(nl_engine *e) { return e->reg; }

size_t nl_engine_streams_held(const nl_engine *e) { return e->streams.n; }

const nl_resolved *nl_engine_resolved(const nl_engine *e, size_t k) {
  return nl_lifecycle_resolved(&e->life, k);
}

void nl_engine_stream_ledger(nl_engine *e, const char *stream,
                             nl_stream_ledger *out) {
  const nl_stream_rec *t = nl_store_find(&e->streams, stream);
  *out = (nl_stream_ledger){t ? t->lost_total : 0, t ? t->stranded : 0};
}

const nl_finding *nl_engine_stream_finding(nl_engine *e, const char *stream,
                                           nl_class cls) {
  if ((unsigned)cls >= NL_CLASS_COUNT)
    return NULL;
  const nl_stream_rec *t = nl_store_find(&e->streams, stream);
  return t != NULL ? t->active[cls] : NULL;
}

typedef struct {
  bool (*keep)(const char *stream, void *ud);
  void *ud;
  nl_active *list;
  size_t n, cap;
  bool failed;
} active_list;

/* Appends one active finding to l. */
static void active_add(active_list *l, const char *stream, const char *consumer,
                       const nl_finding *f) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    nl_active *a = realloc(l->list, cap * sizeof(*a));
    if (a == NULL) {
      l->failed = true;
      return;
    }
    l->list = a;
    l->cap = cap;
  }
  l->list[l->n++] = (nl_active){stream, consumer, f};
}

static void active_of_consumer(nl_consumer_state *st, void *arg) {
  active_list *l = arg;
  if (l->keep != NULL && !l->keep(st->stream, l->ud))
    return;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (st->active[cls] != NULL)
      active_add(l, st->stream, st->name, st->active[cls]);
}

/* Most severe first, then stream, consumer (stream-level first), class. */
static int active_order(const void *pa, const void *pb) {
  const nl_active *a = pa, *b = pb;
  if (a->f->severity != b->f->severity)
    return a->f->severity > b->f->severity ? -1 : 1;
  int c = strcmp(a->stream, b->stream);
  if (c == 0 && (a->consumer == NULL) != (b->consumer == NULL))
    c = a->consumer == NULL ? -1 : 1;
  if (c == 0 && a->consumer != NULL)
    c = strcmp(a->consumer, b->consumer);
  if (c == 0)
    c = (int)a->f->cls - (int)b->f->cls;
  return c;
}

int nl_engine_active(nl_engine *e, bool (*keep)(const char *stream, void *ud),
                     void *ud, nl_active **out, size_t *n) {
  active_list l = {keep, ud, NULL, 0, 0, false};
  nl_registry_each(e->reg, active_of_consumer, &l);
  for (size_t i = 0; i < e->streams.n; i++) {
    const nl_stream_rec *t = &e->streams.recs[i];
    if (keep != NULL && !keep(t->name, ud))
      continue;
    for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
      if (t->active[cls] != NULL)
        active_add(&l, t->name, NULL, t->active[cls]);
  }
  if (l.failed) {
    free(l.list);
    *out = NULL;
    *n = 0;
    return -1;
  }
  if (l.n > 1)
    qsort(l.list, l.n, sizeof(*l.list), active_order);
  *out = l.list;
  *n = l.n;
  return 0;
}

int64_t nl_engine_first_seen(nl_engine *e, const char *stream,
                             const char *consumer, int64_t *created_ns) {
  const nl_consumer_state *st = nl_registry_find(e->reg, stream, consumer);
  *created_ns = st ? st->created_ns : 0;
  return st ? st->first_seen_ns : 0;
}

typedef struct {
  size_t consumers;
  size_t *active;
} count_ctx;

static void count_one(nl_consumer_state *st, void *arg) {
  count_ctx *ctx = arg;
  ctx->consumers++;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (st->active[cls] != NULL)
      ctx->active[cls]++;
}

void nl_engine_counts(nl_engine *e, size_t *consumers,
                      size_t active[NL_CLASS_COUNT]) {
  memset(active, 0, NL_CLASS_COUNT * sizeof(*active));
  count_ctx ctx = {0, active};
  nl_registry_each(e->reg, count_one, &ctx);
  *consumers = ctx.consumers;
  for (size_t i = 0; i < e->streams.n; i++)
    for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
      if (e->streams.recs[i].active[cls] != NULL)
        active[cls]++;
}

bool nl_engine_knows(nl_engine *e, const char *stream, const char *consumer) {
  return nl_registry_find(e->reg, stream, consumer) != NULL;
}

void nl_engine_advisory_counts(nl_engine *e, uint64_t *fed, uint64_t *unknown,
                               uint64_t *contradicted) {
  *fed = e->advisories_fed;
  *unknown = e->advisories_unknown;
  *contradicted = e->advisories_contradicted;
}
