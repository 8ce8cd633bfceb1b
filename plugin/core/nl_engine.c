/* nl_engine.c: one poll's snapshots through history and detectors. */
#include "nl_engine.h"

#include "core/detect/nl_detect_ext.h"
#include "core/detect/nl_detect_source.h"

#include <stdlib.h>
#include <string.h>

/* Per stream name: the running count of messages lost to eviction, and the
 * stream-level findings with what their detection keeps between polls. */
typedef struct {
  char *name;
  uint64_t lost_total;
  uint32_t seen_generation;
  int64_t last_seen_ns; /* Poll time it was last listed or missing. */
  nl_ext_stream_prev prev;
  nl_finding *active[NL_CLASS_COUNT]; /* Stream-level classes only. */
  nl_seqclock *clock;            /* Of a max_age stream (owned), or NULL. */
  unsigned unobservable_polls;   /* Consecutive polls that could not see it. */
  int64_t unobservable_since_ns; /* The first of them. */
  /* The last sequence at the latest poll that saw the stream hold no
   * message (0: none seen): a consumer first seen after it can lose none
   * of those sequences. */
  uint64_t unstored_through;
  /* The latest poll saw it hold no message with first_seq equal to
   * last_seq: its first sequence is one it never stored (see
   * unstored_for). */
  bool first_unstored;
  /* Its creation time as first seen (a restarted server reports one a
   * fraction of a millisecond off: nl_created_same), for its configuration
   * key; and what SOURCE_STALLED keeps of its mirror or sources (owned,
   * NULL for a stream that copies nothing). */
  int64_t created_ns;
  nl_source_state *source;
  /* Where the poll of set_generation listed it (origins are looked up by
   * name). */
  size_t set_index;
  uint32_t set_generation;
  /* Its consumers the server removed for inactivity (CONSUMER_EXPIRED),
   * allocated at the first, or NULL. */
  nl_expired_list *expired;
} stream_total;

/* Polls in a row a stream must stay unobservable before
 * CONSUMER_UNOBSERVABLE is raised: a leader election after a server is lost
 * hides an R3 stream for one poll at most, and is not worth a warning. Its
 * consumers are counted unobservable (and kept) from the first poll. */
#define NL_UNOBSERVABLE_POLLS 2
/* ... and for this long: a consumer list of a clustered server waits 4 s
 * for consumer leaders that do not answer, and a routine leader failover
 * hides a stream for about as long, polled every second or not. */
#define NL_UNOBSERVABLE_NS (10LL * 1000000000LL)

/* How long the totals of a stream neither listed nor reported missing are
 * kept (a stream deleted and created again within it keeps its count of
 * lost messages); then they are freed, so that streams coming and going
 * all day do not grow the engine. */
#define NL_STREAM_FORGET_NS (600LL * 1000000000LL)

/* An empty slot of the stream index. */
#define NO_SLOT ((size_t)-1)

struct nl_engine {
  nl_registry *reg;
  nl_detect_params params;
  nl_audit_params audit;
  nl_audit_result scratch; /* Reused by the configuration classes. */
  uint32_t generation;
  stream_total *totals;
  size_t n_totals;
  size_t cap_totals;
  /* Open-addressing index of totals by name: NO_SLOT or an index into
   * totals; n_slots is 0 or a power of two at least twice n_totals. */
  size_t *slots;
  size_t n_slots;
  uint64_t advisories_fed;
  uint64_t advisories_unknown;
  uint64_t advisories_contradicted;
  /* The latest findings that cleared: a ring, n_resolved of them so far. */
  nl_resolved resolved[NL_RESOLVED_MAX];
  uint64_t n_resolved;
};

/* The counters a finding's cost is measured on (see nl_finding): now, and
 * before the interval that ended now (an onset counts its own interval). */
typedef struct {
  uint64_t lost;
  uint64_t redelivered;
  uint64_t lost_before;
  uint64_t redelivered_before;
} cost_base;

static uint64_t grown(uint64_t now, uint64_t then) {
  return now > then ? now - then : 0;
}

/* A stream-level finding's cost base: the stream's lost messages (this
 * poll's loss is already in it; a stream counts no redeliveries). */
static cost_base stream_cost(const stream_total *t) {
  return (cost_base){t->lost_total, 0, t->lost_total, 0};
}

/* Reports that held (of stream/consumer) cleared for reason, keeping it
 * among the latest resolved findings. */
static void report_clear(nl_engine *e, const char *stream, const char *consumer,
                         const nl_finding *held, const char *reason,
                         int64_t now_ns, const nl_engine_sink *sink, void *ud) {
  nl_resolved *r = &e->resolved[e->n_resolved % NL_RESOLVED_MAX];
  char *st = strdup(stream), *co = strdup(consumer);
  if (st != NULL && co != NULL) {
    free(r->stream);
    free(r->consumer);
    *r = (nl_resolved){st, co, *held, now_ns, reason};
    e->n_resolved++;
  } else {
    free(st);
    free(co);
  }
  if (sink && sink->transition)
    sink->transition(ud, stream, consumer, held, false, reason);
}

