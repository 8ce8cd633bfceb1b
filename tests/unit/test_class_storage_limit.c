/* test_class_storage_limit.c: STORAGE_LIMIT_RISK and STORAGE_LIMIT_REACHED
 * (plugin/core/detect/nl_storage_limit.c) at the boundaries of each rule
 * of docs/detectors.md, table-driven on the unit tests' world (5 s polls).
 *
 * Each case is an account whose file storage has a limit, and streams
 * polled a number of times: stream A grows by a_growth bytes a poll (one
 * message of 100 bytes each), B by b_growth; the account's use is their
 * bytes plus others. The first raise poll of each class on A is checked:
 * the horizon at, just above and below the forecast, the stream's own
 * max_bytes at and one byte inside the room, a pool at and one byte past
 * full; and the healthy twins (flat use, a burst that stops, no limit,
 * another storage, use that does not matter yet, a stream that does not
 * grow, a stream that still stores at the limit, a stream nobody
 * published to within the horizon) stay silent. The resets follow: a
 * purge, and the fix applied. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

#define STEP_S 5
#define MSG 100

typedef struct {
  const char *name;
  uint64_t limit;         /* The account's file limit (0: none). */
  uint64_t others;        /* Bytes of the account outside A and B. */
  uint64_t a_bytes;       /* A's bytes at the first poll. */
  uint64_t a_growth;      /* A's growth per poll (bytes). */
  int a_grow_polls;       /* Polls A grows for (0: all). */
  uint64_t b_growth;      /* B's growth per poll. */
  int64_t a_max_bytes;    /* A's max_bytes (0: none). */
  bool a_memory;          /* A is a memory stream. */
  bool a_refused;         /* A's first_seq stands (else it evicts). */
  int64_t a_last_store_s; /* A stored last this long before each poll. */
  double horizon;         /* 0: the default. */
  int polls;
  int risk_poll;    /* First poll (1-based) RISK is raised on A; 0: none. */
  int reached_poll; /* The same for REACHED. */
} limit_case;

/* A world of 5 s polls whose engine has StorageHorizon horizon (0: the
 * default). */
static void horizon_world(world *w, double horizon) {
  world_init(w, false);
  w->step_ns = STEP_S * SEC;
  if (horizon <= 0)
    return;
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.push_unbound_s = 2;
  p.storage_horizon_s = horizon;
  nl_engine_free(w->engine);
  w->engine = nl_engine_create(&p);
}

/* Runs one case and returns the first poll each class raised on A. */
static void run_case(const limit_case *k, int *risk, int *reached) {
  world w;
  horizon_world(&w, k->horizon);
  nl_stream_snap *a = add_stream(&w, "A");
  nl_stream_snap *b = add_stream(&w, "B");
  a->memory_storage = k->a_memory;
  a->max_bytes = k->a_max_bytes > 0 ? k->a_max_bytes : -1;
  a->bytes = k->a_bytes;
  b->bytes = MSG;
  *risk = *reached = 0;
  for (int n = 1; n <= k->polls; n++) {
    bool grows = k->a_grow_polls == 0 || n <= k->a_grow_polls;
    if (n > 1 && grows)
      a->bytes += k->a_growth;
    if (n > 1)
      b->bytes += k->b_growth;
    if (a->max_bytes > 0 && a->bytes > (uint64_t)a->max_bytes)
      a->bytes = (uint64_t)a->max_bytes;
    a->msgs = a->bytes / MSG;
    b->msgs = b->bytes / MSG;
    a->last_seq = 1000 + (uint64_t)n; /* Used even when refused (2.9). */
    a->first_seq = k->a_refused ? 1 : (uint64_t)n;
    b->last_seq = b->msgs;
    a->last_ts_ns = w.t - k->a_last_store_s * SEC;
    uint64_t used = k->others + b->bytes + (k->a_memory ? 0 : a->bytes);
    w.pools_read = true;
    w.n_pools = k->limit > 0 ? 1 : 0;
    w.pools[0] = (nl_storage_pool){false, 0, used, k->limit, 0};
    world_poll(&w);
    if (*risk == 0 && active_for(&w, "A", "", NL_STORAGE_LIMIT_RISK))
      *risk = n;
    if (*reached == 0 && active_for(&w, "A", "", NL_STORAGE_LIMIT_REACHED))
      *reached = n;
  }
  world_free(&w);
}

/* A grows 100 bytes (20 B/s) a poll; with limit 10,000 and 5,000 used at
 * poll 1, poll n has 5,000 - 100 (n - 1) bytes left: a forecast of
 * 250 - 5 (n - 1) s once trusted (a rise sustained 30 s, and 4 times its
 * span at least the forecast: poll 11 on, forecast 200 s). */
