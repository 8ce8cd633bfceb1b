/* test_poll.c: paging, selection and failures of one poll, against a fake
 * server that answers from generated JSON. */
#include "jsapi/nl_poll.h"
#include "nl_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned n_consumers;     /* Consumers of stream "BIG". */
  bool lie_total;           /* Report total = page size (2.9 cluster bug). */
  bool fail_consumers;      /* CONSUMER.LIST of "BIG" times out. */
  const char *extra_stream; /* A further stream name, may be hostile. */
  bool missing_stream;      /* STREAM.LIST as a cluster with a stream down. */
  bool offline_stream;      /* The same, GONE left out of both lists. */
  bool repeat_across_pages; /* Each page of BIG repeats the entry before
                               it (a consumer created meanwhile). */
  /* BIG is a work queue of "big.*" holding 7 messages whose consumers
   * take "big.a" only; its subject counts fail with fail_info. */
  bool work_queue, fail_info;
  /* $JS.API.INFO answers with an error (an account without JetStream). */
  bool fail_account;
  unsigned requests;
  char subjects[64][128];
} fake_server;

static char *append(char *buf, size_t *len, size_t *cap, const char *s) {
  size_t n = strlen(s);
  if (*len + n + 1 > *cap) {
    *cap = (*len + n + 1) * 2;
    buf = realloc(buf, *cap);
  }
  memcpy(buf + *len, s, n + 1);
  *len += n;
  return buf;
}

static int fake_request(void *ctx, const char *subject, const char *payload,
                        char **reply, size_t *reply_len, char *err,
                        size_t errlen) {
  fake_server *f = ctx;
  if (f->requests < 64)
    snprintf(f->subjects[f->requests], 128, "%s %s", subject, payload);
  f->requests++;
  unsigned long long offset = 0;
  sscanf(payload, "{\"offset\":%llu}", &offset);
  char item[512];
  size_t len = 0, cap = 0;
  char *buf = NULL;
  if (strcmp(subject, "$JS.API.STREAM.LIST") == 0 &&
      (f->missing_stream || f->offline_stream)) {
    /* A clustered server pages through all stream names, sorted (BIG, GONE,
     * ZED), and reports GONE, whose leader is down, in "missing" instead of
     * "streams"; total counts every stream. */
    static const char *all[] = {"BIG", "GONE", "ZED"};
    buf = append(buf, &len, &cap,
                 "{\"total\":3,\"offset\":0,\"limit\":256,\"streams\":[");
    bool gone = false, first = true;
    for (unsigned long long i = offset; i < 3; i++) {
      if (strcmp(all[i], "GONE") == 0) {
        gone = !f->offline_stream;
        continue;
      }
      snprintf(item, sizeof(item),
               "%s{\"config\":{\"name\":\"%s\"},"
               "\"state\":{}}",
               first ? "" : ",", all[i]);
      buf = append(buf, &len, &cap, item);
      first = false;
    }
    buf = append(buf, &len, &cap, gone ? "],\"missing\":[\"GONE\"]}" : "]}");
  } else if (strcmp(subject, "$JS.API.STREAM.LIST") == 0) {
    snprintf(item, sizeof(item),
             "{\"total\":%d,\"offset\":%llu,\"limit\":256,\"streams\":[",
             f->extra_stream ? 3 : 2, offset);
    buf = append(buf, &len, &cap, item);
    if (offset == 0 && f->work_queue)
      buf = append(buf, &len, &cap,
                   "{\"config\":{\"name\":\"BIG\",\"retention\":"
                   "\"workqueue\",\"subjects\":[\"big.*\"]},\"state\":"
                   "{\"messages\":7,\"num_subjects\":2,\"consumer_count\":"
                   "1}},"
                   "{\"config\":{\"name\":\"skip_me\"},\"state\":{}}");
    else if (offset == 0)
      buf = append(buf, &len, &cap,
                   "{\"config\":{\"name\":\"BIG\"},\"state\":{}},"
                   "{\"config\":{\"name\":\"skip_me\"},\"state\":{}}");
    if (f->extra_stream && offset == 0) {
      snprintf(item, sizeof(item),
               ",{\"config\":{\"name\":\"%s\"},\"state\":{}}", f->extra_stream);
      buf = append(buf, &len, &cap, item);
    }
    buf = append(buf, &len, &cap, "]}");
  } else if (strcmp(subject, "$JS.API.CONSUMER.LIST.BIG") == 0) {
    if (f->fail_consumers) {
      snprintf(err, errlen, "no reply within 100 ms");
      return -1;
    }
    unsigned end =
        offset + 256 < f->n_consumers ? offset + 256 : f->n_consumers;
    snprintf(item, sizeof(item),
             "{\"total\":%u,\"offset\":%llu,\"limit\":256,\"consumers\":[",
             f->lie_total ? 256 : f->n_consumers, offset);
    buf = append(buf, &len, &cap, item);
    unsigned from = f->repeat_across_pages && offset > 0 ? offset - 1 : offset;
    for (unsigned i = from; i < end; i++) {
      snprintf(item, sizeof(item),
               "%s{\"name\":\"c%u\",\"config\":{\"ack_wait\":30000000000%s},"
               "\"delivered\":{},\"ack_floor\":{}}",
               i == from ? "" : ",", i,
               f->work_queue ? ",\"filter_subject\":\"big.a\"" : "");
      buf = append(buf, &len, &cap, item);
    }
    buf = append(buf, &len, &cap, "]}");
  } else if (strcmp(subject, "$JS.API.STREAM.INFO.BIG") == 0 &&
             strcmp(payload, "{\"subjects_filter\":\">\"}") == 0) {
    if (f->fail_info) {
      snprintf(err, errlen, "no reply within 100 ms");
      return -1;
    }
    buf = append(buf, &len, &cap,
                 "{\"config\":{\"name\":\"BIG\"},\"state\":{\"subjects\":"
                 "{\"big.a\":3,\"big.c\":4}}}");
  } else if (strcmp(subject, "$JS.API.INFO") == 0) {
    buf = append(buf, &len, &cap,
                 f->fail_account
                     ? "{\"error\":{\"code\":503,\"err_code\":10039,"
                       "\"description\":\"jetstream not enabled for "
                       "account\"}}"
                     : "{\"memory\":0,\"storage\":700,\"reserved_memory\":0,"
                       "\"reserved_storage\":0,\"limits\":{\"max_memory\":"
                       "-1,\"max_storage\":1000}}");
  } else {
    buf = append(buf, &len, &cap,
                 "{\"total\":0,\"offset\":0,\"limit\":256,\"consumers\":[]}");
  }
  *reply = buf;
  *reply_len = len;
  return 0;
}

