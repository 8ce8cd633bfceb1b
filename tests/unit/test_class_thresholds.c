/* test_class_thresholds.c: CONSUMER_THRESHOLD and STREAM_THRESHOLD
 * (plugin/core/detect/nl_thresholds.c) and the reading of natscli's
 * io.nats.monitor.* metadata (plugin/core/model/nl_monitor.c), at the
 * boundaries of natscli's comparisons (docs/detectors.md, the table of
 * keys).
 *
 * Every threshold case is one stream S with a pull consumer C (and an
 * unannotated twin T with the same counts): the key is set as metadata,
 * one number of the stream or consumer is set to the case's value, and the
 * world is polled three times (a finding needs two polls in a row). */
#include "nl_test.h"
#include "nl_world.h"

#include "core/model/nl_monitor.h"
#include "core/model/nl_parse.h"

#include <stdio.h>
#include <string.h>

/* The number a case sets. */
typedef enum {
  F_ACK_PENDING,
  F_WAITING,
  F_PENDING,
  F_REDELIVERED,
  F_DELIVERY_AGE_S, /* Seconds since the last delivery. */
  F_ACK_AGE_S,      /* Seconds since the last ack. */
  F_MSGS,
  F_SUBJECTS,
  F_LAG,           /* Of the stream's one source. */
  F_ACTIVE_S,      /* Seconds since the source was heard from. */
  F_SOURCES,       /* Sources that report. */
  F_PEER_LAG,      /* Operations the first peer of the group is behind. */
  F_PEER_ACTIVE_S, /* Seconds since the leader heard from the second. */
  F_PEERS,         /* The leader and the peers listed. */
  F_PEER_OFFLINE,  /* Peers offline. */
} field;

typedef struct {
  const char *name;
  const char *key; /* Without the prefix. */
  const char *value;
  field f;
  int64_t n;
  int sev; /* 0: silent, else the finding's severity. */
  /* A value back on the right side, where a raised finding clears (-1:
   * none, it stays: a malformed value, or natscli's warning below a lone
   * subjects-critical). */
  int64_t ok;
} row;

#define W NL_SEVERITY_WARNING
#define C NL_SEVERITY_CRITICAL

/* Every honoured key at, just below and just above its boundary (for the
 * minimums, msgs-*, at, above and below). */
