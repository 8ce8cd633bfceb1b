/* test_class_interest_no_consumers.c: INTEREST_NO_CONSUMERS at the
 * boundaries of its predicate (docs/detectors.md): an interest stream
 * without consumers for 60 s (exactly, one nanosecond short, and the wait
 * started again by a consumer, by the stream not listed, led elsewhere or
 * created again), one publish dropped over an interval (without consumers,
 * or with consumers that received nothing), the consumers changed over the
 * interval, and the finding held through intervals without new evidence;
 * its healthy look-alikes (a consumer that receives, a publish stored, the
 * other retentions) stay silent, and it clears after the hold, or at once
 * when the stream goes. Every case runs in a fresh world with the
 * configuration classes on and again off (then nothing is raised). */
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

/* A failed check of the case named label (its line and its expression). */
#define N_OF(a) (sizeof(a) / sizeof(*(a)))

/* Each character of polls is one poll of stream IN (consumer W, whose
 * filter matches nothing published unless it receives):
 *   e  no consumer, nothing published;
 *   p  no consumer, one message published and dropped (last_seq + 1);
 *   s  no consumer, one message published and stored (messages + 1);
 *   c  one consumer (W), nothing published;
 *   d  one consumer, one message published that it did not receive;
 *   r  one consumer, one message published that it received and acked;
 *   K  two consumers (W listed), nothing published;
 *   D  two consumers, one message published that none received;
 *   g  the stream not listed (nor reported missing);
 *   x  the stream led by another server;
 *   n  the stream deleted and created again, without consumers.
 * raised has one character per poll: '+' when the finding is held after
 * it, '-' when not. Polls are step_ns apart. */
typedef struct {
  const char *name;
  nl_retention retention;
  int64_t step_ns;
  const char *polls;
  const char *raised;
  double dropped; /* dropped_last_interval at the onset (0: by the wait). */
} interest_case;

#define INTEREST NL_RETENTION_INTEREST

static const interest_case interest_cases[] = {
    /* Without consumers: raised once 60 s have passed since the first
     * poll that saw the stream empty; exactly at 60 s, not 1 ns before. */
    {"empty, 60 s polls", INTEREST, 60 * SEC, "ee", "-+", 0},
    {"empty, 60 s - 1 ns polls", INTEREST, 60 * SEC - 1, "eee", "--+", 0},
    {"empty, 10 s polls", INTEREST, 10 * SEC, "eeeeeee", "------+", 0},
    /* A consumer seen for one poll starts the wait again. */
    {"empty, a consumer for one poll", INTEREST, 10 * SEC, "eeeeeceeeeeee",
     "------------+", 0},
    /* So does the stream not listed, led elsewhere, or created again. */
    {"empty, not listed for one poll", INTEREST, 10 * SEC, "eeeeegeeeeeee",
     "------------+", 0},
    {"empty, led elsewhere for one poll", INTEREST, 10 * SEC, "eeeeexeeeeeee",
     "------------+", 0},
    {"empty, created again", INTEREST, 10 * SEC, "eeeeeneeeeee", "-----------+",
     0},
    /* One publish dropped without consumers: at once, but only against a
     * poll before. */
    {"one publish dropped, no consumer", INTEREST, SEC, "ep", "-+", 1},
    {"a publish at the first poll", INTEREST, SEC, "p", "-", 0},
    {"one publish stored, no consumer", INTEREST, SEC, "es", "--", 0},
    {"nothing published, no consumer", INTEREST, SEC, "eeee", "----", 0},
    /* With consumers that receive nothing of it. */
    {"one publish dropped, one consumer", INTEREST, SEC, "cd", "-+", 1},
    {"a drop at the consumer's first poll", INTEREST, SEC, "d", "-", 0},
    {"one publish received: the look-alike", INTEREST, SEC, "crrrrr", "------",
     0},
    /* The consumers changed over the interval: what they received is not
     * known; the next interval with the same consumers tells. */
    {"consumers changed, then a drop", INTEREST, SEC, "cDD", "--+", 1},
    {"consumers changed with the drop", INTEREST, SEC, "cKD", "--+", 1},
    /* Held without new evidence (nothing published, the consumers as
     * before), well past the clearing hold. */
    {"held through quiet intervals", INTEREST, 10 * SEC, "cdcccccccc",
     "-+++++++++", 1},
    {"held while empty", INTEREST, 10 * SEC, "epeeeeee", "-+++++++", 1},
    /* Cleared after the hold (30 s and 2 polls) once new evidence speaks
     * against it: a publish received, consumers changed. */
    {"held, then received", INTEREST, 10 * SEC, "cdrrrr", "-++++-", 1},
    {"held, then the consumers changed", INTEREST, 10 * SEC, "cdKKKK", "-++++-",
     1},
    {"held, then a consumer that receives", INTEREST, 10 * SEC, "eprrrr",
     "-++++-", 1},
    /* Cleared at once when the stream is not listed or led elsewhere. */
    {"held, then not listed", INTEREST, SEC, "epg", "-+-", 1},
    {"held, then led elsewhere", INTEREST, SEC, "epx", "-+-", 1},
    /* A stream created again is a new stream: the finding clears at once
     * (its creation time changed) and the new stream gets its own wait. */
    {"held, then created again", INTEREST, 10 * SEC, "epneeeeee", "-+------+",
     0},
    /* The other retentions keep what is published (or discard it by their
     * limits, which other classes judge). */
    {"limits retention", NL_RETENTION_LIMITS, 10 * SEC, "eeeeeeepcd",
     "----------", 0},
    {"workqueue retention", NL_RETENTION_WORKQUEUE, 10 * SEC, "eeeeeeepcd",
     "----------", 0},
};

