/* test_forecast.c: RETENTION_RISK's forecast on recorded poll sequences of
 * steady trends: a consumer that reads slower than its stream receives,
 * toward max_age, max_msgs or max_bytes, with and without jitter in the
 * consumer's batches and the polls. Each case states the poll time at
 * which the rule raises the finding (docs/detectors.md, RETENTION_RISK:
 * the trends start at 5 % of the limit, a forecast is made from 10 % once
 * the rise has been sustained 30 s and the time left is at most 4 times
 * its span; a bucket of 5 s can lag), that every phase of the polls gives
 * it within one bucket, and that it comes before the first eviction. */
#include "core/model/nl_forecast.h"
#include "nl_test.h"
#include "nl_world.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Which limit a case's stream has. */
typedef enum { BY_AGE, BY_MSGS, BY_BYTES } limit_by;

typedef struct {
  const char *name;
  limit_by by;
  double limit;     /* max_age in s, max_msgs, or max_bytes. */
  double in_per_s;  /* Messages published a second. */
  double out_per_s; /* Messages the consumer reads a second once behind. */
  double poll_s;    /* Poll interval. */
  double batch_s;   /* The consumer reads in batches this far apart (0:
                       continuously). */
  double jitter_s;  /* Each poll up to this late (deterministic). */
} trend_case;

/* The consumer keeps up until it falls behind at FALL_S. */
#define FALL_S 20.0
/* Bytes a stored message takes (BY_BYTES). */
#define MSG_BYTES 100.0

/* A deterministic jitter in [0, 1) for poll k. */
static double wobble(int k) { return (double)((k * 7919 + 13) % 101) / 101.0; }

/* Whole seconds of messages read by the consumer by time t of case tc. */
static double read_by(const trend_case *tc, double t) {
  double in = tc->in_per_s * t;
  if (t <= FALL_S)
    return in;
  double behind = t - FALL_S;
  if (tc->batch_s > 0)
    behind = floor(behind / tc->batch_s) * tc->batch_s;
  return tc->in_per_s * FALL_S + tc->out_per_s * behind;
}

/* When the stream's limit starts evicting what the consumer has not read,
 * in seconds after it falls behind. */
static double eviction_at(const trend_case *tc) {
  double gap_per_s = tc->in_per_s - tc->out_per_s;
  if (tc->by == BY_AGE) /* The oldest unread ages by the gap's share. */
    return tc->limit / (gap_per_s / tc->in_per_s);
  double room = tc->by == BY_MSGS ? tc->limit : tc->limit / MSG_BYTES;
  return room / gap_per_s;
}

/* When the rule raises case tc, in seconds after the consumer falls
 * behind, for a steady rise measured exactly: the trend starts when the
 * exposure (or age) reaches 5 % of the limit, the forecast needs 10 %, a
 * rise sustained 30 s, and a time left of at most 4 times the span. */
static double rule_at(const trend_case *tc) {
  double gap_per_s = tc->in_per_s - tc->out_per_s;
  double rise = tc->by == BY_AGE ? gap_per_s / tc->in_per_s : gap_per_s;
  double limit = tc->by == BY_AGE    ? tc->limit
                 : tc->by == BY_MSGS ? tc->limit
                                     : tc->limit / MSG_BYTES;
  double far = 0.05 * limit / rise, matters = 0.10 * limit / rise;
  double trusted = (limit / rise + 4 * far) / 5;
  double at = far + 30;
  if (matters > at)
    at = matters;
  return trusted > at ? trusted : at;
}

/* Runs case tc with its polls shifted by phase_s; returns when
 * RETENTION_RISK was raised (seconds after falling behind), or -1. Checks
 * the forecast value on the way: absent before the finding, present from
 * its onset. */
