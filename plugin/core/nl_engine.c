/* nl_engine.c: one poll's snapshots, and each advisory, through the
 * history and every class of the table (see nl_engine.h): the order of a
 * poll (consumers, then their streams, the streams missing and gone, the
 * consumers gone, then the classes judged after them), the stream facts
 * the model keeps (sequence clocks, sequences never stored), and the
 * costs of findings. The classes themselves are judged by nl_judge, and
 * their findings live and clear by nl_lifecycle. */
#include "nl_engine.h"

#include "nl_engine_state.h"

#include "core/model/nl_advised.h"
#include "core/model/nl_forecast.h"
#include "core/model/nl_gap.h"
#include "nl_judge.h"

#include <stdlib.h>
#include <string.h>

/* How long the record of a stream neither listed nor reported missing is
 * kept (a stream deleted and created again within it keeps its count of
 * lost messages); then it is freed, so that streams coming and going all
 * day do not grow the engine. */
#define NL_STREAM_FORGET_NS (600LL * 1000000000LL)

const char NL_REASON_LED_ELSEWHERE[] = "led by another server";

static uint64_t grown(uint64_t now, uint64_t then) {
  return now > then ? now - then : 0;
}

nl_engine *nl_engine_create(const nl_detect_params *params) {
  nl_engine *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return NULL;
  e->reg = nl_registry_create(nl_class_release);
  if (e->reg == NULL) {
    free(e);
    return NULL;
  }
  e->params = *params;
  nl_audit_params_default(&e->audit);
  nl_class_precedence(e->order);
  double s = params->clear_hold_s;
  e->life.hold_ns = s > 0 ? (int64_t)(s * 1e9) : 0;
  return e;
}

void nl_engine_free(nl_engine *e) {
  if (e == NULL)
    return;
  nl_registry_free(e->reg);
  nl_lifecycle_free(&e->life);
  nl_store_free(&e->streams);
  nl_audit_result_free(&e->scratch);
  free(e);
}

/* A stream-level finding's cost base: the stream's lost messages (this
 * poll's loss is already in it; a stream counts no redeliveries). */
static nl_cost_base stream_cost(const nl_stream_rec *t) {
  return (nl_cost_base){t->lost_total, 0, t->lost_total, 0};
}

/* A consumer finding's cost base: its lost messages and redeliveries, now
 * and before the latest interval. */
static nl_cost_base consumer_cost(const nl_consumer_state *st) {
  const nl_sample *s0 = nl_state_latest(st);
  uint64_t redelivered_last = s0 != NULL ? s0->redeliveries : 0;
  return (nl_cost_base){st->lost_total, st->redelivered_total,
                        grown(st->lost_total, st->lost_last),
                        grown(st->redelivered_total, redelivered_last)};
}

/* Brings st's findings in line with verdict v for the consumer classes in
 * classes, under configuration key (nl_lifecycle_update), reporting each
 * change. st's findings array is made writable only when a class is on
 * (most consumers never have a finding); out of memory, the onsets wait
 * for a later poll. */
static void update_consumer(nl_engine *e, nl_consumer_state *st,
                            nl_class_mask classes, nl_verdict *v, uint64_t key,
                            int64_t now_ns, const nl_engine_sink *sink,
                            void *ud) {
  bool any = false;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    any |= (classes & NL_CLASS_BIT(cls)) && v->on[cls];
  nl_finding **held = any ? nl_state_findings(st) : st->active;
  if (held == NULL)
    return;
  nl_cost_base base = consumer_cost(st);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if ((classes & NL_CLASS_BIT(cls)) && !nl_class_is_stream(cls))
      nl_lifecycle_update(&e->life, &held[cls], v->on[cls], &v->found[cls],
                          st->stream, st->name, key, base, now_ns, sink, ud);
}

/* Every class. */
#define ALL_CLASSES (~(nl_class_mask)0)

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

/* Hands consumer st, which the poll no longer lists, to the classes that
 * keep what a consumer leaves (nl_judge_gone), when its stream is listed
 * with all its consumers and led here. */
