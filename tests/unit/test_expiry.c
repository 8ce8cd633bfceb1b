/* test_expiry.c: CONSUMER_EXPIRING and CONSUMER_EXPIRED on the unit
 * tests' world (1 s polls), and the API audit advisory they read. */
#include "nl_fixture.h"
#include "nl_test.h"
#include "nl_world.h"

#include "core/detect/nl_consumer_expiry.h"
#include "core/model/nl_advisory.h"

#include <stdlib.h>
#include <string.h>

/* A world with stream S (retention as given) and a durable pull consumer C
 * with inactive_threshold t_s, whose client delivers and acks every
 * message on every poll for polls polls (nothing left pending). */
/* The watch CONSUMER_EXPIRING keeps of st (its class state), or NULL. */
static const nl_expiry_watch *expiry_watch(const nl_consumer_state *st) {
  const nl_class_slot *slot = nl_state_slot(st, NL_CONSUMER_EXPIRING);
  return slot != NULL ? slot->state : NULL;
}

static nl_consumer_snap *busy_consumer(world *w, nl_retention retention,
                                       int t_s, int polls) {
  nl_stream_snap *s = add_stream(w, "S");
  s->retention = retention;
  nl_consumer_snap *c = add_consumer(w, 0, "C");
  c->inactive_threshold_ns = t_s * SEC;
  c->created_ns = w->t;
  for (int i = 0; i < polls; i++) {
    s->last_seq += 2;
    s->msgs = retention == NL_RETENTION_LIMITS ? s->last_seq : 0;
    c->delivered_consumer_seq = c->delivered_stream_seq = s->last_seq;
    c->ack_floor_consumer_seq = c->ack_floor_stream_seq = s->last_seq;
    c->delivered_last_ns = c->ack_last_ns = w->t - SEC / 10;
    world_poll(w);
  }
  return c;
}

/* One poll after a message was published to S that nobody receives. */
static void publish_unread(world *w, nl_consumer_snap *c) {
  nl_stream_snap *s = &w->streams[0];
  s->last_seq++;
  s->msgs++;
  c->num_pending++;
  world_poll(w);
}

/* The warning comes once the clients have been away half the threshold,
 * says how long is left and prints the edit; the edit clears it at once,
 * and with the clients away for longer than the old threshold it does not
 * come back before half the new one. */
static void test_expiry_warning_and_fix(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 20, 45);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 0);
  int polls = 0;
  while (!active_for(&w, "S", "C", NL_CONSUMER_EXPIRING) && polls < 30) {
    publish_unread(&w, c);
    polls++;
  }
  /* Idle from 0.1 s before the last busy poll: half of 20 s after 10. */
  CHECK(polls >= 10 && polls <= 11);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 1);
  const nl_finding *f = &w.last[NL_CONSUMER_EXPIRING];
  CHECK(nl_finding_get(f, "inactive_threshold_s", 0) == 20);
  CHECK(nl_finding_get(f, "time_left_s", -1) >= 9 &&
        nl_finding_get(f, "time_left_s", -1) <= 10);
  CHECK(nl_finding_get(f, "num_pending", 0) == polls);
  CHECK(nl_finding_get(f, "recommended_inactive_threshold_s", 0) == 60);
  CHECK(strcmp(f->fix_command,
               "nats consumer edit S C --inactive-threshold 60s") == 0);
  /* The fix: a new threshold clears at once. */
  c->inactive_threshold_ns = 60 * SEC;
  publish_unread(&w, c);
  CHECK(!active_for(&w, "S", "C", NL_CONSUMER_EXPIRING));
  CHECK_EQ_U(w.clears[NL_CONSUMER_EXPIRING], 1);
  /* Away for 25 s in all, past the old threshold: nothing until 30 s. */
  for (int i = 0; i < 13; i++)
    publish_unread(&w, c);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 1);
  world_free(&w);
}

/* A pull client that comes every 14 s of a 20 s threshold, with work
 * waiting in between: each gap passes half the threshold, but no gap is
 * longer than the ones it survived. */
static void test_expiry_regular_gaps_are_silent(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 20, 1);
  for (int i = 0; i < 300; i++) {
    publish_unread(&w, c);
    if (i % 14 == 13) {
      /* The client takes and acks what is there. */
      c->delivered_last_ns = c->ack_last_ns = w.t - SEC / 2;
      c->delivered_stream_seq = w.streams[0].last_seq;
      c->num_pending = 0;
    }
  }
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 0);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "S", "C");
  CHECK(st != NULL && expiry_watch(st) != NULL &&
        expiry_watch(st)->longest_gap_ns >= 13 * SEC);
  world_free(&w);
}

