/* nl_storage_limit.c: publishes that cannot enter because the account's
 * JetStream storage is full. STORAGE_LIMIT_RISK forecasts it from the
 * trend of the account's use (nl_forecast_trusted_eta) for each stream
 * that grows towards it; STORAGE_LIMIT_REACHED finds it once a stream's
 * publishes are refused now. The raise, hold and clear rules and what the
 * server does are in docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_account.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

/* What STORAGE_LIMIT_RISK keeps of a stream between polls. */
typedef struct {
  nl_trend use;   /* The binding pool's use (bytes, every replica). */
  nl_trend bytes; /* The stream's own bytes. */
  int pool_key;   /* Which pool the trends follow (pool_key); 0: none. */
} storage_watch;

/* What STORAGE_LIMIT_REACHED keeps: the stream's first sequence and bytes
 * at the poll before. */
typedef struct {
  bool have;
  uint64_t first_seq;
  uint64_t bytes;
} storage_prev;

/* A key of pool p's identity: its storage and tier (never 0). */
static int pool_key(const nl_storage_pool *p) {
  return 1 + (p->memory ? 16 : 0) + p->replicas;
}

/* The replicas of stream s (at least 1). */
static uint64_t replicas_of(const nl_stream_snap *s) {
  return s->replicas > 0 ? (uint64_t)s->replicas : 1;
}

/* The bytes one more message of s takes from the pool: its average stored
 * size on every replica, at least 1. */
static uint64_t message_need(const nl_stream_snap *s) {
  uint64_t avg = s->msgs > 0 ? s->bytes / s->msgs : 0;
  return (avg > 0 ? avg : 1) * replicas_of(s);
}

/* Whether pool p refuses a message of s now: nats-server 2.10+ refuses a
 * message whose stored size on every replica would take the use past the
 * limit (jsAccount.wouldExceedLimits); 2.9 stores it, finds the use past
 * the limit and removes it again (jsAccount.limitsExceeded). */
static bool pool_full(const nl_storage_pool *p, const nl_stream_snap *s) {
  return p->used >= p->limit || p->limit - p->used < message_need(s);
}

/* The bytes stream s can still add to its pool before its own max_bytes
 * or max_msgs (at its average size) stops it, on every replica; UINT64_MAX
 * without such a limit. */
static uint64_t own_room(const nl_stream_snap *s) {
  double cap = s->max_bytes > 0 ? (double)s->max_bytes : INFINITY;
  if (s->max_msgs > 0 && s->msgs > 0) {
    double by_count = (double)s->max_msgs * (double)s->bytes / (double)s->msgs;
    if (by_count < cap)
      cap = by_count;
  }
  if (isinf(cap))
    return UINT64_MAX;
  return cap > (double)s->bytes
             ? (uint64_t)((cap - (double)s->bytes) * (double)replicas_of(s))
             : 0;
}

/* Writes into f the fix: capping s with max_bytes so that it discards its
 * oldest messages before the pool fills, when that is what s does at its
 * limits (limits retention, discard old) and the cap leaves it room. The
 * cap is 80% of the room the pool leaves s beside the other streams' use,
 * and within what their reservations leave (the server refuses an edit
 * whose max_bytes, times the replicas, does not fit beside them:
 * jetStream.checkBytesLimits). Otherwise words only. */
