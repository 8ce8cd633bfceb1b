/* test_advisory.c: advisory parsing and queueing, and the classes beyond the
 * five (advisory-driven and polled), on the recorded 2.9.10 advisories and
 * synthetic poll sequences. */
#include "core/detect/nl_slow_processing.h"
#include "core/model/nl_advised.h"
#include "core/nl_engine.h"
#include "jsapi/nl_advisory_fetch.h"
#include "jsapi/nl_advisory_queue.h"
#include "nl_fixture.h"
#include "nl_test.h"
#include "nl_world.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Parses a fixture; returns the parse status. */
static int parse_fixture(const char *name, const char *subject,
                         nl_advisory *a) {
  size_t len = 0;
  char *text = nl_test_read_fixture(name, &len);
  if (text == NULL)
    return -2;
  char err[256];
  int rc = nl_advisory_parse(subject, text, len, a, err, sizeof(err));
  free(text);
  return rc;
}

static void test_advisory_parse_fixtures(void) {
  nl_advisory a;
  CHECK(parse_fixture("advisory_max_deliver.json",
                      "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S4M.C",
                      &a) == 0);
  CHECK(a.kind == NL_ADV_MAX_DELIVER);
  CHECK(strcmp(a.stream, "S4M") == 0 && strcmp(a.consumer, "C") == 0);
  CHECK_EQ_U(a.stream_seq, 5);
  CHECK_EQ_U(a.deliveries, 5);
  CHECK(a.timestamp_ns > 0);
  CHECK(parse_fixture("advisory_nak.json",
                      "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.S4.C", &a) == 0);
  CHECK(a.kind == NL_ADV_NAK);
  CHECK_EQ_U(a.stream_seq, 5);
  CHECK_EQ_U(a.consumer_seq, 5);
  CHECK_EQ_U(a.deliveries, 1);
  CHECK(parse_fixture("advisory_terminated.json", NULL, &a) == 0);
  CHECK(a.kind == NL_ADV_TERMINATED);
  CHECK(!a.removed_from_stream && a.reason[0] == '\0');
  /* 2.9.10 gives no reason for a message removed by limits either. */
  CHECK(parse_fixture("advisory_terminated_limits.json", NULL, &a) == 0);
  CHECK(a.kind == NL_ADV_TERMINATED && a.stream_seq == 1);
  CHECK(!a.removed_from_stream && a.reason[0] == '\0');
  CHECK(parse_fixture("advisory_consumer_created.json",
                      "$JS.EVENT.ADVISORY.CONSUMER.CREATED.S1P.P", &a) == 0);
  CHECK(a.kind == NL_ADV_CREATED && strcmp(a.consumer, "P") == 0);
  CHECK(parse_fixture("advisory_consumer_deleted.json", NULL, &a) == 0);
  CHECK(a.kind == NL_ADV_DELETED && strcmp(a.stream, "S5") == 0);
  /* Not consumer advisories. */
  CHECK(parse_fixture("advisory_api_audit.json", NULL, &a) == -1);
  CHECK(parse_fixture("consumer_list.json", NULL, &a) == -1);
  /* The subject must name the same consumer. */
  CHECK(parse_fixture("advisory_max_deliver.json",
                      "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.S4M.D",
                      &a) == -1);
  CHECK(parse_fixture("advisory_max_deliver.json",
                      "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.XS4M.C",
                      &a) == -1);
}

/* Parses a MSG_TERMINATED of S/C seq 1 whose members end with reason_json
 * (for example ",\"reason\":7"); returns the parse status. */
static int parse_terminated(const char *reason_json, nl_advisory *a) {
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"type\":\"io.nats.jetstream.advisory.v1.terminated\","
           "\"stream\":\"S\",\"consumer\":\"C\",\"stream_seq\":1%s}",
           reason_json);
  char err[256];
  return nl_advisory_parse(NULL, text, strlen(text), a, err, sizeof(err));
}

/* The "reason" of MSG_TERMINATED (2.10.4+): only the two server texts mean
 * removed from the stream; anything else in it never fails the advisory. */
static void test_advisory_terminated_reasons(void) {
  nl_advisory a;
  CHECK(parse_terminated(",\"reason\":\"Message deleted by stream limits\"",
                         &a) == 0);
  CHECK(a.removed_from_stream);
  CHECK(strcmp(a.reason, "Message deleted by stream limits") == 0);
  CHECK(parse_terminated(",\"reason\":\"Unacknowledged message was deleted\"",
                         &a) == 0);
  CHECK(a.removed_from_stream);
  /* A client's own +TERM reason, and no reason. */
  CHECK(parse_terminated(",\"reason\":\"bad payload\"", &a) == 0);
  CHECK(!a.removed_from_stream && strcmp(a.reason, "bad payload") == 0);
  CHECK(parse_terminated("", &a) == 0);
  CHECK(!a.removed_from_stream && a.reason[0] == '\0');
  /* Not strings, an embedded NUL, near misses. */
  static const char *const odd[] = {
      ",\"reason\":7",
      ",\"reason\":null",
      ",\"reason\":true",
      ",\"reason\":[\"Message deleted by stream limits\"]",
      ",\"reason\":{\"reason\":\"Message deleted by stream limits\"}",
      ",\"reason\":\"Message deleted by stream limits\\u0000x\"",
      ",\"reason\":\"\"",
      ",\"reason\":\"message deleted by stream limits\"",
      ",\"reason\":\"Message deleted by stream limits \"",
      ",\"reason\":\"Message deleted by stream\"",
  };
  for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
    CHECK(parse_terminated(odd[i], &a) == 0);
    CHECK(!a.removed_from_stream);
    CHECK(strlen(a.reason) <= NL_ADV_REASON_MAX);
  }
  /* Overlong, control characters and non-ASCII are cut and masked. */
  char reason[700], member[800];
  memset(reason, 'r', sizeof(reason) - 1);
  reason[sizeof(reason) - 1] = '\0';
  snprintf(member, sizeof(member), ",\"reason\":\"%s\"", reason);
  CHECK(parse_terminated(member, &a) == 0);
  CHECK(!a.removed_from_stream);
  CHECK_EQ_U(strlen(a.reason), NL_ADV_REASON_MAX);
  CHECK(parse_terminated(",\"reason\":\"a\\nb\\u001b\\u00e9\"", &a) == 0);
  CHECK(strcmp(a.reason, "a?b???") == 0);
  /* The server texts on another kind mean nothing. */
  const char *nak = "{\"type\":\"io.nats.jetstream.advisory.v1.nak\","
                    "\"stream\":\"S\",\"consumer\":\"C\",\"stream_seq\":1,"
                    "\"reason\":\"Message deleted by stream limits\"}";
  char err[256];
  CHECK(nl_advisory_parse(NULL, nak, strlen(nak), &a, err, sizeof(err)) == 0);
  CHECK(a.kind == NL_ADV_NAK && !a.removed_from_stream && a.reason[0] == '\0');
}

static void test_advisory_parse_hostile(void) {
  static const char *const bad[] = {
      "",
      "{",
      "[]",
      "null",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\"}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"S\","
      "\"consumer\":\"C\"}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"S.x\","
      "\"consumer\":\"C\",\"stream_seq\":1}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"S\","
      "\"consumer\":\"C>\",\"stream_seq\":1}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"S\","
      "\"consumer\":\"C\",\"stream_seq\":-1}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"S\","
      "\"consumer\":\"C\",\"stream_seq\":\"1\"}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"\","
      "\"consumer\":\"C\",\"stream_seq\":1}",
      "{\"type\":\"io.nats.jetstream.advisory.v1.consumer_action\","
      "\"stream\":\"S\",\"consumer\":\"C\",\"action\":\"modify\"}",
      "{\"type\":7,\"stream\":\"S\",\"consumer\":\"C\",\"stream_seq\":1}",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    nl_advisory a;
    char err[256] = "";
    CHECK(nl_advisory_parse(NULL, bad[i], strlen(bad[i]), &a, err,
                            sizeof(err)) == -1);
    CHECK(err[0] != '\0');
    CHECK(a.stream[0] == '\0');
  }
  /* A name longer than a record holds. */
  char big[600];
  char name[300];
  memset(name, 'n', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  snprintf(big, sizeof(big),
           "{\"type\":\"io.nats.jetstream.advisory.v1.nak\",\"stream\":\"%s\","
           "\"consumer\":\"C\",\"stream_seq\":1}",
           name);
  nl_advisory a;
  char err[256];
  CHECK(nl_advisory_parse(NULL, big, strlen(big), &a, err, sizeof(err)) == -1);
  /* An ack metric. */
  const char *ack = "{\"type\":\"io.nats.jetstream.metric.v1.consumer_ack\","
                    "\"stream\":\"S\",\"consumer\":\"C\",\"consumer_seq\":4,"
                    "\"stream_seq\":3,\"ack_time\":2500000000,"
                    "\"deliveries\":2}";
  CHECK(nl_advisory_parse("$JS.EVENT.METRIC.CONSUMER.ACK.S.C", ack, strlen(ack),
                          &a, err, sizeof(err)) == 0);
  CHECK(a.kind == NL_ADV_ACK_SAMPLE && a.ack_time_ns == 2500000000LL);
  test_advisory_terminated_reasons();
}

static void test_advisory_queue_bounded(void) {
  nl_advisory_queue *q = nl_advisory_queue_create(3);
  nl_advisory a = {0};
  for (int i = 1; i <= 5; i++) {
    a.stream_seq = (uint64_t)i;
    CHECK(nl_advisory_queue_push(q, &a) == (i <= 3));
  }
  nl_advisory_queue_counts c;
  nl_advisory_queue_get_counts(q, &c);
  CHECK_EQ_U(c.received, 3);
  CHECK_EQ_U(c.dropped, 2);
  nl_advisory out[4];
  CHECK_EQ_U(nl_advisory_queue_take(q, out, 2), 2);
  CHECK_EQ_U(out[0].stream_seq, 1);
  CHECK_EQ_U(out[1].stream_seq, 2);
  a.stream_seq = 6;
  CHECK(nl_advisory_queue_push(q, &a));
  CHECK_EQ_U(nl_advisory_queue_take(q, out, 4), 2);
  CHECK_EQ_U(out[0].stream_seq, 3);
  CHECK_EQ_U(out[1].stream_seq, 6);
  CHECK(nl_advisory_queue_wait(q, 1)); /* Times out, still open. */
  nl_advisory_queue_close(q);
  CHECK(!nl_advisory_queue_wait(q, 1000));
  CHECK(!nl_advisory_queue_push(q, &a));
  nl_advisory_queue_free(q);
}

/* Sets the declaration nats_lens.KEY of c to value, as a nats-server 2.10+
 * lists it in the consumer's metadata. */
static void declare(nl_consumer_snap *c, const char *key, const char *value) {
  char meta[64];
  snprintf(meta, sizeof(meta), "nats_lens.%s", key);
  CHECK(nl_consumer_snap_set_meta(c, meta, value) == 0);
}

static void test_max_deliver_exhausted_from_advisory(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "MD");
  nl_consumer_snap *c = add_consumer(&w, 0, "poison");
  c->max_deliver = 3;
  c->delivered_stream_seq = c->delivered_consumer_seq = 20;
  world_poll(&w);
  CHECK(!active_for(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED));
  /* Between polls: the advisory raises the finding at once. */
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 7, 3);
  CHECK(active_for(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED));
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 1);
  CHECK(nl_finding_get(&w.last[NL_MAX_DELIVER_EXHAUSTED], "exhausted_seq_1",
                       0) == 7);
  CHECK(strstr(w.last[NL_MAX_DELIVER_EXHAUSTED].fix_command,
               "MAX_DELIVERIES.MD.poison") != NULL);
  /* It holds at the next polls (the message stays lost). */
  world_poll(&w);
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 9, 3);
  world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 1);
  CHECK_EQ_U(w.clears[NL_MAX_DELIVER_EXHAUSTED], 0);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "MD", "poison");
  CHECK(nl_finding_get(st->active[NL_MAX_DELIVER_EXHAUSTED], "exhausted", 0) ==
        2);
  CHECK(nl_finding_get(st->active[NL_MAX_DELIVER_EXHAUSTED], "exhausted_seq_1",
                       0) == 9);
  /* The fix: a stream keeps the advisories (dead-letter handling). */
  nl_stream_snap *dlq = add_stream(&w, "MD_poison_DLQ");
  char *subjects[] = {"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.MD.*"};
  dlq->subjects = subjects;
  dlq->n_subjects = 1;
  CHECK(world_polls_to_clear(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED,
                             60) == 31);
  CHECK_EQ_U(w.clears[NL_MAX_DELIVER_EXHAUSTED], 1);
  /* With dead-letter handling in sight, advisories raise nothing. */
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 11, 3);
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 1);
  world_free(&w);
}

