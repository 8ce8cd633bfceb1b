/* nl_replicas_at_risk.c: STREAM_REPLICAS_AT_RISK and
 * CONSUMER_REPLICAS_AT_RISK, a clustered stream or consumer whose Raft
 * group has fewer current copies than it was given: a replica offline or
 * not current (behind the leader) for longer than ReplicaGraceSeconds, or
 * (streams) no leader for that long. Judged from the item's "cluster"
 * object (nl_replica_set), which the per-account poll and the system
 * account's JSZ replies both carry. The predicate, and what "lose" means
 * with Raft, are in docs/detectors.md.
 *
 * A replica is followed across polls by name: the onset of its run of
 * polls seen behind is the earlier of the first such poll and the time the
 * leader last heard from it (the poll's time less "active"), so a server
 * down for an hour is reported at the first poll, while a follower that is
 * not current for a moment under load, one catching up after a restart or
 * a new leader learning its peers after an election stays silent for the
 * grace. A consumer with no leader is not listed at all (only its leader
 * answers for it): CONSUMER_UNOBSERVABLE reports it, as it reports a
 * stream STREAM.LIST names missing. */
#include "nl_classes.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* One replica followed: since when it has been seen behind (0: it was
 * current at the latest poll). */
typedef struct {
  char name[NL_REPLICA_NAME_MAX];
  int64_t behind_since_ns;
} peer_track;

/* A stream's or consumer's; the engine drops it when the stream or
 * consumer is created again. */
typedef struct {
  int64_t no_leader_since_ns; /* 0: it had a leader at the latest poll. */
  peer_track peers[NL_REPLICAS_MAX];
  size_t n;
} risk_state;

/* What one poll shows of a group, with the state's onsets applied. */
typedef struct {
  unsigned size;    /* Replicas it should have. */
  unsigned current; /* Copies current: the leader and current replicas. */
  unsigned quorum;  /* size / 2 + 1. */
  unsigned behind;  /* Replicas behind for at least the grace. */
  unsigned offline; /* Of those, marked offline. */
  uint64_t max_lag; /* The largest lag among them. */
  double behind_s;  /* The longest any of them has been behind. */
  int64_t since_ns; /* The earliest onset among them (or leaderless). */
  bool no_leader;   /* Leaderless for at least the grace. */
  double leaderless_s;
  char who[200]; /* "n2 (offline, 500 behind, 25 s)", ... */
} risk_view;

/* Returns the onset kept for the replica named name, or 0. */
static int64_t onset_of(const risk_state *k, const char *name) {
  for (size_t i = 0; i < k->n; i++)
    if (strcmp(k->peers[i].name, name) == 0)
      return k->peers[i].behind_since_ns;
  return 0;
}

/* Appends a description of replica r, behind for behind_s, to v->who. */
static void name_replica(risk_view *v, const nl_replica *r, double behind_s) {
  size_t used = strlen(v->who);
  if (used + 1 >= sizeof(v->who))
    return;
  char lag[48] = "";
  if (r->lag > 0)
    snprintf(lag, sizeof(lag), ", %" PRIu64 " operations behind", r->lag);
  snprintf(v->who + used, sizeof(v->who) - used, "%s%s (%s%s, %.0f s)",
           used ? ", " : "", r->name, r->offline ? "offline" : "not current",
           lag, behind_s);
}

/* Updates k from group g at now_ns and fills v: replicas behind for at
 * least grace_s count, the others only keep their onset. configured is
 * the replicas asked for (0: not known). */
static void judge(risk_state *k, const nl_replica_set *g, int configured,
                  double grace_s, int64_t now_ns, risk_view *v) {
  memset(v, 0, sizeof(*v));
  risk_state next = {0};
  unsigned current_peers = 0;
  /* A leaderless reply comes from any member, and what it says of its
   * peers is that member's old view (seen on 2.9.10 after a quorum was
   * lost: the answering server listed itself not current, last heard 46 s
   * before): the replicas keep their onsets until a leader reports them
   * again. */
  if (g->no_leader) {
    memcpy(next.peers, k->peers, sizeof(next.peers));
    next.n = k->n;
  }
  for (size_t i = 0; i < g->n && !g->no_leader; i++) {
    const nl_replica *r = &g->peers[i];
    peer_track *t = &next.peers[next.n++];
    snprintf(t->name, sizeof(t->name), "%s", r->name);
    if (r->current && !r->offline) {
      current_peers++;
      continue;
    }
    int64_t since = onset_of(k, r->name);
    if (since == 0 || since > now_ns)
      since = now_ns;
    if (r->active_ns > 0 && r->active_ns < now_ns &&
        now_ns - r->active_ns < since)
      since = now_ns - r->active_ns;
    t->behind_since_ns = since;
    double behind_s = nl_seconds(now_ns - since);
    if (behind_s < grace_s)
      continue;
    v->behind++;
    v->offline += r->offline;
    if (r->lag > v->max_lag)
      v->max_lag = r->lag;
    if (behind_s > v->behind_s)
      v->behind_s = behind_s;
    if (v->since_ns == 0 || since < v->since_ns)
      v->since_ns = since;
    name_replica(v, r, behind_s);
  }
  next.no_leader_since_ns = 0;
  if (g->no_leader) {
    next.no_leader_since_ns =
        k->no_leader_since_ns > 0 ? k->no_leader_since_ns : now_ns;
    v->leaderless_s = nl_seconds(now_ns - next.no_leader_since_ns);
    v->no_leader = v->leaderless_s >= grace_s;
    if (v->no_leader &&
        (v->since_ns == 0 || next.no_leader_since_ns < v->since_ns))
      v->since_ns = next.no_leader_since_ns;
  }
  *k = next;
  unsigned listed = (unsigned)g->n + (g->no_leader ? 0u : 1u);
  v->size = configured > 0 && (unsigned)configured > listed
                ? (unsigned)configured
                : listed;
  v->current = current_peers + (g->no_leader ? 0u : 1u);
  v->quorum = v->size / 2 + 1;
}

