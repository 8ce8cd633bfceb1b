/* nl_consumer_expiry.c: CONSUMER_EXPIRING and CONSUMER_EXPIRED (see
 * nl_consumer_expiry.h and docs/detectors.md). */
#include "nl_consumer_expiry.h"

#include "nl_classes.h"
#include "nl_fix.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/* Whole seconds of ns, rounded up. */
static double whole_s(int64_t ns) { return ceil(nl_seconds(ns)); }

/* Work a pull client would receive: messages waiting, room under
 * max_ack_pending, not paused. */
static bool pull_takeable(const nl_consumer_snap *c) {
  return !c->push && !c->paused && c->num_pending > 0 &&
         (c->max_ack_pending <= 0 ||
          c->num_ack_pending < (uint64_t)c->max_ack_pending);
}

/* The latest client activity c itself shows (server clock). */
static int64_t shown_activity(const nl_consumer_snap *c) {
  return max64(c->created_ns, max64(c->delivered_last_ns, c->ack_last_ns));
}

/* Keeps what the engine needs of c and s once the consumer is gone. */
static void keep_last(nl_expiry_watch *w, const nl_consumer_snap *c,
                      const nl_stream_snap *s) {
  w->durable = c->durable;
  w->push = c->push;
  w->paused = c->paused;
  w->ack_none = c->ack_policy == NL_ACK_NONE;
  w->ack_policy = c->ack_policy;
  w->ack_wait_ns = c->ack_wait_ns;
  w->max_deliver = c->max_deliver;
  w->max_ack_pending = c->max_ack_pending;
  w->stream_limit_ns = s->consumer_inactive_limit_ns;
  w->num_pending = c->num_pending;
  w->num_ack_pending = c->num_ack_pending;
  w->ack_floor_stream_seq = c->ack_floor_stream_seq;
  w->retention = s->retention;
  w->stream_msgs = s->msgs;
  w->stream_last_seq = s->last_seq;
  w->stream_consumers = s->consumer_count;
  w->filter_kept =
      c->filter == NULL ? !c->filtered : strlen(c->filter) < sizeof(w->filter);
  w->filter[0] = '\0';
  if (c->filter != NULL && w->filter_kept)
    strcpy(w->filter, c->filter);
}

/* Records consumer c of stream s polled at now_ns in its watch *state
 * (allocated for a consumer with an inactive_threshold, dropped when it has
 * none). Call once per poll, after nl_registry_observe. */
static void observe(const nl_consumer_state *st, void **state,
                    const nl_consumer_snap *c, const nl_stream_snap *s,
                    int64_t now_ns) {
  if (c->inactive_threshold_ns <= 0) {
    nl_class_state_drop(&nl_class_consumer_expiring, state);
    return;
  }
  nl_expiry_watch *w = nl_class_state(&nl_class_consumer_expiring, state);
  if (w == NULL)
    return;
  int64_t sn = c->server_ts_ns > 0 ? c->server_ts_ns : now_ns;
  bool first = w->last_server_ns == 0;
  if (first)
    w->first_server_ns = sn;
  if (c->inactive_threshold_ns != w->threshold_ns)
    w->unseen = false; /* A new threshold is judged afresh. */
  w->threshold_ns = c->inactive_threshold_ns;
  w->delay_ns = nl_consumer_redelivery_delay_ns(c);
  w->created_ns = c->created_ns;

  int64_t v = max64(w->visible_ns, shown_activity(c));
  if (c->num_waiting > 0 || (c->push && c->push_bound))
    v = max64(v, sn);
  w->visible_ns = v;
  bool takeable = pull_takeable(c);
  if (c->paused || (!c->push && (!takeable || c->num_waiting > 0)))
    w->quiet_ns = sn;
  if (!c->push || c->push_bound)
    w->unbound_since_ns = 0;
  else if (w->unbound_since_ns == 0)
    w->unbound_since_ns = sn;
  /* A held message may be worked on unseen (in-progress acks reset the
   * server's timer but move no field) until its redelivery delay. */
  int64_t held = c->num_ack_pending > 0 && c->delivered_last_ns > 0
                     ? c->delivered_last_ns + w->delay_ns
                     : 0;
  int64_t start =
      max64(max64(v, held), c->push ? w->unbound_since_ns : w->quiet_ns);
  if (start > sn)
    start = sn;
  /* A run that ended is an idle gap the consumer survived. */
  if (!first && start > w->idle_start_ns)
    w->longest_gap_ns = max64(w->longest_gap_ns, start - w->idle_start_ns);
  w->idle_start_ns = start;
  w->idle_ns = sn - start;

  /* Absent: no push subscriber; or no pull request waiting while work a
   * client would receive stood undelivered since the poll before, or a
   * held message went past its redelivery delay with nothing delivered or
   * acked since the poll before. */
  bool quiet_since = !first && c->delivered_last_ns < w->last_server_ns;
  if (c->paused)
    w->absent_shown = false;
  else if (c->push)
    w->absent_shown = !c->push_bound;
  else
    w->absent_shown =
        c->num_waiting == 0 && quiet_since &&
        ((takeable && w->takeable) || (c->num_ack_pending > 0 && held <= sn &&
                                       c->ack_last_ns < w->last_server_ns));
  /* Listed although it has been idle longer than the server allows: its
   * clients are active in ways the polls cannot see. */
  int64_t allowed = w->threshold_ns + NL_EXPIRY_JITTER_NS + NL_EXPIRY_SLACK_NS;
  if (c->num_ack_pending > 0)
    allowed += 2 * w->delay_ns; /* 2.11+: held messages delay removal. */
  if (w->absent_shown && w->idle_ns > allowed)
    w->unseen = true;

  w->takeable = takeable;
  w->interval_ns = first ? 0 : sn - w->last_server_ns;
  w->last_server_ns = sn;
  w->last_poll_ns = now_ns;
  keep_last(w, c, s);
}