/* MAX_DELIVERIES advisories are claims checked against the polls: none
 * counts for a consumer without max_deliver, for more deliveries than it
 * allows or for a sequence it never delivered; one for a sequence
 * delivered after the latest poll waits for the next. Once max_deliver is
 * unlimited (a fix the finding names), it clears and stays clear. */
static void test_max_deliveries_claims_are_checked(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "MD");
  nl_consumer_snap *free_c = add_consumer(&w, 0, "unlimited");
  free_c->delivered_stream_seq = free_c->delivered_consumer_seq = 100;
  nl_consumer_snap *c = add_consumer(&w, 0, "poison");
  c->max_deliver = 3;
  c->delivered_stream_seq = c->delivered_consumer_seq = 100;
  world_poll(&w);
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "unlimited", 81, 3);
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 50, 2);
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 5000, 3);
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 0);
  world_poll(&w); /* Sequence 5000 was never delivered. */
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 0);
  nl_registry *reg = nl_engine_registry(w.engine);
  const nl_consumer_state *sp = nl_registry_find(reg, "MD", "poison");
  const nl_consumer_state *su = nl_registry_find(reg, "MD", "unlimited");
  CHECK(sp != NULL && sp->advised != NULL && sp->advised->claims_rejected == 2);
  CHECK(su != NULL && su->advised != NULL && su->advised->claims_rejected == 1);
  uint64_t fed, unknown, contradicted;
  nl_engine_advisory_counts(w.engine, &fed, &unknown, &contradicted);
  CHECK(fed == 3 && unknown == 0 && contradicted == 3);
  /* Delivered and exhausted between two polls: confirmed by the next. */
  world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 104, 3);
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 0);
  c->delivered_stream_seq = c->delivered_consumer_seq = 110;
  world_poll(&w);
  CHECK(active_for(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED));
  CHECK(nl_finding_get(&w.last[NL_MAX_DELIVER_EXHAUSTED], "exhausted_seq_1",
                       0) == 104);
  /* The fix: max_deliver unlimited. */
  c->max_deliver = -1;
  world_poll(&w);
  CHECK(!active_for(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED));
  for (int i = 0; i < 5; i++)
    world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_MAX_DELIVER_EXHAUSTED], 1);
  CHECK_EQ_U(w.clears[NL_MAX_DELIVER_EXHAUSTED], 1);
  world_free(&w);
}

static void test_max_deliver_exhausted_polled_lower_bound(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "MD");
  nl_consumer_snap *c = add_consumer(&w, 0, "poison");
  c->max_deliver = 5;
  /* A message being redelivered is still pending: not exhausted. */
  c->num_redelivered = 1;
  c->num_ack_pending = 1;
  world_poll(&w);
  CHECK(!active_for(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED));
  /* It left pending but stays in the redelivered set: exhausted. */
  c->num_ack_pending = 0;
  world_poll(&w);
  CHECK(active_for(&w, "MD", "poison", NL_MAX_DELIVER_EXHAUSTED));
  CHECK(nl_finding_get(&w.last[NL_MAX_DELIVER_EXHAUSTED], "lower_bound_polled",
                       0) == 1);
  /* The same numbers without a max_deliver are not exhaustion. */
  world w2;
  world_init(&w2, true);
  add_stream(&w2, "S");
  nl_consumer_snap *c2 = add_consumer(&w2, 0, "c");
  c2->num_redelivered = 3;
  world_poll(&w2);
  world_poll(&w2);
  CHECK_EQ_U(w2.onsets[NL_MAX_DELIVER_EXHAUSTED], 0);
  world_free(&w);
  world_free(&w2);
}

/* NAKs of one message again and again on NK/loop, 20 per second; with
 * redelivered, the consumer redelivers it each time (as a real loop does),
 * otherwise its counters stay (forged advisories). Returns the world after
 * one poll more. */
static void nak_loop(world *w, bool redelivered) {
  world_init(w, true);
  add_stream(w, "NK");
  nl_consumer_snap *c = add_consumer(w, 0, "loop");
  world_poll(w);
  /* Transient NAKs: each message NAKed once or twice. Not a storm. */
  for (uint64_t i = 0; i < 12; i++) {
    world_advise(w, NL_ADV_NAK, "NK", "loop", 100 + i, 1 + i % 2);
    w->t += SEC / 10;
  }
  CHECK_EQ_U(w->onsets[NL_NAK_STORM], 0);
  for (uint64_t d = 1; d <= 5; d++) {
    world_advise(w, NL_ADV_NAK, "NK", "loop", 5, d);
    w->t += SEC / 20;
  }
  if (redelivered)
    c->delivered_consumer_seq += 5 + 12;
  world_poll(w);
}

static void test_nak_storm_from_advisories(void) {
  world w;
  /* One message NAKed and redelivered again and again: a storm at the poll
   * that counts the redeliveries. */
  nak_loop(&w, true);
  CHECK(active_for(&w, "NK", "loop", NL_NAK_STORM));
  CHECK(nl_finding_get(&w.last[NL_NAK_STORM], "cycling_seq_1", 0) == 5);
  /* 17 NAKs in the 5 s window: 3.4 per second over the window. */
  CHECK(nl_finding_get(&w.last[NL_NAK_STORM], "naks_per_s_in_window", 0) ==
        17.0 / 5.0);
  /* It holds while NAKs go on, and clears once they stopped for the
   * window. */
  for (uint64_t d = 6; d <= 8; d++) {
    world_advise(&w, NL_ADV_NAK, "NK", "loop", 5, d);
    w.t += SEC / 20;
  }
  CHECK(active_for(&w, "NK", "loop", NL_NAK_STORM));
  w.t += 6 * SEC;
  CHECK(world_polls_to_clear(&w, "NK", "loop", NL_NAK_STORM, 60) == 31);
  CHECK_EQ_U(w.clears[NL_NAK_STORM], 1);
  world_free(&w);
}

/* The same NAK advisories, forged: the consumer redelivers nothing, and
 * the polls say so. No storm; the NAKs did reach the consumer's state. */
static void test_forged_nak_burst_is_not_a_storm(void) {
  world w;
  nak_loop(&w, false);
  CHECK_EQ_U(w.onsets[NL_NAK_STORM], 0);
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "NK", "loop");
  CHECK(st != NULL && st->advised != NULL && st->advised->n_naks == 17);
  world_free(&w);
}

/* Poison messages NAKed until max_deliver 3 (a dead-letter pattern): the
 * loop is bounded the way NAK_STORM's fix would bound it, so it is not a
 * storm; the same NAKs on an unlimited max_deliver are. */
static unsigned bounded_loop_onsets(int64_t max_deliver) {
  world w;
  world_init(&w, false);
  add_stream(&w, "NB");
  add_consumer(&w, 0, "dlq")->max_deliver = max_deliver;
  world_poll(&w);
  nl_consumer_snap *c = &w.consumers[0];
  for (uint64_t seq = 50; seq <= 100; seq += 50)
    for (uint64_t d = 1; d <= 3; d++) {
      world_advise(&w, NL_ADV_NAK, "NB", "dlq", seq, d);
      w.t += SEC / 10;
    }
  c->delivered_consumer_seq += 6; /* The NAKed messages came back. */
  world_poll(&w);
  unsigned n = w.onsets[NL_NAK_STORM];
  world_free(&w);
  return n;
}

/* After a server restart a consumer can come back with its ack floor at 0
 * and its 10 outstanding messages each NAKed once with a delay and
 * redelivered (NAK advisories explain all of them) while the floor waits:
 * each message came back once per interval, not in a loop, so it is not a
 * storm; 4 poison messages cycling 10 times each per interval are. */
static unsigned retry_wave_onsets(unsigned per_message) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "NW");
  s->last_seq = 10;
  nl_consumer_snap *c = add_consumer(&w, 0, "retry");
  c->delivered_stream_seq = 10;
  c->delivered_consumer_seq = 10;
  c->num_ack_pending = 10;
  world_poll(&w);
  for (int i = 0; i < 5; i++) {
    unsigned r = per_message == 1 ? 10 : 4 * per_message;
    for (unsigned k = 0; k < r; k++)
      world_advise(&w, NL_ADV_NAK, "NW", "retry", 1 + k % 10, 2);
    c->delivered_consumer_seq += r;
    world_poll(&w);
  }
  unsigned n = w.onsets[NL_NAK_STORM];
  world_free(&w);
  return n;
}

static void test_retry_wave_is_not_a_storm(void) {
  CHECK_EQ_U(retry_wave_onsets(1), 0);
  CHECK_EQ_U(retry_wave_onsets(10), 1);
}

static void test_bounded_nak_loop_is_not_a_storm(void) {
  CHECK_EQ_U(bounded_loop_onsets(3), 0);
  CHECK_EQ_U(bounded_loop_onsets(-1), 1);
}

/* A DELETED advisory is a claim: it clears nothing (a forged one would
 * clear a real finding); the next poll that no longer lists the consumer
 * does, and one that still lists it keeps the finding. */
static void test_deleted_advisory_is_a_claim(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "AN");
  nl_consumer_snap *c = add_consumer(&w, 0, "fast");
  c->ack_policy = NL_ACK_NONE;
  world_poll(&w);
  CHECK(active_for(&w, "AN", "fast", NL_ACK_NONE_CONSUMER));
  world_advise(&w, NL_ADV_DELETED, "AN", "fast", 0, 0);
  CHECK(active_for(&w, "AN", "fast", NL_ACK_NONE_CONSUMER));
  world_poll(&w); /* Forged: the consumer is still there. */
  CHECK(active_for(&w, "AN", "fast", NL_ACK_NONE_CONSUMER));
  CHECK_EQ_U(w.clears[NL_ACK_NONE_CONSUMER], 0);
  w.n_consumers = 0; /* Deleted for real: the next poll clears. */
  w.streams[0].consumer_count = 0;
  world_poll(&w);
  CHECK(!active_for(&w, "AN", "fast", NL_ACK_NONE_CONSUMER));
  CHECK_EQ_U(w.clears[NL_ACK_NONE_CONSUMER], 1);
  /* Advisories of consumers no poll saw are dropped. */
  CHECK(!nl_engine_advisory(
      w.engine,
      &(nl_advisory){
          .kind = NL_ADV_NAK, .stream = "X", .consumer = "Y", .stream_seq = 1},
      w.t, NULL, NULL));
  world_free(&w);
}

