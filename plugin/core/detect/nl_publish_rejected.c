/* nl_publish_rejected.c: PUBLISH_REJECTED (see nl_publish_rejected.h). */
#include "nl_publish_rejected.h"

#include "nl_classes.h"

#include "core/model/nl_expect.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

nl_full_limit nl_stream_full(const nl_stream_snap *s) {
  if (!s->discard_new)
    return NL_FULL_NONE;
  /* The server refuses a message when the stream holds max_msgs already
   * (server/memstore.go and filestore.go, storeRawMsg). */
  if (s->max_msgs > 0 && s->msgs >= (uint64_t)s->max_msgs)
    return NL_FULL_MSGS;
  /* And when the bytes held plus the new message's stored size reach
   * max_bytes (nats-server 2.9 counts the payload alone). The next
   * message's size is unknown: one of the average stored size is the
   * measure. */
  if (s->max_bytes > 0 && s->msgs > 0) {
    uint64_t max = (uint64_t)s->max_bytes;
    uint64_t avg = s->bytes / s->msgs;
    if (s->bytes >= max || max - s->bytes <= avg)
      return NL_FULL_BYTES;
  }
  /* Per subject: a subject holds at most max_msgs_per_subject, so at
   * least messages - subjects x (max - 1) subjects hold that many; every
   * subject does when messages reach subjects x max. */
  int64_t per = s->max_msgs_per_subject;
  if (s->discard_new_per_subject && per > 1 && s->num_subjects > 0 &&
      (double)s->msgs >= (double)s->num_subjects * (double)per)
    return NL_FULL_SUBJECTS;
  return NL_FULL_NONE;
}

nl_full_prev nl_full_next(const nl_full_prev *prev, const nl_stream_snap *s,
                          int64_t now_ns) {
  nl_full_prev next = {true, s->last_seq, nl_stream_full(s), 0};
  if (next.limit != NL_FULL_NONE)
    next.full_since_ns = prev != NULL && prev->have_prev &&
                                 prev->limit != NL_FULL_NONE &&
                                 prev->full_since_ns > 0
                             ? prev->full_since_ns
                             : now_ns;
  return next;
}

/* The earliest time s is known to have been at its limit: the first poll
 * of the run, or for a count or size limit the stream's last store when
 * that is earlier (nothing was stored since, so nothing since made room
 * and took it again). */
static int64_t full_since(const nl_stream_snap *s, nl_full_limit limit,
                          const nl_full_prev *prev, int64_t now_ns) {
  nl_full_prev run = nl_full_next(prev, s, now_ns);
  int64_t since = run.full_since_ns;
  if (limit != NL_FULL_SUBJECTS && s->last_ts_ns > 0 && s->last_ts_ns < since)
    since = s->last_ts_ns;
  return since;
}

/* The server's error text for a publish refused at limit. */
static const char *refusal_text(nl_full_limit limit) {
  return limit == NL_FULL_MSGS    ? "maximum messages exceeded"
         : limit == NL_FULL_BYTES ? "maximum bytes exceeded"
                                  : "maximum messages per subject exceeded";
}

/* Writes f's description: which limit, and what the publisher sees. */
static void describe(const nl_stream_snap *s, nl_full_limit limit,
                     const nl_stream_expectations *e, nl_finding *f) {
  char what[192];
  if (limit == NL_FULL_MSGS)
    snprintf(what, sizeof(what),
             "at its max_msgs (%" PRIu64 " of %" PRId64 " messages)", s->msgs,
             s->max_msgs);
  else if (limit == NL_FULL_BYTES)
    snprintf(what, sizeof(what),
             "at its max_bytes (%" PRIu64 " of %" PRId64
             " bytes, a message of the average %" PRIu64 " bytes no "
             "longer fits)",
             s->bytes, s->max_bytes, s->bytes / s->msgs);
  else
    snprintf(what, sizeof(what),
             "per subject: each of its %" PRIu64 " subjects holds its "
             "max_msgs_per_subject (%" PRId64 ")",
             s->num_subjects, s->max_msgs_per_subject);
  int n = snprintf(
      f->description, sizeof(f->description),
      "stream with discard new %s: the server refuses %s with \"%s\" "
      "(error 10077), and only the publisher sees it; no counter or "
      "advisory of the server records a refused publish, so a publisher "
      "that does not check its acknowledgements loses the message",
      what,
      limit == NL_FULL_SUBJECTS ? "a publish to any of them (a subject new "
                                  "to the stream is still taken)"
                                : "each new publish",
      refusal_text(limit));
  if (limit == NL_FULL_MSGS && s->max_msgs_per_subject > 0 &&
      !s->discard_new_per_subject && n > 0 &&
      (size_t)n < sizeof(f->description))
    n += snprintf(f->description + n, sizeof(f->description) - (size_t)n,
                  "; a publish to a subject at its max_msgs_per_subject "
                  "replaces that subject's oldest message instead");
  if (e->bad_key != NULL && n > 0 && (size_t)n < sizeof(f->description))
    snprintf(f->description + n, sizeof(f->description) - (size_t)n,
             "; the declaration " NL_EXPECT_PREFIX "%s=\"%.40s\" cannot be "
             "read (%s)",
             e->bad_key, e->bad_value, e->bad_reason);
}