/* The client goes, the threshold runs out and the consumer is gone at the
 * next poll with 11 messages unread: CONSUMER_EXPIRED on the interest
 * stream, which dropped them; created again with the same threshold it
 * stays, edited to the recommended one it clears at once. */
static void test_expiry_expired_and_recreated(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_INTEREST, 10, 25);
  for (int i = 0; i < 11; i++)
    publish_unread(&w, c);
  CHECK(active_for(&w, "S", "C", NL_CONSUMER_EXPIRING));
  nl_consumer_snap keep = *c;
  w.n_consumers = 0;
  w.streams[0].consumer_count = 0;
  w.streams[0].msgs = 0; /* The interest stream drops them. */
  world_poll(&w);
  CHECK(!active_for(&w, "S", "C", NL_CONSUMER_EXPIRING));
  CHECK(active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRED], 1);
  const nl_finding *f = &w.last[NL_CONSUMER_EXPIRED];
  CHECK(nl_finding_get(f, "unread", 0) == 11);
  CHECK(nl_finding_get(f, "removed_with_it", 0) == 11);
  CHECK(nl_finding_get(f, "only_consumer", 0) == 1);
  CHECK(nl_finding_get(f, "recommended_inactive_threshold_s", 0) == 30);
  CHECK(strstr(f->description, "consumer C (durable)") != NULL);
  CHECK(strcmp(f->fix_command,
               "nats consumer add S C --pull --ack explicit --deliver 51 "
               "--wait 30s --max-pending 1000 --inactive-threshold 30s "
               "--defaults") == 0);
  /* Held while nobody creates it again. */
  for (int i = 0; i < 40; i++)
    world_poll(&w);
  CHECK(active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  /* Created again as it was: still too short. */
  *c = keep;
  c->created_ns = w.t;
  c->num_pending = 0;
  c->delivered_consumer_seq = 0;
  w.n_consumers = 1;
  world_poll(&w);
  world_poll(&w);
  world_poll(&w);
  CHECK(active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  CHECK(nl_finding_get(
            nl_engine_stream_finding(w.engine, "S", NL_CONSUMER_EXPIRED),
            "recreated_threshold_s", 0) == 10);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRED], 1);
  /* The fix. */
  c->inactive_threshold_ns = 30 * SEC;
  world_poll(&w);
  CHECK(!active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  CHECK_EQ_U(w.clears[NL_CONSUMER_EXPIRED], 1);
  world_free(&w);
}

/* Deleted before its threshold could run out (an operator's delete with
 * messages waiting), or audited as deleted by an API request: nothing. A
 * DELETED advisory that times the delete before the threshold wins over
 * the poll that sees it gone later. A pull request seen waiting is client
 * activity (way 3), and a worker at its max_ack_pending within its
 * ack_wait may be at work unseen (way 4): deleted 12 s later, neither is
 * taken for an expiry. */
static void test_expiry_deletes_are_not_expiry(void) {
  for (int way = 0; way < 5; way++) {
    world w;
    world_init(&w, true);
    nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 10, 25);
    int away = way == 0 ? 4 : way == 2 ? 8 : 12;
    if (way == 4) {
      /* At its max_ack_pending, the one message held 12 s of its 30 s
       * ack_wait: nothing it could be given, its worker may be at work. */
      c->max_ack_pending = 1;
      c->num_ack_pending = 1;
      c->delivered_last_ns = w.t;
    }
    for (int i = 0; i < away; i++) {
      c->num_waiting = way == 3 && i < away - 3;
      publish_unread(&w, c);
    }
    nl_advisory a = {.kind = way == 1 ? NL_ADV_API_DELETE : NL_ADV_DELETED};
    strcpy(a.stream, "S");
    strcpy(a.consumer, "C");
    /* way 2: deleted half a second after the last poll listed it, 8.5 s
     * into a 10 s threshold; the poll that sees it gone comes 5 s later,
     * past the threshold. */
    a.timestamp_ns = w.t - SEC / 2;
    a.received_ns = w.t;
    if (way == 2)
      w.t += 4 * SEC;
    if (way > 0)
      world_advise_msg(&w, &a);
    w.n_consumers = 0;
    world_poll(&w);
    if (w.onsets[NL_CONSUMER_EXPIRED] != 0)
      fprintf(stderr, "  raised for the delete of way %d\n", way);
    CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRED], 0);
    CHECK(!active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
    world_free(&w);
  }
}

