/* test_audit.c: the configuration audit rules (nl_audit), each with the
 * configurations that must raise it and the look-alikes that must not. */
#include "core/detect/nl_audit.h"
#include "core/detect/nl_classes.h"
#include "core/model/nl_expect.h"
#include "nl_test.h"

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* Appends a stream with safe defaults: limits retention, no limits, one
 * replica, single server, consumer list complete, one consumer. */
static size_t add_stream(nl_snapshot_set *set, const char *name) {
  nl_stream_snap *s = nl_snapshot_set_add_stream(set);
  s->name = strdup(name);
  s->max_msgs = -1;
  s->max_bytes = -1;
  s->replicas = 1;
  s->consumers_complete = true;
  s->consumer_count = 1;
  return set->n_streams - 1;
}

/* Appends a consumer with a safe configuration: durable pull, explicit
 * acks, ack_wait 30 s, max_deliver 5, max_ack_pending 1000. */
static nl_consumer_snap *add_consumer(nl_snapshot_set *set, size_t stream,
                                      const char *name) {
  nl_consumer_snap *c = nl_snapshot_set_add_consumer(set);
  c->stream = strdup(set->streams[stream].name);
  c->name = strdup(name);
  c->stream_index = stream;
  c->ack_policy = NL_ACK_EXPLICIT;
  c->ack_wait_ns = 30 * SEC;
  c->max_deliver = 5;
  c->max_ack_pending = 1000;
  c->durable = true;
  return c;
}

/* Runs the audit on every stream and checks that each finding is complete
 * (name, description, fix command, recommendation). */
static void audit(const nl_snapshot_set *set, const nl_stream_select *select,
                  nl_audit_result *r) {
  nl_audit_params p;
  nl_audit_params_default(&p);
  memset(r, 0, sizeof(*r));
  CHECK(nl_audit_run(set, select, &p, r) == 0);
  for (size_t i = 0; i < r->n; i++) {
    const nl_audit_finding *f = &r->items[i];
    CHECK(strcmp(nl_audit_class_name(f->cls), "UNKNOWN") != 0);
    CHECK(f->f.description[0] != '\0');
    CHECK(f->f.fix_command[0] != '\0');
    CHECK(strncmp(f->f.fix_command, "nats ", 5) == 0);
    CHECK(f->f.recommendation[0] != '\0');
    CHECK(f->f.cls == NL_CLASS_COUNT);
  }
}

/* Returns the finding of class cls about consumer (NULL: the stream
 * itself) of stream, or NULL; counts all such findings in *n. */
static const nl_audit_finding *find(const nl_audit_result *r,
                                    nl_audit_class cls, const char *stream,
                                    const char *consumer) {
  const nl_audit_finding *hit = NULL;
  for (size_t i = 0; i < r->n; i++) {
    const nl_audit_finding *f = &r->items[i];
    if (f->cls == cls && strcmp(f->stream, stream) == 0 &&
        ((consumer == NULL && f->consumer == NULL) ||
         (consumer && f->consumer && strcmp(f->consumer, consumer) == 0)))
      hit = f;
  }
  return hit;
}

