/* test_class_max_deliver_exhausted.c: MAX_DELIVER_EXHAUSTED at the
 * boundaries of its predicate (docs/detectors.md) and of the claims the
 * model keeps of MAX_DELIVERIES advisories (nl_advised): the polled lower
 * bound num_redelivered - num_ack_pending at, one below and one above 0; an
 * advisory's sequence within, at the edge of and one past what the latest
 * poll saw stored for the consumer (delivered or pending), waiting for the
 * next poll; its deliveries at, one below and one above max_deliver; the
 * claims waiting at their bound; dead-letter handling in sight (a stream
 * that keeps the advisories, or a declaration) and max_deliver unlimited;
 * then the life of a finding (held without new evidence, each fix, the
 * consumer created again or deleted). Also the audit's rules on the same
 * field, MAX_DELIVER_NO_DEAD_LETTER and MAX_DELIVER_UNLIMITED, with
 * max_deliver at, one below and one above the audit's tiny_max_deliver.
 * Every engine case runs in a fresh world, with the configuration classes
 * on and off (the class does not depend on them). */
#include "core/detect/nl_audit.h"
#include "core/detect/nl_classes.h"
#include "core/model/nl_advised.h"
#include "nl_test.h"
#include "nl_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A failed check of the case named label (its line and its expression). */
#define N_OF(a) (sizeof(a) / sizeof(*(a)))

/* Writes "name (configuration classes on|off)" into buf. */
static const char *label_of(char *buf, size_t len, const char *name,
                            bool config) {
  snprintf(buf, len, "%s (configuration classes %s)", name,
           config ? "on" : "off");
  return buf;
}

/* The state of consumer MD/poison, or NULL. */
static nl_consumer_state *state_of(world *w) {
  return nl_registry_find(nl_engine_registry(w->engine), "MD", "poison");
}

/* The held finding of MD/poison, or NULL. */
static const nl_finding *held(world *w) {
  const nl_consumer_state *st = state_of(w);
  return st != NULL ? st->active[NL_MAX_DELIVER_EXHAUSTED] : NULL;
}

/* Sets metadata nats_lens.key = value on c. */
static void declare(nl_consumer_snap *c, const char *key, const char *value) {
  char meta[64];
  snprintf(meta, sizeof(meta), "nats_lens.%s", key);
  CHECK(nl_consumer_snap_set_meta(c, meta, value) == 0);
}

/* What keeps the MAX_DELIVERIES advisories of MD/poison, if anything. */
typedef enum {
  DL_NONE,
  DL_STREAM_EXACT,    /* A stream of exactly its advisory subject. */
  DL_STREAM_WILDCARD, /* A stream of every consumer's (a wildcard). */
  DL_STREAM_OTHER,    /* A stream of another consumer's only. */
  DL_DECLARED,        /* nats_lens.dead_letter declared on the consumer. */
} dead_letter;

static char *dl_exact[] = {"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.MD."
                           "poison"};
static char *dl_wildcard[] = {"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>"};
static char *dl_other[] = {"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.MD."
                           "other"};

/* Gives w the dead-letter handling dl for consumer c. */
static void add_dead_letter(world *w, nl_consumer_snap *c, dead_letter dl) {
  char **subjects = dl == DL_STREAM_EXACT      ? dl_exact
                    : dl == DL_STREAM_WILDCARD ? dl_wildcard
                    : dl == DL_STREAM_OTHER    ? dl_other
                                               : NULL;
  if (subjects != NULL) {
    nl_stream_snap *s = add_stream(w, "MD_DLQ");
    s->subjects = subjects;
    s->n_subjects = 1;
  }
  if (dl == DL_DECLARED)
    declare(c, "dead_letter", "replayed by the orders service");
}

/* A world with stream MD (its messages 1 to 100) and consumer poison with
 * max_deliver md, having delivered up to stream sequence 20. */
static nl_consumer_snap *md_world(world *w, bool config, int64_t md) {
  world_init(w, config);
  nl_stream_snap *s = add_stream(w, "MD");
  s->last_seq = s->msgs = 100;
  nl_consumer_snap *c = add_consumer(w, 0, "poison");
  c->max_deliver = md;
  c->delivered_consumer_seq = c->delivered_stream_seq = 20;
  c->ack_floor_stream_seq = 10;
  return c;
}

