/* nl_judge.c: one consumer or stream judged by every class of the table
 * (see nl_judge.h and detect/nl_class.h). */
#include "nl_judge.h"

#include <stdlib.h>

/* The state class cls keeps of consumer st, or NULL. */
static void *consumer_state(const nl_consumer_state *st, nl_class cls) {
  const nl_class_slot *slot = nl_state_slot(st, cls);
  return slot != NULL ? slot->state : NULL;
}

/* Keeps in st the state an operation of class cls left (after), which was
 * before when it was called: out of memory for st's slots, the new state
 * is freed. */
static void keep_consumer_state(nl_consumer_state *st, nl_class cls,
                                void *before, void *after) {
  if (after == before)
    return;
  nl_class_slot *slot = nl_state_slot_make(st, cls);
  if (slot != NULL) {
    slot->state = after;
    return;
  }
  nl_class_release(cls, after);
  free(after);
}

typedef bool (*consumer_op)(const nl_consumer_ctx *x, void **state,
                            nl_finding *f);

/* Calls op of class cls for x, keeping the state it leaves. */
static bool run(const nl_consumer_ctx *x, nl_class cls, consumer_op op,
                nl_finding *f) {
  void *before = consumer_state(x->st, cls), *state = before;
  bool on = op(x, &state, f);
  keep_consumer_state(x->st, cls, before, state);
  return on;
}

/* Applies class d's raise debounce to a finding that is on (or not) at
 * now_ns, held telling whether one is held; slot holds the run of polls
 * (NULL when it could not be kept: then only a held finding stays on). */
static bool debounce(const nl_class_def *d, nl_class_slot *slot, bool on,
                     bool held, int64_t now_ns) {
  if (d->raise_polls == 0 && d->raise_s <= 0)
    return on;
  if (!on) {
    if (slot != NULL)
      slot->raise_polls = 0;
    return false;
  }
  if (slot == NULL)
    return held;
  unsigned want = d->raise_polls > 0 ? d->raise_polls : 1;
  if (slot->raise_polls == 0)
    slot->raise_since_ns = now_ns;
  if (slot->raise_polls < want)
    slot->raise_polls++;
  bool long_enough =
      slot->raise_polls >= want &&
      now_ns - slot->raise_since_ns >= (int64_t)(d->raise_s * 1e9);
  return long_enough || held;
}

/* Decides, in the order of precedence, which of the classes judged (ran)
 * are raised: a class raised from the traffic (traffic) and not suppressed
 * keeps that finding (in v->found), else takes its configuration finding
 * (config, in alt[cls] when it had a traffic finding too, else already in
 * v->found); a class raised either way suppresses the traffic findings of
 * its mask. slot_of gives a class's slot for its debounce (allocating
 * when make is set). A class not judged is off and keeps its debounce. */
static void
resolve(const nl_class order[NL_CLASS_COUNT], nl_class_mask ran,
        const bool traffic[NL_CLASS_COUNT], const bool config[NL_CLASS_COUNT],
        nl_finding *const alt[NL_CLASS_COUNT],
        nl_finding *const held[NL_CLASS_COUNT],
        nl_class_slot *(*slot_of)(void *owner, nl_class cls, bool make),
        void *owner, int64_t now_ns, nl_verdict *v) {
  nl_class_mask suppressed = 0;
  for (int k = 0; k < NL_CLASS_COUNT; k++) {
    nl_class cls = order[k];
    const nl_class_def *d = nl_class_defs[cls];
    bool on = false;
    v->on[cls] = false;
    if ((ran & NL_CLASS_BIT(cls)) == 0)
      continue;
    if (traffic[cls] && (suppressed & NL_CLASS_BIT(cls)) == 0) {
      on = true;
    } else if (config[cls]) {
      on = true;
      if (traffic[cls])
        v->found[cls] = *alt[cls];
    }
    if (d->raise_polls > 0 || d->raise_s > 0)
      on = debounce(d, slot_of(owner, cls, on), on, held[cls] != NULL, now_ns);
    v->on[cls] = on;
    if (on)
      suppressed |= d->suppresses;
  }
}

static nl_class_slot *consumer_slot(void *owner, nl_class cls, bool make) {
  return make ? nl_state_slot_make(owner, cls) : nl_state_slot(owner, cls);
}

