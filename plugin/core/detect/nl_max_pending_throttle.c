/* nl_max_pending_throttle.c: MAX_PENDING_THROTTLE, a consumer at its
 * max_ack_pending with messages waiting, to which the server delivers
 * nothing new. The predicate is in docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdio.h>

/* MAX_PENDING_THROTTLE: ack-pending at the cap with messages waiting. A
 * paused consumer (nats-server 2.11+) delivers nothing by choice: not a
 * throttle while the pause lasts. */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  if (c->paused || c->ack_policy == NL_ACK_NONE || c->max_ack_pending <= 0 ||
      c->num_ack_pending < (uint64_t)c->max_ack_pending || c->num_pending == 0)
    return false;
  uint64_t rec = 2 * (uint64_t)c->max_ack_pending;
  nl_finding_start(f, NL_MAX_PENDING_THROTTLE);
  nl_finding_add(f, "num_ack_pending", (double)c->num_ack_pending);
  nl_finding_add(f, "max_ack_pending", (double)c->max_ack_pending);
  nl_finding_add(f, "num_pending", (double)c->num_pending);
  nl_finding_add(f, "num_waiting", (double)c->num_waiting);
  nl_finding_add(f, "recommended_max_ack_pending", (double)rec);
  /* At the cap with messages waiting, the server delivers nothing new: the
   * consumer has been held there at least since its last delivery. */
  f->condition_since_ns = c->delivered_last_ns;
  snprintf(f->description, sizeof(f->description),
           "%" PRIu64 " messages await ack, the max_ack_pending limit of "
           "%" PRId64 ", while %" PRIu64 " more are waiting: the server has "
           "stopped delivering to this consumer",
           c->num_ack_pending, c->max_ack_pending, c->num_pending);
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats consumer edit %s %s --max-pending %" PRIu64, q.stream,
           q.consumer, rec);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "max_ack_pending %" PRIu64 " (double the limit reached); if the "
           "workers hold messages without acking, fix the acks first: a "
           "higher limit only delays the stall",
           rec);
  return true;
}

const nl_class_def nl_class_max_pending_throttle = {
    .cls = NL_MAX_PENDING_THROTTLE,
    .detect = detect,
};
