/* nl_audit.c: configuration-level risks of streams and consumers (see
 * docs/check.md for each rule's predicate, severity and fix). */
#include "nl_audit.h"

#include "core/model/nl_expect.h"
#include "core/model/nl_names.h"
#include "core/model/nl_removal.h"
#include "nl_fix.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[NL_AUDIT_CLASS_COUNT] = {
    [NL_AUDIT_ACK_NONE] = "ACK_NONE",
    [NL_AUDIT_ACK_ALL_PARALLEL] = "ACK_ALL_PARALLEL",
    [NL_AUDIT_MAX_DELIVER_UNLIMITED] = "MAX_DELIVER_UNLIMITED",
    [NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER] = "MAX_DELIVER_NO_DEAD_LETTER",
    [NL_AUDIT_MAX_ACK_PENDING_TINY] = "MAX_ACK_PENDING_TINY",
    [NL_AUDIT_ACK_WAIT_BELOW_PROCESSING] = "ACK_WAIT_BELOW_PROCESSING",
    [NL_AUDIT_INTEREST_NO_CONSUMERS] = "INTEREST_NO_CONSUMERS",
    [NL_AUDIT_RETENTION_BELOW_BACKLOG] = "RETENTION_BELOW_BACKLOG",
    [NL_AUDIT_R1_ON_CLUSTER] = "R1_ON_CLUSTER",
    [NL_AUDIT_PUSH_NO_HEARTBEAT] = "PUSH_NO_HEARTBEAT",
    [NL_AUDIT_INVALID_EXPECTATION] = "INVALID_EXPECTATION",
    [NL_AUDIT_UNOBSERVABLE] = "UNOBSERVABLE",
    [NL_AUDIT_CONSUMER_SINGLE_REPLICA] = "CONSUMER_SINGLE_REPLICA",
};

const char *nl_audit_class_name(nl_audit_class cls) {
  return (unsigned)cls < NL_AUDIT_CLASS_COUNT ? class_names[cls] : "UNKNOWN";
}

void nl_audit_params_default(nl_audit_params *p) {
  p->tiny_max_deliver = 3;
  p->min_max_ack_pending = 10;
  p->backlog_fraction = 0.5;
}

void nl_audit_result_free(nl_audit_result *r) {
  free(r->items);
  memset(r, 0, sizeof(*r));
}

/* Returns true when the NATS subject pattern matches the literal subject:
 * '*' stands for one token, a final '>' for one or more. */
static bool subject_matches(const char *pattern, const char *subject) {
  const char *p = pattern, *s = subject;
  for (;;) {
    size_t pl = strcspn(p, "."), sl = strcspn(s, ".");
    if (pl == 1 && p[0] == '>' && p[1] == '\0')
      return sl > 0;
    if (!(pl == 1 && p[0] == '*') && (pl != sl || strncmp(p, s, pl) != 0))
      return false;
    if (p[pl] == '\0' || s[sl] == '\0')
      return p[pl] == '\0' && s[sl] == '\0';
    p += pl + 1;
    s += sl + 1;
  }
}

bool nl_stream_captures(const nl_stream_snap *s, const char *subject) {
  for (size_t i = 0; i < s->n_subjects; i++)
    if (subject_matches(s->subjects[i], subject))
      return true;
  return false;
}

/* The state of one audit run. */
typedef struct {
  const nl_snapshot_set *set;
  const nl_audit_params *p;
  nl_audit_result *out;
  bool failed;   /* Memory ran out. */
  unsigned mask; /* Rules to run: one bit per class; 0 runs all. */
} audit_run;

/* Returns true when the run includes the rule of cls. */
static bool rule_on(const audit_run *a, nl_audit_class cls) {
  return a->mask == 0 || (a->mask & (1u << cls)) != 0;
}

/* Appends a finding and returns its nl_finding to fill, or NULL when memory
 * runs out (the run is then marked failed). */
static nl_finding *add(audit_run *a, nl_audit_class cls, nl_severity sev,
                       const char *stream, const char *consumer) {
  nl_audit_result *r = a->out;
  if (!rule_on(a, cls))
    return NULL;
  if (r->n == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 16;
    nl_audit_finding *items = realloc(r->items, cap * sizeof(*items));
    if (items == NULL) {
      a->failed = true;
      return NULL;
    }
    r->items = items;
    r->cap = cap;
  }
  nl_audit_finding *it = &r->items[r->n++];
  memset(it, 0, sizeof(*it));
  it->cls = cls;
  it->stream = stream;
  it->consumer = consumer;
  it->f.cls = NL_CLASS_COUNT;
  it->f.severity = sev;
  return &it->f;
}

