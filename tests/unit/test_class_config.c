/* test_class_config.c: the classes raised from the configuration through
 * one audit rule each (nl_config_classes.c), at the boundaries of their
 * predicates (docs/detectors.md): ACK_NONE_CONSUMER, ACK_ALL_PARALLEL (two
 * pull requests waiting, one, a pinned client, max_ack_pending 1 and 2,
 * declared workers 1 and 2) and the hold it keeps while the rule matches
 * at all, CONSUMER_SINGLE_REPLICA (replicas 1 and 2 of a stream of 2 and
 * 3, inherited or above the stream's, memory storage), STREAM_SINGLE_REPLICA
 * (replicas 0, 1 and 2, in a cluster or not), and CONSUMER_UNOBSERVABLE
 * with its raise debounce of two polls over 10 s (9.999 s, 10 s - 1 ns and
 * 10 s apart, one poll, each form of the condition, and the run started
 * again when the stream is led elsewhere or not listed). Then what clears
 * each: a fix at once, the consumer or stream gone, the hold. Every case
 * runs in a fresh world with the configuration classes on and again off
 * (then nothing is raised). */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

/* A failed check of the case named label (its line and its expression). */
#define N_OF(a) (sizeof(a) / sizeof(*(a)))

/* Writes "name (configuration classes on|off)" into buf. */
static const char *label_of(char *buf, size_t len, const char *name,
                            bool config) {
  snprintf(buf, len, "%s (configuration classes %s)", name,
           config ? "on" : "off");
  return buf;
}

/* The held finding of class cls of S/C (of stream S for a stream class),
 * or NULL. */
static const nl_finding *held(world *w, nl_class cls) {
  if (nl_class_is_stream(cls))
    return nl_engine_stream_finding(w->engine, "S", cls);
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), "S", "C");
  return st != NULL ? st->active[cls] : NULL;
}

/* Sets metadata nats_lens.key = value on c. */
static void declare(nl_consumer_snap *c, const char *key, const char *value) {
  char meta[64];
  snprintf(meta, sizeof(meta), "nats_lens.%s", key);
  CHECK(nl_consumer_snap_set_meta(c, meta, value) == 0);
}

/* A max_ack_pending of 0 in a case (0 there keeps the world's 1000). */
#define MAP_ZERO INT64_MIN

/* One configuration of stream S and consumer C, polled twice. Fields left
 * 0 keep the world's defaults: a single-server stream, a durable pull
 * consumer with explicit acks and max_ack_pending 1000. */
typedef struct {
  const char *name;
  nl_class cls;
  const char *cluster;
  int stream_replicas;
  bool stream_memory;
  nl_ack_policy ack;
  bool ephemeral;
  bool push;
  bool deliver_group;
  int64_t max_ack_pending;
  uint64_t num_waiting;
  bool pinned;
  const char *workers; /* Declared nats_lens.workers, or NULL. */
  int num_replicas;
  bool mem_storage;
  bool raised;
  const char *evidence; /* One evidence number of the finding, or NULL. */
  double value;
} config_case;