static const row rows[] = {
    {"ack at", "outstanding-ack-critical", "5", F_ACK_PENDING, 5, C, 0},
    {"ack below", "outstanding-ack-critical", "5", F_ACK_PENDING, 4, 0, -1},
    {"ack above", "outstanding-ack-critical", "5", F_ACK_PENDING, 6, C, 0},
    {"ack 0 is off", "outstanding-ack-critical", "0", F_ACK_PENDING, 6, 0, -1},
    {"ack negative is off", "outstanding-ack-critical", "-1", F_ACK_PENDING, 6,
     0, -1},
    {"waiting at", "waiting-critical", "+3", F_WAITING, 3, C, 2},
    {"waiting below", "waiting-critical", "3", F_WAITING, 2, 0, -1},
    {"waiting above", "waiting-critical", "3", F_WAITING, 4, C, 0},
    {"pending at", "unprocessed-critical", "100", F_PENDING, 100, C, 99},
    {"pending below", "unprocessed-critical", "100", F_PENDING, 99, 0, -1},
    {"pending above", "unprocessed-critical", "100", F_PENDING, 101, C, 0},
    {"redelivered at", "redelivery-critical", "2", F_REDELIVERED, 2, C, 1},
    {"redelivered below", "redelivery-critical", "2", F_REDELIVERED, 1, 0, -1},
    {"redelivered above", "redelivery-critical", "2", F_REDELIVERED, 3, C, 0},
    {"delivery age at", "last-delivery-critical", "1m", F_DELIVERY_AGE_S, 60, C,
     59},
    {"delivery age below", "last-delivery-critical", "1m", F_DELIVERY_AGE_S, 59,
     0, -1},
    {"delivery age above", "last-delivery-critical", "1m", F_DELIVERY_AGE_S, 61,
     C, 0},
    {"ack age at", "last-ack-critical", "1h30m", F_ACK_AGE_S, 5400, C, 5399},
    {"ack age below", "last-ack-critical", "1h30m", F_ACK_AGE_S, 5399, 0, -1},
    {"ack age above", "last-ack-critical", "1h30m", F_ACK_AGE_S, 5401, C, 0},
    {"ack age days", "last-ack-critical", "1d", F_ACK_AGE_S, 86400, C, 0},
    {"ack age days below", "last-ack-critical", "1d", F_ACK_AGE_S, 86399, 0,
     -1},
    {"msgs critical at", "msgs-critical", "500", F_MSGS, 500, C, 501},
    {"msgs critical above", "msgs-critical", "500", F_MSGS, 501, 0, -1},
    {"msgs critical below", "msgs-critical", "500", F_MSGS, 499, C, 1000},
    {"msgs warn at", "msgs-warn", "500", F_MSGS, 500, W, 501},
    {"msgs warn above", "msgs-warn", "500", F_MSGS, 501, 0, -1},
    {"msgs warn below", "msgs-warn", "500", F_MSGS, 499, W, 1000},
    {"msgs 0 is off", "msgs-warn", "0", F_MSGS, 0, 0, -1},
    /* One subject key alone: natscli counts the other as 0. */
    {"subjects critical alone at", "subjects-critical", "10", F_SUBJECTS, 10, C,
     -1},
    {"subjects critical alone below", "subjects-critical", "10", F_SUBJECTS, 9,
     W, -1},
    {"subjects warn alone at", "subjects-warn", "10", F_SUBJECTS, 10, W, 11},
    {"subjects warn alone above", "subjects-warn", "10", F_SUBJECTS, 11, 0, -1},
    {"subjects warn alone none", "subjects-warn", "10", F_SUBJECTS, 0, C, 11},
    {"lag at", "lag-critical", "100", F_LAG, 100, C, 99},
    {"lag below", "lag-critical", "100", F_LAG, 99, 0, -1},
    {"lag above", "lag-critical", "100", F_LAG, 101, C, 0},
    {"seen at", "seen-critical", "30s", F_ACTIVE_S, 30, C, 29},
    {"seen below", "seen-critical", "30s", F_ACTIVE_S, 29, 0, -1},
    {"seen above", "seen-critical", "30s", F_ACTIVE_S, 31, C, 1},
    {"min sources at", "min-sources", "2", F_SOURCES, 2, 0, -1},
    {"min sources below", "min-sources", "2", F_SOURCES, 1, C, 2},
    {"min sources above", "min-sources", "2", F_SOURCES, 3, 0, -1},
    {"max sources at", "max-sources", "2", F_SOURCES, 2, 0, -1},
    {"max sources below", "max-sources", "2", F_SOURCES, 1, 0, -1},
    {"max sources above", "max-sources", "2", F_SOURCES, 3, C, 2},
    /* The stream's Raft group (3 replicas): natscli compares lag and
     * seen strictly (above), the peer count exactly; offline is critical
     * whichever key asked for the check. */
    {"peer lag at", "peer-lag-critical", "100", F_PEER_LAG, 100, 0, -1},
    {"peer lag below", "peer-lag-critical", "100", F_PEER_LAG, 99, 0, -1},
    {"peer lag above", "peer-lag-critical", "100", F_PEER_LAG, 101, C, 100},
    {"peer seen at", "peer-seen-critical", "30s", F_PEER_ACTIVE_S, 30, 0, -1},
    {"peer seen below", "peer-seen-critical", "30s", F_PEER_ACTIVE_S, 29, 0,
     -1},
    {"peer seen above", "peer-seen-critical", "30s", F_PEER_ACTIVE_S, 31, C,
     30},
    {"peer expect at", "peer-expect", "3", F_PEERS, 3, 0, -1},
    {"peer expect below", "peer-expect", "3", F_PEERS, 2, C, 3},
    {"peer expect above", "peer-expect", "3", F_PEERS, 4, C, 3},
    {"peer offline", "peer-expect", "3", F_PEER_OFFLINE, 1, C, 0},
    {"peer none offline", "peer-expect", "3", F_PEER_OFFLINE, 0, 0, -1},
    {"peer offline by lag key", "peer-lag-critical", "100", F_PEER_OFFLINE, 1,
     C, 0},
    /* Malformed values: a warning naming the key, never a threshold. */
    {"ack malformed", "outstanding-ack-critical", "5x", F_ACK_PENDING, 6, W,
     -1},
    {"ack decimal", "outstanding-ack-critical", "5.0", F_ACK_PENDING, 6, W, -1},
    {"delivery bare number", "last-delivery-critical", "60", F_DELIVERY_AGE_S,
     61, W, -1},
    {"msgs negative", "msgs-critical", "-1", F_MSGS, 0, W, -1},
    {"subjects malformed", "subjects-warn", "ten", F_SUBJECTS, 0, W, -1},
    {"lag malformed", "lag-critical", "", F_LAG, 1000, W, -1},
    {"seen malformed", "seen-critical", "30 s", F_ACTIVE_S, 1000, W, -1},
    {"sources malformed", "min-sources", "2 ", F_SOURCES, 0, W, -1},
    {"peer lag malformed", "peer-lag-critical", "1e3", F_PEER_LAG, 5000, W, -1},
    {"peer expect malformed", "peer-expect", "three", F_PEERS, 2, W, -1},
};

