/* test_gap.c: SEQUENCE_GAP beyond the polled counts: the stream's removals
 * of unacked messages that MSG_TERMINATED advisories claim (nats-server
 * 2.10.4+), and removals that are no loss (a message's own TTL, a newer
 * message on its subject, a schedule that fired) or no limit's doing (a
 * purge), with the fix
 * each prints. The polled states follow those recorded on real servers
 * (docs/detectors.md, SEQUENCE_GAP). */
#include "core/model/nl_advised.h"
#include "core/model/nl_gap.h"
#include "core/model/nl_removal.h"
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <string.h>

/* Feeds a MSG_TERMINATED of stream/consumer for seq, received half a poll
 * before the next one; removed says whether its reason is one of the
 * server's for a message the stream removed. */
static void terminated(world *w, const char *stream, const char *consumer,
                       uint64_t seq, bool removed) {
  nl_advisory a = {.kind = NL_ADV_TERMINATED,
                   .stream_seq = seq,
                   .deliveries = 1,
                   .removed_from_stream = removed};
  snprintf(a.stream, sizeof(a.stream), "%s", stream);
  snprintf(a.consumer, sizeof(a.consumer), "%s", consumer);
  a.received_ns = w->t - w->step_ns / 2;
  world_advise_msg(w, &a);
}

static const nl_consumer_state *state_of(world *w, const char *stream,
                                         const char *consumer) {
  return nl_registry_find(nl_engine_registry(w->engine), stream, consumer);
}

/* Adds stream name holding its max_msgs of 10, sequences 1-10. */
static nl_stream_snap *full_stream(world *w, const char *name) {
  nl_stream_snap *s = add_stream(w, name);
  s->max_msgs = 10;
  s->msgs = 10;
  s->last_seq = 10;
  return s;
}

/* A worker holding the first n of the stream's messages unacked (ack_wait
 * long enough that none is redelivered): delivered through n, floor 0. */
static void holding(nl_consumer_snap *c, uint64_t n, uint64_t last_seq) {
  c->delivered_stream_seq = c->delivered_consumer_seq = n;
  c->ack_floor_stream_seq = c->ack_floor_consumer_seq = 0;
  c->num_ack_pending = n;
  c->num_pending = last_seq - n;
}

/* Recorded on 2.10.16 and 2.12.0: max_msgs 10, a worker holds 8 of 10,
 * 5 more are published: MSG_TERMINATED "Unacknowledged message was
 * deleted" for 1-5, first_seq 6, the floor at 5, 3 pending. A KV-style
 * stream (max_msgs_per_subject 1, keys a, b, c held, b and a updated):
 * the same reason for 2 and 1, first_seq 3; the replacement is the
 * design, and nothing is lost, neither to the worker nor to a consumer
 * that has read nothing yet. */
static void test_sequence_gap_unacked_evicted(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *lim = full_stream(&w, "A");
  nl_stream_snap *kv = add_stream(&w, "KV");
  kv->max_msgs_per_subject = 1;
  kv->msgs = 3;
  kv->last_seq = 3;
  nl_consumer_snap *c = add_consumer(&w, 0, "w");
  nl_consumer_snap *k = add_consumer(&w, 1, "w");
  nl_consumer_snap *r = add_consumer(&w, 1, "r"); /* Reads nothing. */
  holding(c, 8, 10);
  holding(k, 3, 3);
  r->num_pending = 3;
  world_poll(&w);
  /* The server's order varies (one goroutine per removal); a repeat
   * counts once. */
  static const uint64_t order[] = {1, 3, 5, 2, 4, 3};
  for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
    terminated(&w, "A", "w", order[i], true);
  terminated(&w, "KV", "w", 2, true);
  terminated(&w, "KV", "w", 1, true);
  lim->first_seq = 6;
  lim->last_seq = 15;
  c->ack_floor_stream_seq = c->ack_floor_consumer_seq = 5;
  c->num_ack_pending = 3;
  c->num_pending = 7;
  kv->first_seq = 3;
  kv->last_seq = 5;
  k->ack_floor_stream_seq = k->ack_floor_consumer_seq = 2;
  k->num_ack_pending = 1;
  k->num_pending = 2;
  world_poll(&w);
  CHECK(active_for(&w, "A", "w", NL_SEQUENCE_GAP));
  CHECK(!active_for(&w, "KV", "w", NL_SEQUENCE_GAP));
  /* Sequences 1 and 2 left the head unread by r, replaced by newer values
   * of their keys that it will read. */
  CHECK(!active_for(&w, "KV", "r", NL_SEQUENCE_GAP));
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 1);
  const nl_finding *f = &w.last[NL_SEQUENCE_GAP];
  CHECK_EQ_U(nl_finding_get(f, "unacked_evicted", 0), 5);
  CHECK_EQ_U(nl_finding_get(f, "lost_since_last_poll", 0), 5);
  CHECK_EQ_U(nl_finding_get(f, "unread_evicted", -1), 0);
  CHECK(strcmp(f->fix_command, "nats stream edit A --max-msgs 22") == 0);
  CHECK(strstr(f->description, "not yet acked") != NULL);
  CHECK(strstr(f->description, "max_msgs") != NULL);
  const nl_consumer_state *st = state_of(&w, "A", "w");
  CHECK(st != NULL && st->lost_total == 5);
  const nl_consumer_state *kst = state_of(&w, "KV", "w");
  CHECK(kst != NULL && kst->lost_total == 0);
  kst = state_of(&w, "KV", "r");
  CHECK(kst != NULL && kst->lost_total == 0 && nl_gap_of(kst) != NULL &&
        nl_gap_of(kst)->excused_total == 2);
  /* Nothing more is removed: no more loss, and the finding clears after
   * its hold. */
  CHECK(world_polls_to_clear(&w, "A", "w", NL_SEQUENCE_GAP, 60) == 31);
  CHECK(st->lost_total == 5);
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 1);
  uint64_t fed, unknown, contradicted;
  nl_engine_advisory_counts(w.engine, &fed, &unknown, &contradicted);
  CHECK(fed == 8 && contradicted == 0);
  world_free(&w);
}