static const config_case config_cases[] = {
    /* ACK_NONE_CONSUMER: a durable that never waits for acks. */
    {.name = "durable with ack none",
     .cls = NL_ACK_NONE_CONSUMER,
     .ack = NL_ACK_NONE,
     .raised = true,
     .evidence = "durable",
     .value = 1},
    {.name = "ephemeral with ack none",
     .cls = NL_ACK_NONE_CONSUMER,
     .ack = NL_ACK_NONE,
     .ephemeral = true},
    {.name = "durable with explicit acks", .cls = NL_ACK_NONE_CONSUMER},
    {.name = "durable with ack all",
     .cls = NL_ACK_NONE_CONSUMER,
     .ack = NL_ACK_ALL},
    /* ACK_ALL_PARALLEL: pull requests waiting, at 2, one below, above. */
    {.name = "ack all, two pull requests waiting",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .num_waiting = 2,
     .raised = true,
     .evidence = "parallel_seen",
     .value = 1},
    {.name = "ack all, one pull request waiting",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .num_waiting = 1},
    {.name = "ack all, three pull requests waiting",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .num_waiting = 3,
     .raised = true,
     .evidence = "num_waiting",
     .value = 3},
    {.name = "ack all, none waiting",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL},
    /* A pinned client: the other requests wait unserved. */
    {.name = "ack all, two waiting on a pinned client",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .num_waiting = 2,
     .pinned = true},
    /* max_ack_pending 1 is one at a time; 2 and none are not. */
    {.name = "ack all, max_ack_pending 1",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .max_ack_pending = 1,
     .num_waiting = 5},
    {.name = "ack all, max_ack_pending 2",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .max_ack_pending = 2,
     .num_waiting = 2,
     .raised = true,
     .evidence = "max_ack_pending",
     .value = 2},
    {.name = "ack all, max_ack_pending 0",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .max_ack_pending = MAP_ZERO,
     .num_waiting = 2,
     .raised = true},
    {.name = "ack all, max_ack_pending unlimited",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .max_ack_pending = -1,
     .num_waiting = 2,
     .raised = true},
    /* Declared workers: 2 is parallel, 1 is in order whatever waits. */
    {.name = "ack all, two workers declared",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .workers = "2",
     .raised = true,
     .evidence = "declared_workers",
     .value = 2},
    {.name = "ack all, one worker declared, five waiting",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .workers = "1",
     .num_waiting = 5},
    /* Push: a deliver group is parallel, one subscriber is not. */
    {.name = "ack all, push with a deliver group",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .push = true,
     .deliver_group = true,
     .raised = true,
     .evidence = "deliver_group",
     .value = 1},
    {.name = "ack all, push without a group",
     .cls = NL_ACK_ALL_PARALLEL,
     .ack = NL_ACK_ALL,
     .push = true,
     .num_waiting = 5},
    {.name = "explicit acks, two waiting",
     .cls = NL_ACK_ALL_PARALLEL,
     .num_waiting = 2},
    /* CONSUMER_SINGLE_REPLICA: the consumer's replicas against its
     * stream's (in cluster C1). */
    {.name = "one replica on a stream of 3",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .num_replicas = 1,
     .raised = true,
     .evidence = "consumer_replicas",
     .value = 1},
    {.name = "two replicas on a stream of 3",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .num_replicas = 2},
    {.name = "one replica on a stream of 2",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 2,
     .num_replicas = 1,
     .raised = true,
     .evidence = "stream_replicas",
     .value = 2},
    {.name = "one replica on a stream of 1",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 1,
     .num_replicas = 1},
    {.name = "inherited replicas (0) on a stream of 3",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3},
    {.name = "more replicas than the stream's",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .num_replicas = 5},
    {.name = "mem_storage on a file stream of 3",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .mem_storage = true,
     .raised = true,
     .evidence = "consumer_replicas",
     .value = 3},
    {.name = "mem_storage on a memory stream of 3",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .stream_memory = true,
     .mem_storage = true},
    {.name = "one replica in memory on a memory stream of 3",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .stream_memory = true,
     .mem_storage = true,
     .num_replicas = 1,
     .raised = true,
     .evidence = "consumer_replicas",
     .value = 1},
    {.name = "ephemeral with one replica",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .ephemeral = true,
     .num_replicas = 1},
    {.name = "ack none with one replica",
     .cls = NL_CONSUMER_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 3,
     .ack = NL_ACK_NONE,
     .num_replicas = 1},
    /* STREAM_SINGLE_REPLICA: replicas 1, 0 (taken as 1) and 2 in a
     * cluster, and one replica on a single server. */
    {.name = "a stream of 1 replica in a cluster",
     .cls = NL_STREAM_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 1,
     .raised = true,
     .evidence = "replicas",
     .value = 1},
    {.name = "a stream of 0 replicas in a cluster",
     .cls = NL_STREAM_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 0,
     .raised = true,
     .evidence = "replicas",
     .value = 1},
    {.name = "a stream of 2 replicas in a cluster",
     .cls = NL_STREAM_SINGLE_REPLICA,
     .cluster = "C1",
     .stream_replicas = 2},
    {.name = "a stream of 1 replica on a single server",
     .cls = NL_STREAM_SINGLE_REPLICA,
     .stream_replicas = 1},
};