void nl_judge_consumer(const nl_class order[NL_CLASS_COUNT],
                       const nl_consumer_ctx *x, nl_verdict *v) {
  bool traffic[NL_CLASS_COUNT] = {false}, config[NL_CLASS_COUNT] = {false};
  nl_finding *alt[NL_CLASS_COUNT] = {NULL};
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    if (d->detect != NULL)
      traffic[cls] = run(x, (nl_class)cls, d->detect, &v->found[cls]);
  }
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    if (d->configured == NULL)
      continue;
    /* With a traffic finding too, the configuration's is kept aside in
     * case the traffic's is suppressed (out of memory: not kept). */
    nl_finding *into = &v->found[cls];
    if (traffic[cls] && (into = alt[cls] = malloc(sizeof(**alt))) == NULL)
      continue;
    config[cls] = run(x, (nl_class)cls, d->configured, into);
  }
  nl_class_mask ran = 0;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (nl_class_defs[cls]->detect != NULL ||
        nl_class_defs[cls]->configured != NULL)
      ran |= NL_CLASS_BIT(cls);
  resolve(order, ran, traffic, config, alt, x->st->active, consumer_slot, x->st,
          x->now_ns, v);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    free(alt[cls]);
}

void nl_judge_created(const nl_consumer_ctx *x, nl_verdict *v) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    v->on[cls] = d->configured != NULL &&
                 run(x, (nl_class)cls, d->configured, &v->found[cls]);
  }
}

void nl_judge_advisory(const nl_consumer_ctx *x, const nl_advisory *a,
                       bool record_only, nl_verdict *v) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    if (d->record == NULL)
      continue;
    void *before = consumer_state(x->st, (nl_class)cls), *state = before;
    d->record(x->st, &state, a);
    keep_consumer_state(x->st, (nl_class)cls, before, state);
  }
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    v->on[cls] = false;
    if (record_only || d->advised == NULL)
      continue;
    void *before = consumer_state(x->st, (nl_class)cls), *state = before;
    v->on[cls] = d->advised(x, &state, a, &v->found[cls]);
    keep_consumer_state(x->st, (nl_class)cls, before, state);
  }
}

static nl_class_slot *stream_slot(void *owner, nl_class cls, bool make) {
  nl_stream_rec *r = owner;
  if (make)
    return nl_store_slot(r, cls);
  return r->slots != NULL ? &r->slots[cls] : NULL;
}

/* Whether stream class d runs in phase for record r. */
static bool runs_in(const nl_class_def *d, nl_judge_phase phase,
                    const nl_stream_rec *r) {
  if (phase == NL_JUDGE_MISSING)
    return d->missing != NULL;
  if (d->detect_stream == NULL ||
      d->after_sweep != (phase == NL_JUDGE_AFTER_SWEEP))
    return false;
  return phase == NL_JUDGE_LISTED || r->active[d->cls] != NULL ||
         (r->slots != NULL && r->slots[d->cls].state != NULL);
}

void nl_judge_stream(const nl_class order[NL_CLASS_COUNT], nl_stream_rec *r,
                     const nl_stream_ctx *x, nl_judge_phase phase,
                     nl_verdict *v) {
  bool traffic[NL_CLASS_COUNT] = {false}, config[NL_CLASS_COUNT] = {false};
  nl_finding *const alt[NL_CLASS_COUNT] = {NULL};
  nl_class_mask ran = 0;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    if (!runs_in(d, phase, r))
      continue;
    ran |= NL_CLASS_BIT(cls);
    void *before = r->slots != NULL ? r->slots[cls].state : NULL;
    void *state = before;
    traffic[cls] = phase == NL_JUDGE_MISSING
                       ? d->missing(x, &state, &v->found[cls])
                       : d->detect_stream(x, &state, &v->found[cls]);
    if (state != before) {
      nl_class_slot *slot = nl_store_slot(r, (nl_class)cls);
      if (slot != NULL) {
        slot->state = state;
      } else {
        nl_class_release((nl_class)cls, state);
        free(state);
      }
    }
  }
  resolve(order, ran, traffic, config, alt, r->active, stream_slot, r,
          x->now_ns, v);
}

void nl_judge_gone(const nl_gone_ctx *g, nl_stream_rec *r) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    if (d->gone == NULL)
      continue;
    const void *state = consumer_state(g->st, (nl_class)cls);
    nl_class_slot *to = nl_store_slot(r, d->gone_to);
    if (to != NULL)
      d->gone(g, state, &to->state);
  }
}

void nl_judge_forget(nl_stream_rec *r, unsigned event) {
  if (r->slots == NULL)
    return;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    nl_class_slot *slot = &r->slots[cls];
    if (nl_class_defs[cls]->forget & event)
      nl_class_state_drop(nl_class_defs[cls], &slot->state);
    if (event & (NL_FORGET_ELSEWHERE | NL_FORGET_GONE))
      slot->raise_polls = 0;
  }
}