static void test_config_classes_follow_audit(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "S");
  nl_consumer_snap *none = add_consumer(&w, 0, "none");
  none->ack_policy = NL_ACK_NONE;
  nl_consumer_snap *eph = add_consumer(&w, 0, "eph");
  eph->ack_policy = NL_ACK_NONE;
  eph->durable = false; /* Ephemeral: at-most-once by choice. */
  nl_consumer_snap *all = add_consumer(&w, 0, "all");
  all->ack_policy = NL_ACK_ALL;
  world_poll(&w);
  CHECK(active_for(&w, "S", "none", NL_ACK_NONE_CONSUMER));
  CHECK(w.last[NL_ACK_NONE_CONSUMER].severity == NL_SEVERITY_WARNING);
  CHECK(!active_for(&w, "S", "eph", NL_ACK_NONE_CONSUMER));
  /* ack all with one pull request waiting: no parallel workers seen. */
  all->num_waiting = 1;
  world_poll(&w);
  CHECK(!active_for(&w, "S", "all", NL_ACK_ALL_PARALLEL));
  /* Three pull requests waiting: parallel workers. */
  all->num_waiting = 3;
  world_poll(&w);
  CHECK(active_for(&w, "S", "all", NL_ACK_ALL_PARALLEL));
  /* Holds while the workers are busy (fewer requests waiting). */
  all->num_waiting = 0;
  world_poll(&w);
  CHECK(active_for(&w, "S", "all", NL_ACK_ALL_PARALLEL));
  /* The fix: one message outstanding at a time. */
  all->max_ack_pending = 1;
  world_poll(&w);
  CHECK(!active_for(&w, "S", "all", NL_ACK_ALL_PARALLEL));
  /* A deliver group is parallel by itself. */
  all->max_ack_pending = 1000;
  all->push = true;
  all->has_deliver_group = true;
  world_poll(&w);
  CHECK(active_for(&w, "S", "all", NL_ACK_ALL_PARALLEL));
  /* A pinned client with two standbys (nats-server 2.11+): three requests
   * wait, but only the pinned client is served: nothing is raised, until
   * the consumer declares two workers. */
  nl_consumer_snap *pin = add_consumer(&w, 0, "pinned");
  pin->ack_policy = NL_ACK_ALL;
  pin->pinned_client = true;
  pin->num_waiting = 3;
  for (int i = 0; i < 5; i++)
    world_poll(&w);
  CHECK(!active_for(&w, "S", "pinned", NL_ACK_ALL_PARALLEL));
  declare(pin, "workers", "2");
  world_poll(&w);
  CHECK(active_for(&w, "S", "pinned", NL_ACK_ALL_PARALLEL));
  world_free(&w);
  /* Off: the check command's engine raises none of them. */
  world_init(&w, false);
  add_stream(&w, "S");
  add_consumer(&w, 0, "none")->ack_policy = NL_ACK_NONE;
  world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_ACK_NONE_CONSUMER], 0);
  world_free(&w);
}

/* CONSUMER_SINGLE_REPLICA: raised on the first poll for a durable with
 * acks whose state one server holds (num_replicas 1 on an R3 stream) or
 * that keeps it in memory on a file stream; held while so, with one onset;
 * cleared at once by the edit. Silent: a durable that inherits the
 * stream's replicas (num_replicas 0) or asks for them, an ephemeral or
 * ack-none consumer (an ordered read, a key-value watcher: R1 in memory by
 * design), mem_storage on a memory stream, and every consumer of an R1
 * stream. A consumer announced by a CREATED advisory is raised at once. */
static void test_consumer_single_replica(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *r3 = add_stream(&w, "R3");
  r3->replicas = 3;
  r3->cluster = "C1";
  nl_stream_snap *m3 = add_stream(&w, "M3");
  m3->replicas = 3;
  m3->cluster = "C1";
  m3->memory_storage = true;
  nl_stream_snap *r1 = add_stream(&w, "R1");
  r1->replicas = 1;
  r1->cluster = "C1";
  nl_consumer_snap *one = add_consumer(&w, 0, "one");
  one->num_replicas = 1;
  one->ack_floor_stream_seq = 41;
  nl_consumer_snap *mem = add_consumer(&w, 0, "mem");
  mem->mem_storage = true;
  mem->ack_floor_stream_seq = 41;
  add_consumer(&w, 0, "inherit"); /* num_replicas 0. */
  add_consumer(&w, 0, "three")->num_replicas = 3;
  nl_consumer_snap *ordered = add_consumer(&w, 0, "ordered");
  ordered->durable = false;
  ordered->ack_policy = NL_ACK_NONE;
  ordered->mem_storage = true;
  ordered->num_replicas = 1;
  nl_consumer_snap *none = add_consumer(&w, 0, "none");
  none->ack_policy = NL_ACK_NONE;
  none->num_replicas = 1;
  nl_consumer_snap *eph = add_consumer(&w, 0, "eph"); /* Acks, ephemeral. */
  eph->durable = false;
  eph->num_replicas = 1;
  add_consumer(&w, 1, "mem")->mem_storage = true;
  add_consumer(&w, 2, "one")->num_replicas = 1;
  world_poll(&w);
  CHECK(active_for(&w, "R3", "one", NL_CONSUMER_SINGLE_REPLICA));
  CHECK(active_for(&w, "R3", "mem", NL_CONSUMER_SINGLE_REPLICA));
  CHECK_EQ_U(w.onsets[NL_CONSUMER_SINGLE_REPLICA], 2);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "R3", "one");
  const nl_finding *f =
      st != NULL ? st->active[NL_CONSUMER_SINGLE_REPLICA] : NULL;
  CHECK(f != NULL && f->severity == NL_SEVERITY_WARNING &&
        strcmp(f->fix_command, "nats consumer edit R3 one --replicas 3") == 0 &&
        nl_finding_get(f, "consumer_replicas", 0) == 1);
  /* mem_storage: no command (the nats CLI cannot change it), a new
   * consumer starting after the ack floor instead. */
  st = nl_registry_find(nl_engine_registry(w.engine), "R3", "mem");
  f = st != NULL ? st->active[NL_CONSUMER_SINGLE_REPLICA] : NULL;
  CHECK(f != NULL && f->fix_command[0] == '\0' &&
        strstr(f->recommendation, "--deliver 42") != NULL);
  for (int i = 0; i < 5; i++)
    world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_SINGLE_REPLICA], 2);
  CHECK_EQ_U(w.clears[NL_CONSUMER_SINGLE_REPLICA], 0);
  /* The edit clears at once. */
  one->num_replicas = 3;
  world_poll(&w);
  CHECK(!active_for(&w, "R3", "one", NL_CONSUMER_SINGLE_REPLICA));
  CHECK_EQ_U(w.clears[NL_CONSUMER_SINGLE_REPLICA], 1);
  /* A consumer created while the plugin runs, read from its CREATED
   * advisory. */
  nl_snapshot_set set = {0};
  nl_stream_snap *s = nl_snapshot_set_add_stream(&set);
  s->name = strdup("R3");
  s->replicas = 3;
  nl_consumer_snap *c = nl_snapshot_set_add_consumer(&set);
  c->stream = strdup("R3");
  c->name = strdup("late");
  c->durable = true;
  c->num_replicas = 1;
  nl_engine_sink sink = {.transition = on_transition};
  CHECK(nl_engine_created(w.engine, &set, w.t, &sink, &w));
  CHECK(active_for(&w, "R3", "late", NL_CONSUMER_SINGLE_REPLICA));
  nl_snapshot_set_clear(&set);
  world_free(&w);
}

static void test_interest_no_consumers(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *empty = add_stream(&w, "IN");
  empty->retention = NL_RETENTION_INTEREST;
  nl_stream_snap *miss = add_stream(&w, "INF");
  miss->retention = NL_RETENTION_INTEREST;
  nl_consumer_snap *other = add_consumer(&w, 1, "other");
  other->filtered = true;
  nl_stream_snap *ok = add_stream(&w, "INK");
  ok->retention = NL_RETENTION_INTEREST;
  nl_consumer_snap *worker = add_consumer(&w, 2, "worker");
  nl_stream_snap *drop = add_stream(&w, "INP");
  drop->retention = NL_RETENTION_INTEREST;
  world_poll(&w);
  /* Without consumers and without publishes: not yet (a stream is often
   * created a moment before its consumers). */
  CHECK(!active_for(&w, "IN", NULL, NL_INTEREST_NO_CONSUMERS));
  CHECK(!active_for(&w, "INP", NULL, NL_INTEREST_NO_CONSUMERS));
  CHECK(!active_for(&w, "INF", NULL, NL_INTEREST_NO_CONSUMERS));
  /* A publish to INP, which has no consumer, is dropped: at once. */
  drop->last_seq += 5;
  world_poll(&w);
  CHECK(active_for(&w, "INP", NULL, NL_INTEREST_NO_CONSUMERS));
  CHECK(strcmp(w.last_consumer, NL_STREAM_FINDING_CONSUMER) == 0);
  CHECK(!active_for(&w, "IN", NULL, NL_INTEREST_NO_CONSUMERS));
  /* IN stays without consumers for NL_INTEREST_EMPTY_S: raised then. */
  int polls = 0;
  while (!active_for(&w, "IN", NULL, NL_INTEREST_NO_CONSUMERS) && polls < 90) {
    world_poll(&w);
    polls++;
  }
  CHECK(polls >= 58 && polls <= 60);
  /* Publishes: INF's filter matches none (last_seq rises, messages flat,
   * nothing delivered); INK's worker receives and acks them all. */
  for (int i = 0; i < 3; i++) {
    miss->last_seq += 20;
    ok->last_seq += 20;
    worker->delivered_consumer_seq += 20;
    worker->delivered_stream_seq += 20;
    worker->ack_floor_stream_seq += 20;
    world_poll(&w);
  }
  CHECK(active_for(&w, "INF", NULL, NL_INTEREST_NO_CONSUMERS));
  CHECK(!active_for(&w, "INK", NULL, NL_INTEREST_NO_CONSUMERS));
  /* No publishes, nothing changed: INF's finding holds. */
  world_poll(&w);
  CHECK(active_for(&w, "INF", NULL, NL_INTEREST_NO_CONSUMERS));
  /* Fixes: a consumer for IN; a matching consumer for INF (receives). */
  empty->consumer_count = 1;
  miss->consumer_count = 2;
  CHECK(world_polls_to_clear(&w, "IN", NULL, NL_INTEREST_NO_CONSUMERS, 60) ==
        31);
  CHECK(!active_for(&w, "INF", NULL, NL_INTEREST_NO_CONSUMERS));
  CHECK_EQ_U(w.clears[NL_INTEREST_NO_CONSUMERS], 2);
  world_free(&w);
}

/* An interest stream created a poll before its consumers (every deploy)
 * raises nothing, and the scenario ran: the stream was polled empty and
 * then with its consumers receiving. */
static void test_interest_stream_before_its_consumers_is_silent(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "INEW");
  s->retention = NL_RETENTION_INTEREST;
  world_poll(&w);
  world_poll(&w);
  nl_consumer_snap *c = add_consumer(&w, 0, "worker");
  for (int i = 0; i < 10; i++) {
    s->last_seq += 10;
    c->delivered_consumer_seq += 10;
    c->delivered_stream_seq += 10;
    c->ack_floor_stream_seq += 10;
    world_poll(&w);
  }
  CHECK(nl_registry_find(nl_engine_registry(w.engine), "INEW", "worker") !=
        NULL);
  CHECK_EQ_U(s->consumer_count, 1);
  CHECK_EQ_U(w.onsets[NL_INTEREST_NO_CONSUMERS], 0);
  world_free(&w);
}

/* After a server restart an interest stream's consumer can come back with
 * a lower delivered.consumer_seq (state not yet written): its history is
 * reset, what it received in the interval is unknown, and publishes it
 * took are not "dropped". */
static void test_interest_consumer_reset_is_not_a_drop(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "INR");
  s->retention = NL_RETENTION_INTEREST;
  nl_consumer_snap *c = add_consumer(&w, 0, "worker");
  for (int i = 0; i < 3; i++) {
    s->last_seq += 10;
    c->delivered_consumer_seq += 10;
    c->delivered_stream_seq += 10;
    c->ack_floor_stream_seq += 10;
    world_poll(&w);
  }
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "INR", "worker");
  uint32_t resets = st->resets;
  c->delivered_consumer_seq -= 5; /* Restored from an older state. */
  s->last_seq += 7;
  world_poll(&w);
  CHECK_EQ_U(st->resets, resets + 1);
  world_poll(&w);
  /* A poll whose consumer list of the stream was not read completely
   * (the consumer not listed): what it received is not known either. */
  s->consumers_complete = false;
  w.n_consumers = 0;
  s->last_seq += 7;
  world_poll(&w);
  CHECK_EQ_U(w.kept, 1);
  CHECK_EQ_U(w.onsets[NL_INTEREST_NO_CONSUMERS], 0);
  world_free(&w);
}