/* Long-lived: seen for at least twice its threshold (time for its
 * clients' regular gaps to show), and either durable or used at least one
 * threshold after its creation (not one request's consumer). */
static bool long_lived(const nl_expiry_watch *w) {
  return w->last_server_ns - w->first_server_ns >= 2 * w->threshold_ns &&
         (w->durable || w->visible_ns - w->created_ns >= w->threshold_ns);
}

/* The threshold recommended for w, idle for idle_ns now. */
static int64_t recommended(const nl_expiry_watch *w, int64_t idle_ns) {
  int64_t longest = max64(w->threshold_ns, max64(w->longest_gap_ns, idle_ns));
  if (longest > NL_DURATION_MAX_NS / NL_EXPIRY_FACTOR)
    longest = NL_DURATION_MAX_NS / NL_EXPIRY_FACTOR;
  return (int64_t)whole_s(NL_EXPIRY_FACTOR * longest) * 1000000000LL;
}

/* CONSUMER_EXPIRING for st as last observed (c its snapshot, s its
 * stream, w its watch): a long-lived consumer with acks, an
 * inactive_threshold, and messages unread or unacknowledged, whose clients
 * the latest poll showed absent, idle for at least NL_EXPIRY_WARN_SHARE of
 * its threshold and longer than any idle gap it survived. Returns true and
 * fills f. */
