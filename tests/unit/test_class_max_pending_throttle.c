/* test_class_max_pending_throttle.c: MAX_PENDING_THROTTLE at the boundaries
 * of its predicate (docs/detectors.md): num_ack_pending at, one below and
 * one above max_ack_pending, num_pending 0 and 1, a paused consumer, ack
 * policy none and a cap of 0 or unlimited; then the life of a finding: the
 * clearing hold at its edges, a fix, a pause, and a consumer deleted or
 * created again. Every case runs in a fresh world, with the configuration
 * classes on and off (the class reads the traffic only, so both agree). */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

/* A failed check of the case named label (its line and its expression). */
/* The held finding of class cls of consumer S/C, or NULL. */
static const nl_finding *held(world *w, nl_class cls) {
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), "S", "C");
  return st != NULL ? st->active[cls] : NULL;
}

/* The latest sample the history of S/C took in, or NULL. */
static const nl_sample *latest(world *w) {
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), "S", "C");
  return st != NULL ? nl_state_latest(st) : NULL;
}

/* Writes "name (configuration classes on|off)" into buf. */
static const char *label_of(char *buf, size_t len, const char *name,
                            bool config) {
  snprintf(buf, len, "%s (configuration classes %s)", name,
           config ? "on" : "off");
  return buf;
}

/* One poll of the predicate. */
typedef struct {
  const char *name;
  nl_ack_policy ack;
  int64_t max_ack_pending;
  uint64_t num_ack_pending;
  uint64_t num_pending;
  bool paused;
  bool raised;
} throttle_case;

static const throttle_case predicate_cases[] = {
    /* num_ack_pending against the cap of 5, with 45 messages waiting. */
    {"at the cap", NL_ACK_EXPLICIT, 5, 5, 45, false, true},
    {"one below the cap", NL_ACK_EXPLICIT, 5, 4, 45, false, false},
    /* A cap lowered below what is outstanding: still held at it. */
    {"one above the cap", NL_ACK_EXPLICIT, 5, 6, 45, false, true},
    /* num_pending: the smallest backlog that is a stall, and none. */
    {"at the cap, one message waiting", NL_ACK_EXPLICIT, 5, 5, 1, false, true},
    {"at the cap, nothing waiting", NL_ACK_EXPLICIT, 5, 5, 0, false, false},
    /* The smallest cap there is. */
    {"cap 1 reached", NL_ACK_EXPLICIT, 1, 1, 1, false, true},
    {"cap 1 not reached", NL_ACK_EXPLICIT, 1, 0, 1, false, false},
    /* No cap: 0 (not set) and -1 (unlimited), whatever is outstanding. */
    {"cap 0, nothing outstanding", NL_ACK_EXPLICIT, 0, 0, 10, false, false},
    {"cap 0, messages outstanding", NL_ACK_EXPLICIT, 0, 7, 10, false, false},
    {"cap unlimited", NL_ACK_EXPLICIT, -1, 7, 10, false, false},
    /* Ack policies: none expects no ack (never a throttle), all does. */
    {"ack none at the cap", NL_ACK_NONE, 5, 5, 45, false, false},
    {"ack all at the cap", NL_ACK_ALL, 5, 5, 45, false, true},
    /* A paused consumer delivers nothing by the operator's choice. */
    {"paused at the cap", NL_ACK_EXPLICIT, 5, 5, 45, true, false},
    {"paused below the cap", NL_ACK_EXPLICIT, 5, 4, 45, true, false},
    /* A large cap: the recommendation doubles it. */
    {"at a cap of 1000", NL_ACK_EXPLICIT, 1000, 1000, 3, false, true},
};

/* A world with stream S and consumer C set as case k says. */
static nl_consumer_snap *throttle_world(world *w, const throttle_case *k,
                                        bool config) {
  world_init(w, config);
  nl_stream_snap *s = add_stream(w, "S");
  /* The stream holds what was delivered and what is pending. */
  s->last_seq = s->msgs = 100 + k->num_pending;
  nl_consumer_snap *c = add_consumer(w, 0, "C");
  c->ack_policy = k->ack;
  c->max_ack_pending = k->max_ack_pending;
  c->num_ack_pending = k->num_ack_pending;
  c->num_pending = k->num_pending;
  c->num_waiting = 2;
  c->paused = k->paused;
  c->delivered_consumer_seq = c->delivered_stream_seq = 100;
  return c;
}