static bool is_stream_field(field f) { return f >= F_MSGS; }

typedef struct {
  world w;
  nl_stream_snap *s;
  nl_consumer_snap *c, *twin;
  nl_source_link links[3];
} scene;

/* S with consumer C and its unannotated twin T, polled at 1 s steps; the
 * stream has three sources, all reporting, none lagging. */
static void scene_start(scene *k) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, false);
  k->s = add_stream(&k->w, "S");
  k->s->last_seq = k->s->msgs = 1000;
  k->s->num_subjects = 50;
  static char *names[] = {"A", "B", "D"};
  for (int i = 0; i < 3; i++)
    k->links[i] = (nl_source_link){.name = names[i],
                                   .have_info = true,
                                   .active_ns = SEC,
                                   .key = (uint64_t)i + 1};
  k->s->links = k->links;
  k->s->n_links = 3;
  /* Three replicas: the leader and two current peers. */
  k->s->replicas = 3;
  k->s->group.clustered = true;
  k->s->group.n = 2;
  for (int i = 0; i < 2; i++)
    k->s->group.peers[i] =
        (nl_replica){.name = "n", .current = true, .active_ns = SEC};
  k->c = add_consumer(&k->w, 0, "C");
  k->twin = add_consumer(&k->w, 0, "T");
}

/* Sets field f of the scene to n, on C and T alike. */
static void set_field(scene *k, field f, int64_t n) {
  nl_consumer_snap *cs[] = {k->c, k->twin};
  for (int i = 0; i < 2; i++) {
    nl_consumer_snap *c = cs[i];
    switch (f) {
    case F_ACK_PENDING:
      c->num_ack_pending = (uint64_t)n;
      break;
    case F_WAITING:
      c->num_waiting = (uint64_t)n;
      break;
    case F_PENDING:
      c->num_pending = (uint64_t)n;
      break;
    case F_REDELIVERED:
      c->num_redelivered = (uint64_t)n;
      break;
    case F_DELIVERY_AGE_S:
      c->delivered_last_ns = k->w.t - n * SEC;
      break;
    case F_ACK_AGE_S:
      c->ack_last_ns = k->w.t - n * SEC;
      break;
    default:
      break;
    }
    /* Every other age is fresh. */
    if (f != F_DELIVERY_AGE_S)
      c->delivered_last_ns = k->w.t;
    if (f != F_ACK_AGE_S)
      c->ack_last_ns = k->w.t;
  }
  if (f == F_MSGS)
    k->s->msgs = (uint64_t)n;
  else if (f == F_SUBJECTS)
    k->s->num_subjects = (uint64_t)n;
  else if (f == F_LAG)
    k->links[0].lag = (uint64_t)n;
  else if (f == F_ACTIVE_S)
    k->links[1].active_ns = n * SEC;
  else if (f == F_SOURCES)
    for (int i = 0; i < 3; i++)
      k->links[i].have_info = i < n;
  else if (f == F_PEER_LAG)
    k->s->group.peers[0].lag = (uint64_t)n;
  else if (f == F_PEER_ACTIVE_S)
    k->s->group.peers[1].active_ns = n * SEC;
  else if (f == F_PEERS)
    k->s->group.n = (size_t)(n - 1);
  else if (f == F_PEER_OFFLINE)
    for (int i = 0; i < 2; i++)
      k->s->group.peers[i].offline = i < n;
}

