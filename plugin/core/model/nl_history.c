/* nl_history.c: per-consumer history across polls (see nl_history.h). */
#include "nl_history.h"

#include <stdlib.h>
#include <string.h>

/* States live in blocks of slots rather than one allocation each: the
 * histories of many consumers then fill whole pages, instead of lying
 * among a poll's short-lived allocations, whose freed gaps would keep those
 * pages resident. Names of up to STATE_NAMES_INLINE bytes (both, with
 * their terminators) live in the slot; longer ones are allocated apart. A
 * freed slot goes on a free list for the next new consumer, so the blocks
 * hold as many slots as the most consumers held at once. */
#define STATE_NAMES_INLINE 40
#define SLOTS_PER_BLOCK 128

typedef struct {
  nl_consumer_state st;
  char names[STATE_NAMES_INLINE];
} state_slot;

typedef struct state_block {
  struct state_block *next;
  state_slot slots[SLOTS_PER_BLOCK];
} state_block;

struct nl_registry {
  nl_consumer_state **buckets;
  size_t n_buckets;
  size_t size;
  state_block *blocks;     /* Newest first. */
  unsigned newest_used;    /* Slots ever used in the newest block. */
  nl_consumer_state *free; /* Freed slots, chained through next. */
  nl_slot_release release; /* For the class states, or NULL. */
};

/* The hash of the stream name, a separator and the consumer name. */
static uint64_t key_hash(const char *stream, const char *name) {
  static const unsigned char sep = 0xff;
  uint64_t h = nl_hash_bytes(NL_HASH_BASIS, stream, strlen(stream));
  h = nl_hash_bytes(h, &sep, 1);
  return nl_hash_bytes(h, name, strlen(name));
}

nl_registry *nl_registry_create(nl_slot_release release) {
  nl_registry *reg = calloc(1, sizeof(*reg));
  if (reg == NULL)
    return NULL;
  reg->release = release;
  reg->n_buckets = 64;
  reg->buckets = calloc(reg->n_buckets, sizeof(*reg->buckets));
  if (reg->buckets == NULL) {
    free(reg);
    return NULL;
  }
  return reg;
}

/* The findings array of every consumer that never had a finding. Never
 * written: nl_state_findings() replaces it before a finding is stored. */
static nl_finding *const no_findings[NL_CLASS_COUNT];

nl_finding **nl_state_findings(nl_consumer_state *st) {
  if (st->active != (nl_finding **)no_findings)
    return st->active;
  nl_finding **a = calloc(NL_CLASS_COUNT, sizeof(*a));
  if (a != NULL)
    st->active = a;
  return a;
}

/* Takes a zeroed slot for a consumer whose names are ls and ln bytes long
 * (terminators included) and points st->stream and st->name at room for
 * them. Returns NULL when memory runs out. */
static nl_consumer_state *state_alloc(nl_registry *reg, size_t ls, size_t ln) {
  state_slot *slot;
  if (reg->free != NULL) {
    slot = (state_slot *)reg->free;
    reg->free = reg->free->next;
  } else {
    if (reg->blocks == NULL || reg->newest_used == SLOTS_PER_BLOCK) {
      state_block *b = malloc(sizeof(*b));
      if (b == NULL)
        return NULL;
      b->next = reg->blocks;
      reg->blocks = b;
      reg->newest_used = 0;
    }
    slot = &reg->blocks->slots[reg->newest_used++];
  }
  memset(&slot->st, 0, sizeof(slot->st));
  nl_consumer_state *st = &slot->st;
  st->stream = ls + ln <= STATE_NAMES_INLINE ? slot->names : malloc(ls + ln);
  if (st->stream == NULL) {
    st->next = reg->free;
    reg->free = st;
    return NULL;
  }
  st->name = st->stream + ls;
  return st;
}

void nl_slots_clear(nl_class_slot *slots, nl_slot_release release) {
  for (int cls = 0; slots != NULL && cls < NL_CLASS_COUNT; cls++) {
    if (slots[cls].state != NULL && release != NULL)
      release((nl_class)cls, slots[cls].state);
    free(slots[cls].state);
    slots[cls] = (nl_class_slot){NULL, 0, 0};
  }
}

