/* test_class_consumer_past_stream.c: CONSUMER_PAST_STREAM
 * (plugin/core/detect/nl_consumer_past_stream.c) at the boundaries of its
 * rule (docs/detectors.md, CONSUMER_PAST_STREAM): the delivered position
 * at the poll before, and the one now, both beyond the stream's last
 * sequence now, on two polls in a row whose replies name a leader.
 *
 * Every case is one stream S and a pull consumer C that delivered and
 * acked 100 of the stream's 100 messages, polled a second apart; then the
 * stream goes back (its last sequence falls, as when a server lost its
 * messages) or the consumer moves, as the case says. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  world w;
  nl_stream_snap *s;
  nl_consumer_snap *c;
} scene;

static void scene_start(scene *k) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, false);
  k->s = add_stream(&k->w, "S");
  k->s->last_seq = k->s->msgs = 100;
  k->c = add_consumer(&k->w, 0, "C");
  k->c->delivered_consumer_seq = k->c->delivered_stream_seq = 100;
  k->c->ack_floor_consumer_seq = k->c->ack_floor_stream_seq = 100;
  world_poll(&k->w);
  world_poll(&k->w);
}

/* The stream now holds sequences first..last. */
static void stream_at(scene *k, uint64_t first, uint64_t last) {
  k->s->first_seq = first;
  k->s->last_seq = last;
  k->s->msgs = last >= first ? last - first + 1 : 0;
}

static bool raised(scene *k) {
  return active_for(&k->w, "S", "C", NL_CONSUMER_PAST_STREAM);
}

static double evidence(scene *k, const char *name) {
  return nl_finding_get(&k->w.last[NL_CONSUMER_PAST_STREAM], name, -1);
}

/* Last sequence 99 (one below what was delivered): raised on the second
 * poll that shows it. At 100 (equal): silent. */
static void test_past_boundary(void) {
  scene k;
  scene_start(&k);
  stream_at(&k, 1, 100);
  world_poll(&k.w);
  CHECK(!raised(&k));
  world_free(&k.w);

  scene_start(&k);
  stream_at(&k, 1, 99);
  world_poll(&k.w);
  CHECK(!raised(&k));
  world_poll(&k.w);
  CHECK(raised(&k));
  CHECK_EQ_U(evidence(&k, "will_not_deliver"), 1);
  CHECK_EQ_U(evidence(&k, "stream_last_seq"), 99);
  CHECK_EQ_U(evidence(&k, "delivered_stream_seq"), 100);
  world_free(&k.w);
}

/* A server lost the stream's messages: it starts again from 0. Found at
 * once, with what the consumer will not deliver. Another time the server
 * took messages 1-7 before the poll and a limit removed 1-2: the fix
 * creates it again at the stream's first sequence (3), not past it. */
static void test_past_data_lost(void) {
  scene k;
  scene_start(&k);
  stream_at(&k, 0, 0);
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK(raised(&k));
  CHECK_EQ_U(evidence(&k, "will_not_deliver"), 100);
  stream_at(&k, 1, 5);
  world_poll(&k.w);
  CHECK(raised(&k));
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_PAST_STREAM], 1);
  world_free(&k.w);

  scene_start(&k);
  stream_at(&k, 3, 7);
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK(raised(&k));
  CHECK_EQ_U(evidence(&k, "will_not_deliver"), 93);
  if (strstr(k.w.last[NL_CONSUMER_PAST_STREAM].fix_command, "--deliver 3 ") ==
      NULL)
    fprintf(stderr, "  fix: %s\n",
            k.w.last[NL_CONSUMER_PAST_STREAM].fix_command);
  CHECK(strcmp(k.w.last[NL_CONSUMER_PAST_STREAM].fix_command,
               "nats consumer rm S C -f && nats consumer add S C --pull "
               "--ack explicit --deliver 3 --wait 30s --max-pending 1000 "
               "--defaults") == 0);
  world_free(&k.w);
}