/* Sets field f to n and polls once (ages are kept at their value). */
static void poll_at(scene *k, field f, int64_t n) {
  set_field(k, f, n);
  world_poll(&k->w);
}

static nl_class class_of(field f) {
  return is_stream_field(f) ? NL_STREAM_THRESHOLD : NL_CONSUMER_THRESHOLD;
}

static bool raised(scene *k, field f) {
  return active_for(&k->w, "S", "C", class_of(f));
}

/* Sets key=value on the case's object (C, or S). */
static void annotate(scene *k, field f, const char *key, const char *value) {
  char full[128];
  snprintf(full, sizeof(full), NL_MONITOR_PREFIX "%s", key);
  if (is_stream_field(f))
    CHECK(nl_stream_snap_set_meta(k->s, full, value) == 0);
  else
    CHECK(nl_consumer_snap_set_meta(k->c, full, value) == 0);
}

/* Each row: three polls at its value; raised (at its severity, naming its
 * key) or silent as it says; the twin silent; and a raised one clears
 * once back on the right side (after the clearing hold) and is raised
 * again when crossed again. */
static void test_rows(void) {
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    const row *r = &rows[i];
    scene k;
    scene_start(&k);
    annotate(&k, r->f, r->key, r->value);
    for (int p = 0; p < 3; p++)
      poll_at(&k, r->f, r->n);
    nl_class cls = class_of(r->f);
    bool on = raised(&k, r->f);
    if (on != (r->sev != 0) || (on && (int)k.w.last[cls].severity != r->sev) ||
        (on && strstr(k.w.last[cls].description, r->key) == NULL)) {
      nl_test_failures++;
      fprintf(stderr, "  row \"%s\": raised %d severity %d (%s), expected %d\n",
              r->name, on, on ? (int)k.w.last[cls].severity : 0,
              on ? k.w.last[cls].description : "", r->sev);
    }
    if (!is_stream_field(r->f))
      CHECK(!active_for(&k.w, "S", "T", cls));
    if (on && r->ok >= 0) {
      int polls = 0;
      while (raised(&k, r->f) && polls < 100) {
        poll_at(&k, r->f, r->ok);
        polls++;
      }
      CHECK(!raised(&k, r->f));
      CHECK(polls >= 2);
      for (int p = 0; p < 3; p++)
        poll_at(&k, r->f, r->n);
      if (!raised(&k, r->f) || k.w.onsets[cls] != 2) {
        nl_test_failures++;
        fprintf(stderr, "  row \"%s\": not raised again after a reset\n",
                r->name);
      }
    }
    world_free(&k.w);
  }
}

/* One poll at the threshold is not reported; the second in a row is. */
static void test_two_polls(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_ACK_PENDING, "outstanding-ack-critical", "5");
  poll_at(&k, F_ACK_PENDING, 5);
  CHECK(!raised(&k, F_ACK_PENDING));
  poll_at(&k, F_ACK_PENDING, 0);
  poll_at(&k, F_ACK_PENDING, 5);
  CHECK(!raised(&k, F_ACK_PENDING));
  poll_at(&k, F_ACK_PENDING, 5);
  CHECK(raised(&k, F_ACK_PENDING));
  CHECK_EQ_U(nl_finding_get(&k.w.last[NL_CONSUMER_THRESHOLD],
                            "outstanding_ack_critical", -1),
             5);
  CHECK_EQ_U(
      nl_finding_get(&k.w.last[NL_CONSUMER_THRESHOLD], "num_ack_pending", -1),
      5);
  CHECK(k.w.last[NL_CONSUMER_THRESHOLD].fix_command[0] == '\0');
  world_free(&k.w);
}