nl_class_slot *nl_state_slot(const nl_consumer_state *st, nl_class cls) {
  return st->slots != NULL && (unsigned)cls < NL_CLASS_COUNT ? &st->slots[cls]
                                                             : NULL;
}

nl_class_slot *nl_state_slot_make(nl_consumer_state *st, nl_class cls) {
  if ((unsigned)cls >= NL_CLASS_COUNT)
    return NULL;
  if (st->slots == NULL)
    st->slots = calloc(NL_CLASS_COUNT, sizeof(*st->slots));
  return st->slots != NULL ? &st->slots[cls] : NULL;
}

/* Frees what the history of st keeps beyond its fixed fields: the
 * advisories' evidence, the loss causes, the forecast's trends and every
 * class's state (through release). */
static void state_drop_kept(nl_consumer_state *st, nl_slot_release release) {
  free(st->advised);
  st->advised = NULL;
  free(st->gap);
  st->gap = NULL;
  free(st->forecast);
  st->forecast = NULL;
  nl_slots_clear(st->slots, release);
  free(st->slots);
  st->slots = NULL;
}

/* Frees what st owns; its slot stays with the caller. */
static void state_clear(nl_consumer_state *st, nl_slot_release release) {
  if (st->active != (nl_finding **)no_findings) {
    for (int i = 0; i < NL_CLASS_COUNT; i++)
      free(st->active[i]);
    free(st->active);
  }
  free(st->events);
  state_drop_kept(st, release);
  free(st->loss);
  free(st->prior);
  if (st->stream != ((state_slot *)st)->names)
    free(st->stream);
}

/* Frees what st owns and puts its slot on the free list. */
static void state_release(nl_registry *reg, nl_consumer_state *st) {
  state_clear(st, reg->release);
  st->next = reg->free;
  reg->free = st;
}

void nl_registry_free(nl_registry *reg) {
  if (reg == NULL)
    return;
  for (size_t i = 0; i < reg->n_buckets; i++)
    for (nl_consumer_state *st = reg->buckets[i]; st != NULL; st = st->next)
      state_clear(st, reg->release);
  while (reg->blocks != NULL) {
    state_block *next = reg->blocks->next;
    free(reg->blocks);
    reg->blocks = next;
  }
  free(reg->buckets);
  free(reg);
}

size_t nl_registry_size(const nl_registry *reg) { return reg->size; }

/* Doubles the bucket array when the table is fuller than one per bucket.
 * Failure to grow is harmless: chains just get longer. */
static void maybe_grow(nl_registry *reg) {
  if (reg->size < reg->n_buckets)
    return;
  size_t n = reg->n_buckets * 2;
  nl_consumer_state **b = calloc(n, sizeof(*b));
  if (b == NULL)
    return;
  for (size_t i = 0; i < reg->n_buckets; i++) {
    nl_consumer_state *st = reg->buckets[i];
    while (st != NULL) {
      nl_consumer_state *next = st->next;
      st->next = b[st->hash % n];
      b[st->hash % n] = st;
      st = next;
    }
  }
  free(reg->buckets);
  reg->buckets = b;
  reg->n_buckets = n;
}

nl_consumer_state *nl_registry_find(nl_registry *reg, const char *stream,
                                    const char *name) {
  uint64_t h = key_hash(stream, name);
  for (nl_consumer_state *st = reg->buckets[h % reg->n_buckets]; st != NULL;
       st = st->next)
    if (st->hash == h && strcmp(st->stream, stream) == 0 &&
        strcmp(st->name, name) == 0)
      return st;
  return NULL;
}

const nl_sample *nl_state_latest(const nl_consumer_state *st) {
  return st->count > 0 ? &st->latest : NULL;
}

/* The brief form of a whole sample. */
static void brief_of(const nl_sample *s, nl_past_sample *out) {
  *out = (nl_past_sample){
      .t_ns = s->t_ns,
      .delivered_consumer_seq = s->delivered_consumer_seq,
      .num_pending = s->num_pending,
      .num_ack_pending = s->num_ack_pending,
      .redeliveries = s->redeliveries > NL_PAST_REDELIVERIES_MAX
                          ? NL_PAST_REDELIVERIES_MAX
                          : s->redeliveries,
      .beyond_expiry = s->beyond_expiry,
      .floor_moved = s->floor_moved,
      .acked = s->acked,
  };
}