static const limit_case cases[] = {
    {"horizon just above the forecast at poll 20 (155 s)", 10000, 4900, 0, 100,
     0, 0, 0, false, false, 0, 155.001, 30, 20, 0},
    {"horizon at it: the next poll", 10000, 4900, 0, 100, 0, 0, 0, false, false,
     0, 155, 30, 21, 0},
    {"horizon just below it: the next poll", 10000, 4900, 0, 100, 0, 0, 0,
     false, false, 0, 154.999, 30, 21, 0},
    {"default horizon: raised once trusted", 10000, 4900, 0, 100, 0, 0, 0,
     false, false, 0, 0, 30, 11, 0},
    {"own max_bytes at the room left: it fills the account", 10000, 4900, 0,
     100, 0, 0, 5000, false, false, 0, 0, 30, 11, 0},
    {"own max_bytes one byte inside it: discards its oldest first", 10000, 4900,
     0, 100, 0, 0, 4999, false, false, 0, 0, 30, 0, 0},
    {"flat high use", 10000, 9000, 500, 0, 0, 0, 0, false, false, 0, 0, 40, 0,
     0},
    {"a burst that stops", 10000, 4900, 0, 100, 6, 0, 0, false, false, 0, 0, 40,
     0, 0},
    {"no limit", 0, 4900, 0, 100, 0, 0, 0, false, false, 0, 0, 30, 0, 0},
    {"a memory stream beside a file limit", 10000, 4900, 0, 100, 0, 100, 0,
     true, false, 0, 0, 30, 0, 0},
    {"use below a tenth of the limit", 100000, 0, 0, 100, 0, 0, 0, false, false,
     0, 1e6, 30, 0, 0},
    {"another stream grows, not this one", 10000, 4900, 0, 0, 0, 100, 0, false,
     false, 0, 0, 30, 0, 0},
    {"full: room one byte short of a message, refused", 10000, 9700, 101, 0, 0,
     0, 0, false, true, 10, 0, 4, 0, 2},
    {"room of exactly one message: not full", 10000, 9700, 100, 0, 0, 0, 0,
     false, true, 10, 0, 4, 0, 0},
    {"full but still storing (2.9 at its own limits)", 10000, 9700, 101, 0, 0,
     0, 0, false, false, 10, 0, 4, 0, 0},
    {"full, last store just inside the horizon", 10000, 9700, 101, 0, 0, 0, 0,
     false, true, 99, 100, 4, 0, 2},
    {"full, last store at the horizon: nobody publishes", 10000, 9700, 101, 0,
     0, 0, 0, false, true, 100, 100, 4, 0, 0},
};

static void test_storage_limit_cases(void) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    int risk, reached;
    run_case(&cases[i], &risk, &reached);
    if (risk != cases[i].risk_poll || reached != cases[i].reached_poll)
      fprintf(stderr, "  risk at %d, reached at %d\n", risk, reached);
    CHECK_CASE(cases[i].name, risk == cases[i].risk_poll);
    CHECK_CASE(cases[i].name, reached == cases[i].reached_poll);
  }
}

/* The finding's evidence and fix: a cap of 80% of the room the account
 * leaves A beside the other streams (10,000 - 4,900 - B's 100 = 5,000:
 * 4,000 bytes). A work queue gets words only. */
static void test_storage_limit_fix(void) {
  for (int wq = 0; wq < 2; wq++) {
    world w;
    horizon_world(&w, 0);
    nl_stream_snap *a = add_stream(&w, "A");
    nl_stream_snap *b = add_stream(&w, "B");
    a->retention = wq ? NL_RETENTION_WORKQUEUE : NL_RETENTION_LIMITS;
    b->bytes = MSG;
    b->msgs = b->last_seq = 1;
    for (int n = 1; n <= 11; n++) {
      a->bytes = (uint64_t)(n - 1) * MSG;
      a->msgs = a->last_seq = (uint64_t)(n - 1);
      w.pools_read = true;
      w.n_pools = 1;
      w.pools[0] = (nl_storage_pool){false, 0, 4900 + MSG + a->bytes, 10000, 0};
      world_poll(&w);
    }
    CHECK(active_for(&w, "A", "", NL_STORAGE_LIMIT_RISK));
    const nl_finding *f = &w.last[NL_STORAGE_LIMIT_RISK];
    CHECK(nl_finding_get(f, "forecast_s", -1) == 200);
    CHECK(nl_finding_get(f, "account_limit_bytes", -1) == 10000);
    CHECK(nl_finding_get(f, "account_growth_bytes_per_s", -1) == 20);
    if (wq) {
      CHECK(f->fix_command[0] == '\0');
      CHECK(strstr(f->recommendation, "max_file") != NULL);
    } else {
      CHECK(strcmp(f->fix_command, "nats stream edit A --max-bytes 4000") == 0);
      CHECK(nl_finding_get(f, "recommended_max_bytes", -1) == 4000);
    }
    world_free(&w);
  }
}