static void storage_fix(const nl_stream_snap *s, const nl_storage_pool *p,
                        nl_finding *f) {
  nl_shell_names q;
  nl_shell_names_of(s->name, NULL, &q);
  uint64_t r = replicas_of(s);
  uint64_t mine = s->bytes * r < p->used ? s->bytes * r : p->used;
  uint64_t others = p->used - mine;
  uint64_t own_res = s->max_bytes > 0 ? (uint64_t)s->max_bytes * r : 0;
  uint64_t others_res = p->reserved > own_res ? p->reserved - own_res : 0;
  uint64_t cap = others < p->limit ? (p->limit - others) / 10 * 8 / r : 0;
  uint64_t res_cap = others_res < p->limit ? (p->limit - others_res) / r : 0;
  if (res_cap < cap)
    cap = res_cap;
  const char *raise =
      p->memory ? "raise the account's JetStream memory limit (max_mem in "
                  "the server configuration's account jetstream block, or "
                  "the account JWT's mem_storage)"
                : "raise the account's JetStream file storage limit "
                  "(max_file in the server configuration's account "
                  "jetstream block, or the account JWT's disk_storage)";
  bool capable = s->retention == NL_RETENTION_LIMITS && !s->discard_new &&
                 cap >= 10 * message_need(s) / r && cap < (uint64_t)INT64_MAX;
  if (!capable) {
    snprintf(f->recommendation, sizeof(f->recommendation),
             "%s, or remove messages the account no longer needs; no "
             "command of the stream frees room without losing messages "
             "its consumers still need",
             raise);
    return;
  }
  nl_finding_add(f, "recommended_max_bytes", (double)cap);
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats stream edit %s --max-bytes %" PRIu64, q.stream, cap);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "if the stream's oldest messages may go, cap it at %" PRIu64
           " bytes (the fix command): it then discards its oldest messages "
           "instead of filling the account (messages no consumer read "
           "before they go are lost to it); if every message must stay, %s",
           cap, raise);
}

/* Adds the pool's figures to f. */
static void add_pool(const nl_storage_pool *p, const nl_stream_snap *s,
                     nl_finding *f) {
  nl_finding_add(f, "account_used_bytes", (double)p->used);
  nl_finding_add(f, "account_limit_bytes", (double)p->limit);
  nl_finding_add(f, "account_reserved_bytes", (double)p->reserved);
  nl_finding_add(f, "memory", p->memory ? 1 : 0);
  nl_finding_add(f, "stream_bytes", (double)s->bytes);
  nl_finding_add(f, "replicas", (double)replicas_of(s));
}

/* The pool that binds the listed stream x->s, when the poll read the
 * account's pools and the stream is judged here; else NULL. */
static const nl_storage_pool *binding_pool(const nl_stream_ctx *x) {
  const nl_stream_snap *s = x->s;
  if (s == NULL || s->elsewhere || s->no_leader || !x->set->pools_read)
    return NULL;
  return nl_storage_pool_of(x->set, s);
}

static bool detect_risk(const nl_stream_ctx *x, void **state, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  const nl_storage_pool *p = binding_pool(x);
  if (p == NULL)
    return false;
  storage_watch *k = nl_class_state(&nl_class_storage_limit_risk, state);
  if (k == NULL)
    return false;
  if (k->pool_key != pool_key(p)) {
    nl_trend_init(&k->use, NL_FORECAST_BUCKET_NS);
    nl_trend_init(&k->bytes, NL_FORECAST_BUCKET_NS);
    k->pool_key = pool_key(p);
  }
  nl_trend_add(&k->use, x->now_ns, (double)p->used);
  nl_trend_add(&k->bytes, x->now_ns, (double)s->bytes);
  /* Full now is STORAGE_LIMIT_REACHED's; a stream its own limits stop
   * before the pool fills is no cause of it; nor is one that does not
   * grow. (A pool far from its limit gives no trusted forecast: a rise
   * from 0 that reaches the limit within four times its span has passed
   * a fifth of it.) */
  if (pool_full(p, s) || own_room(s) < p->limit - p->used)
    return false;
  nl_rise grows;
  if (!nl_trend_rise(&k->bytes, &grows))
    return false;
  double growth = 0, span = 0;
  double eta = nl_forecast_trusted_eta(&k->use, (double)p->used,
                                       (double)p->limit, &growth, &span);
  const nl_finding *held = x->held[NL_STORAGE_LIMIT_RISK];
  bool holding = nl_finding_holding(held);
  double horizon = x->p->storage_horizon_s;
  if (!(eta < (holding ? 1.2 * horizon : horizon)))
    return false;
  if (holding && !(eta < horizon)) {
    *f = *held; /* In the margin: the evidence of the onset stands. */
    return true;
  }
  nl_finding_start(f, NL_STORAGE_LIMIT_RISK);
  nl_finding_add(f, "forecast_s", (double)(int64_t)eta);
  nl_finding_add(f, "horizon_s", horizon);
  nl_finding_add(f, "account_growth_bytes_per_s", growth);
  nl_finding_add(f, "sustained_s", (double)(int64_t)span);
  nl_finding_add(f, "stream_growth_bytes_per_s", grows.growth_per_s);
  add_pool(p, s, f);
  snprintf(f->description, sizeof(f->description),
           "the account's JetStream %s storage holds %" PRIu64
           " of its %" PRIu64
           " bytes, rising %.0f bytes/s for %.0f s, and this stream grows "
           "with it: in about %.0f s the server refuses its publishes "
           "(\"resource limits exceeded for account\", error 10002), an "
           "error only the publisher sees",
           p->memory ? "memory" : "file", p->used, p->limit, growth, span, eta);
  storage_fix(s, p, f);
  return true;
}