/* Checks the evidence every finding carries. */
static void check_evidence(const char *label, const nl_finding *f,
                           double exhausted, double advisories, double lower,
                           double md) {
  CHECK_CASE(label, nl_finding_get(f, "exhausted", -1) == exhausted);
  CHECK_CASE(label,
             nl_finding_get(f, "exhausted_advisories", -1) == advisories);
  CHECK_CASE(label, nl_finding_get(f, "lower_bound_polled", -1) == lower);
  CHECK_CASE(label, nl_finding_get(f, "max_deliver", -1) == md);
  CHECK_CASE(label, nl_finding_get(f, "dead_letter_streams", -1) == 0);
  CHECK_CASE(label, f->severity == NL_SEVERITY_CRITICAL);
  CHECK_CASE(label, strstr(f->fix_command, "MAX_DELIVERIES.MD.poison") != NULL);
}

/* The polled lower bound: one poll with these counts. */
typedef struct {
  const char *name;
  nl_ack_policy ack;
  int64_t max_deliver;
  uint64_t num_redelivered;
  uint64_t num_ack_pending;
  dead_letter dl;
  bool raised;
  uint64_t lower; /* lower_bound_polled when raised. */
} polled_case;

static const polled_case polled_cases[] = {
    /* num_redelivered - num_ack_pending at 1, 0 and -1 (7 pending each). */
    {"one above the pending", NL_ACK_EXPLICIT, 5, 3, 2, DL_NONE, true, 1},
    {"equal to the pending", NL_ACK_EXPLICIT, 5, 2, 2, DL_NONE, false, 0},
    {"one below the pending", NL_ACK_EXPLICIT, 5, 1, 2, DL_NONE, false, 0},
    {"many exhausted, none pending", NL_ACK_EXPLICIT, 5, 9, 0, DL_NONE, true,
     9},
    /* Nothing exhausted: the audit's risk alone is not a finding here. */
    {"tiny max_deliver, nothing exhausted", NL_ACK_EXPLICIT, 3, 0, 0, DL_NONE,
     false, 0},
    /* max_deliver: the smallest, the audit's threshold (3) and either side
     * of it; the class does not depend on that threshold. */
    {"max_deliver 1", NL_ACK_EXPLICIT, 1, 3, 2, DL_NONE, true, 1},
    {"max_deliver one below the audit's", NL_ACK_EXPLICIT, 2, 3, 2, DL_NONE,
     true, 1},
    {"max_deliver at the audit's", NL_ACK_EXPLICIT, 3, 3, 2, DL_NONE, true, 1},
    {"max_deliver one above the audit's", NL_ACK_EXPLICIT, 4, 3, 2, DL_NONE,
     true, 1},
    /* Unlimited: nothing is ever exhausted. */
    {"max_deliver 0", NL_ACK_EXPLICIT, 0, 3, 2, DL_NONE, false, 0},
    {"max_deliver unlimited", NL_ACK_EXPLICIT, -1, 3, 2, DL_NONE, false, 0},
    /* Ack none never redelivers; ack all does. */
    {"ack none", NL_ACK_NONE, 5, 3, 0, DL_NONE, false, 0},
    {"ack all", NL_ACK_ALL, 5, 3, 2, DL_NONE, true, 1},
    /* Dead-letter handling in sight, and one that is not this consumer's. */
    {"a dead-letter stream of its subject", NL_ACK_EXPLICIT, 5, 3, 2,
     DL_STREAM_EXACT, false, 0},
    {"a dead-letter stream of every consumer", NL_ACK_EXPLICIT, 5, 3, 2,
     DL_STREAM_WILDCARD, false, 0},
    {"a dead-letter stream of another consumer", NL_ACK_EXPLICIT, 5, 3, 2,
     DL_STREAM_OTHER, true, 1},
    {"dead_letter declared", NL_ACK_EXPLICIT, 5, 3, 2, DL_DECLARED, false, 0},
};