/* The claims are checked: a client's +TERM with the server's reason text
 * leaves the message stored (first_seq stays), one for a message at or
 * below the ack floor was acked, one beyond what the consumer delivered
 * was never delivered, and a claim that arrived after a poll began waits
 * for the next poll (that poll may show the stream before the removal). */
static void test_sequence_gap_unacked_claims_checked(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = full_stream(&w, "A");
  nl_consumer_snap *c = add_consumer(&w, 0, "w");
  holding(c, 6, 10);
  c->ack_floor_stream_seq = 2;
  world_poll(&w);
  terminated(&w, "A", "w", 4, true);  /* Forged: 4 stays stored. */
  terminated(&w, "A", "w", 2, true);  /* Acked already. */
  terminated(&w, "A", "w", 0, true);  /* No sequence. */
  terminated(&w, "A", "w", 9, true);  /* Never delivered. */
  terminated(&w, "A", "w", 3, false); /* A client's +TERM. */
  world_poll(&w);
  world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 0);
  uint64_t fed, unknown, contradicted;
  nl_engine_advisory_counts(w.engine, &fed, &unknown, &contradicted);
  CHECK_EQ_U(contradicted, 3);
  /* Removed while the poll was under way: the poll that began before it
   * arrived does not show it, the next one does. */
  nl_advisory a = {
      .kind = NL_ADV_TERMINATED, .stream_seq = 5, .removed_from_stream = true};
  snprintf(a.stream, sizeof(a.stream), "A");
  snprintf(a.consumer, sizeof(a.consumer), "w");
  a.received_ns = w.t;
  world_advise_msg(&w, &a);
  world_poll(&w);
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 0);
  s->first_seq = 6;
  s->last_seq = 15;
  c->ack_floor_stream_seq = 5;
  world_poll(&w);
  CHECK(active_for(&w, "A", "w", NL_SEQUENCE_GAP));
  CHECK_EQ_U(nl_finding_get(&w.last[NL_SEQUENCE_GAP], "unacked_evicted", 0), 1);
  world_free(&w);
}

/* Recorded on 2.11.10 and 2.12.0 (allow_msg_ttl, max_age 3600 s): five
 * messages with a 2 s TTL expire unread at the head (first_seq 1 -> 6,
 * num_pending 10 -> 5, nothing delivered), three expire between others
 * (num_pending 9 -> 6, num_deleted 3), and three held unacked expire
 * (MSG_TERMINATED "Unacknowledged message was deleted", first_seq passes
 * them). The publisher's TTL, not a limit: no SEQUENCE_GAP, no loss. On
 * the same server a stream at its max_msgs still loses, with the max_msgs
 * fix. */
