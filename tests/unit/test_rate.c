/* test_rate.c: RATE_LIMITED on the unit tests' world (a rate-limited push
 * consumer held below its incoming rate, its healthy look-alikes, hold and
 * clear), and the bytes a delivery costs its limit. */
#include "core/detect/nl_rate_limited.h"
#include "nl_test.h"
#include "nl_world.h"

#include <math.h>
#include <string.h>

/* Stored bytes of a message of a file stream in this file's streams: a
 * 100-byte payload on a 4-byte subject, and the record's 30. */
#define STORED 134

/* Makes c a push consumer of stream s, bound, with rate limit bps. */
static void make_push(nl_consumer_snap *c, uint64_t bps) {
  c->push = true;
  c->push_bound = true;
  c->rate_limit_bps = bps;
}

/* One interval: in messages arrive in s, and c is sent out of those
 * waiting for it, at most out; c acks what it is sent. */
static void rate_step(nl_stream_snap *s, nl_consumer_snap *c, uint64_t in,
                      uint64_t out) {
  s->last_seq += in;
  s->msgs = s->last_seq - s->first_seq + 1;
  s->bytes = s->msgs * STORED;
  uint64_t waiting = s->last_seq - c->delivered_stream_seq;
  uint64_t sent = out < waiting ? out : waiting;
  c->delivered_stream_seq += sent;
  c->delivered_consumer_seq += sent;
  c->ack_floor_stream_seq = c->delivered_stream_seq;
  c->ack_floor_consumer_seq = c->delivered_consumer_seq;
  c->num_pending = s->last_seq - c->delivered_stream_seq;
  c->num_ack_pending = 0;
}

/* A world of 5 s polls (the default 180 s window holds 36). */
static void rate_world(world *w) {
  world_init(w, true);
  w->step_ns = 5 * SEC;
}

/* 8,000 bit/s is 1,000 B/s: about 31 deliveries of about 159 bytes (this
 * file's messages, with the reply subject of stream RL's consumers) in
 * 5 s. */
#define LIMITED_OUT 31

/* A consumer sent at its limit of 8,000 bit/s while 10 messages a second
 * arrive: raised once the window of 180 s (and 6 polls) is sustained,
 * with the evidence, the eviction forecast of max_msgs, and the rate to
 * set in the recommendation (no command: the nats CLI cannot edit it).
 * RETENTION_RISK stays silent: the eviction is hours away. The fix (the
 * recommended limit) clears it at once. */
static void test_rate_limited_raised_and_fixed(void) {
  world w;
  rate_world(&w);
  nl_stream_snap *s = add_stream(&w, "RL");
  s->max_msgs = 100000;
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  make_push(c, 8000);
  int raised_at = -1;
  for (int i = 0; i < 60 && raised_at < 0; i++) {
    rate_step(s, c, 50, LIMITED_OUT);
    world_poll(&w);
    if (active_for(&w, "RL", "slow", NL_RATE_LIMITED))
      raised_at = i;
  }
  /* Polls 0..36 span 180 s. */
  CHECK(raised_at >= 36 && raised_at <= 38);
  CHECK_EQ_U(w.onsets[NL_RATE_LIMITED], 1);
  CHECK_EQ_U(w.onsets[NL_RETENTION_RISK], 0);
  const nl_finding *f = &w.last[NL_RATE_LIMITED];
  CHECK(f->severity == NL_SEVERITY_WARNING);
  CHECK(nl_finding_get(f, "rate_limit_bps", 0) == 8000);
  double sent = nl_finding_get(f, "delivered_bytes_per_s", 0);
  double in = nl_finding_get(f, "incoming_bytes_per_s", 0);
  CHECK(sent > 900 && sent < 1050);
  CHECK(in > 1500 && in < 1700);
  CHECK(nl_finding_get(f, "window_s", 0) >= 180);
  CHECK(nl_finding_get(f, "window_polls", 0) >= 36);
  /* Twice the 10 msg/s at about 159 bytes, in bits, rounded up. */
  double rec = nl_finding_get(f, "recommended_rate_limit_bps", 0);
  CHECK(rec >= 2 * 8 * 10 * 155 && rec <= 2 * 8 * 10 * 170);
  /* The backlog grows 3.8/s; max_msgs 100,000 evicts after the room left
   * is filled at that rate. */
  double growth = nl_finding_get(f, "backlog_growth_per_s", 0);
  double eta = nl_finding_get(f, "eviction_forecast_s", -1);
  CHECK(fabs(growth - 3.8) < 0.1);
  CHECK(fabs(eta - (100000 - (double)c->num_pending) / 3.8) < 100);
  CHECK(f->fix_command[0] == '\0');
  char want[128];
  snprintf(want, sizeof(want), "rate_limit_bps to %.0f", rec);
  CHECK(strstr(f->recommendation, want) != NULL);
  CHECK(strstr(f->recommendation, "nats consumer edit RL slow --config FILE") !=
        NULL);
  CHECK(strstr(f->description, "max_msgs evicts") != NULL);
  /* The fix: the limit raised; the backlog drains at the new rate. */
  c->rate_limit_bps = (uint64_t)rec;
  rate_step(s, c, 50, 100);
  world_poll(&w);
  CHECK(!active_for(&w, "RL", "slow", NL_RATE_LIMITED));
  CHECK_EQ_U(w.clears[NL_RATE_LIMITED], 1);
  for (int i = 0; i < 60; i++) {
    rate_step(s, c, 50, 100);
    world_poll(&w);
  }
  CHECK(c->num_pending == 0);
  CHECK_EQ_U(w.onsets[NL_RATE_LIMITED], 1);
  world_free(&w);
}

