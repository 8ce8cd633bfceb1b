/* test_series.c: the longer history kept for charts (core/nl_series), and
 * the evidence text of notifications. */
#include "core/model/nl_finding.h"
#include "core/report/nl_series.h"
#include "nl_test.h"

#include <json-c/json.h>
#include <string.h>

#define SEC 1000000000LL

/* Polls within one 30 s step merge: the largest pending counts, the sum of
 * redeliveries; a poll offered twice counts once; the next step starts a
 * new entry. */
static void test_series_merges_polls_into_steps(void) {
  nl_series s = {0};
  int64_t start = 1700000010LL * SEC; /* A step starts here. */
  int64_t t0 = start + 5 * SEC;
  nl_series_add(&s, t0, 10, 3, 1);
  nl_series_add(&s, t0 + 5 * SEC, 40, 2, 2);
  nl_series_add(&s, t0 + 5 * SEC, 99, 99, 99); /* The same poll again. */
  nl_series_add(&s, t0 + 10 * SEC, 20, 5, 0);
  CHECK_EQ_U(s.n, 1);
  CHECK_EQ_U(s.steps[s.head].num_pending, 40);
  CHECK_EQ_U(s.steps[s.head].num_ack_pending, 5);
  CHECK_EQ_U(s.steps[s.head].redeliveries, 3);
  CHECK_EQ_U(s.steps[s.head].polls, 3);
  CHECK(s.steps[s.head].start_ns == start);
  nl_series_add(&s, t0 + 25 * SEC, 1, 1, 1);
  CHECK_EQ_U(s.n, 2);
  CHECK_EQ_U(s.steps[s.head].num_pending, 1);
  /* Saturation: a count beyond 32 bits is kept as the largest. */
  nl_series_add(&s, t0 + 60 * SEC, UINT64_MAX, 0, UINT64_MAX);
  CHECK_EQ_U(s.steps[s.head].num_pending, UINT32_MAX);
  CHECK_EQ_U(s.steps[s.head].redeliveries, UINT32_MAX);
}

/* An hour and more of polls keeps the latest hour, oldest first in JSON. */
static void test_series_keeps_the_latest_hour(void) {
  nl_series s = {0};
  int64_t t0 = 1700000010LL * SEC; /* A step starts here. */
  for (int i = 0; i < 3 * NL_SERIES_STEPS + 30; i++)
    nl_series_add(&s, t0 + i * 10 * SEC, (uint64_t)i, 0, 0);
  CHECK_EQ_U(s.n, NL_SERIES_STEPS);
  struct json_object *o = nl_series_object(&s);
  CHECK(o != NULL);
  struct json_object *steps = NULL, *v = NULL;
  CHECK(json_object_object_get_ex(o, "steps", &steps));
  CHECK_EQ_U(json_object_array_length(steps), NL_SERIES_STEPS);
  /* 130 steps of 3 polls: the newest holds polls 387..389, the oldest
   * kept is step 10 (polls 30..32). */
  json_object_object_get_ex(
      json_object_array_get_idx(steps, NL_SERIES_STEPS - 1), "num_pending", &v);
  CHECK_EQ_U(json_object_get_int(v), 3 * NL_SERIES_STEPS + 29);
  json_object_object_get_ex(json_object_array_get_idx(steps, 0), "num_pending",
                            &v);
  CHECK_EQ_U(json_object_get_int(v), 32);
  json_object_object_get_ex(o, "step_s", &v);
  CHECK_EQ_U(json_object_get_int(v), 30);
  json_object_put(o);
}

/* Evidence text cut to a message limit keeps whole items only and says
 * that some are left out; when all fit, none is marked. */
static void test_evidence_text_keeps_whole_items(void) {
  nl_finding f;
  nl_finding_start(&f, NL_NAK_STORM);
  nl_finding_add(&f, "naks_per_s_in_window", 1);
  nl_finding_add(&f, "naks_in_window", 5);
  nl_finding_add(&f, "window_s", 5);
  char buf[64];
  nl_finding_format_evidence(&f, buf, sizeof(buf));
  CHECK(strcmp(buf, "naks_per_s_in_window=1, naks_in_window=5, window_s=5") ==
        0);
  char small[48];
  nl_finding_format_evidence(&f, small, sizeof(small));
  CHECK(strcmp(small, "naks_per_s_in_window=1, naks_in_window=5, ...") == 0);
  char tiny[8];
  nl_finding_format_evidence(&f, tiny, sizeof(tiny));
  CHECK(strcmp(tiny, "...") == 0);
}

static const nl_test_case tests[] = {
    NL_TEST(test_series_merges_polls_into_steps),
    NL_TEST(test_series_keeps_the_latest_hour),
    NL_TEST(test_evidence_text_keeps_whole_items),
};

NL_TEST_MAIN(tests)