static void test_sequence_gap_not_for_msg_ttl(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *head = add_stream(&w, "TTL");
  head->allow_msg_ttl = true;
  head->max_age_ns = 3600 * SEC;
  nl_stream_snap *mid = add_stream(&w, "MID");
  mid->allow_msg_ttl = true;
  nl_stream_snap *held = add_stream(&w, "HELD");
  held->allow_msg_ttl = true;
  nl_stream_snap *full = add_stream(&w, "FULL");
  full->allow_msg_ttl = true;
  full->max_msgs = 10;
  nl_consumer_snap *ch = add_consumer(&w, 0, "w");
  nl_consumer_snap *cm = add_consumer(&w, 1, "w");
  nl_consumer_snap *cd = add_consumer(&w, 2, "w");
  nl_consumer_snap *cf = add_consumer(&w, 3, "w");
  world_poll(&w); /* The streams before anything is published. */
  head->last_seq = head->msgs = ch->num_pending = 10;
  mid->last_seq = mid->msgs = cm->num_pending = 9;
  held->last_seq = held->msgs = 5;
  holding(cd, 5, 5);
  full->last_seq = full->msgs = cf->num_pending = 10;
  world_poll(&w);
  head->first_seq = 6;
  head->msgs = ch->num_pending = 5;
  mid->msgs = cm->num_pending = 6;
  mid->num_deleted = 3;
  for (uint64_t seq = 1; seq <= 3; seq++)
    terminated(&w, "HELD", "w", seq, true);
  held->first_seq = 4;
  held->msgs = 2;
  cd->ack_floor_stream_seq = 3;
  cd->num_ack_pending = 2;
  full->first_seq = 6;
  full->last_seq = 15;
  world_poll(&w);
  /* The limit's loss at once, with its fix; the purges wait one poll. */
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 1);
  CHECK(strstr(w.last[NL_SEQUENCE_GAP].fix_command, "--max-msgs") != NULL);
  for (int i = 0; i < 3; i++)
    world_poll(&w);
  CHECK(!active_for(&w, "TTL", "w", NL_SEQUENCE_GAP));
  CHECK(!active_for(&w, "MID", "w", NL_SEQUENCE_GAP));
  CHECK(!active_for(&w, "HELD", "w", NL_SEQUENCE_GAP));
  CHECK(active_for(&w, "FULL", "w", NL_SEQUENCE_GAP));
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 1);
  CHECK(strstr(w.last[NL_SEQUENCE_GAP].fix_command, "--max-msgs") != NULL);
  const nl_consumer_state *st = state_of(&w, "TTL", "w");
  const nl_gap_state *g = st != NULL ? nl_gap_of(st) : NULL;
  CHECK(st != NULL && st->lost_total == 0);
  CHECK(g != NULL && g->excused_total == 5 && g->excused_through == 5);
  st = state_of(&w, "MID", "w");
  CHECK(st != NULL && st->lost_total == 0);
  st = state_of(&w, "HELD", "w");
  CHECK(st != NULL && st->lost_total == 0);
  world_free(&w);
}

/* A purge (or a message delete) while the consumer was behind loses what
 * it had not read, but no limit removed it: SEQUENCE_GAP says so and
 * prints no command, where it used to print a doubled max_age that would
 * have changed nothing. */
static void test_sequence_gap_purge_has_no_limit_fix(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *s = add_stream(&w, "P");
  s->max_age_ns = 3600 * SEC;
  nl_consumer_snap *c = add_consumer(&w, 0, "w");
  world_poll(&w);
  s->last_seq = s->msgs = c->num_pending = 100;
  world_poll(&w);
  s->first_seq = 101; /* Purged: the server moves the consumer past it. */
  s->msgs = c->num_pending = 0;
  c->delivered_stream_seq = 100;
  world_poll(&w);
  CHECK(active_for(&w, "P", "w", NL_SEQUENCE_GAP));
  const nl_finding *f = &w.last[NL_SEQUENCE_GAP];
  CHECK(f->fix_command[0] == '\0');
  CHECK(strstr(f->recommendation, "purge") != NULL);
  CHECK(strstr(f->description, "a purge or a message delete") != NULL);
  CHECK_EQ_U(nl_finding_get(f, "lost_total", 0), 100);
  world_free(&w);
}