/* A filtered consumer (half of the stream's messages are its) sent at its
 * limit while its backlog grows: raised, its arrivals read from its
 * backlog and deliveries. An ephemeral one's recommendation names no
 * nats CLI edit. */
static void test_rate_limited_filtered(void) {
  world w;
  rate_world(&w);
  nl_stream_snap *s = add_stream(&w, "RL");
  nl_consumer_snap *c = add_consumer(&w, 0, "half");
  make_push(c, 8000);
  c->filtered = true;
  c->durable = false;
  int raised_at = -1;
  for (int i = 0; i < 60 && raised_at < 0; i++) {
    /* 100 stored, 50 of them the consumer's. */
    s->last_seq += 100;
    s->msgs = s->last_seq;
    s->bytes = s->msgs * STORED;
    c->num_pending += 50;
    uint64_t sent = LIMITED_OUT < c->num_pending ? LIMITED_OUT : c->num_pending;
    c->num_pending -= sent;
    c->delivered_consumer_seq += sent;
    c->delivered_stream_seq = s->last_seq - 2 * c->num_pending;
    c->ack_floor_stream_seq = c->delivered_stream_seq;
    world_poll(&w);
    if (active_for(&w, "RL", "half", NL_RATE_LIMITED))
      raised_at = i;
  }
  CHECK(raised_at >= 36 && raised_at <= 38);
  const nl_finding *f = &w.last[NL_RATE_LIMITED];
  CHECK(fabs(nl_finding_get(f, "incoming_per_s", 0) - 10) < 0.5);
  CHECK(strstr(f->recommendation, "ephemeral") != NULL);
  CHECK(strstr(f->recommendation, "nats consumer edit") == NULL);
  world_free(&w);
}

/* The look-alikes, each seen over ten minutes and silent: a rate-limited
 * consumer whose limit is above the incoming rate (sent at its limit while
 * a backlog of 3,000 drains); three fed by bursty publishers (one's
 * backlog grows for 30 s and drains to nothing; another's, from a
 * standing 1,000, rises in each burst and never empties, the average
 * below the limit; the third's grows for 120 s, two thirds of the window,
 * and then drains); one whose subscriber is slow (sent at a third of its
 * limit while its backlog grows); one held by max_ack_pending (sent at
 * the pace of its acks, which happens to be the limit's); a headers-only
 * one (its deliveries are far smaller than the stream's messages); a push
 * consumer without a limit that is slow. Each scenario is checked to have
 * happened. */
