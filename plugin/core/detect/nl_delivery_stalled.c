/* nl_delivery_stalled.c: DELIVERY_STALLED, a consumer that receives
 * nothing while work waits, whatever the cause: messages pending, room
 * under max_ack_pending, not paused, and no delivery for longer than its
 * own history says is normal. The classes that explain a stop by the
 * configuration (MAX_PENDING_THROTTLE at its cap, PUSH_UNBOUND without a
 * subscriber, a paused consumer) leave it out. The predicate is in
 * docs/detectors.md.
 *
 * The expected interval is learnt per consumer: the longest of the times
 * between two polls that saw it deliver while work waited, among the
 * latest NL_STALL_GAPS. A consumer the plugin never saw deliver has no
 * history to judge by (a backlog kept for a reader that has not come, a
 * replay consumer created for later) and is not reported. A stall is reported
 * after four times that, clamped to the configured floor and ceiling
 * (StallMinSeconds, StallMaxSeconds). */
#include "nl_classes.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

/* Intervals between deliveries kept per consumer. */
#define NL_STALL_GAPS 16
/* A stall is this many expected intervals without a delivery. */
#define NL_STALL_FACTOR 4.0

typedef struct {
  int64_t created_ns;         /* The incarnation it is of. */
  uint64_t last_delivered;    /* delivered.consumer_seq at the last progress. */
  int64_t progress_ns;        /* The poll of the last progress (0: none). */
  bool work_waited;           /* Work waited since the last progress. */
  bool seen_delivering;       /* A delivery was seen between two polls. */
  double gaps[NL_STALL_GAPS]; /* Seconds between progress, work waiting. */
  unsigned n_gaps, next;
} stall_state;

/* The interval k learnt: the longest of the intervals kept (0 when none
 * yet). The longest, so a reader that fetches in rounds (a batch job) is
 * judged by its longest round once it has shown one; a pause that ended
 * with deliveries teaches it too, which errs towards silence. */
static double expected_s(const stall_state *k) {
  double m = 0;
  for (unsigned i = 0; i < k->n_gaps; i++)
    if (k->gaps[i] > m)
      m = k->gaps[i];
  return m;
}

/* Whether the configuration explains that nothing is delivered to c:
 * paused, at its max_ack_pending, a push consumer nobody listens to, or
 * pull requests that wait by a priority policy's design. */
static bool explained(const nl_consumer_snap *c) {
  return c->paused || (c->push && !c->push_bound) || c->has_priority_policy ||
         (c->ack_policy != NL_ACK_NONE && c->max_ack_pending > 0 &&
          c->num_ack_pending >= (uint64_t)c->max_ack_pending);
}

/* Records a progress of k's consumer at now_ns, delivered at seq. */
static void progress(stall_state *k, uint64_t seq, int64_t now_ns, bool work) {
  if (k->work_waited && k->progress_ns > 0) {
    k->gaps[k->next] = nl_seconds(now_ns - k->progress_ns);
    k->next = (k->next + 1) % NL_STALL_GAPS;
    if (k->n_gaps < NL_STALL_GAPS)
      k->n_gaps++;
  }
  k->last_delivered = seq;
  k->progress_ns = now_ns;
  k->work_waited = work;
}

