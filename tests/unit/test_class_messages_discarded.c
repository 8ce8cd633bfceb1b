/* test_class_messages_discarded.c: MESSAGES_DISCARDED
 * (plugin/core/detect/nl_messages_discarded.c) and the count of messages
 * removed from the middle of a consumer's unread range (nl_history's
 * interior estimate) at the boundaries of their rules (docs/detectors.md,
 * MESSAGES_DISCARDED).
 *
 * Every case is one limits stream S and a consumer C that wants every
 * message (deliver all, explicit ack), polled a second apart: before each
 * poll `pub` messages are published, C receives and acks `pace`, and the
 * stream removes `rm` of C's unread messages from the middle of the
 * stream (num_deleted rises by `rm`, or by `rise` when a case sets it).
 * The count is what the polls prove: added + pending before - pending
 * after - delivered, less a margin of 2 + a quarter of the added, capped
 * by the rise of num_deleted. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  world w;
  nl_stream_snap *s;
  nl_consumer_snap *c;
  uint64_t pending;   /* C's true num_pending. */
  uint64_t redeliver; /* Redeliveries in each interval. */
} scene;

/* S holds 100 unread messages on a key-value-like stream (one message per
 * subject) and C has been polled once. */
static void scene_start(scene *k) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, false);
  k->s = add_stream(&k->w, "S");
  k->s->last_seq = 100;
  k->s->msgs = 100;
  k->s->max_msgs_per_subject = 1;
  k->c = add_consumer(&k->w, 0, "C");
  k->c->deliver_policy = NL_DELIVER_ALL;
  k->c->num_pending = k->pending = 100;
  world_poll(&k->w);
}

/* One interval: pub published, pace received and acked, rm unread removed
 * from the middle (num_deleted rises by rise), pending off by skew (the
 * replies' changed delay), then a poll. */
static void step(scene *k, uint64_t pub, uint64_t pace, uint64_t rm,
                 uint64_t rise, int64_t skew) {
  k->s->last_seq += pub;
  k->s->msgs += pub - rm;
  k->s->num_deleted += rise;
  k->c->delivered_stream_seq += pace;
  k->c->delivered_consumer_seq += pace + k->redeliver;
  k->c->ack_floor_stream_seq = k->c->delivered_stream_seq;
  k->c->ack_floor_consumer_seq = k->c->delivered_consumer_seq;
  k->pending = k->pending + pub - pace - rm;
  k->c->num_pending = (uint64_t)((int64_t)k->pending + skew);
  world_poll(&k->w);
}

static nl_consumer_state *state_of(scene *k) {
  return nl_registry_find(nl_engine_registry(k->w.engine), "S", "C");
}

static bool raised(scene *k, nl_class cls) {
  return active_for(&k->w, "S", "C", cls);
}

/* 40 published: the margin is 2 + 10 = 12; 12 removed proves nothing, 13
 * proves one. */
static void test_discarded_margin(void) {
  scene k;
  scene_start(&k);
  step(&k, 40, 10, 12, 12, 0);
  CHECK(!raised(&k, NL_MESSAGES_DISCARDED));
  CHECK(!raised(&k, NL_SEQUENCE_GAP));
  CHECK_EQ_U(state_of(&k)->discarded_total, 0);
  world_free(&k.w);

  scene_start(&k);
  k.s->max_msgs_per_subject = 10;
  step(&k, 40, 10, 13, 13, 0);
  CHECK(raised(&k, NL_MESSAGES_DISCARDED));
  CHECK(!raised(&k, NL_SEQUENCE_GAP));
  CHECK_EQ_U(state_of(&k)->discarded_total, 1);
  CHECK_EQ_U(state_of(&k)->lost_total, 0);
  CHECK_EQ_U(nl_finding_get(&k.w.last[NL_MESSAGES_DISCARDED],
                            "discarded_since_last_poll", -1),
             1);
  /* The limit 10 plus 1 lost is less than double: double. */
  CHECK(strcmp(k.w.last[NL_MESSAGES_DISCARDED].fix_command,
               "nats stream edit S --max-msgs-per-subject 20") == 0);
  world_free(&k.w);

  /* Redeliveries raise delivered.consumer_seq beyond the new deliveries:
   * the smaller rise (the stream sequence's) is what was delivered.
   * 40 added, 10 delivered (and 5 redelivered), 20 removed: 20 - 12. */
  scene_start(&k);
  k.redeliver = 5;
  step(&k, 40, 10, 20, 20, 0);
  CHECK_EQ_U(state_of(&k)->discarded_total, 8);
  world_free(&k.w);
}

/* The rise of num_deleted caps the count: what the counts alone suggest
 * (the replies' delay changed) is no removal when nothing was deleted. */
static void test_discarded_capped_by_deleted(void) {
  scene k;
  scene_start(&k);
  step(&k, 40, 0, 0, 0, -30);
  CHECK(!raised(&k, NL_MESSAGES_DISCARDED));
  CHECK_EQ_U(state_of(&k)->discarded_total, 0);
  CHECK_EQ_U(state_of(&k)->lost_total, 0);
  step(&k, 40, 0, 0, 5, -60);
  CHECK(raised(&k, NL_MESSAGES_DISCARDED));
  CHECK_EQ_U(state_of(&k)->discarded_total, 5);
  world_free(&k.w);
}