static void test_max_deliver_exhausted_polled(void) {
  for (size_t i = 0; i < N_OF(polled_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const polled_case *k = &polled_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      nl_consumer_snap *c = md_world(&w, config, k->max_deliver);
      c->ack_policy = k->ack;
      c->num_redelivered = k->num_redelivered;
      c->num_ack_pending = k->num_ack_pending;
      c->num_pending = 7; /* Not part of the bound. */
      add_dead_letter(&w, c, k->dl);
      world_poll(&w);
      world_poll(&w);
      /* The scenario happened: the history took in the counts. */
      const nl_consumer_state *st = state_of(&w);
      const nl_sample *s0 = st != NULL ? nl_state_latest(st) : NULL;
      CHECK_CASE(label, s0 != NULL &&
                            s0->num_redelivered == k->num_redelivered &&
                            s0->num_ack_pending == k->num_ack_pending);
      const nl_finding *f = held(&w);
      CHECK_CASE(label, (f != NULL) == k->raised);
      CHECK_CASE(label,
                 w.onsets[NL_MAX_DELIVER_EXHAUSTED] == (k->raised ? 1 : 0));
      if (f != NULL) {
        check_evidence(label, f, (double)k->lower, 0, (double)k->lower,
                       (double)k->max_deliver);
        CHECK_CASE(label, nl_finding_get(f, "exhausted_seq_1", -1) == -1);
      }
      world_free(&w);
    }
  }
}

/* One MAX_DELIVERIES advisory after the first poll (delivered up to 20,
 * 5 pending: sequences up to 25 were there for the consumer), then a
 * second poll with delivered.stream_seq at next_delivered. */
typedef struct {
  const char *name;
  int64_t max_deliver;
  uint64_t seq;
  uint64_t deliveries;
  dead_letter dl;
  bool at_once;            /* Raised by the advisory itself. */
  uint64_t next_delivered; /* At the second poll. */
  bool after_poll;         /* Raised after the second poll. */
  uint64_t rejected;       /* Claims the polls contradicted. */
} claim_case;

static const claim_case claim_cases[] = {
    /* The sequence against what the latest poll saw stored for it. */
    {"a delivered sequence", 3, 7, 3, DL_NONE, true, 30, true, 0},
    {"the last delivered", 3, 20, 3, DL_NONE, true, 30, true, 0},
    {"the last pending", 3, 25, 3, DL_NONE, true, 30, true, 0},
    {"one past the pending, delivered by the next poll", 3, 26, 3, DL_NONE,
     false, 26, true, 0},
    {"one past the pending, not delivered by the next poll", 3, 26, 3, DL_NONE,
     false, 25, false, 1},
    {"sequence 0", 3, 0, 3, DL_NONE, false, 30, false, 1},
    /* Its deliveries against max_deliver; 0 is not told. */
    {"deliveries at max_deliver", 3, 7, 3, DL_NONE, true, 30, true, 0},
    {"deliveries one below max_deliver", 3, 7, 2, DL_NONE, false, 30, false, 1},
    {"deliveries one above max_deliver", 3, 7, 4, DL_NONE, true, 30, true, 0},
    {"deliveries not told", 3, 7, 0, DL_NONE, true, 30, true, 0},
    {"max_deliver 1, one delivery", 1, 7, 1, DL_NONE, true, 30, true, 0},
    /* No limit: no message can reach it. */
    {"max_deliver unlimited", -1, 7, 3, DL_NONE, false, 30, false, 1},
    {"max_deliver 0", 0, 7, 3, DL_NONE, false, 30, false, 1},
    /* Dead-letter handling in sight: the claim counts, nothing is raised. */
    {"a dead-letter stream", 3, 7, 3, DL_STREAM_EXACT, false, 30, false, 0},
    {"dead_letter declared", 3, 7, 3, DL_DECLARED, false, 30, false, 0},
    {"a dead-letter stream of another consumer", 3, 7, 3, DL_STREAM_OTHER, true,
     30, true, 0},
};

static void test_max_deliver_exhausted_claims(void) {
  for (size_t i = 0; i < N_OF(claim_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const claim_case *k = &claim_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      nl_consumer_snap *c = md_world(&w, config, k->max_deliver);
      c->num_pending = 5;
      add_dead_letter(&w, c, k->dl);
      world_poll(&w);
      world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", k->seq,
                   k->deliveries);
      CHECK_CASE(label, (held(&w) != NULL) == k->at_once);
      c->delivered_consumer_seq = c->delivered_stream_seq = k->next_delivered;
      c->num_pending = 0;
      world_poll(&w);
      const nl_consumer_state *st = state_of(&w);
      const nl_finding *f = held(&w);
      CHECK_CASE(label, (f != NULL) == k->after_poll);
      CHECK_CASE(label,
                 w.onsets[NL_MAX_DELIVER_EXHAUSTED] == (k->after_poll ? 1 : 0));
      /* The scenario happened: the advisory reached the consumer, and the
       * claim was kept or rejected. */
      uint64_t fed = 0, unknown = 0, contradicted = 0;
      nl_engine_advisory_counts(w.engine, &fed, &unknown, &contradicted);
      CHECK_CASE(label, fed == 1 && unknown == 0);
      CHECK_CASE(label, contradicted == k->rejected);
      const nl_advised *x = st != NULL ? st->advised : NULL;
      CHECK_CASE(label, x != NULL && x->claims_rejected == k->rejected &&
                            x->n_claimed == 0);
      CHECK_CASE(label, x != NULL && x->n_exhausted == 1 - k->rejected);
      if (f != NULL) {
        check_evidence(label, f, 1, 1, 0, (double)k->max_deliver);
        CHECK_CASE(label,
                   nl_finding_get(f, "exhausted_seq_1", -1) == (double)k->seq);
      }
      world_free(&w);
    }
  }
}