/* Consumers whose removal costs nothing or is their design: a
 * request-reply ephemeral read to its end, an ack-none ordered reader with
 * messages left, a paused consumer, and a pull and a push one (its
 * subscriber gone, so its clients are shown absent) that expire with
 * nothing pending. None is warned about or reported gone. */
static void test_expiry_look_alikes_are_silent(void) {
  for (int kind = 0; kind < 5; kind++) {
    world w;
    world_init(&w, true);
    nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_INTEREST, 5, 1);
    if (kind == 0) {
      c->durable = false; /* Used once, right after its creation. */
    } else if (kind == 1) {
      c->durable = false;
      c->push = true;
      c->ack_policy = NL_ACK_NONE;
    } else if (kind == 2) {
      c->paused = true;
    } else if (kind == 4) {
      c->push = true;
      c->push_bound = false;
    }
    for (int i = 0; i < (kind == 0 ? 6 : 30); i++) {
      if (kind >= 3)
        world_poll(&w);
      else
        publish_unread(&w, c);
      if (kind != 0 && i < 12)
        c->delivered_last_ns = c->ack_last_ns = w.t - SEC / 2;
    }
    w.n_consumers = 0;
    world_poll(&w);
    CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 0);
    CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRED], 0);
    world_free(&w);
  }
}

/* A worker busy with one long task, sending in-progress acks the polls
 * cannot see: idle past its threshold and still there, it is known to be
 * active unseen, and the warning it got clears and does not come back. */
static void test_expiry_outlived_threshold_is_unseen_activity(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 20, 45);
  c->ack_wait_ns = 5 * SEC;
  c->num_ack_pending = 1;
  c->delivered_last_ns = w.t; /* The long task's message. */
  for (int i = 0; i < 120; i++)
    publish_unread(&w, c);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w.engine), "S", "C");
  CHECK(st != NULL && expiry_watch(st) != NULL && expiry_watch(st)->unseen);
  CHECK(!active_for(&w, "S", "C", NL_CONSUMER_EXPIRING));
  CHECK(w.onsets[NL_CONSUMER_EXPIRING] <= 1);
  world_free(&w);
}

/* A push consumer whose subscriber goes: warned, then gone after its
 * threshold from the first poll without a subscriber. */
static void test_expiry_push_unbound(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 10, 0);
  c->push = true;
  c->push_bound = true;
  for (int i = 0; i < 25; i++)
    publish_unread(&w, c);
  c->delivered_last_ns = c->ack_last_ns = w.t - 2 * SEC;
  c->push_bound = false;
  int polls = 0;
  while (!active_for(&w, "S", "C", NL_CONSUMER_EXPIRING) && polls < 20) {
    publish_unread(&w, c);
    polls++;
  }
  CHECK(polls >= 6 && polls <= 7);
  CHECK(strstr(w.last[NL_CONSUMER_EXPIRING].description, "subscriber") != NULL);
  while (polls++ < 11)
    publish_unread(&w, c);
  w.n_consumers = 0;
  world_poll(&w);
  CHECK(active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  /* No fix command: a push consumer's deliver subject is not kept. */
  CHECK(w.last[NL_CONSUMER_EXPIRED].fix_command[0] == '\0');
  world_free(&w);
}

/* Nobody creates it again: the finding clears after an hour, not before. */
static void test_expiry_expired_clears_after_hold(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 10, 25);
  for (int i = 0; i < 12; i++)
    publish_unread(&w, c);
  w.n_consumers = 0;
  world_poll(&w);
  CHECK(active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  w.step_ns = 60 * SEC;
  for (int i = 0; i < 59; i++)
    world_poll(&w);
  CHECK(active_for(&w, "S", NULL, NL_CONSUMER_EXPIRED));
  int polls = world_polls_to_clear(&w, "S", NULL, NL_CONSUMER_EXPIRED, 10);
  CHECK(polls >= 1 && polls <= 3);
  CHECK_EQ_U(w.clears[NL_CONSUMER_EXPIRED], 1);
  world_free(&w);
}

/* The API audit of a consumer delete (recorded from nats-server 2.9.10 and
 * 2.12.0) is read; audits of other requests are not wanted, and a failed
 * delete or a delete of another subject is refused. */
