/* test_detect.c: detectors and history on synthetic poll sequences.
 *
 * Each test drives the engine with one stream and one consumer whose fields
 * change between polls the way a real nats-server's do in that situation
 * (see tests/tools/SCENARIOS.md for the recorded traces these follow). */
#include "core/model/nl_names.h"
#include "core/nl_engine.h"
#include "core/report/nl_onset_rate.h"
#include "nl_test.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

typedef struct {
  nl_engine *engine;
  int64_t t;
  int onsets[NL_CLASS_COUNT];
  int clears[NL_CLASS_COUNT];
  int first_onset_poll[NL_CLASS_COUNT];
  int polls;
  int recorded; /* Polls the consumer's history took in (see sim_free). */
  nl_finding last[NL_CLASS_COUNT];
  nl_stream_snap stream;
  nl_consumer_snap consumer;
} sim;

static void on_transition(void *ud, const char *stream, const char *consumer,
                          const nl_finding *f, bool active,
                          const char *reason) {
  (void)stream, (void)consumer, (void)reason;
  sim *s = ud;
  if (active) {
    if (s->onsets[f->cls]++ == 0)
      s->first_onset_poll[f->cls] = s->polls;
    s->last[f->cls] = *f;
  } else {
    s->clears[f->cls]++;
  }
}

/* A stream of 1000 messages and a healthy pull consumer with ack_wait 30 s. */
static void sim_init(sim *s) {
  memset(s, 0, sizeof(*s));
  nl_detect_params p;
  nl_detect_params_default(&p);
  s->engine = nl_engine_create(&p);
  s->t = 1700000000LL * SEC;
  s->stream.name = "ORDERS";
  s->stream.max_msgs = -1;
  s->stream.max_bytes = -1;
  s->stream.first_seq = 1;
  s->stream.last_seq = 1000;
  s->stream.msgs = 1000;
  s->stream.consumers_complete = true;
  s->consumer.stream = "ORDERS";
  s->consumer.name = "proc";
  s->consumer.created_ns = 1600000000LL * SEC;
  s->consumer.ack_wait_ns = 30 * SEC;
  s->consumer.max_ack_pending = 1000;
  s->consumer.max_deliver = -1;
}

/* Ends a simulation. Every poll must have reached the consumer's history:
 * a test that finds nothing must have had its scenario seen. */
static void sim_free(sim *s) {
  CHECK_EQ_U(s->recorded, s->polls);
  nl_engine_free(s->engine);
}

/* Applies one poll with the current stream and consumer fields, then moves
 * the clock by one second. */
static void sim_poll(sim *s) {
  nl_snapshot_set set = {0};
  set.streams = &s->stream;
  set.n_streams = 1;
  set.consumers = &s->consumer;
  set.n_consumers = 1;
  nl_engine_sink sink = {.transition = on_transition};
  s->polls++;
  nl_engine_apply(s->engine, &set, s->t, &sink, s);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s->engine), "ORDERS", "proc");
  const nl_sample *latest = st != NULL ? nl_state_latest(st) : NULL;
  if (latest != NULL && latest->t_ns == s->t &&
      latest->delivered_consumer_seq == s->consumer.delivered_consumer_seq)
    s->recorded++;
  s->t += SEC;
}

static bool sim_active(sim *s, nl_class cls) {
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s->engine), "ORDERS", "proc");
  return st != NULL && st->active[cls] != NULL;
}

static int total_onsets(const sim *s) {
  int n = 0;
  for (int i = 0; i < NL_CLASS_COUNT; i++)
    n += s->onsets[i];
  return n;
}

/* Delivers n new messages, all acked within the interval. */
static void healthy_step(sim *s, unsigned n) {
  nl_consumer_snap *c = &s->consumer;
  s->stream.last_seq += n;
  c->delivered_consumer_seq += n;
  c->delivered_stream_seq += n;
  c->ack_floor_stream_seq = c->delivered_stream_seq - 1;
  c->ack_last_ns = s->t - SEC / 10;
  c->num_ack_pending = 1;
  c->num_pending = 3;
}

/* Polls s until its finding of cls clears, at most limit polls; before each
 * poll, msgs more messages are delivered and acked when msgs > 0. Returns
 * the polls taken. A condition gone by itself clears only after the
 * engine's clearing hold (30 s of 1 s polls). */
static int sim_polls_to_clear(sim *s, nl_class cls, int msgs, int limit) {
  int polls = 0;
  while (sim_active(s, cls) && polls < limit) {
    if (msgs > 0)
      healthy_step(s, msgs);
    sim_poll(s);
    polls++;
  }
  return polls;
}