bool nl_state_past(const nl_consumer_state *st, unsigned k,
                   nl_past_sample *out) {
  if (k >= st->count)
    return false;
  nl_past_sample b;
  brief_of(&st->latest, &b);
  /* Walk back from the latest poll, undoing one difference per poll. */
  int64_t t_ms = st->latest.t_ns / 1000000;
  for (unsigned j = 0; j < k; j++) {
    const nl_packed_sample *p =
        &st->past[(st->past_head + NL_HISTORY_LEN - 1 - j) %
                  (NL_HISTORY_LEN - 1)];
    t_ms -= p->back_ms;
    b.t_ns = t_ms * 1000000;
    b.delivered_consumer_seq -= p->delivered_back;
    b.num_pending -= (uint64_t)(int64_t)p->pending_back;
    b.num_ack_pending = p->num_ack_pending;
    b.redeliveries = p->redeliveries;
    b.beyond_expiry = p->beyond_expiry;
    b.floor_moved = p->floor_moved;
    b.acked = p->acked;
  }
  *out = b;
  return true;
}

/* Stores older (the sample before newer) as differences from newer.
 * Returns false when a difference does not fit in 32 bits. */
static bool pack_sample(const nl_sample *older, const nl_sample *newer,
                        nl_packed_sample *out) {
  /* Older poll times are kept in whole milliseconds. */
  int64_t ms = newer->t_ns / 1000000 - older->t_ns / 1000000;
  uint64_t delivered =
      newer->delivered_consumer_seq - older->delivered_consumer_seq;
  /* The difference of two counts below 2^63, as a signed number. */
  int64_t pending = (int64_t)(newer->num_pending - older->num_pending);
  if (newer->delivered_consumer_seq < older->delivered_consumer_seq ||
      delivered > UINT32_MAX || pending < INT32_MIN || pending > INT32_MAX ||
      newer->t_ns < older->t_ns || ms > UINT32_MAX)
    return false;
  nl_past_sample b;
  brief_of(older, &b);
  *out = (nl_packed_sample){
      .back_ms = (uint32_t)ms,
      .delivered_back = (uint32_t)delivered,
      .pending_back = (int32_t)pending,
      .num_ack_pending = b.num_ack_pending,
      .redeliveries = b.redeliveries,
      .beyond_expiry = b.beyond_expiry,
      .floor_moved = b.floor_moved,
      .acked = b.acked,
  };
  return true;
}

/* Makes cur the latest sample, keeping the one before it in past. When its
 * differences from cur do not fit, the history restarts at cur. */
static void push_sample(nl_consumer_state *st, const nl_sample *cur) {
  if (st->count > 0) {
    unsigned head = (st->past_head + 1) % (NL_HISTORY_LEN - 1);
    if (pack_sample(&st->latest, cur, &st->past[head]))
      st->past_head = (uint8_t)head;
    else
      st->count = 0;
  }
  st->latest = *cur;
  if (st->count < NL_HISTORY_LEN)
    st->count++;
}

const nl_redelivery_event *nl_state_event(const nl_consumer_state *st,
                                          unsigned k) {
  unsigned held = st->n_events < NL_EVENTS_LEN ? st->n_events : NL_EVENTS_LEN;
  if (k >= held || st->events == NULL)
    return NULL;
  return &st->events[(st->n_events - 1 - k) % NL_EVENTS_LEN];
}

static uint64_t sat_sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

bool nl_state_incarnation(const nl_consumer_state *st, nl_incarnation *out) {
  const nl_sample *s = nl_state_latest(st);
  if (s == NULL)
    return false;
  *out = (nl_incarnation){
      .created_ns = st->created_ns,
      .t_ns = s->t_ns,
      .ack_floor_stream_seq = s->ack_floor_stream_seq,
      .delivered_stream_seq = s->delivered_stream_seq,
      .num_pending = s->num_pending,
      .num_ack_pending = s->num_ack_pending,
      .stream_last_seq = s->stream_last_seq,
      .stream_created_ns = st->stream_created_ns,
      .floor_rate_max = st->floor_rate_max,
      .deliver_rate_max = st->deliver_rate_max,
      .filter_key = st->filter_key,
      .wants_every = st->wants_every,
      .floor_unproven = st->floor_unproven,
  };
  return true;
}