static void test_rate_limited_healthy_are_silent(void) {
  world w;
  rate_world(&w);
  const char *names[] = {"above",  "bursty", "burstbase", "slowsub",
                         "maxack", "hdrs",   "nolimit",   "longburst"};
  enum { N = 8 };
  nl_stream_snap *s[N];
  nl_consumer_snap *c[N];
  for (int k = 0; k < N; k++) {
    s[k] = add_stream(&w, names[k]);
    c[k] = add_consumer(&w, (size_t)k, "c");
    make_push(c[k], k == 6 ? 0 : 8000);
  }
  c[0]->rate_limit_bps = 24000;
  s[0]->last_seq = 3000;
  s[2]->last_seq = 1000;
  c[4]->max_ack_pending = 20;
  c[5]->headers_only = true;
  uint64_t burst_peak = 0, base_low = UINT64_MAX, base_high = 0;
  uint64_t slow_first = 0, long_peak = 0;
  for (int i = 0; i < 120; i++) {
    rate_step(s[0], c[0], 50, 94);
    /* 30 s of 20 msg/s, then 90 s of nothing: 5 msg/s on average. */
    rate_step(s[1], c[1], i % 24 < 6 ? 100 : 0, LIMITED_OUT);
    if (c[1]->num_pending > burst_peak)
      burst_peak = c[1]->num_pending;
    /* 20 s of 15 msg/s in each minute: 5 msg/s on average. */
    rate_step(s[2], c[2], i % 12 < 4 ? 75 : 0, LIMITED_OUT);
    if (c[2]->num_pending < base_low)
      base_low = c[2]->num_pending;
    if (i > 12 && c[2]->num_pending > base_high)
      base_high = c[2]->num_pending;
    rate_step(s[3], c[3], 50, 10);
    if (i == 0)
      slow_first = c[3]->num_pending;
    rate_step(s[4], c[4], 50, LIMITED_OUT);
    c[4]->num_ack_pending = 20;
    rate_step(s[5], c[5], 50, LIMITED_OUT);
    rate_step(s[6], c[6], 50, 10);
    /* 15 msg/s for 120 s, then nothing. */
    rate_step(s[7], c[7], i < 24 ? 75 : 0, LIMITED_OUT);
    if (c[7]->num_pending > long_peak)
      long_peak = c[7]->num_pending;
    world_poll(&w);
  }
  CHECK_EQ_U(w.onsets[NL_RATE_LIMITED], 0);
  /* The scenarios: the limit above drained its backlog; the bursts built
   * backlogs (drained each time, stood throughout, drained after two
   * minutes); the others fell behind. */
  CHECK(c[0]->num_pending == 0 && c[0]->delivered_stream_seq == 9000);
  CHECK(burst_peak >= 300 && c[1]->num_pending == 0);
  CHECK(base_low > 0 && base_high > base_low + 100);
  CHECK(c[3]->num_pending > slow_first + 4000);
  CHECK(c[4]->num_pending > 2000 && c[5]->num_pending > 2000 &&
        c[6]->num_pending > 4000);
  CHECK(long_peak > 1000 && c[7]->num_pending == 0);
  world_free(&w);
}

/* Behind means by at least 5 % of the arrivals and at least one message:
 * a consumer at its limit with 3 % more arriving than it is sent (the
 * bytes of a delivery are an estimate) and one draining a standing
 * backlog of 3,000 at its limit with nothing arriving are silent over five
 * minutes; one with 9 % more arriving is raised. */
static void test_rate_limited_behind_margin(void) {
  world w;
  rate_world(&w);
  const char *names[] = {"near", "drain", "over"};
  nl_stream_snap *s[3];
  nl_consumer_snap *c[3];
  for (int k = 0; k < 3; k++) {
    s[k] = add_stream(&w, names[k]);
    c[k] = add_consumer(&w, (size_t)k, "c");
    make_push(c[k], 8000);
  }
  s[1]->last_seq = 3000;
  for (int i = 0; i < 60; i++) {
    rate_step(s[0], c[0], LIMITED_OUT + 1, LIMITED_OUT);
    rate_step(s[1], c[1], 0, LIMITED_OUT);
    rate_step(s[2], c[2], LIMITED_OUT + 3, LIMITED_OUT);
    world_poll(&w);
  }
  /* The scenarios, each sent at its limit throughout: near's backlog grew
   * by 60, drain's fell by 1,860. */
  CHECK(c[0]->num_pending == 60 && c[1]->num_pending == 3000 - 60 * 31);
  CHECK(!active_for(&w, "near", "c", NL_RATE_LIMITED));
  CHECK(!active_for(&w, "drain", "c", NL_RATE_LIMITED));
  CHECK(active_for(&w, "over", "c", NL_RATE_LIMITED));
  CHECK_EQ_U(w.onsets[NL_RATE_LIMITED], 1);
  world_free(&w);
}