/* Shell words for a fix command: the stream, the consumer, and a new
 * consumer or stream name built from them. */
typedef struct {
  nl_shell_names n;
  char derived[2 * NL_SHELL_NAME_MAX + 64];
} words;

/* Fills w with the quoted stream and consumer (NULL for none) and with
 * derived: derived_fmt applied to (stream, consumer), or the stream when
 * derived_fmt is NULL. */
static void quote(const char *stream, const char *consumer,
                  const char *derived_fmt, words *w) {
  char derived[2 * NL_NAME_MAX + 32];
  nl_shell_names_of(stream, consumer, &w->n);
  snprintf(derived, sizeof(derived), derived_fmt ? derived_fmt : "%s%.0s",
           stream, consumer ? consumer : "");
  nl_shell_word(derived, w->derived, sizeof(w->derived));
}

/* ACK_NONE: a durable consumer that never waits for acks. */
static void rule_ack_none(audit_run *a, const nl_consumer_snap *c) {
  if (c->ack_policy != NL_ACK_NONE || !c->durable ||
      !rule_on(a, NL_AUDIT_ACK_NONE))
    return;
  nl_finding *f =
      add(a, NL_AUDIT_ACK_NONE, NL_SEVERITY_WARNING, c->stream, c->name);
  if (f == NULL)
    return;
  words w;
  quote(c->stream, c->name, "%.0s%s_explicit", &w);
  nl_finding_add(f, "durable", 1);
  nl_finding_add(f, "delivered_stream_seq", (double)c->delivered_stream_seq);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  snprintf(f->description, sizeof(f->description),
           "durable consumer with ack_policy none: the server counts each "
           "message as done when it sends it, so a message whose worker "
           "crashes or fails is lost (at-most-once delivery)");
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer copy %s %s %s --ack explicit", w.n.stream,
           w.n.consumer, w.derived);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "ack_policy explicit; the ack policy of a consumer cannot be "
           "changed: create the explicit-ack copy, choose its start "
           "(--deliver) so no message is skipped, move the workers to it "
           "and remove the old consumer (nats consumer rm %s %s)",
           w.n.stream, w.n.consumer);
}

/* ACK_ALL_PARALLEL: ack_policy all where several messages can be processed
 * at once by different workers. */
static void rule_ack_all(audit_run *a, const nl_consumer_snap *c,
                         const nl_expectations *e) {
  if (!rule_on(a, NL_AUDIT_ACK_ALL_PARALLEL) || c->ack_policy != NL_ACK_ALL ||
      c->max_ack_pending == 1 || (c->push && !c->has_deliver_group) ||
      e->workers == 1)
    return;
  /* Pull requests waiting are workers ready to take messages at once,
   * except with a pinned client (nats-server 2.11+): the server delivers
   * to the pinned client alone, and the requests of the others wait
   * unserved, so they show no worker processing beside it. */
  bool parallel = e->workers > 1 || c->has_deliver_group ||
                  (c->num_waiting >= 2 && !c->pinned_client);
  /* A warning either way, as the plugin's ACK_ALL_PARALLEL class: the two
   * must never disagree. parallel_seen tells the forms apart. */
  nl_finding *f = add(a, NL_AUDIT_ACK_ALL_PARALLEL, NL_SEVERITY_WARNING,
                      c->stream, c->name);
  if (f == NULL)
    return;
  words w;
  quote(c->stream, c->name, "%.0s%s_explicit", &w);
  nl_finding_add(f, "declared_workers", (double)e->workers);
  nl_finding_add(f, "num_waiting", (double)c->num_waiting);
  nl_finding_add(f, "deliver_group", c->has_deliver_group ? 1 : 0);
  nl_finding_add(f, "max_ack_pending", (double)c->max_ack_pending);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "parallel_seen", parallel ? 1 : 0);
  if (c->pinned_client)
    nl_finding_add(f, "pinned_client", 1);
  if (parallel)
    snprintf(f->description, sizeof(f->description),
             "ack_policy all with parallel workers (%s): one worker's ack "
             "also acknowledges every earlier message, including those other "
             "workers are still processing; when one of them fails, its "
             "messages are lost",
             e->workers > 1         ? "declared workers"
             : c->has_deliver_group ? "a deliver group"
                                    : "several pull requests waiting");
  else
    snprintf(f->description, sizeof(f->description),
             "ack_policy all on a %s consumer that allows %s messages "
             "outstanding: as soon as two workers take messages, one "
             "worker's ack acknowledges messages the other is still "
             "processing; declare nats_lens.workers=1 if exactly one worker "
             "processes in order",
             c->push ? "push" : "pull",
             c->max_ack_pending > 0 ? "several" : "unlimited");
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer copy %s %s %s --ack explicit", w.n.stream,
           w.n.consumer, w.derived);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "ack_policy explicit (it cannot be changed in place: create the "
           "copy, move the workers, remove the old consumer); or keep one "
           "message outstanding at a time with nats consumer edit %s %s "
           "--max-pending 1",
           w.n.stream, w.n.consumer);
}

