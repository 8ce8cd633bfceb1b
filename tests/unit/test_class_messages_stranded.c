/* test_class_messages_stranded.c: MESSAGES_STRANDED
 * (plugin/core/detect/nl_messages_stranded.c) at the boundaries of its
 * rule (docs/detectors.md, MESSAGES_STRANDED): messages held with no
 * consumer, or on subjects no consumer's filter takes, for StrandedSeconds
 * (5 s here, 1 s polls): at 4 s silent, at 5 s raised; the count going to
 * zero starts the wait again; polls that cannot tell change nothing; the
 * subjects every filter covers, limits streams and an empty work queue stay
 * silent, and an interest stream without consumers is
 * INTEREST_NO_CONSUMERS's. */
#include "nl_test.h"
#include "nl_world.h"

#include "core/detect/nl_options.h"

#include <string.h>

/* A world whose StrandedSeconds is 5, with work queue "S" on "q.*"
 * holding 10 messages, and n consumers taking "q.a". */
typedef struct {
  world w;
  nl_stream_snap *s;
  char *subjects[1];
  char *filters[1];
  nl_subject_count counts[2];
} scene;

static void scene_start(scene *k, nl_retention r, int n, bool config) {
  memset(k, 0, sizeof(*k));
  world_init(&k->w, config);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = config;
  p.stranded_s = 5;
  nl_engine_free(k->w.engine);
  k->w.engine = nl_engine_create(&p);
  k->s = add_stream(&k->w, "S");
  k->s->retention = r;
  k->subjects[0] = "q.*";
  k->s->subjects = k->subjects;
  k->s->n_subjects = 1;
  k->s->msgs = 10;
  k->s->last_seq = 10;
  k->s->num_subjects = 2;
  k->filters[0] = "q.a";
  for (int i = 0; i < n; i++) {
    nl_consumer_snap *c = add_consumer(&k->w, 0, i ? "d" : "c");
    c->filters = k->filters;
    c->n_filters = 1;
    c->filtered = true;
  }
  /* What STREAM.INFO says of its subjects: 3 on q.a, 7 on q.c. */
  k->counts[0] = (nl_subject_count){"q.a", 3};
  k->counts[1] = (nl_subject_count){"q.c", 7};
  k->s->subject_counts = k->counts;
  k->s->n_subject_counts = 2;
  k->s->subject_counts_read = true;
}

static bool stranded(scene *k) {
  return active_for(&k->w, "S", NULL, NL_MESSAGES_STRANDED);
}

static double evidence(scene *k, const char *name) {
  return nl_finding_get(&k->w.last[NL_MESSAGES_STRANDED], name, -1);
}

/* Polls k n times. */
static void polls(scene *k, int n) {
  for (int i = 0; i < n; i++)
    world_poll(&k->w);
}

/* No consumer at all: every message, after 5 s (the first poll at 0 s). */
static void test_stranded_no_consumer(void) {
  scene k;
  scene_start(&k, NL_RETENTION_WORKQUEUE, 0, false);
  polls(&k, 5); /* 0 to 4 s. */
  CHECK(!stranded(&k));
  polls(&k, 1); /* 5 s. */
  CHECK(stranded(&k));
  CHECK_EQ_U(evidence(&k, "stranded"), 10);
  CHECK_EQ_U(evidence(&k, "consumers"), 0);
  CHECK(k.w.last[NL_MESSAGES_STRANDED].fix_command[0] == '\0');
  /* A consumer that takes everything comes: cleared after the hold. */
  nl_consumer_snap *c = add_consumer(&k.w, 0, "all");
  (void)c;
  int n = world_polls_to_clear(&k.w, "S", NULL, NL_MESSAGES_STRANDED, 100);
  CHECK(!stranded(&k));
  CHECK(n >= 30 && n <= 40);
  world_free(&k.w);
}