static char *exclude_globs[] = {"skip_*"};

static void test_poll_pages_through_consumers(void) {
  fake_server f = {.n_consumers = 600};
  nl_poll_config cfg = {.select = {.exclude = exclude_globs, .n_exclude = 1},
                        .account_info = true};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK_EQ_U(set.n_streams, 1);
  CHECK_EQ_U(set.n_consumers, 600);
  /* 1 stream list + ceil(600 / 256) consumer pages + the account. */
  CHECK_EQ_U(stats.requests, 5);
  CHECK_EQ_U(stats.errors, 0);
  CHECK(strcmp(f.subjects[4], "$JS.API.INFO ") == 0);
  CHECK(set.pools_read);
  CHECK_EQ_U(set.n_pools, 1);
  CHECK_EQ_U(set.pools[0].limit, 1000);
  CHECK_EQ_U(set.pools[0].used, 700);
  CHECK(set.streams[0].consumers_complete);
  CHECK(strstr(f.subjects[3], "{\"offset\":512}") != NULL);
  nl_snapshot_set_clear(&set);
}

/* A work queue whose consumers' filters leave a subject untaken: the
 * poll asks for its subject counts (after its consumers); a failure is an
 * error of the poll and leaves them unread. */
static void test_poll_reads_subject_counts(void) {
  for (int fail = 0; fail < 2; fail++) {
    fake_server f = {.n_consumers = 2, .work_queue = true, .fail_info = fail};
    nl_poll_config cfg = {.select = {.exclude = exclude_globs, .n_exclude = 1}};
    nl_snapshot_set set = {0};
    nl_poll_stats stats;
    CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
    CHECK_EQ_U(stats.requests, 3);
    CHECK(strcmp(f.subjects[2],
                 "$JS.API.STREAM.INFO.BIG {\"subjects_filter\":\">\"}") == 0);
    CHECK_EQ_U(stats.errors, fail ? 1 : 0);
    CHECK(set.streams[0].subject_counts_read == !fail);
    CHECK_EQ_U(set.streams[0].n_subject_counts, fail ? 0 : 2);
    nl_snapshot_set_clear(&set);
  }
  /* Not a work queue: not asked. */
  fake_server f = {.n_consumers = 2};
  nl_poll_config cfg = {.select = {.exclude = exclude_globs, .n_exclude = 1}};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK_EQ_U(stats.requests, 2);
  nl_snapshot_set_clear(&set);
}

/* An account information the server refuses is kept apart from the poll's
 * errors (the streams were read and are judged: no pools at that poll);
 * not asked for, it is not requested. */
static void test_poll_account_error_is_kept_apart(void) {
  fake_server f = {.n_consumers = 2, .fail_account = true};
  nl_poll_config cfg = {.account_info = true};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK_EQ_U(set.n_streams, 2);
  CHECK(!set.pools_read);
  CHECK_EQ_U(set.n_pools, 0);
  CHECK_EQ_U(stats.errors, 0);
  CHECK(stats.first_error[0] == '\0');
  CHECK(strstr(stats.account_error, "$JS.API.INFO: API error 503") != NULL);
  uint64_t asked = stats.requests;
  nl_snapshot_set_clear(&set);
  cfg.account_info = false;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK_EQ_U(stats.requests, asked - 1);
  CHECK(stats.account_error[0] == '\0');
  nl_snapshot_set_clear(&set);
}

/* Pages shifted by a consumer created between two requests repeat an
 * entry: each consumer is kept once, in order. */