/* Sets w up for one poll of kind p (see interest_case). */
static void interest_poll(world *w, char p) {
  nl_stream_snap *s = &w->streams[0];
  nl_consumer_snap *c = &w->consumers[0];
  bool one = strchr("cdr", p) != NULL, two = strchr("KD", p) != NULL;
  s->consumer_count = two ? 2 : one ? 1 : 0;
  w->n_consumers = one || two ? 1 : 0;
  w->n_streams = p == 'g' ? 0 : 1;
  s->elsewhere = p == 'x';
  if (p == 'n')
    s->created_ns += 3600 * SEC;
  if (strchr("psdrD", p) != NULL)
    s->last_seq++;
  if (p == 's')
    s->msgs++;
  if (p == 'r') {
    c->delivered_consumer_seq++;
    c->delivered_stream_seq = c->ack_floor_stream_seq = s->last_seq;
  }
}

static void test_interest_no_consumers_cases(void) {
  for (size_t i = 0; i < N_OF(interest_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const interest_case *k = &interest_cases[i];
      char label[200];
      snprintf(label, sizeof(label), "%s (configuration classes %s)", k->name,
               config ? "on" : "off");
      CHECK_CASE(label, strlen(k->polls) == strlen(k->raised));
      world w;
      world_init(&w, config);
      nl_stream_snap *s = add_stream(&w, "IN");
      s->retention = k->retention;
      s->created_ns = 1650000000LL * SEC;
      s->last_seq = 40; /* Published before, all received. */
      s->first_seq = 41;
      nl_consumer_snap *c = add_consumer(&w, 0, "W");
      c->filtered = true;
      c->delivered_consumer_seq = c->delivered_stream_seq = 40;
      c->ack_floor_stream_seq = 40;
      w.step_ns = k->step_ns;
      int onsets = 0;
      for (size_t n = 0; k->polls[n] != '\0'; n++) {
        char p = k->polls[n];
        interest_poll(&w, p);
        world_poll(&w);
        /* The scenario happened: the stream was held from its polls, and
         * a listed consumer reached its history (world_free). */
        CHECK_CASE(label, nl_engine_streams_held(w.engine) == 1);
        bool want = config && k->raised[n] == '+';
        const nl_finding *f =
            nl_engine_stream_finding(w.engine, "IN", NL_INTEREST_NO_CONSUMERS);
        if ((f != NULL) != want)
          fprintf(stderr, "  case \"%s\": poll %zu\n", label, n + 1);
        CHECK_CASE(label, (f != NULL) == want);
        onsets += want && (n == 0 || k->raised[n - 1] != '+');
        if (f != NULL) {
          CHECK_CASE(label, f->severity == NL_SEVERITY_CRITICAL);
          CHECK_CASE(label, strstr(f->fix_command, "nats consumer add IN") ==
                                f->fix_command);
        }
        if (f != NULL && f->absent_polls == 0)
          CHECK_CASE(label,
                     nl_finding_get(f, "last_seq", -1) == (double)s->last_seq);
      }
      CHECK_CASE(label, w.onsets[NL_INTEREST_NO_CONSUMERS] == onsets);
      /* The finding as it was raised: by a drop, or by the wait. */
      if (onsets > 0)
        CHECK_CASE(label,
                   nl_finding_get(&w.last[NL_INTEREST_NO_CONSUMERS],
                                  "dropped_last_interval", 0) == k->dropped);
      world_free(&w);
    }
  }
}

/* The evidence of each form: the consumers counted, the stream's last
 * sequence and messages, and the publishes dropped over the interval. */
static void test_interest_no_consumers_evidence(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "IN");
  s->retention = NL_RETENTION_INTEREST;
  s->last_seq = 40;
  s->msgs = 3; /* Three still wait for an ack. */
  s->first_seq = 38;
  nl_consumer_snap *c = add_consumer(&w, 0, "W");
  c->filtered = true;
  c->delivered_consumer_seq = c->delivered_stream_seq = 40;
  world_poll(&w);
  s->last_seq += 7;
  world_poll(&w);
  const nl_finding *f =
      nl_engine_stream_finding(w.engine, "IN", NL_INTEREST_NO_CONSUMERS);
  CHECK(f != NULL);
  if (f != NULL) {
    CHECK(nl_finding_get(f, "consumer_count", -1) == 1);
    CHECK(nl_finding_get(f, "last_seq", -1) == 47);
    CHECK(nl_finding_get(f, "messages", -1) == 3);
    CHECK(nl_finding_get(f, "dropped_last_interval", -1) == 7);
  }
  /* Fewer messages stored than before (acks removed them) is no growth
   * either. */
  s->last_seq += 2;
  s->msgs = 1;
  world_poll(&w);
  f = nl_engine_stream_finding(w.engine, "IN", NL_INTEREST_NO_CONSUMERS);
  CHECK(f != NULL && nl_finding_get(f, "dropped_last_interval", -1) == 2);
  CHECK_EQ_U(w.onsets[NL_INTEREST_NO_CONSUMERS], 1);
  world_free(&w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_interest_no_consumers_cases),
    NL_TEST(test_interest_no_consumers_evidence),
};

NL_TEST_MAIN(tests)