/* Claims beyond the latest poll wait for the next, up to their bound. */
typedef struct {
  const char *name;
  unsigned claims;
  uint64_t confirmed;
  uint64_t rejected;
} waiting_case;

static const waiting_case waiting_cases[] = {
    {"one below the bound", NL_ADVISED_CLAIMS - 1, NL_ADVISED_CLAIMS - 1, 0},
    {"at the bound", NL_ADVISED_CLAIMS, NL_ADVISED_CLAIMS, 0},
    {"one above the bound", NL_ADVISED_CLAIMS + 1, NL_ADVISED_CLAIMS, 1},
};

static void test_max_deliver_exhausted_claims_waiting(void) {
  for (size_t i = 0; i < N_OF(waiting_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const waiting_case *k = &waiting_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      nl_consumer_snap *c = md_world(&w, config, 3);
      world_poll(&w);
      for (unsigned n = 0; n < k->claims; n++)
        world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 21 + n, 3);
      CHECK_CASE(label, held(&w) == NULL);
      const nl_advised *x = state_of(&w)->advised;
      CHECK_CASE(label, x != NULL && x->n_claimed == k->confirmed &&
                            x->claims_rejected == k->rejected);
      c->delivered_consumer_seq = c->delivered_stream_seq = 20 + k->claims;
      world_poll(&w);
      const nl_finding *f = held(&w);
      CHECK_CASE(label, f != NULL);
      if (f != NULL) {
        check_evidence(label, f, (double)k->confirmed, (double)k->confirmed, 0,
                       3);
        /* The newest confirmed first. */
        CHECK_CASE(label, nl_finding_get(f, "exhausted_seq_1", -1) ==
                              (double)(20 + k->confirmed));
      }
      world_free(&w);
    }
  }
}

/* What changes once the finding is raised (by an advisory for sequence 7,
 * or by the lower bound polled), and at which poll after the change it
 * clears (0: it stays through 40 polls). */
typedef enum {
  CHANGE_NOTHING,          /* No new evidence: the messages stay lost. */
  CHANGE_DLQ_STREAM,       /* A dead-letter stream appears. */
  CHANGE_DECLARED,         /* nats_lens.dead_letter declared. */
  CHANGE_UNLIMITED,        /* max_deliver made unlimited. */
  CHANGE_RAISED_LIMIT,     /* max_deliver raised: the lost stay lost. */
  CHANGE_RECREATED,        /* Deleted and created again. */
  CHANGE_DELETED,          /* No longer listed. */
  CHANGE_REDELIVERED_GONE, /* The polled bound back to 0. */
} change;

typedef struct {
  const char *name;
  bool from_advisory;
  change what;
  int cleared_at;
  const char *reason; /* Of the clearing; NULL: its condition ended. */
} change_case;

static const change_case change_cases[] = {
    {"advisory, no new evidence", true, CHANGE_NOTHING, 0, NULL},
    {"advisory, a dead-letter stream: after the hold", true, CHANGE_DLQ_STREAM,
     31, NULL},
    {"advisory, dead_letter declared: at once", true, CHANGE_DECLARED, 1, NULL},
    {"advisory, max_deliver unlimited: at once", true, CHANGE_UNLIMITED, 1,
     NULL},
    {"advisory, max_deliver raised: held", true, CHANGE_RAISED_LIMIT, 0, NULL},
    {"advisory, created again: at once", true, CHANGE_RECREATED, 1, NULL},
    {"advisory, deleted", true, CHANGE_DELETED, 1, "consumer deleted"},
    {"polled, no new evidence", false, CHANGE_NOTHING, 0, NULL},
    {"polled, the bound back to 0: after the hold", false,
     CHANGE_REDELIVERED_GONE, 31, NULL},
    {"polled, a dead-letter stream: after the hold", false, CHANGE_DLQ_STREAM,
     31, NULL},
    {"polled, created again: at once", false, CHANGE_RECREATED, 1, NULL},
};