static void test_single_replica_and_unobservable(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "LOCAL"); /* Single server: no cluster. */
  nl_stream_snap *r1 = add_stream(&w, "R1");
  r1->cluster = "C1";
  r1->replicas = 1;
  nl_stream_snap *r3 = add_stream(&w, "R3");
  r3->cluster = "C1";
  r3->replicas = 3;
  r3->consumers_complete = false;
  world_poll(&w);
  CHECK(!active_for(&w, "LOCAL", NULL, NL_STREAM_SINGLE_REPLICA));
  CHECK(active_for(&w, "R1", NULL, NL_STREAM_SINGLE_REPLICA));
  CHECK(!active_for(&w, "R3", NULL, NL_STREAM_SINGLE_REPLICA));
  /* One poll without R3's consumers may be a leader election: only the
   * second in a row, 10 s after the first, raises CONSUMER_UNOBSERVABLE. */
  CHECK(!active_for(&w, "R3", NULL, NL_CONSUMER_UNOBSERVABLE));
  w.t += 9 * SEC;
  world_poll(&w);
  CHECK(active_for(&w, "R3", NULL, NL_CONSUMER_UNOBSERVABLE));
  CHECK(!active_for(&w, "R1", NULL, NL_CONSUMER_UNOBSERVABLE));
  r1->replicas = 3;
  r3->consumers_complete = true;
  world_poll(&w);
  /* R1's fix is a change of configuration: it clears at once; R3 is
   * observable again and clears after the hold. */
  CHECK(!active_for(&w, "R1", NULL, NL_STREAM_SINGLE_REPLICA));
  CHECK(active_for(&w, "R3", NULL, NL_CONSUMER_UNOBSERVABLE));
  CHECK(world_polls_to_clear(&w, "R3", NULL, NL_CONSUMER_UNOBSERVABLE, 60) ==
        30);
  /* A stream no longer listed clears its findings. */
  r1->replicas = 1;
  world_poll(&w);
  CHECK(active_for(&w, "R1", NULL, NL_STREAM_SINGLE_REPLICA));
  w.n_streams = 1;
  world_poll(&w);
  CHECK(!active_for(&w, "R1", NULL, NL_STREAM_SINGLE_REPLICA));
  world_free(&w);
}

/* A stream with discard new; its state as a test sets it. */
static nl_stream_snap *add_discard_new(world *w, const char *name) {
  nl_stream_snap *s = add_stream(w, name);
  s->discard_new = true;
  return s;
}

/* Sets s to hold msgs messages of size bytes each, the last of them stored
 * at last_ts_ns. */
static void hold_messages(nl_stream_snap *s, uint64_t msgs, uint64_t size,
                          int64_t last_ts_ns) {
  s->msgs = msgs;
  s->bytes = msgs * size;
  s->first_seq = s->last_seq >= msgs ? s->last_seq - msgs + 1 : 1;
  if (s->last_seq < msgs)
    s->last_seq = msgs;
  s->num_subjects = msgs > 0 ? 1 : 0;
  s->last_ts_ns = last_ts_ns;
}

/* PUBLISH_REJECTED at each limit, and its look-alikes: a stream with
 * room, discard old at its limit, a write-once stream, one declared full
 * by design; the size limit needs two polls with nothing stored between
 * them. */
static void test_publish_rejected_limits(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *m = add_discard_new(&w, "M");
  m->max_msgs = 5;
  hold_messages(m, 5, 60, w.t - 10 * SEC);
  nl_stream_snap *b = add_discard_new(&w, "B");
  b->max_bytes = 1000;
  hold_messages(b, 7, 129, w.t - 3 * SEC); /* 97 bytes free. */
  nl_stream_snap *sj = add_discard_new(&w, "S");
  sj->max_msgs_per_subject = 2;
  sj->discard_new_per_subject = true;
  hold_messages(sj, 4, 60, w.t);
  sj->num_subjects = 2;
  nl_stream_snap *part = add_discard_new(&w, "PART"); /* 1 of 3 full. */
  part->max_msgs_per_subject = 2;
  part->discard_new_per_subject = true;
  hold_messages(part, 4, 60, w.t);
  part->num_subjects = 3;
  nl_stream_snap *once = add_discard_new(&w, "ONCE"); /* Write-once. */
  once->max_msgs_per_subject = 1;
  once->discard_new_per_subject = true;
  hold_messages(once, 3, 60, w.t);
  once->num_subjects = 3;
  nl_stream_snap *room = add_discard_new(&w, "ROOM"); /* One below. */
  room->max_msgs = 11;
  room->max_bytes = 1000;
  hold_messages(room, 10, 60, w.t); /* 400 bytes free. */
  nl_stream_snap *old = add_stream(&w, "OLD");
  old->max_msgs = 5;
  hold_messages(old, 5, 60, w.t);
  nl_stream_snap *ok = add_discard_new(&w, "OK");
  ok->max_msgs = 3;
  hold_messages(ok, 3, 60, w.t);
  CHECK(nl_stream_snap_set_meta(ok, "nats_lens.full_ok", "true") == 0);
  world_poll(&w);
  const nl_finding *f =
      nl_engine_stream_finding(w.engine, "M", NL_PUBLISH_REJECTED);
  CHECK(f != NULL && nl_finding_get(f, "max_msgs", 0) == 5);
  /* Full since its last store, 10 s before the poll. */
  CHECK(f != NULL && nl_finding_get(f, "full_s", 0) == 10);
  CHECK(f != NULL &&
        strcmp(f->fix_command, "nats stream edit M --max-msgs 10") == 0);
  CHECK(f != NULL && strstr(f->recommendation, "--discard old") != NULL);
  CHECK(active_for(&w, "S", NULL, NL_PUBLISH_REJECTED));
  /* The size limit: the first poll alone does not tell a stream that
   * refuses from one that takes messages. */
  CHECK(!active_for(&w, "B", NULL, NL_PUBLISH_REJECTED));
  world_poll(&w);
  CHECK(active_for(&w, "B", NULL, NL_PUBLISH_REJECTED));
  f = nl_engine_stream_finding(w.engine, "B", NL_PUBLISH_REJECTED);
  CHECK(f != NULL && nl_finding_get(f, "bytes_free", 0) == 97 &&
        nl_finding_get(f, "avg_msg_bytes", 0) == 129 &&
        strcmp(f->fix_command, "nats stream edit B --max-bytes 2000") == 0);
  f = nl_engine_stream_finding(w.engine, "S", NL_PUBLISH_REJECTED);
  CHECK(f != NULL &&
        strcmp(f->fix_command, "nats stream edit S --max-msgs-per-subject 4") ==
            0 &&
        strstr(f->recommendation, "--no-discard-per-subject") != NULL);
  for (int i = 0; i < 5; i++)
    world_poll(&w);
  CHECK(!active_for(&w, "ONCE", NULL, NL_PUBLISH_REJECTED));
  CHECK(!active_for(&w, "PART", NULL, NL_PUBLISH_REJECTED));
  CHECK(!active_for(&w, "ROOM", NULL, NL_PUBLISH_REJECTED));
  CHECK(!active_for(&w, "OLD", NULL, NL_PUBLISH_REJECTED));
  CHECK(!active_for(&w, "OK", NULL, NL_PUBLISH_REJECTED));
  CHECK_EQ_U(w.onsets[NL_PUBLISH_REJECTED], 3);
  /* The fix (a limit raised) clears at once. */
  m->max_msgs = 10;
  world_poll(&w);
  CHECK(!active_for(&w, "M", NULL, NL_PUBLISH_REJECTED));
  CHECK_EQ_U(w.clears[NL_PUBLISH_REJECTED], 1);
  world_free(&w);
}

/* A stream at its size limit that keeps taking messages is not refusing
 * them: nats-server 2.9 checks the payload alone against the room left and
 * stores a message that then evicts the oldest (seen on 2.9.10: 20
 * messages of 40 bytes into a 1000-byte stream, all taken). A declaration
 * that cannot be read is said in the finding and declares nothing. */
static void test_publish_rejected_taking_is_not_refusing(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *b = add_discard_new(&w, "B");
  b->max_bytes = 1000;
  hold_messages(b, 13, 73, w.t); /* 51 bytes free. */
  for (int i = 0; i < 10; i++) {
    world_poll(&w);
    b->last_seq += 3; /* Three taken, three evicted, each interval. */
    b->first_seq += 3;
  }
  CHECK_EQ_U(w.onsets[NL_PUBLISH_REJECTED], 0);
  /* It stops taking: refused from the second poll that sees so. */
  world_poll(&w);
  CHECK(!active_for(&w, "B", NULL, NL_PUBLISH_REJECTED));
  world_poll(&w);
  CHECK(active_for(&w, "B", NULL, NL_PUBLISH_REJECTED));
  nl_stream_snap *bad = add_discard_new(&w, "BAD");
  bad->max_msgs = 2;
  hold_messages(bad, 2, 60, w.t);
  CHECK(nl_stream_snap_set_meta(bad, "nats_lens.full_ok", "yes") == 0);
  world_poll(&w);
  const nl_finding *f =
      nl_engine_stream_finding(w.engine, "BAD", NL_PUBLISH_REJECTED);
  CHECK(f != NULL && strstr(f->description, "full_ok=\"yes\" cannot be "
                                            "read") != NULL);
  world_free(&w);
}

/* Hold and clear: a work queue whose consumers make room for a moment
 * keeps one finding; drained below its limit for good, it clears after
 * the clearing hold. */
static void test_publish_rejected_hold_and_clear(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *q = add_discard_new(&w, "WQ");
  q->retention = NL_RETENTION_WORKQUEUE;
  q->max_msgs = 10;
  hold_messages(q, 10, 60, w.t);
  world_poll(&w);
  CHECK(active_for(&w, "WQ", NULL, NL_PUBLISH_REJECTED));
  for (int i = 0; i < 20; i++) {
    /* One acked and one more published each other poll. */
    q->msgs = i % 2 ? 10 : 9;
    q->last_seq += i % 2;
    world_poll(&w);
  }
  CHECK_EQ_U(w.onsets[NL_PUBLISH_REJECTED], 1);
  CHECK(active_for(&w, "WQ", NULL, NL_PUBLISH_REJECTED));
  q->msgs = 4;
  int polls = world_polls_to_clear(&w, "WQ", NULL, NL_PUBLISH_REJECTED, 60);
  CHECK(polls == 31); /* The first without the condition, and 30 s more. */
  CHECK_EQ_U(w.clears[NL_PUBLISH_REJECTED], 1);
  world_free(&w);
}

static void test_push_unbound(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "PU");
  nl_consumer_snap *gone = add_consumer(&w, 0, "gone");
  gone->push = true;
  gone->num_pending = 10;
  nl_consumer_snap *bound = add_consumer(&w, 0, "bound");
  bound->push = true;
  bound->push_bound = true;
  bound->num_pending = 10;
  world_poll(&w);
  world_poll(&w);
  CHECK(!active_for(&w, "PU", "gone", NL_PUSH_UNBOUND)); /* 1 s < 2 s. */
  world_poll(&w);
  CHECK(active_for(&w, "PU", "gone", NL_PUSH_UNBOUND));
  CHECK(w.last[NL_PUSH_UNBOUND].severity == NL_SEVERITY_WARNING);
  CHECK(!active_for(&w, "PU", "bound", NL_PUSH_UNBOUND));
  /* A max_age within the horizon will evict the backlog: critical. */
  world w2;
  world_init(&w2, true);
  nl_stream_snap *s2 = add_stream(&w2, "PUA");
  s2->max_age_ns = 600 * SEC;
  nl_consumer_snap *g2 = add_consumer(&w2, 0, "gone");
  g2->push = true;
  g2->num_pending = 10;
  for (int i = 0; i < 4; i++)
    world_poll(&w2);
  CHECK(active_for(&w2, "PUA", "gone", NL_PUSH_UNBOUND));
  CHECK(w2.last[NL_PUSH_UNBOUND].severity == NL_SEVERITY_CRITICAL);
  /* The fix: a subscriber binds and drains the backlog. */
  gone->push_bound = true;
  CHECK(world_polls_to_clear(&w, "PU", "gone", NL_PUSH_UNBOUND, 60) == 31);
  (void)s;
  world_free(&w);
  world_free(&w2);
}

