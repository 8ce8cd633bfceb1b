/* nl_source_stalled.c: SOURCE_STALLED's rules per upstream link (see
 * nl_source_stalled.h and docs/detectors.md). The finding's text is built
 * in nl_source_text.c. */
#include "nl_source_stalled.h"

#include "nl_classes.h"

#include "nl_source_text.h"

#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000LL

/* What the detection keeps of one upstream link. */
typedef struct {
  uint64_t key; /* nl_source_link.key */
  /* The origin when last seen (a visible link). */
  bool origin_seen;
  int64_t origin_created_ns;
  uint64_t origin_last;
  /* No progress: the origin's last sequence at the first poll after the
   * copy's last change (have_mark), and the first poll after that which
   * saw the origin hold more (gain_ns, 0 none). */
  bool have_mark;
  uint64_t mark_last;
  int64_t gain_ns;
  /* First poll of the current run that saw the origin created after the
   * copy's newest message while holding messages; and of the current run
   * of polls whose report says the copy never heard from the origin. */
  int64_t newer_since_ns;
  int64_t never_since_ns;
  /* After the origin was seen deleted and created again: the copy at the
   * poll before (its last sequence, messages and first sequence), the
   * sequence the new origin started after, polls in a row settled, and the
   * messages of the new origin counted as skipped (a lower bound), with
   * those of earlier recreations and what was reported so far. */
  bool recreated;
  int64_t recreated_ns; /* The poll that first saw the new origin. */
  uint64_t base_last, base_msgs, base_first;
  uint64_t origin_start;
  /* The most the copy can skip: its position in the old origin (a
   * mirror's last sequence; for a sourced stream, at most the old
   * origin's last sequence), less origin_start. Its consumer on the new
   * origin starts at most one past that position. */
  uint64_t cap;
  unsigned settled_polls;
  uint64_t lost;
  uint64_t lost_before;
  uint64_t lost_reported;
} link_state;

struct nl_source_state {
  bool have_prev;
  int64_t created_ns;         /* The copy's, as first seen. */
  uint64_t last, msgs, first; /* The copy at the previous poll. */
  int64_t since_ns;           /* First poll with its current last_seq. */
  bool changed;               /* Its last_seq changed at this poll. */
  link_state *links;          /* One per link of the copy, in its order. */
  size_t n_links;
};

