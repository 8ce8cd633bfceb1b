/* test_class_messages_skipped.c: MESSAGES_SKIPPED
 * (plugin/core/detect/nl_messages_skipped.c) at the boundaries of its rule
 * (docs/detectors.md, MESSAGES_SKIPPED).
 *
 * Every case is one stream S and a consumer C whose first incarnation is
 * polled five times a second apart, reading `pace` messages a poll (each
 * acked at once) while `pub` are published, with `backlog` unread from the
 * start; then C is created again under its name, between two polls or
 * after polls that no longer listed it, starting where the case says, and
 * polled. The predecessor may have gone on acknowledging after its latest
 * poll, up to twice its fastest pace for as long as it may have lived on
 * (NL_SKIPPED_PACE_FACTOR): a start at that margin above its ack floor
 * skips nothing, one above skips one. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

#define MS 1000000LL

/* The scene: the world, its stream and the consumer's current
 * incarnation. */
typedef struct {
  world w;
  nl_stream_snap *s;
  nl_consumer_snap *c;
  uint64_t pace, pub;
  uint64_t floor; /* The predecessor's ack floor at its latest poll. */
} scene;

/* Starts a scene: S holding backlog messages, C created now, then five
 * polls of C reading pace and pub published before each. */
static void scene_start(scene *k, uint64_t backlog, uint64_t pace,
                        uint64_t pub) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, false);
  k->s = add_stream(&k->w, "S");
  k->s->first_seq = 1;
  k->s->last_seq = backlog;
  k->s->msgs = backlog;
  k->s->created_ns = 1500000000LL * SEC;
  k->c = add_consumer(&k->w, 0, "C");
  k->c->created_ns = k->w.t;
  k->c->deliver_policy = NL_DELIVER_ALL;
  k->c->num_pending = backlog;
  k->pace = pace;
  k->pub = pub;
  for (int i = 0; i < 5; i++) {
    k->s->last_seq += pub;
    k->s->msgs += pub;
    uint64_t d = k->c->delivered_stream_seq + pace;
    if (d > k->s->last_seq)
      d = k->s->last_seq;
    k->c->delivered_consumer_seq += d - k->c->delivered_stream_seq;
    k->c->delivered_stream_seq = d;
    k->c->ack_floor_stream_seq = d;
    k->c->ack_floor_consumer_seq = k->c->delivered_consumer_seq;
    k->c->ack_last_ns = k->w.t - 100 * MS;
    k->c->num_pending = k->s->last_seq - d;
    world_poll(&k->w);
  }
  k->floor = k->c->ack_floor_stream_seq;
}

/* Makes C gone for `absent` polls (0: none), publishing pub before each,
 * then creates it again with deliver policy `policy` starting after
 * stream sequence `after` (opt_start_seq after + 1 for by_start_sequence),
 * having delivered and acked `delivered` messages since, and polls it. */
static void recreate(scene *k, int absent, nl_deliver_policy policy,
                     uint64_t after, uint64_t delivered) {
  nl_consumer_snap keep = *k->c;
  for (int i = 0; i < absent; i++) {
    k->w.n_consumers = 0;
    k->s->consumer_count = 0;
    k->s->last_seq += k->pub;
    k->s->msgs += k->pub;
    world_poll(&k->w);
  }
  k->w.n_consumers = 1;
  k->s->consumer_count = 1;
  *k->c = keep;
  k->c->created_ns = k->w.t - 100 * MS;
  k->c->deliver_policy = policy;
  k->c->opt_start_seq = policy == NL_DELIVER_BY_START_SEQUENCE ? after + 1 : 0;
  k->c->delivered_stream_seq = after + delivered;
  k->c->delivered_consumer_seq = delivered;
  /* The server reports an ack floor of 0 until the first ack. */
  k->c->ack_floor_stream_seq = delivered > 0 ? after + delivered : 0;
  k->c->ack_floor_consumer_seq = delivered;
  k->c->num_pending = k->s->last_seq > after + delivered
                          ? k->s->last_seq - (after + delivered)
                          : 0;
  world_poll(&k->w);
}

static nl_consumer_state *state_of(scene *k) {
  return nl_registry_find(nl_engine_registry(k->w.engine), "S", "C");
}

static bool skipped(scene *k) {
  return active_for(&k->w, "S", "C", NL_MESSAGES_SKIPPED);
}