static void hand_over(const sweep_ctx *ctx, const nl_consumer_state *st) {
  const nl_stream_snap *s = NULL;
  for (size_t i = 0; i < ctx->set->n_streams && s == NULL; i++)
    if (strcmp(ctx->set->streams[i].name, st->stream) == 0)
      s = &ctx->set->streams[i];
  if (s == NULL || s->elsewhere || !s->consumers_complete)
    return;
  nl_stream_rec *t = nl_store_find(&ctx->e->streams, st->stream);
  if (t == NULL)
    return;
  nl_gone_ctx g = {st, s, ctx->now_ns};
  nl_judge_gone(&g, t);
}

static void report_gone(nl_consumer_state *st, void *arg) {
  const sweep_ctx *ctx = arg;
  bool away = nl_snapshot_set_elsewhere(ctx->set, st->stream, st->name);
  const char *reason = away ? NL_REASON_LED_ELSEWHERE : "consumer deleted";
  if (!away)
    hand_over(ctx, st);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (st->active[cls] != NULL)
      nl_lifecycle_clear(&ctx->e->life, st->stream, st->name, st->active[cls],
                         reason, ctx->now_ns, ctx->sink, ctx->ud);
}

/* Clears every stream-level finding of t for reason. */
static void clear_stream(nl_engine *e, nl_stream_rec *t, const char *reason,
                         int64_t now_ns, const nl_engine_sink *sink, void *ud) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    if (t->active[cls] == NULL)
      continue;
    nl_lifecycle_clear(&e->life, t->name, NL_STREAM_FINDING_CONSUMER,
                       t->active[cls], reason, now_ns, sink, ud);
    free(t->active[cls]);
    t->active[cls] = NULL;
  }
}

/* A stream another server leads (Scope "server"): its stream-level
 * findings are that server's agent's now; they clear here as led
 * elsewhere, and the stream counts as seen. */
static void stream_elsewhere(nl_engine *e, nl_stream_rec *t, int64_t now_ns,
                             const nl_engine_sink *sink, void *ud) {
  clear_stream(e, t, NL_REASON_LED_ELSEWHERE, now_ns, sink, ud);
  nl_judge_forget(t, NL_FORGET_ELSEWHERE);
  t->seen_generation = e->generation;
  t->last_seen_ns = now_ns;
}

/* The stream of this poll named name, when it is visible as an origin:
 * listed (indexed by index_streams) and led by the polled server. */
static const nl_stream_snap *stream_named(const nl_stream_ctx *x,
                                          const char *name) {
  const nl_engine *e = x->lookup;
  const nl_stream_rec *t = nl_store_find(&e->streams, name);
  if (t == NULL || t->set_generation != e->generation ||
      t->set_index >= x->set->n_streams)
    return NULL;
  const nl_stream_snap *s = &x->set->streams[t->set_index];
  return strcmp(s->name, name) == 0 && !s->elsewhere ? s : NULL;
}

/* Notes where this poll lists each stream, when some stream copies others
 * (their origins are looked up by name). */
static void index_streams(nl_engine *e, const nl_snapshot_set *set) {
  bool copies = false;
  for (size_t i = 0; i < set->n_streams && !copies; i++)
    copies = set->streams[i].n_links > 0;
  for (size_t i = 0; copies && i < set->n_streams; i++) {
    nl_stream_rec *t = nl_store_get(&e->streams, set->streams[i].name);
    if (t != NULL) {
      t->set_index = i;
      t->set_generation = e->generation;
    }
  }
}

/* What a stream class sees of stream index (of set->streams, or of
 * set->missing_streams when missing) with record t. */
static nl_stream_ctx stream_ctx(nl_engine *e, const nl_snapshot_set *set,
                                size_t index, bool missing, nl_stream_rec *t,
                                uint64_t delivered_delta, int64_t now_ns,
                                nl_configured *k) {
  nl_configured_start(k, set,
                      missing ? NL_CONFIGURED_MISSING : NL_CONFIGURED_STREAM,
                      index, e->params.config_classes,
                      nl_class_audit_rules(true), &e->audit, &e->scratch);
  return (nl_stream_ctx){set,
                         index,
                         missing ? NULL : &set->streams[index],
                         t->name,
                         delivered_delta,
                         &t->lost_total,
                         &t->stranded,
                         stream_named,
                         e,
                         &e->params,
                         now_ns,
                         t->active,
                         k};
}