/* enabled=false turns every threshold off; enabled=true, or no enabled
 * key at all, leaves them on; an unreadable enabled is a warning. */
static void test_enabled(void) {
  static const struct {
    const char *enabled;
    int sev;
  } cases[] = {{"false", 0}, {"0", 0},  {"F", 0},  {"true", C},
               {"1", C},     {NULL, C}, {"yes", C}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    scene k;
    scene_start(&k);
    annotate(&k, F_PENDING, "unprocessed-critical", "10");
    if (cases[i].enabled != NULL)
      annotate(&k, F_PENDING, "enabled", cases[i].enabled);
    for (int p = 0; p < 3; p++)
      poll_at(&k, F_PENDING, 20);
    CHECK(raised(&k, F_PENDING) == (cases[i].sev != 0));
    if (cases[i].sev != 0)
      CHECK((int)k.w.last[NL_CONSUMER_THRESHOLD].severity == cases[i].sev);
    world_free(&k.w);
  }
}

/* A consumer key on a stream, and a stream key on a consumer, are not
 * read (natscli reads each scope's own keys): neither judged nor, when
 * malformed, reported. */
static void test_scope_keys(void) {
  scene k;
  scene_start(&k);
  CHECK(nl_stream_snap_set_meta(k.s, NL_MONITOR_PREFIX "unprocessed-critical",
                                "1") == 0);
  CHECK(nl_consumer_snap_set_meta(k.c, NL_MONITOR_PREFIX "msgs-critical",
                                  "5000") == 0);
  /* Not read, so not an unreadable value either. */
  CHECK(nl_consumer_snap_set_meta(k.c, NL_MONITOR_PREFIX "msgs-warn", "abc") ==
        0);
  nl_monitor m;
  nl_monitor_read(k.c->meta, k.c->n_meta, false, &m);
  CHECK(!m.v[NL_MON_MSGS_CRITICAL].set);
  CHECK(m.bad_key == NULL);
  for (int p = 0; p < 3; p++)
    poll_at(&k, F_PENDING, 20);
  CHECK(!raised(&k, F_PENDING));
  CHECK(!raised(&k, F_MSGS));
  world_free(&k.w);
}

/* A consumer that never delivered is judged from its creation time. */
static void test_never_delivered(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_DELIVERY_AGE_S, "last-delivery-critical", "1m");
  k.c->created_ns = k.w.t - 30 * SEC;
  for (int p = 0; p < 29; p++) {
    k.c->delivered_last_ns = 0;
    world_poll(&k.w);
  }
  CHECK(!raised(&k, F_DELIVERY_AGE_S));
  for (int p = 0; p < 3; p++) {
    k.c->delivered_last_ns = 0;
    world_poll(&k.w);
  }
  CHECK(raised(&k, F_DELIVERY_AGE_S));
  CHECK(strstr(k.w.last[NL_CONSUMER_THRESHOLD].description,
               "no delivery since") != NULL);
  world_free(&k.w);
}

/* Several keys crossed: one finding, the worst severity, every key told;
 * a malformed key beside a crossed one keeps the crossing critical. */
static void test_several(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_MSGS, "msgs-warn", "2000");
  annotate(&k, F_MSGS, "lag-critical", "10");
  annotate(&k, F_MSGS, "subjects-critical", "\x01zz");
  k.links[2].lag = 50;
  for (int p = 0; p < 3; p++)
    world_poll(&k.w);
  CHECK(raised(&k, F_MSGS));
  const nl_finding *f = &k.w.last[NL_STREAM_THRESHOLD];
  CHECK(f->severity == NL_SEVERITY_CRITICAL);
  CHECK(strstr(f->description, "msgs-warn=2000") != NULL);
  CHECK(strstr(f->description, "lag-critical=10") != NULL);
  CHECK(strstr(f->description, "subjects-critical=\"?zz\"") != NULL);
  CHECK_EQ_U(nl_finding_get(f, "max_lag", -1), 50);
  CHECK_EQ_U(nl_finding_get(f, "unreadable_subjects_critical", -1), 1);
  world_free(&k.w);
}