static double evidence(scene *k, const char *name) {
  return nl_finding_get(&k->w.last[NL_MESSAGES_SKIPPED], name, -1);
}

/* The predecessor read 10 a poll; created again between two polls (the
 * first poll of the new one a second after the last of the old, no server
 * time): the margin is 2 x 10 x 1 s = 20 above its floor. */
static void test_skipped_margin(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  CHECK_EQ_U(k.floor, 50);
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, k.floor + 20, 0);
  CHECK(state_of(&k)->prior != NULL && state_of(&k)->prior->judged);
  CHECK(!skipped(&k));
  CHECK_EQ_U(state_of(&k)->skipped_total, 0);
  world_free(&k.w);

  scene_start(&k, 100, 10, 10);
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, k.floor + 21, 0);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 1);
  CHECK_EQ_U(evidence(&k, "first_skipped_seq"), 71);
  CHECK_EQ_U(evidence(&k, "last_skipped_seq"), 71);
  CHECK_EQ_U(evidence(&k, "predecessor_ack_floor"), 50);
  CHECK_EQ_U(evidence(&k, "start_seq"), 72);
  CHECK_EQ_U(state_of(&k)->skipped_total, 1);
  world_free(&k.w);
}

/* By its policy, once it delivered: by_start_sequence starts at
 * opt_start_seq; deliver new at the stream's end, after the predecessor's
 * latest poll; an unfiltered one no lower than delivered.stream_seq less
 * its deliveries. */
static void test_skipped_start_bounds(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, 71, 30);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 1);
  world_free(&k.w);

  /* The same without the policy saying where: by its deliveries, 101 -
   * 30 = 71 still. */
  scene_start(&k, 100, 10, 10);
  recreate(&k, 0, NL_DELIVER_BY_START_TIME, 71, 30);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "last_skipped_seq"), 71);
  world_free(&k.w);

  /* ... one delivery more says it may have started at 70: nothing. */
  scene_start(&k, 100, 10, 10);
  recreate(&k, 0, NL_DELIVER_BY_START_TIME, 70, 31);
  CHECK(!skipped(&k));
  world_free(&k.w);
}

/* Deliver new on a backlog: the predecessor's 100 unread and the
 * published since are skipped; counted as a lower bound (the range above
 * the margin: 150 - 70 = 80); the fix creates it again at 71. */
static void test_skipped_deliver_new(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  CHECK_EQ_U(k.s->last_seq, 150);
  recreate(&k, 0, NL_DELIVER_NEW, 150, 0);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 80);
  CHECK_EQ_U(evidence(&k, "still_stored"), 1);
  CHECK(strcmp(k.w.last[NL_MESSAGES_SKIPPED].fix_command,
               "nats consumer rm S C -f && nats consumer add S C --pull "
               "--ack explicit --deliver 71 --wait 30s --max-pending 1000 "
               "--defaults") == 0);
  world_free(&k.w);

  /* Having delivered 40 since, deliver new still starts at 150 or
   * later. */
  scene_start(&k, 100, 10, 10);
  recreate(&k, 0, NL_DELIVER_NEW, 150, 40);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 80);
  world_free(&k.w);
}

/* The healthy redeploys: at the floor, deliver all, no predecessor. */
static void test_skipped_healthy_redeploys(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, k.floor, 25);
  CHECK(!skipped(&k));
  CHECK(state_of(&k)->prior->judged);
  world_free(&k.w);

  /* Deliver all: it starts at the stream's first message. */
  scene_start(&k, 100, 10, 10);
  k.s->first_seq = 120;
  recreate(&k, 0, NL_DELIVER_ALL, 119, 0);
  CHECK(!skipped(&k));
  world_free(&k.w);

  /* A new consumer at new messages with no predecessor. */
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "S");
  s->last_seq = s->msgs = 500;
  nl_consumer_snap *c = add_consumer(&w, 0, "C");
  c->deliver_policy = NL_DELIVER_NEW;
  c->delivered_stream_seq = 500;
  world_poll(&w);
  world_poll(&w);
  CHECK(!active_for(&w, "S", "C", NL_MESSAGES_SKIPPED));
  world_free(&w);
}

/* Not a reader of the same messages, or a work queue, or a stream created
 * again: no predecessor to compare with. */