static void test_healthy_no_findings(void) {
  sim s;
  sim_init(&s);
  for (int i = 0; i < 120; i++) {
    healthy_step(&s, 10);
    sim_poll(&s);
  }
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_busy_long_ack_wait_not_missing_progress(void) {
  /* The research tool fires MISSING_PROGRESS at ack-pending ratio >= 0.9
   * with ack_wait > 30 s. A busy consumer without redeliveries is healthy. */
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 120 * SEC;
  s.consumer.max_ack_pending = 100;
  for (int i = 0; i < 60; i++) {
    healthy_step(&s, 5);
    s.consumer.num_ack_pending = 95;
    s.consumer.ack_floor_stream_seq = s.consumer.delivered_stream_seq - 95;
    sim_poll(&s);
  }
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

/* ack_wait 2 s, processing 3 s: two expiry redeliveries each second while
 * acks (and the floor) keep moving. */
static void ack_wait_step(sim *s) {
  nl_consumer_snap *c = &s->consumer;
  c->delivered_consumer_seq += 3;
  c->delivered_stream_seq += 1;
  c->ack_floor_stream_seq += 1;
  c->ack_last_ns = s->t - SEC / 10;
  c->num_ack_pending = 4;
  c->num_redelivered = 3;
  c->num_pending = 20;
}

static void test_ack_wait_violation_fires_and_clears(void) {
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 2 * SEC;
  healthy_step(&s, 1);
  sim_poll(&s);
  for (int i = 0; i < 5; i++) {
    ack_wait_step(&s);
    sim_poll(&s);
  }
  CHECK(sim_active(&s, NL_ACK_WAIT_VIOLATION));
  /* Poll 1 is the baseline; redeliveries show from poll 2 on and must
   * recur over more than ack_wait + one interval (3 s): poll 6. */
  CHECK_EQ_U(s.first_onset_poll[NL_ACK_WAIT_VIOLATION], 6);
  CHECK(!sim_active(&s, NL_NAK_STORM));
  CHECK(!sim_active(&s, NL_MISSING_PROGRESS));
  const nl_finding *f = &s.last[NL_ACK_WAIT_VIOLATION];
  CHECK(nl_finding_get(f, "redeliveries", 0) >= 4);
  CHECK(strstr(f->fix_command, "nats consumer edit ORDERS proc --wait") ==
        f->fix_command);
  CHECK(f->severity == NL_SEVERITY_CRITICAL);
  /* The fix: ack_wait raised, no more redeliveries. */
  s.consumer.ack_wait_ns = 10 * SEC;
  int polls_to_clear = 0;
  while (sim_active(&s, NL_ACK_WAIT_VIOLATION) && polls_to_clear < 60) {
    healthy_step(&s, 1);
    sim_poll(&s);
    polls_to_clear++;
  }
  CHECK(!sim_active(&s, NL_ACK_WAIT_VIOLATION));
  CHECK_EQ_U(s.clears[NL_ACK_WAIT_VIOLATION], 1);
  sim_free(&s);
}

static void test_ack_wait_counts_redeliveries_acked_between_polls(void) {
  /* num_redelivered is a gauge: redelivered messages acked before the next
   * poll leave it at 0. The redeliveries still count. */
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 2 * SEC;
  healthy_step(&s, 1);
  sim_poll(&s);
  for (int i = 0; i < 6; i++) {
    ack_wait_step(&s);
    s.consumer.num_redelivered = 0;
    sim_poll(&s);
  }
  CHECK(sim_active(&s, NL_ACK_WAIT_VIOLATION));
  sim_free(&s);
}

static void test_ack_wait_with_polls_much_shorter_than_ack_wait(void) {
  /* ack_wait 30 s, polls every second, expiries spread over every interval:
   * the repeat must still be recognised (redelivery slots span more than
   * ack_wait + one interval). */
  sim s;
  sim_init(&s);
  for (int i = 0; i < 40; i++) {
    ack_wait_step(&s);
    s.consumer.num_ack_pending = 200;
    sim_poll(&s);
  }
  CHECK(sim_active(&s, NL_ACK_WAIT_VIOLATION));
  CHECK(s.first_onset_poll[NL_ACK_WAIT_VIOLATION] >= 32);
  CHECK(s.first_onset_poll[NL_ACK_WAIT_VIOLATION] <= 34);
  sim_free(&s);
}

static void test_ack_wait_seen_when_redelivery_lifts_consumer_floor(void) {
  /* ack_wait 30 s, polls every second, 200 messages outstanding for longer
   * than ack_wait. The server's ack floor consumer sequence is the lowest
   * outstanding stream sequence's latest delivery less one: after that
   * message is redelivered it is near the newest delivery, though older
   * deliveries of later messages are still outstanding. Only the stream
   * floor proves how old the outstanding messages are: the expiry
   * redeliveries must count. */
  sim s;
  sim_init(&s);
  for (int i = 0; i < 40; i++) {
    ack_wait_step(&s);
    s.consumer.num_ack_pending = 200;
    s.consumer.ack_floor_stream_seq = s.consumer.delivered_stream_seq - 200;
    s.consumer.ack_floor_consumer_seq = s.consumer.delivered_consumer_seq - 1;
    sim_poll(&s);
  }
  CHECK(sim_active(&s, NL_ACK_WAIT_VIOLATION));
  sim_free(&s);
}

static void test_single_redelivery_is_not_a_finding(void) {
  sim s;
  sim_init(&s);
  healthy_step(&s, 5);
  sim_poll(&s);
  healthy_step(&s, 5);
  s.consumer.delivered_consumer_seq += 1; /* One redelivery. */
  s.consumer.num_redelivered = 1;
  sim_poll(&s);
  for (int i = 0; i < 10; i++) {
    healthy_step(&s, 5);
    sim_poll(&s);
  }
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_crash_redelivery_burst_is_not_a_finding(void) {
  /* A worker died holding 8 messages; they expire together once and are
   * redelivered to another worker. That is the guarantee working. */
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 5 * SEC;
  for (int i = 0; i < 5; i++) {
    healthy_step(&s, 5);
    sim_poll(&s);
  }
  healthy_step(&s, 5);
  s.consumer.delivered_consumer_seq += 8;
  s.consumer.num_ack_pending = 9;
  sim_poll(&s);
  for (int i = 0; i < 10; i++) {
    healthy_step(&s, 5);
    sim_poll(&s);
  }
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_crash_redeliveries_spread_over_polls(void) {
  /* Workers died holding messages delivered over 2 s: the orphans expire
   * over 2 s too (ack_wait 5 s), seen in three polls. Still one episode. */
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 5 * SEC;
  for (int i = 0; i < 5; i++) {
    healthy_step(&s, 5);
    sim_poll(&s);
  }
  for (int i = 0; i < 3; i++) {
    healthy_step(&s, 5);
    s.consumer.delivered_consumer_seq += 3;
    s.consumer.num_ack_pending = 6;
    sim_poll(&s);
  }
  for (int i = 0; i < 15; i++) {
    healthy_step(&s, 5);
    sim_poll(&s);
  }
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

/* One poison message NAKed in a loop: 40 redeliveries a second, the floor
 * pinned, one message outstanding. */
static void nak_step(sim *s) {
  nl_consumer_snap *c = &s->consumer;
  c->delivered_consumer_seq += 40;
  c->num_ack_pending = 1;
  c->num_redelivered = 1;
  c->num_pending = 10;
}

/* The same NAK loop on a consumer whose max_deliver (5) bounds it: each
 * message cycles at most 5 times and is then exhausted, which is
 * MAX_DELIVER_EXHAUSTED's business; no NAK_STORM by polling. */
static void test_bounded_nak_loop_polled_is_not_a_storm(void) {
  sim s;
  sim_init(&s);
  s.consumer.max_deliver = 5;
  healthy_step(&s, 5);
  sim_poll(&s);
  for (int i = 0; i < 5; i++) {
    nak_step(&s);
    sim_poll(&s);
  }
  CHECK_EQ_U(s.onsets[NL_NAK_STORM], 0);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK(st != NULL && st->redelivered_total == 200);
  sim_free(&s);
}

/* A restarted server reports a consumer's creation time a fraction of a
 * millisecond off: the same consumer, whose history and findings go on
 * (a MAX_PENDING_THROTTLE whose condition stands is not cleared and raised
 * again, and the redelivery counts are not lost). */
static void test_restored_creation_time_is_the_same_consumer(void) {
  sim s;
  sim_init(&s);
  s.consumer.max_ack_pending = 5;
  healthy_step(&s, 5);
  s.consumer.num_ack_pending = 5;
  s.consumer.num_pending = 20;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  s.consumer.created_ns += 300000; /* 0.3 ms. */
  for (int i = 0; i < 40; i++)
    sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  CHECK_EQ_U(s.onsets[NL_MAX_PENDING_THROTTLE], 1);
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 0);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK(st != NULL && st->resets == 0);
  /* Deleted and created again a second later: a new consumer, whose
   * history starts again. */
  s.consumer.created_ns += SEC;
  sim_poll(&s);
  CHECK(st->resets == 1);
  sim_free(&s);
}

static void test_nak_storm_needs_two_intervals(void) {
  sim s;
  sim_init(&s);
  healthy_step(&s, 5);
  sim_poll(&s);
  nak_step(&s);
  sim_poll(&s);
  CHECK(!sim_active(&s, NL_NAK_STORM)); /* One interval: transient. */
  nak_step(&s);
  sim_poll(&s);
  CHECK(sim_active(&s, NL_NAK_STORM));
  CHECK_EQ_U(s.first_onset_poll[NL_NAK_STORM], 3);
  CHECK(!sim_active(&s, NL_ACK_WAIT_VIOLATION));
  CHECK(!sim_active(&s, NL_MISSING_PROGRESS));
  const nl_finding *f = &s.last[NL_NAK_STORM];
  CHECK(nl_finding_get(f, "redeliveries_per_s", 0) >= 39);
  CHECK(strstr(f->fix_command, "--max-deliver") != NULL);
  /* Fixed (poison message terminated): floor moves, no redeliveries. It
   * holds through the clearing hold, then clears. */
  CHECK(sim_polls_to_clear(&s, NL_NAK_STORM, 5, 60) == 31);
  CHECK(!sim_active(&s, NL_NAK_STORM));
  CHECK_EQ_U(s.clears[NL_NAK_STORM], 1);
  sim_free(&s);
}

static void test_transient_nak_is_not_a_storm(void) {
  sim s;
  sim_init(&s);
  healthy_step(&s, 5);
  sim_poll(&s);
  nak_step(&s);
  sim_poll(&s);
  healthy_step(&s, 5);
  sim_poll(&s);
  nak_step(&s);
  sim_poll(&s);
  healthy_step(&s, 5);
  sim_poll(&s);
  CHECK_EQ_U(s.onsets[NL_NAK_STORM], 0);
  sim_free(&s);
}

/* ack_wait 2 s, 100 messages delivered and acked, and a first poll. */
/* ack_wait 2 s, 100 messages acked, and `running` more delivered above
 * the floor before the first poll (long tasks already running). */
static void long_task_init(sim *s, unsigned running) {
  sim_init(s);
  s->consumer.ack_wait_ns = 2 * SEC;
  healthy_step(s, 100);
  s->consumer.ack_floor_stream_seq = 100;
  s->consumer.delivered_stream_seq += running;
  s->consumer.delivered_consumer_seq += running;
  sim_poll(s);
}

/* One poll in which n new messages are delivered and acked past the floor
 * and `again` long tasks are redelivered by expiry. */
static void long_task_step(sim *s, unsigned n, unsigned again,
                           uint32_t ack_pending) {
  nl_consumer_snap *c = &s->consumer;
  c->delivered_stream_seq += n;
  c->delivered_consumer_seq += n + again;
  c->ack_last_ns = s->t - SEC / 10;
  c->num_ack_pending = ack_pending;
  c->num_redelivered = ack_pending / 2;
  sim_poll(s);
}

static void test_missing_progress_long_task(void) {
  /* ack_wait 2 s; stream sequence 101 is a long task without in-progress
   * acks: redelivered every 2 s while later messages are acked. */
  sim s;
  long_task_init(&s, 0);
  for (int i = 0; i < 8; i++)
    long_task_step(&s, 5, i % 2, 2);
  CHECK(sim_active(&s, NL_MISSING_PROGRESS));
  CHECK(!sim_active(&s, NL_ACK_WAIT_VIOLATION));
  CHECK(!sim_active(&s, NL_NAK_STORM));
  /* Later messages are acked past the stuck one from poll 2; fires once
   * that has gone on for 2 x ack_wait: poll 6. */
  CHECK_EQ_U(s.first_onset_poll[NL_MISSING_PROGRESS], 6);
  CHECK_EQ_U(
      nl_finding_get(&s.last[NL_MISSING_PROGRESS], "stuck_stream_seq", 0), 101);
  /* The task is outstanding for up to one poll interval (1 s) beyond the
   * last poll that saw it: the recommended ack_wait covers that too, 1.5 x
   * (outstanding + 1 s), where 1.5 x outstanding alone can equal the task's
   * real length and change nothing. */
  double out_s =
      nl_finding_get(&s.last[NL_MISSING_PROGRESS], "outstanding_s", 0);
  double rec =
      nl_finding_get(&s.last[NL_MISSING_PROGRESS], "recommended_ack_wait_s", 0);
  CHECK(out_s > 0);
  CHECK(rec >= ceil(1.5 * (out_s + 1)));
  /* The task finishes: the floor moves on. The finding holds while the
   * next long task may be building up (2 x ack_wait after the floor moved,
   * and 4 x ack_wait + one poll after the last expiry round), then
   * clears. */
  healthy_step(&s, 5);
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MISSING_PROGRESS));
  /* Its own rule lets go within 10 polls; the clearing hold adds 30. */
  int polls_to_clear = 1 + sim_polls_to_clear(&s, NL_MISSING_PROGRESS, 5, 60);
  CHECK(!sim_active(&s, NL_MISSING_PROGRESS));
  CHECK(polls_to_clear > 31 && polls_to_clear <= 10 + 31);
  CHECK(!sim_active(&s, NL_ACK_WAIT_VIOLATION));
  CHECK_EQ_U(s.clears[NL_MISSING_PROGRESS], 1);
  sim_free(&s);
}

/* The same long task with a gap in what the polls saw at poll 4 (the
 * connection to the server lost and made again, as after a restart): what
 * was seen before the gap no longer counts, the standing floor proves
 * nothing, and the redeliveries within one delay and two polls of the gap
 * may be the clients' orphans: the rounds after those must recur again,
 * so the finding comes at poll 15 (not 6 as without the gap). */
static void test_gap_starts_a_new_regime(void) {
  sim s;
  long_task_init(&s, 0);
  for (int i = 0; i < 20; i++) {
    if (i == 3)
      nl_engine_gap(s.engine, s.t);
    long_task_step(&s, 5, i % 2, 2);
  }
  CHECK(sim_active(&s, NL_MISSING_PROGRESS));
  CHECK_EQ_U(s.first_onset_poll[NL_MISSING_PROGRESS], 15);
  /* After a gap the standing floor proves nothing (it may be one the
   * server restored): the redeliveries recurring name the long task. */
  CHECK(strstr(s.last[NL_MISSING_PROGRESS].description,
               "redeliveries by "
               "ack_wait expiry") != NULL);
  CHECK(!sim_active(&s, NL_ACK_WAIT_VIOLATION));
  sim_free(&s);
}

/* A limits stream (max_msgs 3000) and a consumer with ack_wait 5 s, 4
 * workers with 3 messages in flight, 20 messages a second, acked in time.
 * At poll 11 the server restarts: the consumer comes back with its ack
 * floor at stream sequence 1 (restored from older state, as 2.9.10 does),
 * and the floor stays there while messages keep flowing, because some are
 * always pending. The 3 messages the crashed workers held expire 5 s
 * later and are redelivered once. None of this is a stuck task, and the
 * stale floor is no retention exposure either: no finding, whether the
 * gap was seen (a reconnect) or not, and whether the delivered counters
 * were restored too (then the history starts again) or only the floor. */
static void restored_floor_run(bool gap_seen, bool delivered_back) {
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 5 * SEC;
  s.stream.max_msgs = 3000;
  s.stream.msgs = 0;
  s.stream.last_seq = 0;
  s.stream.first_seq = 1;
  nl_consumer_snap *c = &s.consumer;
  uint64_t before = 0;
  for (int i = 0; i < 120; i++) {
    if (i == 10) {
      if (gap_seen)
        nl_engine_gap(s.engine, s.t);
      before = c->ack_floor_stream_seq;
      c->ack_floor_stream_seq = 1;
      if (delivered_back) {
        c->delivered_stream_seq -= 50;
        c->delivered_consumer_seq -= 50;
      }
    }
    s.stream.last_seq += 20;
    s.stream.msgs = s.stream.last_seq < 3000 ? s.stream.last_seq : 3000;
    s.stream.first_seq = s.stream.last_seq - s.stream.msgs + 1;
    c->delivered_stream_seq += 20;
    c->delivered_consumer_seq += 20 + (i == 15 ? 3 : 0);
    if (i < 10)
      c->ack_floor_stream_seq = c->delivered_stream_seq - 3;
    c->ack_last_ns = s.t - SEC / 10;
    c->num_ack_pending = 3;
    c->num_pending = 0;
    sim_poll(&s);
  }
  /* The scenario happened: the floor went back from where it was. */
  CHECK(before > 100);
  CHECK_EQ_U(c->ack_floor_stream_seq, 1);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK(st != NULL && st->redelivered_total == 3);
  CHECK_EQ_U(st->resets, delivered_back ? 1 : 0);
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_restored_floor_after_gap_is_not_stuck(void) {
  restored_floor_run(true, false);
  restored_floor_run(true, true);
}

static void test_restored_floor_moving_back_is_not_stuck(void) {
  restored_floor_run(false, false);
  restored_floor_run(false, true);
}

/* NAK with a delay on each first delivery (a transient error), acked when
 * the message comes back: 12 new messages and 12 redeliveries a second,
 * 10 awaiting ack, the floor moving. At poll 10 the server restarts and
 * gives the consumer back with its floor at 0, where nats-server 2.9.10
 * keeps it while anything is pending. The floor standing then proves no
 * lack of progress: the retries are no loop (no NAK_STORM), with the gap
 * seen or not. */
static void restored_floor_naks_run(bool gap_seen) {
  sim s;
  sim_init(&s);
  nl_consumer_snap *c = &s.consumer;
  for (int i = 0; i < 40; i++) {
    if (i == 10 && gap_seen)
      nl_engine_gap(s.engine, s.t);
    s.stream.last_seq += 12;
    s.stream.msgs += 12;
    c->delivered_stream_seq = s.stream.last_seq;
    c->delivered_consumer_seq += 24;
    c->ack_floor_stream_seq = i < 10 ? c->delivered_stream_seq - 10 : 0;
    c->ack_last_ns = s.t - SEC / 10;
    c->num_ack_pending = 10;
    c->num_redelivered = 10;
    c->num_pending = 0;
    sim_poll(&s);
  }
  /* The scenario happened: 12 redeliveries in every interval, the floor
   * back at 0 for the last 30 polls. */
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK(st != NULL && st->redelivered_total >= 12 * 38);
  CHECK_EQ_U(c->ack_floor_stream_seq, 0);
  CHECK_EQ_U(s.onsets[NL_NAK_STORM], 0);
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_restored_floor_nak_retries_are_no_storm(void) {
  restored_floor_naks_run(true);
  restored_floor_naks_run(false);
}

/* ack_wait 5 s, 1 s polls, 2 messages a second acked in time, 5 in
 * flight. A gap in
 * what the polls saw at poll 10 (a server restart): the 4 messages the
 * clients held expire and are redelivered 5 s later; 38 s after that a
 * worker crashes holding 5 messages, redelivered 5 s later. Two rounds
 * within the 10 x ack_wait window, but the first is the restart's
 * orphans, not the consumer's processing: no finding (seen once in the
 * production mix). Without the gap the same two rounds are two crashes,
 * which the polls cannot tell from a repeat: that still raises. */
static int restart_then_crash_run(bool gap_seen) {
  sim s;
  sim_init(&s);
  s.consumer.ack_wait_ns = 5 * SEC;
  nl_consumer_snap *c = &s.consumer;
  for (int i = 0; i < 80; i++) {
    if (i == 10 && gap_seen)
      nl_engine_gap(s.engine, s.t);
    unsigned again = i == 15 ? 4 : i == 58 ? 5 : 0;
    s.stream.last_seq += 2;
    s.stream.msgs += 2;
    c->delivered_stream_seq += 2;
    c->delivered_consumer_seq += 2 + again;
    /* The held messages keep the floor below them until they expire. */
    bool held = (i >= 10 && i < 15) || (i >= 53 && i < 58);
    if (!held)
      c->ack_floor_stream_seq = c->delivered_stream_seq - 5;
    c->num_ack_pending = c->delivered_stream_seq - c->ack_floor_stream_seq;
    c->num_redelivered = again;
    c->ack_last_ns = s.t - SEC / 10;
    sim_poll(&s);
  }
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK(st != NULL && st->redelivered_total == 9); /* Both rounds seen. */
  int onsets = total_onsets(&s);
  CHECK_EQ_U(s.onsets[NL_ACK_WAIT_VIOLATION], onsets);
  sim_free(&s);
  return onsets;
}

static void test_restart_then_crash_is_no_repeat(void) {
  CHECK_EQ_U(restart_then_crash_run(true), 0);
  CHECK_EQ_U(restart_then_crash_run(false), 1);
}

static void test_overlapping_long_tasks_are_missing_progress(void) {
  /* ack_wait 2 s, 30 messages a second, a long task every 3 s that runs
   * 7 s: the floor moves from one long task to the next every 3 s, so no
   * single stuck period reaches 2 x ack_wait, but expiry redeliveries
   * recur as a small share of the deliveries. That is MISSING_PROGRESS,
   * never ACK_WAIT_VIOLATION. */
  sim s;
  /* The floor stands below the oldest running long task, which started up
   * to 7 s ago: 150 messages (5 s at 30/s) were delivered above it. */
  long_task_init(&s, 150);
  for (int i = 0; i < 20; i++) {
    if (i % 3 == 2) /* The oldest long task finished. */
      s.consumer.ack_floor_stream_seq += 90;
    long_task_step(&s, 30, i % 2, 4);
  }
  CHECK(sim_active(&s, NL_MISSING_PROGRESS));
  CHECK_EQ_U(s.onsets[NL_ACK_WAIT_VIOLATION], 0);
  CHECK(s.first_onset_poll[NL_MISSING_PROGRESS] <= 7);
  const nl_finding *f = &s.last[NL_MISSING_PROGRESS];
  CHECK(nl_finding_get(f, "redelivered_share", 1) < 0.05);
  sim_free(&s);
}

static void test_slow_processing_with_standing_floor_is_ack_wait(void) {
  /* ack_wait 2 s, workers each taking 4 s, acking out of order: the floor
   * stands for 8 s at a time with later messages acked. Every message is
   * delivered twice, so redeliveries are half the deliveries: that is
   * ACK_WAIT_VIOLATION, named as soon as a second round shows, and never
   * MISSING_PROGRESS. */
  sim s;
  sim_init(&s);
  nl_consumer_snap *c = &s.consumer;
  c->ack_wait_ns = 2 * SEC;
  healthy_step(&s, 1);
  sim_poll(&s);
  for (int i = 0; i < 16; i++) {
    /* Each second one new message and one redelivered; the floor moves
     * only every 8 s although later messages are acked every poll. */
    c->delivered_stream_seq += 1;
    c->delivered_consumer_seq += 2;
    if (i % 8 == 7)
      c->ack_floor_stream_seq += 8;
    c->ack_last_ns = s.t - SEC / 10;
    c->num_ack_pending = 4;
    c->num_redelivered = 2;
    sim_poll(&s);
  }
  CHECK(sim_active(&s, NL_ACK_WAIT_VIOLATION));
  CHECK(s.first_onset_poll[NL_ACK_WAIT_VIOLATION] <= 6);
  CHECK_EQ_U(s.onsets[NL_MISSING_PROGRESS], 0);
  CHECK(nl_finding_get(&s.last[NL_ACK_WAIT_VIOLATION], "redelivered_share",
                       0) >= 0.4);
  sim_free(&s);
}

/* A consumer hovering at its max_ack_pending for 2 minutes of 1 s polls
 * (at the cap with messages waiting on a pseudo-random half of the polls,
 * one below it on the others, never more than 20 polls in a row either
 * way) gives one onset and no clearing; 30 s below the cap clears it
 * once. */
static void test_threshold_hover_gives_one_onset(void) {
  sim s;
  sim_init(&s);
  nl_consumer_snap *c = &s.consumer;
  c->max_ack_pending = 20;
  c->num_pending = 40;
  uint32_t lcg = 12345;
  int at_cap = 0, run = 0;
  bool prev = false;
  for (int i = 0; i < 120; i++) {
    lcg = lcg * 1103515245u + 12345u;
    bool cap = (lcg >> 16) & 1;
    run = cap == prev ? run + 1 : 1;
    if (run > 20 || i == 119) { /* The last poll is at the cap. */
      cap = run > 20 ? !cap : true;
      run = 1;
    }
    prev = cap;
    at_cap += cap;
    healthy_step(&s, 3);
    c->num_ack_pending = cap ? 20 : 19;
    c->num_pending = 40;
    sim_poll(&s);
  }
  /* The scenario happened: both sides of the threshold, every poll seen. */
  CHECK(at_cap > 30 && at_cap < 90);
  CHECK_EQ_U(s.polls, 120);
  CHECK_EQ_U(s.onsets[NL_MAX_PENDING_THROTTLE], 1);
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 0);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  c->num_ack_pending = 19;
  CHECK(sim_polls_to_clear(&s, NL_MAX_PENDING_THROTTLE, 0, 60) == 31);
  CHECK_EQ_U(s.onsets[NL_MAX_PENDING_THROTTLE], 1);
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 1);
  CHECK_EQ_U(total_onsets(&s), 1);
  sim_free(&s);
}

/* Starts s with its consumer throttled: the 5 max_ack_pending taken, 45
 * waiting. Returns the consumer. */
static nl_consumer_snap *sim_throttled(sim *s) {
  sim_init(s);
  nl_consumer_snap *c = &s->consumer;
  c->max_ack_pending = 5;
  c->num_ack_pending = 5;
  c->num_pending = 45;
  return c;
}

static void test_max_pending_throttle(void) {
  sim s;
  nl_consumer_snap *c = sim_throttled(&s);
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  CHECK_EQ_U(s.first_onset_poll[NL_MAX_PENDING_THROTTLE], 1);
  CHECK(strstr(s.last[NL_MAX_PENDING_THROTTLE].fix_command,
               "--max-pending 10") != NULL);
  c->num_pending = 0; /* At the cap with nothing waiting: not throttled. */
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE)); /* Held. */
  CHECK(sim_polls_to_clear(&s, NL_MAX_PENDING_THROTTLE, 0, 60) == 30);
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 1);
  /* A fix (a higher cap) clears on the next poll. */
  c->num_pending = 45;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  c->max_ack_pending = 10;
  sim_poll(&s);
  CHECK(!sim_active(&s, NL_MAX_PENDING_THROTTLE));
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 2);
  sim_free(&s);
}