static void test_max_deliver_exhausted_changes(void) {
  for (size_t i = 0; i < N_OF(change_cases); i++) {
    for (int config = 0; config < 2; config++) {
      const change_case *k = &change_cases[i];
      char label[160];
      label_of(label, sizeof(label), k->name, config);
      world w;
      nl_consumer_snap *c = md_world(&w, config, 3);
      if (!k->from_advisory) {
        c->num_redelivered = 2;
        c->num_ack_pending = 1;
      }
      world_poll(&w);
      if (k->from_advisory)
        world_advise(&w, NL_ADV_MAX_DELIVER, "MD", "poison", 7, 3);
      world_poll(&w);
      CHECK_CASE(label, held(&w) != NULL);
      switch (k->what) {
      case CHANGE_NOTHING:
        break;
      case CHANGE_DLQ_STREAM:
        add_dead_letter(&w, c, DL_STREAM_EXACT);
        break;
      case CHANGE_DECLARED:
        add_dead_letter(&w, c, DL_DECLARED);
        break;
      case CHANGE_UNLIMITED:
        c->max_deliver = -1;
        break;
      case CHANGE_RAISED_LIMIT:
        c->max_deliver = 5;
        break;
      case CHANGE_RECREATED:
        c->created_ns = w.t - SEC / 2;
        c->delivered_consumer_seq = c->delivered_stream_seq = 0;
        c->num_redelivered = c->num_ack_pending = 0;
        break;
      case CHANGE_DELETED:
        w.n_consumers = 0;
        break;
      case CHANGE_REDELIVERED_GONE:
        c->num_redelivered = 1; /* The one pending is being redelivered. */
        break;
      }
      int polls = 0;
      while (held(&w) != NULL && polls < 40) {
        world_poll(&w);
        polls++;
      }
      CHECK_CASE(label, polls == (k->cleared_at ? k->cleared_at : 40));
      CHECK_CASE(label, w.onsets[NL_MAX_DELIVER_EXHAUSTED] == 1);
      if (k->cleared_at > 0) {
        const nl_resolved *r = nl_engine_resolved(w.engine, 0);
        CHECK_CASE(label, r != NULL && r->f.cls == NL_MAX_DELIVER_EXHAUSTED);
        CHECK_CASE(label, r != NULL && (r->reason == k->reason ||
                                        (r->reason && k->reason &&
                                         strcmp(r->reason, k->reason) == 0)));
      } else {
        /* Held with the evidence it was raised with. */
        const nl_finding *f = held(&w);
        CHECK_CASE(label, f != NULL && nl_finding_get(f, "exhausted", 0) == 1);
      }
      if (k->what == CHANGE_RECREATED) {
        /* The new consumer's history starts empty: with max_deliver still
         * 3 and nothing redelivered, the old advisories raise nothing. */
        for (int n = 0; n < 5; n++)
          world_poll(&w);
        const nl_consumer_state *st = state_of(&w);
        CHECK_CASE(label, held(&w) == NULL && st != NULL && st->resets == 1);
        CHECK_CASE(label, st != NULL && st->advised != NULL &&
                              st->advised->n_exhausted == 0);
        CHECK_CASE(label, w.onsets[NL_MAX_DELIVER_EXHAUSTED] == 1);
      }
      world_free(&w);
    }
  }
}

/* The audit's rules on max_deliver (nats-lens-check), for one consumer. */
typedef enum { RULE_NONE, RULE_NO_DEAD_LETTER, RULE_UNLIMITED } md_rule;

typedef struct {
  const char *name;
  nl_ack_policy ack;
  int64_t max_deliver;
  int64_t tiny; /* The audit's tiny_max_deliver. */
  dead_letter dl;
  md_rule rule;
} audit_case;