/* Returns true when some stream of the set keeps the MAX_DELIVERIES
 * advisories of consumer c. */
static bool dead_letter_stream(const nl_snapshot_set *set,
                               const nl_consumer_snap *c) {
  if (set == NULL)
    return false;
  char subject[2 * NL_NAME_MAX + 64];
  snprintf(subject, sizeof(subject),
           "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s", c->stream,
           c->name);
  for (size_t i = 0; i < set->n_streams; i++)
    if (nl_stream_captures(&set->streams[i], subject))
      return true;
  return false;
}

bool nl_audit_dead_letter(const nl_snapshot_set *set,
                          const nl_consumer_snap *c) {
  nl_expectations e;
  nl_expect_read(c, &e);
  return e.dead_letter != NULL || dead_letter_stream(set, c);
}

/* Writes the dead-letter stream command for c into buf. */
/* MAX_DELIVER_UNLIMITED and MAX_DELIVER_NO_DEAD_LETTER. */
static void rule_max_deliver(audit_run *a, const nl_consumer_snap *c,
                             const nl_expectations *e) {
  if (c->ack_policy == NL_ACK_NONE ||
      (!rule_on(a, NL_AUDIT_MAX_DELIVER_UNLIMITED) &&
       !rule_on(a, NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER)))
    return;
  words w;
  quote(c->stream, c->name, NULL, &w);
  char dlq[NL_FIX_MAX];
  nl_fix_dead_letter(c, dlq, sizeof(dlq));
  if (c->max_deliver <= 0) {
    nl_finding *f = add(a, NL_AUDIT_MAX_DELIVER_UNLIMITED, NL_SEVERITY_WARNING,
                        c->stream, c->name);
    if (f == NULL)
      return;
    double rec = c->backoff_steps + 1 > 5 ? (double)c->backoff_steps + 1 : 5;
    nl_finding_add(f, "max_deliver", (double)c->max_deliver);
    nl_finding_add(f, "num_redelivered", (double)c->num_redelivered);
    nl_finding_add(f, "recommended_max_deliver", rec);
    snprintf(f->description, sizeof(f->description),
             "max_deliver is unlimited: a message that always fails (a "
             "poison message) is redelivered forever, each time taking a "
             "worker and one of the max_ack_pending slots");
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats consumer edit %s %s --max-deliver %.0f", w.n.stream,
             w.n.consumer, rec);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_deliver %.0f, and keep the messages that exhaust it in a "
             "dead-letter stream: %s",
             rec, dlq);
    return;
  }
  if (c->max_deliver > a->p->tiny_max_deliver || e->dead_letter != NULL ||
      dead_letter_stream(a->set, c))
    return;
  nl_finding *f = add(a, NL_AUDIT_MAX_DELIVER_NO_DEAD_LETTER,
                      NL_SEVERITY_CRITICAL, c->stream, c->name);
  if (f == NULL)
    return;
  nl_finding_add(f, "max_deliver", (double)c->max_deliver);
  nl_finding_add(f, "num_redelivered", (double)c->num_redelivered);
  nl_finding_add(f, "dead_letter_streams", 0);
  snprintf(f->description, sizeof(f->description),
           "max_deliver %" PRId64
           " without dead-letter handling: after %" PRId64
           " attempt(s) (a crash, a restart or one slow run each use one) the "
           "message is given up, and only a MAX_DELIVERIES advisory that no "
           "stream keeps records it (silent loss)",
           c->max_deliver, c->max_deliver);
  snprintf(f->fix_command, sizeof(f->fix_command), "%s", dlq);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "keep the MAX_DELIVERIES advisories (they name the stream "
           "sequence of each exhausted message) in a dead-letter stream and "
           "replay from it; or raise max_deliver (nats consumer edit %s %s "
           "--max-deliver 5); if the application handles exhausted messages "
           "itself, declare it with nats_lens.dead_letter",
           w.n.stream, w.n.consumer);
}