/* The finding for consumer x, stalled for stalled_s against limit_s. */
static void describe(const nl_consumer_ctx *x, const stall_state *k,
                     double stalled_s, double limit_s, nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  bool asked = c->push ? c->push_bound : c->num_waiting > 0;
  nl_finding_start(f, NL_DELIVERY_STALLED);
  f->severity = asked ? NL_SEVERITY_CRITICAL : NL_SEVERITY_WARNING;
  nl_finding_add(f, "stalled_s", floor(stalled_s));
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "num_waiting", (double)c->num_waiting);
  nl_finding_add(f, "expected_interval_s", expected_s(k));
  nl_finding_add(f, "limit_s", floor(limit_s));
  nl_finding_add(f, "intervals_learnt", (double)k->n_gaps);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  if (c->push)
    nl_finding_add(f, "flow_control", c->flow_control ? 1 : 0);
  if (c->server_ts_ns > 0 && c->delivered_last_ns > 0)
    nl_finding_add(f, "last_delivery_age_s",
                   floor(nl_seconds(c->server_ts_ns - c->delivered_last_ns)));
  if (c->server_ts_ns > 0 && c->ack_last_ns > 0)
    nl_finding_add(f, "last_ack_age_s",
                   floor(nl_seconds(c->server_ts_ns - c->ack_last_ns)));
  char learnt[160];
  if (k->n_gaps > 0)
    snprintf(learnt, sizeof(learnt),
             "its deliveries came every %.0f s while work waited",
             expected_s(k));
  else
    snprintf(learnt, sizeof(learnt),
             "no interval learnt yet: the floor of %.0f s applies", limit_s);
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  f->fix_command[0] = '\0';
  /* What the server shows (who asks) and the cause it points to. */
  const char *who = "no pull request is waiting";
  const char *cause = "the application that reads it is gone or no longer "
                      "asks";
  if (asked && c->push)
    who = "its deliver subject has a subscriber";
  else if (asked)
    who = "pull requests are waiting at the server";
  if (asked && c->push && c->flow_control)
    /* The server stops a push consumer with flow control once about 2 MB
     * went unanswered by its subscriber; a plain subscription on the
     * deliver subject answers no flow-control request. */
    cause = "the consumer uses flow control, and the server stops "
            "delivering while its subscriber leaves a flow-control request "
            "unanswered";
  else if (asked)
    cause = "the server is not serving a consumer that is asked";
  snprintf(f->description, sizeof(f->description),
           "%" PRIu64 " messages are pending with room under "
           "max_ack_pending and %s, yet nothing was delivered for %.0f s "
           "(%s): %s",
           c->num_pending, who, stalled_s, learnt, cause);
  if (asked && c->push && c->flow_control) {
    snprintf(f->recommendation, sizeof(f->recommendation),
             "make the subscriber answer flow control: consume through a "
             "client library's JetStream push subscription, not a plain "
             "subscription on the deliver subject (one that answers resumes "
             "delivery at the next heartbeat); flow control cannot be "
             "changed on an existing consumer (nats consumer info %s %s "
             "shows it)",
             q.stream, q.consumer);
  } else if (asked) {
    char step[512] = "";
    if (x->s->cluster != NULL)
      snprintf(step, sizeof(step),
               "move the consumer's leadership to another server (nats "
               "consumer cluster step-down %s %s); if that does not start "
               "delivery, ",
               q.stream, q.consumer);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "%srestart the server that leads the consumer (nats consumer "
             "info %s %s shows it)",
             step, q.stream, q.consumer);
  } else {
    snprintf(f->recommendation, sizeof(f->recommendation),
             "start the application that reads consumer %s of stream %s "
             "again, or find why it stopped fetching (its logs; nats "
             "consumer info %s %s shows the last delivery)",
             q.consumer, q.stream, q.stream, q.consumer);
  }
}

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  stall_state *k = nl_class_state(&nl_class_delivery_stalled, state);
  if (k == NULL)
    return false;
  if (k->progress_ns == 0 || !nl_created_same(k->created_ns, c->created_ns)) {
    *k = (stall_state){.created_ns = c->created_ns};
    progress(k, c->delivered_consumer_seq, x->now_ns, c->num_pending > 0);
    return false;
  }
  bool work = c->num_pending > 0;
  if (c->delivered_consumer_seq != k->last_delivered)
    k->seen_delivering = true;
  if (c->delivered_consumer_seq != k->last_delivered || !work || explained(c)) {
    /* Delivered, nothing waits, or the configuration explains the stop:
     * the clock starts again (an explained stop teaches no interval). */
    if (explained(c))
      k->work_waited = false;
    progress(k, c->delivered_consumer_seq, x->now_ns, work && !explained(c));
    return false;
  }
  k->work_waited = true;
  if (!k->seen_delivering)
    return false;
  double stalled_s = nl_seconds(x->now_ns - k->progress_ns);
  double limit_s = NL_STALL_FACTOR * expected_s(k);
  if (limit_s < x->p->stall_min_s)
    limit_s = x->p->stall_min_s;
  if (limit_s > x->p->stall_max_s)
    limit_s = x->p->stall_max_s;
  if (stalled_s < limit_s)
    return false;
  describe(x, k, stalled_s, limit_s, f);
  return true;
}

static const nl_option options[] = {
    {"StallMinSeconds", NL_OPTION_NUMBER, 86400.0, NULL, 120.0,
     offsetof(nl_detect_params, stall_min_s)},
    {"StallMaxSeconds", NL_OPTION_NUMBER, 7 * 86400.0, NULL, 86400.0,
     offsetof(nl_detect_params, stall_max_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_delivery_stalled = {
    .cls = NL_DELIVERY_STALLED,
    .state_size = sizeof(stall_state),
    .detect = detect,
    .options = options,
};