/* Writes f's fix command (the limit raised to twice its value) and the
 * recommendation (discard old, or a declaration when full by design). */
static void fix(const nl_stream_snap *s, nl_full_limit limit, nl_finding *f) {
  nl_shell_names q;
  nl_shell_names_of(s->name, NULL, &q);
  const char *flag = limit == NL_FULL_MSGS    ? "--max-msgs"
                     : limit == NL_FULL_BYTES ? "--max-bytes"
                                              : "--max-msgs-per-subject";
  const char *field = limit == NL_FULL_MSGS    ? "max_msgs"
                      : limit == NL_FULL_BYTES ? "max_bytes"
                                               : "max_msgs_per_subject";
  int64_t now = limit == NL_FULL_MSGS    ? s->max_msgs
                : limit == NL_FULL_BYTES ? s->max_bytes
                                         : s->max_msgs_per_subject;
  int64_t rec = now <= INT64_MAX / 2 ? 2 * now : INT64_MAX;
  nl_finding_add(f, "recommended_limit", (double)rec);
  snprintf(f->fix_command, sizeof(f->fix_command),
           "nats stream edit %s %s %" PRId64, q.stream, flag, rec);
  snprintf(f->recommendation, sizeof(f->recommendation),
           "%s %" PRId64 " (twice the limit), if the stream must hold more; "
           "or nats stream edit %s --discard old%s where losing the oldest "
           "messages is acceptable; if refusing publishes is the design, "
           "declare it: stream metadata " NL_EXPECT_PREFIX "full_ok=true "
           "(nats-server 2.10+), or the plugin's StreamDeclaration option",
           field, rec, q.stream,
           limit == NL_FULL_SUBJECTS ? " --no-discard-per-subject" : "");
}

bool nl_detect_publish_rejected(const nl_stream_snap *s,
                                const nl_full_prev *prev, int64_t now_ns,
                                nl_finding *f) {
  nl_full_limit limit = nl_stream_full(s);
  if (limit == NL_FULL_NONE)
    return false;
  nl_stream_expectations e;
  nl_expect_stream_read(s, &e);
  if (e.full_ok)
    return false;
  bool seen = prev != NULL && prev->have_prev;
  if (limit == NL_FULL_BYTES &&
      (!seen || prev->limit == NL_FULL_NONE || prev->last_seq != s->last_seq))
    return false;
  nl_finding_start(f, NL_PUBLISH_REJECTED);
  int64_t since = full_since(s, limit, prev, now_ns);
  f->condition_since_ns = since;
  if (limit == NL_FULL_BYTES) {
    nl_finding_add(f, "bytes", (double)s->bytes);
    nl_finding_add(f, "max_bytes", (double)s->max_bytes);
    nl_finding_add(f, "bytes_free",
                   s->bytes < (uint64_t)s->max_bytes
                       ? (double)((uint64_t)s->max_bytes - s->bytes)
                       : 0);
    nl_finding_add(f, "avg_msg_bytes", (double)(s->bytes / s->msgs));
  } else {
    nl_finding_add(f, "messages", (double)s->msgs);
    if (limit == NL_FULL_MSGS)
      nl_finding_add(f, "max_msgs", (double)s->max_msgs);
  }
  if (limit == NL_FULL_SUBJECTS || s->max_msgs_per_subject > 0) {
    nl_finding_add(f, "subjects", (double)s->num_subjects);
    nl_finding_add(f, "max_msgs_per_subject", (double)s->max_msgs_per_subject);
  }
  nl_finding_add(f, "full_s", since < now_ns ? nl_seconds(now_ns - since) : 0);
  if (seen)
    nl_finding_add(f, "taken_last_interval",
                   s->last_seq > prev->last_seq
                       ? (double)(s->last_seq - prev->last_seq)
                       : 0);
  describe(s, limit, &e, f);
  fix(s, limit, f);
  return true;
}

/* PUBLISH_REJECTED of a listed stream, against its previous poll (the
 * class's state, brought to this poll). */
static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  nl_full_prev *prev = nl_class_state(&nl_class_publish_rejected, state);
  nl_full_prev before = prev != NULL ? *prev : (nl_full_prev){0};
  bool on = nl_detect_publish_rejected(x->s, &before, x->now_ns, f);
  if (prev != NULL)
    *prev = nl_full_next(&before, x->s, x->now_ns);
  return on;
}

const nl_class_def nl_class_publish_rejected = {
    .cls = NL_PUBLISH_REJECTED,
    .state_size = sizeof(nl_full_prev),
    .detect_stream = detect_stream,
    .forget = NL_FORGET_ELSEWHERE | NL_FORGET_GONE | NL_FORGET_RECREATED,
};