const nl_resolved *nl_engine_resolved(const nl_engine *e, size_t k) {
  if (k >= NL_RESOLVED_MAX || k >= e->n_resolved)
    return NULL;
  return &e->resolved[(e->n_resolved - 1 - k) % NL_RESOLVED_MAX];
}

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
  nl_audit_params_default(&e->audit);
  return e;
}

/* Frees what t owns. */
static void total_free(stream_total *t) {
  free(t->name);
  free(t->clock);
  nl_source_state_free(t->source);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    free(t->active[cls]);
  if (t->expired != NULL)
    nl_expired_clear(t->expired);
  free(t->expired);
}

void nl_engine_free(nl_engine *e) {
  if (e == NULL)
    return;
  nl_registry_free(e->reg);
  for (size_t i = 0; i < NL_RESOLVED_MAX; i++) {
    free(e->resolved[i].stream);
    free(e->resolved[i].consumer);
  }
  for (size_t i = 0; i < e->n_totals; i++)
    total_free(&e->totals[i]);
  free(e->totals);
  free(e->slots);
  nl_audit_result_free(&e->scratch);
  free(e);
}

/* The slot that holds name's index, or the empty slot where it would go;
 * NULL when the index is empty. */
static size_t *slot_of(const nl_engine *e, const char *name) {
  if (e->n_slots == 0)
    return NULL;
  size_t mask = e->n_slots - 1;
  for (size_t i =
           (size_t)nl_hash_bytes(NL_HASH_BASIS, name, strlen(name)) & mask;
       ; i = (i + 1) & mask) {
    size_t *slot = &e->slots[i];
    if (*slot == NO_SLOT || strcmp(e->totals[*slot].name, name) == 0)
      return slot;
  }
}

/* Builds the index again for the totals held, with room for at least
 * want of them. Returns 0, or -1 when memory runs out (the old index
 * stays). */
static int index_rebuild(nl_engine *e, size_t want) {
  size_t n = 16;
  while (n < 2 * want)
    n *= 2;
  size_t *slots = malloc(n * sizeof(*slots));
  if (slots == NULL)
    return -1;
  for (size_t i = 0; i < n; i++)
    slots[i] = NO_SLOT;
  free(e->slots);
  e->slots = slots;
  e->n_slots = n;
  for (size_t i = 0; i < e->n_totals; i++)
    *slot_of(e, e->totals[i].name) = i;
  return 0;
}

/* Returns the totals of the stream named name, or NULL. */
static stream_total *find_total(const nl_engine *e, const char *name) {
  size_t *slot = slot_of(e, name);
  return slot != NULL && *slot != NO_SLOT ? &e->totals[*slot] : NULL;
}

/* Frees the totals of streams neither listed nor missing for
 * NL_STREAM_FORGET_NS (their findings were cleared when they went). */
static void forget_gone_streams(nl_engine *e, int64_t now_ns) {
  size_t kept = 0;
  for (size_t i = 0; i < e->n_totals; i++) {
    stream_total *t = &e->totals[i];
    if (t->seen_generation != e->generation &&
        now_ns - t->last_seen_ns > NL_STREAM_FORGET_NS) {
      total_free(t);
      continue;
    }
    e->totals[kept++] = *t;
  }
  if (kept == e->n_totals)
    return;
  e->n_totals = kept;
  /* The entries moved: index them again in the slots there are, which have
   * room for more than are left. */
  for (size_t i = 0; i < e->n_slots; i++)
    e->slots[i] = NO_SLOT;
  for (size_t i = 0; i < e->n_totals; i++)
    *slot_of(e, e->totals[i].name) = i;
}

size_t nl_engine_streams_held(const nl_engine *e) { return e->n_totals; }

nl_registry *nl_engine_registry(nl_engine *e) { return e->reg; }

/* The clearing hold of every class (nl_detect_params.clear_hold_s). */
static int64_t hold_ns(const nl_engine *e) {
  double s = e->params.clear_hold_s;
  return s > 0 ? (int64_t)(s * 1e9) : 0;
}

/* Returns the running total for a stream, creating it at 0; NULL when memory
 * runs out. */
static stream_total *total_for(nl_engine *e, const char *name) {
  stream_total *found = find_total(e, name);
  if (found != NULL)
    return found;
  if (2 * (e->n_totals + 1) > e->n_slots &&
      index_rebuild(e, 2 * (e->n_totals + 1)) != 0)
    return NULL;
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
  e->totals[e->n_totals] = (stream_total){.name = copy};
  *slot_of(e, copy) = e->n_totals;
  return &e->totals[e->n_totals++];
}

/* Whether held, whose condition is missing at now_ns under configuration
 * key, clears now; counts the missing poll. It clears at once when the
 * configuration changed since the condition last held (a fix), else once
 * the condition has been missing for hold_ns and NL_CLEAR_POLLS polls in a
 * row: a condition hovering at its threshold gives one onset, not one per
 * dip. */
static bool clear_due(nl_finding *held, uint64_t key, int64_t now_ns,
                      int64_t hold_ns) {
  if (held->config_key != 0 && key != 0 && key != held->config_key)
    return true;
  if (held->absent_polls == 0)
    held->absent_since_ns = now_ns;
  if (held->absent_polls < UINT32_MAX)
    held->absent_polls++;
  return held->absent_polls >= NL_CLEAR_POLLS &&
         now_ns - held->absent_since_ns >= hold_ns;
}