/* Keeps what st's incarnation showed at its latest poll (st->prior), as it
 * is about to be replaced by one created at created_ns. Out of memory, the
 * new incarnation has none. */
static void keep_prior(nl_consumer_state *st, int64_t created_ns) {
  if (st->prior == NULL && (st->prior = malloc(sizeof(*st->prior))) == NULL)
    return;
  if (!nl_state_incarnation(st, st->prior)) {
    free(st->prior);
    st->prior = NULL;
    return;
  }
  st->prior->succeeded_by_ns = created_ns;
}

/* Records in st how fast the interval from prev to cur moved its ack floor
 * and its deliveries (the fastest of its life is kept). */
static void note_rates(nl_consumer_state *st, const nl_sample *prev,
                       const nl_sample *cur) {
  double dt = nl_seconds(cur->t_ns - prev->t_ns);
  if (dt <= 0)
    return;
  double floor =
      (double)sat_sub(cur->ack_floor_stream_seq, prev->ack_floor_stream_seq) /
      dt;
  double deliver = (double)sat_sub(cur->delivered_consumer_seq,
                                   prev->delivered_consumer_seq) /
                   dt;
  if (floor > st->floor_rate_max)
    st->floor_rate_max = floor;
  if (deliver > st->deliver_rate_max)
    st->deliver_rate_max = deliver;
}

/* Clears the history of st but keeps its identity and active findings, so
 * that they clear through the normal path on the next detection. */
static void state_reset(nl_consumer_state *st, int64_t created_ns,
                        nl_slot_release release) {
  st->created_ns = created_ns;
  state_drop_kept(st, release);
  st->count = 0;
  st->past_head = 0;
  st->n_events = 0;
  st->lost_last = 0;
  free(st->loss);
  st->loss = NULL;
  st->last_ack_change_ns = 0;
  st->floor_since_ns = 0;
  st->stuck_since_ns = 0;
  st->last_stuck_end_ns = 0;
  st->acked_since_floor = false;
  st->redelivered_since_floor = 0;
  st->longest_pin_ns = 0;
  st->nak_credit = 0;
  st->floor_unproven = false;
  st->gap_ns = 0;
  st->floor_rate_max = 0;
  st->deliver_rate_max = 0;
}

void nl_state_new_regime(nl_consumer_state *st, int64_t now_ns) {
  st->n_events = 0;
  st->floor_since_ns = now_ns;
  st->stuck_since_ns = 0;
  st->last_stuck_end_ns = 0;
  st->acked_since_floor = false;
  st->redelivered_since_floor = 0;
  st->longest_pin_ns = 0;
}

void nl_state_after_gap(nl_consumer_state *st, int64_t now_ns) {
  nl_state_new_regime(st, now_ns);
  st->floor_unproven = true;
  st->gap_ns = now_ns;
}

void nl_state_add_nak(nl_consumer_state *st) {
  if (st->nak_credit < UINT32_MAX)
    st->nak_credit++;
}

/* Returns a + b, saturating at UINT32_MAX. */
static uint32_t sat_add32(uint32_t a, uint64_t b) {
  return b >= (uint64_t)(UINT32_MAX - a) ? UINT32_MAX : a + (uint32_t)b;
}

uint64_t nl_state_read_through(const nl_consumer_state *st,
                               uint64_t delivered_stream_seq) {
  return delivered_stream_seq > st->unstored_through ? delivered_stream_seq
                                                     : st->unstored_through;
}

/* Records in st what an empty stream s proves: when s holds no message and
 * the consumer is not behind its first sequence, none of the sequences up
 * to the last can be lost to it (they are gone, and it was not waiting for
 * them). nats-server 2.10 reports an interest stream emptied by messages
 * published without interest with first_seq equal to last_seq, and a
 * consumer created on it starts one below: that sequence was never
 * stored. A stream that went back (created again) forgets it. */
static void note_unstored(nl_consumer_state *st, const nl_consumer_snap *c,
                          const nl_stream_snap *s) {
  if (st->unstored_through > s->last_seq)
    st->unstored_through = 0;
  if (s->msgs == 0 && s->first_seq <= c->delivered_stream_seq + 1 &&
      s->last_seq > st->unstored_through)
    st->unstored_through = s->last_seq;
}

