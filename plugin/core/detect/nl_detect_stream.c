/* nl_detect_stream.c: the stream-level classes (INTEREST_NO_CONSUMERS,
 * STREAM_SINGLE_REPLICA, CONSUMER_UNOBSERVABLE), from the stream list and
 * what the stream's consumers received (see nl_detect_ext.h). */
#include "nl_detect_ext.h"

/* The audit rules behind the stream-level classes. */
#define STREAM_RULES                                                           \
  ((1u << NL_AUDIT_INTEREST_NO_CONSUMERS) | (1u << NL_AUDIT_R1_ON_CLUSTER) |   \
   (1u << NL_AUDIT_UNOBSERVABLE))

void nl_ext_detect_stream(const nl_snapshot_set *set, size_t index,
                          const nl_ext_stream_prev *prev,
                          uint64_t delivered_delta, int64_t now_ns,
                          nl_finding *const held[NL_CLASS_COUNT],
                          const nl_detect_params *p, nl_audit_result *scratch,
                          const nl_audit_params *audit,
                          bool active[NL_CLASS_COUNT],
                          nl_finding out[NL_CLASS_COUNT]) {
  active[NL_INTEREST_NO_CONSUMERS] = false;
  active[NL_STREAM_SINGLE_REPLICA] = false;
  active[NL_CONSUMER_UNOBSERVABLE] = false;
  if (!p->config_classes || index >= set->n_streams)
    return;
  scratch->n = 0;
  nl_audit_stream(set, index, audit, STREAM_RULES, scratch);
  nl_ext_take_audit(scratch, held, active, out);
  const nl_stream_snap *s = &set->streams[index];
  /* Without consumers and without a publish seen dropped (below), the
   * stream must have stayed so for NL_INTEREST_EMPTY_S. */
  bool empty_long =
      prev != NULL && prev->have_prev && prev->empty_since_ns > 0 &&
      nl_seconds(now_ns - prev->empty_since_ns) >= NL_INTEREST_EMPTY_S;
  if (active[NL_INTEREST_NO_CONSUMERS] && s->consumer_count == 0 &&
      !empty_long && !nl_finding_holding(held[NL_INTEREST_NO_CONSUMERS]))
    active[NL_INTEREST_NO_CONSUMERS] = false;
  nl_finding f;
  if (active[NL_INTEREST_NO_CONSUMERS] || prev == NULL || !prev->have_prev)
    return;
  nl_stream_snap before = {.last_seq = prev->last_seq, .msgs = prev->msgs};
  /* Deliveries are counted from the consumers of both polls: with
   * consumers come or gone, or one of them without a poll before (its
   * history reset), what they received is not known. */
  if (s->consumer_count == prev->consumer_count &&
      delivered_delta != NL_DELIVERED_UNKNOWN &&
      nl_audit_interest_dropping(s, &before, delivered_delta, &f)) {
    out[NL_INTEREST_NO_CONSUMERS] = f;
  } else if (nl_finding_holding(held[NL_INTEREST_NO_CONSUMERS]) &&
             s->retention == NL_RETENTION_INTEREST &&
             s->last_seq == prev->last_seq &&
             s->consumer_count == prev->consumer_count) {
    /* Nothing published and the consumers unchanged: no new evidence
     * either way, so the finding holds. */
    out[NL_INTEREST_NO_CONSUMERS] = *held[NL_INTEREST_NO_CONSUMERS];
  } else {
    return;
  }
  out[NL_INTEREST_NO_CONSUMERS].cls = NL_INTEREST_NO_CONSUMERS;
  out[NL_INTEREST_NO_CONSUMERS].severity =
      nl_class_severity(NL_INTEREST_NO_CONSUMERS);
  active[NL_INTEREST_NO_CONSUMERS] = true;
}

void nl_ext_detect_missing_stream(const nl_snapshot_set *set, size_t index,
                                  const nl_detect_params *p,
                                  nl_audit_result *scratch,
                                  const nl_audit_params *audit,
                                  bool active[NL_CLASS_COUNT],
                                  nl_finding out[NL_CLASS_COUNT]) {
  active[NL_CONSUMER_UNOBSERVABLE] = false;
  if (!p->config_classes)
    return;
  nl_finding *const none[NL_CLASS_COUNT] = {NULL};
  scratch->n = 0;
  nl_audit_missing_stream(set, index, audit, 1u << NL_AUDIT_UNOBSERVABLE,
                          scratch);
  nl_ext_take_audit(scratch, none, active, out);
}