/* One poll of an unfiltered consumer c of stream s that has received
 * through stream sequence delivered and acked through floor, with the
 * stream at last_seq holding everything from first_seq. */
static void consumer_at(nl_stream_snap *s, nl_consumer_snap *c,
                        uint64_t delivered, uint64_t floor) {
  if (delivered > c->delivered_stream_seq)
    c->delivered_consumer_seq += delivered - c->delivered_stream_seq;
  c->delivered_stream_seq = delivered;
  c->ack_floor_stream_seq = floor;
  c->ack_floor_consumer_seq = floor;
  c->num_pending = s->last_seq - delivered;
  c->num_ack_pending = (uint32_t)(delivered - floor);
  s->msgs = s->last_seq - s->first_seq + 1;
}

static void test_retention_risk_forecast(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "RR");
  s->max_msgs = 6000;
  nl_consumer_snap *lag = add_consumer(&w, 0, "lag");
  nl_consumer_snap *keep = add_consumer(&w, 0, "keep");
  /* 50 messages a second; lag receives nothing, keep everything. It must
   * be raised after the rise is sustained and well before the limit. */
  int raised_at = -1;
  for (int i = 0; i < 110 && raised_at < 0; i++) {
    s->last_seq += 50;
    consumer_at(s, lag, 0, 0);
    consumer_at(s, keep, s->last_seq, s->last_seq);
    world_poll(&w);
    if (active_for(&w, "RR", "lag", NL_RETENTION_RISK))
      raised_at = i;
  }
  CHECK(raised_at >= 30 && raised_at < 60);
  CHECK_EQ_U(w.onsets[NL_RETENTION_RISK], 1);
  CHECK(!active_for(&w, "RR", "keep", NL_RETENTION_RISK));
  double forecast =
      nl_finding_get(&w.last[NL_RETENTION_RISK], "forecast_s", -1);
  double exposure =
      nl_finding_get(&w.last[NL_RETENTION_RISK], "exposure_messages", -1);
  /* The room left at 50/s. */
  CHECK(exposure < 6000 && fabs(forecast - (6000 - exposure) / 50) <= 2);
  CHECK(nl_finding_get(&w.last[NL_RETENTION_RISK], "sustained_s", 0) >= 30);
  CHECK(strstr(w.last[NL_RETENTION_RISK].fix_command,
               "nats stream edit RR --max-msgs") != NULL);
  /* The fix: lag catches up; far from the limit it clears at once. */
  consumer_at(s, lag, s->last_seq, s->last_seq);
  CHECK(world_polls_to_clear(&w, "RR", "lag", NL_RETENTION_RISK, 60) == 31);
  CHECK_EQ_U(w.clears[NL_RETENTION_RISK], 1);
  world_free(&w);
}

/* A stalled consumer of a max_age stream: its oldest unreceived message
 * ages in real time, bounded from below by the stream's sequence clock. */
static void test_retention_risk_max_age(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "RA");
  s->max_age_ns = 600 * SEC;
  nl_consumer_snap *stalled = add_consumer(&w, 0, "stalled");
  int raised_at = -1;
  for (int i = 0; i < 300 && raised_at < 0; i++) {
    s->last_seq += 10;
    consumer_at(s, stalled, 0, 0);
    world_poll(&w);
    if (active_for(&w, "RA", "stalled", NL_RETENTION_RISK))
      raised_at = i;
  }
  CHECK(raised_at > 60 && raised_at < 250);
  double age =
      nl_finding_get(&w.last[NL_RETENTION_RISK], "oldest_unreceived_age_s", -1);
  double forecast =
      nl_finding_get(&w.last[NL_RETENTION_RISK], "forecast_s", -1);
  /* The age is a lower bound of the true age (raised_at s), the forecast
   * the rest of max_age at one second a second. */
  CHECK(age <= raised_at && age >= raised_at - 1);
  CHECK(fabs(forecast - (600 - age)) <= 2);
  CHECK(strstr(w.last[NL_RETENTION_RISK].fix_command, "--max-age") != NULL);
  world_free(&w);
}

/* Healthy look-alikes of retention risk, each polled for two minutes once
 * a second: none may raise RETENTION_RISK. Each also checks that its
 * consumers were observed with the backlog the case is about. */
static void test_retention_risk_healthy_are_silent(void) {
  world w;
  world_init(&w, true);
  /* A work queue limited to 500 messages: four workers ack out of order,
   * so the floor trails by 1 to 4 and the backlog wobbles. */
  nl_stream_snap *wq = add_stream(&w, "WQ");
  wq->retention = NL_RETENTION_WORKQUEUE;
  wq->max_msgs = 500;
  nl_consumer_snap *workers = add_consumer(&w, 0, "workers");
  /* max_age 3 s with a consumer that keeps up one message behind. */
  nl_stream_snap *tel = add_stream(&w, "TEL");
  tel->max_age_ns = 3 * SEC;
  nl_consumer_snap *live = add_consumer(&w, 1, "live");
  /* A consumer that reads 100 messages at once every 20 s next to the
   * stream's publisher (10/s, limit 3000). */
  nl_stream_snap *bat = add_stream(&w, "BAT");
  bat->max_msgs = 3000;
  nl_consumer_snap *batch = add_consumer(&w, 2, "batch");
  /* A burst of 1000 drained with nothing published (limit 2000). */
  nl_stream_snap *bur = add_stream(&w, "BUR");
  bur->max_msgs = 2000;
  bur->last_seq = 1000;
  nl_consumer_snap *drain = add_consumer(&w, 3, "drain");
  /* A consumer recreated with deliver policy new on a full stream. */
  nl_stream_snap *rec = add_stream(&w, "REC");
  rec->max_msgs = 1000;
  rec->last_seq = 5000;
  rec->first_seq = 4001;
  nl_consumer_snap *fresh = add_consumer(&w, 4, "fresh");
  uint64_t max_wq_backlog = 0, max_batch = 0, max_drain = 0;
  for (int i = 0; i < 120; i++) {
    int64_t k = i;
    wq->last_seq += 7;
    uint64_t wq_floor = wq->last_seq - 1 - (uint64_t)(k * 7 % 4);
    consumer_at(wq, workers, wq->last_seq - (uint64_t)(k % 2), wq_floor);
    wq->first_seq = wq_floor + 1;
    if (workers->num_pending + workers->num_ack_pending > max_wq_backlog)
      max_wq_backlog = workers->num_pending + workers->num_ack_pending;
    tel->last_seq += 5;
    tel->first_seq = tel->last_seq > 15 ? tel->last_seq - 14 : 1;
    consumer_at(tel, live, tel->last_seq - 1, tel->last_seq - 1);
    bat->last_seq += 10;
    if (i % 20 == 19)
      consumer_at(bat, batch, bat->last_seq, bat->last_seq);
    else
      consumer_at(bat, batch, batch->delivered_stream_seq,
                  batch->ack_floor_stream_seq);
    if (batch->num_pending > max_batch)
      max_batch = batch->num_pending;
    uint64_t got = (uint64_t)(k * 10 > 1000 ? 1000 : k * 10);
    consumer_at(bur, drain, got, got);
    if (drain->num_pending > max_drain)
      max_drain = drain->num_pending;
    rec->last_seq += 3;
    rec->first_seq += 3;
    if (i == 0)
      fresh->created_ns += SEC;
    consumer_at(rec, fresh, rec->last_seq, rec->last_seq);
    if (i == 0)
      fresh->delivered_consumer_seq = 0;
    world_poll(&w);
  }
  CHECK(max_wq_backlog >= 2 && max_batch >= 190 && max_drain == 1000);
  CHECK_EQ_U(nl_registry_size(nl_engine_registry(w.engine)), 5);
  CHECK_EQ_U(w.onsets[NL_RETENTION_RISK], 0);
  world_free(&w);
}

/* A real lag whose rise breaks for a moment every 40 s (the consumer
 * catches up a little, then falls behind again) for two minutes: the
 * hold keeps one finding instead of a raise and a clear per cycle. */
static void test_retention_risk_does_not_flap(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "FL");
  s->max_msgs = 4000;
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  uint64_t got = 0;
  int polls_raised = 0;
  for (int i = 0; i < 160; i++) {
    s->last_seq += 50;
    got += i % 40 == 39 ? 400 : 20; /* 30/s behind, and a catch-up. */
    consumer_at(s, c, got, got);
    world_poll(&w);
    polls_raised += active_for(&w, "FL", "slow", NL_RETENTION_RISK);
  }
  CHECK(polls_raised >= 60);
  CHECK_EQ_U(w.onsets[NL_RETENTION_RISK], 1);
  CHECK_EQ_U(w.clears[NL_RETENTION_RISK], 0);
  world_free(&w);
}

/* Checks that the retry scenario of stream (consumer "retry") ran, with at
 * least min_redelivered redeliveries counted, and raised none of the
 * redelivery classes; frees w's engine. */
static void check_retries_silent(world *w, const char *stream,
                                 uint64_t min_redelivered) {
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), stream, "retry");
  CHECK(st != NULL && st->redelivered_total >= min_redelivered);
  CHECK_EQ_U(w->onsets[NL_ACK_WAIT_VIOLATION], 0);
  CHECK_EQ_U(w->onsets[NL_MISSING_PROGRESS], 0);
  CHECK_EQ_U(w->onsets[NL_NAK_STORM], 0);
  world_free(w);
}

/* A consumer NAKs every message once with a 1 s delay (a transient
 * error) and acks it when it comes back; ack_wait is 30 s. Half its
 * deliveries are redeliveries, but none can be an expiry: every message
 * outstanding was delivered within the last two seconds. */
static void test_nak_with_delay_is_not_ack_wait(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "ND");
  nl_consumer_snap *c = add_consumer(&w, 0, "retry");
  for (int i = 0; i < 90; i++) {
    s->last_seq += 10;
    s->msgs = s->last_seq;
    c->delivered_stream_seq = s->last_seq;
    c->delivered_consumer_seq += 20; /* 10 new, 10 back after the NAK. */
    c->num_ack_pending = s->last_seq >= 20 ? 20 : s->last_seq;
    c->ack_floor_stream_seq = s->last_seq - c->num_ack_pending;
    c->ack_floor_consumer_seq = c->delivered_consumer_seq - 20;
    c->num_redelivered = 10;
    c->ack_last_ns = w.t - SEC / 2;
    world_poll(&w);
  }
  check_retries_silent(&w, "ND", 800);
}

/* NAKs with a delay longer than ack_wait (ack_wait 2 s, delay 3 s): each
 * second 10 new messages arrive, each is NAKed at its first delivery,
 * comes back 3 s later and is acked. The timing cannot tell these
 * redeliveries from expiry (the delay is longer than ack_wait), so by
 * polling alone they look like ACK_WAIT_VIOLATION; with the MSG_NAKED
 * advisories fed in, every redelivery is explained and nothing fires. */