/* Brings held (st->active, or a stream's) in line with this detection for
 * the classes from first to last, reporting each change under stream and
 * consumer. key is the configuration seen (nl_config_key), 0 when no poll
 * is behind this detection (an advisory): such a detection only raises. */
static void update_held(nl_engine *e, nl_finding **held_set, const char *stream,
                        const char *consumer, int first, int last,
                        const bool *active, nl_finding *found, uint64_t key,
                        cost_base base, int64_t now_ns,
                        const nl_engine_sink *sink, void *ud) {
  for (int cls = first; cls <= last; cls++) {
    nl_finding *held = held_set[cls];
    if (held != NULL) {
      held->lost = grown(base.lost, held->onset_lost);
      held->redelivered = grown(base.redelivered, held->onset_redelivered);
    }
    if (active[cls]) {
      nl_finding_guard_fix(&found[cls], stream, consumer);
      found[cls].config_key = key != 0 ? key : held ? held->config_key : 0;
      found[cls].absent_since_ns = 0;
      found[cls].absent_polls = 0;
      int64_t hint = found[cls].condition_since_ns;
      if (hint <= 0 || hint >= now_ns)
        hint = 0;
      if (held != NULL) {
        int64_t kept = held->condition_since_ns;
        found[cls].condition_since_ns =
            kept > 0 && (hint == 0 || kept < hint) ? kept : hint;
        if (found[cls].condition_since_ns >= held->since_ns)
          found[cls].condition_since_ns = 0;
        found[cls].since_ns = held->since_ns;
        found[cls].onset_lost = held->onset_lost;
        found[cls].onset_redelivered = held->onset_redelivered;
        found[cls].lost = held->lost;
        found[cls].redelivered = held->redelivered;
        *held = found[cls];
        continue;
      }
      held = malloc(sizeof(*held));
      if (held == NULL)
        continue; /* Reported on a later poll when memory allows. */
      found[cls].since_ns = now_ns;
      found[cls].condition_since_ns = hint;
      found[cls].onset_lost = base.lost_before;
      found[cls].onset_redelivered = base.redelivered_before;
      found[cls].lost = grown(base.lost, base.lost_before);
      found[cls].redelivered = grown(base.redelivered, base.redelivered_before);
      *held = found[cls];
      held_set[cls] = held;
      if (sink && sink->transition)
        sink->transition(ud, stream, consumer, held, true, NULL);
    } else if (held != NULL && key != 0 &&
               clear_due(held, key, now_ns, hold_ns(e))) {
      report_clear(e, stream, consumer, held, NULL, now_ns, sink, ud);
      free(held);
      held_set[cls] = NULL;
    }
  }
}

/* Brings the findings of classes first..last of st in line with this
 * detection under configuration key (see update_held), reporting each
 * change. st's findings array is made writable only when a class is active
 * (most consumers never have a finding); out of memory, the onsets wait
 * for a later poll. */
static void update_consumer(nl_engine *e, nl_consumer_state *st, int first,
                            int last, const bool *active, nl_finding *found,
                            uint64_t key, int64_t now_ns,
                            const nl_engine_sink *sink, void *ud) {
  bool any = false;
  for (int cls = first; cls <= last; cls++)
    any |= active[cls];
  nl_finding **held = any ? nl_state_findings(st) : st->active;
  const nl_sample *s0 = nl_state_latest(st);
  uint64_t redelivered_last = s0 != NULL ? s0->redeliveries : 0;
  cost_base base = {st->lost_total, st->redelivered_total,
                    grown(st->lost_total, st->lost_last),
                    grown(st->redelivered_total, redelivered_last)};
  if (held != NULL)
    update_held(e, held, st->stream, st->name, first, last, active, found, key,
                base, now_ns, sink, ud);
}

typedef struct {
  nl_engine *e;
  const nl_snapshot_set *set;
  const nl_engine_sink *sink;
  void *ud;
  size_t kept;
  int64_t now_ns;
} sweep_ctx;

/* Keeps a consumer that was not listed when its stream's consumer list was
 * incomplete this poll, or its stream missing: it is unobservable, not
 * gone. */
static bool keep_unlisted(const nl_consumer_state *st, void *arg) {
  sweep_ctx *ctx = arg;
  const nl_consumer_ref *away =
      nl_snapshot_set_elsewhere(ctx->set, st->stream, st->name);
  if (away != NULL) {
    /* Led by another server: its agent judges it. With no leader at all,
     * nobody can: kept, unobservable. */
    ctx->kept += away->leaderless;
    return away->leaderless;
  }
  for (size_t i = 0; i < ctx->set->n_streams; i++) {
    if (strcmp(ctx->set->streams[i].name, st->stream) != 0)
      continue;
    if (ctx->set->streams[i].consumers_complete)
      return false;
    ctx->kept++;
    return true;
  }
  if (nl_snapshot_set_is_missing(ctx->set, st->stream)) {
    ctx->kept++;
    return true;
  }
  return false;
}