/* The messages an unfiltered consumer of a limits stream had not received
 * that the stream removed from the middle of its unread range in the
 * interval from prev to cur (a delete, a newer message on the subject, a
 * message's TTL), which its num_pending alone hides when the stream adds
 * as many as it removes. The stream added cur->stream_added, the
 * consumer delivered at most the smaller of its two sequences' rise, and
 * num_pending moved by the rest, less what was removed:
 *   removed = added + pending(prev) - pending(cur) - delivered.
 * The stream is polled before its consumers, so a changed delay between
 * the two replies shifts messages from one interval to the next: a
 * quarter of the interval's additions and two messages are taken off as
 * margin, and the count is capped by the rise of the stream's num_deleted
 * (removals from the middle; the caller takes the larger of this and its
 * count at the head). Returns a lower bound (0 when none is proven). */
static uint64_t interior_unread_removed(const nl_sample *prev,
                                        const nl_sample *cur) {
  if (cur->stream_deleted_rise == 0)
    return 0;
  uint64_t by_consumer =
      sat_sub(cur->delivered_consumer_seq, prev->delivered_consumer_seq);
  uint64_t by_stream =
      sat_sub(cur->delivered_stream_seq, prev->delivered_stream_seq);
  uint64_t delivered = by_consumer < by_stream ? by_consumer : by_stream;
  uint64_t in = cur->stream_added + prev->num_pending;
  uint64_t out = cur->num_pending + delivered;
  uint64_t margin = 2 + cur->stream_added / 4;
  uint64_t removed = sat_sub(sat_sub(in, out), margin);
  return removed < cur->stream_deleted_rise ? removed
                                            : cur->stream_deleted_rise;
}

/* Counts messages the consumer lost to eviction between prev (may be NULL)
 * and cur, when the stream's first sequence is first_seq, and records the
 * known sequence range. See docs/detectors.md, SEQUENCE_GAP. */
static void account_loss(nl_consumer_state *st, const nl_sample *prev,
                         const nl_sample *cur, const nl_stream_snap *s,
                         bool filtered) {
  uint64_t first_seq = s->first_seq;
  uint64_t lost = 0, range_first = 0, range_last = 0;
  uint64_t through = st->loss != NULL ? st->loss->through_seq : 0;
  /* Sequences never stored for this consumer are not lost to it. */
  if (st->unstored_through > through)
    through = st->unstored_through;
  if (!filtered && first_seq > 0) {
    uint64_t hi = first_seq - 1; /* Highest evicted sequence. */
    /* Still behind the stream head: [delivered + 1, hi] is gone for sure. */
    if (hi > cur->delivered_stream_seq) {
      uint64_t from = cur->delivered_stream_seq > through
                          ? cur->delivered_stream_seq
                          : through;
      lost = sat_sub(hi, from);
      range_first = nl_state_read_through(st, cur->delivered_stream_seq) + 1;
      range_last = hi;
    }
    /* Passed the head within the interval: what was evicted above the
     * previous position, less what could have been delivered first. */
    if (prev != NULL) {
      uint64_t from = prev->delivered_stream_seq > through
                          ? prev->delivered_stream_seq
                          : through;
      uint64_t span = sat_sub(hi, from);
      uint64_t delivered =
          sat_sub(cur->delivered_consumer_seq, prev->delivered_consumer_seq);
      uint64_t skipped = sat_sub(span, delivered);
      if (skipped > lost) {
        lost = skipped;
        range_first = range_last = 0; /* The exact range is not known. */
      }
    }
    if (hi > through && lost > 0)
      through = hi;
  }
  /* Any consumer: num_pending falling by more than was delivered. */
  if (prev != NULL && prev->num_pending > cur->num_pending) {
    uint64_t drop = prev->num_pending - cur->num_pending;
    uint64_t delivered =
        sat_sub(cur->delivered_consumer_seq, prev->delivered_consumer_seq);
    uint64_t by_pending = sat_sub(drop, delivered);
    if (by_pending > lost) {
      lost = by_pending;
      range_first = range_last = 0;
    }
  }
  if (!filtered && prev != NULL && s->retention == NL_RETENTION_LIMITS) {
    uint64_t interior = interior_unread_removed(prev, cur);
    if (interior > lost) {
      lost = interior;
      range_first = range_last = 0;
    }
  }
  st->lost_last = lost;
  st->lost_total += lost;
  /* Out of memory for the range, the next poll may count a loss again. */
  if (st->loss == NULL && (lost > 0 || range_first > 0))
    st->loss = calloc(1, sizeof(*st->loss));
  if (st->loss != NULL)
    *st->loss = (nl_loss_range){through, range_first, range_last};
}