/* MAX_ACK_PENDING_TINY: too few messages may be outstanding for the
 * workers there are (declared, or pull requests waiting), or below the
 * minimum when no workers are declared. */
static void rule_max_ack_pending(audit_run *a, const nl_consumer_snap *c,
                                 const nl_expectations *e) {
  if (!rule_on(a, NL_AUDIT_MAX_ACK_PENDING_TINY) ||
      c->ack_policy == NL_ACK_NONE || c->max_ack_pending <= 0)
    return;
  int64_t need;
  const char *why;
  if (e->workers > 0) {
    need = e->workers;
    why = "the declared number of workers";
  } else if (c->ack_policy == NL_ACK_ALL && c->max_ack_pending == 1) {
    need = 1; /* One at a time is what makes ack_policy all safe. */
    why = "one";
  } else {
    need = a->p->min_max_ack_pending;
    why = "the minimum";
  }
  if (c->num_waiting > (uint64_t)need && c->num_waiting < INT64_MAX) {
    need = (int64_t)c->num_waiting;
    why = "the pull requests waiting";
  }
  if (c->max_ack_pending >= need)
    return;
  nl_finding *f = add(a, NL_AUDIT_MAX_ACK_PENDING_TINY, NL_SEVERITY_WARNING,
                      c->stream, c->name);
  if (f == NULL)
    return;
  /* Room for each worker to hold two messages, and never below the
   * minimum. */
  int64_t rec = need == a->p->min_max_ack_pending ? need : 2 * need;
  if (rec < a->p->min_max_ack_pending)
    rec = a->p->min_max_ack_pending;
  words w;
  quote(c->stream, c->name, NULL, &w);
  nl_finding_add(f, "max_ack_pending", (double)c->max_ack_pending);
  nl_finding_add(f, "needed", (double)need);
  nl_finding_add(f, "declared_workers", (double)e->workers);
  nl_finding_add(f, "num_waiting", (double)c->num_waiting);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "recommended_max_ack_pending", (double)rec);
  snprintf(f->description, sizeof(f->description),
           "max_ack_pending %" PRId64 " is below %s (%" PRId64
           "): once that many messages are outstanding (slow or poison "
           "messages included) the server stops delivering to every worker "
           "of this consumer",
           c->max_ack_pending, why, need);
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer edit %s %s --max-pending %" PRId64, w.n.stream,
           w.n.consumer, rec);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "max_ack_pending %" PRId64 " (room for two messages per worker, "
           "at least %" PRId64 "); if workers hold messages without acking, "
           "fix the acks first: a higher limit only delays the stall",
           rec, a->p->min_max_ack_pending);
}

/* ACK_WAIT_BELOW_PROCESSING: the first redelivery comes before a message
 * that takes the declared processing time is done. */
static void rule_ack_wait(audit_run *a, const nl_consumer_snap *c,
                          const nl_expectations *e) {
  int64_t delay = nl_consumer_redelivery_delay_ns(c);
  if (!rule_on(a, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING) ||
      c->ack_policy == NL_ACK_NONE || e->max_processing_ns <= 0 || delay <= 0 ||
      delay > e->max_processing_ns)
    return;
  nl_finding *f = add(a, NL_AUDIT_ACK_WAIT_BELOW_PROCESSING,
                      NL_SEVERITY_CRITICAL, c->stream, c->name);
  if (f == NULL)
    return;
  double rec = nl_fix_declared_ack_wait_s(c);
  nl_finding_add(f, "ack_wait_s", nl_seconds(c->ack_wait_ns));
  nl_finding_add(f, "redelivery_delay_s", nl_seconds(delay));
  nl_finding_add(f, "declared_max_processing_s",
                 nl_seconds(e->max_processing_ns));
  nl_finding_add(f, "recommended_ack_wait_s", rec);
  snprintf(f->description, sizeof(f->description),
           "the first redelivery comes after %.1f s (%s), not later than the "
           "declared processing time of %.1f s: a message that takes that "
           "long is delivered again while it is still being processed "
           "(duplicate execution)",
           nl_seconds(delay),
           c->backoff_steps ? "first backoff step" : "ack_wait",
           nl_seconds(e->max_processing_ns));
  nl_fix_ack_wait(c, rec, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "a first redelivery delay of %.0f s (1.5x the declared processing "
           "time); or have long tasks send in-progress acks (+WPI) at least "
           "every %.0f s",
           rec, nl_seconds(delay) / 2);
}