/* Upstream keys on a stream that copies from nothing, on a mirror that
 * reports no state, and on sources none of which reports: critical, as
 * natscli says. */
static void test_links_absent(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_LAG, "lag-critical", "100");
  k.s->n_links = 0;
  for (int p = 0; p < 3; p++)
    world_poll(&k.w);
  CHECK(raised(&k, F_LAG));
  CHECK(strstr(k.w.last[NL_STREAM_THRESHOLD].description, "neither") != NULL);
  world_free(&k.w);

  scene_start(&k);
  annotate(&k, F_ACTIVE_S, "seen-critical", "30s");
  k.s->is_mirror = true;
  k.s->n_links = 1;
  k.links[0].have_info = false;
  for (int p = 0; p < 3; p++)
    world_poll(&k.w);
  CHECK(raised(&k, F_ACTIVE_S));
  CHECK(strstr(k.w.last[NL_STREAM_THRESHOLD].description, "no state") != NULL);
  world_free(&k.w);

  /* Sources configured, none reporting: natscli finds it not mirrored. */
  scene_start(&k);
  annotate(&k, F_LAG, "lag-critical", "100");
  for (int i = 0; i < 3; i++)
    k.links[i].have_info = false;
  for (int p = 0; p < 3; p++)
    world_poll(&k.w);
  CHECK(raised(&k, F_LAG));
  CHECK(strstr(k.w.last[NL_STREAM_THRESHOLD].description,
               "none of its sources") != NULL);
  world_free(&k.w);
}

/* A peer key on a stream of one replica, or one not in a cluster:
 * critical, "not clustered", as natscli says. */
static void test_peers_not_clustered(void) {
  for (int clustered = 0; clustered < 2; clustered++) {
    scene k;
    scene_start(&k);
    annotate(&k, F_PEERS, "peer-lag-critical", "100");
    k.s->group.clustered = clustered;
    k.s->replicas = clustered ? 1 : 3;
    for (int p = 0; p < 3; p++)
      world_poll(&k.w);
    CHECK(raised(&k, F_PEERS));
    CHECK(strstr(k.w.last[NL_STREAM_THRESHOLD].description, "not clustered") !=
          NULL);
    world_free(&k.w);
  }
}

/* A reply without the stream's leader neither raises nor clears. */
static void test_no_leader(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_MSGS, "msgs-critical", "500");
  k.s->no_leader = true;
  for (int p = 0; p < 3; p++)
    poll_at(&k, F_MSGS, 10);
  CHECK(!raised(&k, F_MSGS));
  k.s->no_leader = false;
  for (int p = 0; p < 3; p++)
    poll_at(&k, F_MSGS, 10);
  CHECK(raised(&k, F_MSGS));
  k.s->no_leader = true;
  for (int p = 0; p < 60; p++)
    poll_at(&k, F_MSGS, 10000);
  CHECK(raised(&k, F_MSGS));
  world_free(&k.w);
}

