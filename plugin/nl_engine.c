/* nl_engine.c: one poll's snapshots through history and detectors. */
#include "nl_engine.h"

#include <stdlib.h>
#include <string.h>

/* Running count of messages lost to eviction, per stream name. */
typedef struct {
  char *name;
  uint64_t lost_total;
} stream_total;

struct nl_engine {
  nl_registry *reg;
  nl_detect_params params;
  uint32_t generation;
  stream_total *totals;
  size_t n_totals;
  size_t cap_totals;
};

nl_engine *nl_engine_create(const nl_detect_params *params) {
  nl_engine *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return NULL;
  e->reg = nl_registry_create();
  if (e->reg == NULL) {
    free(e);
    return NULL;
  }
  e->params = *params;
  return e;
}

void nl_engine_free(nl_engine *e) {
  if (e == NULL)
    return;
  nl_registry_free(e->reg);
  for (size_t i = 0; i < e->n_totals; i++)
    free(e->totals[i].name);
  free(e->totals);
  free(e);
}

nl_registry *nl_engine_registry(nl_engine *e) { return e->reg; }

/* Returns the running total for a stream, creating it at 0; NULL when memory
 * runs out. */
static stream_total *total_for(nl_engine *e, const char *name) {
  for (size_t i = 0; i < e->n_totals; i++)
    if (strcmp(e->totals[i].name, name) == 0)
      return &e->totals[i];
  if (e->n_totals == e->cap_totals) {
    size_t n = e->cap_totals ? 2 * e->cap_totals : 16;
    stream_total *t = realloc(e->totals, n * sizeof(*t));
    if (t == NULL)
      return NULL;
    e->totals = t;
    e->cap_totals = n;
  }
  char *copy = strdup(name);
  if (copy == NULL)
    return NULL;
  e->totals[e->n_totals] = (stream_total){copy, 0};
  return &e->totals[e->n_totals++];
}

/* Brings st->active in line with this poll's detection, reporting each
 * change. */
static void update_findings(nl_consumer_state *st, const bool *active,
                            nl_finding *found, int64_t now_ns,
                            const nl_engine_sink *sink, void *ud) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    nl_finding *held = st->active[cls];
    if (active[cls]) {
      if (held != NULL) {
        found[cls].since_ns = held->since_ns;
        *held = found[cls];
        continue;
      }
      held = malloc(sizeof(*held));
      if (held == NULL)
        continue; /* Reported on a later poll when memory allows. */
      found[cls].since_ns = now_ns;
      *held = found[cls];
      st->active[cls] = held;
      if (sink && sink->transition)
        sink->transition(ud, st->stream, st->name, held, true, NULL);
    } else if (held != NULL) {
      if (sink && sink->transition)
        sink->transition(ud, st->stream, st->name, held, false, NULL);
      free(held);
      st->active[cls] = NULL;
    }
  }
}

typedef struct {
  const nl_snapshot_set *set;
  const nl_engine_sink *sink;
  void *ud;
  size_t kept;
} sweep_ctx;

/* Keeps a consumer that was not listed when its stream's consumer list was
 * incomplete this poll: it is unobservable, not gone. */
static bool keep_unlisted(const nl_consumer_state *st, void *arg) {
  sweep_ctx *ctx = arg;
  for (size_t i = 0; i < ctx->set->n_streams; i++) {
    if (strcmp(ctx->set->streams[i].name, st->stream) != 0)
      continue;
    if (ctx->set->streams[i].consumers_complete)
      return false;
    ctx->kept++;
    return true;
  }
  return false;
}

static void report_gone(nl_consumer_state *st, void *arg) {
  const sweep_ctx *ctx = arg;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (st->active[cls] != NULL && ctx->sink && ctx->sink->transition)
      ctx->sink->transition(ctx->ud, st->stream, st->name, st->active[cls],
                            false, "consumer deleted");
}

size_t nl_engine_apply(nl_engine *e, const nl_snapshot_set *set, int64_t now_ns,
                       const nl_engine_sink *sink, void *ud) {
  e->generation++;
  uint64_t *lost = calloc(set->n_streams ? set->n_streams : 1, sizeof(*lost));
  for (size_t i = 0; i < set->n_consumers; i++) {
    const nl_consumer_snap *c = &set->consumers[i];
    const nl_stream_snap *s = &set->streams[c->stream_index];
    /* A consumer listed twice in one poll (pages shifted by concurrent
     * creates or deletes) is recorded once. */
    nl_consumer_state *seen = nl_registry_find(e->reg, c->stream, c->name);
    if (seen != NULL && seen->seen_generation == e->generation)
      continue;
    bool reset;
    nl_consumer_state *st =
        nl_registry_observe(e->reg, c, s, now_ns, e->generation, &reset);
    if (st == NULL)
      continue;
    bool active[NL_CLASS_COUNT];
    nl_finding found[NL_CLASS_COUNT];
    nl_detect_consumer(st, c, s, &e->params, active, found);
    update_findings(st, active, found, now_ns, sink, ud);
    if (lost != NULL)
      lost[c->stream_index] += st->lost_last;
    if (sink && sink->consumer)
      sink->consumer(ud, c, s, st);
  }
  for (size_t i = 0; i < set->n_streams; i++) {
    stream_total *t = total_for(e, set->streams[i].name);
    if (t != NULL && lost != NULL)
      t->lost_total += lost[i];
    if (sink && sink->stream)
      sink->stream(ud, &set->streams[i], t ? t->lost_total : 0);
  }
  free(lost);
  sweep_ctx ctx = {set, sink, ud, 0};
  nl_registry_sweep(e->reg, e->generation, keep_unlisted, report_gone, &ctx);
  return ctx.kept;
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
}