/* Keeps consumer st, which the poll no longer lists, among its stream's
 * expired consumers when the server's inactivity timer removed it with
 * something to lose (nl_expiry_gone). Its stream must be listed with all
 * its consumers. */
static void note_expired(const sweep_ctx *ctx, const nl_consumer_state *st) {
  const nl_stream_snap *s = NULL;
  for (size_t i = 0; i < ctx->set->n_streams && s == NULL; i++)
    if (strcmp(ctx->set->streams[i].name, st->stream) == 0)
      s = &ctx->set->streams[i];
  if (s == NULL || s->elsewhere || !s->consumers_complete)
    return;
  stream_total *t = find_total(ctx->e, st->stream);
  nl_expired gone;
  if (t == NULL || !nl_expiry_gone(st, s, ctx->now_ns, &gone))
    return;
  if (t->expired == NULL &&
      (t->expired = calloc(1, sizeof(*t->expired))) == NULL) {
    free(gone.name);
    return;
  }
  nl_expired_add(t->expired, &gone);
}

static void report_gone(nl_consumer_state *st, void *arg) {
  const sweep_ctx *ctx = arg;
  bool away = nl_snapshot_set_elsewhere(ctx->set, st->stream, st->name);
  const char *reason = away ? NL_REASON_LED_ELSEWHERE : "consumer deleted";
  if (!away && st->expiry != NULL)
    note_expired(ctx, st);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (st->active[cls] != NULL)
      report_clear(ctx->e, st->stream, st->name, st->active[cls], reason,
                   ctx->now_ns, ctx->sink, ctx->ud);
}

/* A stream another server leads (Scope "server"): its stream-level
 * findings are that server's agent's now; they clear here as led
 * elsewhere, and the stream counts as seen. */
static void stream_elsewhere(nl_engine *e, stream_total *t, int64_t now_ns,
                             const nl_engine_sink *sink, void *ud) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    if (t->active[cls] == NULL)
      continue;
    report_clear(e, t->name, NL_STREAM_FINDING_CONSUMER, t->active[cls],
                 NL_REASON_LED_ELSEWHERE, now_ns, sink, ud);
    free(t->active[cls]);
    t->active[cls] = NULL;
  }
  t->prev.have_prev = false;
  t->unobservable_polls = 0;
  t->seen_generation = e->generation;
  t->last_seen_ns = now_ns;
}

/* Counts the polls in a row in which stream t was unobservable and holds
 * back a new CONSUMER_UNOBSERVABLE until NL_UNOBSERVABLE_POLLS of them
 * over NL_UNOBSERVABLE_NS at least. */
static void debounce_unobservable(stream_total *t, bool *active,
                                  int64_t now_ns) {
  if (!active[NL_CONSUMER_UNOBSERVABLE]) {
    t->unobservable_polls = 0;
    return;
  }
  if (t->unobservable_polls == 0)
    t->unobservable_since_ns = now_ns;
  if (t->unobservable_polls < NL_UNOBSERVABLE_POLLS)
    t->unobservable_polls++;
  bool long_enough = t->unobservable_polls >= NL_UNOBSERVABLE_POLLS &&
                     now_ns - t->unobservable_since_ns >= NL_UNOBSERVABLE_NS;
  if (!long_enough && t->active[NL_CONSUMER_UNOBSERVABLE] == NULL)
    active[NL_CONSUMER_UNOBSERVABLE] = false;
}

/* The stream of this poll named name, when it is visible as an origin:
 * listed (indexed by index_streams) and led by the polled server. */
static const nl_stream_snap *listed_stream(const nl_engine *e,
                                           const nl_snapshot_set *set,
                                           const char *name) {
  const stream_total *t = find_total(e, name);
  if (t == NULL || t->set_generation != e->generation ||
      t->set_index >= set->n_streams)
    return NULL;
  const nl_stream_snap *s = &set->streams[t->set_index];
  return strcmp(s->name, name) == 0 && !s->elsewhere ? s : NULL;
}

/* Notes where this poll lists each stream, when some stream copies others
 * (their origins are looked up by name). */
static void index_streams(nl_engine *e, const nl_snapshot_set *set) {
  bool copies = false;
  for (size_t i = 0; i < set->n_streams && !copies; i++)
    copies = set->streams[i].n_links > 0;
  for (size_t i = 0; copies && i < set->n_streams; i++) {
    stream_total *t = total_for(e, set->streams[i].name);
    if (t != NULL) {
      t->set_index = i;
      t->set_generation = e->generation;
    }
  }
}

/* SOURCE_STALLED of stream s (state t): sets active/found for it and adds
 * the messages it newly counts as skipped to the stream's lost count. */
static void source_stalled(nl_engine *e, const nl_snapshot_set *set,
                           const nl_stream_snap *s, stream_total *t,
                           int64_t now_ns, bool *active, nl_finding *found) {
  const nl_stream_snap *origins[NL_LINKS_MAX];
  for (size_t k = 0; k < s->n_links && k < NL_LINKS_MAX; k++)
    origins[k] =
        s->links[k].external ? NULL : listed_stream(e, set, s->links[k].name);
  nl_source_result r;
  nl_detect_source(&t->source, s, origins, now_ns, &r);
  t->lost_total += r.lost_delta;
  active[NL_SOURCE_STALLED] = r.active;
  if (r.active)
    found[NL_SOURCE_STALLED] = r.finding;
}