/* Consumers taking q.a only: the 7 on q.c. */
static void test_stranded_uncovered_subject(void) {
  scene k;
  scene_start(&k, NL_RETENTION_WORKQUEUE, 2, false);
  polls(&k, 6);
  CHECK(stranded(&k));
  CHECK_EQ_U(evidence(&k, "stranded"), 7);
  CHECK_EQ_U(evidence(&k, "subjects"), 1);
  CHECK_EQ_U(evidence(&k, "consumers"), 2);
  CHECK(strstr(k.w.last[NL_MESSAGES_STRANDED].description, "(first: q.c)") !=
        NULL);
  world_free(&k.w);

  /* The same on an interest stream. */
  scene_start(&k, NL_RETENTION_INTEREST, 1, false);
  polls(&k, 6);
  CHECK(stranded(&k));
  world_free(&k.w);
}

/* The count going to zero starts the wait again; 4 s is not enough. */
static void test_stranded_reset(void) {
  scene k;
  scene_start(&k, NL_RETENTION_WORKQUEUE, 1, false);
  polls(&k, 4);
  k.counts[1].count = 0;
  polls(&k, 1);
  k.counts[1].count = 7;
  polls(&k, 5); /* 0 to 4 s of the new run. */
  CHECK(!stranded(&k));
  polls(&k, 1);
  CHECK(stranded(&k));
  world_free(&k.w);
}

/* Polls that cannot tell (consumers not all listed, subject counts asked
 * for and not read) neither start nor end the wait, and a held finding
 * holds through them. */
static void test_stranded_unknown(void) {
  scene k;
  scene_start(&k, NL_RETENTION_WORKQUEUE, 1, false);
  k.s->subject_counts_read = false;
  polls(&k, 10);
  CHECK(!stranded(&k));
  k.s->subject_counts_read = true;
  polls(&k, 6);
  CHECK(stranded(&k));
  k.s->subject_counts_read = false;
  polls(&k, 60);
  CHECK(stranded(&k));
  k.s->consumers_complete = false;
  polls(&k, 60);
  CHECK(stranded(&k));
  CHECK_EQ_U(k.w.onsets[NL_MESSAGES_STRANDED], 1);
  world_free(&k.w);
}

/* Silent: a filter that covers the stream's subjects (no counts asked
 * for, nothing stranded), a limits stream, an empty work queue, and an
 * interest stream without consumers once INTEREST_NO_CONSUMERS (the
 * configuration classes on) reports it. */
static void test_stranded_silent(void) {
  scene k;
  scene_start(&k, NL_RETENTION_WORKQUEUE, 1, false);
  k.filters[0] = "q.*";
  k.s->subject_counts_read = false;
  polls(&k, 20);
  CHECK(!stranded(&k));
  world_free(&k.w);

  scene_start(&k, NL_RETENTION_LIMITS, 0, false);
  polls(&k, 20);
  CHECK(!stranded(&k));
  world_free(&k.w);

  scene_start(&k, NL_RETENTION_WORKQUEUE, 0, false);
  k.s->msgs = 0;
  polls(&k, 20);
  CHECK(!stranded(&k));
  world_free(&k.w);

  /* Raised at 5 s, the interest stream's own finding at 60 s suppresses
   * it: cleared after the hold. */
  scene_start(&k, NL_RETENTION_INTEREST, 0, true);
  polls(&k, 61);
  CHECK(active_for(&k.w, "S", NULL, NL_INTEREST_NO_CONSUMERS));
  int n = world_polls_to_clear(&k.w, "S", NULL, NL_MESSAGES_STRANDED, 100);
  CHECK(!stranded(&k));
  CHECK(n >= 30 && n <= 40);
  world_free(&k.w);
}

/* The option: StrandedSeconds, 600 s unless set. */
static void test_stranded_option(void) {
  const nl_option *o = nl_option_find("strandedseconds");
  CHECK(o != NULL);
  nl_detect_params p;
  nl_detect_params_default(&p);
  CHECK(p.stranded_s == 600.0);
}

static const nl_test_case tests[] = {
    NL_TEST(test_stranded_no_consumer),
    NL_TEST(test_stranded_uncovered_subject),
    NL_TEST(test_stranded_reset),
    NL_TEST(test_stranded_unknown),
    NL_TEST(test_stranded_silent),
    NL_TEST(test_stranded_option),
};

NL_TEST_MAIN(tests)