/* A throttle already standing when collectd starts: its condition is
 * dated by the consumer's last delivery (the server's own time), earlier
 * than the plugin's onset; a later redelivery does not move it. */
static void test_max_pending_condition_since(void) {
  sim s;
  nl_consumer_snap *c = sim_throttled(&s);
  int64_t stalled = s.t - 600 * SEC;
  c->delivered_last_ns = stalled;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  const nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  const nl_finding *f = st->active[NL_MAX_PENDING_THROTTLE];
  CHECK(f->condition_since_ns == stalled && f->since_ns > stalled);
  c->delivered_last_ns = s.t; /* A redelivery now. */
  sim_poll(&s);
  CHECK(st->active[NL_MAX_PENDING_THROTTLE]->condition_since_ns == stalled);
  /* Without a delivery time nothing is claimed. */
  sim s2;
  sim_throttled(&s2);
  sim_poll(&s2);
  st = nl_registry_find(nl_engine_registry(s2.engine), "ORDERS", "proc");
  CHECK(st->active[NL_MAX_PENDING_THROTTLE]->condition_since_ns == 0);
  sim_free(&s);
  sim_free(&s2);
}

static void test_max_pending_boundaries(void) {
  sim s;
  sim_init(&s);
  nl_consumer_snap *c = &s.consumer;
  c->max_ack_pending = 100;
  c->num_ack_pending = 85; /* Ratio 0.85. */
  c->num_pending = 500;
  sim_poll(&s);
  c->ack_policy = NL_ACK_NONE; /* At the cap but no acks expected. */
  c->num_ack_pending = 100;
  sim_poll(&s);
  c->ack_policy = NL_ACK_EXPLICIT;
  c->max_ack_pending = -1; /* Unlimited. */
  sim_poll(&s);
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_sequence_gap_never_acked(void) {
  /* max_msgs 100, 300 published, the consumer never fetched: sequences
   * 1-200 are gone. The research tool misses this (ack floor 0). */
  sim s;
  sim_init(&s);
  s.stream.max_msgs = 100;
  s.stream.msgs = 100;
  s.stream.first_seq = 201;
  s.stream.last_seq = 300;
  s.consumer.num_pending = 100;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_SEQUENCE_GAP));
  CHECK_EQ_U(s.first_onset_poll[NL_SEQUENCE_GAP], 1);
  const nl_finding *f = &s.last[NL_SEQUENCE_GAP];
  CHECK_EQ_U(nl_finding_get(f, "lost_since_last_poll", 0), 200);
  CHECK_EQ_U(nl_finding_get(f, "first_lost_seq", 0), 1);
  CHECK_EQ_U(nl_finding_get(f, "last_lost_seq", 0), 200);
  CHECK(strstr(f->fix_command, "nats stream edit ORDERS --max-msgs") != NULL);
  /* 50 more published and evicted while still idle: 50 more lost. */
  s.stream.first_seq = 251;
  s.stream.last_seq = 350;
  sim_poll(&s);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK_EQ_U(st->lost_total, 250);
  /* The consumer reads from the head on: no new loss, the finding clears. */
  s.consumer.delivered_stream_seq = 350;
  s.consumer.delivered_consumer_seq = 100;
  s.consumer.ack_floor_stream_seq = 350;
  s.consumer.num_pending = 0;
  CHECK(sim_polls_to_clear(&s, NL_SEQUENCE_GAP, 0, 60) == 31);
  CHECK(!sim_active(&s, NL_SEQUENCE_GAP));
  CHECK_EQ_U(st->lost_total, 250);
  /* The engine keeps it among the resolved findings, with what it cost:
   * the 250 messages lost from its onset to its end. */
  const nl_resolved *r = nl_engine_resolved(s.engine, 0);
  CHECK(r != NULL && r->f.cls == NL_SEQUENCE_GAP);
  CHECK(r != NULL && strcmp(r->stream, "ORDERS") == 0 &&
        strcmp(r->consumer, "proc") == 0);
  CHECK_EQ_U(r ? r->f.lost : 0, 250);
  CHECK(r != NULL && r->resolved_ns > r->f.since_ns && r->reason == NULL);
  CHECK(nl_engine_resolved(s.engine, 1) == NULL);
  sim_free(&s);
}