/* Recorded on 2.12.0 (test_msg_schedules.sh): a delayed message (a
 * Nats-Schedule "@at" header) fires; the server stores its copy on the
 * target subject and purges the schedule subject. HEAD (max_age 3600 s):
 * the schedule is sequence 1, three messages after it; when it fires the
 * copy is 5, first_seq 1 to 2, 4 messages, and the unfiltered consumer
 * that read nothing is moved past it (delivered.stream_seq 0 to 1,
 * num_pending 4 to 4). MID (no limits): three messages, the schedule at
 * 4, three more; the copy is 8, 7 messages, num_deleted 1, and the
 * consumer filtered on the schedule subject that read nothing goes from
 * num_pending 1 to 0. Neither is a loss. Still one, on schedule streams:
 * a purge with nothing published (PURGE: 50 unread, no fix command); a
 * purge of the schedule subject holding three schedules while one more
 * message is stored (SUBJ: 3 removed, 1 added), both one poll later (a
 * loss no cause excuses waits one poll on a schedule stream); a limit
 * (FULL: max_msgs 10, the --max-msgs fix, at once). */
static void test_sequence_gap_not_for_schedule(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *head = add_stream(&w, "HEAD");
  head->max_age_ns = 3600 * SEC;
  nl_stream_snap *mid = add_stream(&w, "MID");
  nl_stream_snap *purge = add_stream(&w, "PURGE");
  nl_stream_snap *subj = add_stream(&w, "SUBJ");
  nl_stream_snap *full = add_stream(&w, "FULL");
  full->max_msgs = 10;
  for (size_t i = 0; i < w.n_streams; i++)
    w.streams[i].allow_msg_schedules = true;
  nl_consumer_snap *ch = add_consumer(&w, 0, "lag");
  nl_consumer_snap *cm = add_consumer(&w, 1, "sch");
  cm->filtered = true;
  nl_consumer_snap *cp = add_consumer(&w, 2, "w");
  nl_consumer_snap *cs = add_consumer(&w, 3, "sch");
  cs->filtered = true;
  nl_consumer_snap *cf = add_consumer(&w, 4, "w");
  world_poll(&w); /* The streams before anything is published. */
  head->last_seq = head->msgs = ch->num_pending = 4;
  mid->last_seq = mid->msgs = 7;
  cm->num_pending = 1;
  purge->last_seq = purge->msgs = cp->num_pending = 50;
  subj->last_seq = subj->msgs = 10;
  cs->num_pending = 3;
  full->last_seq = full->msgs = cf->num_pending = 10;
  world_poll(&w);
  head->first_seq = 2;
  head->last_seq = 5;
  ch->delivered_stream_seq = 1;
  mid->last_seq = 8;
  mid->num_deleted = 1;
  cm->num_pending = 0;
  purge->first_seq = 51; /* The server moves the consumer past it. */
  purge->msgs = cp->num_pending = 0;
  cp->delivered_stream_seq = 50;
  subj->last_seq = 11;
  subj->msgs = 8;
  subj->num_deleted = 3;
  cs->num_pending = 0;
  full->first_seq = 6;
  full->last_seq = 15;
  world_poll(&w);
  /* The limit's loss at once, with its fix; the purges wait one poll. */
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 1);
  CHECK(strstr(w.last[NL_SEQUENCE_GAP].fix_command, "--max-msgs") != NULL);
  for (int i = 0; i < 3; i++)
    world_poll(&w);
  CHECK(!active_for(&w, "HEAD", "lag", NL_SEQUENCE_GAP));
  CHECK(!active_for(&w, "MID", "sch", NL_SEQUENCE_GAP));
  const nl_consumer_state *st = state_of(&w, "HEAD", "lag");
  const nl_gap_state *g = st != NULL ? nl_gap_of(st) : NULL;
  CHECK(st != NULL && st->lost_total == 0);
  CHECK(g != NULL && g->excused_total == 1 && g->excused_through == 1);
  st = state_of(&w, "MID", "sch");
  CHECK(st != NULL && st->lost_total == 0);
  CHECK(active_for(&w, "PURGE", "w", NL_SEQUENCE_GAP));
  st = state_of(&w, "PURGE", "w");
  CHECK(st != NULL && st->lost_total == 50);
  CHECK(active_for(&w, "SUBJ", "sch", NL_SEQUENCE_GAP));
  st = state_of(&w, "SUBJ", "sch");
  CHECK(st != NULL && st->lost_total == 3);
  CHECK(active_for(&w, "FULL", "w", NL_SEQUENCE_GAP));
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 3);
  world_free(&w);
}