/* The poll's skew: the consumer delivers a message published after the
 * stream's reply (its position one above the stream's last sequence at
 * this poll, not at the poll before): silent; the next poll's stream
 * counts it. */
static void test_past_skew_silent(void) {
  scene k;
  scene_start(&k);
  for (int i = 0; i < 5; i++) {
    k.c->delivered_stream_seq = k.c->delivered_consumer_seq = k.s->last_seq + 1;
    world_poll(&k.w);
    stream_at(&k, 1, k.s->last_seq + 2);
  }
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_PAST_STREAM], 0);
  world_free(&k.w);
}

/* Created again (a new incarnation), or first seen, past the stream: not
 * judged on its first poll, raised on the next one. */
static void test_past_new_incarnation(void) {
  scene k;
  scene_start(&k);
  stream_at(&k, 0, 0);
  k.c->created_ns = k.w.t - SEC / 2;
  world_poll(&k.w);
  CHECK(!raised(&k));
  world_poll(&k.w);
  CHECK(!raised(&k));
  world_poll(&k.w);
  CHECK(raised(&k));
  world_free(&k.w);
}

/* A reply that names no leader (a quorum lost) showing the stream empty,
 * even on several polls: silent; one reply with a leader showing it empty
 * between two that do not: silent. */
static void test_past_no_leader_silent(void) {
  scene k;
  scene_start(&k);
  k.s->cluster = (char *)"C";
  world_poll(&k.w);
  k.s->no_leader = true;
  stream_at(&k, 0, 0);
  for (int i = 0; i < 5; i++)
    world_poll(&k.w);
  k.s->no_leader = false;
  world_poll(&k.w);
  stream_at(&k, 1, 100);
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_PAST_STREAM], 0);
  CHECK_EQ_U(k.w.onsets[NL_STREAM_WENT_BACK], 0);
  world_free(&k.w);
}

/* Clears once the stream passes the consumer's position (the messages up
 * to it are lost to it), or at once when the consumer is created again
 * at the stream's first sequence (the fix). */
static void test_past_clears(void) {
  scene k;
  scene_start(&k);
  stream_at(&k, 1, 5);
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK(raised(&k));
  stream_at(&k, 1, 101);
  int n = world_polls_to_clear(&k.w, "S", "C", NL_CONSUMER_PAST_STREAM, 100);
  CHECK(n > 0 && n < 100);
  world_free(&k.w);

  scene_start(&k);
  stream_at(&k, 1, 5);
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK(raised(&k));
  k.c->created_ns = k.w.t - SEC / 2;
  k.c->delivered_stream_seq = 0;
  k.c->delivered_consumer_seq = 0;
  k.c->ack_floor_stream_seq = k.c->ack_floor_consumer_seq = 0;
  world_poll(&k.w);
  CHECK(!raised(&k));
  CHECK_EQ_U(k.w.clears[NL_CONSUMER_PAST_STREAM], 1);
  world_free(&k.w);
}

/* A push consumer, or one with several filters: no command to create it
 * again (the recommendation says how). */
static void test_past_no_fix_for_push(void) {
  scene k;
  scene_start(&k);
  k.c->push = true;
  stream_at(&k, 1, 5);
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK(raised(&k));
  CHECK(k.w.last[NL_CONSUMER_PAST_STREAM].fix_command[0] == '\0');
  world_free(&k.w);
}

static bool went_back(scene *k) {
  return active_for(&k->w, "S", NULL, NL_STREAM_WENT_BACK);
}

/* The last sequence at 100 again: silent; one lower: raised, with the
 * messages lost; held an hour, then cleared. */