static void test_sequence_gap_skipped_within_interval(void) {
  /* The consumer was at 10; eviction moved the head to 200 and the consumer
   * read 200-205 before the next poll. At least 190 - 6 were lost. */
  sim s;
  sim_init(&s);
  s.consumer.delivered_stream_seq = 10;
  s.consumer.delivered_consumer_seq = 10;
  s.consumer.ack_floor_stream_seq = 10;
  sim_poll(&s);
  s.stream.first_seq = 200;
  s.stream.last_seq = 300;
  s.consumer.delivered_stream_seq = 205;
  s.consumer.delivered_consumer_seq = 16;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_SEQUENCE_GAP));
  CHECK_EQ_U(
      nl_finding_get(&s.last[NL_SEQUENCE_GAP], "lost_since_last_poll", 0), 183);
  sim_free(&s);
}

static void test_sequence_gap_not_for_idle_filtered_consumer(void) {
  /* A filtered consumer whose subject is idle sits behind first_seq while
   * other subjects are evicted: nothing of its own was lost. */
  sim s;
  sim_init(&s);
  s.consumer.filtered = true;
  s.consumer.delivered_stream_seq = 50;
  s.consumer.ack_floor_stream_seq = 50;
  for (int i = 0; i < 10; i++) {
    s.stream.first_seq = 100 + 100 * i;
    s.stream.last_seq = 1000 + 100 * i;
    sim_poll(&s);
  }
  CHECK_EQ_U(s.onsets[NL_SEQUENCE_GAP], 0);
  sim_free(&s);
}