static unsigned long_nak_delay_onsets(bool advisories, uint64_t *redelivered) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "NL");
  nl_consumer_snap *c = add_consumer(&w, 0, "retry");
  c->ack_wait_ns = 2 * SEC;
  for (int i = 0; i < 90; i++) {
    uint64_t first = s->last_seq + 1;
    s->last_seq += 10;
    s->msgs = s->last_seq;
    c->delivered_stream_seq = s->last_seq;
    /* 10 new, and from the 4th second on the 10 NAKed 3 s before. */
    c->delivered_consumer_seq += i >= 3 ? 20 : 10;
    c->num_ack_pending = s->last_seq >= 40 ? 40 : s->last_seq;
    c->ack_floor_stream_seq = s->last_seq - c->num_ack_pending;
    c->ack_floor_consumer_seq = c->delivered_consumer_seq - 20;
    c->num_redelivered = i >= 3 ? 10 : 0;
    c->ack_last_ns = w.t - SEC / 2;
    if (advisories && i >= 1)
      for (uint64_t q = first; q < first + 10; q++)
        world_advise(&w, NL_ADV_NAK, "NL", "retry", q, 1);
    world_poll(&w);
  }
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "NL", "retry");
  *redelivered = st != NULL ? st->redelivered_total : 0;
  unsigned n = w.onsets[NL_ACK_WAIT_VIOLATION] + w.onsets[NL_MISSING_PROGRESS] +
               w.onsets[NL_NAK_STORM];
  world_free(&w);
  return n;
}

/* Each message NAKed twice at once and then acked (5 new a second, 10
 * redeliveries, backoff 1 s so the delay is 1 s, one poll a second), with
 * one message outstanding on every other poll and, on every third poll,
 * one NAK advisory arriving only after the poll: most redeliveries are
 * explained, the rest are far more than expiry could make. Not
 * ACK_WAIT_VIOLATION (a partial explanation once made the rest look like
 * expiry). */
static void test_nak_retries_with_late_advisories_are_not_ack_wait(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "NR");
  nl_consumer_snap *c = add_consumer(&w, 0, "retry");
  c->ack_wait_ns = SEC;
  c->backoff_first_ns = SEC;
  c->backoff_steps = 2;
  uint64_t late = 0;
  for (int i = 0; i < 60; i++) {
    uint64_t first = s->last_seq + 1;
    s->last_seq += 5;
    s->msgs = s->last_seq;
    c->delivered_stream_seq = s->last_seq;
    c->delivered_consumer_seq += 15;
    c->num_ack_pending = i % 2;
    c->ack_floor_stream_seq = s->last_seq - c->num_ack_pending;
    c->ack_floor_consumer_seq = c->delivered_consumer_seq - c->num_ack_pending;
    c->ack_last_ns = w.t - SEC / 4;
    if (late)
      world_advise(&w, NL_ADV_NAK, "NR", "retry", late, 2);
    /* On every third poll, the last NAK of the interval comes late. */
    bool one_late = i % 3 == 0;
    for (uint64_t q = first; q < first + 5; q++) {
      world_advise(&w, NL_ADV_NAK, "NR", "retry", q, 1);
      if (q + 1 < first + 5 || !one_late)
        world_advise(&w, NL_ADV_NAK, "NR", "retry", q, 2);
    }
    late = one_late ? first + 4 : 0;
    world_poll(&w);
  }
  check_retries_silent(&w, "NR", 500);
}

static void test_nak_advisories_explain_redeliveries(void) {
  uint64_t polled_only = 0, with_advisories = 0;
  CHECK(long_nak_delay_onsets(false, &polled_only) >= 1);
  CHECK_EQ_U(long_nak_delay_onsets(true, &with_advisories), 0);
  CHECK(polled_only >= 800 && with_advisories == polled_only);
}

/* Sets up w with the R1 stream UO of cluster C1 and its AckNone consumer
 * "fast", polled once: ACK_NONE_CONSUMER is active. */
static void world_with_r1_stream(world *w) {
  world_init(w, true);
  nl_stream_snap *uo = add_stream(w, "UO");
  uo->cluster = "C1";
  uo->replicas = 1;
  add_consumer(w, 0, "fast")->ack_policy = NL_ACK_NONE;
  world_poll(w);
  CHECK(active_for(w, "UO", "fast", NL_ACK_NONE_CONSUMER));
}

/* Makes w's one stream UO (world_with_r1_stream) unlisted, and reported in
 * the list's "missing" entries when missing is set. */
static void world_unlist_uo(world *w, bool missing) {
  w->n_streams = 0;
  w->n_consumers = 0;
  w->n_missing = 0;
  if (missing)
    w->missing[w->n_missing++] = "UO";
}

/* Lists w's stream UO and its consumer again. */
static void world_list_uo(world *w) {
  w->n_streams = 1;
  w->n_consumers = 1;
  w->n_missing = 0;
}

/* A stream that STREAM.LIST reports missing (clustered: its leader did not
 * answer) raises CONSUMER_UNOBSERVABLE; its consumers are kept with their
 * findings and counted, never cleared as deleted; its other stream-level
 * findings hold. Once listed again, the finding clears. */
static void test_missing_stream_is_unobservable(void) {
  world w;
  world_with_r1_stream(&w);
  CHECK(active_for(&w, "UO", NULL, NL_STREAM_SINGLE_REPLICA));
  CHECK(!active_for(&w, "UO", NULL, NL_CONSUMER_UNOBSERVABLE));
  /* The stream is missing: no stream, no consumer listed. Polls 10 s
   * apart. */
  world_unlist_uo(&w, true);
  w.step_ns = 10 * SEC;
  for (int i = 0; i < 3; i++) {
    world_poll(&w);
    CHECK_EQ_U(w.kept, 1);
    /* Raised from the second poll in a row on. */
    CHECK(active_for(&w, "UO", NULL, NL_CONSUMER_UNOBSERVABLE) == (i > 0));
    CHECK(active_for(&w, "UO", "fast", NL_ACK_NONE_CONSUMER));
    CHECK(active_for(&w, "UO", NULL, NL_STREAM_SINGLE_REPLICA));
  }
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 1);
  CHECK(nl_finding_get(&w.last[NL_CONSUMER_UNOBSERVABLE], "stream_missing",
                       0) == 1);
  CHECK_EQ_U(w.clears[NL_ACK_NONE_CONSUMER], 0);
  CHECK_EQ_U(w.clears[NL_STREAM_SINGLE_REPLICA], 0);
  /* Listed again. */
  world_list_uo(&w);
  world_poll(&w);
  CHECK_EQ_U(w.kept, 0);
  CHECK(!active_for(&w, "UO", NULL, NL_CONSUMER_UNOBSERVABLE));
  CHECK_EQ_U(w.clears[NL_CONSUMER_UNOBSERVABLE], 1);
  CHECK(active_for(&w, "UO", "fast", NL_ACK_NONE_CONSUMER));
  /* Gone for good (neither listed nor missing): the consumer is deleted. */
  world_unlist_uo(&w, false);
  world_poll(&w);
  CHECK(!active_for(&w, "UO", "fast", NL_ACK_NONE_CONSUMER));
  CHECK_EQ_U(w.clears[NL_ACK_NONE_CONSUMER], 1);
  world_free(&w);
}

/* A stream missing from one poll only (a leader election after a server
 * was lost) raises nothing, but its consumer is kept and counted
 * unobservable for that poll. Neither does a routine failover that hides
 * it for 4 s of 1 s polls; 10 s of them do. */
static void test_one_unobservable_poll_is_not_a_finding(void) {
  world w;
  world_with_r1_stream(&w);
  world_unlist_uo(&w, true);
  world_poll(&w);
  CHECK_EQ_U(w.kept, 1);
  world_list_uo(&w);
  world_poll(&w);
  CHECK_EQ_U(w.kept, 0);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 0);
  CHECK(active_for(&w, "UO", "fast", NL_ACK_NONE_CONSUMER));
  /* Missing again later for 5 polls (4 s): nothing. */
  world_unlist_uo(&w, true);
  for (int i = 0; i < 5; i++)
    world_poll(&w);
  CHECK_EQ_U(w.kept, 1);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 0);
  world_list_uo(&w);
  world_poll(&w);
  /* Missing for 11 polls (10 s): raised at the eleventh. */
  world_unlist_uo(&w, true);
  for (int i = 0; i < 10; i++)
    world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 0);
  world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 1);
  world_free(&w);
}

/* A stream left out of a stream list that is short of its total (a
 * clustered server omits a stream whose servers are all offline) is
 * unobservable, not deleted: CONSUMER_UNOBSERVABLE fires for it and its
 * consumers and findings are kept. */
static void test_short_stream_list_keeps_unlisted(void) {
  world w;
  world_with_r1_stream(&w);
  world_unlist_uo(&w, false);
  w.list_short = true;
  w.step_ns = 10 * SEC;
  for (int i = 0; i < 3; i++) {
    world_poll(&w);
    CHECK_EQ_U(w.kept, 1);
    CHECK(active_for(&w, "UO", NULL, NL_CONSUMER_UNOBSERVABLE) == (i > 0));
  }
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 1);
  CHECK(active_for(&w, "UO", "fast", NL_ACK_NONE_CONSUMER));
  CHECK(active_for(&w, "UO", NULL, NL_STREAM_SINGLE_REPLICA));
  CHECK_EQ_U(w.clears[NL_ACK_NONE_CONSUMER], 0);
  CHECK_EQ_U(w.clears[NL_STREAM_SINGLE_REPLICA], 0);
  /* A complete list without the stream: deleted. */
  w.list_short = false;
  world_poll(&w);
  CHECK_EQ_U(w.kept, 0);
  CHECK_EQ_U(w.clears[NL_ACK_NONE_CONSUMER], 1);
  CHECK_EQ_U(w.clears[NL_STREAM_SINGLE_REPLICA], 1);
  CHECK_EQ_U(w.clears[NL_CONSUMER_UNOBSERVABLE], 1);
  /* Later short lists say nothing of a stream gone for more than a poll. */
  w.list_short = true;
  world_poll(&w);
  CHECK(!active_for(&w, "UO", NULL, NL_CONSUMER_UNOBSERVABLE));
  CHECK_EQ_U(w.onsets[NL_CONSUMER_UNOBSERVABLE], 1);
  world_free(&w);
}

/* Feeds one ack sample (ack_time in ms) of stream/consumer to w. */
static void world_ack(world *w, const char *stream, const char *consumer,
                      int64_t ack_ms, uint64_t deliveries) {
  nl_advisory a = {.kind = NL_ADV_ACK_SAMPLE, .deliveries = deliveries};
  snprintf(a.stream, sizeof(a.stream), "%s", stream);
  snprintf(a.consumer, sizeof(a.consumer), "%s", consumer);
  a.ack_time_ns = ack_ms * 1000000;
  a.received_ns = w->t;
  nl_engine_sink sink = {.transition = on_transition};
  nl_engine_advisory(w->engine, &a, w->t, &sink, w);
}

/* Ack samples: a bounded reservoir (the newest NL_ADVISED_ACKS), the counts
 * over ack_wait and redelivered, the nearest-rank P99; an active
 * ACK_WAIT_VIOLATION or MISSING_PROGRESS gets them as evidence and a
 * recommended ack_wait of 1.5 x P99 when that is more than the polled
 * value, with the derivation in the text; otherwise the polled value
 * stays and the text says why the samples are lower. */
