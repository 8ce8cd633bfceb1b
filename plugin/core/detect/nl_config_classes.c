/* nl_config_classes.c: the classes raised from the configuration alone,
 * through one audit rule each (nl_configured): ACK_NONE_CONSUMER,
 * ACK_ALL_PARALLEL and CONSUMER_SINGLE_REPLICA per consumer;
 * STREAM_SINGLE_REPLICA and CONSUMER_UNOBSERVABLE per stream. The rules,
 * with their predicates and fixes, are in docs/check.md; what each class
 * adds to its rule is in docs/detectors.md. */
#include "nl_classes.h"

static bool ack_none(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  return nl_configured_raise(x->configured, NL_AUDIT_ACK_NONE,
                             NL_ACK_NONE_CONSUMER, f);
}

const nl_class_def nl_class_ack_none_consumer = {
    .cls = NL_ACK_NONE_CONSUMER,
    .configured = ack_none,
    .audit_rules = 1u << NL_AUDIT_ACK_NONE,
};

/* ACK_ALL_PARALLEL starts only with parallel workers seen (its rule's
 * parallel_seen), and holds while the rule matches at all, in the same
 * history: a consumer created again (or whose history a restart reset)
 * must show parallel workers again. */
static bool ack_all_parallel(const nl_consumer_ctx *x, void **state,
                             nl_finding *f) {
  const nl_finding *a =
      nl_configured_find(x->configured, NL_AUDIT_ACK_ALL_PARALLEL);
  bool holding = x->st->count > 1 &&
                 nl_finding_holding(x->st->active[NL_ACK_ALL_PARALLEL]);
  if (a == NULL || (!holding && nl_finding_get(a, "parallel_seen", 0) == 0))
    return false;
  nl_configured_take(a, NL_ACK_ALL_PARALLEL, f);
  return true;
}

const nl_class_def nl_class_ack_all_parallel = {
    .cls = NL_ACK_ALL_PARALLEL,
    .configured = ack_all_parallel,
    .audit_rules = 1u << NL_AUDIT_ACK_ALL_PARALLEL,
};

static bool consumer_single_replica(const nl_consumer_ctx *x, void **state,
                                    nl_finding *f) {
  return nl_configured_raise(x->configured, NL_AUDIT_CONSUMER_SINGLE_REPLICA,
                             NL_CONSUMER_SINGLE_REPLICA, f);
}

const nl_class_def nl_class_consumer_single_replica = {
    .cls = NL_CONSUMER_SINGLE_REPLICA,
    .configured = consumer_single_replica,
    .audit_rules = 1u << NL_AUDIT_CONSUMER_SINGLE_REPLICA,
};

static bool stream_single_replica(const nl_stream_ctx *x, void **state,
                                  nl_finding *f) {
  return nl_configured_raise(x->configured, NL_AUDIT_R1_ON_CLUSTER,
                             NL_STREAM_SINGLE_REPLICA, f);
}

const nl_class_def nl_class_stream_single_replica = {
    .cls = NL_STREAM_SINGLE_REPLICA,
    .detect_stream = stream_single_replica,
    .audit_rules = 1u << NL_AUDIT_R1_ON_CLUSTER,
};

/* CONSUMER_UNOBSERVABLE: a stream whose consumers the polls cannot see,
 * listed (its consumer list incomplete) or reported missing. */
static bool unobservable(const nl_stream_ctx *x, void **state, nl_finding *f) {
  return nl_configured_raise(x->configured, NL_AUDIT_UNOBSERVABLE,
                             NL_CONSUMER_UNOBSERVABLE, f);
}

const nl_class_def nl_class_consumer_unobservable = {
    .cls = NL_CONSUMER_UNOBSERVABLE,
    .detect_stream = unobservable,
    .missing = unobservable,
    .audit_rules = 1u << NL_AUDIT_UNOBSERVABLE,
    /* A leader election after a server is lost hides an R3 stream for one
     * poll at most, and a consumer list of a clustered server waits 4 s
     * for consumer leaders that do not answer: not worth a warning unless
     * it lasts two polls and 10 s. */
    .raise_polls = 2,
    .raise_s = 10.0,
};