static double run_case(const trend_case *tc, double phase_s) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "S");
  if (tc->by == BY_AGE)
    s->max_age_ns = (int64_t)(tc->limit * SEC);
  else if (tc->by == BY_MSGS)
    s->max_msgs = (int64_t)tc->limit;
  else
    s->max_bytes = (int64_t)tc->limit;
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  int64_t t0 = w.t;
  double raised = -1;
  double end = FALL_S + eviction_at(tc);
  for (int k = 0; raised < 0; k++) {
    double t = phase_s + k * tc->poll_s + tc->jitter_s * wobble(k);
    if (t > end + 60)
      break;
    w.t = t0 + (int64_t)(t * SEC);
    uint64_t last = (uint64_t)(tc->in_per_s * t);
    uint64_t first = 1;
    if (tc->by == BY_AGE && t > tc->limit)
      first = (uint64_t)(tc->in_per_s * (t - tc->limit)) + 1;
    double room = tc->by == BY_MSGS    ? tc->limit
                  : tc->by == BY_BYTES ? tc->limit / MSG_BYTES
                                       : INFINITY;
    if ((double)last > room)
      first = last - (uint64_t)room + 1;
    s->last_seq = last;
    s->first_seq = first;
    s->msgs = last >= first ? last - first + 1 : 0;
    s->bytes = (uint64_t)((double)s->msgs * MSG_BYTES);
    uint64_t read = (uint64_t)read_by(tc, t);
    c->delivered_consumer_seq = c->delivered_stream_seq = read;
    c->ack_floor_consumer_seq = c->ack_floor_stream_seq = read;
    c->num_pending = last > read ? last - read : 0;
    c->num_ack_pending = 0;
    world_poll(&w);
    const nl_consumer_state *st =
        nl_registry_find(nl_engine_registry(w.engine), "S", "slow");
    double eta;
    nl_limit_kind kind;
    bool forecast = st != NULL && nl_forecast_latest(st, &eta, &kind);
    if (active_for(&w, "S", "slow", NL_RETENTION_RISK)) {
      raised = t - FALL_S;
      CHECK(forecast && eta >= 0);
    } else if (forecast && eta < 3600) {
      /* Never: a trusted forecast under the horizon raises at once. */
      CHECK(!forecast);
    }
  }
  world_free(&w);
  return raised;
}

static const trend_case cases[] = {
    /* The case: 10 a second read from 20 received, max_age 150 s:
     * the oldest unread ages by 0.5 s a second and is evicted 300 s after
     * the consumer fell behind. */
    {"age 150 s, 20 in, 10 out, 3 s polls", BY_AGE, 150, 20, 10, 3, 0, 0},
    {"age 150 s, 1 s polls", BY_AGE, 150, 20, 10, 1, 0, 0},
    {"age 150 s, batches of 5 s, polls 0.9 s late", BY_AGE, 150, 20, 10, 3, 5,
     0.9},
    /* A slower fall: 0.25 s a second toward 600 s (2400 s to eviction). */
    {"age 600 s, 0.25 s a second", BY_AGE, 600, 20, 15, 3, 0, 0},
    /* The count case: +50 a second toward max_msgs 12000. */
    {"max_msgs 12000, +50 a second", BY_MSGS, 12000, 100, 50, 3, 0, 0},
    {"max_msgs 12000, batches of 4 s, polls 1 s late", BY_MSGS, 12000, 100, 50,
     3, 4, 1},
    {"max_bytes 1.2 MB, +50 a second", BY_BYTES, 1200000, 100, 50, 3, 0, 0},
};

/* Each case raises in every phase of the polls, no earlier than the rule
 * allows (less one poll of rounding) and no later than two buckets of the
 * trend (whose lows lag), a poll, a batch and the polls' jitter after it,
 * before the first eviction with at least half the time to it left. */
static void test_forecast_steady_trends(void) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const trend_case *tc = &cases[i];
    double lo = INFINITY, hi = -INFINITY;
    for (double phase = 0; phase < tc->poll_s; phase += tc->poll_s / 6) {
      double at = run_case(tc, phase);
      if (at < 0) {
        fprintf(stderr, "  case \"%s\", phase %.1f s: never raised\n", tc->name,
                phase);
        CHECK(at >= 0);
        continue;
      }
      lo = at < lo ? at : lo;
      hi = at > hi ? at : hi;
    }
    double evict = eviction_at(tc), rule = rule_at(tc);
    double late = 10 + tc->poll_s + tc->batch_s + tc->jitter_s;
    bool not_before = lo >= rule - tc->poll_s;
    bool in_time = hi <= rule + late;
    bool early = evict - hi >= evict / 2;
    if (!not_before || !in_time || !early)
      fprintf(stderr,
              "  case \"%s\": raised %.1f to %.1f s after falling behind, "
              "the rule at %.1f (+%.1f), eviction at %.0f s\n",
              tc->name, lo, hi, rule, late, evict);
    CHECK(not_before);
    CHECK(in_time);
    CHECK(early);
  }
}