/* Seen on 2.12.0 in test_msg_schedules.sh: the poll asks for the stream
 * before its consumers, and a delayed message fires between the two
 * replies. RACE (no limits, schedules at 1 and 2 waiting, both firing):
 * the consumer filtered on the schedule subject goes from num_pending 2
 * to 0 while the stream's reply shows the first copy only (3; 1 added, 2
 * removed); the next poll shows the second copy at 4. No loss:
 * the loss waits one poll and the two intervals are judged together. A
 * purge of the schedule subject on the same kind of stream with nothing
 * added (PURGE: 3 removed) is still a loss, counted one poll later with
 * its count. */
static void test_sequence_gap_schedule_fired_between_replies(void) {
  world w;
  world_init(&w, false);
  nl_stream_snap *race = add_stream(&w, "RACE");
  nl_stream_snap *purge = add_stream(&w, "PURGE");
  for (size_t i = 0; i < w.n_streams; i++)
    w.streams[i].allow_msg_schedules = true;
  nl_consumer_snap *cr = add_consumer(&w, 0, "sch");
  nl_consumer_snap *cp = add_consumer(&w, 1, "sch");
  cr->filtered = cp->filtered = true;
  race->last_seq = race->msgs = cr->num_pending = 2;
  purge->last_seq = purge->msgs = cp->num_pending = 3;
  world_poll(&w);
  world_poll(&w);
  /* The consumer's reply after the fire, the stream's before it. */
  cr->num_pending = 0;
  cr->delivered_stream_seq = 2;
  race->first_seq = 2;
  race->last_seq = 3;
  race->msgs = 2;
  purge->msgs = 0;
  purge->first_seq = 4;
  cp->num_pending = 0;
  cp->delivered_stream_seq = 3;
  world_poll(&w);
  const nl_consumer_state *st = state_of(&w, "PURGE", "sch");
  CHECK(st != NULL && st->lost_total == 0); /* Held for one poll. */
  CHECK(!active_for(&w, "PURGE", "sch", NL_SEQUENCE_GAP));
  race->first_seq = 3;
  race->last_seq = 4;
  world_poll(&w);
  for (int i = 0; i < 3; i++)
    world_poll(&w);
  CHECK(!active_for(&w, "RACE", "sch", NL_SEQUENCE_GAP));
  st = state_of(&w, "RACE", "sch");
  const nl_gap_state *g = st != NULL ? nl_gap_of(st) : NULL;
  CHECK(st != NULL && st->lost_total == 0);
  CHECK(g != NULL && g->excused_total == 2 && g->held == 0);
  CHECK(active_for(&w, "PURGE", "sch", NL_SEQUENCE_GAP));
  st = state_of(&w, "PURGE", "sch");
  CHECK(st != NULL && st->lost_total == 3);
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 1);
  world_free(&w);
}

