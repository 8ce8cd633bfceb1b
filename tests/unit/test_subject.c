/* test_subject.c: subjects and their wildcards (core/model/nl_subject.c),
 * which streams the poll asks for subject counts, and the messages on
 * subjects no consumer takes; the reply of STREAM.INFO with
 * subjects_filter (nl_parse_subject_counts). Table-driven. */
#include "nl_test.h"

#include "core/model/nl_parse.h"
#include "core/model/nl_subject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *outer, *inner;
  bool covers;
} cover_cases[] = {
    {"a.b", "a.b", true},
    {"a.b", "a.c", false},
    {"a.b", "a.b.c", false},
    {"a.b.c", "a.b", false},
    {"a.*", "a.b", true},
    {"a.*", "a.b.c", false},
    {"a.*", "a", false},
    {"a.>", "a.b", true},
    {"a.>", "a.b.c", true},
    {"a.>", "a", false},
    {">", "a", true},
    {">", "a.b.c", true},
    {"*", "a", true},
    {"*", "a.b", false},
    {"a.*", "a.*", true},
    {"a.b", "a.*", false},
    {"a.*", "a.>", false},
    {"a.>", "a.*", true},
    {"a.>", "a.>", true},
    {"a.>", "a.*.c", true},
    {"a.*.c", "a.b.c", true},
    {"a.*.c", "a.b.d", false},
    {"*.b", "a.*", false},
    {"ab", "a", false},
    {"a", "ab", false},
    {"", "", true},
    /* A wildcard takes one token or more, never none. */
    {">", "", false},
    {"*", "", false},
    {"a.>", "a.", false},
    {"a.*", "a.", false},
};

static void test_subject_covers(void) {
  for (size_t i = 0; i < sizeof(cover_cases) / sizeof(cover_cases[0]); i++) {
    bool got = nl_subject_covers(cover_cases[i].outer, cover_cases[i].inner);
    if (got != cover_cases[i].covers) {
      nl_test_failures++;
      fprintf(stderr, "  covers(\"%s\", \"%s\") = %d\n", cover_cases[i].outer,
              cover_cases[i].inner, got);
    }
  }
  CHECK(nl_subject_matches("a.*", "a.b"));
  CHECK(!nl_subject_matches("a.b", "a.*.b"));
}

/* A set with one stream (retention r, subjects subj, msgs held) and
 * consumers whose filters are given ("" for an unfiltered one). */
typedef struct {
  nl_snapshot_set set;
  nl_stream_snap s;
  nl_consumer_snap c[4];
  char *filters[4][2];
  char *subjects[2];
  nl_subject_count counts[3];
} scene;

static void scene_make(scene *k, nl_retention r, const char *subj,
                       const char *const *filters, size_t n) {
  memset(k, 0, sizeof(*k));
  k->s.name = "S";
  k->s.retention = r;
  k->s.consumers_complete = true;
  k->s.msgs = 10;
  k->s.num_subjects = 3;
  k->subjects[0] = (char *)subj;
  k->s.subjects = k->subjects;
  k->s.n_subjects = 1;
  for (size_t i = 0; i < n; i++) {
    k->c[i].stream_index = 0;
    if (filters[i][0] != '\0') {
      k->filters[i][0] = (char *)filters[i];
      k->c[i].filters = k->filters[i];
      k->c[i].n_filters = 1;
      k->c[i].filtered = true;
    }
  }
  k->set.streams = &k->s;
  k->set.n_streams = 1;
  k->set.consumers = k->c;
  k->set.n_consumers = n;
}

static void test_subject_counts_wanted(void) {
  scene k;
  const char *ab[] = {"q.a", "q.b"};
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", ab, 2);
  CHECK(nl_subject_counts_wanted(&k.set, 0));
  /* A filter that covers the stream's subject: every message taken. */
  const char *all[] = {"q.a", "q.*"};
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", all, 2);
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  const char *none[] = {"q.a", ""};
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", none, 2);
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  /* No consumer: counted from the stream alone. */
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", ab, 0);
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  /* A limits stream, an empty one, one with too many subjects, one whose
   * consumers were not all read: not asked. */
  scene_make(&k, NL_RETENTION_LIMITS, "q.*", ab, 2);
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  scene_make(&k, NL_RETENTION_INTEREST, "q.*", ab, 2);
  CHECK(nl_subject_counts_wanted(&k.set, 0));
  k.s.msgs = 0;
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", ab, 2);
  k.s.num_subjects = NL_SUBJECT_COUNTS_MAX;
  CHECK(nl_subject_counts_wanted(&k.set, 0));
  k.s.num_subjects = NL_SUBJECT_COUNTS_MAX + 1;
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", ab, 2);
  k.s.consumers_complete = false;
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", ab, 2);
  k.c[1].filters_cut = true;
  CHECK(!nl_subject_counts_wanted(&k.set, 0));
}