static void test_ack_samples_p99(void) {
  world w;
  world_init(&w, false);
  add_stream(&w, "S");
  nl_consumer_snap *c = add_consumer(&w, 0, "slow");
  c->ack_wait_ns = 2 * SEC;
  world_poll(&w);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "S", "slow");
  CHECK(st != NULL);
  if (st == NULL)
    return;
  /* Fewer than the minimum: counts, no P99. */
  world_ack(&w, "S", "slow", 2500, 1);
  world_ack(&w, "S", "slow", 100, 2);
  nl_ack_stats a = nl_advised_ack_stats(st->advised, c->ack_wait_ns);
  CHECK_EQ_U(a.samples, 2);
  CHECK_EQ_U(a.over_wait, 1);
  CHECK_EQ_U(a.redelivered, 1);
  CHECK(a.p99_s == 0);
  /* 200 samples: only the newest 64 are held; 63 of 1 s and one of 3 s:
   * the P99 (rank 64 of 64) is 3 s. */
  for (int i = 0; i < 200; i++)
    world_ack(&w, "S", "slow", i == 150 ? 3000 : 1000, 1);
  a = nl_advised_ack_stats(st->advised, c->ack_wait_ns);
  CHECK_EQ_U(a.samples, NL_ADVISED_ACKS);
  CHECK_EQ_U(a.over_wait, 1);
  CHECK_EQ_U(a.redelivered, 0);
  CHECK(fabs(a.p99_s - 3.0) < 1e-9);
  CHECK(nl_advised_ack_stats(NULL, SEC).samples == 0);

  /* An active ACK_WAIT_VIOLATION whose polled recommendation is 4 s. */
  nl_finding out[NL_CLASS_COUNT];
  memset(out, 0, sizeof(out));
  out[NL_ACK_WAIT_VIOLATION].cls = NL_ACK_WAIT_VIOLATION;
  nl_finding_add(&out[NL_ACK_WAIT_VIOLATION], "recommended_ack_wait_s", 4);
  snprintf(out[NL_ACK_WAIT_VIOLATION].recommendation, NL_TEXT_MAX, "polled");
  nl_slow_add_ack_samples(st, c, &out[NL_ACK_WAIT_VIOLATION]);
  nl_finding *f = &out[NL_ACK_WAIT_VIOLATION];
  CHECK(nl_finding_get(f, "ack_samples", 0) == NL_ADVISED_ACKS);
  CHECK(nl_finding_get(f, "ack_samples_over_wait", 0) == 1);
  CHECK(nl_finding_get(f, "processing_p99_s", 0) == 3.0);
  CHECK(nl_finding_get(f, "recommended_ack_wait_s", 0) == 5); /* ceil 4.5 */
  CHECK(strstr(f->fix_command, "--wait 5s") != NULL);
  CHECK(strstr(f->recommendation, "1.5x the processing-time P99") != NULL);
  /* A polled value above 1.5 x P99 stays, and the text says why. */
  memset(out, 0, sizeof(out));
  out[NL_MISSING_PROGRESS].cls = NL_MISSING_PROGRESS;
  nl_finding_add(&out[NL_MISSING_PROGRESS], "recommended_ack_wait_s", 8);
  snprintf(out[NL_MISSING_PROGRESS].fix_command, NL_TEXT_MAX, "polled fix");
  snprintf(out[NL_MISSING_PROGRESS].recommendation, NL_TEXT_MAX, "polled");
  nl_slow_add_ack_samples(st, c, &out[NL_MISSING_PROGRESS]);
  f = &out[NL_MISSING_PROGRESS];
  CHECK(nl_finding_get(f, "recommended_ack_wait_s", 0) == 8);
  CHECK(strcmp(f->fix_command, "polled fix") == 0);
  CHECK(strncmp(f->recommendation, "polled (1.5x the P99 ack_time", 29) == 0);
  /* A held copy (already with the samples) is not changed again. */
  nl_finding held = *f;
  nl_slow_add_ack_samples(st, c, &out[NL_MISSING_PROGRESS]);
  CHECK(strcmp(out[NL_MISSING_PROGRESS].recommendation, held.recommendation) ==
        0);
  CHECK(out[NL_MISSING_PROGRESS].n_evidence == held.n_evidence);
  world_free(&w);
}

/* A request function answering STREAM.INFO and CONSUMER.INFO with the
 * shapes of nats-server 2.9.10's replies (AN/late: durable, ack none). */
static int fake_info(void *ctx, const char *subject, const char *payload,
                     char **reply, size_t *len, char *err, size_t errlen) {
  (void)payload;
  int *calls = ctx;
  (*calls)++;
  const char *text = NULL;
  if (strcmp(subject, "$JS.API.STREAM.INFO.AN") == 0)
    text = "{\"type\":\"io.nats.jetstream.api.v1.stream_info_response\","
           "\"config\":{\"name\":\"AN\",\"subjects\":[\"an.>\"],"
           "\"retention\":\"limits\",\"max_msgs\":-1,\"max_bytes\":-1,"
           "\"max_age\":0,\"discard\":\"old\",\"num_replicas\":1},"
           "\"created\":\"2026-11-29T22:00:00Z\",\"state\":{\"messages\":0,"
           "\"bytes\":0,\"first_seq\":0,\"last_seq\":0,"
           "\"consumer_count\":1}}";
  else if (strcmp(subject, "$JS.API.CONSUMER.INFO.AN.late") == 0)
    text = "{\"type\":\"io.nats.jetstream.api.v1.consumer_info_response\","
           "\"stream_name\":\"AN\",\"name\":\"late\","
           "\"created\":\"2026-11-29T22:00:01Z\",\"config\":{"
           "\"durable_name\":\"late\",\"deliver_policy\":\"all\","
           "\"ack_policy\":\"none\",\"max_deliver\":-1,"
           "\"max_ack_pending\":1000},\"delivered\":{\"consumer_seq\":0,"
           "\"stream_seq\":0},\"ack_floor\":{\"consumer_seq\":0,"
           "\"stream_seq\":0},\"num_ack_pending\":0,\"num_redelivered\":0,"
           "\"num_waiting\":0,\"num_pending\":0}";
  else if (strcmp(subject, "$JS.API.CONSUMER.INFO.AN.gone") == 0)
    text = "{\"type\":\"io.nats.jetstream.api.v1.consumer_info_response\","
           "\"error\":{\"code\":404,\"err_code\":10014,"
           "\"description\":\"consumer not found\"}}";
  if (text == NULL) {
    snprintf(err, errlen, "no reply within 2000 ms");
    return -1;
  }
  *reply = strdup(text);
  *len = strlen(text);
  return 0;
}

/* A CREATED advisory's consumer, read once, raises its configuration
 * classes at once; a consumer already held, or one that cannot be read,
 * changes nothing; the next poll holds the finding without a second
 * onset. */
static void test_created_consumer_refresh(void) {
  world w;
  world_init(&w, true);
  int calls = 0;
  char err[256];
  nl_snapshot_set set = {0};
  CHECK(nl_advisory_fetch_consumer(fake_info, &calls, "AN", "late", &set, err,
                                   sizeof(err)) == 0);
  CHECK_EQ_U(calls, 2);
  CHECK_EQ_U(set.n_streams, 1);
  CHECK_EQ_U(set.n_consumers, 1);
  nl_engine_sink sink = {.transition = on_transition};
  CHECK(nl_engine_created(w.engine, &set, w.t, &sink, &w));
  CHECK(active_for(&w, "AN", "late", NL_ACK_NONE_CONSUMER));
  CHECK_EQ_U(w.onsets[NL_ACK_NONE_CONSUMER], 1);
  CHECK(nl_engine_knows(w.engine, "AN", "late"));
  CHECK(!nl_engine_created(w.engine, &set, w.t, &sink, &w)); /* Held. */
  nl_snapshot_set_clear(&set);
  /* Not readable: an API error, a timeout, a name that is no token. */
  CHECK(nl_advisory_fetch_consumer(fake_info, &calls, "AN", "gone", &set, err,
                                   sizeof(err)) == -1);
  CHECK(strstr(err, "CONSUMER.INFO.AN.gone") != NULL);
  nl_snapshot_set_clear(&set);
  CHECK(nl_advisory_fetch_consumer(fake_info, &calls, "XX", "late", &set, err,
                                   sizeof(err)) == -1);
  nl_snapshot_set_clear(&set);
  int before = calls;
  CHECK(nl_advisory_fetch_consumer(fake_info, &calls, "AN", "a.b", &set, err,
                                   sizeof(err)) == -1);
  CHECK_EQ_U(calls, before);
  nl_snapshot_set_clear(&set);
  /* The next poll lists it: the finding holds, no second onset. */
  add_stream(&w, "AN");
  nl_consumer_snap *c = add_consumer(&w, 0, "late");
  c->ack_policy = NL_ACK_NONE;
  world_poll(&w);
  CHECK(active_for(&w, "AN", "late", NL_ACK_NONE_CONSUMER));
  CHECK_EQ_U(w.onsets[NL_ACK_NONE_CONSUMER], 1);
  world_free(&w);
}

/* Streams coming and going all day: each poll lists MAX_OBJ streams never
 * seen before (the previous ones are gone), 10 s apart. The engine forgets
 * a stream 10 minutes after its last listing, so it holds at most the
 * streams of the last 10 minutes (61 polls) however long it runs, and
 * finds each listed stream by name. */
static void test_stream_churn_is_forgotten(void) {
  world w;
  world_init(&w, true);
  static char names[MAX_OBJ][32];
  size_t most = 0;
  for (int poll = 0; poll < 400; poll++) {
    w.n_streams = 0;
    for (int i = 0; i < MAX_OBJ; i++) {
      snprintf(names[i], sizeof(names[i]), "S%d_%d", poll, i);
      nl_stream_snap *s = add_stream(&w, names[i]);
      s->cluster = "C1";
      s->replicas = 1; /* A stream-level finding to find by name. */
    }
    world_poll(&w);
    w.t += 9 * SEC; /* world_poll adds 1 s. */
    size_t held = nl_engine_streams_held(w.engine);
    if (held > most)
      most = held;
    CHECK(nl_engine_stream_finding(w.engine, names[MAX_OBJ - 1],
                                   NL_STREAM_SINGLE_REPLICA) != NULL);
  }
  /* 3,200 names seen; at most 62 polls' worth held. */
  CHECK(most >= MAX_OBJ * 60 && most <= MAX_OBJ * 62);
  world_free(&w);
}

/* The finding of cls held for stream/consumer of w, or an empty one (no
 * evidence, no text) when none is held, so that the checks on it fail
 * rather than crash. */
static const nl_finding *held_for(world *w, const char *stream,
                                  const char *consumer, nl_class cls) {
  static const nl_finding none;
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), stream, consumer);
  return st != NULL && st->active[cls] != NULL ? st->active[cls] : &none;
}

/* A consumer declares how long its processing takes (nats_lens metadata,
 * nats-server 2.10+). The plugin raises ACK_WAIT_VIOLATION from the
 * declaration alone when the first redelivery delay (ack_wait, or the
 * first backoff step) is not longer: at a CREATED advisory's read or the
 * first poll, without a redelivery, and with the fix 1.5 x the declared
 * time. It holds while the declaration stands and clears at the next poll
 * when ack_wait or the declaration is changed. A declaration well under
 * ack_wait, a consumer without one and an AckNone consumer stay silent;
 * the check command's engine (configuration classes off) leaves it to its
 * audit rule. */
