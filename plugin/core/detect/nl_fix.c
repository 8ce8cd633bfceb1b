/* nl_fix.c: the text of fix commands (see nl_fix.h). */
#include "nl_fix.h"

#include "core/model/nl_expect.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

void nl_fix_nak(const char *stream, const char *consumer, double max_deliver,
                char *buf, size_t len) {
  nl_shell_names q;
  nl_shell_names_of(stream, consumer, &q);
  snprintf(buf, len, "nats consumer edit %s %s --max-deliver %.0f", q.stream,
           q.consumer, max_deliver);
}

void nl_fix_ack_wait(const nl_consumer_snap *c, double ack_wait_s, char *buf,
                     size_t len) {
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  /* With a backoff the server replaces ack_wait by the first step, so
   * --wait alone would change nothing: the same number of steps (max_deliver
   * stays valid), starting at the recommended delay. */
  if (c->backoff_steps > 0)
    snprintf(buf, len,
             "nats consumer edit %s %s --backoff linear --backoff-steps %zu "
             "--backoff-min %.0fs --backoff-max %.0fs",
             q.stream, q.consumer, c->backoff_steps, ack_wait_s,
             ack_wait_s * (double)c->backoff_steps);
  else
    snprintf(buf, len, "nats consumer edit %s %s --wait %.0fs", q.stream,
             q.consumer, ack_wait_s);
}

double nl_fix_declared_ack_wait_s(const nl_consumer_snap *c) {
  nl_expectations e;
  nl_expect_read(c, &e);
  return ceil(1.5 * nl_seconds(e.max_processing_ns));
}

void nl_fix_removal(const nl_consumer_snap *c, const nl_stream_snap *s,
                    nl_removal_cause cause, uint64_t lost_total,
                    nl_finding *f) {
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  if (cause == NL_REMOVED_BY_MAX_MSGS) {
    uint64_t rec = (uint64_t)s->max_msgs + lost_total + c->num_pending;
    if (rec < 2 * (uint64_t)s->max_msgs)
      rec = 2 * (uint64_t)s->max_msgs;
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-msgs %" PRIu64, q.stream, rec);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_msgs %" PRIu64 ": the current limit %" PRId64
             " plus the consumer's backlog and the messages lost, at least "
             "double; or scale the consumer so it keeps up",
             rec, s->max_msgs);
  } else if (cause == NL_REMOVED_BY_MAX_BYTES) {
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-bytes %" PRId64, q.stream,
             2 * s->max_bytes);
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_bytes %" PRId64 " (double the limit that evicted unread "
             "messages); or scale the consumer so it keeps up",
             2 * s->max_bytes);
  } else if (cause == NL_REMOVED_BY_MAX_AGE) {
    snprintf(f->fix_command, sizeof(f->fix_command),
             "nats stream edit %s --max-age %.0fs", q.stream,
             2 * nl_seconds(s->max_age_ns));
    snprintf(f->recommendation, sizeof(f->recommendation),
             "max_age %.0f s (double the age limit that evicted unread "
             "messages); or scale the consumer so it keeps up",
             2 * nl_seconds(s->max_age_ns));
  } else if (cause != NL_REMOVED_OTHERWISE) {
    /* A TTL or a newer message on the subject: the publisher's design. */
    f->fix_command[0] = '\0';
    snprintf(f->recommendation, sizeof(f->recommendation),
             "no fix command: %s removed the messages, as the publisher "
             "designed; no stream limit was reached",
             nl_removal_cause_name(cause));
  } else {
    /* No limit removed them: raising one would change nothing. */
    f->fix_command[0] = '\0';
    snprintf(f->recommendation, sizeof(f->recommendation),
             "no fix command: no stream limit was reached, so %s removed "
             "the messages, which no setting prevents; find who purges or "
             "deletes messages of stream %s (nats stream info %s), or let "
             "the consumer keep up",
             nl_removal_cause_name(cause), q.stream, q.stream);
  }
}