/* The parse rules, one kind at a time: natscli's Go readers. */
static void test_parse(void) {
  static const struct {
    nl_monitor_kind kind;
    const char *text;
    int ok;
    int64_t n;
    uint64_t u;
  } cases[] = {
      {NL_MON_INT, "5", 1, 5, 0},
      {NL_MON_INT, "+5", 1, 5, 0},
      {NL_MON_INT, "-5", 1, -5, 0},
      {NL_MON_INT, "9223372036854775807", 1, INT64_MAX, 0},
      {NL_MON_INT, "-9223372036854775808", 1, INT64_MIN, 0},
      {NL_MON_INT, "9223372036854775808", 0, 0, 0},
      {NL_MON_INT, "", 0, 0, 0},
      {NL_MON_INT, "-", 0, 0, 0},
      {NL_MON_INT, " 5", 0, 0, 0},
      {NL_MON_INT, "5 ", 0, 0, 0},
      {NL_MON_INT, "1_000", 0, 0, 0},
      {NL_MON_UINT, "18446744073709551615", 1, 0, UINT64_MAX},
      {NL_MON_UINT, "18446744073709551616", 0, 0, 0},
      {NL_MON_UINT, "+5", 0, 0, 0},
      {NL_MON_UINT, "0", 1, 0, 0},
      {NL_MON_DURATION, "0", 1, 0, 0},
      {NL_MON_DURATION, "30s", 1, 30 * SEC, 0},
      {NL_MON_DURATION, " 30s ", 1, 30 * SEC, 0},
      {NL_MON_DURATION, "1h30m", 1, 5400 * SEC, 0},
      {NL_MON_DURATION, "1.5h", 1, 5400 * SEC, 0},
      {NL_MON_DURATION, "500ms", 1, SEC / 2, 0},
      {NL_MON_DURATION, "2w", 1, 14 * 86400 * SEC, 0},
      {NL_MON_DURATION, "1M", 1, 30 * 86400 * SEC, 0},
      {NL_MON_DURATION, "1y", 1, 365 * 86400 * SEC, 0},
      {NL_MON_DURATION, "1D", 1, 86400 * SEC, 0},
      {NL_MON_DURATION, "-5m", 1, -300 * SEC, 0},
      {NL_MON_DURATION, "30", 0, 0, 0},
      {NL_MON_DURATION, "5S", 0, 0, 0},
      {NL_MON_DURATION, "5 m", 0, 0, 0},
      {NL_MON_DURATION, "1..5s", 0, 0, 0},
      {NL_MON_DURATION, ".s", 0, 0, 0},
      {NL_MON_DURATION, "", 0, 0, 0},
      {NL_MON_DURATION, "300y", 0, 0, 0},
      {NL_MON_BOOL, "True", 1, 1, 0},
      {NL_MON_BOOL, "f", 1, 0, 0},
      {NL_MON_BOOL, "yes", 0, 0, 0},
      {NL_MON_BOOL, "tRUE", 0, 0, 0},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    nl_monitor_value v = {0};
    char err[96] = "";
    int rc =
        nl_monitor_parse(cases[i].kind, cases[i].text, &v, err, sizeof(err));
    bool good = rc == 0 && v.set && v.n == cases[i].n && v.u == cases[i].u;
    if ((rc == 0) != cases[i].ok || (cases[i].ok && !good) ||
        (!cases[i].ok && (v.set || strstr(err, "natscli needs") == NULL))) {
      nl_test_failures++;
      fprintf(stderr, "  parse \"%s\" (kind %d): rc %d n %lld u %llu err %s\n",
              cases[i].text, (int)cases[i].kind, rc, (long long)v.n,
              (unsigned long long)v.u, err);
    }
  }
}

/* The metadata kept from a reply: natscli's keys and ours, not others. */
static void test_kept_keys(void) {
  scene k;
  scene_start(&k);
  CHECK(nl_consumer_snap_set_meta(k.c, "io.nats.monitor.waiting-critical",
                                  "1") == 0);
  nl_monitor m;
  nl_monitor_read(k.c->meta, k.c->n_meta, false, &m);
  CHECK(m.v[NL_MON_WAITING_CRITICAL].set);
  CHECK(m.bad_key == NULL);
  CHECK(nl_monitor_any(&m));
  CHECK(!nl_monitor_disabled(&m));
  for (int p = 0; p < 3; p++)
    poll_at(&k, F_WAITING, 0);
  world_free(&k.w);
}

/* A STREAM.INFO reply keeps natscli's keys and the declarations, and no
 * other metadata (another tool's key, a value that is not a string). */