/* Adds the n redeliveries of the interval that ended at cur (dc deliveries
 * in all) to the newest redelivery slot when alike, or to a new slot. Out
 * of memory for the slots, the interval goes unrecorded. */
static void record_redeliveries(nl_consumer_state *st, const nl_sample *cur,
                                uint32_t n, uint64_t dc, bool while_acking,
                                int64_t delay, int64_t now_ns) {
  nl_redelivery_event *e = (nl_redelivery_event *)nl_state_event(st, 0);
  if (e == NULL || now_ns - e->first_ns > delay / 4 ||
      e->beyond_expiry != cur->beyond_expiry ||
      e->while_acking != while_acking || e->intervals == UINT16_MAX) {
    if (st->events == NULL &&
        (st->events = calloc(NL_EVENTS_LEN, sizeof(*st->events))) == NULL)
      return;
    e = &st->events[st->n_events % NL_EVENTS_LEN];
    memset(e, 0, sizeof(*e));
    e->beyond_expiry = cur->beyond_expiry;
    e->while_acking = while_acking;
    e->first_ns = now_ns;
    st->n_events++;
  }
  e->t_ns = now_ns;
  e->redeliveries = sat_add32(e->redeliveries, n);
  e->deliveries = sat_add32(e->deliveries, dc);
  e->intervals++;
}

/* True when no message can have expired in the interval from prev to cur.
 * The interval is shorter than the redelivery delay, and every message
 * outstanding at prev (each above prev's ack_floor.stream_seq) was first
 * delivered after the oldest poll held at most one delay before cur (above
 * that poll's delivered.stream_seq), so none had been outstanding for a
 * whole delay by cur. That poll's delivered.stream_seq is derived from the
 * history: prev's, less each interval's new deliveries (the rise of
 * delivered.consumer_seq less its redeliveries), which can only make it
 * higher than it was, and so the rule stricter. Call before cur is
 * recorded (prev is the latest poll held). */
static bool expiry_ruled_out(const nl_consumer_state *st, const nl_sample *prev,
                             const nl_sample *cur, int64_t delay) {
  /* The outstanding messages lie in (ack floor, delivered]: a poll that
   * reports more of them than that range holds proves nothing. */
  if (delay <= 0 || cur->t_ns - prev->t_ns >= delay ||
      prev->ack_floor_stream_seq > prev->delivered_stream_seq ||
      prev->num_ack_pending >
          prev->delivered_stream_seq - prev->ack_floor_stream_seq)
    return false;
  int64_t cutoff = cur->t_ns - delay;
  uint64_t first_new = 0; /* New deliveries from that poll to prev. */
  nl_past_sample newer, older;
  if (!nl_state_past(st, 0, &newer))
    return false;
  for (unsigned k = 1; nl_state_past(st, k, &older) && older.t_ns >= cutoff;
       k++) {
    if (newer.redeliveries >= NL_PAST_REDELIVERIES_MAX)
      return false; /* Saturated: the new deliveries are not known. */
    first_new += newer.delivered_consumer_seq - older.delivered_consumer_seq -
                 newer.redeliveries;
    newer = older;
  }
  return prev->delivered_stream_seq >= first_new &&
         prev->ack_floor_stream_seq >= prev->delivered_stream_seq - first_new;
}