static bool expiring(const nl_consumer_state *st, const nl_expiry_watch *w,
                     const nl_consumer_snap *c, const nl_stream_snap *s,
                     nl_finding *f) {
  if (w == NULL || w->ack_none || w->paused || w->unseen || !w->absent_shown ||
      !long_lived(w) || w->num_pending + w->num_ack_pending == 0)
    return false;
  double idle = nl_seconds(w->idle_ns), t = nl_seconds(w->threshold_ns);
  if (idle < NL_EXPIRY_WARN_SHARE * t ||
      w->idle_ns <= w->longest_gap_ns + w->interval_ns)
    return false;
  int64_t rec = recommended(w, w->idle_ns);
  nl_finding_start(f, NL_CONSUMER_EXPIRING);
  nl_finding_add(f, "idle_s", floor(idle));
  nl_finding_add(f, "inactive_threshold_s", t);
  nl_finding_add(f, "time_left_s", idle < t ? floor(t - idle) : 0);
  nl_finding_add(f, "idle_share", floor(100 * idle / t) / 100);
  nl_finding_add(f, "num_pending", (double)w->num_pending);
  nl_finding_add(f, "num_ack_pending", (double)w->num_ack_pending);
  nl_finding_add(f, "longest_gap_s", floor(nl_seconds(w->longest_gap_ns)));
  nl_finding_add(f, "durable", w->durable ? 1 : 0);
  nl_finding_add(f, "recommended_inactive_threshold_s", nl_seconds(rec));
  if (w->stream_limit_ns > 0)
    nl_finding_add(f, "stream_limit_s", nl_seconds(w->stream_limit_ns));
  f->condition_since_ns = w->idle_start_ns;
  snprintf(f->description, sizeof(f->description),
           "%s consumer with %" PRIu64 " messages unread and %" PRIu64
           " unacknowledged has had no %s for %.0f s of its "
           "inactive_threshold of %.0f s: the server deletes it in about "
           "%.0f s unless a client comes back%s",
           w->durable ? "durable" : "ephemeral", w->num_pending,
           w->num_ack_pending,
           w->push ? "subscriber" : "pull request, delivery or ack", idle, t,
           idle < t ? t - idle : 0,
           s->retention == NL_RETENTION_INTEREST
               ? ", and the stream then drops the messages only it wanted"
               : "");
  nl_shell_names q;
  nl_shell_names_of(st->stream, st->name, &q);
  bool limited = w->stream_limit_ns > 0 && rec > w->stream_limit_ns;
  if (w->durable && !limited) {
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats consumer edit %s %s --inactive-threshold %.0fs", q.stream,
             q.consumer, nl_seconds(rec));
    snprintf(f->recommendation, sizeof(f->recommendation),
             "inactive_threshold %.0f s (%d times the longest of the "
             "threshold, the idle gaps seen and this one), or none (an API "
             "update with inactive_threshold 0: the nats CLI cannot set "
             "0); and bring its clients back",
             nl_seconds(rec), NL_EXPIRY_FACTOR);
  } else if (w->durable) {
    snprintf(f->recommendation, sizeof(f->recommendation),
             "inactive_threshold %.0f s, above the %.0f s the stream allows "
             "its consumers: raise the stream's "
             "consumer_limits.inactive_threshold first, then nats consumer "
             "edit %s %s --inactive-threshold %.0fs; and bring its clients "
             "back",
             nl_seconds(rec), nl_seconds(w->stream_limit_ns), q.stream,
             q.consumer, nl_seconds(rec));
  } else {
    snprintf(f->recommendation, sizeof(f->recommendation),
             "an ephemeral consumer (no durable name) cannot be edited with "
             "the nats CLI, and the client that creates it creates it again "
             "as it was: create it with a durable name, or with "
             "inactive_threshold %.0f s or more; and bring its clients "
             "back",
             nl_seconds(rec));
  }
  (void)c;
  return true;
}

/* Records a DELETED advisory or an API delete audit a of the consumer in
 * its watch. */
static void record(nl_consumer_state *st, void **state, const nl_advisory *a) {
  nl_expiry_watch *w = *state;
  if (w == NULL)
    return;
  if (a->kind == NL_ADV_API_DELETE)
    w->api_deleted = true;
  else if (a->kind == NL_ADV_DELETED && a->timestamp_ns > 0)
    w->deleted_adv_ns = a->timestamp_ns;
}

/* Writes into f what is lost with the consumer w of stream, and how to
 * create it again (rec the threshold to give it). */
static void describe_gone(const nl_expiry_watch *w, const char *stream,
                          const char *name, double idle_s, uint64_t removed,
                          bool from_advisory, int64_t rec, nl_finding *f) {
  nl_finding_start(f, NL_CONSUMER_EXPIRED);
  double t = nl_seconds(w->threshold_ns);
  /* What was lost first: the headline keeps as many items as fit. */
  nl_finding_add(f, "unread", (double)w->num_pending);
  if (w->retention == NL_RETENTION_INTEREST)
    nl_finding_add(f, "removed_with_it", (double)removed);
  nl_finding_add(f, "unacked", (double)w->num_ack_pending);
  nl_finding_add(f, "inactive_threshold_s", t);
  nl_finding_add(f, "idle_s", floor(idle_s));
  if (w->retention == NL_RETENTION_INTEREST)
    nl_finding_add(f, "only_consumer", w->stream_consumers <= 1 ? 1 : 0);
  nl_finding_add(f, "ack_floor_stream_seq", (double)w->ack_floor_stream_seq);
  nl_finding_add(f, "durable", w->durable ? 1 : 0);
  nl_finding_add(f, "from_advisory", from_advisory ? 1 : 0);
  nl_finding_add(f, "recommended_inactive_threshold_s", nl_seconds(rec));
  const char *lost =
      w->retention == NL_RETENTION_INTEREST
          ? "the stream dropped the messages only it wanted (lost)"
      : w->retention == NL_RETENTION_WORKQUEUE
          ? "its messages stay in the work queue, and a consumer created "
            "again receives them"
          : "its position is gone: a client that creates it again starts "
            "from its deliver policy, receiving messages again (duplicates) "
            "or skipping them (loss)";
  char safe[128];
  nl_printable(name, false, safe, sizeof(safe));
  snprintf(f->about, sizeof(f->about), "%s", name);
  snprintf(f->description, sizeof(f->description),
           "consumer %s (%s) was removed by the server after %.0f s without "
           "client activity (inactive_threshold %.0f s) with %" PRIu64
           " messages unread and %" PRIu64 " unacknowledged; %s",
           safe, w->durable ? "durable" : "ephemeral", idle_s, t,
           w->num_pending, w->num_ack_pending, lost);
  nl_shell_names q;
  nl_shell_names_of(stream, name, &q);
  bool limited = w->stream_limit_ns > 0 && rec > w->stream_limit_ns;
  char deliver[32] = "all";
  if (w->ack_floor_stream_seq > 0)
    snprintf(deliver, sizeof(deliver), "%" PRIu64, w->ack_floor_stream_seq + 1);
  if (!w->push && w->filter_kept && !limited) {
    nl_fix_consumer k = {stream,
                         name,
                         w->ack_policy,
                         w->ack_wait_ns,
                         w->max_deliver,
                         w->max_ack_pending,
                         rec,
                         w->filter};
    nl_fix_consumer_add(&k, w->ack_floor_stream_seq + 1, false, f->fix_command,
                        sizeof(f->fix_command));
  }
  snprintf(f->recommendation, sizeof(f->recommendation),
           "create it again as a durable consumer with inactive_threshold "
           "%.0f s or more (%d times the longest of the threshold and the "
           "idle gaps seen), or none, starting after its ack floor "
           "(sequence %s)%s; the application that creates it must do the "
           "same, or it creates it as before",
           nl_seconds(rec), NL_EXPIRY_FACTOR, deliver,
           limited   ? ", after raising the stream's "
                       "consumer_limits.inactive_threshold"
           : w->push ? ", with its deliver subject (no command: a push "
                       "consumer's subject is not kept)"
                     : "");
}