/* The forecast as a value: absent while no trend is trusted, present and
 * falling while the consumer falls behind, absent again once it caught up
 * (far from the limit), and never a number standing for none. */
static void test_forecast_value_present_only_when_trusted(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "S");
  s->max_msgs = 12000;
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  int first_present = -1, absent_after = -1;
  double previous = INFINITY;
  bool fell = true;
  uint64_t read = 0;
  for (int k = 0; k < 200; k++) {
    /* 100 a second published; the consumer reads 50 for 100 s, then 200
     * until it has caught up. */
    s->last_seq += 100;
    read += k < 100 ? 50 : 200;
    if (read > s->last_seq)
      read = s->last_seq;
    if (s->last_seq > 12000)
      s->first_seq = s->last_seq - 12000 + 1;
    s->msgs = s->last_seq - s->first_seq + 1;
    c->delivered_consumer_seq = c->delivered_stream_seq = read;
    c->ack_floor_consumer_seq = c->ack_floor_stream_seq = read;
    c->num_pending = s->last_seq - read;
    world_poll(&w);
    const nl_consumer_state *st =
        nl_registry_find(nl_engine_registry(w.engine), "S", "slow");
    double eta = -1;
    nl_limit_kind kind = NL_LIMIT_NONE;
    bool present = st != NULL && nl_forecast_latest(st, &eta, &kind);
    if (present) {
      CHECK(isfinite(eta) && eta >= 0 && kind == NL_LIMIT_MSGS);
      if (first_present < 0)
        first_present = k;
      if (k < 100 && eta > previous + 1e-9)
        fell = false;
      previous = eta;
    } else if (first_present >= 0 && absent_after < 0) {
      absent_after = k;
    }
  }
  /* Trusted about a minute in (the rule's 58 s and a bucket), falling
   * while the consumer falls behind, and gone once the backlog is far from
   * the limit again (5 % of it: within a few polls of catching up). */
  CHECK(first_present >= 55 && first_present <= 70);
  CHECK(fell);
  CHECK(absent_after > 100 && absent_after < 140);
  world_free(&w);
}

/* PUSH_UNBOUND is critical only when max_age evicts its backlog within the
 * horizon for certain: by the lower bound of the oldest message's age, not
 * by the estimate between clock samples. Published 1 a second to a
 * max_age of 3700 s (clock samples 231 s apart), the consumer took 100 and
 * is then unbound: message 101, first seen by the sample at 231 s, is at
 * least 69 s old at 300 s (3631 s left: a warning) though about 199 s by
 * the estimate (3501 s, under the horizon of 3600 s). */
static void test_forecast_unbound_eviction_is_certain(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "U");
  s->max_age_ns = 3700 * SEC;
  nl_consumer_snap *c = add_consumer(&w, 0, "push");
  c->push = true;
  c->push_bound = true;
  for (int k = 0; k <= 300; k++) {
    s->last_seq = (uint64_t)k;
    s->msgs = s->last_seq;
    uint64_t read = k < 100 ? (uint64_t)k : 100;
    c->delivered_consumer_seq = c->delivered_stream_seq = read;
    c->ack_floor_consumer_seq = c->ack_floor_stream_seq = read;
    c->num_pending = s->last_seq - read;
    c->push_bound = k < 295;
    world_poll(&w);
  }
  CHECK(active_for(&w, "U", "push", NL_PUSH_UNBOUND));
  CHECK(w.last[NL_PUSH_UNBOUND].severity == NL_SEVERITY_WARNING);
  double eta =
      nl_finding_get(&w.last[NL_PUSH_UNBOUND], "eviction_forecast_s", -1);
  CHECK(eta > 3600 && eta < 3700);
  CHECK(!active_for(&w, "U", "push", NL_RETENTION_RISK));
  world_free(&w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_forecast_unbound_eviction_is_certain),
    NL_TEST(test_forecast_steady_trends),
    NL_TEST(test_forecast_value_present_only_when_trusted),
};

NL_TEST_MAIN(tests)