/* Detects the stream-level classes of stream i (state t) and reports
 * transitions and the stream's classes. */
static void stream_classes(nl_engine *e, const nl_snapshot_set *set, size_t i,
                           stream_total *t, uint64_t delivered_delta,
                           int64_t now_ns, const nl_engine_sink *sink,
                           void *ud) {
  bool active[NL_CLASS_COUNT] = {false};
  nl_finding found[NL_CLASS_COUNT];
  nl_ext_detect_stream(set, i, &t->prev, delivered_delta, now_ns, t->active,
                       &e->params, &e->scratch, &e->audit, active, found);
  debounce_unobservable(t, active, now_ns);
  const nl_stream_snap *s = &set->streams[i];
  nl_full_prev full = t->prev.have_prev ? t->prev.full : (nl_full_prev){0};
  active[NL_PUBLISH_REJECTED] =
      nl_detect_publish_rejected(s, &full, now_ns, &found[NL_PUBLISH_REJECTED]);
  source_stalled(e, set, s, t, now_ns, active, found);
  if (t->created_ns == 0) /* A stream first held in this poll. */
    t->created_ns = s->created_ns;
  uint64_t key = nl_config_key(NULL, t->created_ns, s);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (nl_class_is_stream(cls) && cls != NL_CONSUMER_EXPIRED)
      update_held(e, t->active, t->name, NL_STREAM_FINDING_CONSUMER, cls, cls,
                  active, found, key, stream_cost(t), now_ns, sink, ud);
  int64_t empty_since = 0;
  if (s->consumer_count == 0)
    empty_since = t->prev.have_prev && t->prev.empty_since_ns > 0
                      ? t->prev.empty_since_ns
                      : now_ns;
  t->prev = (nl_ext_stream_prev){true,
                                 s->last_seq,
                                 s->msgs,
                                 s->consumer_count,
                                 now_ns,
                                 empty_since,
                                 nl_full_next(&full, s, now_ns)};
  t->seen_generation = e->generation;
  t->last_seen_ns = now_ns;
}

/* A stream STREAM.LIST reported missing: CONSUMER_UNOBSERVABLE is detected
 * for it; its other stream-level findings are kept as they are (nothing
 * was seen either way). */
static void missing_stream(nl_engine *e, const nl_snapshot_set *set, size_t i,
                           int64_t now_ns, const nl_engine_sink *sink,
                           void *ud) {
  stream_total *t = total_for(e, set->missing_streams[i]);
  if (t == NULL)
    return;
  bool active[NL_CLASS_COUNT] = {false};
  nl_finding found[NL_CLASS_COUNT];
  nl_ext_detect_missing_stream(set, i, &e->params, &e->scratch, &e->audit,
                               active, found);
  debounce_unobservable(t, active, now_ns);
  /* Nothing of the stream was seen: it counts as configured as before,
   * so that the finding can only clear by its hold. */
  const nl_finding *held = t->active[NL_CONSUMER_UNOBSERVABLE];
  update_held(e, t->active, t->name, NL_STREAM_FINDING_CONSUMER,
              NL_CONSUMER_UNOBSERVABLE, NL_CONSUMER_UNOBSERVABLE, active, found,
              held && held->config_key ? held->config_key : 1, stream_cost(t),
              now_ns, sink, ud);
  t->seen_generation = e->generation;
  t->last_seen_ns = now_ns;
}