/* Fills f (class cls) for the group of stream, or of its consumer (NULL
 * for the stream's own), from view v. */
static void describe(nl_class cls, const char *stream, const char *consumer,
                     const risk_view *v, nl_finding *f) {
  char what[2 * NL_NAME_MAX + 32];
  if (consumer != NULL)
    snprintf(what, sizeof(what), "consumer %s of stream %s", consumer, stream);
  else
    snprintf(what, sizeof(what), "stream %s", stream);
  nl_shell_names names;
  nl_shell_names_of(stream, consumer, &names);
  const nl_shell_names *q = &names;
  nl_finding_start(f, cls);
  /* Without a leader no replica counts as current: no quorum. */
  bool quorum = v->current >= v->quorum;
  f->severity = quorum ? NL_SEVERITY_WARNING : NL_SEVERITY_CRITICAL;
  unsigned more = quorum ? v->current - v->quorum + 1 : 0;
  nl_finding_add(f, "replicas", v->size);
  nl_finding_add(f, "current_copies", v->current);
  nl_finding_add(f, "quorum", v->quorum);
  nl_finding_add(f, "failures_to_stop", more);
  nl_finding_add(f, "replicas_behind", v->behind);
  nl_finding_add(f, "replicas_offline", v->offline);
  nl_finding_add(f, "max_lag", (double)v->max_lag);
  nl_finding_add(f, "behind_s", floor(v->behind_s));
  nl_finding_add(f, "no_leader", v->no_leader ? 1 : 0);
  nl_finding_add(f, "leaderless_s", floor(v->leaderless_s));
  f->condition_since_ns = v->since_ns;
  char behind[320] = "";
  if (v->behind > 0)
    snprintf(behind, sizeof(behind), "%u of its %u replicas behind: %s; ",
             v->behind, v->size, v->who);
  if (v->no_leader)
    snprintf(f->description, sizeof(f->description),
             "%s has had no leader for %.0f s (%u replicas; %sa quorum of %u "
             "must answer to elect one): publishes to it are refused and "
             "deliveries stop until one is elected",
             what, floor(v->leaderless_s), v->size, behind, v->quorum);
  else if (!quorum)
    snprintf(f->description, sizeof(f->description),
             "%s has %s%u current copies of %u, fewer than the quorum of "
             "%u: its leader cannot commit, so publishes are refused and "
             "deliveries stop; what only the lost copies hold is at risk",
             what, behind, v->current, v->size, v->quorum);
  else
    snprintf(f->description, sizeof(f->description),
             "%s has %s%u current copies of %u, quorum %u: acknowledged "
             "writes are on the current copies, so none is lost yet, but %u "
             "more server%s lost stop%s publishes and deliveries, and losing "
             "the current copies for good loses what the others lack",
             what, behind, v->current, v->size, v->quorum, more,
             more == 1 ? "" : "s", more == 1 ? "s" : "");
  f->fix_command[0] = '\0';
  snprintf(f->recommendation, sizeof(f->recommendation),
           "bring the server%s back with %s store: a replica catches up by "
           "itself (nats stream info %s shows each replica's state); for a "
           "server gone for good, remove it from the stream's group (nats "
           "stream cluster peer-remove %s SERVER): the server places the "
           "stream's replicas, and its consumers', on another server",
           v->behind == 1 ? "" : "s", v->behind == 1 ? "its" : "their",
           q->stream, q->stream);
}

/* Judges group g of a stream or consumer with configured replicas, for
 * class d (its state in *state): fills v and returns whether it is at
 * risk. A group outside a cluster drops the state. */
static bool at_risk(const nl_class_def *d, void **state,
                    const nl_replica_set *g, int configured,
                    const nl_detect_params *p, int64_t now_ns, risk_view *v) {
  if (!g->clustered) {
    nl_class_state_drop(d, state);
    return false;
  }
  risk_state *k = nl_class_state(d, state);
  if (k == NULL)
    return false;
  judge(k, g, configured, p->replica_grace_s, now_ns, v);
  return v->behind > 0 || v->no_leader;
}

static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  risk_view v;
  if (!at_risk(&nl_class_stream_replicas_at_risk, state, &s->group, s->replicas,
               x->p, x->now_ns, &v))
    return false;
  describe(NL_STREAM_REPLICAS_AT_RISK, s->name, NULL, &v, f);
  return true;
}

static bool detect_consumer(const nl_consumer_ctx *x, void **state,
                            nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  /* num_replicas 0: the stream's. */
  int configured = c->num_replicas > 0 ? c->num_replicas : x->s->replicas;
  risk_view v;
  if (!at_risk(&nl_class_consumer_replicas_at_risk, state, &c->group,
               configured, x->p, x->now_ns, &v))
    return false;
  describe(NL_CONSUMER_REPLICAS_AT_RISK, c->stream, c->name, &v, f);
  return true;
}

static const nl_option options[] = {
    {"ReplicaGraceSeconds", NL_OPTION_NUMBER, 86400.0, NULL, 30.0,
     offsetof(nl_detect_params, replica_grace_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_stream_replicas_at_risk = {
    .cls = NL_STREAM_REPLICAS_AT_RISK,
    .state_size = sizeof(risk_state),
    .detect_stream = detect_stream,
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
    .options = options,
};

const nl_class_def nl_class_consumer_replicas_at_risk = {
    .cls = NL_CONSUMER_REPLICAS_AT_RISK,
    .state_size = sizeof(risk_state),
    .detect = detect_consumer,
};