static const audit_case audit_cases[] = {
    /* max_deliver at, one below and one above tiny_max_deliver (3). */
    {"at the threshold", NL_ACK_EXPLICIT, 3, 3, DL_NONE, RULE_NO_DEAD_LETTER},
    {"one below the threshold", NL_ACK_EXPLICIT, 2, 3, DL_NONE,
     RULE_NO_DEAD_LETTER},
    {"one above the threshold", NL_ACK_EXPLICIT, 4, 3, DL_NONE, RULE_NONE},
    {"max_deliver 1", NL_ACK_EXPLICIT, 1, 3, DL_NONE, RULE_NO_DEAD_LETTER},
    /* The threshold is the parameter's, not a constant. */
    {"at a threshold of 5", NL_ACK_EXPLICIT, 5, 5, DL_NONE,
     RULE_NO_DEAD_LETTER},
    {"one above a threshold of 5", NL_ACK_EXPLICIT, 6, 5, DL_NONE, RULE_NONE},
    /* Unlimited: 0 and -1; the smallest limit is not unlimited. */
    {"max_deliver 0", NL_ACK_EXPLICIT, 0, 3, DL_NONE, RULE_UNLIMITED},
    {"max_deliver -1", NL_ACK_EXPLICIT, -1, 3, DL_NONE, RULE_UNLIMITED},
    /* Dead-letter handling in sight at the threshold. */
    {"at the threshold, a dead-letter stream", NL_ACK_EXPLICIT, 3, 3,
     DL_STREAM_EXACT, RULE_NONE},
    {"at the threshold, a wildcard dead-letter stream", NL_ACK_EXPLICIT, 3, 3,
     DL_STREAM_WILDCARD, RULE_NONE},
    {"at the threshold, another consumer's dead-letter stream", NL_ACK_EXPLICIT,
     3, 3, DL_STREAM_OTHER, RULE_NO_DEAD_LETTER},
    {"at the threshold, dead_letter declared", NL_ACK_EXPLICIT, 3, 3,
     DL_DECLARED, RULE_NONE},
    /* Ack none: nothing is ever redelivered. */
    {"ack none, at the threshold", NL_ACK_NONE, 3, 3, DL_NONE, RULE_NONE},
    {"ack none, unlimited", NL_ACK_NONE, -1, 3, DL_NONE, RULE_NONE},
};

static void test_max_deliver_audit_rules(void) {
  for (size_t i = 0; i < N_OF(audit_cases); i++) {
    const audit_case *k = &audit_cases[i];
    const char *label = k->name;
    nl_snapshot_set set = {0};
    nl_stream_snap *s = nl_snapshot_set_add_stream(&set);
    s->name = strdup("MD");
    s->max_msgs = s->max_bytes = -1;
    s->replicas = 1;
    s->consumers_complete = true;
    s->consumer_count = 1;
    if (k->dl != DL_NONE && k->dl != DL_DECLARED) {
      nl_stream_snap *d = nl_snapshot_set_add_stream(&set);
      d->name = strdup("MD_DLQ");
      d->max_msgs = d->max_bytes = -1;
      d->replicas = 1;
      d->consumers_complete = true;
      d->subjects = calloc(1, sizeof(char *));
      d->subjects[0] = strdup((k->dl == DL_STREAM_EXACT      ? dl_exact
                               : k->dl == DL_STREAM_WILDCARD ? dl_wildcard
                                                             : dl_other)[0]);
      d->n_subjects = 1;
    }
    nl_consumer_snap *c = nl_snapshot_set_add_consumer(&set);
    c->stream = strdup("MD");
    c->name = strdup("poison");
    c->stream_index = 0;
    c->durable = true;
    c->ack_policy = k->ack;
    c->ack_wait_ns = 30 * SEC;
    c->max_ack_pending = 1000;
    c->max_deliver = k->max_deliver;
    c->num_redelivered = 4;
    if (k->dl == DL_DECLARED)
      declare(c, "dead_letter", "replayed by the orders service");
    nl_audit_params p;
    nl_audit_params_default(&p);
    CHECK_CASE(label, p.tiny_max_deliver == 3);
    p.tiny_max_deliver = k->tiny;
    nl_audit_result r = {0};
    CHECK_CASE(label, nl_audit_consumer(&set, 0, &p, 0, &r) == 0);
    const nl_finding *no_dl = NULL, *unlimited = NULL;
    for (size_t j = 0; j < r.n; j++) {
      CHECK_CASE(label, strcmp(r.items[j].consumer, "poison") == 0);
      if (r.items[j].cls == NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER)
        no_dl = &r.items[j].f;
      if (r.items[j].cls == NL_AUDIT_MAX_DELIVER_UNLIMITED)
        unlimited = &r.items[j].f;
    }
    CHECK_CASE(label, (no_dl != NULL) == (k->rule == RULE_NO_DEAD_LETTER));
    CHECK_CASE(label, (unlimited != NULL) == (k->rule == RULE_UNLIMITED));
    if (no_dl != NULL) {
      CHECK_CASE(label, no_dl->severity == NL_SEVERITY_CRITICAL);
      CHECK_CASE(label, nl_finding_get(no_dl, "max_deliver", 0) ==
                            (double)k->max_deliver);
      CHECK_CASE(label, nl_finding_get(no_dl, "num_redelivered", 0) == 4);
      CHECK_CASE(label, strstr(no_dl->fix_command,
                               "MAX_DELIVERIES.MD.poison") != NULL);
    }
    if (unlimited != NULL) {
      CHECK_CASE(label, unlimited->severity == NL_SEVERITY_WARNING);
      CHECK_CASE(label, nl_finding_get(unlimited, "max_deliver", 1) ==
                            (double)k->max_deliver);
      CHECK_CASE(label,
                 strstr(unlimited->fix_command, "--max-deliver 5") != NULL);
    }
    /* The same rules only, asked for by their bits. */
    nl_audit_result only = {0};
    unsigned bits = 1u << NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER |
                    1u << NL_AUDIT_MAX_DELIVER_UNLIMITED;
    CHECK_CASE(label, nl_audit_consumer(&set, 0, &p, bits, &only) == 0);
    CHECK_CASE(label, only.n == (k->rule == RULE_NONE ? 0u : 1u));
    /* The plugin raises neither: no class takes these rules. */
    CHECK_CASE(label,
               nl_class_of_audit_rule(NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER) ==
                   NL_CLASS_COUNT);
    CHECK_CASE(label, nl_class_of_audit_rule(NL_AUDIT_MAX_DELIVER_UNLIMITED) ==
                          NL_CLASS_COUNT);
    /* nl_audit_dead_letter, which the class shares, says the same. */
    CHECK_CASE(label,
               nl_audit_dead_letter(&set, c) ==
                   (k->dl == DL_STREAM_EXACT || k->dl == DL_STREAM_WILDCARD ||
                    k->dl == DL_DECLARED));
    nl_audit_result_free(&only);
    nl_audit_result_free(&r);
    nl_snapshot_set_clear(&set);
  }
}