const nl_finding *nl_engine_stream_finding(nl_engine *e, const char *stream,
                                           nl_class cls) {
  if ((unsigned)cls >= NL_CLASS_COUNT)
    return NULL;
  const stream_total *t = find_total(e, stream);
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
  for (size_t i = 0; i < e->n_totals; i++) {
    const stream_total *t = &e->totals[i];
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

/* Clears the stream-level findings of streams this poll did not list and
 * did not count as missing. */
static void streams_gone(nl_engine *e, int64_t now_ns,
                         const nl_engine_sink *sink, void *ud) {
  for (size_t i = 0; i < e->n_totals; i++) {
    stream_total *t = &e->totals[i];
    if (t->seen_generation == e->generation)
      continue;
    t->prev.have_prev = false;
    t->unobservable_polls = 0;
    free(t->clock);
    t->clock = NULL;
    if (t->expired != NULL)
      nl_expired_clear(t->expired);
    for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
      if (t->active[cls] == NULL)
        continue;
      report_clear(e, t->name, NL_STREAM_FINDING_CONSUMER, t->active[cls],
                   "stream not listed", now_ns, sink, ud);
      free(t->active[cls]);
      t->active[cls] = NULL;
    }
  }
}

/* With a stream list short of its total (set->stream_list_short), makes
 * view's missing streams those of set plus the streams of the previous
 * poll that the list left out: they are unobservable, not gone. Call after
 * the listed streams are marked seen. Returns the name array view borrows
 * (free it after the last use of view), or NULL when nothing was added. */
static char **with_left_out(const nl_engine *e, const nl_snapshot_set *set,
                            nl_snapshot_set *view) {
  if (!set->stream_list_short)
    return NULL;
  char **names =
      malloc((set->n_missing_streams + e->n_totals) * sizeof(*names));
  if (names == NULL)
    return NULL;
  size_t n = 0;
  for (size_t i = 0; i < set->n_missing_streams; i++)
    names[n++] = set->missing_streams[i];
  for (size_t i = 0; i < e->n_totals; i++)
    if (e->totals[i].seen_generation + 1 == e->generation &&
        !nl_snapshot_set_is_missing(set, e->totals[i].name))
      names[n++] = e->totals[i].name;
  view->missing_streams = names;
  view->n_missing_streams = n;
  return names;
}

/* Samples the last sequence of max_age stream s at now_ns into its clock
 * (allocated at its first poll), at a spacing of max_age / 16 so that the
 * clock reaches back twice max_age. Returns the clock, or NULL for a
 * stream without max_age or when memory runs out. */
static const nl_seqclock *stream_clock(nl_engine *e, const nl_stream_snap *s,
                                       int64_t now_ns) {
  if (s->max_age_ns <= 0)
    return NULL;
  stream_total *t = total_for(e, s->name);
  if (t == NULL)
    return NULL;
  if (t->clock == NULL && (t->clock = calloc(1, sizeof(*t->clock))) == NULL)
    return NULL;
  nl_seqclock_add(t->clock, now_ns, s->last_seq,
                  s->max_age_ns / (NL_SEQCLOCK_POINTS / 2));
  return t->clock;
}

/* What the polls before this one proved stream s never stored. */
typedef struct {
  uint64_t through;    /* As stream_total.unstored_through. */
  bool first_unstored; /* As stream_total.first_unstored. */
} unstored_mark;

/* What t (may be NULL) knows of sequences stream s never stored, for a
 * consumer first seen now: nothing once the stream went back (created
 * again). */
static unstored_mark unstored_of(const stream_total *t,
                                 const nl_stream_snap *s) {
  unstored_mark m = {0, false};
  if (t != NULL && t->unstored_through <= s->last_seq) {
    m.through = t->unstored_through;
    m.first_unstored = t->first_unstored;
  }
  return m;
}

/* The sequences consumer c, if first seen now, cannot have lost: those of
 * m, and its own start when it starts one below a sequence the stream
 * never stored. nats-server 2.10.8 to 2.10.16 report an empty memory
 * stream whose last sequence was skipped (an interest stream without
 * interest) with first_seq equal to last_seq; a consumer created on it
 * with deliver policy all starts at that first sequence, so its start was
 * published before it existed and never stored. A consumer that delivered
 * nothing yet is still at its start. */
static uint64_t unstored_for(unstored_mark m, const nl_consumer_snap *c) {
  uint64_t start = c->delivered_stream_seq + 1;
  if (m.first_unstored && c->deliver_all && c->delivered_consumer_seq == 0 &&
      start > m.through)
    return start;
  return m.through;
}

/* Keeps in t what stream s shows of sequences it never stored. */
static void note_empty(stream_total *t, const nl_stream_snap *s) {
  if (s->last_seq < t->unstored_through)
    t->unstored_through = 0;
  t->first_unstored = false;
  if (s->msgs == 0) {
    t->unstored_through = s->last_seq;
    t->first_unstored = s->last_seq > 0 && s->first_seq == s->last_seq;
  }
}

/* CONSUMER_EXPIRED of stream i of set, after the sweep noted the
 * consumers the server removed: held while one is not created again
 * safely (nl_expired_detect). The key changes with each one created again
 * safely, so that the finding clears at once when that was the last. */
static void expired_classes(nl_engine *e, const nl_snapshot_set *set, size_t i,
                            int64_t now_ns, const nl_engine_sink *sink,
                            void *ud) {
  stream_total *t = find_total(e, set->streams[i].name);
  if (t == NULL || (t->expired == NULL && !t->active[NL_CONSUMER_EXPIRED]))
    return;
  bool active[NL_CLASS_COUNT] = {false};
  nl_finding found[NL_CLASS_COUNT];
  nl_expired_list none = {0};
  nl_expired_list *l = t->expired ? t->expired : &none;
  active[NL_CONSUMER_EXPIRED] =
      nl_expired_detect(l, set, i, now_ns, &found[NL_CONSUMER_EXPIRED]);
  uint64_t fixes = l->fixes;
  uint64_t key =
      nl_hash_bytes(nl_config_key(NULL, t->created_ns, &set->streams[i]),
                    &fixes, sizeof(fixes));
  update_held(e, t->active, t->name, NL_STREAM_FINDING_CONSUMER,
              NL_CONSUMER_EXPIRED, NL_CONSUMER_EXPIRED, active, found,
              key ? key : 1, stream_cost(t), now_ns, sink, ud);
}

/* Takes the creation time of stream s into its totals (a restarted
 * server reports one a fraction of a millisecond off: nl_created_same).
 * A stream deleted and created again between two polls may already be
 * past the old one's last sequence, so that only its creation time tells:
 * then what the totals derived from the old stream's sequences is
 * forgotten. Its lost count and findings are kept (the findings clear at
 * once, their configuration key having changed). */
static void note_created(nl_engine *e, const nl_stream_snap *s) {
  stream_total *t = find_total(e, s->name);
  if (t == NULL || nl_created_same(t->created_ns, s->created_ns))
    return;
  if (t->created_ns != 0 && s->created_ns != 0) {
    free(t->clock);
    t->clock = NULL;
    t->unstored_through = 0;
    t->first_unstored = false;
    t->prev.have_prev = false;
  }
  t->created_ns = s->created_ns;
}

size_t nl_engine_apply(nl_engine *e, const nl_snapshot_set *set, int64_t now_ns,
                       const nl_engine_sink *sink, void *ud) {
  e->generation++;
  for (size_t i = 0; i < set->n_streams; i++)
    note_created(e, &set->streams[i]);
  size_t ns = set->n_streams ? set->n_streams : 1;
  uint64_t *lost = calloc(ns, sizeof(*lost));
  uint64_t *delivered = calloc(ns, sizeof(*delivered));
  const nl_seqclock **clock = malloc(ns * sizeof(*clock));
  for (size_t i = 0; clock != NULL && i < set->n_streams; i++)
    clock[i] = stream_clock(e, &set->streams[i], now_ns);
  /* Out of memory, no sequence counts as never stored. */
  unstored_mark *unstored = calloc(ns, sizeof(*unstored));
  for (size_t i = 0; unstored != NULL && i < set->n_streams; i++)
    unstored[i] =
        unstored_of(find_total(e, set->streams[i].name), &set->streams[i]);
  index_streams(e, set);
  for (size_t i = 0; i < set->n_consumers; i++) {
    const nl_consumer_snap *c = &set->consumers[i];
    const nl_stream_snap *s = &set->streams[c->stream_index];
    bool reset;
    nl_consumer_state *st = nl_registry_observe(
        e->reg, c, s, now_ns, e->generation,
        unstored != NULL ? unstored_for(unstored[c->stream_index], c) : 0,
        &reset);
    if (st == NULL)
      continue;
    /* Classes no detector below sets (the stream-level ones) stay off. */
    bool active[NL_CLASS_COUNT] = {false};
    nl_finding found[NL_CLASS_COUNT];
    e->advisories_contradicted += nl_ext_confirm(st, c);
    e->advisories_contradicted +=
        nl_gap_poll(st, c, s, clock ? clock[c->stream_index] : NULL, now_ns);
    nl_detect_consumer(st, c, s, &e->params, active, found);
    nl_ext_poll ctx = {set, i, clock ? clock[c->stream_index] : NULL,
                       &e->scratch, &e->audit};
    nl_ext_detect_consumer(st, c, s, &e->params, &ctx, now_ns, active, found);
    nl_finding bad;
    if (nl_ext_bad_declaration(st, &ctx, &e->params, &bad) && sink &&
        sink->declaration)
      sink->declaration(ud, st->stream, st->name, &bad);
    update_consumer(e, st, 0, NL_CLASS_COUNT - 1, active, found,
                    nl_config_key(c, st->created_ns, s), now_ns, sink, ud);
    if (lost != NULL)
      lost[c->stream_index] += st->lost_last;
    /* What the stream's consumers received in the interval; unknown
     * (NL_DELIVERED_UNKNOWN) once one of them has no poll before this one
     * (new, recreated, or its history reset, as after a server restart
     * that lost some of its state). */
    nl_past_sample s1;
    const nl_sample *s0 = nl_state_latest(st);
    uint64_t *d = delivered ? &delivered[c->stream_index] : NULL;
    if (d != NULL && (s0 == NULL || !nl_state_past(st, 1, &s1)))
      *d = NL_DELIVERED_UNKNOWN;
    else if (d != NULL && *d != NL_DELIVERED_UNKNOWN &&
             s0->delivered_consumer_seq > s1.delivered_consumer_seq)
      *d += s0->delivered_consumer_seq - s1.delivered_consumer_seq;
    if (sink && sink->consumer)
      sink->consumer(ud, c, s, st);
  }
  for (size_t i = 0; i < set->n_streams; i++) {
    /* A consumer list not read completely leaves out what some consumers
     * received. */
    if (delivered != NULL && !set->streams[i].consumers_complete)
      delivered[i] = NL_DELIVERED_UNKNOWN;
    stream_total *t = total_for(e, set->streams[i].name);
    if (t != NULL && lost != NULL)
      t->lost_total += lost[i];
    if (t != NULL)
      note_empty(t, &set->streams[i]);
    if (t != NULL && set->streams[i].elsewhere) {
      stream_elsewhere(e, t, now_ns, sink, ud);
      continue;
    }
    if (t != NULL)
      stream_classes(e, set, i, t, delivered ? delivered[i] : 0, now_ns, sink,
                     ud);
    if (set->streams[i].elsewhere)
      continue;
    if (sink && sink->stream)
      sink->stream(ud, &set->streams[i], t ? t->lost_total : 0);
  }
  /* From here on, the streams a short list left out are missing ones. */
  nl_snapshot_set view = *set;
  char **names = with_left_out(e, set, &view);
  for (size_t i = 0; i < view.n_missing_streams; i++)
    missing_stream(e, &view, i, now_ns, sink, ud);
  streams_gone(e, now_ns, sink, ud);
  forget_gone_streams(e, now_ns);
  free(lost);
  free(delivered);
  free(clock);
  free(unstored);
  sweep_ctx ctx = {e, &view, sink, ud, 0, now_ns};
  nl_registry_sweep(e->reg, e->generation, keep_unlisted, report_gone, &ctx);
  free(names);
  for (size_t i = 0; i < set->n_streams; i++)
    if (!set->streams[i].elsewhere)
      expired_classes(e, set, i, now_ns, sink, ud);
  return ctx.kept;
}

const char NL_REASON_LED_ELSEWHERE[] = "led by another server";

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
  for (size_t i = 0; i < e->n_totals; i++)
    for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
      if (e->totals[i].active[cls] != NULL)
        active[cls]++;
}