static void test_declared_processing_raises_ack_wait(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "DP");
  nl_consumer_snap *shrt = add_consumer(&w, 0, "short");
  shrt->ack_wait_ns = 2 * SEC;
  declare(shrt, "max_processing", "5s");
  nl_consumer_snap *bo = add_consumer(&w, 0, "backoff");
  bo->ack_wait_ns = bo->backoff_first_ns = 2 * SEC;
  bo->backoff_steps = 2;
  bo->max_deliver = 5;
  declare(bo, "max_processing", "5s");
  nl_consumer_snap *eq = add_consumer(&w, 0, "equal");
  eq->ack_wait_ns = 5 * SEC;
  declare(eq, "max_processing", "5s");
  nl_consumer_snap *ok = add_consumer(&w, 0, "ok");
  declare(ok, "max_processing", "5s");
  add_consumer(&w, 0, "plain")->ack_wait_ns = 2 * SEC;
  nl_consumer_snap *none = add_consumer(&w, 0, "none");
  none->ack_policy = NL_ACK_NONE;
  none->durable = false;
  none->ack_wait_ns = 2 * SEC;
  declare(none, "max_processing", "5s");
  /* Announced by a CREATED advisory and read: raised at once. */
  nl_snapshot_set created = {.streams = w.streams,
                             .n_streams = 1,
                             .consumers = shrt,
                             .n_consumers = 1};
  nl_engine_sink sink = {.transition = on_transition};
  CHECK(nl_engine_created(w.engine, &created, w.t, &sink, &w));
  CHECK(active_for(&w, "DP", "short", NL_ACK_WAIT_VIOLATION));
  world_poll(&w);
  CHECK(active_for(&w, "DP", "backoff", NL_ACK_WAIT_VIOLATION));
  CHECK(active_for(&w, "DP", "equal", NL_ACK_WAIT_VIOLATION));
  CHECK(!active_for(&w, "DP", "ok", NL_ACK_WAIT_VIOLATION));
  CHECK(!active_for(&w, "DP", "plain", NL_ACK_WAIT_VIOLATION));
  CHECK(!active_for(&w, "DP", "none", NL_ACK_WAIT_VIOLATION));
  CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 3);
  const nl_finding *f = held_for(&w, "DP", "short", NL_ACK_WAIT_VIOLATION);
  CHECK(f->severity == NL_SEVERITY_CRITICAL);
  CHECK(nl_finding_get(f, "from_declaration", 0) == 1);
  CHECK(nl_finding_get(f, "declared_max_processing_s", 0) == 5);
  CHECK(nl_finding_get(f, "recommended_ack_wait_s", 0) == 8);
  CHECK(strcmp(f->fix_command, "nats consumer edit DP short --wait 8s") == 0);
  f = held_for(&w, "DP", "backoff", NL_ACK_WAIT_VIOLATION);
  CHECK(strcmp(f->fix_command, "nats consumer edit DP backoff --backoff linear "
                               "--backoff-steps 2 --backoff-min 8s "
                               "--backoff-max 16s") == 0);
  /* Held while the declaration stands, with no second onset. */
  for (int i = 0; i < 60; i++)
    world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 3);
  CHECK_EQ_U(w.clears[NL_ACK_WAIT_VIOLATION], 0);
  CHECK_EQ_U(w.onsets[NL_MISSING_PROGRESS], 0);
  /* The fixes: short's ack_wait as printed, backoff's backoff as printed,
   * equal's declaration lowered. Each clears at the next poll. */
  shrt->ack_wait_ns = 8 * SEC;
  bo->ack_wait_ns = bo->backoff_first_ns = 8 * SEC;
  declare(eq, "max_processing", "3s");
  world_poll(&w);
  CHECK(!active_for(&w, "DP", "short", NL_ACK_WAIT_VIOLATION));
  CHECK(!active_for(&w, "DP", "backoff", NL_ACK_WAIT_VIOLATION));
  CHECK(!active_for(&w, "DP", "equal", NL_ACK_WAIT_VIOLATION));
  CHECK_EQ_U(w.clears[NL_ACK_WAIT_VIOLATION], 3);
  for (int i = 0; i < 60; i++)
    world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 3);
  CHECK_EQ_U(w.told, 0);
  world_free(&w);
  /* Off: the check command's engine raises nothing from it. */
  world_init(&w, false);
  add_stream(&w, "DP");
  shrt = add_consumer(&w, 0, "short");
  shrt->ack_wait_ns = 2 * SEC;
  declare(shrt, "max_processing", "5s");
  world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 0);
  world_free(&w);
}

/* One poll of consumer c of stream s in which it delivers `fresh` new
 * messages and `again` redelivered by expiry while acking. */
static void expiry_poll(world *w, nl_stream_snap *s, nl_consumer_snap *c,
                        unsigned fresh, unsigned again) {
  s->last_seq += fresh;
  s->msgs = s->last_seq;
  c->delivered_stream_seq += fresh;
  c->delivered_consumer_seq += fresh + again;
  c->ack_last_ns = w->t - SEC / 10;
  c->num_ack_pending = 4;
  c->num_redelivered = again;
  c->num_pending = 20;
}

/* Redeliveries observed on a consumer that declares its processing time:
 * the fix the expiry rounds print is at least 1.5 x the declared time
 * (also in the check command's engine, which has the configuration
 * classes off), and with the configuration classes on the finding raised
 * from the declaration at the first poll is the same finding, one onset;
 * a few long tasks on a declaring consumer are that ACK_WAIT_VIOLATION,
 * never MISSING_PROGRESS beside it. */
static void test_declared_processing_with_redeliveries(void) {
  for (int on = 0; on <= 1; on++) {
    world w;
    world_init(&w, on);
    nl_stream_snap *s = add_stream(&w, "DR");
    nl_consumer_snap *c = add_consumer(&w, 0, "slow");
    c->ack_wait_ns = 2 * SEC;
    declare(c, "max_processing", "60s");
    expiry_poll(&w, s, c, 1, 0);
    world_poll(&w);
    CHECK(active_for(&w, "DR", "slow", NL_ACK_WAIT_VIOLATION) == on);
    for (int i = 0; i < 6; i++) {
      expiry_poll(&w, s, c, 1, 2);
      world_poll(&w);
    }
    const nl_finding *f = held_for(&w, "DR", "slow", NL_ACK_WAIT_VIOLATION);
    CHECK(nl_finding_get(f, "redeliveries", 0) >= 4);
    CHECK(nl_finding_get(f, "from_declaration", 0) == 0);
    CHECK(nl_finding_get(f, "declared_max_processing_s", 0) == 60);
    CHECK(nl_finding_get(f, "recommended_ack_wait_s", 0) == 90);
    CHECK(strcmp(f->fix_command, "nats consumer edit DR slow --wait 90s") == 0);
    CHECK(strstr(f->recommendation, "declared processing time") != NULL);
    CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 1);
    world_free(&w);
  }
  /* A long task (stream sequence 101, ack_wait 2 s) redelivered every
   * 2 s while later messages are acked: MISSING_PROGRESS for the consumer
   * that declares nothing, ACK_WAIT_VIOLATION alone for its twin that
   * declares the long task. */
  world w;
  world_init(&w, true);
  nl_consumer_snap *task[2];
  for (int k = 0; k < 2; k++) {
    nl_stream_snap *s = add_stream(&w, k ? "DLD" : "DLP");
    s->last_seq = s->msgs = 1000;
    nl_consumer_snap *c = task[k] = add_consumer(&w, (size_t)k, "task");
    c->ack_wait_ns = 2 * SEC;
    c->delivered_stream_seq = c->delivered_consumer_seq = 100;
    c->ack_floor_stream_seq = 100;
    c->num_ack_pending = 1;
    c->num_pending = 3;
  }
  declare(task[1], "max_processing", "7s");
  world_poll(&w);
  for (int i = 0; i < 8; i++) {
    for (int k = 0; k < 2; k++) {
      nl_consumer_snap *c = task[k];
      c->delivered_stream_seq += 5;
      c->delivered_consumer_seq += 5 + (unsigned)(i % 2);
      c->ack_last_ns = w.t - SEC / 10;
      c->num_ack_pending = 2;
      c->num_redelivered = 1;
    }
    world_poll(&w);
  }
  CHECK(active_for(&w, "DLP", "task", NL_MISSING_PROGRESS));
  CHECK(!active_for(&w, "DLP", "task", NL_ACK_WAIT_VIOLATION));
  CHECK(active_for(&w, "DLD", "task", NL_ACK_WAIT_VIOLATION));
  CHECK(!active_for(&w, "DLD", "task", NL_MISSING_PROGRESS));
  CHECK_EQ_U(w.onsets[NL_MISSING_PROGRESS], 1);
  CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 1);
  world_free(&w);
}

/* A declaration that cannot be read (a duration in words, workers 0, a
 * value with control characters) is told once through the engine's
 * declaration sink with the audit's words and fix, counts as not made,
 * and is told again only when it changes to another unreadable value or
 * is broken again after a readable one. Nothing is told with the
 * configuration classes off. */
static void test_bad_declaration_told_once(void) {
  world w;
  world_init(&w, true);
  add_stream(&w, "DB");
  nl_consumer_snap *words = add_consumer(&w, 0, "words");
  words->ack_wait_ns = 2 * SEC;
  declare(words, "max_processing", "thirty seconds");
  nl_consumer_snap *zero = add_consumer(&w, 0, "zero");
  declare(zero, "workers", "0");
  nl_consumer_snap *ctl = add_consumer(&w, 0, "ctl");
  ctl->ack_wait_ns = 2 * SEC;
  declare(ctl, "max_processing", "5s\n\x1b[2J");
  nl_consumer_snap *fine = add_consumer(&w, 0, "fine");
  declare(fine, "max_processing", "5s");
  declare(fine, "unknown", "x");
  for (int i = 0; i < 10; i++)
    world_poll(&w);
  CHECK_EQ_U(w.told, 3);
  CHECK_EQ_U(w.onsets[NL_ACK_WAIT_VIOLATION], 0);
  /* Changed to another unreadable value: told again. */
  declare(words, "max_processing", "a while");
  world_poll(&w);
  world_poll(&w);
  CHECK_EQ_U(w.told, 4);
  CHECK(strstr(w.last_told.description,
               "nats_lens.max_processing=\"a while\"") != NULL);
  CHECK(strcmp(w.last_told.fix_command,
               "nats consumer edit DB words --metadata "
               "nats_lens.max_processing=30s") == 0);
  /* Made readable: it counts (ack_wait 2 s is below it) and nothing is
   * told; broken again, it is told again. */
  declare(words, "max_processing", "5s");
  world_poll(&w);
  CHECK(active_for(&w, "DB", "words", NL_ACK_WAIT_VIOLATION));
  CHECK_EQ_U(w.told, 4);
  declare(words, "max_processing", "a while");
  world_poll(&w);
  CHECK_EQ_U(w.told, 5);
  world_free(&w);
  world_init(&w, false);
  add_stream(&w, "DB");
  words = add_consumer(&w, 0, "words");
  declare(words, "max_processing", "thirty seconds");
  world_poll(&w);
  CHECK_EQ_U(w.told, 0);
  world_free(&w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_advisory_parse_fixtures),
    NL_TEST(test_advisory_parse_hostile),
    NL_TEST(test_advisory_queue_bounded),
    NL_TEST(test_max_deliver_exhausted_from_advisory),
    NL_TEST(test_max_deliveries_claims_are_checked),
    NL_TEST(test_max_deliver_exhausted_polled_lower_bound),
    NL_TEST(test_nak_storm_from_advisories),
    NL_TEST(test_forged_nak_burst_is_not_a_storm),
    NL_TEST(test_bounded_nak_loop_is_not_a_storm),
    NL_TEST(test_retry_wave_is_not_a_storm),
    NL_TEST(test_deleted_advisory_is_a_claim),
    NL_TEST(test_config_classes_follow_audit),
    NL_TEST(test_interest_no_consumers),
    NL_TEST(test_interest_stream_before_its_consumers_is_silent),
    NL_TEST(test_interest_consumer_reset_is_not_a_drop),
    NL_TEST(test_single_replica_and_unobservable),
    NL_TEST(test_publish_rejected_limits),
    NL_TEST(test_consumer_single_replica),
    NL_TEST(test_publish_rejected_taking_is_not_refusing),
    NL_TEST(test_publish_rejected_hold_and_clear),
    NL_TEST(test_push_unbound),
    NL_TEST(test_retention_risk_forecast),
    NL_TEST(test_retention_risk_max_age),
    NL_TEST(test_retention_risk_healthy_are_silent),
    NL_TEST(test_retention_risk_does_not_flap),
    NL_TEST(test_nak_with_delay_is_not_ack_wait),
    NL_TEST(test_nak_advisories_explain_redeliveries),
    NL_TEST(test_nak_retries_with_late_advisories_are_not_ack_wait),
    NL_TEST(test_stream_churn_is_forgotten),
    NL_TEST(test_missing_stream_is_unobservable),
    NL_TEST(test_one_unobservable_poll_is_not_a_finding),
    NL_TEST(test_short_stream_list_keeps_unlisted),
    NL_TEST(test_ack_samples_p99),
    NL_TEST(test_created_consumer_refresh),
    NL_TEST(test_declared_processing_raises_ack_wait),
    NL_TEST(test_declared_processing_with_redeliveries),
    NL_TEST(test_bad_declaration_told_once),
};

NL_TEST_MAIN(tests)