/* Frees what a state points to (its links). */
static void release(void *state) {
  nl_source_state *st = state;
  free(st->links);
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Brings st's links in line with copy's: one per link of copy, in its
 * order, each keeping what was kept for the link of the same key (a link
 * not listed any more, a source removed, is forgotten). Returns false
 * when memory runs out (st unchanged). */
static bool match_links(nl_source_state *st, const nl_stream_snap *copy) {
  bool same = st->n_links == copy->n_links;
  for (size_t i = 0; same && i < copy->n_links; i++)
    same = st->links[i].key == copy->links[i].key;
  if (same)
    return true;
  link_state *links = calloc(copy->n_links, sizeof(*links));
  if (links == NULL)
    return false;
  for (size_t i = 0; i < copy->n_links; i++) {
    links[i].key = copy->links[i].key;
    for (size_t j = 0; j < st->n_links; j++)
      if (st->links[j].key == links[i].key)
        links[i] = st->links[j];
  }
  free(st->links);
  st->links = links;
  st->n_links = copy->n_links;
  return true;
}

/* True when the visible origin o is not the one ls last saw: created at
 * another time, or holding a last sequence below the one seen before
 * (sequences never go back in one stream); or, for a mirror, below the
 * position the mirror held at the previous poll (a mirror takes the
 * origin's sequence numbers: that origin stood at least there when the
 * mirror was read, and an origin's last sequence never goes back). The
 * last needs no memory of the origin from before its deletion. */
static bool origin_recreated(const nl_source_state *st, const link_state *ls,
                             const nl_stream_snap *copy,
                             const nl_stream_snap *o) {
  if (!ls->origin_seen)
    return false;
  if (ls->origin_created_ns > 0 && o->created_ns > 0 &&
      !nl_created_same(ls->origin_created_ns, o->created_ns))
    return true;
  if (o->last_seq < ls->origin_last)
    return true;
  return copy->is_mirror && !ls->recreated && st->have_prev &&
         o->last_seq < st->last && o->last_seq < copy->last_seq;
}

/* True when origin o holds a message older than o itself (restored from a
 * backup, or o is itself a mirror, which keeps its origin's times): its
 * sequence numbers need not start again, so what a copy takes of it
 * cannot be counted from them. */
static bool holds_older(const nl_stream_snap *o) {
  return o->first_ts_ns > 0 && o->created_ns > 0 &&
         o->created_ns - o->first_ts_ns > NS_PER_S;
}

/* Starts counting what copy takes from the recreated origin o, first seen
 * at now_ns: from the copy as the poll before saw it. */
static void start_recreated(const nl_source_state *st, link_state *ls,
                            const nl_stream_snap *copy, const nl_stream_snap *o,
                            int64_t now_ns) {
  ls->lost_before += ls->lost;
  ls->lost = 0;
  ls->recreated = true;
  ls->recreated_ns = now_ns;
  ls->base_last = st->last;
  ls->base_msgs = st->msgs;
  ls->base_first = st->first;
  ls->origin_start = o->start_seq;
  uint64_t position = copy->is_mirror ? st->last : ls->origin_last;
  ls->cap = position > o->start_seq ? position - o->start_seq : 0;
  ls->settled_polls = 0;
}

/* Counts n more of the new origin's messages as skipped by the copy (a
 * lower bound that only grows), within what the copy can skip. */
static void count_lost(link_state *ls, uint64_t n) {
  ls->lost = max_u64(ls->lost, n < ls->cap ? n : ls->cap);
}

/* True when l shows a live consumer on the origin with nothing waiting:
 * heard from within NL_SOURCE_FRESH_S and after since_ns (the contact
 * came from a consumer on the origin as it has been since then: a
 * heartbeat of the one on a deleted origin may still be recent), lag 0,
 * no error. */
static bool link_live_idle(const nl_source_link *l, int64_t since_ns,
                           int64_t now_ns) {
  return l->have_info && l->active_ns >= 0 &&
         l->active_ns <= (int64_t)(NL_SOURCE_FRESH_S * NS_PER_S) &&
         l->active_ns < now_ns - since_ns && l->lag == 0 && l->error_code == 0;
}

/* Counts what copy skipped of the recreated origin o (link l, state ls).
 * The new origin's messages up to where the copy's consumer on it began
 * are never taken; all later ones are. So once the copy took all it will
 * (settled), the new origin's messages less those the copy took are
 * skipped; while messages flow, those older than the last interval are.
 * A mirror whose position lies beyond the new origin's last sequence has
 * skipped all the new origin holds. Sets *ahead for the last case. */
static void count_skipped(const nl_source_state *st, link_state *ls,
                          const nl_stream_snap *copy, const nl_source_link *l,
                          const nl_stream_snap *o, bool recreated_now,
                          int64_t now_ns, bool *ahead) {
  uint64_t origin_new =
      o->last_seq > ls->origin_start ? o->last_seq - ls->origin_start : 0;
  *ahead = copy->is_mirror && st->have_prev && o->last_seq < copy->last_seq &&
           o->last_seq < st->last && origin_new > 0;
  if (*ahead)
    count_lost(ls, origin_new);
  /* What the copy took since: a mirror keeps the origin's sequence numbers
   * (its last sequence may even go back), so its messages are counted
   * while none left it; a sourced stream numbers its own. */
  bool valid;
  uint64_t taken;
  if (copy->is_mirror) {
    valid = copy->retention == NL_RETENTION_LIMITS &&
            copy->first_seq == ls->base_first && copy->msgs >= ls->base_msgs;
    taken = valid ? copy->msgs - ls->base_msgs : 0;
  } else {
    valid = copy->last_seq >= ls->base_last;
    taken = valid ? copy->last_seq - ls->base_last : 0;
  }
  if (!valid || recreated_now || !st->have_prev)
    return;
  uint64_t deficit = origin_new > taken ? origin_new - taken : 0;
  bool quiet = o->last_seq == ls->origin_last && copy->last_seq == st->last &&
               copy->msgs == st->msgs;
  ls->settled_polls = quiet && link_live_idle(l, ls->recreated_ns, now_ns)
                          ? ls->settled_polls + 1
                          : 0;
  if (ls->settled_polls >= NL_SOURCE_SETTLED_POLLS)
    count_lost(ls, deficit);
  /* Flowing, with the link the copy's only input: its latest delivery
   * left nothing waiting, so only what the origin gained in the last
   * interval can still be on its way. */
  bool single = copy->n_links == 1 && copy->n_subjects == 0;
  bool grew =
      copy->is_mirror ? copy->msgs > st->msgs : copy->last_seq > st->last;
  if (single && grew && l->have_info && l->lag == 0 &&
      o->last_seq >= ls->origin_last) {
    uint64_t recent = o->last_seq - ls->origin_last;
    if (deficit > recent)
      count_lost(ls, deficit - recent);
  }
}

/* Tracks whether the origin gained messages after the copy last changed:
 * the mark is the origin's last sequence at the first poll after that
 * change, and a later poll holding more is a message the copy has not
 * taken since (whatever the copy held came from the origin before the
 * mark). */
static void track_gain(const nl_source_state *st, link_state *ls,
                       const nl_stream_snap *o, int64_t now_ns) {
  if (!ls->have_mark) {
    if (st->have_prev && !st->changed) {
      ls->have_mark = true;
      ls->mark_last = o->last_seq;
    }
  } else if (ls->gain_ns == 0 && o->last_seq > ls->mark_last) {
    ls->gain_ns = now_ns;
  }
}

/* Runs the rules of one link and returns its cause (NL_SOURCE_NONE when
 * none holds), filling v. */
static nl_source_cause eval_link(nl_source_state *st, link_state *ls,
                                 const nl_stream_snap *copy,
                                 const nl_source_link *l,
                                 const nl_stream_snap *o, int64_t now_ns,
                                 nl_source_view *v) {
  const int64_t stall_ns = (int64_t)(NL_SOURCE_STALL_S * NS_PER_S);
  bool whole = !l->filtered;
  bool stalled = false, newer = false, ahead = false;
  memset(v, 0, sizeof(*v));
  v->link = l;
  v->origin = o;
  if (o != NULL) {
    bool again = origin_recreated(st, ls, copy, o);
    if (again) {
      ls->have_mark = false;
      ls->gain_ns = 0;
      ls->newer_since_ns = 0;
      if (whole && st->have_prev && !holds_older(o)) {
        start_recreated(st, ls, copy, o, now_ns);
      } else {
        ls->lost_before += ls->lost;
        ls->lost = 0;
        ls->recreated = false;
      }
    }
    if (ls->recreated && whole)
      count_skipped(st, ls, copy, l, o, again, now_ns, &ahead);
    if (whole && !again) {
      track_gain(st, ls, o, now_ns);
      stalled = ls->gain_ns > 0 && now_ns - ls->gain_ns >= stall_ns;
      /* A sourced stream stores what it takes at its own time: a newest
       * message older than the origin's creation means it took nothing
       * from this origin (a mirror keeps the origin's times). One that
       * starts at a configured place may rightly take none of what the
       * origin holds. */
      bool was_newer = !copy->is_mirror && !l->start_set &&
                       copy->last_seq > 0 && copy->last_ts_ns > 0 &&
                       o->msgs > 0 &&
                       o->created_ns - copy->last_ts_ns > NS_PER_S;
      if (!was_newer)
        ls->newer_since_ns = 0;
      else if (ls->newer_since_ns == 0)
        ls->newer_since_ns = now_ns;
      newer = was_newer && now_ns - ls->newer_since_ns >= stall_ns;
    }
    ls->origin_seen = true;
    ls->origin_created_ns = o->created_ns;
    ls->origin_last = o->last_seq;
  }
  if (l->have_info && l->active_ns < 0) {
    if (ls->never_since_ns == 0)
      ls->never_since_ns = now_ns;
  } else {
    ls->never_since_ns = 0;
  }
  bool silent =
      l->have_info &&
      (l->active_ns >= stall_ns ||
       (ls->never_since_ns > 0 && now_ns - ls->never_since_ns >= stall_ns));
  bool waiting = l->have_info && l->lag > 0 && st->have_prev && !st->changed &&
                 now_ns - st->since_ns >= stall_ns;
  v->lost = ls->lost + ls->lost_before;
  v->origin_start = ls->origin_start;
  v->recreated = ls->recreated;
  v->ahead = ahead;
  v->no_progress_ns = st->have_prev ? now_ns - st->since_ns : 0;
  v->silent_ns = l->active_ns >= 0        ? l->active_ns
                 : ls->never_since_ns > 0 ? now_ns - ls->never_since_ns
                                          : 0;
  if (ls->recreated && (v->lost > 0 || ahead))
    return NL_SOURCE_RECREATED;
  if (newer)
    return NL_SOURCE_NEWER;
  if (stalled)
    return NL_SOURCE_STALLED_GAIN;
  if (waiting)
    return NL_SOURCE_WAITING;
  if (silent)
    return NL_SOURCE_SILENT;
  return NL_SOURCE_NONE;
}

/* Forgets everything of st (the copy was deleted and created again). */
static void reset(nl_source_state *st) {
  free(st->links);
  memset(st, 0, sizeof(*st));
}

void nl_detect_source(nl_source_state **stp, const nl_stream_snap *copy,
                      const nl_stream_snap *const *origins, int64_t now_ns,
                      nl_source_result *out) {
  memset(out, 0, sizeof(*out));
  if (copy->n_links == 0) {
    nl_class_state_drop(&nl_class_source_stalled, (void **)stp);
    return;
  }
  nl_source_state *st = nl_class_state(&nl_class_source_stalled, (void **)stp);
  if (st == NULL)
    return;
  if (st->have_prev && st->created_ns > 0 && copy->created_ns > 0 &&
      !nl_created_same(st->created_ns, copy->created_ns))
    reset(st);
  if (!st->have_prev)
    st->created_ns = copy->created_ns;
  st->changed = !st->have_prev || copy->last_seq != st->last;
  if (st->changed) {
    st->since_ns = now_ns;
    for (size_t i = 0; i < st->n_links; i++) {
      st->links[i].have_mark = false;
      st->links[i].gain_ns = 0;
    }
  }
  if (!match_links(st, copy))
    return;
  nl_source_view best = {0}, v;
  nl_source_cause best_cause = NL_SOURCE_NONE;
  unsigned stalled_links = 0;
  for (size_t i = 0; i < copy->n_links; i++) {
    const nl_source_link *l = &copy->links[i];
    link_state *ls = &st->links[i];
    const nl_stream_snap *o =
        origins != NULL && !l->external ? origins[i] : NULL;
    nl_source_cause c = eval_link(st, ls, copy, l, o, now_ns, &v);
    uint64_t total = ls->lost + ls->lost_before;
    if (total > ls->lost_reported) {
      out->lost_delta += total - ls->lost_reported;
      ls->lost_reported = total;
    }
    if (c == NL_SOURCE_NONE)
      continue;
    stalled_links++;
    if (c > best_cause) {
      best_cause = c;
      best = v;
    }
  }
  st->have_prev = true;
  st->last = copy->last_seq;
  st->msgs = copy->msgs;
  st->first = copy->first_seq;
  if (best_cause == NL_SOURCE_NONE)
    return;
  out->active = true;
  nl_source_finding(copy, best_cause, &best, stalled_links, &out->finding);
}

/* SOURCE_STALLED of a listed stream: its upstream links judged against
 * their origins of this poll; the messages it newly counts as skipped are
 * the stream's lost ones. */
static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  const nl_stream_snap *origins[NL_LINKS_MAX];
  for (size_t k = 0; k < s->n_links && k < NL_LINKS_MAX; k++)
    origins[k] =
        s->links[k].external ? NULL : x->stream_named(x, s->links[k].name);
  nl_source_result r;
  nl_detect_source((nl_source_state **)state, s, origins, x->now_ns, &r);
  *x->lost_total += r.lost_delta;
  if (r.active)
    *f = r.finding;
  return r.active;
}

const nl_class_def nl_class_source_stalled = {
    .cls = NL_SOURCE_STALLED,
    .state_size = sizeof(nl_source_state),
    .release = release,
    .detect_stream = detect_stream,
};