void nl_fix_limit(const nl_consumer_snap *c, const nl_stream_snap *s,
                  uint64_t lost_total, nl_finding *f) {
  uint64_t newest = s->first_seq > 0 ? s->first_seq - 1 : 0;
  nl_fix_removal(c, s, nl_removal_cause_of(s, NULL, newest, 0), lost_total, f);
}

void nl_fix_dead_letter(const nl_consumer_snap *c, char *buf, size_t len) {
  char subject[2 * NL_NAME_MAX + 64], sw[NL_FIX_MAX], dlq[2 * NL_NAME_MAX + 32];
  char dlq_word[2 * NL_SHELL_NAME_MAX + 64];
  snprintf(dlq, sizeof(dlq), "%s_%s_DLQ", c->stream, c->name);
  nl_shell_word(dlq, dlq_word, sizeof(dlq_word));
  snprintf(subject, sizeof(subject),
           "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s", c->stream,
           c->name);
  nl_shell_word(subject, sw, sizeof(sw));
  snprintf(buf, len,
           "nats stream add %s --subjects %s --storage file --defaults",
           dlq_word, sw);
}

bool nl_fix_consumer_add(const nl_fix_consumer *k, uint64_t start,
                         bool remove_first, char *buf, size_t len) {
  if (len > 0)
    buf[0] = '\0';
  if (!nl_cli_name_usable(k->name))
    return false;
  nl_shell_names q;
  nl_shell_names_of(k->stream, k->name, &q);
  char deliver[32] = "all";
  if (start > 0)
    snprintf(deliver, sizeof(deliver), "%" PRIu64, start);
  char filter[NL_SHELL_NAME_MAX + 16] = "";
  if (k->filter != NULL && k->filter[0] != '\0') {
    char word[NL_SHELL_NAME_MAX];
    snprintf(filter, sizeof(filter), " --filter %s",
             nl_shell_word(k->filter, word, sizeof(word)));
  }
  char more[96] = "";
  size_t n = 0;
  if (k->max_deliver > 0)
    n += (size_t)snprintf(more + n, sizeof(more) - n, " --max-deliver %" PRId64,
                          k->max_deliver);
  if (k->max_ack_pending > 0 && n < sizeof(more))
    n += (size_t)snprintf(more + n, sizeof(more) - n, " --max-pending %" PRId64,
                          k->max_ack_pending);
  if (k->inactive_threshold_ns > 0 && n < sizeof(more))
    snprintf(more + n, sizeof(more) - n, " --inactive-threshold %.0fs",
             ceil(nl_seconds(k->inactive_threshold_ns)));
  char rm[2 * NL_SHELL_NAME_MAX + 40] = "";
  if (remove_first)
    snprintf(rm, sizeof(rm), "nats consumer rm %s %s -f && ", q.stream,
             q.consumer);
  snprintf(buf, len,
           "%snats consumer add %s %s --pull --ack %s --deliver %s --wait "
           "%.0fs%s%s --defaults",
           rm, q.stream, q.consumer,
           k->ack_policy == NL_ACK_ALL ? "all" : "explicit", deliver,
           ceil(nl_seconds(k->ack_wait_ns)), more, filter);
  return true;
}

bool nl_fix_consumer_recreate(const nl_consumer_snap *c, uint64_t start,
                              char *buf, size_t len) {
  buf[0] = '\0';
  if (c->push || c->n_filters > 1 || c->filters_cut)
    return false;
  nl_fix_consumer add = {c->stream,
                         c->name,
                         c->ack_policy,
                         c->ack_wait_ns,
                         c->max_deliver,
                         c->max_ack_pending,
                         c->inactive_threshold_ns,
                         c->n_filters == 1 ? c->filters[0] : ""};
  return nl_fix_consumer_add(&add, start, true, buf, len);
}