/* RETENTION_BELOW_BACKLOG: the stream's limits hold fewer messages than the
 * consumer still has to read (critical once unread messages were evicted,
 * a warning while a full stream holds little more than the backlog). */
static void rule_retention(audit_run *a, const nl_consumer_snap *c,
                           const nl_stream_snap *s) {
  if (s->discard_new || !rule_on(a, NL_AUDIT_RETENTION_BELOW_BACKLOG))
    return; /* Publishers get errors instead: nothing is lost silently. */
  bool full = nl_removal_stream_full(s);
  uint64_t evicted = 0;
  if (!c->filtered && s->first_seq > c->delivered_stream_seq + 1)
    evicted = s->first_seq - 1 - c->delivered_stream_seq;
  uint64_t backlog = c->num_pending + c->num_ack_pending;
  double limit = nl_stream_limit_messages(s);
  bool lost = evicted > 0 && (full || s->max_age_ns > 0);
  bool at_risk =
      full && limit > 0 && (double)backlog >= a->p->backlog_fraction * limit;
  if (!lost && !at_risk)
    return;
  nl_finding *f = add(a, NL_AUDIT_RETENTION_BELOW_BACKLOG,
                      lost ? NL_SEVERITY_CRITICAL : NL_SEVERITY_WARNING,
                      c->stream, c->name);
  if (f == NULL)
    return;
  nl_finding_add(f, "unread_evicted", (double)evicted);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "stream_messages", (double)s->msgs);
  nl_finding_add(f, "limit_messages", floor(limit));
  nl_finding_add(f, "max_age_s", nl_seconds(s->max_age_ns));
  if (limit > 0)
    nl_finding_add(f, "backlog_ratio", (double)(backlog + evicted) / limit);
  if (lost)
    snprintf(f->description, sizeof(f->description),
             "%" PRIu64 " messages were removed by the stream's limits "
             "before this consumer received them, and %" PRIu64
             " more wait: the stream keeps fewer messages than the "
             "consumer's backlog (silent loss)",
             evicted, backlog);
  else
    snprintf(f->description, sizeof(f->description),
             "the stream is at its limit (%.0f messages) and this "
             "consumer's backlog of %" PRIu64 " messages fills %.0f%% of "
             "it: while the consumer stays behind, new messages evict ones "
             "it has not received",
             limit, backlog, 100.0 * (double)backlog / limit);
  nl_fix_limit(c, s, evicted, f);
}

/* The replicas that keep consumer c's state on stream s, as the server
 * counts them: num_replicas when set and not above the stream's, else the
 * stream's (a durable inherits them; server/consumer.go, replicas()). */
static int consumer_replicas(const nl_consumer_snap *c,
                             const nl_stream_snap *s) {
  int stream = s->replicas > 0 ? s->replicas : 1;
  return c->num_replicas > 0 && c->num_replicas < stream ? c->num_replicas
                                                         : stream;
}

/* CONSUMER_SINGLE_REPLICA: a durable consumer with acks on a replicated
 * stream whose state one server's loss (one replica), or a restart of all
 * its servers (memory storage on a file stream), erases. Ephemeral and
 * ack-none consumers (ordered consumers, key-value watchers) hold nothing
 * worth keeping and are left out. */
