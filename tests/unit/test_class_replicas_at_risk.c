/* test_class_replicas_at_risk.c: STREAM_REPLICAS_AT_RISK and
 * CONSUMER_REPLICAS_AT_RISK (plugin/core/detect/nl_replicas_at_risk.c) at
 * the boundaries of their rule (docs/detectors.md), with the default grace
 * (ReplicaGraceSeconds, 30 s) and 1 s polls.
 *
 * Every case is one clustered stream S (R3 unless it says otherwise) led
 * by n1 with replicas n2 and n3, and one consumer C of it with the same
 * group; the case changes what the replies say of the replicas. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  world w;
  nl_stream_snap *s;
  nl_consumer_snap *c;
} scene;

/* Sets group g to size-1 current replicas n2, n3, ... with a leader. */
static void healthy(nl_replica_set *g, int size) {
  memset(g, 0, sizeof(*g));
  g->clustered = true;
  for (int i = 0; i < size - 1; i++) {
    snprintf(g->peers[i].name, sizeof(g->peers[i].name), "n%d", i + 2);
    g->peers[i].current = true;
    g->peers[i].active_ns = SEC / 2;
  }
  g->n = (size_t)(size - 1);
}

static void scene_start(scene *k, int size) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, false);
  k->s = add_stream(&k->w, "S");
  k->s->replicas = size;
  k->s->cluster = "NL";
  k->s->created_ns = 1600000000LL * SEC;
  healthy(&k->s->group, size);
  k->c = add_consumer(&k->w, 0, "C");
  healthy(&k->c->group, size);
  world_poll(&k->w);
}

/* Replica i of g (0: n2) is behind: offline or not, last heard active_s
 * seconds ago, lag operations behind. */
static void behind(nl_replica_set *g, size_t i, bool offline, double active_s,
                   uint64_t lag) {
  g->peers[i].current = false;
  g->peers[i].offline = offline;
  g->peers[i].active_ns = (int64_t)(active_s * SEC);
  g->peers[i].lag = lag;
}

static bool stream_risk(scene *k) {
  return active_for(&k->w, "S", "", NL_STREAM_REPLICAS_AT_RISK);
}

static bool consumer_risk(scene *k) {
  return active_for(&k->w, "S", "C", NL_CONSUMER_REPLICAS_AT_RISK);
}

static double ev(scene *k, nl_class cls, const char *name) {
  return nl_finding_get(&k->w.last[cls], name, -1);
}

/* Polls while n2 of the stream stays not current, heard from half a
 * second ago (a follower behind, not a lost server): returns the polls
 * until the stream's finding is raised (-1: not within max). */
static int polls_to_raise(scene *k, int max) {
  for (int i = 1; i <= max; i++) {
    behind(&k->s->group, 0, false, 0.5, 40);
    world_poll(&k->w);
    if (stream_risk(k))
      return i;
  }
  return -1;
}

/* A follower not current, heard from lately: our own polls date its onset
 * (the first poll that saw it behind). After 29 s silent, at 30 s raised
 * (the 31st poll), a warning with the counts; held; cleared once current
 * again, after the clearing hold. */
static void test_replicas_grace_own_polls(void) {
  scene k;
  scene_start(&k, 3);
  CHECK_EQ_U(polls_to_raise(&k, 100), 31);
  nl_finding *f = &k.w.last[NL_STREAM_REPLICAS_AT_RISK];
  CHECK(f->severity == NL_SEVERITY_WARNING);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas"), 3);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "current_copies"), 2);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "quorum"), 2);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "failures_to_stop"), 1);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas_behind"), 1);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas_offline"), 0);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "max_lag"), 40);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "behind_s"), 30);
  CHECK(strstr(f->description, "n2 (not current, 40 operations behind") !=
        NULL);
  CHECK(f->fix_command[0] == '\0');
  CHECK(strstr(f->recommendation, "peer-remove S") != NULL);
  CHECK_EQ_U(k.w.onsets[NL_STREAM_REPLICAS_AT_RISK], 1);
  for (int i = 0; i < 20; i++) {
    behind(&k.s->group, 0, false, 0.5, 40);
    world_poll(&k.w);
  }
  CHECK(stream_risk(&k));
  CHECK_EQ_U(k.w.onsets[NL_STREAM_REPLICAS_AT_RISK], 1);
  healthy(&k.s->group, 3);
  int n = world_polls_to_clear(&k.w, "S", "", NL_STREAM_REPLICAS_AT_RISK, 100);
  CHECK(n > 0 && n < 100);
  CHECK_EQ_U(k.w.clears[NL_STREAM_REPLICAS_AT_RISK], 1);
  world_free(&k.w);
}

/* The leader's "active" dates the onset of a replica it has not heard
 * from: 29 s silent, 30 s and 31 s raised at the first poll that sees
 * them (a server down before collectd started). */
