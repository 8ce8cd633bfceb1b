/* nl_interest_no_consumers.c: INTEREST_NO_CONSUMERS, an interest stream
 * that drops what is published to it because no consumer is interested:
 * without any consumer for NL_INTEREST_EMPTY_S (the audit's rule), or
 * with consumers that received nothing of what was published over an
 * interval. The predicate is in docs/detectors.md. */
#include "nl_classes.h"

/* An interest stream without any consumer and without a publish seen
 * dropped is judged only once it has been so for this long: a stream is
 * often created a moment before its consumers. */
#define NL_INTEREST_EMPTY_S 60.0

/* What the class keeps of a stream from its previous poll. */
typedef struct {
  bool have_prev;
  uint64_t last_seq;
  uint64_t msgs;
  uint64_t consumer_count;
  /* Poll time since which the stream has had no consumer, 0 while it has
   * one. */
  int64_t empty_since_ns;
} interest_prev;

/* The finding of this poll against the previous one (prev, may be NULL). */
static bool judge(const nl_stream_ctx *x, const interest_prev *prev,
                  nl_finding *f) {
  if (!x->configured->on)
    return false;
  const nl_finding *held = x->held[NL_INTEREST_NO_CONSUMERS];
  const nl_stream_snap *s = x->s;
  const nl_finding *a =
      nl_configured_find(x->configured, NL_AUDIT_INTEREST_NO_CONSUMERS);
  /* Without consumers and without a publish seen dropped (below), the
   * stream must have stayed so for NL_INTEREST_EMPTY_S. */
  bool empty_long =
      prev != NULL && prev->have_prev && prev->empty_since_ns > 0 &&
      nl_seconds(x->now_ns - prev->empty_since_ns) >= NL_INTEREST_EMPTY_S;
  /* A held finding holds itself only over a stream seen at the poll
   * before: one created again (its state forgotten) is a new stream, whose
   * old finding clears at once and which gets its own wait. */
  bool holding = prev != NULL && prev->have_prev && nl_finding_holding(held);
  if (a != NULL && (s->consumer_count != 0 || empty_long || holding)) {
    nl_configured_take(a, NL_INTEREST_NO_CONSUMERS, f);
    return true;
  }
  if (prev == NULL || !prev->have_prev)
    return false;
  nl_stream_snap before = {.last_seq = prev->last_seq, .msgs = prev->msgs};
  /* Deliveries are counted from the consumers of both polls: with
   * consumers come or gone, or one of them without a poll before (its
   * history reset), what they received is not known. */
  if (s->consumer_count == prev->consumer_count &&
      x->delivered_delta != NL_DELIVERED_UNKNOWN &&
      nl_audit_interest_dropping(s, &before, x->delivered_delta, f)) {
    /* The drop seen over this interval. */
  } else if (nl_finding_holding(held) &&
             s->retention == NL_RETENTION_INTEREST &&
             s->last_seq == prev->last_seq &&
             s->consumer_count == prev->consumer_count) {
    /* Nothing published and the consumers unchanged: no new evidence
     * either way, so the finding holds. */
    *f = *held;
  } else {
    return false;
  }
  f->cls = NL_INTEREST_NO_CONSUMERS;
  f->severity = nl_class_severity(NL_INTEREST_NO_CONSUMERS);
  return true;
}

static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  interest_prev *prev = nl_class_state(&nl_class_interest_no_consumers, state);
  bool on = judge(x, prev, f);
  if (prev != NULL) {
    const nl_stream_snap *s = x->s;
    int64_t empty_since = 0;
    if (s->consumer_count == 0)
      empty_since = prev->have_prev && prev->empty_since_ns > 0
                        ? prev->empty_since_ns
                        : x->now_ns;
    *prev = (interest_prev){true, s->last_seq, s->msgs, s->consumer_count,
                            empty_since};
  }
  return on;
}

const nl_class_def nl_class_interest_no_consumers = {
    .cls = NL_INTEREST_NO_CONSUMERS,
    .state_size = sizeof(interest_prev),
    .detect_stream = detect_stream,
    .audit_rules = 1u << NL_AUDIT_INTEREST_NO_CONSUMERS,
    /* Without consumers, what it still stores is that finding's too. */
    .suppresses = NL_CLASS_BIT(NL_MESSAGES_STRANDED),
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
};