static void test_expiry_api_audit_parse(void) {
  static const char *const versions[] = {"2.9.10", "2.12.0"};
  for (size_t v = 0; v < 2; v++) {
    char path[128];
    snprintf(path, sizeof(path), "%s/advisory_api_consumer_delete.json",
             versions[v]);
    size_t len = 0;
    char *data = nl_test_read_fixture(path, &len);
    CHECK(data != NULL);
    if (data == NULL)
      continue;
    nl_advisory a;
    char err[256];
    CHECK(nl_advisory_wanted(nl_advisory_api_subject, data, len));
    CHECK(nl_advisory_parse(nl_advisory_api_subject, data, len, &a, err,
                            sizeof(err)) == 0);
    CHECK(a.kind == NL_ADV_API_DELETE);
    CHECK(strcmp(a.stream, "FX_LIMITS") == 0);
    CHECK(strcmp(a.consumer, "GONE") == 0);
    CHECK(a.timestamp_ns > 0);
    /* Only on the API audit subject. */
    CHECK(nl_advisory_parse("$JS.EVENT.ADVISORY.CONSUMER.DELETED.FX_LIMITS."
                            "GONE",
                            data, len, &a, err, sizeof(err)) == -1);
    free(data);
    snprintf(path, sizeof(path), "%s/advisory_api_audit.json", versions[v]);
    data = nl_test_read_fixture(path, &len);
    CHECK(data != NULL);
    if (data != NULL)
      CHECK(!nl_advisory_wanted(nl_advisory_api_subject, data, len));
    free(data);
  }
  nl_advisory a;
  char err[256];
  const char *failed =
      "{\"type\":\"io.nats.jetstream.advisory.v1.api_audit\",\"subject\":"
      "\"$JS.API.CONSUMER.DELETE.S.C\",\"response\":\"{\\\"error\\\":{"
      "\\\"code\\\":404}}\"}";
  CHECK(nl_advisory_parse(NULL, failed, strlen(failed), &a, err, sizeof(err)) ==
        -1);
  const char *bad_names =
      "{\"type\":\"io.nats.jetstream.advisory.v1.api_audit\",\"subject\":"
      "\"$JS.API.CONSUMER.DELETE.S.C.X\",\"response\":\"{\\\"success\\\":"
      "true}\"}";
  CHECK(nl_advisory_parse(NULL, bad_names, strlen(bad_names), &a, err,
                          sizeof(err)) == -1);
  /* Other advisories are wanted whatever they hold. */
  CHECK(nl_advisory_wanted("$JS.EVENT.ADVISORY.CONSUMER.DELETED.S.C", "{}", 2));
}

/* A worker that holds a message within its ack_wait (30 s) may be at work
 * on it, unseen: 15 s after its delivery, with work waiting, a 20 s
 * threshold is not half gone yet; 10 s further on it is. */
static void test_expiry_held_message_counts_its_ack_wait(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 20, 45);
  c->num_ack_pending = 1;
  c->delivered_last_ns = w.t;
  for (int i = 0; i < 15; i++)
    publish_unread(&w, c);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 0);
  for (int i = 0; i < 27; i++)
    publish_unread(&w, c);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 1);
  world_free(&w);
}

/* A quiet stream (nothing to deliver for 60 s, clients polling unseen),
 * then the clients go: work comes in and stands undelivered. The idle time
 * starts at the last quiet poll, not at the last delivery a minute
 * before, and the warning comes half a threshold later. */
static void test_expiry_quiet_then_gone(void) {
  world w;
  world_init(&w, true);
  nl_consumer_snap *c = busy_consumer(&w, NL_RETENTION_LIMITS, 20, 45);
  for (int i = 0; i < 60; i++)
    world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_CONSUMER_EXPIRING], 0);
  int polls = 0;
  while (!active_for(&w, "S", "C", NL_CONSUMER_EXPIRING) && polls < 30) {
    publish_unread(&w, c);
    polls++;
  }
  CHECK(polls >= 10 && polls <= 12);
  world_free(&w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_expiry_warning_and_fix),
    NL_TEST(test_expiry_regular_gaps_are_silent),
    NL_TEST(test_expiry_expired_and_recreated),
    NL_TEST(test_expiry_deletes_are_not_expiry),
    NL_TEST(test_expiry_look_alikes_are_silent),
    NL_TEST(test_expiry_outlived_threshold_is_unseen_activity),
    NL_TEST(test_expiry_push_unbound),
    NL_TEST(test_expiry_expired_clears_after_hold),
    NL_TEST(test_expiry_held_message_counts_its_ack_wait),
    NL_TEST(test_expiry_quiet_then_gone),
    NL_TEST(test_expiry_api_audit_parse),
};

NL_TEST_MAIN(tests)