/* A world with stream S and consumer C as case k says. */
static nl_consumer_snap *config_world(world *w, const config_case *k,
                                      bool config) {
  world_init(w, config);
  nl_stream_snap *s = add_stream(w, "S");
  s->cluster = (char *)k->cluster;
  s->replicas = k->stream_replicas;
  s->memory_storage = k->stream_memory;
  nl_consumer_snap *c = add_consumer(w, 0, "C");
  c->ack_policy = k->ack;
  c->durable = !k->ephemeral;
  c->push = k->push;
  c->has_deliver_group = k->deliver_group;
  if (k->max_ack_pending != 0)
    c->max_ack_pending =
        k->max_ack_pending == MAP_ZERO ? 0 : k->max_ack_pending;
  c->num_waiting = k->num_waiting;
  c->pinned_client = k->pinned;
  if (k->workers != NULL)
    declare(c, "workers", k->workers);
  c->num_replicas = k->num_replicas;
  c->mem_storage = k->mem_storage;
  c->delivered_consumer_seq = c->delivered_stream_seq = 10;
  c->ack_floor_stream_seq = 8;
  s->last_seq = s->msgs = 10; /* A stream holds what was delivered. */
  return c;
}

static void test_config_classes_predicates(void) {
  for (size_t i = 0; i < N_OF(config_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const config_case *k = &config_cases[i];
      char label[200];
      label_of(label, sizeof(label), k->name, config);
      world w;
      config_world(&w, k, config);
      world_poll(&w);
      bool want = k->raised && config;
      /* The scenario happened: the stream was judged (and the consumer
       * reached its history, world_free). */
      CHECK_CASE(label, nl_engine_streams_held(w.engine) == 1);
      /* Raised on the first poll, as a configuration is. */
      CHECK_CASE(label, (held(&w, k->cls) != NULL) == want);
      world_poll(&w);
      const nl_finding *f = held(&w, k->cls);
      CHECK_CASE(label, (f != NULL) == want);
      CHECK_CASE(label, w.onsets[k->cls] == (want ? 1 : 0));
      if (f != NULL) {
        CHECK_CASE(label, f->cls == k->cls);
        CHECK_CASE(label, f->severity == NL_SEVERITY_WARNING);
        CHECK_CASE(label, f->description[0] != '\0');
        if (k->evidence != NULL)
          CHECK_CASE(label, nl_finding_get(f, k->evidence, -1) == k->value);
      }
      /* With the classes off, none of them is raised at all. */
      if (!config)
        CHECK_CASE(label, w.onsets[NL_ACK_NONE_CONSUMER] == 0 &&
                              w.onsets[NL_ACK_ALL_PARALLEL] == 0 &&
                              w.onsets[NL_CONSUMER_SINGLE_REPLICA] == 0 &&
                              w.onsets[NL_STREAM_SINGLE_REPLICA] == 0 &&
                              w.onsets[NL_CONSUMER_UNOBSERVABLE] == 0);
      world_free(&w);
    }
  }
}

/* The changes made to a raised finding's world. */
static void to_explicit(world *w) {
  w->consumers[0].ack_policy = NL_ACK_EXPLICIT;
}
static void delete_consumer(world *w) { w->n_consumers = 0; }
static void recreate_explicit(world *w) {
  nl_consumer_snap *c = &w->consumers[0];
  c->created_ns = w->t - SEC / 2;
  c->delivered_consumer_seq = c->delivered_stream_seq = 0;
  c->ack_floor_stream_seq = 0;
  c->ack_policy = NL_ACK_EXPLICIT;
}
static void recreate_same(world *w) {
  nl_consumer_snap *c = &w->consumers[0];
  c->created_ns = w->t - SEC / 2;
  c->delivered_consumer_seq = c->delivered_stream_seq = 0;
  c->ack_floor_stream_seq = 0;
  c->num_waiting = 0;
}
static void nothing_waits(world *w) { w->consumers[0].num_waiting = 0; }
static void one_waits(world *w) { w->consumers[0].num_waiting = 1; }
static void one_at_a_time(world *w) { w->consumers[0].max_ack_pending = 1; }
static void one_worker(world *w) {
  nl_consumer_snap *c = &w->consumers[0];
  c->num_waiting = 0;
  declare(c, "workers", "1");
}
static void consumer_three(world *w) { w->consumers[0].num_replicas = 3; }
static void consumer_file(world *w) { w->consumers[0].mem_storage = false; }
static void stream_three(world *w) { w->streams[0].replicas = 3; }
static void stream_gone(world *w) {
  w->n_streams = 0;
  w->n_consumers = 0;
}
static void stream_elsewhere(world *w) {
  w->streams[0].elsewhere = true;
  w->n_consumers = 0;
}