/* After the finding: a purge (use falls) clears it after the clearing
 * hold and a new rise must be sustained again; a fix (max_bytes set)
 * clears it at once. REACHED clears when room comes back. */
static void test_storage_limit_resets(void) {
  for (int fix = 0; fix < 2; fix++) {
    world w;
    horizon_world(&w, 0);
    nl_stream_snap *a = add_stream(&w, "A");
    int n = 1;
    for (; n <= 14; n++) {
      a->bytes = (uint64_t)(n - 1) * MSG;
      a->msgs = a->last_seq = (uint64_t)(n - 1);
      w.pools_read = true;
      w.n_pools = 1;
      w.pools[0] = (nl_storage_pool){false, 0, 5000 + a->bytes, 10000, 0};
      world_poll(&w);
    }
    CHECK(active_for(&w, "A", "", NL_STORAGE_LIMIT_RISK));
    if (fix) {
      a->max_bytes = 2000; /* The edit truncates the stream. */
      a->bytes = 2000;
    } else {
      a->bytes = 0; /* A purge. */
      a->first_seq = a->last_seq + 1;
    }
    a->msgs = a->bytes / MSG;
    w.pools[0].used = 5000 + a->bytes;
    world_poll(&w);
    if (fix)
      CHECK(!active_for(&w, "A", "", NL_STORAGE_LIMIT_RISK));
    else
      CHECK(world_polls_to_clear(&w, "A", "", NL_STORAGE_LIMIT_RISK, 20) > 0);
    CHECK(!active_for(&w, "A", "", NL_STORAGE_LIMIT_RISK));
    CHECK_EQ_U(w.onsets[NL_STORAGE_LIMIT_RISK], 1);
    world_free(&w);
  }
  /* REACHED, then room again (another stream purged). */
  world w;
  world_init(&w, false);
  nl_stream_snap *a = add_stream(&w, "A");
  a->bytes = 1000;
  a->msgs = a->last_seq = 10;
  w.pools_read = true;
  w.n_pools = 1;
  w.pools[0] = (nl_storage_pool){false, 0, 9950, 10000, 0};
  for (int n = 0; n < 3; n++) {
    a->last_ts_ns = w.t - SEC;
    world_poll(&w);
  }
  CHECK(active_for(&w, "A", "", NL_STORAGE_LIMIT_REACHED));
  CHECK(strstr(w.last[NL_STORAGE_LIMIT_REACHED].description, "full") != NULL);
  w.pools[0].used = 2000;
  CHECK(world_polls_to_clear(&w, "A", "", NL_STORAGE_LIMIT_REACHED, 60) > 0);
  /* Pools not read at a poll: nothing judged, nothing raised. */
  w.pools_read = false;
  w.pools[0].used = 9950;
  for (int n = 0; n < 3; n++)
    world_poll(&w);
  CHECK(!active_for(&w, "A", "", NL_STORAGE_LIMIT_REACHED));
  world_free(&w);
}

/* An R3 stream (the use counts every replica): a message takes three
 * times its size, so room for two copies is full; its own room counts
 * three copies too. */
static void test_storage_limit_replicas(void) {
  for (uint64_t room = 299; room <= 300; room++) {
    world w;
    horizon_world(&w, 0);
    nl_stream_snap *a = add_stream(&w, "A");
    a->replicas = 3;
    a->bytes = 1000;
    a->msgs = a->last_seq = 10;
    w.pools_read = true;
    w.n_pools = 1;
    w.pools[0] = (nl_storage_pool){false, 0, 10000 - room, 10000, 0};
    for (int n = 0; n < 3; n++) {
      a->last_ts_ns = w.t - SEC;
      world_poll(&w);
    }
    CHECK(active_for(&w, "A", "", NL_STORAGE_LIMIT_REACHED) == (room < 300));
    if (room < 300)
      CHECK(nl_finding_get(&w.last[NL_STORAGE_LIMIT_REACHED], "message_bytes",
                           -1) == 300);
    world_free(&w);
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_storage_limit_replicas),
    NL_TEST(test_storage_limit_cases),
    NL_TEST(test_storage_limit_fix),
    NL_TEST(test_storage_limit_resets),
};

NL_TEST_MAIN(tests)