bool nl_engine_advisory(nl_engine *e, const nl_advisory *a, int64_t now_ns,
                        const nl_engine_sink *sink, void *ud) {
  e->advisories_fed++;
  nl_consumer_state *st = nl_registry_find(e->reg, a->stream, a->consumer);
  if (st == NULL) {
    e->advisories_unknown++;
    return false;
  }
  /* A DELETED advisory is a claim anyone may publish: the next poll that
   * no longer lists the consumer clears its findings, not the claim. It
   * and an API delete's audit tell CONSUMER_EXPIRED when and how the
   * consumer went, which that poll checks (nl_expiry_gone). */
  if (a->kind == NL_ADV_DELETED || a->kind == NL_ADV_API_DELETE) {
    nl_expiry_advisory(st, a);
    return true;
  }
  int recorded = nl_ext_record(st, a);
  if (recorded == 1)
    e->advisories_contradicted++;
  if (recorded != 0)
    return true;
  if (a->kind != NL_ADV_MAX_DELIVER && a->kind != NL_ADV_NAK)
    return true;
  bool active[NL_CLASS_COUNT];
  nl_finding found[NL_CLASS_COUNT];
  nl_ext_detect_advisory(st, &e->params, now_ns, active, found);
  /* Only onsets and updates here: a class the advisories no longer prove
   * may still hold from polling, so clearing waits for the next poll. */
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    if (cls != NL_MAX_DELIVER_EXHAUSTED && cls != NL_NAK_STORM)
      continue;
    if (active[cls])
      update_consumer(e, st, cls, cls, active, found, 0, now_ns, sink, ud);
  }
  return true;
}