static void test_sequence_gap_not_for_floor_behind_first_seq(void) {
  /* WorkQueue: acked messages leave the stream, so first_seq passes the ack
   * floor (out-of-order acks) with nothing lost. */
  sim s;
  sim_init(&s);
  s.stream.retention = NL_RETENTION_WORKQUEUE;
  s.consumer.delivered_stream_seq = 500;
  s.consumer.delivered_consumer_seq = 500;
  s.consumer.ack_floor_stream_seq = 400;
  s.stream.first_seq = 450;
  for (int i = 0; i < 5; i++)
    sim_poll(&s);
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_sequence_gap_filtered_by_num_pending(void) {
  /* Filtered consumer: num_pending fell by 80 while only 5 were delivered. */
  sim s;
  sim_init(&s);
  s.consumer.filtered = true;
  s.consumer.num_pending = 100;
  sim_poll(&s);
  s.consumer.num_pending = 15;
  s.consumer.delivered_consumer_seq += 5;
  s.consumer.delivered_stream_seq += 5;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_SEQUENCE_GAP));
  CHECK_EQ_U(
      nl_finding_get(&s.last[NL_SEQUENCE_GAP], "lost_since_last_poll", 0), 80);
  sim_free(&s);
}

static void test_recreated_consumer_resets_history(void) {
  /* Deleted and recreated between polls: counters jump back. No finding:
   * the consumer kept up (its 3 pending messages are the stream's newest),
   * so where the new one starts skips nothing it had not read. */
  sim s;
  sim_init(&s);
  s.stream.last_seq = 3;
  for (int i = 0; i < 5; i++) {
    healthy_step(&s, 100);
    sim_poll(&s);
  }
  s.consumer.created_ns += 10 * SEC;
  s.consumer.delivered_consumer_seq = 3;
  s.consumer.delivered_stream_seq = s.stream.last_seq;
  s.consumer.ack_floor_stream_seq = s.stream.last_seq;
  s.consumer.num_pending = 0;
  sim_poll(&s);
  for (int i = 0; i < 5; i++) {
    healthy_step(&s, 10);
    sim_poll(&s);
  }
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK_EQ_U(st->resets, 1);
  CHECK_EQ_U(total_onsets(&s), 0);
  sim_free(&s);
}