static bool detect_reached(const nl_stream_ctx *x, void **state,
                           nl_finding *f) {
  const nl_stream_snap *s = x->s;
  const nl_storage_pool *p = binding_pool(x);
  if (p == NULL)
    return false;
  storage_prev *k = nl_class_state(&nl_class_storage_limit_reached, state);
  if (k == NULL)
    return false;
  storage_prev before = *k;
  *k = (storage_prev){true, s->first_seq, s->bytes};
  if (!pool_full(p, s) || !before.have)
    return false;
  /* A stream that grew, or evicted its oldest to store new messages (on
   * 2.9 a stream at its own limits stays within the account's use), since
   * the poll before is not refused. Its last sequence proves nothing: on
   * 2.9 a refused message is stored, then removed, and its sequence
   * stays used. One nobody published to within the horizon is not
   * harmed (a refused publish on 2.9 sets last_ts: it was tried). */
  if (s->bytes > before.bytes || s->first_seq != before.first_seq)
    return false;
  double horizon = x->p->storage_horizon_s;
  bool recent =
      s->last_ts_ns > 0 && x->now_ns - s->last_ts_ns < (int64_t)(horizon * 1e9);
  if (!recent && !nl_finding_holding(x->held[NL_STORAGE_LIMIT_REACHED]))
    return false;
  nl_finding_start(f, NL_STORAGE_LIMIT_REACHED);
  uint64_t room = p->used < p->limit ? p->limit - p->used : 0;
  nl_finding_add(f, "account_room_bytes", (double)room);
  nl_finding_add(f, "message_bytes", (double)message_need(s));
  if (s->last_ts_ns > 0)
    nl_finding_add(f, "last_stored_age_s",
                   (double)((x->now_ns - s->last_ts_ns) / 1000000000));
  add_pool(p, s, f);
  if (s->last_ts_ns > 0 && s->last_ts_ns < x->now_ns)
    f->condition_since_ns = s->last_ts_ns;
  snprintf(f->description, sizeof(f->description),
           "the account's JetStream %s storage is full (%" PRIu64 " of %" PRIu64
           " bytes, %" PRIu64 " left; a message of this "
           "stream takes %" PRIu64 "): the server refuses its publishes "
           "(\"resource limits exceeded for account\", error 10002), an "
           "error only the publisher sees; it stored nothing since the "
           "poll before",
           p->memory ? "memory" : "file", p->used, p->limit, room,
           message_need(s));
  storage_fix(s, p, f);
  return true;
}

static const nl_option options[] = {
    {"StorageHorizon", NL_OPTION_NUMBER, 86400 * 365, NULL, 3600.0,
     offsetof(nl_detect_params, storage_horizon_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_storage_limit_risk = {
    .cls = NL_STORAGE_LIMIT_RISK,
    .state_size = sizeof(storage_watch),
    .detect_stream = detect_risk,
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
    .options = options,
};

const nl_class_def nl_class_storage_limit_reached = {
    .cls = NL_STORAGE_LIMIT_REACHED,
    .state_size = sizeof(storage_prev),
    .detect_stream = detect_reached,
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
    .suppresses = NL_CLASS_BIT(NL_STORAGE_LIMIT_RISK),
};