static void test_replicas_grace_server_active(void) {
  const double active[] = {29, 30, 31};
  const bool raised[] = {false, true, true};
  for (int i = 0; i < 3; i++) {
    scene k;
    scene_start(&k, 3);
    behind(&k.s->group, 1, true, active[i], 0);
    world_poll(&k.w);
    CHECK(stream_risk(&k) == raised[i]);
    if (raised[i]) {
      CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas_offline"), 1);
      CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "behind_s"), active[i]);
      CHECK(strstr(k.w.last[NL_STREAM_REPLICAS_AT_RISK].description,
                   "n3 (offline") != NULL);
    }
    world_free(&k.w);
  }
}

/* A busy follower not current on every other poll, for 200 s: each
 * current poll starts its onset again, so it is never reported. */
static void test_replicas_flicker_silent(void) {
  scene k;
  scene_start(&k, 3);
  for (int i = 0; i < 200; i++) {
    if (i % 2 == 0)
      behind(&k.s->group, 0, false, 0.2, 3);
    else
      healthy(&k.s->group, 3);
    world_poll(&k.w);
  }
  CHECK_EQ_U(k.w.onsets[NL_STREAM_REPLICAS_AT_RISK], 0);
  world_free(&k.w);
}

/* The quorum, exactly: R3 with both replicas lost keeps 1 current copy of
 * a quorum of 2 (critical, failures_to_stop 0); R5 with two lost keeps 3
 * of 3 (a warning, 1 more stops it); R5 with three lost, critical. */
static void test_replicas_quorum(void) {
  struct {
    int size, lost;
    nl_severity sev;
    unsigned current, quorum, more;
  } rows[] = {
      {3, 2, NL_SEVERITY_CRITICAL, 1, 2, 0},
      {5, 2, NL_SEVERITY_WARNING, 3, 3, 1},
      {5, 3, NL_SEVERITY_CRITICAL, 2, 3, 0},
      {5, 1, NL_SEVERITY_WARNING, 4, 3, 2},
  };
  for (size_t r = 0; r < sizeof(rows) / sizeof(*rows); r++) {
    scene k;
    scene_start(&k, rows[r].size);
    for (int i = 0; i < rows[r].lost; i++)
      behind(&k.s->group, (size_t)i, true, 60, 0);
    world_poll(&k.w);
    CHECK(stream_risk(&k));
    nl_finding *f = &k.w.last[NL_STREAM_REPLICAS_AT_RISK];
    CHECK(f->severity == rows[r].sev);
    CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "current_copies"),
               rows[r].current);
    CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "quorum"), rows[r].quorum);
    CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "failures_to_stop"),
               rows[r].more);
    CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas_behind"),
               rows[r].lost);
    world_free(&k.w);
  }
}

/* No leader (an election): 29 s silent though its replies list every
 * peer as long unheard (a member's old view), 30 s critical; a leader
 * elected clears it. */
static void test_replicas_no_leader(void) {
  scene k;
  scene_start(&k, 3);
  int raised_at = -1;
  for (int i = 1; i <= 40 && raised_at < 0; i++) {
    healthy(&k.s->group, 3);
    k.s->group.no_leader = k.s->no_leader = true;
    snprintf(k.s->group.peers[2].name, sizeof(k.s->group.peers[2].name), "n1");
    k.s->group.n = 3;
    for (size_t p = 0; p < 3; p++)
      behind(&k.s->group, p, false, 300, 0);
    world_poll(&k.w);
    if (stream_risk(&k))
      raised_at = i;
  }
  CHECK_EQ_U(raised_at, 31);
  nl_finding *f = &k.w.last[NL_STREAM_REPLICAS_AT_RISK];
  CHECK(f->severity == NL_SEVERITY_CRITICAL);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "no_leader"), 1);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "leaderless_s"), 30);
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas_behind"), 0);
  CHECK(strstr(f->description, "no leader for 30 s") != NULL);
  k.s->no_leader = false;
  healthy(&k.s->group, 3);
  int n = world_polls_to_clear(&k.w, "S", "", NL_STREAM_REPLICAS_AT_RISK, 100);
  CHECK(n > 0 && n < 100);
  world_free(&k.w);
}

/* Elections of 5 s every 10 s for 200 s: each leader starts the count
 * again, never reported. */
static void test_replicas_elections_silent(void) {
  scene k;
  scene_start(&k, 3);
  for (int i = 0; i < 200; i++) {
    healthy(&k.s->group, 3);
    k.s->group.no_leader = i % 10 < 5;
    world_poll(&k.w);
  }
  CHECK_EQ_U(k.w.onsets[NL_STREAM_REPLICAS_AT_RISK], 0);
  world_free(&k.w);
}

/* After a reset: the stream created again forgets the onset it kept (n2
 * behind for 20 s before, then 29 s after: silent; 30 s after: raised). */
static void test_replicas_recreated_resets(void) {
  scene k;
  scene_start(&k, 3);
  CHECK_EQ_U(polls_to_raise(&k, 20), -1);
  k.s->created_ns += 3600 * SEC;
  CHECK_EQ_U(polls_to_raise(&k, 100), 31);
  world_free(&k.w);
}

/* Not in a cluster, an R1 stream of a cluster with its leader, and a
 * replica replaced by a current one: silent. */