/* The attribution itself, on the states above and the clock's bounds. */
static void test_removal_cause(void) {
  nl_stream_snap s = {.max_msgs = 10, .msgs = 9, .max_bytes = -1};
  CHECK(nl_removal_cause_of(&s, NULL, 5, 0) == NL_REMOVED_BY_MAX_MSGS);
  s.discard_new = true; /* Publishers get errors: nothing evicted. */
  CHECK(nl_removal_cause_of(&s, NULL, 5, 0) == NL_REMOVED_OTHERWISE);
  s = (nl_stream_snap){
      .max_msgs = 10, .msgs = 8, .max_bytes = 1000, .bytes = 950};
  CHECK(nl_removal_cause_of(&s, NULL, 5, 0) == NL_REMOVED_BY_MAX_BYTES);
  s.bytes = 100;
  s.max_age_ns = 60 * SEC;
  s.allow_msg_ttl = true;
  s.max_msgs_per_subject = 1;
  /* Without a clock max_age cannot be ruled out. */
  CHECK(nl_removal_cause_of(&s, NULL, 5, 0) == NL_REMOVED_BY_MAX_AGE);
  /* Sequence 5 was not stored at 100 s, and is removed at 130 s: younger
   * than max_age 60 s. */
  nl_seqclock clock = {0};
  nl_seqclock_add(&clock, 100 * SEC, 4, 4 * SEC);
  nl_seqclock_add(&clock, 110 * SEC, 20, 4 * SEC);
  int64_t t = 0;
  CHECK(nl_seqclock_stored_after(&clock, 5, &t) && t == 100 * SEC);
  CHECK(!nl_seqclock_stored_after(&clock, 4, &t));
  CHECK(nl_removal_cause_of(&s, &clock, 5, 130 * SEC) == NL_REMOVED_BY_MSG_TTL);
  CHECK(nl_removal_cause_of(&s, &clock, 5, 170 * SEC) == NL_REMOVED_BY_MAX_AGE);
  /* Nothing has left the head yet: max_age removed nothing. */
  CHECK(nl_removal_cause_of(&s, NULL, 0, 0) == NL_REMOVED_BY_MSG_TTL);
  s.allow_msg_ttl = false;
  CHECK(nl_removal_cause_of(&s, &clock, 5, 130 * SEC) ==
        NL_REMOVED_BY_SUBJECT_LIMIT);
  s.max_msgs_per_subject = -1;
  CHECK(nl_removal_cause_of(&s, &clock, 5, 130 * SEC) == NL_REMOVED_OTHERWISE);
  CHECK(nl_removal_is_loss(NL_REMOVED_OTHERWISE) &&
        !nl_removal_by_limit(NL_REMOVED_OTHERWISE));
  CHECK(!nl_removal_is_loss(NL_REMOVED_BY_MSG_TTL) &&
        !nl_removal_is_loss(NL_REMOVED_BY_SUBJECT_LIMIT));
  /* A schedule that fired: on a stream with allow_msg_schedules, no more
   * removed than added; never in place of a limit. */
  CHECK(nl_removal_unread_cause(&s, &clock, 5, 130 * SEC, 1, 1) ==
        NL_REMOVED_OTHERWISE);
  s.allow_msg_schedules = true;
  CHECK(nl_removal_unread_cause(&s, &clock, 5, 130 * SEC, 1, 1) ==
        NL_REMOVED_BY_SCHEDULE);
  CHECK(nl_removal_unread_cause(&s, &clock, 5, 130 * SEC, 3, 1) ==
        NL_REMOVED_OTHERWISE);
  CHECK(nl_removal_unread_cause(&s, &clock, 5, 130 * SEC, 1, 0) ==
        NL_REMOVED_OTHERWISE);
  CHECK(nl_removal_unread_cause(&s, &clock, 5, 170 * SEC, 1, 1) ==
        NL_REMOVED_BY_MAX_AGE);
  CHECK(!nl_removal_is_loss(NL_REMOVED_BY_SCHEDULE) &&
        !nl_removal_by_limit(NL_REMOVED_BY_SCHEDULE));
}

/* RETENTION_RISK's age on a stream with per-message TTLs: a consumer stalls
 * after the stream's first message (no TTL); every later message has a
 * 30 s TTL and expires unread, between that first message and the head.
 * The oldest message it has not received is then at most 30 s old, never
 * near max_age 600 s: no forecast of max_age eviction (the age of the
 * sequence after the last delivered one, which expired, would have raised
 * it). Observed: the consumer is read with its 300 live messages pending. */
static void test_retention_age_after_ttl_expiry(void) {
  world w;
  world_init(&w, true);
  nl_stream_snap *s = add_stream(&w, "RT");
  s->max_age_ns = 600 * SEC;
  s->allow_msg_ttl = true;
  nl_consumer_snap *c = add_consumer(&w, 0, "stalled");
  c->delivered_stream_seq = c->delivered_consumer_seq = 1;
  for (int i = 0; i < 300; i++) {
    s->last_seq = 1 + 10 * (uint64_t)(i + 1);
    uint64_t live = s->last_seq - 1 < 300 ? s->last_seq - 1 : 300;
    s->msgs = 1 + live;
    s->num_deleted = s->last_seq - s->msgs;
    c->num_pending = live;
    world_poll(&w);
  }
  CHECK_EQ_U(w.onsets[NL_RETENTION_RISK], 0);
  CHECK_EQ_U(w.onsets[NL_SEQUENCE_GAP], 0);
  const nl_consumer_state *st = state_of(&w, "RT", "stalled");
  const nl_sample *latest = st != NULL ? nl_state_latest(st) : NULL;
  CHECK(latest != NULL && latest->num_pending == 300);
  world_free(&w);
}

static const nl_test_case tests[] = {
    NL_TEST(test_sequence_gap_unacked_evicted),
    NL_TEST(test_sequence_gap_unacked_claims_checked),
    NL_TEST(test_sequence_gap_not_for_msg_ttl),
    NL_TEST(test_sequence_gap_purge_has_no_limit_fix),
    NL_TEST(test_sequence_gap_not_for_schedule),
    NL_TEST(test_sequence_gap_schedule_fired_between_replies),
    NL_TEST(test_removal_cause),
    NL_TEST(test_retention_age_after_ttl_expiry),
};

NL_TEST_MAIN(tests)