/* Brings t's stream-level findings in line with verdict v for the classes
 * the judgement of phase ran, under configuration key. */
static void update_stream(nl_engine *e, nl_stream_rec *t, nl_judge_phase phase,
                          nl_verdict *v, uint64_t key, int64_t now_ns,
                          const nl_engine_sink *sink, void *ud) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    if (!nl_class_is_stream(cls) ||
        (phase == NL_JUDGE_MISSING
             ? d->missing == NULL
             : d->detect_stream == NULL ||
                   d->after_sweep != (phase == NL_JUDGE_AFTER_SWEEP)))
      continue;
    uint64_t k = key;
    if (phase == NL_JUDGE_MISSING) {
      /* Nothing of the stream was seen: it counts as configured as
       * before, so that a held finding can only clear by its hold. */
      const nl_finding *held = t->active[cls];
      k = held && held->config_key ? held->config_key : 1;
    } else if (d->key != NULL) {
      uint64_t salt = d->key(t->slots ? t->slots[cls].state : NULL);
      k = nl_hash_bytes(key, &salt, sizeof(salt));
      k = k ? k : 1;
    }
    nl_lifecycle_update(&e->life, &t->active[cls], v->on[cls], &v->found[cls],
                        t->name, NL_STREAM_FINDING_CONSUMER, k, stream_cost(t),
                        now_ns, sink, ud);
  }
}

/* Judges the stream-level classes of listed stream i (record t) and reports
 * their transitions. */
static void stream_classes(nl_engine *e, const nl_snapshot_set *set, size_t i,
                           nl_stream_rec *t, uint64_t delivered_delta,
                           int64_t now_ns, const nl_engine_sink *sink,
                           void *ud) {
  nl_configured k;
  nl_stream_ctx x =
      stream_ctx(e, set, i, false, t, delivered_delta, now_ns, &k);
  nl_verdict v;
  nl_judge_stream(e->order, t, &x, NL_JUDGE_LISTED, &v);
  const nl_stream_snap *s = &set->streams[i];
  if (t->created_ns == 0) /* A stream first held in this poll. */
    t->created_ns = s->created_ns;
  update_stream(e, t, NL_JUDGE_LISTED, &v,
                nl_config_key(NULL, t->created_ns, s), now_ns, sink, ud);
  t->seen_generation = e->generation;
  t->last_seen_ns = now_ns;
}

/* A stream STREAM.LIST reported missing: the classes that judge a missing
 * stream do; its other stream-level findings are kept as they are
 * (nothing was seen either way). */
static void missing_stream(nl_engine *e, const nl_snapshot_set *set, size_t i,
                           int64_t now_ns, const nl_engine_sink *sink,
                           void *ud) {
  nl_stream_rec *t = nl_store_get(&e->streams, set->missing_streams[i]);
  if (t == NULL)
    return;
  nl_configured k;
  nl_stream_ctx x = stream_ctx(e, set, i, true, t, 0, now_ns, &k);
  nl_verdict v;
  nl_judge_stream(e->order, t, &x, NL_JUDGE_MISSING, &v);
  update_stream(e, t, NL_JUDGE_MISSING, &v, 1, now_ns, sink, ud);
  t->seen_generation = e->generation;
  t->last_seen_ns = now_ns;
}

/* The classes judged after the poll's gone consumers were handed over, for
 * listed stream i. */
static void after_sweep(nl_engine *e, const nl_snapshot_set *set, size_t i,
                        int64_t now_ns, const nl_engine_sink *sink, void *ud) {
  nl_stream_rec *t = nl_store_find(&e->streams, set->streams[i].name);
  if (t == NULL)
    return;
  nl_configured k;
  nl_stream_ctx x = stream_ctx(e, set, i, false, t, 0, now_ns, &k);
  nl_verdict v;
  nl_judge_stream(e->order, t, &x, NL_JUDGE_AFTER_SWEEP, &v);
  update_stream(e, t, NL_JUDGE_AFTER_SWEEP, &v,
                nl_config_key(NULL, t->created_ns, &set->streams[i]), now_ns,
                sink, ud);
}