static void test_skipped_not_comparable(void) {
  static char *filter[] = {"s.a"};
  for (int v = 0; v < 6; v++) {
    scene k;
    scene_start(&k, 100, 10, 10);
    if (v == 1) {
      k.c->filters = filter;
      k.c->n_filters = 1;
      k.c->filtered = true;
    }
    if (v == 2)
      k.c->ack_policy = NL_ACK_NONE;
    if (v == 3)
      k.s->created_ns += 10 * SEC;
    if (v == 4)
      k.s->retention = NL_RETENTION_WORKQUEUE;
    recreate(&k, 0, v == 5 ? NL_DELIVER_LAST_PER_SUBJECT : NL_DELIVER_NEW, 150,
             0);
    if (v == 0)
      CHECK(skipped(&k)); /* The control. */
    else if (skipped(&k)) {
      nl_test_failures++;
      fprintf(stderr, "  variant %d raised\n", v);
    }
    k.c->filters = NULL;
    k.c->n_filters = 0;
    world_free(&k.w);
  }
}

/* Gone for three polls, then created again at new messages: found from
 * the stream's departures, its margin from the poll that first missed it
 * (2 x 10 x 1 s); 30 more published meanwhile. Judged once: the
 * departure is taken. */
static void test_skipped_departed(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  recreate(&k, 3, NL_DELIVER_NEW, 180, 0);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 110);
  CHECK_EQ_U(evidence(&k, "first_skipped_seq"), 71);
  CHECK_EQ_U(evidence(&k, "last_skipped_seq"), 180);
  /* Gone and created again once more at its own floor: nothing skipped,
   * and the count starts again with the consumer's new state. */
  recreate(&k, 2, NL_DELIVER_BY_START_SEQUENCE, 180, 0);
  CHECK(!skipped(&k));
  CHECK_EQ_U(state_of(&k)->skipped_total, 0);
  world_free(&k.w);
}

/* A departure is kept NL_DEPARTED_HOLD_NS (24 h). */
static void test_skipped_departure_kept_a_day(void) {
  for (int late = 0; late < 2; late++) {
    scene k;
    scene_start(&k, 100, 10, 0);
    k.w.step_ns = 600 * SEC;
    /* Absent for 143 polls of 10 min: created again 24 h less 10 min
     * after the poll that missed it; one poll more: 24 h. */
    recreate(&k, 143 + late, NL_DELIVER_NEW, 150, 0);
    if (skipped(&k) != !late) {
      nl_test_failures++;
      fprintf(stderr, "  late %d: skipped %d\n", late, skipped(&k));
    }
    world_free(&k.w);
  }
}

/* A filtered predecessor: its outstanding messages (100 unread), less
 * what it may have delivered before it ended (2 x 10 x 1 s). */
static void test_skipped_filtered(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  char *f[] = {"s.a"};
  k.c->filters = f;
  k.c->n_filters = 1;
  k.c->filtered = true;
  world_poll(&k.w);
  recreate(&k, 0, NL_DELIVER_NEW, 150, 0);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 80);
  if (strstr(k.w.last[NL_MESSAGES_SKIPPED].fix_command, " --filter 's.a'") ==
      NULL) {
    nl_test_failures++;
    fprintf(stderr, "  fix: %s\n", k.w.last[NL_MESSAGES_SKIPPED].fix_command);
  }
  /* Started before the predecessor's end of stream: how many of the range
   * match is not known, nothing is counted. */
  scene_start(&k, 100, 10, 10);
  k.c->filters = f;
  k.c->n_filters = 1;
  k.c->filtered = true;
  world_poll(&k.w);
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, 140, 0);
  CHECK(!skipped(&k));
  k.c->filters = NULL;
  k.c->n_filters = 0;
  world_free(&k.w);
}

/* Messages the stream deleted in between may lie in the range: the count
 * is less by num_deleted, and nothing when that covers it. */
static void test_skipped_num_deleted(void) {
  scene k;
  scene_start(&k, 100, 10, 10);
  k.s->num_deleted = 5;
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, 80, 0);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "skipped"), 5);
  world_free(&k.w);

  scene_start(&k, 100, 10, 10);
  k.s->num_deleted = 10;
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, 80, 0);
  CHECK(!skipped(&k));
  world_free(&k.w);
}

/* The server's time of the poll tells when the new one was created: 0.1 s
 * after the old one's latest poll, a margin of 2 x 10 x 0.1 = 2. */
