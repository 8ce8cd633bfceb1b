/* test_fixture_versions.c: the replies recorded from every nats-server
 * version of the matrix (tests/fixtures/<version>/, written by
 * tests/tools/record_fixtures.sh), read by the real parsers. */
#include "core/nl_advisory.h"
#include "core/nl_parse.h"
#include "nl_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when name is a version directory's name: digits and dots. */
static bool version_name(const char *name) {
  if (name[0] < '0' || name[0] > '9')
    return false;
  for (const char *p = name; *p != '\0'; p++)
    if ((*p < '0' || *p > '9') && *p != '.')
      return false;
  return true;
}

/* Reads fixture file of version dir v; NULL (and a failed check) when it
 * is missing. */
static char *read_version(const char *v, const char *file, size_t *len) {
  char name[256];
  snprintf(name, sizeof(name), "%s/%s", v, file);
  char *text = nl_test_read_fixture(name, len);
  CHECK(text != NULL);
  return text;
}

static const nl_consumer_snap *consumer(const nl_snapshot_set *set,
                                        const char *name) {
  for (size_t i = 0; i < set->n_consumers; i++)
    if (strcmp(set->consumers[i].name, name) == 0)
      return &set->consumers[i];
  return NULL;
}

/* Parses one LIST reply of version v into set; returns its page. A
 * consumer list is of the set's first stream, added when the set has
 * none. */
static nl_page_info parse_list(const char *v, const char *file, bool streams,
                               nl_snapshot_set *set, int want_rc) {
  nl_page_info page = {0};
  if (!streams && set->n_streams == 0) {
    nl_stream_snap *s = nl_snapshot_set_add_stream(set);
    CHECK(s != NULL);
    if (s == NULL)
      return page;
    s->name = strdup("FX");
  }
  size_t len;
  char err[256];
  char *text = read_version(v, file, &len);
  if (text == NULL)
    return page;
  int rc =
      streams
          ? nl_parse_stream_list(text, len, set, &page, err, sizeof(err))
          : nl_parse_consumer_list(text, len, 0, set, &page, err, sizeof(err));
  CHECK(rc == want_rc);
  free(text);
  return page;
}

/* The facts every version's recording must show (the objects of
 * record_fixtures.sh). */
static void check_version(const char *v, int major, int minor) {
  nl_snapshot_set set = {0};
  nl_page_info page = parse_list(v, "stream_list.json", true, &set, 0);
  CHECK_EQ_U(set.n_streams, 5);
  CHECK_EQ_U(page.total, 5);
  bool interest = false, workqueue = false, age = false;
  for (size_t i = 0; i < set.n_streams; i++) {
    interest |= set.streams[i].retention == NL_RETENTION_INTEREST;
    workqueue |= set.streams[i].retention == NL_RETENTION_WORKQUEUE;
    age |= set.streams[i].max_age_ns == 3600000000000LL;
  }
  CHECK(interest && workqueue && age);
  nl_snapshot_set_clear(&set);

  parse_list(v, "consumer_list.json", false, &set, 0);
  CHECK_EQ_U(set.n_consumers, 7);
  const nl_consumer_snap *pull = consumer(&set, "PULL");
  const nl_consumer_snap *bound = consumer(&set, "PUSH_BOUND");
  const nl_consumer_snap *idle = consumer(&set, "PUSH_IDLE");
  const nl_consumer_snap *none = consumer(&set, "ACK_NONE");
  const nl_consumer_snap *all = consumer(&set, "ACK_ALL");
  const nl_consumer_snap *backoff = consumer(&set, "BACKOFF");
  const nl_consumer_snap *filtered = consumer(&set, "FILTERED");
  CHECK(pull && bound && idle && none && all && backoff && filtered);
  if (pull && bound && idle && none && all && backoff && filtered) {
    CHECK(!pull->push && pull->ack_policy == NL_ACK_EXPLICIT);
    CHECK(pull->max_ack_pending == 100 && pull->ack_last_ns > 0);
    CHECK(bound->push && bound->push_bound);
    CHECK(idle->push && !idle->push_bound && idle->has_deliver_group);
    CHECK_EQ_U(idle->num_pending, 20);
    CHECK(none->ack_policy == NL_ACK_NONE);
    CHECK(all->ack_policy == NL_ACK_ALL);
    CHECK(filtered->filtered);
    /* The server sets ack_wait from backoff[0]. */
    CHECK_EQ_U(backoff->backoff_steps, 3);
    CHECK(backoff->ack_wait_ns == 1000000000LL);
    CHECK_EQ_U(backoff->num_redelivered, 3);
    CHECK(!pull->paused && !backoff->paused);
  }
  nl_snapshot_set_clear(&set);

  /* Paging: 300 consumers in pages of 256. */
  nl_page_info p0 = parse_list(v, "consumer_list_page0.json", false, &set, 0);
  nl_page_info p1 = parse_list(v, "consumer_list_page1.json", false, &set, 0);
  CHECK_EQ_U(p0.total, 300);
  CHECK_EQ_U(p0.n_items, 256);
  CHECK_EQ_U(p1.n_items, 44);
  CHECK_EQ_U(set.n_consumers, 300);
  nl_snapshot_set_clear(&set);
  parse_list(v, "consumer_list_empty.json", false, &set, 0);
  CHECK_EQ_U(set.n_consumers, 0);
  parse_list(v, "api_error_no_stream.json", false, &set, NL_PARSE_API_ERROR);
  nl_snapshot_set_clear(&set);

  /* The API audit advisory is not a consumer advisory on any version. */
  size_t len;
  char err[256];
  char *audit = read_version(v, "advisory_api_audit.json", &len);
  if (audit != NULL) {
    nl_advisory a;
    CHECK(nl_advisory_parse(NULL, audit, len, &a, err, sizeof(err)) == -1);
    free(audit);
  }

  /* From 2.11 a paused consumer says so, with the time left. */
  bool pausing = major > 2 || (major == 2 && minor >= 11);
  char name[256];
  snprintf(name, sizeof(name), "%s/consumer_info_paused.json", v);
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", nl_test_fixture_dir, name);
  FILE *f = fopen(path, "rb");
  CHECK((f != NULL) == pausing);
  if (f != NULL) {
    fclose(f);
    char *info = nl_test_read_fixture(name, &len);
    nl_stream_snap *s = nl_snapshot_set_add_stream(&set);
    if (s != NULL && info != NULL) {
      s->name = strdup("FX_AGE");
      CHECK(nl_parse_consumer_info(info, len, 0, &set, err, sizeof(err)) ==
            NL_PARSE_OK);
      const nl_consumer_snap *c = consumer(&set, "PAUSED");
      CHECK(c != NULL && c->paused && c->pause_remaining_ns > 0);
    }
    free(info);
    nl_snapshot_set_clear(&set);
  }
}

void test_fixture_versions(void) {
  DIR *d = opendir(nl_test_fixture_dir);
  CHECK(d != NULL);
  if (d == NULL)
    return;
  int versions = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int major = 0, minor = 0;
    if (!version_name(e->d_name) ||
        sscanf(e->d_name, "%d.%d", &major, &minor) != 2)
      continue;
    int before = nl_test_failures;
    check_version(e->d_name, major, minor);
    if (nl_test_failures != before)
      fprintf(stderr, "  fixtures of nats-server %s\n", e->d_name);
    versions++;
  }
  closedir(d);
  /* 2.9.10 and at least one newer version. */
  CHECK(versions >= 2);
}