static void test_went_back_boundary(void) {
  scene k;
  scene_start(&k);
  k.s->created_ns = 1500000000LL * SEC;
  world_poll(&k.w);
  stream_at(&k, 1, 100);
  world_poll(&k.w);
  CHECK(!went_back(&k));
  stream_at(&k, 1, 99);
  world_poll(&k.w);
  CHECK(!went_back(&k));
  world_poll(&k.w);
  CHECK(went_back(&k));
  CHECK_EQ_U(nl_finding_get(&k.w.last[NL_STREAM_WENT_BACK], "msgs_lost", -1),
             1);
  CHECK_EQ_U(
      nl_finding_get(&k.w.last[NL_STREAM_WENT_BACK], "last_seq_before", -1),
      100);
  CHECK(k.w.last[NL_STREAM_WENT_BACK].fix_command[0] == '\0');
  /* Held while the stream goes on (the consumer past it clears once the
   * stream passes it), cleared after an hour. */
  k.c->delivered_stream_seq = k.c->ack_floor_stream_seq = 99;
  k.w.step_ns = 60 * SEC;
  int n = world_polls_to_clear(&k.w, "S", NULL, NL_STREAM_WENT_BACK, 200);
  CHECK(n >= 59 && n <= 62);
  CHECK_EQ_U(k.w.onsets[NL_STREAM_WENT_BACK], 1);
  world_free(&k.w);
}

/* Created again under its name (a new creation time), or first seen low:
 * no fall. */
static void test_went_back_recreated_silent(void) {
  scene k;
  scene_start(&k);
  k.s->created_ns = 1500000000LL * SEC;
  world_poll(&k.w);
  k.s->created_ns = 1600000000LL * SEC;
  stream_at(&k, 0, 0);
  k.w.n_consumers = 0;
  world_poll(&k.w);
  world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_STREAM_WENT_BACK], 0);
  world_free(&k.w);
}

/* The scene with S replicated (3 replicas in cluster C), polled once
 * more, then showing itself empty (as from a poll before the first that
 * shows it so). */
static void replicated_start(scene *k) {
  scene_start(k);
  k->s->cluster = (char *)"C";
  k->s->replicas = 3;
  k->s->created_ns = 1500000000LL * SEC;
  world_poll(&k->w);
  stream_at(k, 0, 0);
}

/* A replicated stream (3 replicas) that shows itself empty under its
 * consumer, as a server answering while it recovers from a quorum loss
 * may: believed only after a minute of it. Polls a second apart: at 59 s
 * after the first such poll both classes are silent, at 60 s both are
 * raised. The same showing for 30 s and then the stream back where it
 * was: silent throughout, and after. */
static void test_past_replicated_waits(void) {
  scene k;
  replicated_start(&k);
  for (int i = 0; i < 60; i++) /* The first such poll, then 59 s. */
    world_poll(&k.w);
  CHECK(!raised(&k));
  CHECK(!went_back(&k));
  world_poll(&k.w); /* 60 s. */
  CHECK(raised(&k));
  CHECK(went_back(&k));
  CHECK_EQ_U(
      nl_finding_get(&k.w.last[NL_STREAM_WENT_BACK], "last_seq_before", -1),
      100);
  world_free(&k.w);

  replicated_start(&k);
  for (int i = 0; i < 30; i++)
    world_poll(&k.w);
  stream_at(&k, 1, 100);
  for (int i = 0; i < 90; i++)
    world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_PAST_STREAM], 0);
  CHECK_EQ_U(k.w.onsets[NL_STREAM_WENT_BACK], 0);
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_went_back_boundary),
    NL_TEST(test_went_back_recreated_silent),
    NL_TEST(test_past_boundary),
    NL_TEST(test_past_data_lost),
    NL_TEST(test_past_skew_silent),
    NL_TEST(test_past_new_incarnation),
    NL_TEST(test_past_clears),
    NL_TEST(test_past_no_fix_for_push),
    NL_TEST(test_past_no_leader_silent),
    NL_TEST(test_past_replicated_waits),
};

NL_TEST_MAIN(tests)