static void test_max_pending_throttle_predicate(void) {
  for (size_t i = 0; i < sizeof(predicate_cases) / sizeof(*predicate_cases);
       i++) {
    for (int config = 0; config < 2; config++) {
      const throttle_case *k = &predicate_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      throttle_world(&w, k, config);
      world_poll(&w);
      /* The scenario happened: the history took in the poll's counts. */
      const nl_sample *s0 = latest(&w);
      CHECK_CASE(label, s0 != NULL &&
                            s0->num_ack_pending == k->num_ack_pending &&
                            s0->num_pending == k->num_pending);
      const nl_finding *f = held(&w, NL_MAX_PENDING_THROTTLE);
      CHECK_CASE(label, (f != NULL) == k->raised);
      CHECK_CASE(label,
                 w.onsets[NL_MAX_PENDING_THROTTLE] == (k->raised ? 1 : 0));
      if (f != NULL) {
        uint64_t rec = 2 * (uint64_t)k->max_ack_pending;
        char fix[64];
        snprintf(fix, sizeof(fix), "--max-pending %llu",
                 (unsigned long long)rec);
        CHECK_CASE(label, nl_finding_get(f, "num_ack_pending", -1) ==
                              (double)k->num_ack_pending);
        CHECK_CASE(label, nl_finding_get(f, "max_ack_pending", -1) ==
                              (double)k->max_ack_pending);
        CHECK_CASE(label, nl_finding_get(f, "num_pending", -1) ==
                              (double)k->num_pending);
        CHECK_CASE(label, nl_finding_get(f, "num_waiting", -1) == 2);
        CHECK_CASE(label, nl_finding_get(f, "recommended_max_ack_pending",
                                         -1) == (double)rec);
        CHECK_CASE(label, strstr(f->fix_command, fix) != NULL);
        CHECK_CASE(label, f->severity == NL_SEVERITY_WARNING);
      }
      world_free(&w);
    }
  }
}

/* The clearing hold once the consumer is below its cap: how long apart the
 * polls are, and at which poll after the condition ended the finding
 * clears (1 is the first poll without it). */
typedef struct {
  const char *name;
  int64_t step_ns;
  double clear_hold_s; /* ClearHoldSeconds. */
  int cleared_at;
} hold_case;

static const hold_case hold_cases[] = {
    /* 1 s polls: missing for 29 s at the 30th poll, 30 s at the 31st. */
    {"1 s polls, the hold of 30 s", SEC, 30, 31},
    /* Two polls exactly 30 s apart: both the hold and the 2 polls met. */
    {"30 s polls, the hold reached at the second", 30 * SEC, 30, 2},
    /* One nanosecond short of the hold at the second poll. */
    {"30 s - 1 ns polls, one ns short at the second", 30 * SEC - 1, 30, 3},
    /* One poll is never enough, however long the hold (none at all). */
    {"hold 0: the second poll", SEC, 0, 2},
    {"hold 0, 60 s polls: the second poll", 60 * SEC, 0, 2},
};

static void test_max_pending_throttle_hold(void) {
  for (size_t i = 0; i < sizeof(hold_cases) / sizeof(*hold_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const hold_case *k = &hold_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      nl_consumer_snap *c = throttle_world(&w, &predicate_cases[0], config);
      nl_engine_free(w.engine);
      nl_detect_params p;
      nl_detect_params_default(&p);
      p.config_classes = config;
      p.clear_hold_s = k->clear_hold_s;
      w.engine = nl_engine_create(&p);
      world_poll(&w);
      CHECK_CASE(label, held(&w, NL_MAX_PENDING_THROTTLE) != NULL);
      c->num_ack_pending = 4; /* One below the cap. */
      w.step_ns = k->step_ns;
      int polls = world_polls_to_clear(&w, "S", "C", NL_MAX_PENDING_THROTTLE,
                                       k->cleared_at + 5);
      CHECK_CASE(label, polls == k->cleared_at);
      CHECK_CASE(label, w.onsets[NL_MAX_PENDING_THROTTLE] == 1 &&
                            w.clears[NL_MAX_PENDING_THROTTLE] == 1);
      /* It cleared as its condition ended, not for another reason. */
      const nl_resolved *r = nl_engine_resolved(w.engine, 0);
      CHECK_CASE(label, r != NULL && r->reason == NULL &&
                            r->f.cls == NL_MAX_PENDING_THROTTLE);
      world_free(&w);
    }
  }
}

/* A dip below the cap shorter than the hold keeps the one finding, and the
 * hold starts again from the next dip. */
static void test_max_pending_throttle_dip_within_hold(void) {
  for (int config = 0; config < 2; config++) {
    char label[160];
    label_of(label, sizeof(label), "a dip of 29 s", config);
    world w;
    nl_consumer_snap *c = throttle_world(&w, &predicate_cases[0], config);
    world_poll(&w);
    c->num_ack_pending = 4;
    for (int i = 0; i < 30; i++) /* Missing for 29 s at the 30th poll. */
      world_poll(&w);
    CHECK_CASE(label, held(&w, NL_MAX_PENDING_THROTTLE) != NULL);
    CHECK_CASE(label, held(&w, NL_MAX_PENDING_THROTTLE)->absent_polls == 30);
    c->num_ack_pending = 5; /* Back at the cap. */
    world_poll(&w);
    CHECK_CASE(label, held(&w, NL_MAX_PENDING_THROTTLE)->absent_polls == 0);
    c->num_ack_pending = 4;
    CHECK_CASE(label, world_polls_to_clear(&w, "S", "C",
                                           NL_MAX_PENDING_THROTTLE, 60) == 31);
    CHECK_CASE(label, w.onsets[NL_MAX_PENDING_THROTTLE] == 1 &&
                          w.clears[NL_MAX_PENDING_THROTTLE] == 1);
    world_free(&w);
  }
}