static void test_subject_uncovered(void) {
  scene k;
  const char *ab[] = {"q.a", "q.b"};
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", ab, 2);
  k.counts[0] = (nl_subject_count){"q.a", 3};
  k.counts[1] = (nl_subject_count){"q.c", 4};
  k.counts[2] = (nl_subject_count){"q.d", 0};
  k.s.subject_counts = k.counts;
  k.s.n_subject_counts = 3;
  uint64_t subjects;
  const char *first;
  CHECK_EQ_U(nl_subject_uncovered(&k.set, 0, &subjects, &first), 4);
  CHECK_EQ_U(subjects, 1);
  CHECK(first != NULL && strcmp(first, "q.c") == 0);
  /* An unfiltered consumer takes all. */
  const char *none[] = {"q.a", ""};
  scene_make(&k, NL_RETENTION_WORKQUEUE, "q.*", none, 2);
  k.counts[0] = (nl_subject_count){"q.c", 4};
  k.s.subject_counts = k.counts;
  k.s.n_subject_counts = 1;
  CHECK_EQ_U(nl_subject_uncovered(&k.set, 0, &subjects, &first), 0);
  CHECK(first == NULL);
}

static const struct {
  const char *name, *json;
  int rc;
  size_t n;
} parse_cases[] = {
    {"two subjects",
     "{\"config\":{\"name\":\"S\"},\"state\":{\"subjects\":{\"q.a\":3,"
     "\"q.c\":4}}}",
     NL_PARSE_OK, 2},
    {"no subjects", "{\"config\":{\"name\":\"S\"},\"state\":{}}", NL_PARSE_OK,
     0},
    {"another stream",
     "{\"config\":{\"name\":\"T\"},\"state\":{\"subjects\":{\"q.a\":3}}}",
     NL_PARSE_BAD_JSON, 0},
    {"a negative count",
     "{\"config\":{\"name\":\"S\"},\"state\":{\"subjects\":{\"q.a\":-3}}}",
     NL_PARSE_BAD_JSON, 0},
    {"a count as text",
     "{\"config\":{\"name\":\"S\"},\"state\":{\"subjects\":{\"q.a\":\"3\"}}}",
     NL_PARSE_BAD_JSON, 0},
    {"an API error",
     "{\"error\":{\"code\":404,\"err_code\":10059,\"description\":\"stream "
     "not found\"}}",
     NL_PARSE_API_ERROR, 0},
    {"truncated", "{\"config\":{\"name\":\"S\"},\"state\":{\"subj",
     NL_PARSE_BAD_JSON, 0},
};

static void test_parse_subject_counts(void) {
  for (size_t i = 0; i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
    nl_stream_snap s = {0};
    s.name = strdup("S");
    char err[256] = "";
    int rc = nl_parse_subject_counts(
        parse_cases[i].json, strlen(parse_cases[i].json), &s, err, sizeof(err));
    if (rc != parse_cases[i].rc || s.n_subject_counts != parse_cases[i].n ||
        s.subject_counts_read != (rc == NL_PARSE_OK) ||
        (rc != NL_PARSE_OK && err[0] == '\0')) {
      nl_test_failures++;
      fprintf(stderr, "  case \"%s\": rc %d, %zu counts, err \"%s\"\n",
              parse_cases[i].name, rc, s.n_subject_counts, err);
    }
    nl_stream_snap_clear(&s);
  }
  /* More than NL_SUBJECT_COUNTS_MAX subjects: refused, not cut short. */
  char *big = malloc(40 * (NL_SUBJECT_COUNTS_MAX + 2));
  size_t n = (size_t)sprintf(big, "{\"config\":{\"name\":\"S\"},\"state\":"
                                  "{\"subjects\":{");
  for (int i = 0; i <= NL_SUBJECT_COUNTS_MAX; i++)
    n += (size_t)sprintf(big + n, "%s\"q.%d\":1", i ? "," : "", i);
  n += (size_t)sprintf(big + n, "}}}");
  nl_stream_snap s = {0};
  s.name = strdup("S");
  char err[256];
  CHECK(nl_parse_subject_counts(big, n, &s, err, sizeof(err)) ==
        NL_PARSE_BAD_JSON);
  CHECK(!s.subject_counts_read);
  nl_stream_snap_clear(&s);
  free(big);
}

static const nl_test_case tests[] = {
    NL_TEST(test_subject_covers),
    NL_TEST(test_subject_counts_wanted),
    NL_TEST(test_subject_uncovered),
    NL_TEST(test_parse_subject_counts),
};

NL_TEST_MAIN(tests)