/* With the configuration classes on, a consumer at the audit's threshold
 * without dead-letter handling and with nothing exhausted raises nothing
 * in the plugin (the check command reports the rule), and one exhausted
 * message raises MAX_DELIVER_EXHAUSTED at one above the threshold too. */
static void test_max_deliver_audit_threshold_in_the_plugin(void) {
  static const struct {
    const char *name;
    int64_t max_deliver;
    uint64_t redelivered; /* num_redelivered, none pending. */
    bool raised;
  } cases[] = {
      {"at the threshold, nothing exhausted", 3, 0, false},
      {"one below the threshold, nothing exhausted", 2, 0, false},
      {"one above the threshold, nothing exhausted", 4, 0, false},
      {"at the threshold, one exhausted", 3, 1, true},
      {"one above the threshold, one exhausted", 4, 1, true},
  };
  for (size_t i = 0; i < N_OF(cases); i++) {
    for (int config = 0; config < 2; config++) {
      char label[160];
      label_of(label, sizeof(label), cases[i].name, config);
      world w;
      nl_consumer_snap *c = md_world(&w, config, cases[i].max_deliver);
      c->num_redelivered = cases[i].redelivered;
      world_poll(&w);
      CHECK_CASE(label, (held(&w) != NULL) == cases[i].raised);
      size_t consumers = 0, active[NL_CLASS_COUNT];
      nl_engine_counts(w.engine, &consumers, active);
      size_t total = 0;
      for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
        total += active[cls];
      CHECK_CASE(label, consumers == 1 && total == (cases[i].raised ? 1 : 0));
      world_free(&w);
    }
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_max_deliver_exhausted_polled),
    NL_TEST(test_max_deliver_exhausted_claims),
    NL_TEST(test_max_deliver_exhausted_claims_waiting),
    NL_TEST(test_max_deliver_exhausted_changes),
    NL_TEST(test_max_deliver_audit_rules),
    NL_TEST(test_max_deliver_audit_threshold_in_the_plugin),
};

NL_TEST_MAIN(tests)