/* What changes after the throttle was raised, and at which poll after the
 * change the finding clears (0: it stays through 40 polls). */
typedef enum {
  CHANGE_CAP_RAISED,     /* max_ack_pending 5 -> 10: the fix. */
  CHANGE_CAP_NOT_ENOUGH, /* max_ack_pending 5 -> 6, and 6 outstanding. */
  CHANGE_ACK_NONE,       /* The consumer made ack none (a new policy). */
  CHANGE_PAUSED,         /* Paused: not a fix of the configuration. */
  CHANGE_RECREATED_IDLE, /* Deleted and created again, nothing delivered. */
  CHANGE_RECREATED_CAP,  /* Created again and at its cap at once. */
  CHANGE_DELETED,        /* No longer listed. */
} change;

typedef struct {
  const char *name;
  change what;
  int cleared_at;
  const char *reason; /* Of the clearing; NULL: its condition ended. */
} change_case;

static const change_case change_cases[] = {
    {"the fix: a higher cap", CHANGE_CAP_RAISED, 1, NULL},
    {"a higher cap reached again", CHANGE_CAP_NOT_ENOUGH, 0, NULL},
    {"ack policy none", CHANGE_ACK_NONE, 1, NULL},
    {"paused: cleared by the hold", CHANGE_PAUSED, 31, NULL},
    {"created again, idle", CHANGE_RECREATED_IDLE, 1, NULL},
    {"created again, at its cap", CHANGE_RECREATED_CAP, 0, NULL},
    {"deleted", CHANGE_DELETED, 1, "consumer deleted"},
};

static void test_max_pending_throttle_changes(void) {
  for (size_t i = 0; i < sizeof(change_cases) / sizeof(*change_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const change_case *k = &change_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      nl_consumer_snap *c = throttle_world(&w, &predicate_cases[0], config);
      world_poll(&w);
      world_poll(&w);
      CHECK_CASE(label, held(&w, NL_MAX_PENDING_THROTTLE) != NULL);
      switch (k->what) {
      case CHANGE_CAP_RAISED:
        c->max_ack_pending = 10;
        break;
      case CHANGE_CAP_NOT_ENOUGH:
        c->max_ack_pending = 6;
        c->num_ack_pending = 6;
        break;
      case CHANGE_ACK_NONE:
        c->ack_policy = NL_ACK_NONE;
        break;
      case CHANGE_PAUSED:
        c->paused = true;
        break;
      case CHANGE_RECREATED_IDLE:
      case CHANGE_RECREATED_CAP:
        c->created_ns = w.t - SEC / 2;
        c->delivered_consumer_seq = c->delivered_stream_seq = 5;
        if (k->what == CHANGE_RECREATED_IDLE)
          c->num_ack_pending = 0;
        break;
      case CHANGE_DELETED:
        w.n_consumers = 0;
        break;
      }
      int polls = 0;
      while (held(&w, NL_MAX_PENDING_THROTTLE) != NULL && polls < 40) {
        world_poll(&w);
        polls++;
      }
      CHECK_CASE(label, polls == (k->cleared_at ? k->cleared_at : 40));
      CHECK_CASE(label, w.onsets[NL_MAX_PENDING_THROTTLE] == 1);
      if (k->cleared_at > 0) {
        const nl_resolved *r = nl_engine_resolved(w.engine, 0);
        CHECK_CASE(label, r != NULL && r->f.cls == NL_MAX_PENDING_THROTTLE);
        CHECK_CASE(label, r != NULL && (r->reason == k->reason ||
                                        (r->reason && k->reason &&
                                         strcmp(r->reason, k->reason) == 0)));
      }
      if (k->what == CHANGE_RECREATED_IDLE || k->what == CHANGE_RECREATED_CAP) {
        /* The history started again with the new consumer. */
        const nl_consumer_state *st =
            nl_registry_find(nl_engine_registry(w.engine), "S", "C");
        CHECK_CASE(label, st != NULL && st->resets == 1 &&
                              st->created_ns == c->created_ns);
      }
      if (k->what == CHANGE_DELETED) {
        /* Listed again, still at its cap: a new consumer, a new onset. */
        w.n_consumers = 1;
        world_poll(&w);
        CHECK_CASE(label, held(&w, NL_MAX_PENDING_THROTTLE) != NULL);
        CHECK_CASE(label, w.onsets[NL_MAX_PENDING_THROTTLE] == 2);
      }
      world_free(&w);
    }
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_max_pending_throttle_predicate),
    NL_TEST(test_max_pending_throttle_hold),
    NL_TEST(test_max_pending_throttle_dip_within_hold),
    NL_TEST(test_max_pending_throttle_changes),
};

NL_TEST_MAIN(tests)