static void test_skipped_server_clock(void) {
  for (uint64_t above = 2; above <= 3; above++) {
    scene k;
    scene_start(&k, 100, 10, 10);
    nl_consumer_snap keep = *k.c;
    int64_t last_poll = k.w.t - SEC;
    *k.c = keep;
    k.c->created_ns = last_poll + 100 * MS;
    k.c->server_ts_ns = k.w.t;
    k.c->deliver_policy = NL_DELIVER_BY_START_SEQUENCE;
    k.c->opt_start_seq = k.floor + above + 1;
    k.c->delivered_stream_seq = k.floor + above;
    k.c->delivered_consumer_seq = 0;
    k.c->ack_floor_stream_seq = k.floor + above;
    k.c->ack_floor_consumer_seq = 0;
    world_poll(&k.w);
    CHECK(skipped(&k) == (above == 3));
    world_free(&k.w);
  }
}

/* Held for NL_SKIPPED_HOLD_NS (1 h) unless created again; created again
 * at the first skipped message, it clears at once (a new configuration)
 * and the count stays. */
static void test_skipped_hold_and_fix(void) {
  scene k;
  scene_start(&k, 100, 10, 0);
  recreate(&k, 0, NL_DELIVER_NEW, 100, 0);
  CHECK(skipped(&k));
  uint64_t first = (uint64_t)evidence(&k, "first_skipped_seq");
  recreate(&k, 0, NL_DELIVER_BY_START_SEQUENCE, first - 1, 0);
  CHECK(!skipped(&k));
  CHECK_EQ_U(k.w.clears[NL_MESSAGES_SKIPPED], 1);
  CHECK_EQ_U(state_of(&k)->skipped_total, 30);
  world_free(&k.w);

  scene_start(&k, 100, 10, 0);
  recreate(&k, 0, NL_DELIVER_NEW, 100, 0);
  k.w.step_ns = 60 * SEC;
  for (int i = 0; i < 59; i++)
    world_poll(&k.w);
  CHECK(skipped(&k)); /* 59 min after. */
  k.w.step_ns = SEC;
  int polls = world_polls_to_clear(&k.w, "S", "C", NL_MESSAGES_SKIPPED, 200);
  CHECK(!skipped(&k));
  CHECK(polls > 30 && polls < 120);
  world_free(&k.w);
}

/* No longer stored (the stream's first sequence passed them): no fix
 * command, and the description says so. A push consumer gets none
 * either. */
static void test_skipped_fix_only_when_stored(void) {
  scene k;
  scene_start(&k, 100, 10, 0);
  k.s->first_seq = 101;
  recreate(&k, 0, NL_DELIVER_NEW, 100, 0);
  CHECK(skipped(&k));
  CHECK_EQ_U(evidence(&k, "still_stored"), 0);
  CHECK(k.w.last[NL_MESSAGES_SKIPPED].fix_command[0] == '\0');
  world_free(&k.w);

  scene_start(&k, 100, 10, 0);
  k.c->push = true;
  recreate(&k, 0, NL_DELIVER_NEW, 100, 0);
  CHECK(skipped(&k));
  CHECK(k.w.last[NL_MESSAGES_SKIPPED].fix_command[0] == '\0');
  world_free(&k.w);
}

/* Judged once per incarnation: a server restoring older state (delivered
 * going back, the same creation time) resets the history, and nothing is
 * counted again. */
static void test_skipped_judged_once(void) {
  scene k;
  scene_start(&k, 100, 10, 0);
  recreate(&k, 0, NL_DELIVER_NEW, 100, 20);
  CHECK_EQ_U(state_of(&k)->skipped_total, 30);
  k.c->delivered_consumer_seq = 5;
  k.c->delivered_stream_seq = 105;
  world_poll(&k.w);
  CHECK_EQ_U(state_of(&k)->resets, 2);
  CHECK_EQ_U(state_of(&k)->skipped_total, 30);
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_skipped_margin),
    NL_TEST(test_skipped_start_bounds),
    NL_TEST(test_skipped_deliver_new),
    NL_TEST(test_skipped_healthy_redeploys),
    NL_TEST(test_skipped_not_comparable),
    NL_TEST(test_skipped_departed),
    NL_TEST(test_skipped_departure_kept_a_day),
    NL_TEST(test_skipped_filtered),
    NL_TEST(test_skipped_num_deleted),
    NL_TEST(test_skipped_server_clock),
    NL_TEST(test_skipped_hold_and_fix),
    NL_TEST(test_skipped_fix_only_when_stored),
    NL_TEST(test_skipped_judged_once),
};

NL_TEST_MAIN(tests)