/* Fills the interval fields of cur from prev and updates running figures. */
static void account_interval(nl_consumer_state *st, const nl_sample *prev,
                             nl_sample *cur, const nl_consumer_snap *c,
                             int64_t now_ns) {
  if (prev == NULL) {
    st->floor_since_ns = now_ns;
    st->last_ack_change_ns = cur->ack_last_ns > 0 ? now_ns : 0;
    return;
  }
  uint64_t dc =
      sat_sub(cur->delivered_consumer_seq, prev->delivered_consumer_seq);
  uint64_t ds = sat_sub(cur->delivered_stream_seq, prev->delivered_stream_seq);
  uint64_t r = sat_sub(dc, ds);
  cur->redeliveries = r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
  cur->floor_moved = cur->ack_floor_stream_seq != prev->ack_floor_stream_seq;
  cur->acked = cur->ack_last_ns > prev->ack_last_ns;
  /* Expiry can redeliver each outstanding message at most once per delay,
   * plus once for a message that expired at the interval's edge. */
  int64_t delay = nl_consumer_redelivery_delay_ns(c);
  uint64_t outstanding = cur->num_ack_pending > prev->num_ack_pending
                             ? cur->num_ack_pending
                             : prev->num_ack_pending;
  double dt = (double)(cur->t_ns - prev->t_ns);
  double bound = delay > 0 ? (double)outstanding * (dt / (double)delay + 1.0)
                           : (double)outstanding;
  if (expiry_ruled_out(st, prev, cur, delay))
    bound = 0;
  /* Redeliveries announced by NAK advisories are no expiry: the interval
   * is NAK-driven when they explain them all (or when there are more than
   * expiry can explain), and otherwise only the rest can be expiry. */
  uint32_t naked =
      cur->redeliveries < st->nak_credit ? cur->redeliveries : st->nak_credit;
  st->nak_credit -= naked;
  if (st->nak_credit > cur->num_ack_pending)
    st->nak_credit = cur->num_ack_pending;
  uint32_t unexplained = cur->redeliveries - naked;
  cur->beyond_expiry = (double)cur->redeliveries > bound ||
                       (cur->redeliveries > 0 && unexplained == 0);
  /* What the expiry rules count: every redelivery of a NAK-driven
   * interval (so marked), else those no NAK explains. */
  uint32_t counted = cur->beyond_expiry ? cur->redeliveries : unexplained;
  st->redelivered_total += cur->redeliveries;
  if (cur->acked)
    st->last_ack_change_ns = now_ns;
  if (counted > 0) {
    bool while_acking =
        st->last_ack_change_ns > 0 &&
        now_ns - st->last_ack_change_ns <= delay + (cur->t_ns - prev->t_ns);
    record_redeliveries(st, cur, counted, dc, while_acking, delay, now_ns);
  }
  /* A floor never moves back for the same consumer, except when a server
   * restores older state (a restart, or a new leader behind the old). */
  bool floor_back = cur->ack_floor_stream_seq < prev->ack_floor_stream_seq;
  if (floor_back)
    st->floor_unproven = true;
  /* The floor "stands" while it keeps its value with work outstanding. */
  if ((cur->floor_moved && !floor_back) || cur->num_ack_pending == 0) {
    if (st->acked_since_floor)
      st->last_stuck_end_ns = now_ns;
    st->floor_since_ns = now_ns;
    st->acked_since_floor = false;
    st->stuck_since_ns = 0;
    st->redelivered_since_floor = 0;
    st->floor_unproven = false;
    return;
  }
  if (st->floor_unproven) {
    st->floor_since_ns = now_ns; /* Perhaps restored: it proves nothing. */
    return;
  }
  if (now_ns - st->floor_since_ns > st->longest_pin_ns)
    st->longest_pin_ns = now_ns - st->floor_since_ns;
  if (st->acked_since_floor) {
    st->redelivered_since_floor =
        sat_add32(st->redelivered_since_floor, counted);
  } else if (cur->acked) {
    /* Later messages are being acked past a message that is not: from now
     * on the standing floor is a message left behind. */
    st->acked_since_floor = true;
    st->stuck_since_ns = now_ns;
  }
}