static void test_audit_good_configs_are_silent(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "GOOD");
  add_consumer(&set, s, "plain");
  nl_consumer_snap *c = add_consumer(&set, s, "push");
  c->push = true;
  c->idle_heartbeat_ns = 5 * SEC;
  c = add_consumer(&set, s, "serial_ack_all");
  c->ack_policy = NL_ACK_ALL;
  c->max_ack_pending = 1;
  c = add_consumer(&set, s, "one_worker_ack_all");
  c->ack_policy = NL_ACK_ALL;
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "1");
  c = add_consumer(&set, s, "ephemeral_ack_none");
  c->ack_policy = NL_ACK_NONE;
  c->durable = false;
  c->max_deliver = -1;
  c = add_consumer(&set, s, "declared_fast");
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "10s");
  c = add_consumer(&set, s, "declared_dlq");
  c->max_deliver = 2;
  nl_consumer_snap_set_meta(c, "nats_lens.dead_letter", "orders-dlq app");
  c = add_consumer(&set, s, "unknown_keys");
  nl_consumer_snap_set_meta(c, "nats_lens.colour", "blue");
  nl_consumer_snap_set_meta(c, "other.max_processing", "1h");
  c = add_consumer(&set, s, "workers_fit");
  c->max_ack_pending = 4;
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "4");
  /* An interest stream with a consumer; a half-full limited stream; a
   * full stream that discards new messages; an R3 stream in a cluster. */
  s = add_stream(&set, "INTEREST");
  set.streams[s].retention = NL_RETENTION_INTEREST;
  add_consumer(&set, s, "c");
  s = add_stream(&set, "HALF");
  set.streams[s].max_msgs = 1000;
  set.streams[s].msgs = 500;
  set.streams[s].first_seq = 1;
  set.streams[s].last_seq = 500;
  c = add_consumer(&set, s, "c");
  c->num_pending = 500;
  c->delivered_stream_seq = 0;
  s = add_stream(&set, "NEWDISCARD");
  set.streams[s].max_msgs = 100;
  set.streams[s].msgs = 100;
  set.streams[s].discard_new = true;
  c = add_consumer(&set, s, "c");
  c->num_pending = 100;
  s = add_stream(&set, "R3");
  set.streams[s].replicas = 3;
  set.streams[s].cluster = strdup("C");
  add_consumer(&set, s, "c");
  /* A dead-letter stream for a consumer with a tiny max_deliver. */
  s = add_stream(&set, "DLQ");
  nl_stream_snap *d = &set.streams[s];
  d->subjects = calloc(1, sizeof(char *));
  d->subjects[0] = strdup("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.GOOD.*");
  d->n_subjects = 1;
  d->consumer_count = 0;
  c = add_consumer(&set, 0, "tiny_with_dlq");
  c->max_deliver = 2;

  nl_audit_result r;
  audit(&set, NULL, &r);
  for (size_t i = 0; i < r.n; i++)
    fprintf(stderr, "  unexpected %s %s/%s\n",
            nl_audit_class_name(r.items[i].cls), r.items[i].stream,
            r.items[i].consumer ? r.items[i].consumer : "-");
  CHECK_EQ_U(r.n, 0);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_ack_none(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "fire_and_forget");
  c->ack_policy = NL_ACK_NONE;
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_ACK_NONE, "S", "fire_and_forget");
  CHECK(f != NULL);
  CHECK_EQ_U(r.n, 1); /* The ack-based rules do not apply to AckNone. */
  if (f) {
    CHECK(f->f.severity == NL_SEVERITY_WARNING); /* As the plugin's class. */
    CHECK(strstr(f->f.fix_command, "--ack explicit") != NULL);
    CHECK(strstr(f->f.fix_command, "fire_and_forget_explicit") != NULL);
  }
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_ack_all_parallel(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "maybe");
  c->ack_policy = NL_ACK_ALL;
  c = add_consumer(&set, s, "waiting");
  c->ack_policy = NL_ACK_ALL;
  c->num_waiting = 3;
  c = add_consumer(&set, s, "group");
  c->ack_policy = NL_ACK_ALL;
  c->push = true;
  c->has_deliver_group = true;
  c->idle_heartbeat_ns = SEC;
  c = add_consumer(&set, s, "declared");
  c->ack_policy = NL_ACK_ALL;
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "4");
  c = add_consumer(&set, s, "single_push");
  c->ack_policy = NL_ACK_ALL;
  c->push = true;
  c->idle_heartbeat_ns = SEC;
  /* A pinned client (nats-server 2.11+) with standbys: their requests wait
   * unserved, so they show no parallel worker; declared workers still do. */
  c = add_consumer(&set, s, "pinned");
  c->ack_policy = NL_ACK_ALL;
  c->pinned_client = true;
  c->num_waiting = 3;
  c = add_consumer(&set, s, "pinned_declared");
  c->ack_policy = NL_ACK_ALL;
  c->pinned_client = true;
  c->num_waiting = 3;
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "2");
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f = find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "maybe");
  /* A warning in both forms (as the plugin's class); parallel_seen tells
   * them apart. */
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  CHECK(f != NULL && nl_finding_get(&f->f, "parallel_seen", -1) == 0);
  f = find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "waiting");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  CHECK(f != NULL && nl_finding_get(&f->f, "parallel_seen", -1) == 1);
  f = find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "group");
  CHECK(f != NULL && nl_finding_get(&f->f, "parallel_seen", -1) == 1);
  f = find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "declared");
  CHECK(f != NULL && nl_finding_get(&f->f, "parallel_seen", -1) == 1);
  if (f)
    CHECK(nl_finding_get(&f->f, "declared_workers", 0) == 4);
  CHECK(find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "single_push") == NULL);
  f = find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "pinned");
  CHECK(f != NULL && nl_finding_get(&f->f, "parallel_seen", -1) == 0);
  CHECK(f != NULL && nl_finding_get(&f->f, "pinned_client", 0) == 1);
  f = find(&r, NL_AUDIT_ACK_ALL_PARALLEL, "S", "pinned_declared");
  CHECK(f != NULL && nl_finding_get(&f->f, "parallel_seen", -1) == 1);
  CHECK_EQ_U(r.n, 6);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_max_deliver(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "unlimited");
  c->max_deliver = -1;
  c = add_consumer(&set, s, "backoff");
  c->max_deliver = 0;
  c->backoff_first_ns = SEC;
  c->backoff_steps = 7;
  c = add_consumer(&set, s, "tiny");
  c->max_deliver = 2;
  c = add_consumer(&set, s, "four");
  c->max_deliver = 4;
  c = add_consumer(&set, s, "caught");
  c->max_deliver = 1;
  /* A dead-letter stream that the selection leaves out still counts. */
  size_t d = add_stream(&set, "ALL_DLQ");
  set.streams[d].subjects = calloc(2, sizeof(char *));
  set.streams[d].subjects[0] = strdup("other.>");
  set.streams[d].subjects[1] =
      strdup("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.caught");
  set.streams[d].n_subjects = 2;
  char *only_s[] = {"S"};
  nl_stream_select select = {.include = only_s, .n_include = 1};
  nl_audit_result r;
  audit(&set, &select, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_MAX_DELIVER_UNLIMITED, "S", "unlimited");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  if (f)
    CHECK(strstr(f->f.fix_command, "--max-deliver 5") != NULL);
  f = find(&r, NL_AUDIT_MAX_DELIVER_UNLIMITED, "S", "backoff");
  CHECK(f != NULL);
  if (f) /* max_deliver must exceed the number of backoff steps. */
    CHECK(strstr(f->f.fix_command, "--max-deliver 8") != NULL);
  f = find(&r, NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER, "S", "tiny");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_CRITICAL);
  if (f)
    CHECK(strstr(f->f.fix_command,
                 "'$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.tiny'") !=
          NULL);
  CHECK(find(&r, NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER, "S", "four") == NULL);
  CHECK(find(&r, NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER, "S", "caught") == NULL);
  CHECK_EQ_U(r.n, 3);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_max_ack_pending_tiny(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "five");
  c->max_ack_pending = 5;
  c = add_consumer(&set, s, "declared_ok");
  c->max_ack_pending = 5;
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "4");
  c = add_consumer(&set, s, "declared_short");
  c->max_ack_pending = 5;
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "8");
  c = add_consumer(&set, s, "busy");
  c->max_ack_pending = 15;
  c->num_waiting = 20;
  c = add_consumer(&set, s, "unlimited");
  c->max_ack_pending = -1;
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_MAX_ACK_PENDING_TINY, "S", "five");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  if (f)
    CHECK(strstr(f->f.fix_command, "--max-pending 10") != NULL);
  CHECK(find(&r, NL_AUDIT_MAX_ACK_PENDING_TINY, "S", "declared_ok") == NULL);
  f = find(&r, NL_AUDIT_MAX_ACK_PENDING_TINY, "S", "declared_short");
  CHECK(f != NULL);
  if (f)
    CHECK(strstr(f->f.fix_command, "--max-pending 16") != NULL);
  f = find(&r, NL_AUDIT_MAX_ACK_PENDING_TINY, "S", "busy");
  CHECK(f != NULL);
  if (f)
    CHECK(nl_finding_get(&f->f, "needed", 0) == 20);
  CHECK_EQ_U(r.n, 3);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_ack_wait_below_processing(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "short");
  c->ack_wait_ns = 10 * SEC;
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "30s");
  c = add_consumer(&set, s, "equal");
  c->ack_wait_ns = 30 * SEC;
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "0.5m");
  c = add_consumer(&set, s, "backoff");
  c->ack_wait_ns = 60 * SEC;
  c->backoff_first_ns = 5 * SEC;
  c->backoff_steps = 3;
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "10s");
  c = add_consumer(&set, s, "fits");
  c->ack_wait_ns = 30 * SEC;
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "29s");
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING, "S", "short");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_CRITICAL);
  if (f) {
    CHECK(strcmp(f->f.fix_command, "nats consumer edit S short --wait 45s") ==
          0);
    CHECK(nl_finding_get(&f->f, "declared_max_processing_s", 0) == 30);
  }
  CHECK(find(&r, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING, "S", "equal") != NULL);
  f = find(&r, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING, "S", "backoff");
  CHECK(f != NULL);
  if (f)
    CHECK(strstr(f->f.fix_command, "--backoff-min 15s") != NULL);
  CHECK(find(&r, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING, "S", "fits") == NULL);
  CHECK_EQ_U(r.n, 3);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_interest_no_consumers(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "EVENTS");
  set.streams[s].retention = NL_RETENTION_INTEREST;
  set.streams[s].consumer_count = 0;
  set.streams[s].last_seq = 40;
  s = add_stream(&set, "LIMITS");
  set.streams[s].consumer_count = 0;
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_INTEREST_NO_CONSUMERS, "EVENTS", NULL);
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_CRITICAL);
  if (f)
    CHECK(strstr(f->f.fix_command, "nats consumer add EVENTS") != NULL);
  CHECK_EQ_U(r.n, 1);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_retention_below_backlog(void) {
  nl_snapshot_set set = {0};
  /* 300 published into max_msgs 100: 200 evicted unread. */
  size_t s = add_stream(&set, "LOST");
  set.streams[s].max_msgs = 100;
  set.streams[s].msgs = 100;
  set.streams[s].first_seq = 201;
  set.streams[s].last_seq = 300;
  nl_consumer_snap *c = add_consumer(&set, s, "slow");
  c->num_pending = 100;
  /* Full, and a filtered consumer's backlog fills 60 % of it. */
  s = add_stream(&set, "RISK");
  set.streams[s].max_msgs = 1000;
  set.streams[s].msgs = 950;
  set.streams[s].first_seq = 51;
  set.streams[s].last_seq = 1000;
  c = add_consumer(&set, s, "behind");
  c->filtered = true;
  c->delivered_stream_seq = 400;
  c->num_pending = 600;
  c = add_consumer(&set, s, "keeps_up");
  c->delivered_stream_seq = 990;
  c->num_pending = 10;
  /* Bytes limit: 90 % full, backlog 80 % of it. */
  s = add_stream(&set, "BYTES");
  set.streams[s].max_bytes = 10000;
  set.streams[s].bytes = 9500;
  set.streams[s].msgs = 95;
  set.streams[s].first_seq = 1;
  set.streams[s].last_seq = 95;
  c = add_consumer(&set, s, "c");
  c->num_pending = 80;
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_RETENTION_BELOW_BACKLOG, "LOST", "slow");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_CRITICAL);
  if (f) {
    CHECK(nl_finding_get(&f->f, "unread_evicted", 0) == 200);
    CHECK(strstr(f->f.fix_command, "nats stream edit LOST --max-msgs") != NULL);
  }
  f = find(&r, NL_AUDIT_RETENTION_BELOW_BACKLOG, "RISK", "behind");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  CHECK(find(&r, NL_AUDIT_RETENTION_BELOW_BACKLOG, "RISK", "keeps_up") == NULL);
  f = find(&r, NL_AUDIT_RETENTION_BELOW_BACKLOG, "BYTES", "c");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  if (f)
    CHECK(strstr(f->f.fix_command, "--max-bytes 20000") != NULL);
  CHECK_EQ_U(r.n, 3);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_r1_on_cluster(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "ONE");
  set.streams[s].cluster = strdup("east");
  s = add_stream(&set, "SINGLE_SERVER");
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f = find(&r, NL_AUDIT_R1_ON_CLUSTER, "ONE", NULL);
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  if (f) {
    CHECK(strcmp(f->f.fix_command, "nats stream edit ONE --replicas 3") == 0);
    CHECK(strstr(f->f.description, "east") != NULL);
  }
  CHECK_EQ_U(r.n, 1);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_push_no_heartbeat(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "push");
  c->push = true;
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f = find(&r, NL_AUDIT_PUSH_NO_HEARTBEAT, "S", "push");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  if (f)
    CHECK(strstr(f->f.fix_command, "--heartbeat") != NULL);
  CHECK_EQ_U(r.n, 1);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_invalid_expectation(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  nl_consumer_snap *c = add_consumer(&set, s, "typo");
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "thirty seconds");
  nl_consumer_snap_set_meta(c, "nats_lens.workers", "4");
  c->max_ack_pending = 3;
  nl_audit_result r;
  audit(&set, NULL, &r);
  const nl_audit_finding *f =
      find(&r, NL_AUDIT_INVALID_EXPECTATION, "S", "typo");
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  if (f) {
    CHECK(strstr(f->f.description, "max_processing") != NULL);
    CHECK(strstr(f->f.fix_command, "--metadata nats_lens.max_processing=") !=
          NULL);
  }
  /* The readable declaration still counts. */
  f = find(&r, NL_AUDIT_MAX_ACK_PENDING_TINY, "S", "typo");
  CHECK(f != NULL);
  if (f)
    CHECK(nl_finding_get(&f->f, "declared_workers", 0) == 4);
  CHECK_EQ_U(r.n, 2);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_unobservable_and_selection(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "PARTIAL");
  set.streams[s].consumers_complete = false;
  s = add_stream(&set, "IGNORED");
  set.streams[s].retention = NL_RETENTION_INTEREST;
  set.streams[s].consumer_count = 0;
  nl_consumer_snap *c = add_consumer(&set, s, "bad");
  c->ack_policy = NL_ACK_NONE;
  char *exclude[] = {"IGN*"};
  nl_stream_select select = {.exclude = exclude, .n_exclude = 1};
  nl_audit_result r;
  audit(&set, &select, &r);
  const nl_audit_finding *f = find(&r, NL_AUDIT_UNOBSERVABLE, "PARTIAL", NULL);
  CHECK(f != NULL && f->f.severity == NL_SEVERITY_WARNING);
  CHECK_EQ_U(r.n, 1);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static void test_audit_subject_capture(void) {
  nl_stream_snap s = {0};
  char *subjects[] = {"a.*.c", "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>",
                      "x"};
  s.subjects = subjects;
  s.n_subjects = 3;
  CHECK(nl_stream_captures(&s, "a.b.c"));
  CHECK(!nl_stream_captures(&s, "a.b.c.d"));
  CHECK(!nl_stream_captures(&s, "a.b"));
  CHECK(
      nl_stream_captures(&s, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S.C"));
  CHECK(!nl_stream_captures(&s, "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"));
  CHECK(nl_stream_captures(&s, "x"));
  CHECK(!nl_stream_captures(&s, "xy"));
  CHECK(!nl_stream_captures(&s, "x.y"));
  char *all[] = {">"};
  s.subjects = all;
  s.n_subjects = 1;
  CHECK(nl_stream_captures(&s, "anything.at.all"));
  s.n_subjects = 0;
  CHECK(!nl_stream_captures(&s, "a"));
}

static void test_audit_class_names(void) {
  for (int i = 0; i < NL_AUDIT_CLASS_COUNT; i++) {
    const char *n = nl_audit_class_name((nl_audit_class)i);
    CHECK(strcmp(n, "UNKNOWN") != 0);
    for (int j = 0; j < i; j++)
      CHECK(strcmp(n, nl_audit_class_name((nl_audit_class)j)) != 0);
    /* Audit classes never reuse a detector class name, except the
     * plugin class that reports the same rule (nl_audit_plugin_class). */
    for (int k = 0; k < NL_CLASS_COUNT; k++)
      if (k != (int)nl_class_of_audit_rule((nl_audit_class)i))
        CHECK(strcmp(n, nl_class_name((nl_class)k)) != 0);
  }
  CHECK(strcmp(nl_audit_class_name(NL_AUDIT_CLASS_COUNT), "UNKNOWN") == 0);
}

/* Every audit rule the plugin raises as a class has the class's severity,
 * so that the plugin and nats-lens-check never disagree; a stream reported
 * missing by STREAM.LIST is UNOBSERVABLE. */
static void test_audit_severity_matches_plugin_class(void) {
  nl_snapshot_set set = {0};
  size_t s = add_stream(&set, "S");
  set.streams[s].cluster = strdup("C1"); /* R1 on a cluster. */
  set.streams[s].consumers_complete = false;
  add_consumer(&set, s, "none")->ack_policy = NL_ACK_NONE;
  add_consumer(&set, s, "all")->ack_policy = NL_ACK_ALL;
  nl_consumer_snap *c = add_consumer(&set, s, "all_waiting");
  c->ack_policy = NL_ACK_ALL;
  c->num_waiting = 2;
  c = add_consumer(&set, s, "declared");
  c->ack_wait_ns = 2000000000LL;
  nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "5s");
  size_t in = add_stream(&set, "IN");
  set.streams[in].retention = NL_RETENTION_INTEREST;
  set.streams[in].consumer_count = 0;
  CHECK(nl_snapshot_set_add_missing(&set, "GONE") == 0);
  nl_audit_result r;
  audit(&set, NULL, &r);
  unsigned mapped = 0;
  for (size_t i = 0; i < r.n; i++) {
    nl_class cls = nl_class_of_audit_rule(r.items[i].cls);
    if (cls == NL_CLASS_COUNT)
      continue;
    mapped++;
    CHECK(r.items[i].f.severity == nl_class_severity(cls));
  }
  CHECK_EQ_U(mapped, 8);
  const nl_audit_finding *f = find(&r, NL_AUDIT_UNOBSERVABLE, "GONE", NULL);
  CHECK(f != NULL && nl_finding_get(&f->f, "stream_missing", 0) == 1);
  f = find(&r, NL_AUDIT_UNOBSERVABLE, "S", NULL);
  CHECK(f != NULL && nl_finding_get(&f->f, "stream_missing", 1) == 0);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

static const nl_test_case tests[] = {
    NL_TEST(test_audit_good_configs_are_silent),
    NL_TEST(test_audit_ack_none),
    NL_TEST(test_audit_ack_all_parallel),
    NL_TEST(test_audit_max_deliver),
    NL_TEST(test_audit_max_ack_pending_tiny),
    NL_TEST(test_audit_ack_wait_below_processing),
    NL_TEST(test_audit_interest_no_consumers),
    NL_TEST(test_audit_retention_below_backlog),
    NL_TEST(test_audit_r1_on_cluster),
    NL_TEST(test_audit_push_no_heartbeat),
    NL_TEST(test_audit_invalid_expectation),
    NL_TEST(test_audit_unobservable_and_selection),
    NL_TEST(test_audit_subject_capture),
    NL_TEST(test_audit_class_names),
    NL_TEST(test_audit_severity_matches_plugin_class),
};

NL_TEST_MAIN(tests)