static void test_replicas_silent_shapes(void) {
  scene k;
  scene_start(&k, 3);
  memset(&k.s->group, 0, sizeof(k.s->group));
  memset(&k.c->group, 0, sizeof(k.c->group));
  for (int i = 0; i < 60; i++)
    world_poll(&k.w);
  healthy(&k.s->group, 1);
  healthy(&k.c->group, 1);
  k.s->replicas = 1;
  for (int i = 0; i < 60; i++)
    world_poll(&k.w);
  k.s->replicas = 3;
  healthy(&k.s->group, 3);
  for (int i = 0; i < 20; i++) {
    behind(&k.s->group, 0, false, 0.5, 0);
    world_poll(&k.w);
  }
  snprintf(k.s->group.peers[0].name, sizeof(k.s->group.peers[0].name), "n4");
  k.s->group.peers[0].current = true;
  for (int i = 0; i < 60; i++)
    world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_STREAM_REPLICAS_AT_RISK], 0);
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_REPLICAS_AT_RISK], 0);
  world_free(&k.w);
}

/* The consumer's group (num_replicas 0: the stream's 3): its replica n3
 * offline for 40 s is reported at once, a warning naming the consumer;
 * the stream's group, healthy, is not; created again (a new incarnation)
 * with n3 behind only by our polls, silent for 29 s. */
static void test_replicas_consumer(void) {
  scene k;
  scene_start(&k, 3);
  behind(&k.c->group, 1, true, 40, 7);
  world_poll(&k.w);
  CHECK(consumer_risk(&k));
  CHECK(!stream_risk(&k));
  nl_finding *f = &k.w.last[NL_CONSUMER_REPLICAS_AT_RISK];
  CHECK(f->severity == NL_SEVERITY_WARNING);
  CHECK_EQ_U(ev(&k, NL_CONSUMER_REPLICAS_AT_RISK, "replicas"), 3);
  CHECK_EQ_U(ev(&k, NL_CONSUMER_REPLICAS_AT_RISK, "current_copies"), 2);
  CHECK_EQ_U(ev(&k, NL_CONSUMER_REPLICAS_AT_RISK, "max_lag"), 7);
  CHECK(strstr(f->description, "consumer C of stream S") != NULL);
  healthy(&k.c->group, 3);
  int n =
      world_polls_to_clear(&k.w, "S", "C", NL_CONSUMER_REPLICAS_AT_RISK, 100);
  CHECK(n > 0 && n < 100);
  int onsets = k.w.onsets[NL_CONSUMER_REPLICAS_AT_RISK];
  for (int i = 0; i < 20; i++) {
    behind(&k.c->group, 1, false, 0.5, 7);
    world_poll(&k.w);
  }
  k.c->created_ns += 3600 * SEC;
  for (int i = 0; i < 30; i++) {
    behind(&k.c->group, 1, false, 0.5, 7);
    world_poll(&k.w);
  }
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_REPLICAS_AT_RISK], onsets);
  behind(&k.c->group, 1, false, 0.5, 7);
  world_poll(&k.w);
  CHECK_EQ_U(k.w.onsets[NL_CONSUMER_REPLICAS_AT_RISK], onsets + 1);
  world_free(&k.w);
}

/* A replica its leader still calls current but whose server is known to
 * be offline (2.9.10 and later may report both): behind, reported once
 * the leader has not heard from it for the grace. */
static void test_replicas_offline_current(void) {
  scene k;
  scene_start(&k, 3);
  k.s->group.peers[0].offline = true;
  k.s->group.peers[0].active_ns = 40 * SEC;
  world_poll(&k.w);
  CHECK(stream_risk(&k));
  CHECK_EQ_U(ev(&k, NL_STREAM_REPLICAS_AT_RISK, "replicas_offline"), 1);
  world_free(&k.w);
}

/* The configured count rules when the reply lists fewer peers: a
 * consumer inheriting the stream's 3 whose group lists only n2, behind,
 * has 3 replicas, 1 current copy: critical. */
static void test_replicas_configured_count(void) {
  scene k;
  scene_start(&k, 3);
  k.c->group.n = 1;
  behind(&k.c->group, 0, true, 40, 0);
  world_poll(&k.w);
  CHECK(consumer_risk(&k));
  CHECK_EQ_U(ev(&k, NL_CONSUMER_REPLICAS_AT_RISK, "replicas"), 3);
  CHECK_EQ_U(ev(&k, NL_CONSUMER_REPLICAS_AT_RISK, "current_copies"), 1);
  CHECK(k.w.last[NL_CONSUMER_REPLICAS_AT_RISK].severity ==
        NL_SEVERITY_CRITICAL);
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_replicas_grace_own_polls),
    NL_TEST(test_replicas_grace_server_active),
    NL_TEST(test_replicas_flicker_silent),
    NL_TEST(test_replicas_quorum),
    NL_TEST(test_replicas_no_leader),
    NL_TEST(test_replicas_elections_silent),
    NL_TEST(test_replicas_recreated_resets),
    NL_TEST(test_replicas_silent_shapes),
    NL_TEST(test_replicas_consumer),
    NL_TEST(test_replicas_offline_current),
    NL_TEST(test_replicas_configured_count),
};

NL_TEST_MAIN(tests)