nl_consumer_state *nl_registry_observe(nl_registry *reg,
                                       const nl_consumer_snap *c,
                                       const nl_stream_snap *s, int64_t now_ns,
                                       uint32_t gen, uint64_t unstored_through,
                                       bool *was_reset) {
  *was_reset = false;
  nl_consumer_state *st = nl_registry_find(reg, c->stream, c->name);
  if (st != NULL && st->seen_generation == gen)
    return NULL; /* Listed twice in one poll: recorded once. */
  if (st == NULL) {
    size_t ls = strlen(c->stream) + 1, ln = strlen(c->name) + 1;
    st = state_alloc(reg, ls, ln);
    if (st == NULL)
      return NULL;
    st->active = (nl_finding **)no_findings;
    memcpy(st->stream, c->stream, ls);
    memcpy(st->name, c->name, ln);
    st->hash = key_hash(c->stream, c->name);
    st->created_ns = c->created_ns;
    st->first_seen_ns = now_ns;
    st->unstored_through = unstored_through;
    size_t b = st->hash % reg->n_buckets;
    st->next = reg->buckets[b];
    reg->buckets[b] = st;
    reg->size++;
    maybe_grow(reg);
  }
  const nl_sample *prev = nl_state_latest(st);
  bool same = nl_created_same(c->created_ns, st->created_ns);
  if (prev != NULL &&
      (!same || c->delivered_consumer_seq < prev->delivered_consumer_seq ||
       now_ns <= prev->t_ns)) {
    /* The same consumer going back is older state a restarted server
     * restored: its floor, too, may be an old one. So may be the floor of
     * any consumer first seen after a gap. */
    bool unproven = same || st->floor_unproven;
    if (!same)
      keep_prior(st, c->created_ns);
    state_reset(st, same ? st->created_ns : c->created_ns, reg->release);
    if (!same) {
      st->first_seen_ns = now_ns;
      st->unstored_through = unstored_through;
    }
    st->floor_unproven = unproven;
    st->resets++;
    *was_reset = true;
    prev = NULL;
  }
  /* A new ack_wait or backoff starts a new regime: redeliveries seen under
   * the old one no longer speak for the consumer. */
  int64_t delay = nl_consumer_redelivery_delay_ns(c);
  if (prev != NULL && delay != st->delay_ns)
    nl_state_new_regime(st, now_ns);
  st->delay_ns = delay;
  nl_sample cur = {
      .t_ns = now_ns,
      .delivered_consumer_seq = c->delivered_consumer_seq,
      .delivered_stream_seq = c->delivered_stream_seq,
      .ack_floor_stream_seq = c->ack_floor_stream_seq,
      .ack_last_ns = c->ack_last_ns,
      .num_ack_pending = c->num_ack_pending > UINT32_MAX
                             ? UINT32_MAX
                             : (uint32_t)c->num_ack_pending,
      .num_pending = c->num_pending,
      .num_redelivered = c->num_redelivered > UINT32_MAX
                             ? UINT32_MAX
                             : (uint32_t)c->num_redelivered,
      .stream_last_seq = s->last_seq,
      .stream_num_deleted = s->num_deleted,
  };
  if (prev != NULL) {
    cur.stream_added = sat_sub(s->last_seq, prev->stream_last_seq);
    cur.stream_deleted_rise = sat_sub(s->num_deleted, prev->stream_num_deleted);
  }
  if (prev != NULL)
    note_rates(st, prev, &cur);
  st->filter_key = nl_consumer_filter_key(c);
  st->wants_every = nl_consumer_wants_every(c);
  st->stream_created_ns = s->created_ns;
  account_interval(st, prev, &cur, c, now_ns);
  account_loss(st, prev, &cur, s, c->filtered);
  note_unstored(st, c, s);
  push_sample(st, &cur);
  st->seen_generation = gen;
  return st;
}

void nl_registry_each(nl_registry *reg,
                      void (*fn)(nl_consumer_state *st, void *ud), void *ud) {
  for (size_t i = 0; i < reg->n_buckets; i++)
    for (nl_consumer_state *st = reg->buckets[i]; st != NULL; st = st->next)
      fn(st, ud);
}

void nl_registry_sweep(nl_registry *reg, uint32_t gen,
                       bool (*keep)(const nl_consumer_state *st, void *ud),
                       void (*gone)(nl_consumer_state *st, void *ud),
                       void *ud) {
  for (size_t i = 0; i < reg->n_buckets; i++) {
    nl_consumer_state **link = &reg->buckets[i];
    while (*link != NULL) {
      nl_consumer_state *st = *link;
      if (st->seen_generation == gen || (keep != NULL && keep(st, ud))) {
        link = &st->next;
        continue;
      }
      if (gone != NULL)
        gone(st, ud);
      *link = st->next;
      state_release(reg, st);
      reg->size--;
    }
  }
}