static void after_gap(nl_consumer_state *st, void *arg) {
  nl_state_after_gap(st, *(const int64_t *)arg);
}

void nl_engine_gap(nl_engine *e, int64_t now_ns) {
  nl_registry_each(e->reg, after_gap, &now_ns);
}

bool nl_engine_knows(nl_engine *e, const char *stream, const char *consumer) {
  return nl_registry_find(e->reg, stream, consumer) != NULL;
}

bool nl_engine_created(nl_engine *e, const nl_snapshot_set *set, int64_t now_ns,
                       const nl_engine_sink *sink, void *ud) {
  if (set->n_streams < 1 || set->n_consumers < 1)
    return false;
  const nl_consumer_snap *c = &set->consumers[0];
  const nl_stream_snap *s = &set->streams[c->stream_index];
  if (nl_registry_find(e->reg, c->stream, c->name) != NULL)
    return false;
  bool reset;
  nl_consumer_state *st = nl_registry_observe(
      e->reg, c, s, now_ns, e->generation,
      unstored_for(unstored_of(find_total(e, s->name), s), c), &reset);
  if (st == NULL)
    return false;
  const stream_total *t = find_total(e, s->name);
  nl_gap_poll(st, c, s, t != NULL ? t->clock : NULL, now_ns);
  bool active[NL_CLASS_COUNT] = {false};
  nl_finding found[NL_CLASS_COUNT];
  nl_ext_poll ctx = {set, 0, NULL, &e->scratch, &e->audit};
  nl_ext_detect_config(st, &ctx, &e->params, active, found);
  uint64_t key = nl_config_key(c, st->created_ns, s);
  update_consumer(e, st, NL_ACK_NONE_CONSUMER, NL_ACK_NONE_CONSUMER, active,
                  found, key, now_ns, sink, ud);
  update_consumer(e, st, NL_ACK_ALL_PARALLEL, NL_ACK_ALL_PARALLEL, active,
                  found, key, now_ns, sink, ud);
  update_consumer(e, st, NL_ACK_WAIT_VIOLATION, NL_ACK_WAIT_VIOLATION, active,
                  found, key, now_ns, sink, ud);
  update_consumer(e, st, NL_CONSUMER_SINGLE_REPLICA, NL_CONSUMER_SINGLE_REPLICA,
                  active, found, key, now_ns, sink, ud);
  return true;
}

void nl_engine_advisory_counts(nl_engine *e, uint64_t *fed, uint64_t *unknown,
                               uint64_t *contradicted) {
  *fed = e->advisories_fed;
  *unknown = e->advisories_unknown;
  *contradicted = e->advisories_contradicted;
}