static void rule_single_replica(audit_run *a, const nl_consumer_snap *c,
                                const nl_stream_snap *s) {
  if (!rule_on(a, NL_AUDIT_CONSUMER_SINGLE_REPLICA) || s->replicas <= 1 ||
      !c->durable || c->ack_policy == NL_ACK_NONE)
    return;
  int replicas = consumer_replicas(c, s);
  bool memory = c->mem_storage && !s->memory_storage;
  if (replicas > 1 && !memory)
    return;
  nl_finding *f = add(a, NL_AUDIT_CONSUMER_SINGLE_REPLICA, NL_SEVERITY_WARNING,
                      c->stream, c->name);
  if (f == NULL)
    return;
  words w;
  quote(c->stream, c->name, NULL, &w);
  nl_finding_add(f, "stream_replicas", s->replicas);
  nl_finding_add(f, "consumer_replicas", replicas);
  nl_finding_add(f, "num_replicas", c->num_replicas);
  nl_finding_add(f, "mem_storage", c->mem_storage ? 1 : 0);
  nl_finding_add(f, "ack_floor_stream_seq", (double)c->ack_floor_stream_seq);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  if (replicas == 1)
    snprintf(f->description, sizeof(f->description),
             "durable consumer with one replica on a stream of %d: its "
             "delivery and acknowledgement state lives on one server; while "
             "that server is down the consumer delivers nothing, and when it "
             "is lost the consumer goes with it and, created again, starts "
             "from its deliver policy: messages delivered again "
             "(duplicates) or skipped (loss)%s",
             s->replicas,
             c->mem_storage ? ", and it keeps that state in memory only" : "");
  else
    snprintf(f->description, sizeof(f->description),
             "durable consumer with mem_storage on a file stream of %d "
             "replicas: each of its %d replicas keeps the acknowledgement "
             "state in memory only, so a restart of all its servers at once "
             "(a cluster restart, a power loss) erases it and the consumer "
             "starts again from its deliver policy, every message "
             "delivered again (duplicates)",
             s->replicas, replicas);
  if (!c->mem_storage) {
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats consumer edit %s %s --replicas %d", w.n.stream, w.n.consumer,
             s->replicas);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "%d replicas, as its stream has (the server moves the "
             "consumer's state to the new replicas)",
             s->replicas);
    return;
  }
  /* No command: the nats CLI cannot take mem_storage away (consumer edit
   * has no such flag and consumer copy keeps it). */
  char more[32] = "";
  if (replicas == 1)
    snprintf(more, sizeof(more), "--replicas %d ", s->replicas);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "file storage%s: create a durable consumer with the same settings "
           "without mem_storage (nats consumer add %s NEW ... %s--deliver "
           "%.0f, after the old one's ack floor), move the workers to it, "
           "then nats consumer rm %s %s; an API update of mem_storage is "
           "accepted, but from nats-server 2.11 the state stays in memory "
           "until the consumer is created again",
           replicas == 1 ? " and the stream's replicas" : "", w.n.stream, more,
           (double)c->ack_floor_stream_seq + 1, w.n.stream, w.n.consumer);
}

/* Runs the rules about one consumer. */
static void audit_consumer(audit_run *a, const nl_consumer_snap *c,
                           const nl_stream_snap *s) {
  nl_expectations e;
  nl_expect_read(c, &e);
  rule_ack_none(a, c);
  rule_ack_all(a, c, &e);
  rule_max_deliver(a, c, &e);
  rule_max_ack_pending(a, c, &e);
  rule_ack_wait(a, c, &e);
  rule_retention(a, c, s);
  rule_single_replica(a, c, s);
  if (c->push && c->idle_heartbeat_ns <= 0 &&
      rule_on(a, NL_AUDIT_PUSH_NO_HEARTBEAT)) {
    nl_finding *f = add(a, NL_AUDIT_PUSH_NO_HEARTBEAT, NL_SEVERITY_WARNING,
                        c->stream, c->name);
    if (f == NULL)
      return;
    words w;
    quote(c->stream, c->name, "%.0s%s_hb", &w);
    nl_finding_add(f, "push_bound", c->push_bound ? 1 : 0);
    nl_finding_add(f, "flow_control", c->flow_control ? 1 : 0);
    snprintf(f->description, sizeof(f->description),
             "push consumer without idle_heartbeat: when delivery stops (the "
             "subscription lost, a slow consumer cut off, a leader change) "
             "the subscriber cannot tell a stall from a quiet stream, and "
             "messages wait unseen");
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats consumer copy %s %s %s --heartbeat 5s --flow-control",
             w.n.stream, w.n.consumer, w.derived);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "idle_heartbeat 5s with flow control; the server cannot add "
             "heartbeats to an existing consumer: create the copy (give it "
             "its own --target deliver subject), move the subscribers, "
             "then remove the old consumer (nats consumer rm %s %s)",
             w.n.stream, w.n.consumer);
  }
  if (e.bad_key != NULL && rule_on(a, NL_AUDIT_INVALID_EXPECTATION)) {
    nl_finding *f = add(a, NL_AUDIT_INVALID_EXPECTATION, NL_SEVERITY_WARNING,
                        c->stream, c->name);
    if (f == NULL)
      return;
    words w;
    quote(c->stream, c->name, NULL, &w);
    snprintf(f->description, sizeof(f->description),
             "declaration " NL_EXPECT_PREFIX "%s=\"%.120s\" cannot be read "
             "(%s), so it is not checked",
             e.bad_key, e.bad_value, e.bad_reason);
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats consumer edit %s %s --metadata " NL_EXPECT_PREFIX "%s=%s",
             w.n.stream, w.n.consumer, e.bad_key,
             strcmp(e.bad_key, "workers") == 0          ? "4"
             : strcmp(e.bad_key, "max_processing") == 0 ? "30s"
                                                        : "DLQ");
    snprintf(f->recommendation, sizeof(f->recommendation),
             "write durations as 30s, 2m or 1m30s, workers as a whole "
             "number, dead_letter as the name of what keeps exhausted "
             "messages");
  }
}