static void test_deleted_consumer_clears_findings(void) {
  sim s;
  sim_init(&s);
  s.consumer.max_ack_pending = 5;
  s.consumer.num_ack_pending = 5;
  s.consumer.num_pending = 45;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  nl_snapshot_set empty = {0};
  empty.streams = &s.stream;
  empty.n_streams = 1;
  nl_engine_sink sink = {.transition = on_transition};
  nl_engine_apply(s.engine, &empty, s.t, &sink, &s);
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 1);
  CHECK_EQ_U(nl_registry_size(nl_engine_registry(s.engine)), 0);
  sim_free(&s);
}

static void test_unlisted_consumer_of_incomplete_stream_is_kept(void) {
  sim s;
  sim_init(&s);
  s.consumer.max_ack_pending = 5;
  s.consumer.num_ack_pending = 5;
  s.consumer.num_pending = 45;
  sim_poll(&s);
  nl_snapshot_set partial = {0};
  s.stream.consumers_complete = false;
  partial.streams = &s.stream;
  partial.n_streams = 1;
  nl_engine_sink sink = {.transition = on_transition};
  size_t kept = nl_engine_apply(s.engine, &partial, s.t, &sink, &s);
  CHECK_EQ_U(kept, 1);
  CHECK_EQ_U(s.clears[NL_MAX_PENDING_THROTTLE], 0);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  sim_free(&s);
}

/* The onsets of the last hour: counted per minute, older ones age out. */
static void test_onset_rate_last_hour(void) {
  nl_onset_rate r = {0};
  const int64_t min = 60 * SEC;
  CHECK_EQ_U(nl_onset_rate_last_hour(&r, 0), 0);
  for (int i = 0; i < 90; i++) /* One onset a minute for 90 minutes. */
    nl_onset_rate_add(&r, 1000 * SEC + i * min);
  int64_t end = 1000 * SEC + 89 * min;
  CHECK_EQ_U(nl_onset_rate_last_hour(&r, end), 60);
  nl_onset_rate_add(&r, end); /* Two in the same minute. */
  CHECK_EQ_U(nl_onset_rate_last_hour(&r, end), 61);
  CHECK_EQ_U(nl_onset_rate_last_hour(&r, end + 30 * min), 31);
  CHECK_EQ_U(nl_onset_rate_last_hour(&r, end + 60 * min), 0);
}

/* Runs one throttled consumer (5 of 5 unacked, 20 waiting) named stream /
 * consumer through an engine and copies its MAX_PENDING_THROTTLE finding
 * into *out. Returns false when none was raised. */
static bool throttled_finding(const char *stream, const char *consumer,
                              nl_finding *out) {
  nl_detect_params p;
  nl_detect_params_default(&p);
  nl_engine *e = nl_engine_create(&p);
  nl_stream_snap s = {.name = (char *)stream,
                      .max_msgs = -1,
                      .max_bytes = -1,
                      .first_seq = 1,
                      .last_seq = 25,
                      .msgs = 25,
                      .consumers_complete = true,
                      .consumer_count = 1};
  nl_consumer_snap c = {.stream = (char *)stream,
                        .name = (char *)consumer,
                        .created_ns = 1600000000LL * SEC,
                        .ack_wait_ns = 30 * SEC,
                        .max_ack_pending = 5,
                        .max_deliver = -1,
                        .delivered_consumer_seq = 5,
                        .delivered_stream_seq = 5,
                        .num_ack_pending = 5,
                        .num_pending = 20,
                        .durable = true};
  nl_snapshot_set set = {
      .streams = &s, .n_streams = 1, .consumers = &c, .n_consumers = 1};
  nl_engine_apply(e, &set, 1700000000LL * SEC, NULL, NULL);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(e), stream, consumer);
  bool found = st != NULL && st->active[NL_MAX_PENDING_THROTTLE] != NULL;
  if (found)
    *out = *st->active[NL_MAX_PENDING_THROTTLE];
  nl_engine_free(e);
  return found;
}