/* A finding raised by case base (a row of config_cases), then change,
 * then polls until it clears: at poll cleared_at after the change (0: it
 * stays through 40 polls), for reason (NULL: its condition ended or a fix
 * was applied). */
typedef struct {
  const char *name;
  const char *base;
  void (*change)(world *w);
  int cleared_at;
  const char *reason;
} change_case;

/* The rows of config_cases the changes start from. */
#define BASE_ACK_NONE "durable with ack none"
#define BASE_ACK_ALL "ack all, two pull requests waiting"
#define BASE_ONE_REPLICA "one replica on a stream of 3"
#define BASE_MEM "mem_storage on a file stream of 3"
#define BASE_STREAM_R1 "a stream of 1 replica in a cluster"

/* The row of config_cases named name (the first row when none is, after a
 * failed check). */
static const config_case *config_case_named(const char *name) {
  for (size_t i = 0; i < N_OF(config_cases); i++)
    if (strcmp(config_cases[i].name, name) == 0)
      return &config_cases[i];
  CHECK_CASE(name, !"a row of config_cases");
  return &config_cases[0];
}

static const change_case change_cases[] = {
    {"ack none made explicit: at once", BASE_ACK_NONE, to_explicit, 1, NULL},
    {"ack none deleted", BASE_ACK_NONE, delete_consumer, 1, "consumer deleted"},
    {"ack none created again explicit: at once", BASE_ACK_NONE,
     recreate_explicit, 1, NULL},
    /* ACK_ALL_PARALLEL holds while its rule matches at all. */
    {"ack all, nothing waiting: held", BASE_ACK_ALL, nothing_waits, 0, NULL},
    {"ack all, one waiting: held", BASE_ACK_ALL, one_waits, 0, NULL},
    {"ack all, max_ack_pending 1: at once", BASE_ACK_ALL, one_at_a_time, 1,
     NULL},
    {"ack all made explicit: at once", BASE_ACK_ALL, to_explicit, 1, NULL},
    {"ack all, one worker declared: at once", BASE_ACK_ALL, one_worker, 1,
     NULL},
    {"ack all deleted", BASE_ACK_ALL, delete_consumer, 1, "consumer deleted"},
    /* Created again with the same configuration and no parallel workers
     * seen: a new consumer, which must show them again (a fix clears at
     * once). */
    {"ack all created again the same: at once", BASE_ACK_ALL, recreate_same, 1,
     NULL},
    {"one replica edited to 3: at once", BASE_ONE_REPLICA, consumer_three, 1,
     NULL},
    {"one replica deleted", BASE_ONE_REPLICA, delete_consumer, 1,
     "consumer deleted"},
    {"mem_storage taken away: at once", BASE_MEM, consumer_file, 1, NULL},
    {"R1 stream edited to 3: at once", BASE_STREAM_R1, stream_three, 1, NULL},
    {"R1 stream not listed", BASE_STREAM_R1, stream_gone, 1,
     "stream not listed"},
    {"R1 stream led elsewhere", BASE_STREAM_R1, stream_elsewhere, 1,
     "led by another server"},
};