static void test_parse_keeps_keys(void) {
  static const char reply[] =
      "{\"type\":\"io.nats.jetstream.api.v1.stream_info_response\","
      "\"config\":{\"name\":\"S\",\"subjects\":[\"s.>\"],"
      "\"retention\":\"limits\",\"storage\":\"file\",\"num_replicas\":1,"
      "\"metadata\":{\"io.nats.monitor.msgs-warn\":\"10\","
      "\"io.nats.monitor.enabled\":\"true\",\"nats_lens.full_ok\":\"true\","
      "\"team.owner\":\"ops\",\"io.nats.monitor.msgs-critical\":5,"
      "\"_nats.req.level\":\"0\"}},"
      "\"created\":\"2026-01-01T00:00:00Z\","
      "\"state\":{\"messages\":3,\"bytes\":30,\"first_seq\":1,"
      "\"last_seq\":3,\"consumer_count\":0}}";
  nl_snapshot_set set = {0};
  char err[128] = "";
  CHECK(nl_parse_stream_info(reply, sizeof(reply) - 1, &set, err,
                             sizeof(err)) == 0);
  CHECK_EQ_U(set.n_streams, 1);
  if (set.n_streams == 1) {
    const nl_stream_snap *s = &set.streams[0];
    CHECK_EQ_U(s->n_meta, 3);
    CHECK(nl_stream_snap_meta(s, "io.nats.monitor.msgs-warn") != NULL);
    CHECK(nl_stream_snap_meta(s, "team.owner") == NULL);
    nl_monitor m;
    nl_monitor_read(s->meta, s->n_meta, true, &m);
    CHECK(m.v[NL_MON_MSGS_WARN].set && m.v[NL_MON_MSGS_WARN].u == 10);
    CHECK(!m.v[NL_MON_MSGS_CRITICAL].set);
    CHECK(m.v[NL_MON_ENABLED].set && m.v[NL_MON_ENABLED].n == 1);
  }
  nl_snapshot_set_clear(&set);
}

/* The ages are measured at the server's time of the reply when it gives
 * one (nats-server 2.10+), not at the poll's: 50 s by the server's clock
 * stays under 1m though the poll's clock says 150 s. */
static void test_server_time(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_DELIVERY_AGE_S, "last-delivery-critical", "1m");
  for (int p = 0; p < 3; p++) {
    k.c->server_ts_ns = k.w.t - 100 * SEC;
    k.c->delivered_last_ns = k.c->server_ts_ns - 50 * SEC;
    world_poll(&k.w);
  }
  CHECK(!raised(&k, F_DELIVERY_AGE_S));
  world_free(&k.w);
}

/* Both message levels crossed: natscli stops at the critical one. */
static void test_msgs_first_level(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_MSGS, "msgs-critical", "500");
  annotate(&k, F_MSGS, "msgs-warn", "1000");
  for (int p = 0; p < 3; p++)
    poll_at(&k, F_MSGS, 300);
  CHECK(raised(&k, F_MSGS));
  CHECK(k.w.last[NL_STREAM_THRESHOLD].severity == NL_SEVERITY_CRITICAL);
  CHECK(strstr(k.w.last[NL_STREAM_THRESHOLD].description, "msgs-warn") == NULL);
  world_free(&k.w);
}

/* Editing a threshold is no fix: a held finding that the new threshold
 * no longer sees clears by the clearing hold, not at the next poll. */
static void test_edit_threshold_holds(void) {
  scene k;
  scene_start(&k);
  annotate(&k, F_ACK_PENDING, "outstanding-ack-critical", "5");
  for (int p = 0; p < 3; p++)
    poll_at(&k, F_ACK_PENDING, 10);
  CHECK(raised(&k, F_ACK_PENDING));
  annotate(&k, F_ACK_PENDING, "outstanding-ack-critical", "100");
  poll_at(&k, F_ACK_PENDING, 10);
  poll_at(&k, F_ACK_PENDING, 10);
  CHECK(raised(&k, F_ACK_PENDING));
  CHECK(world_polls_to_clear(&k.w, "S", "C", NL_CONSUMER_THRESHOLD, 100) >= 20);
  CHECK(!raised(&k, F_ACK_PENDING));
  world_free(&k.w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_peers_not_clustered),
    NL_TEST(test_rows),
    NL_TEST(test_two_polls),
    NL_TEST(test_enabled),
    NL_TEST(test_scope_keys),
    NL_TEST(test_never_delivered),
    NL_TEST(test_several),
    NL_TEST(test_links_absent),
    NL_TEST(test_no_leader),
    NL_TEST(test_parse),
    NL_TEST(test_kept_keys),
    NL_TEST(test_parse_keeps_keys),
    NL_TEST(test_server_time),
    NL_TEST(test_msgs_first_level),
    NL_TEST(test_edit_threshold_holds),
};
NL_TEST_MAIN(tests)