static void test_poll_drops_repeated_consumers(void) {
  fake_server f = {.n_consumers = 600, .repeat_across_pages = true};
  nl_poll_config cfg = {.select = {.exclude = exclude_globs, .n_exclude = 1}};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK(f.requests >= 4); /* The pages were read, with their repeats. */
  CHECK_EQ_U(set.n_consumers, 600);
  for (size_t i = 0; i < set.n_consumers; i++) {
    char want[16];
    snprintf(want, sizeof(want), "c%zu", i);
    CHECK(strcmp(set.consumers[i].name, want) == 0);
  }
  nl_snapshot_set_clear(&set);
}

static void test_poll_pages_past_a_lying_total(void) {
  /* nats-server < 2.9.21 in a cluster reports total = 256 for CONSUMER.LIST;
   * the poll must not stop after the first page. */
  fake_server f = {.n_consumers = 300, .lie_total = true};
  nl_poll_config cfg = {0};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK_EQ_U(set.n_consumers, 300);
  nl_snapshot_set_clear(&set);
}

static void test_poll_failed_consumer_list_marks_stream_incomplete(void) {
  fake_server f = {.n_consumers = 10, .fail_consumers = true};
  nl_poll_config cfg = {0};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  CHECK_EQ_U(stats.errors, 1);
  CHECK_EQ_U(stats.streams_incomplete, 1);
  CHECK(!set.streams[0].consumers_complete);
  CHECK(set.streams[1].consumers_complete);
  CHECK(strstr(stats.first_error, "CONSUMER.LIST.BIG") != NULL);
  nl_snapshot_set_clear(&set);
}

/* Checks that the clustered stream list gave BIG and ZED, each once. */
static void check_big_and_zed_once(const nl_snapshot_set *set) {
  CHECK_EQ_U(set->n_streams, 2);
  CHECK(strcmp(set->streams[0].name, "BIG") == 0);
  CHECK(strcmp(set->streams[1].name, "ZED") == 0);
}

static void test_poll_pages_count_missing_streams(void) {
  /* The next page starts after the missing entries too: asking again from
   * offset 2 would list ZED a second time (and wait again for GONE). */
  fake_server f = {.n_consumers = 1, .missing_stream = true};
  nl_poll_config cfg = {0};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  check_big_and_zed_once(&set);
  CHECK_EQ_U(set.n_missing_streams, 1);
  CHECK_EQ_U(stats.streams_incomplete, 1);
  /* One stream list page, then one consumer list per listed stream. */
  CHECK_EQ_U(stats.requests, 3);
  nl_snapshot_set_clear(&set);
}

static void test_poll_short_stream_list(void) {
  /* GONE is counted in the total but neither listed nor missing: the next
   * page (offset 2) repeats ZED, which must be listed once, and the poll
   * says the list was short. */
  fake_server f = {.n_consumers = 1, .offline_stream = true};
  nl_poll_config cfg = {0};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  check_big_and_zed_once(&set);
  CHECK_EQ_U(set.n_missing_streams, 0);
  CHECK(set.stream_list_short);
  CHECK_EQ_U(stats.streams_incomplete, 1);
  nl_snapshot_set_clear(&set);
}

static void test_poll_never_requests_hostile_subjects(void) {
  /* A stream name with subject wildcards must not become a request. */
  fake_server f = {.n_consumers = 1, .extra_stream = "x.>"};
  nl_poll_config cfg = {0};
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  CHECK(nl_poll_run(&cfg, fake_request, &f, &set, &stats) == 0);
  for (unsigned i = 0; i < f.requests && i < 64; i++)
    CHECK(strstr(f.subjects[i], ">") == NULL);
  CHECK_EQ_U(stats.streams_incomplete, 1);
  nl_snapshot_set_clear(&set);
}

static void test_poll_stream_globs(void) {
  char *inc[] = {"ORD*", "PAY"};
  char *exc[] = {"ORDERS_TEST"};
  nl_stream_select cfg = {
      .include = inc, .n_include = 2, .exclude = exc, .n_exclude = 1};
  CHECK(nl_stream_selected(&cfg, "ORDERS"));
  CHECK(nl_stream_selected(&cfg, "PAY"));
  CHECK(!nl_stream_selected(&cfg, "PAYMENTS"));
  CHECK(!nl_stream_selected(&cfg, "ORDERS_TEST"));
  nl_stream_select all = {0};
  CHECK(nl_stream_selected(&all, "anything"));
  CHECK(nl_stream_selected(NULL, "anything"));
}

static const nl_test_case tests[] = {
    NL_TEST(test_poll_pages_through_consumers),
    NL_TEST(test_poll_reads_subject_counts),
    NL_TEST(test_poll_account_error_is_kept_apart),
    NL_TEST(test_poll_drops_repeated_consumers),
    NL_TEST(test_poll_pages_past_a_lying_total),
    NL_TEST(test_poll_failed_consumer_list_marks_stream_incomplete),
    NL_TEST(test_poll_pages_count_missing_streams),
    NL_TEST(test_poll_short_stream_list),
    NL_TEST(test_poll_never_requests_hostile_subjects),
    NL_TEST(test_poll_stream_globs),
};

NL_TEST_MAIN(tests)