static void test_config_classes_changes(void) {
  for (size_t i = 0; i < N_OF(change_cases); i++) {
    const change_case *k = &change_cases[i];
    const config_case *base = config_case_named(k->base);
    char label[200];
    label_of(label, sizeof(label), k->name, true);
    CHECK_CASE(label, base->raised);
    world w;
    config_world(&w, base, true);
    world_poll(&w);
    world_poll(&w);
    CHECK_CASE(label, held(&w, base->cls) != NULL);
    k->change(&w);
    int polls = 0;
    while (held(&w, base->cls) != NULL && polls < 40) {
      world_poll(&w);
      polls++;
    }
    CHECK_CASE(label, polls == (k->cleared_at ? k->cleared_at : 40));
    CHECK_CASE(label, w.onsets[base->cls] == 1);
    if (k->cleared_at > 0) {
      const nl_resolved *r = nl_engine_resolved(w.engine, 0);
      CHECK_CASE(label, r != NULL && r->f.cls == base->cls);
      CHECK_CASE(label, r != NULL && (r->reason == k->reason ||
                                      (r->reason && k->reason &&
                                       strcmp(r->reason, k->reason) == 0)));
    }
    world_free(&w);
  }
}

/* ACK_ALL_PARALLEL starts only with parallel workers seen: a consumer that
 * only could run in parallel stays silent, and one deleted and listed
 * again starts over. */
static void test_ack_all_parallel_needs_parallel_seen(void) {
  world w;
  nl_consumer_snap *c = config_world(&w, config_case_named(BASE_ACK_ALL), true);
  c->num_waiting = 1;
  for (int i = 0; i < 40; i++)
    world_poll(&w);
  CHECK(held(&w, NL_ACK_ALL_PARALLEL) == NULL);
  c->num_waiting = 2;
  world_poll(&w);
  CHECK(held(&w, NL_ACK_ALL_PARALLEL) != NULL);
  w.n_consumers = 0; /* Deleted. */
  world_poll(&w);
  CHECK(held(&w, NL_ACK_ALL_PARALLEL) == NULL);
  w.n_consumers = 1; /* Created again: nothing waiting yet. */
  c->num_waiting = 0;
  c->created_ns = w.t;
  c->delivered_consumer_seq = c->delivered_stream_seq = 0;
  c->ack_floor_stream_seq = 0;
  for (int i = 0; i < 5; i++)
    world_poll(&w);
  CHECK(held(&w, NL_ACK_ALL_PARALLEL) == NULL);
  CHECK(nl_engine_knows(w.engine, "S", "C"));
  CHECK_EQ_U(w.onsets[NL_ACK_ALL_PARALLEL], 1);
  CHECK_EQ_U(w.clears[NL_ACK_ALL_PARALLEL], 1);
  world_free(&w);
}

/* CONSUMER_UNOBSERVABLE: each character of polls is one poll of stream S
 * (in cluster C1, with consumer C):
 *   o  listed with its consumer list complete (C listed);
 *   U  listed with its consumer list incomplete (C listed, another not);
 *   M  reported missing by the stream list (C not listed);
 *   S  left out of a stream list short of its total (C not listed);
 *   E  led by another server (C not listed);
 *   G  neither listed nor missing (deleted; C goes with it).
 * raised has one character per poll: '+' when the finding is held after
 * it, '-' when not. Polls are step_ns apart. */
typedef struct {
  const char *name;
  const char *polls;
  int64_t step_ns;
  const char *raised;
  double stream_missing; /* The evidence when raised. */
} unobservable_case;