/* Fix commands for the names the server allows: a consumer of 255 bytes of
 * quotes in a stream of 255 bytes gets its whole command; a name the nats
 * CLI would take for an option ("--help") or one with a control character
 * gets none, and the recommendation says why. */
static void test_fix_command_names(void) {
  char stream[256], consumer[256];
  memset(stream, 'S', 255);
  stream[255] = '\0';
  memset(consumer, '\'', 255);
  consumer[255] = '\0';
  nl_finding f;
  CHECK(throttled_finding(stream, consumer, &f));
  CHECK(strncmp(f.fix_command, "nats consumer edit SSS", 22) == 0);
  size_t n = strlen(f.fix_command);
  CHECK(n > 1300 && strcmp(f.fix_command + n - 17, " --max-pending 10") == 0);
  CHECK(throttled_finding("ORDERS", "--help", &f));
  CHECK(f.fix_command[0] == '\0');
  CHECK(strstr(f.recommendation, "no fix command is printed") != NULL);
  CHECK(throttled_finding("ORD\x1b[2JERS", "c", &f));
  CHECK(f.fix_command[0] == '\0');
  CHECK(throttled_finding("ORDERS", "c\xff", &f));
  CHECK(f.fix_command[0] == '\0');
  CHECK(throttled_finding("ORDERS", "work-1", &f));
  CHECK(strcmp(f.fix_command, "nats consumer edit ORDERS work-1 "
                              "--max-pending 10") == 0);
  char out[32];
  CHECK(strcmp(nl_printable("a\x1b[2Jb\xc2\x9b|", true, out, sizeof(out)),
               "a?[2Jb?/") == 0);
}

/* A consumer paused by its operator (nats-server 2.11+: "paused" until its
 * pause_until) at its cap with messages waiting: no MAX_PENDING_THROTTLE
 * while the pause lasts; the same consumer resumed is throttled. */
static void test_paused_consumer(void) {
  sim s;
  nl_consumer_snap *c = sim_throttled(&s);
  c->paused = true;
  c->pause_remaining_ns = 60 * SEC;
  for (int i = 0; i < 5; i++)
    sim_poll(&s);
  CHECK(!sim_active(&s, NL_MAX_PENDING_THROTTLE));
  CHECK_EQ_U(total_onsets(&s), 0);
  c->paused = false;
  c->pause_remaining_ns = 0;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_MAX_PENDING_THROTTLE));
  sim_free(&s);
}

/* Applies one poll in which the stream lists no consumer (the sim's own is
 * not created yet), then moves the clock by one second. */
static void sim_poll_without_consumer(sim *s) {
  nl_snapshot_set set = {0};
  set.streams = &s->stream;
  set.n_streams = 1;
  nl_engine_sink sink = {.transition = on_transition};
  nl_engine_apply(s->engine, &set, s->t, &sink, s);
  s->t += SEC;
}

/* The sim with its stream as nats-server 2.10.16 reports an interest stream
 * that dropped its messages for want of a consumer (no message, first_seq
 * = last_seq = 10) and a consumer created on it (deliver policy all, at
 * 9). */
static void sim_init_skipped(sim *s) {
  sim_init(s);
  s->stream.retention = NL_RETENTION_INTEREST;
  s->stream.first_seq = 10;
  s->stream.last_seq = 10;
  s->stream.msgs = 0;
  s->consumer.deliver_all = true;
  s->consumer.delivered_stream_seq = 9;
}

static void test_sequence_gap_not_for_unstored(void) {
  /* nats-server 2.10.16: an interest stream that dropped its messages for
   * want of a consumer reads first_seq = last_seq = 10 with no message,
   * and a consumer created on it starts at 9. Sequence 10 was never
   * stored: once publishing resumes (first_seq 11) it is no loss, whether
   * a poll saw the empty stream before the consumer (first pass) or with
   * it (second pass). The twin (third pass) was never seen empty: the
   * sequence is lost to it, on its first poll. */
  for (int pass = 0; pass < 3; pass++) {
    sim s;
    sim_init_skipped(&s);
    s.consumer.ack_floor_stream_seq = 9;
    if (pass == 0)
      sim_poll_without_consumer(&s);
    if (pass == 1)
      sim_poll(&s);
    s.stream.first_seq = 11;
    for (int i = 0; i < 5; i++) {
      s.stream.last_seq = 12 + (uint64_t)i;
      s.stream.msgs = s.stream.last_seq - 10;
      s.consumer.num_pending = s.stream.msgs;
      sim_poll(&s);
    }
    if (pass < 2) {
      CHECK_EQ_U(s.onsets[NL_SEQUENCE_GAP], 0);
    } else {
      CHECK(sim_active(&s, NL_SEQUENCE_GAP));
      CHECK_EQ_U(s.first_onset_poll[NL_SEQUENCE_GAP], 1);
    }
    sim_free(&s);
  }
}

/* The stream of test_sequence_gap_not_for_unstored seen empty at 10 (10
 * never stored), then deleted and created again between two polls: the
 * new stream is already at 15 (past the old one's last sequence, so that
 * only its creation time tells) with 11-15 stored, and a consumer created
 * on it at 9 is first seen. Sequence 10 of the new stream was stored and
 * is gone: lost to it. Without the new creation time (the same stream)
 * it is the never-stored 10: no loss. */
static void test_recreated_stream_forgets_unstored(void) {
  for (int pass = 0; pass < 2; pass++) {
    sim s;
    sim_init_skipped(&s);
    s.stream.created_ns = 1600000000LL * SEC;
    sim_poll_without_consumer(&s);
    if (pass == 0)
      s.stream.created_ns += 3600 * SEC;
    s.stream.first_seq = 11;
    s.stream.last_seq = 15;
    s.stream.msgs = 5;
    s.consumer.num_pending = 5;
    s.consumer.ack_floor_stream_seq = 9;
    for (int i = 0; i < 3; i++)
      sim_poll(&s);
    if (pass == 0) {
      CHECK(sim_active(&s, NL_SEQUENCE_GAP));
      CHECK_EQ_U(nl_finding_get(&s.last[NL_SEQUENCE_GAP], "lost_total", 0), 1);
    } else {
      CHECK_EQ_U(s.onsets[NL_SEQUENCE_GAP], 0);
    }
    sim_free(&s);
  }
}

/* Starts pass `pass` of test_sequence_gap_not_for_start_after_empty: its
 * stream seen empty at sequence 10 by a poll without its consumer, as
 * nats-server 2.10.16 reports it (first_seq = last_seq), or as 2.9 and
 * 2.11 do (first_seq = last_seq + 1, pass 1). Pass 5 then sees messages
 * stored for another consumer in a poll before this one's first. */
static void empty_before_consumer(sim *s, int pass) {
  sim_init_skipped(s);
  if (pass == 1)
    s->stream.first_seq = 11;
  sim_poll_without_consumer(s);
  if (pass == 5) {
    s->stream.first_seq = 11;
    s->stream.last_seq = 11;
    s->stream.msgs = 1;
    sim_poll_without_consumer(s);
  }
}