/* The window is in polls too: polled every minute, a consumer held by its
 * limit is raised once 6 polls after the window's first are seen (6
 * minutes), not after the 180 s of the window alone. */
static void test_rate_limited_window_in_polls(void) {
  world w;
  world_init(&w, true);
  w.step_ns = 60 * SEC;
  nl_stream_snap *s = add_stream(&w, "RL");
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  make_push(c, 8000);
  int raised_at = -1;
  for (int i = 0; i < 10 && raised_at < 0; i++) {
    rate_step(s, c, 600, 12 * LIMITED_OUT);
    world_poll(&w);
    if (active_for(&w, "RL", "slow", NL_RATE_LIMITED))
      raised_at = i;
  }
  CHECK_EQ_U(raised_at, 6);
  world_free(&w);
}

/* Once raised, a poll without a subscriber (a client reconnecting) does
 * not clear it: one onset. When the publisher slows below the limit the
 * backlog drains and the finding clears after the clearing hold, once. */
static void test_rate_limited_holds_and_clears(void) {
  world w;
  rate_world(&w);
  nl_stream_snap *s = add_stream(&w, "RL");
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  make_push(c, 8000);
  for (int i = 0; i < 40; i++) {
    rate_step(s, c, 50, LIMITED_OUT);
    world_poll(&w);
  }
  CHECK(active_for(&w, "RL", "slow", NL_RATE_LIMITED));
  c->push_bound = false;
  rate_step(s, c, 50, 0);
  world_poll(&w);
  c->push_bound = true;
  for (int i = 0; i < 10; i++) {
    rate_step(s, c, 50, LIMITED_OUT);
    world_poll(&w);
  }
  CHECK(active_for(&w, "RL", "slow", NL_RATE_LIMITED));
  CHECK_EQ_U(w.onsets[NL_RATE_LIMITED], 1);
  CHECK_EQ_U(w.clears[NL_RATE_LIMITED], 0);
  /* 3 msg/s: the backlog drains at the limit. */
  int polls = 0;
  while (active_for(&w, "RL", "slow", NL_RATE_LIMITED) && polls < 40) {
    rate_step(s, c, 15, LIMITED_OUT);
    world_poll(&w);
    polls++;
  }
  CHECK(polls >= 6 && polls < 40);
  for (int i = 0; i < 40; i++) {
    rate_step(s, c, 15, LIMITED_OUT);
    world_poll(&w);
  }
  CHECK_EQ_U(w.onsets[NL_RATE_LIMITED], 1);
  CHECK_EQ_U(w.clears[NL_RATE_LIMITED], 1);
  world_free(&w);
}

/* The bytes a delivery costs the limit, against a delivery measured on
 * nats-server 2.9.10 to 2.12.0: stream RL (file) with 200 messages of 100
 * bytes on subject rl.x (26,800 bytes stored), consumer push having
 * delivered 20 of them with 179 pending: the server counts rl.x, the reply
 * subject $JS.ACK.RL.push.1.21.21.<19 digits>.179 and the payload, 151
 * bytes. In a memory stream the record adds 16 bytes, not 30. */
static void test_rate_bytes_per_delivery(void) {
  nl_stream_snap s = {.name = "RL", .msgs = 200, .bytes = 26800};
  nl_consumer_snap c = {.stream = "RL", .name = "push"};
  c.delivered_stream_seq = 20;
  c.delivered_consumer_seq = 20;
  c.num_pending = 179;
  CHECK(nl_rate_bytes_per_delivery(&c, &s) == 151);
  s.memory_storage = true;
  s.bytes = 200 * (4 + 100 + 16);
  CHECK(nl_rate_bytes_per_delivery(&c, &s) == 151);
  s.msgs = 0;
  CHECK(nl_rate_bytes_per_delivery(&c, &s) == 0);
}

static const nl_test_case tests[] = {
    NL_TEST(test_rate_limited_raised_and_fixed),
    NL_TEST(test_rate_limited_filtered),
    NL_TEST(test_rate_limited_healthy_are_silent),
    NL_TEST(test_rate_limited_holds_and_clears),
    NL_TEST(test_rate_limited_window_in_polls),
    NL_TEST(test_rate_limited_behind_margin),
    NL_TEST(test_rate_bytes_per_delivery),
};

NL_TEST_MAIN(tests)