static const unobservable_case unobservable_cases[] = {
    /* Two polls in a row, exactly 10 s apart. */
    {"incomplete twice, 10 s apart", "oUU", 10 * SEC, "--+", 0},
    /* One millisecond, then one nanosecond, short at the second poll. */
    {"incomplete, 9.999 s apart", "oUUU", 9999 * SEC / 1000, "---+", 0},
    {"incomplete, 10 s - 1 ns apart", "oUUU", 10 * SEC - 1, "---+", 0},
    /* 1 s polls: the tenth second is reached at the eleventh poll. */
    {"incomplete, 1 s polls", "oUUUUUUUUUUU", SEC, "-----------+", 0},
    /* One poll is not a finding, however long. */
    {"incomplete once, 60 s", "oUoo", 60 * SEC, "----", 0},
    /* A complete poll in between starts the run again. */
    {"incomplete, complete, incomplete twice", "oUoUU", 10 * SEC, "----+", 0},
    /* Reported missing, and left out of a short list. */
    {"missing twice, 10 s apart", "oMM", 10 * SEC, "--+", 1},
    {"missing, 9.999 s apart", "oMMM", 9999 * SEC / 1000, "---+", 1},
    {"left out of a short list twice", "oSS", 10 * SEC, "--+", 1},
    /* The forms make one run. */
    {"incomplete then missing", "oUM", 10 * SEC, "--+", 1},
    /* Led elsewhere, or not listed, in between: the run starts again. */
    {"led elsewhere in between", "oUEUU", 10 * SEC, "----+", 0},
    {"not listed in between", "oUGUU", 10 * SEC, "----+", 0},
    /* Cleared: listed complete again after the hold (30 s, 2 polls), at
     * once when the stream was missing (nothing of it was seen), not
     * listed, or led elsewhere. */
    {"incomplete, then complete", "oUUoooo", 10 * SEC, "--++++-", 0},
    {"missing, then listed", "oMMo", 10 * SEC, "--+-", 1},
    {"incomplete, then not listed", "oUUG", 10 * SEC, "--+-", 0},
    {"incomplete, then led elsewhere", "oUUE", 10 * SEC, "--+-", 0},
};

/* Sets w up for one poll of kind p (see unobservable_case). */
static void unobservable_poll(world *w, char p) {
  nl_stream_snap *s = &w->streams[0];
  w->n_streams = p == 'M' || p == 'S' || p == 'G' ? 0 : 1;
  w->n_consumers = p == 'o' || p == 'U' ? 1 : 0;
  w->n_missing = 0;
  if (p == 'M')
    w->missing[w->n_missing++] = "S";
  w->list_short = p == 'S';
  s->consumers_complete = p != 'U';
  s->consumer_count = p == 'U' ? 2 : 1;
  s->elsewhere = p == 'E';
  w->consumers[0].delivered_consumer_seq++;
}

static void test_consumer_unobservable_debounce(void) {
  for (size_t i = 0; i < N_OF(unobservable_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const unobservable_case *k = &unobservable_cases[i];
      char label[200];
      label_of(label, sizeof(label), k->name, config);
      CHECK_CASE(label, strlen(k->polls) == strlen(k->raised));
      world w;
      world_init(&w, config);
      nl_stream_snap *s = add_stream(&w, "S");
      s->cluster = "C1";
      s->replicas = 3;
      add_consumer(&w, 0, "C");
      w.step_ns = k->step_ns;
      bool known = false; /* C held by the engine before the poll. */
      int onsets = 0;
      for (size_t n = 0; k->polls[n] != '\0'; n++) {
        char p = k->polls[n];
        unobservable_poll(&w, p);
        world_poll(&w);
        /* The scenario happened: a consumer not listed while its stream
         * is not observable is kept and counted, never deleted. */
        size_t kept = (p == 'M' || p == 'S') && known ? 1 : 0;
        CHECK_CASE(label, w.kept == kept);
        known = p == 'o' || p == 'U' || ((p == 'M' || p == 'S') && known);
        CHECK_CASE(label, nl_engine_knows(w.engine, "S", "C") == known);
        bool want = config && k->raised[n] == '+';
        const nl_finding *f = held(&w, NL_CONSUMER_UNOBSERVABLE);
        if ((f != NULL) != want)
          fprintf(stderr, "  case \"%s\": poll %zu\n", label, n + 1);
        CHECK_CASE(label, (f != NULL) == want);
        onsets += want && (n == 0 || k->raised[n - 1] != '+');
        if (f != NULL)
          CHECK_CASE(label, nl_finding_get(f, "stream_missing", -1) ==
                                k->stream_missing);
      }
      CHECK_CASE(label, w.onsets[NL_CONSUMER_UNOBSERVABLE] == onsets);
      world_free(&w);
    }
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_config_classes_predicates),
    NL_TEST(test_config_classes_changes),
    NL_TEST(test_ack_all_parallel_needs_parallel_seen),
    NL_TEST(test_consumer_unobservable_debounce),
};

NL_TEST_MAIN(tests)