/* Fills the INTEREST_NO_CONSUMERS finding of s (severity and class left as
 * they are); dropped is the number of publishes seen discarded in the last
 * interval, 0 when only the consumer count speaks. */
static void interest_finding(const nl_stream_snap *s, uint64_t dropped,
                             nl_finding *f) {
  words w;
  quote(s->name, NULL, NULL, &w);
  nl_finding_add(f, "consumer_count", (double)s->consumer_count);
  nl_finding_add(f, "last_seq", (double)s->last_seq);
  nl_finding_add(f, "messages", (double)s->msgs);
  if (dropped > 0)
    nl_finding_add(f, "dropped_last_interval", (double)dropped);
  if (s->consumer_count == 0)
    snprintf(f->description, sizeof(f->description),
             "stream with interest retention and no consumers: every "
             "message published now is acknowledged to the publisher and "
             "dropped at once, because no consumer is interested in it");
  else
    snprintf(f->description, sizeof(f->description),
             "stream with interest retention whose %" PRIu64
             " consumer(s) match none of what is published: last_seq rose "
             "by %" PRIu64 " while the stored messages did not grow and no "
             "consumer received anything, so each publish was acknowledged "
             "and dropped",
             s->consumer_count, dropped);
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer add %s worker --pull --ack explicit --deliver all "
           "--max-deliver 5 --defaults",
           w.n.stream);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "create a consumer whose filter matches every published subject "
           "before anything publishes; if messages must be kept while no "
           "consumer exists, use limits or workqueue retention (the "
           "retention of a stream cannot be changed: create a new stream)");
}

bool nl_audit_interest_dropping(const nl_stream_snap *s,
                                const nl_stream_snap *prev,
                                uint64_t delivered_delta, nl_finding *f) {
  if (s->retention != NL_RETENTION_INTEREST || prev == NULL ||
      s->last_seq <= prev->last_seq || s->msgs > prev->msgs ||
      delivered_delta > 0)
    return false;
  memset(f, 0, sizeof(*f));
  f->cls = NL_CLASS_COUNT;
  f->severity = NL_SEVERITY_CRITICAL;
  interest_finding(s, s->last_seq - prev->last_seq, f);
  return true;
}

/* Runs the rules about one stream itself. */
static void rule_unobservable(audit_run *a, const char *name,
                              double consumer_count);