/* Decides whether consumer st (watch w), which the poll at now_ns (plugin
 * clock) no longer lists while its stream s is listed completely, was
 * removed by the server's inactivity timer with something to lose: no API
 * delete audited, no gap in what the polls saw since its last poll, the
 * stream not created again, a long-lived consumer with acks whose latest
 * poll showed its clients absent with messages unread or unacknowledged,
 * and deleted (at the DELETED advisory's time when one came in between,
 * else by now) no sooner than its threshold after the latest client
 * activity seen. Returns true and fills *out (its name owned by out). */
static bool expired_now(const nl_consumer_state *st, const nl_expiry_watch *w,
                        const nl_stream_snap *s, int64_t now_ns,
                        nl_expired *out) {
  if (w == NULL || w->ack_none || w->api_deleted || w->paused ||
      !w->absent_shown || st->gap_ns >= w->last_poll_ns ||
      s->last_seq < w->stream_last_seq || !long_lived(w) ||
      w->num_pending + w->num_ack_pending == 0)
    return false;
  /* When it went, on the server's clock: the DELETED advisory's time when
   * it came since the poll before (a claim the poll now confirms), else
   * at the latest this poll. */
  int64_t skew = w->last_poll_ns - w->last_server_ns;
  int64_t d = now_ns - skew;
  bool from_advisory =
      w->deleted_adv_ns >= w->last_server_ns - NL_EXPIRY_SLACK_NS &&
      w->deleted_adv_ns <= d + NL_EXPIRY_SLACK_NS;
  if (from_advisory)
    d = w->deleted_adv_ns;
  /* The server's timer cannot have run out before then. */
  if (d < w->visible_ns + w->threshold_ns - NL_EXPIRY_SLACK_NS)
    return false;
  uint64_t removed = 0;
  if (w->retention == NL_RETENTION_INTEREST) {
    removed = sat_sub(w->stream_msgs + sat_sub(s->last_seq, w->stream_last_seq),
                      s->msgs);
    if (removed > w->num_pending + w->num_ack_pending)
      removed = w->num_pending + w->num_ack_pending;
  }
  double idle_s = nl_seconds(d - w->visible_ns);
  int64_t rec = recommended(w, 0);
  memset(out, 0, sizeof(*out));
  if ((out->name = strdup(st->name)) == NULL)
    return false;
  out->absent_since_ns = now_ns;
  out->recommended_ns = rec;
  describe_gone(w, st->stream, st->name, idle_s, removed, from_advisory, rec,
                &out->f);
  return true;
}

static void entry_free(nl_expired *e) {
  free(e->name);
  e->name = NULL;
}

/* Removes entry i of l, keeping the order. */
static void remove_at(nl_expired_list *l, size_t i) {
  entry_free(&l->items[i]);
  memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(l->items[0]));
  l->n--;
}

/* Adds e to l (taking its name), replacing an entry of the same name; a
 * full list drops its oldest. */