/* Cumulative over intervals, the fix sized by the total, and cleared by
 * the clearing hold once the removals stop (the total stays). */
static void test_discarded_total_and_clear(void) {
  scene k;
  scene_start(&k);
  step(&k, 40, 10, 32, 32, 0);
  /* The fix at the onset: the limit 1 plus the 20 lost. */
  CHECK(strcmp(k.w.last[NL_MESSAGES_DISCARDED].fix_command,
               "nats stream edit S --max-msgs-per-subject 21") == 0);
  step(&k, 40, 10, 32, 32, 0);
  step(&k, 40, 10, 32, 32, 0);
  CHECK_EQ_U(state_of(&k)->discarded_total, 60);
  CHECK_EQ_U(k.w.onsets[NL_MESSAGES_DISCARDED], 1);
  int n = 0;
  while (raised(&k, NL_MESSAGES_DISCARDED) && n++ < 200)
    step(&k, 40, 40, 0, 40, 0);
  CHECK(n > 0 && n < 200);
  CHECK_EQ_U(k.w.clears[NL_MESSAGES_DISCARDED], 1);
  CHECK_EQ_U(state_of(&k)->discarded_total, 60);
  world_free(&k.w);
}

/* A consumer that keeps up while the stream replaces what it acked, with
 * the replies' delay shifting 10 messages (a quarter of the 40 added, the
 * margin less two) from one interval to the next and back: silent. */
static void test_keeping_up_silent(void) {
  scene k;
  scene_start(&k);
  step(&k, 0, 80, 0, 0, 0);
  for (int i = 0; i < 30; i++)
    step(&k, 40, 40, 0, 40, i % 2 == 0 ? -5 : 5);
  CHECK(state_of(&k)->count >= 3);
  CHECK_EQ_U(state_of(&k)->discarded_total, 0);
  CHECK_EQ_U(state_of(&k)->lost_total, 0);
  CHECK_EQ_U(k.w.onsets[NL_MESSAGES_DISCARDED], 0);
  CHECK_EQ_U(k.w.onsets[NL_SEQUENCE_GAP], 0);
  world_free(&k.w);
}

/* Consumers that want only the newest per subject, or do not ack, lose
 * nothing by a replacement; a filtered consumer and a work queue or
 * interest stream are not counted this way (their removals are design or
 * not bounded by the stream's counts). The removals happened (the same
 * steps raise for C as first configured). */
static void test_not_wanting_every_silent(void) {
  for (int v = 0; v < 5; v++) {
    scene k;
    scene_start(&k);
    if (v == 0)
      k.c->deliver_policy = NL_DELIVER_LAST_PER_SUBJECT;
    else if (v == 1)
      k.c->ack_policy = NL_ACK_NONE;
    else if (v == 2)
      k.c->filtered = true;
    else if (v == 3)
      k.s->retention = NL_RETENTION_WORKQUEUE;
    else
      k.s->retention = NL_RETENTION_INTEREST;
    step(&k, 40, 10, 30, 30, 0);
    step(&k, 40, 10, 30, 30, 0);
    CHECK(state_of(&k)->count == 3);
    if (raised(&k, NL_MESSAGES_DISCARDED) || raised(&k, NL_SEQUENCE_GAP))
      fprintf(stderr, "  variant %d raised\n", v);
    CHECK(!raised(&k, NL_MESSAGES_DISCARDED));
    CHECK(!raised(&k, NL_SEQUENCE_GAP));
    CHECK_EQ_U(state_of(&k)->discarded_total, 0);
    world_free(&k.w);
  }
}

/* A message's own TTL: raised with no fix command. A removal no design
 * explains (no per-subject limit, no TTL: a delete) is a loss, which
 * SEQUENCE_GAP reports instead. */
static void test_cause(void) {
  scene k;
  scene_start(&k);
  k.s->max_msgs_per_subject = -1;
  k.s->allow_msg_ttl = true;
  step(&k, 40, 10, 20, 20, 0);
  CHECK(raised(&k, NL_MESSAGES_DISCARDED));
  CHECK(k.w.last[NL_MESSAGES_DISCARDED].fix_command[0] == '\0');
  CHECK(strstr(k.w.last[NL_MESSAGES_DISCARDED].description, "TTL") != NULL);
  world_free(&k.w);

  scene_start(&k);
  k.s->max_msgs_per_subject = -1;
  step(&k, 40, 10, 20, 20, 0);
  CHECK(!raised(&k, NL_MESSAGES_DISCARDED));
  CHECK(raised(&k, NL_SEQUENCE_GAP));
  CHECK_EQ_U(state_of(&k)->lost_total, 8);
  CHECK_EQ_U(state_of(&k)->discarded_total, 0);
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_discarded_margin),
    NL_TEST(test_discarded_capped_by_deleted),
    NL_TEST(test_discarded_total_and_clear),
    NL_TEST(test_keeping_up_silent),
    NL_TEST(test_not_wanting_every_silent),
    NL_TEST(test_cause),
};

NL_TEST_MAIN(tests)