static void test_sequence_gap_not_for_start_after_empty(void) {
  /* nats-server 2.10.16, a 3-node cluster: the poll before the consumer saw
   * the stream empty at 10; 11 and 12 were published and dropped before
   * the consumer was created at 11 (below first_seq = last_seq = 12), and
   * it is first seen with 13-15 stored. 12 was never stored (pass 0). The
   * twins lost a sequence stored for them: the empty stream read as 2.11
   * reports it (1), deliver policy new (2), a consumer that delivered
   * already (3), or 13 gone too (4, 13 lost); or the stream held messages
   * at the poll just before (5). */
  for (int pass = 0; pass < 6; pass++) {
    sim s;
    empty_before_consumer(&s, pass);
    s.consumer.deliver_all = pass != 2;
    s.consumer.delivered_consumer_seq = pass == 3 ? 1 : 0;
    s.consumer.delivered_stream_seq = 11;
    s.consumer.ack_floor_stream_seq = pass == 3 ? 11 : 0;
    s.stream.first_seq = pass == 4 ? 14 : 13;
    for (int i = 0; i < 5; i++) {
      s.stream.last_seq = 15 + (uint64_t)i;
      s.stream.msgs = s.stream.last_seq - s.stream.first_seq + 1;
      s.consumer.num_pending = s.stream.msgs;
      sim_poll(&s);
    }
    nl_consumer_state *st =
        nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
    if (pass == 0) {
      CHECK_EQ_U(s.onsets[NL_SEQUENCE_GAP], 0);
    } else {
      CHECK(sim_active(&s, NL_SEQUENCE_GAP));
      CHECK_EQ_U(s.first_onset_poll[NL_SEQUENCE_GAP], 1);
      CHECK(st != NULL && st->lost_total == 1);
      CHECK(st != NULL && st->loss != NULL &&
            st->loss->first_seq == (pass == 4 ? 13u : 12u));
    }
    sim_free(&s);
  }
}

static void test_sequence_gap_stream_recreated(void) {
  /* The stream, seen empty at 10 with its consumer at 9, is deleted and
   * created again (max_msgs 2): 1-5 are published, 1-3 removed unread. The
   * marks of the old stream are forgotten and 1-3 are lost to the
   * consumer, whether it was created again with the stream (pass 0: the
   * engine's mark of the stream, and the first sequence it reported as
   * never stored) or keeps its history (pass 1: the consumer's own mark,
   * with a poll of the new stream before the loss). */
  for (int pass = 0; pass < 2; pass++) {
    sim s;
    sim_init_skipped(&s);
    sim_poll(&s);
    s.stream.max_msgs = 2;
    s.consumer.delivered_stream_seq = 0;
    if (pass == 0) {
      s.consumer.created_ns += 100 * SEC;
    } else {
      s.stream.first_seq = 1;
      s.stream.last_seq = 2;
      s.stream.msgs = 2;
      s.consumer.num_pending = 2;
      sim_poll(&s);
      CHECK_EQ_U(s.onsets[NL_SEQUENCE_GAP], 0);
    }
    s.stream.first_seq = 4;
    s.stream.last_seq = 5;
    s.stream.msgs = 2;
    s.consumer.num_pending = 2;
    sim_poll(&s);
    nl_consumer_state *st =
        nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
    CHECK(sim_active(&s, NL_SEQUENCE_GAP));
    CHECK(st != NULL && st->lost_total == 3);
    CHECK(st != NULL && st->loss != NULL && st->loss->first_seq == 1);
    sim_free(&s);
  }
}

static void test_sequence_gap_behind_empty_stream_stays(void) {
  /* A consumer behind when limits emptied the stream (it had read to 5,
   * 6-10 are gone) lost them: the finding is raised at that poll and stays
   * while it has read nothing since, though the stream was empty. */
  sim s;
  sim_init(&s);
  s.consumer.delivered_stream_seq = 5;
  s.consumer.delivered_consumer_seq = 5;
  s.consumer.ack_floor_stream_seq = 5;
  s.stream.max_msgs = 5;
  s.stream.first_seq = 6;
  s.stream.last_seq = 10;
  s.stream.msgs = 5;
  s.consumer.num_pending = 5;
  sim_poll(&s);
  s.stream.first_seq = 11;
  s.stream.msgs = 0;
  s.consumer.num_pending = 0;
  sim_poll(&s);
  CHECK(sim_active(&s, NL_SEQUENCE_GAP));
  for (int i = 0; i < 5; i++)
    sim_poll(&s);
  CHECK(sim_active(&s, NL_SEQUENCE_GAP));
  CHECK_EQ_U(s.onsets[NL_SEQUENCE_GAP], 1);
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(s.engine), "ORDERS", "proc");
  CHECK(st != NULL && st->lost_total == 5);
  sim_free(&s);
}

static const nl_test_case tests[] = {
    NL_TEST(test_healthy_no_findings),
    NL_TEST(test_busy_long_ack_wait_not_missing_progress),
    NL_TEST(test_ack_wait_violation_fires_and_clears),
    NL_TEST(test_ack_wait_counts_redeliveries_acked_between_polls),
    NL_TEST(test_ack_wait_with_polls_much_shorter_than_ack_wait),
    NL_TEST(test_ack_wait_seen_when_redelivery_lifts_consumer_floor),
    NL_TEST(test_single_redelivery_is_not_a_finding),
    NL_TEST(test_crash_redelivery_burst_is_not_a_finding),
    NL_TEST(test_crash_redeliveries_spread_over_polls),
    NL_TEST(test_bounded_nak_loop_polled_is_not_a_storm),
    NL_TEST(test_restored_creation_time_is_the_same_consumer),
    NL_TEST(test_fix_command_names),
    NL_TEST(test_nak_storm_needs_two_intervals),
    NL_TEST(test_transient_nak_is_not_a_storm),
    NL_TEST(test_missing_progress_long_task),
    NL_TEST(test_gap_starts_a_new_regime),
    NL_TEST(test_restored_floor_after_gap_is_not_stuck),
    NL_TEST(test_restored_floor_moving_back_is_not_stuck),
    NL_TEST(test_restored_floor_nak_retries_are_no_storm),
    NL_TEST(test_restart_then_crash_is_no_repeat),
    NL_TEST(test_overlapping_long_tasks_are_missing_progress),
    NL_TEST(test_slow_processing_with_standing_floor_is_ack_wait),
    NL_TEST(test_max_pending_throttle),
    NL_TEST(test_max_pending_condition_since),
    NL_TEST(test_threshold_hover_gives_one_onset),
    NL_TEST(test_onset_rate_last_hour),
    NL_TEST(test_max_pending_boundaries),
    NL_TEST(test_sequence_gap_never_acked),
    NL_TEST(test_sequence_gap_skipped_within_interval),
    NL_TEST(test_sequence_gap_not_for_idle_filtered_consumer),
    NL_TEST(test_sequence_gap_not_for_floor_behind_first_seq),
    NL_TEST(test_sequence_gap_filtered_by_num_pending),
    NL_TEST(test_sequence_gap_not_for_unstored),
    NL_TEST(test_recreated_stream_forgets_unstored),
    NL_TEST(test_sequence_gap_behind_empty_stream_stays),
    NL_TEST(test_sequence_gap_not_for_start_after_empty),
    NL_TEST(test_sequence_gap_stream_recreated),
    NL_TEST(test_recreated_consumer_resets_history),
    NL_TEST(test_deleted_consumer_clears_findings),
    NL_TEST(test_unlisted_consumer_of_incomplete_stream_is_kept),
    NL_TEST(test_paused_consumer),
};

NL_TEST_MAIN(tests)