/* Clears the stream-level findings of streams this poll did not list and
 * did not count as missing, and forgets what was kept of them between
 * polls. */
static void streams_gone(nl_engine *e, int64_t now_ns,
                         const nl_engine_sink *sink, void *ud) {
  for (size_t i = 0; i < e->streams.n; i++) {
    nl_stream_rec *t = &e->streams.recs[i];
    if (t->seen_generation == e->generation)
      continue;
    free(t->clock);
    t->clock = NULL;
    nl_judge_forget(t, NL_FORGET_GONE);
    clear_stream(e, t, "stream not listed", now_ns, sink, ud);
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
      malloc((set->n_missing_streams + e->streams.n) * sizeof(*names));
  if (names == NULL)
    return NULL;
  size_t n = 0;
  for (size_t i = 0; i < set->n_missing_streams; i++)
    names[n++] = set->missing_streams[i];
  for (size_t i = 0; i < e->streams.n; i++)
    if (e->streams.recs[i].seen_generation + 1 == e->generation &&
        !nl_snapshot_set_is_missing(set, e->streams.recs[i].name))
      names[n++] = e->streams.recs[i].name;
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
  nl_stream_rec *t = nl_store_get(&e->streams, s->name);
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
  uint64_t through;    /* As nl_stream_rec.unstored_through. */
  bool first_unstored; /* As nl_stream_rec.first_unstored. */
} unstored_mark;

/* What t (may be NULL) knows of sequences stream s never stored, for a
 * consumer first seen now: nothing once the stream went back (created
 * again). */
static unstored_mark unstored_of(const nl_stream_rec *t,
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
static void note_empty(nl_stream_rec *t, const nl_stream_snap *s) {
  if (s->last_seq < t->unstored_through)
    t->unstored_through = 0;
  t->first_unstored = false;
  if (s->msgs == 0) {
    t->unstored_through = s->last_seq;
    t->first_unstored = s->last_seq > 0 && s->first_seq == s->last_seq;
  }
}

/* Takes the creation time of stream s into its record (a restarted
 * server reports one a fraction of a millisecond off: nl_created_same).
 * A stream deleted and created again between two polls may already be
 * past the old one's last sequence, so that only its creation time tells:
 * then what the record derived from the old stream's sequences is
 * forgotten. Its lost count and findings are kept (the findings clear at
 * once, their configuration key having changed). */
static void note_created(nl_engine *e, const nl_stream_snap *s) {
  nl_stream_rec *t = nl_store_find(&e->streams, s->name);
  if (t == NULL || nl_created_same(t->created_ns, s->created_ns))
    return;
  if (t->created_ns != 0 && s->created_ns != 0) {
    free(t->clock);
    t->clock = NULL;
    t->unstored_through = 0;
    t->first_unstored = false;
    nl_judge_forget(t, NL_FORGET_RECREATED);
  }
  t->created_ns = s->created_ns;
}

/* What one poll keeps per stream of set while its consumers are applied. */
typedef struct {
  uint64_t lost;            /* Lost by its consumers in the interval. */
  uint64_t delivered;       /* Received by them, or NL_DELIVERED_UNKNOWN. */
  const nl_seqclock *clock; /* Its sequence clock, or NULL. */
  unstored_mark unstored;   /* What it never stored. */
} poll_stream;

/* The state class cls keeps for the stream of consumer x (the slot of its
 * stream record), or NULL when memory runs out. */
static void **consumer_stream_state(const nl_consumer_ctx *x, nl_class cls) {
  nl_engine *e = (nl_engine *)x->lookup;
  nl_stream_rec *t = nl_store_get(&e->streams, x->st->stream);
  nl_class_slot *slot = t != NULL ? nl_store_slot(t, cls) : NULL;
  return slot != NULL ? &slot->state : NULL;
}

/* Applies consumer i of set: its history, the model's evidence, every
 * consumer class, and what it adds to its stream's figures in ps. */
static void apply_consumer(nl_engine *e, const nl_snapshot_set *set, size_t i,
                           poll_stream *ps, int64_t now_ns,
                           const nl_engine_sink *sink, void *ud) {
  const nl_consumer_snap *c = &set->consumers[i];
  const nl_stream_snap *s = &set->streams[c->stream_index];
  poll_stream *p = ps != NULL ? &ps[c->stream_index] : NULL;
  bool reset;
  nl_consumer_state *st =
      nl_registry_observe(e->reg, c, s, now_ns, e->generation,
                          p != NULL ? unstored_for(p->unstored, c) : 0, &reset);
  if (st == NULL)
    return;
  const nl_seqclock *clock = p != NULL ? p->clock : NULL;
  /* What the model learns from this poll before the classes judge it. */
  e->advisories_contradicted += nl_advised_confirm(st, c);
  nl_advised_poll(st, c);
  unsigned bad = nl_gap_poll(st, c, s, clock, now_ns);
  nl_advised_rejected(st, bad);
  e->advisories_contradicted += bad;
  nl_forecast fc = nl_forecast_observe(st, c, s, clock, now_ns);
  nl_configured k;
  nl_configured_start(&k, set, NL_CONFIGURED_CONSUMER, i,
                      e->params.config_classes, nl_class_audit_rules(false),
                      &e->audit, &e->scratch);
  nl_consumer_ctx x = {st,
                       c,
                       s,
                       set,
                       i,
                       clock,
                       &fc,
                       &e->params,
                       now_ns,
                       &k,
                       consumer_stream_state,
                       e};
  nl_verdict v;
  nl_judge_consumer(e->order, &x, &v);
  nl_finding bad_declaration;
  if (nl_configured_bad_declaration(&k, st, &bad_declaration) && sink &&
      sink->declaration)
    sink->declaration(ud, st->stream, st->name, &bad_declaration);
  update_consumer(e, st, ALL_CLASSES, &v, nl_config_key(c, st->created_ns, s),
                  now_ns, sink, ud);
  if (p != NULL) {
    p->lost += st->lost_last;
    /* What the stream's consumers received in the interval; unknown
     * (NL_DELIVERED_UNKNOWN) once one of them has no poll before this one
     * (new, recreated, or its history reset, as after a server restart
     * that lost some of its state). */
    nl_past_sample s1;
    const nl_sample *s0 = nl_state_latest(st);
    if (s0 == NULL || !nl_state_past(st, 1, &s1))
      p->delivered = NL_DELIVERED_UNKNOWN;
    else if (p->delivered != NL_DELIVERED_UNKNOWN &&
             s0->delivered_consumer_seq > s1.delivered_consumer_seq)
      p->delivered += s0->delivered_consumer_seq - s1.delivered_consumer_seq;
  }
  if (sink && sink->consumer)
    sink->consumer(ud, c, s, st);
}

size_t nl_engine_apply(nl_engine *e, const nl_snapshot_set *set, int64_t now_ns,
                       const nl_engine_sink *sink, void *ud) {
  e->generation++;
  for (size_t i = 0; i < set->n_streams; i++)
    note_created(e, &set->streams[i]);
  /* Out of memory, no sequence counts as never stored and no clock is
   * kept. */
  poll_stream *ps = calloc(set->n_streams ? set->n_streams : 1, sizeof(*ps));
  for (size_t i = 0; ps != NULL && i < set->n_streams; i++) {
    ps[i].clock = stream_clock(e, &set->streams[i], now_ns);
    ps[i].unstored = unstored_of(
        nl_store_find(&e->streams, set->streams[i].name), &set->streams[i]);
  }
  index_streams(e, set);
  for (size_t i = 0; i < set->n_consumers; i++)
    apply_consumer(e, set, i, ps, now_ns, sink, ud);
  for (size_t i = 0; i < set->n_streams; i++) {
    /* A consumer list not read completely leaves out what some consumers
     * received. */
    if (ps != NULL && !set->streams[i].consumers_complete)
      ps[i].delivered = NL_DELIVERED_UNKNOWN;
    nl_stream_rec *t = nl_store_get(&e->streams, set->streams[i].name);
    if (t != NULL && ps != NULL)
      t->lost_total += ps[i].lost;
    if (t != NULL)
      note_empty(t, &set->streams[i]);
    if (t != NULL && set->streams[i].elsewhere) {
      stream_elsewhere(e, t, now_ns, sink, ud);
      continue;
    }
    if (t != NULL)
      stream_classes(e, set, i, t, ps != NULL ? ps[i].delivered : 0, now_ns,
                     sink, ud);
    if (set->streams[i].elsewhere)
      continue;
    if (sink && sink->stream) {
      nl_stream_ledger ledger = {t ? t->lost_total : 0, t ? t->stranded : 0};
      sink->stream(ud, &set->streams[i], &ledger);
    }
  }
  free(ps);
  /* From here on, the streams a short list left out are missing ones. */
  nl_snapshot_set view = *set;
  char **names = with_left_out(e, set, &view);
  for (size_t i = 0; i < view.n_missing_streams; i++)
    missing_stream(e, &view, i, now_ns, sink, ud);
  streams_gone(e, now_ns, sink, ud);
  nl_store_forget(&e->streams, e->generation, now_ns, NL_STREAM_FORGET_NS);
  sweep_ctx ctx = {e, &view, sink, ud, 0, now_ns};
  nl_registry_sweep(e->reg, e->generation, keep_unlisted, report_gone, &ctx);
  free(names);
  for (size_t i = 0; i < set->n_streams; i++)
    if (!set->streams[i].elsewhere)
      after_sweep(e, set, i, now_ns, sink, ud);
  return ctx.kept;
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
   * no longer lists the consumer clears its findings, not the claim; the
   * classes keep what it tells (CONSUMER_EXPIRED: when and how the
   * consumer went), which that poll checks. */
  int recorded = nl_advised_record(st, a);
  if (recorded == 1)
    e->advisories_contradicted++;
  nl_consumer_ctx x = {.st = st, .p = &e->params, .now_ns = now_ns};
  nl_verdict v;
  nl_judge_advisory(&x, a, recorded != 0, &v);
  /* Only onsets and updates here: a class the advisories no longer prove
   * may still hold from polling, so clearing waits for the next poll. */
  nl_class_mask on = 0;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (v.on[cls])
      on |= NL_CLASS_BIT(cls);
  if (on != 0)
    update_consumer(e, st, on, &v, 0, now_ns, sink, ud);
  return true;
}

static void after_gap(nl_consumer_state *st, void *arg) {
  nl_state_after_gap(st, *(const int64_t *)arg);
}

void nl_engine_gap(nl_engine *e, int64_t now_ns) {
  nl_registry_each(e->reg, after_gap, &now_ns);
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
  const nl_stream_rec *t = nl_store_find(&e->streams, s->name);
  nl_consumer_state *st =
      nl_registry_observe(e->reg, c, s, now_ns, e->generation,
                          unstored_for(unstored_of(t, s), c), &reset);
  if (st == NULL)
    return false;
  nl_gap_poll(st, c, s, t != NULL ? t->clock : NULL, now_ns);
  nl_configured k;
  nl_configured_start(&k, set, NL_CONFIGURED_CONSUMER, 0,
                      e->params.config_classes, nl_class_audit_rules(false),
                      &e->audit, &e->scratch);
  nl_consumer_ctx x = {st,
                       c,
                       s,
                       set,
                       0,
                       NULL,
                       NULL,
                       &e->params,
                       now_ns,
                       &k,
                       consumer_stream_state,
                       e};
  nl_verdict v;
  nl_judge_created(&x, &v);
  nl_class_mask configured = 0;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (nl_class_defs[cls]->configured != NULL)
      configured |= NL_CLASS_BIT(cls);
  update_consumer(e, st, configured, &v, nl_config_key(c, st->created_ns, s),
                  now_ns, sink, ud);
  return true;
}
