/* test_coverage.c: the central side's coverage of agent-per-server
 * deployments: a consumer no agent judges is unobservable, a leader move
 * is not, a deleted consumer is forgotten. */
#include "nl_test.h"

#include "core/report/nl_coverage.h"

#include <string.h>

#define SEC 1000000000LL

typedef struct {
  int unobservable;
  int again;
  int gone;
  int each;
  char host[32];
} changes;

static void on_change(void *ud, const char *pi, const char *consumer,
                      nl_coverage_change change, const char *host) {
  (void)pi, (void)consumer;
  changes *c = ud;
  c->unobservable += change == NL_COVERAGE_UNOBSERVABLE;
  c->again += change == NL_COVERAGE_JUDGED_AGAIN;
  c->gone += change == NL_COVERAGE_GONE;
  snprintf(c->host, sizeof(c->host), "%s", host ? host : "");
}

static void on_each(void *ud, const char *pi, const char *consumer,
                    nl_coverage_change change, const char *host) {
  (void)pi, (void)consumer, (void)change, (void)host;
  ((changes *)ud)->each++;
}

/* One interval of reports: judge (or NULL) judges prod-A-MP/w, the hosts
 * of copies report it led elsewhere, and every host in alive sends its
 * own values. */
static void report(nl_coverage *c, int64_t t, const char *judge,
                   const char *const *copies, const char *const *alive) {
  if (judge != NULL)
    CHECK(nl_coverage_judged(c, judge, "prod-A-MP", "w", true, t, SEC) == 0);
  for (; copies && *copies; copies++)
    CHECK(nl_coverage_judged(c, *copies, "prod-A-MP", "w", false, t, SEC) == 0);
  for (; alive && *alive; alive++)
    CHECK(nl_coverage_host(c, *alive, t, SEC) == 0);
}

/* R3: the leader's agent dies while the server still leads: the copies
 * are still reported, nobody judges: unobservable after two intervals,
 * naming the host that last judged it; judged again once h2 leads. */
static void test_coverage_agent_down(void) {
  nl_coverage *c = nl_coverage_create(2);
  const char *copies[] = {"h2", "h3", NULL};
  const char *all[] = {"h1", "h2", "h3", NULL}, *two[] = {"h2", "h3", NULL};
  changes ch = {0};
  int64_t t = 1700000000LL * SEC;
  for (int i = 0; i < 3; i++, t += SEC) {
    report(c, t, "h1", copies, all);
    nl_coverage_check(c, t, on_change, on_each, &ch);
  }
  CHECK_EQ_U(ch.unobservable + ch.again + ch.gone, 0);
  int polls = 0;
  for (; polls < 10 && ch.unobservable == 0; polls++, t += SEC) {
    report(c, t, NULL, copies, two);
    nl_coverage_check(c, t, on_change, on_each, &ch);
  }
  CHECK_EQ_U(ch.unobservable, 1);
  CHECK_EQ_U(polls, 3); /* Judged last at t0 + 2 s; overdue past 2.5 s. */
  CHECK(strcmp(ch.host, "h1") == 0);
  size_t hosts, judged, unobs;
  nl_coverage_counts(c, &hosts, &judged, &unobs);
  CHECK_EQ_U(hosts, 2);
  CHECK_EQ_U(judged, 0);
  CHECK_EQ_U(unobs, 1);
  report(c, t, NULL, copies, two);
  nl_coverage_check(c, t, on_change, on_each, &ch);
  CHECK_EQ_U(ch.unobservable, 1); /* Once, not every check. */
  CHECK(ch.each >= 2);
  const char *copy1[] = {"h3", NULL};
  t += SEC;
  report(c, t, "h2", copy1, two);
  nl_coverage_check(c, t, on_change, on_each, &ch);
  CHECK_EQ_U(ch.again, 1);
  CHECK(strcmp(ch.host, "h2") == 0);
  nl_coverage_free(c);
}

/* A leader move from h1 to h2 with a poll's gap: never unobservable. An
 * R1 consumer whose only host goes silent is. A consumer deleted while
 * every host still sends is forgotten without a word. */
static void test_coverage_move_r1_deleted(void) {
  nl_coverage *c = nl_coverage_create(2);
  const char *all[] = {"h1", "h2", "h3", NULL};
  const char *h2h3[] = {"h2", "h3", NULL}, *h1h3[] = {"h1", "h3", NULL};
  changes ch = {0};
  int64_t t = 1700000000LL * SEC;
  report(c, t, "h1", h2h3, all);
  nl_coverage_check(c, t, on_change, NULL, &ch);
  t += SEC;
  report(c, t, NULL, (const char *[]){"h3", NULL}, all); /* Mid-election. */
  nl_coverage_check(c, t, on_change, NULL, &ch);
  for (int i = 0; i < 5; i++) {
    t += SEC;
    report(c, t, "h2", h1h3, all);
    nl_coverage_check(c, t, on_change, NULL, &ch);
  }
  CHECK_EQ_U(ch.unobservable + ch.again + ch.gone, 0);
  /* Deleted: no host reports it, every host still sends. */
  for (int i = 0; i < 5; i++) {
    t += SEC;
    report(c, t, NULL, NULL, all);
    nl_coverage_check(c, t, on_change, NULL, &ch);
  }
  CHECK_EQ_U(ch.unobservable + ch.again + ch.gone, 0);
  size_t hosts, judged, unobs;
  nl_coverage_counts(c, &hosts, &judged, &unobs);
  CHECK_EQ_U(judged + unobs, 0);

  /* R1 on h1, then h1's collectd stops. */
  t += SEC;
  report(c, t, "h1", NULL, all);
  nl_coverage_check(c, t, on_change, NULL, &ch);
  for (int i = 0; i < 5; i++) {
    t += SEC;
    report(c, t, NULL, NULL, h2h3);
    nl_coverage_check(c, t, on_change, NULL, &ch);
  }
  CHECK_EQ_U(ch.unobservable, 1);
  CHECK(strcmp(ch.host, "h1") == 0);
  nl_coverage_free(c);
}

/* The leader moves to a server whose agent is down: the old leader's agent
 * is alive and reports a copy (0), nobody judges it: unobservable, though
 * the host that last judged it still sends. */
static void test_coverage_moved_to_silent_agent(void) {
  nl_coverage *c = nl_coverage_create(2);
  const char *h1h3[] = {"h1", "h3", NULL};
  const char *h3[] = {"h3", NULL};
  changes ch = {0};
  int64_t t = 1700000000LL * SEC;
  report(c, t, "h1", h3, h1h3);
  nl_coverage_check(c, t, on_change, NULL, &ch);
  for (int i = 0; i < 5; i++) {
    t += SEC;
    report(c, t, NULL, h1h3, h1h3);
    nl_coverage_check(c, t, on_change, NULL, &ch);
  }
  CHECK_EQ_U(ch.unobservable, 1);
  CHECK(strcmp(ch.host, "h1") == 0);
  CHECK_EQ_U(ch.gone, 0);
  nl_coverage_free(c);
}

static const nl_test_case tests[] = {
    NL_TEST(test_coverage_agent_down),
    NL_TEST(test_coverage_move_r1_deleted),
    NL_TEST(test_coverage_moved_to_silent_agent),
};

NL_TEST_MAIN(tests)