static void expired_add(nl_expired_list *l, nl_expired *e) {
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->items[i].name, e->name) == 0) {
      remove_at(l, i);
      break;
    }
  if (l->n == NL_EXPIRED_MAX)
    remove_at(l, 0);
  l->items[l->n++] = *e;
  e->name = NULL;
}

/* The inactive_threshold of the consumer named name of stream_index in
 * set, -1 when the set lists none. */
static int64_t listed_threshold(const nl_snapshot_set *set, size_t stream_index,
                                const char *name) {
  for (size_t j = 0; j < set->n_consumers; j++) {
    const nl_consumer_snap *c = &set->consumers[j];
    if (c->stream_index == stream_index && strcmp(c->name, name) == 0)
      return c->inactive_threshold_ns;
  }
  return -1;
}

/* Brings l in line with the poll set at now_ns for its stream at
 * stream_index: an entry clears once a consumer of its name is listed
 * with no inactive_threshold or one of at least the recommended value
 * (counted in l->fixes), or when none has been listed for
 * NL_EXPIRED_HOLD_NS; one listed with a shorter threshold keeps it.
 * Returns true while entries remain, with f the latest one's finding. */
static bool expired_detect(nl_expired_list *l, const nl_snapshot_set *set,
                           size_t stream_index, int64_t now_ns, nl_finding *f) {
  for (size_t i = 0; i < l->n;) {
    nl_expired *e = &l->items[i];
    int64_t t = listed_threshold(set, stream_index, e->name);
    if (t == 0 || t >= e->recommended_ns) {
      l->fixes++;
      remove_at(l, i);
      continue;
    }
    if (t > 0)
      e->absent_since_ns = now_ns;
    e->recreated_ns = t > 0 ? t : 0;
    if (now_ns - e->absent_since_ns >= NL_EXPIRED_HOLD_NS) {
      remove_at(l, i);
      continue;
    }
    i++;
  }
  if (l->n == 0)
    return false;
  const nl_expired *e = &l->items[l->n - 1];
  *f = e->f;
  nl_finding_add(f, "expired_consumers", (double)l->n);
  if (e->recreated_ns > 0) {
    nl_finding_add(f, "recreated_threshold_s", nl_seconds(e->recreated_ns));
    size_t n = strlen(f->description);
    snprintf(f->description + n, sizeof(f->description) - n,
             "; created again with inactive_threshold %.0f s, below the "
             "%.0f s recommended",
             nl_seconds(e->recreated_ns), nl_seconds(e->recommended_ns));
  }
  return true;
}

/* Frees what the list l holds and empties it. */
static void expired_clear(void *state) {
  nl_expired_list *l = state;
  for (size_t i = 0; i < l->n; i++)
    entry_free(&l->items[i]);
  l->n = 0;
}

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  observe(x->st, state, x->c, x->s, x->now_ns);
  return *state != NULL && expiring(x->st, *state, x->c, x->s, f);
}

/* A consumer gone: kept among its stream's expired consumers (the state of
 * CONSUMER_EXPIRED) when the server's inactivity timer removed it with
 * something to lose. */
static void gone(const nl_gone_ctx *g, const void *state, void **to_state) {
  nl_expired e;
  if (state == NULL || !expired_now(g->st, state, g->s, g->now_ns, &e))
    return;
  nl_expired_list *l = nl_class_state(&nl_class_consumer_expired, to_state);
  if (l == NULL) {
    free(e.name);
    return;
  }
  expired_add(l, &e);
}

const nl_class_def nl_class_consumer_expiring = {
    .cls = NL_CONSUMER_EXPIRING,
    .state_size = sizeof(nl_expiry_watch),
    .detect = detect,
    .record = record,
    .gone = gone,
    .gone_to = NL_CONSUMER_EXPIRED,
};

/* CONSUMER_EXPIRED of a listed stream, after the poll's gone consumers were
 * noted: held while one is not created again safely. */
static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  nl_expired_list none = {0};
  nl_expired_list *l = *state != NULL ? *state : &none;
  return expired_detect(l, x->set, x->index, x->now_ns, f);
}

/* The fixes counted: each consumer created again safely changes the key,
 * so that the finding clears at once when that was the last. */
static uint64_t key(const void *state) {
  const nl_expired_list *l = state;
  return l != NULL ? l->fixes : 0;
}

const nl_class_def nl_class_consumer_expired = {
    .cls = NL_CONSUMER_EXPIRED,
    .state_size = sizeof(nl_expired_list),
    .release = expired_clear,
    .detect_stream = detect_stream,
    .key = key,
    .after_sweep = true,
    .forget = NL_FORGET_GONE,
};