static void audit_stream(audit_run *a, const nl_stream_snap *s) {
  words w;
  quote(s->name, NULL, NULL, &w);
  if (s->retention == NL_RETENTION_INTEREST && s->consumer_count == 0) {
    nl_finding *f = add(a, NL_AUDIT_INTEREST_NO_CONSUMERS, NL_SEVERITY_CRITICAL,
                        s->name, NULL);
    if (f == NULL)
      return;
    interest_finding(s, 0, f);
  }
  if (s->cluster != NULL && s->replicas <= 1 &&
      rule_on(a, NL_AUDIT_R1_ON_CLUSTER)) {
    nl_finding *f =
        add(a, NL_AUDIT_R1_ON_CLUSTER, NL_SEVERITY_WARNING, s->name, NULL);
    if (f == NULL)
      return;
    nl_finding_add(f, "replicas", s->replicas > 0 ? s->replicas : 1);
    snprintf(f->description, sizeof(f->description),
             "stream with a single replica in cluster %.100s: while the "
             "server that holds it is down, the stream and its consumers "
             "are unavailable, and a lost disk loses its messages",
             s->cluster);
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --replicas 3", w.n.stream);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "3 replicas (the cluster needs at least 3 JetStream servers); "
             "the stream's consumers follow its replica count");
  }
  if (!s->consumers_complete)
    rule_unobservable(a, s->name, (double)s->consumer_count);
}

/* UNOBSERVABLE for the stream named name: its consumer list could not be
 * read completely (consumer_count >= 0, from the stream's listing), or the
 * stream itself was reported missing (consumer_count < 0, unknown). */
static void rule_unobservable(audit_run *a, const char *name,
                              double consumer_count) {
  if (!rule_on(a, NL_AUDIT_UNOBSERVABLE))
    return;
  nl_finding *f =
      add(a, NL_AUDIT_UNOBSERVABLE, NL_SEVERITY_WARNING, name, NULL);
  if (f == NULL)
    return;
  words w;
  quote(name, NULL, NULL, &w);
  bool missing = consumer_count < 0;
  if (!missing)
    nl_finding_add(f, "consumer_count", consumer_count);
  nl_finding_add(f, "stream_missing", missing ? 1 : 0);
  snprintf(f->description, sizeof(f->description), "%s",
           missing ? "the stream was reported missing in the stream list, "
                     "or left out of a list short of its total (its servers "
                     "did not answer): none of its consumers could be read "
                     "or checked"
                   : "the stream's consumer list could not be read "
                     "completely (consumers missing or offline in the "
                     "reply, or the request failed): those consumers were "
                     "not checked");
  snprintf(f->fix_command, sizeof(f->fix_command), "nats consumer report %s",
           w.n.stream);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "look at the stream's leader and the cluster's health (nats "
           "server report jetstream), then run the check again");
}

int nl_audit_stream(const nl_snapshot_set *set, size_t index,
                    const nl_audit_params *p, unsigned rules,
                    nl_audit_result *out) {
  audit_run a = {set, p, out, false, rules};
  if (index < set->n_streams)
    audit_stream(&a, &set->streams[index]);
  return a.failed ? -1 : 0;
}

int nl_audit_missing_stream(const nl_snapshot_set *set, size_t index,
                            const nl_audit_params *p, unsigned rules,
                            nl_audit_result *out) {
  audit_run a = {set, p, out, false, rules};
  if (index < set->n_missing_streams)
    rule_unobservable(&a, set->missing_streams[index], -1);
  return a.failed ? -1 : 0;
}

int nl_audit_consumer(const nl_snapshot_set *set, size_t index,
                      const nl_audit_params *p, unsigned rules,
                      nl_audit_result *out) {
  audit_run a = {set, p, out, false, rules};
  if (index < set->n_consumers &&
      set->consumers[index].stream_index < set->n_streams)
    audit_consumer(&a, &set->consumers[index],
                   &set->streams[set->consumers[index].stream_index]);
  return a.failed ? -1 : 0;
}

int nl_audit_run(const nl_snapshot_set *set, const nl_stream_select *select,
                 const nl_audit_params *p, nl_audit_result *out) {
  audit_run a = {set, p, out, false, 0};
  for (size_t i = 0; i < set->n_streams && !a.failed; i++)
    if (nl_stream_selected(select, set->streams[i].name))
      audit_stream(&a, &set->streams[i]);
  for (size_t i = 0; i < set->n_missing_streams && !a.failed; i++)
    if (nl_stream_selected(select, set->missing_streams[i]))
      rule_unobservable(&a, set->missing_streams[i], -1);
  for (size_t i = 0; i < set->n_consumers && !a.failed; i++) {
    const nl_consumer_snap *c = &set->consumers[i];
    if (c->stream_index >= set->n_streams)
      continue;
    const nl_stream_snap *s = &set->streams[c->stream_index];
    if (nl_stream_selected(select, s->name))
      audit_consumer(&a, c, s);
  }
  return a.failed ? -1 : 0;
}
