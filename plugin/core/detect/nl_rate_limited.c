/* nl_rate_limited.c: RATE_LIMITED (see nl_rate_limited.h). */
#include "nl_rate_limited.h"

#include "nl_classes.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes a stored message's record adds to its subject, headers and
 * payload in the stream's bytes: the file store's length, sequence, time,
 * subject length and checksum (22 + 8; 4 more with headers), the memory
 * store's sequence and time (nats-server 2.9.10 to 2.12.0,
 * fileStoreMsgSize and memStoreMsgSize). */
#define FILE_RECORD_BYTES 30.0
#define MEMORY_RECORD_BYTES 16.0
/* Digits of a message's time (nanoseconds since 1970) in its reply
 * subject. */
#define TIME_DIGITS 19

static unsigned digits(uint64_t v) {
  unsigned n = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}

double nl_rate_bytes_per_delivery(const nl_consumer_snap *c,
                                  const nl_stream_snap *s) {
  if (s->msgs == 0)
    return 0;
  double avg = (double)s->bytes / (double)s->msgs;
  double record = s->memory_storage ? MEMORY_RECORD_BYTES : FILE_RECORD_BYTES;
  double body = avg > record ? avg - record : 0;
  /* "$JS.ACK.<stream>.<consumer>.<deliveries>.<stream seq>.<consumer
   * seq>.<time>.<pending>" for a first delivery of the next message. */
  double reply =
      (double)(strlen("$JS.ACK.") + strlen(c->stream) + 1 + strlen(c->name) +
               1 + 1 + 1 + digits(c->delivered_stream_seq + 1) + 1 +
               digits(c->delivered_consumer_seq + 1) + 1 + TIME_DIGITS + 1 +
               digits(c->num_pending));
  return body + reply;
}

/* The bytes a second c's limit lets through: rate_limit_bps / 8, in whole
 * bytes, as the server sets its limiter. */
static double limit_bytes(const nl_consumer_snap *c) {
  return (double)(c->rate_limit_bps / 8);
}

/* The i-th oldest checkpoint of w. */
static const nl_rate_point *point(const nl_rate_watch *w, unsigned i) {
  return &w->pts[(w->head + i) % NL_RATE_POINTS];
}

/* Whether poll c of s can be judged: a push consumer with a rate limit
 * that sends whole messages, bound, not paused, with messages waiting
 * and not held by max_ack_pending, of a stream that stores messages. */
static bool judged(const nl_consumer_snap *c, const nl_stream_snap *s) {
  return c->push && c->rate_limit_bps > 0 && !c->headers_only &&
         c->push_bound && !c->paused && c->num_pending > 0 &&
         !(c->max_ack_pending > 0 &&
           c->num_ack_pending >= (uint64_t)c->max_ack_pending) &&
         s->msgs > 0;
}

/* Adds poll c of s at now_ns to w's run, starting a new run when the poll
 * cannot be judged, the limit changed or a counter went back; keeps it as
 * a checkpoint when the newest is at least window_ns / NL_RATE_SPACING
 * old. */
static void observe(nl_rate_watch *w, const nl_consumer_snap *c,
                    const nl_stream_snap *s, int64_t window_ns,
                    int64_t now_ns) {
  const nl_rate_point *l = &w->last;
  bool back = l->poll > 0 && (c->delivered_consumer_seq < l->consumer_seq ||
                              c->delivered_stream_seq < l->stream_seq ||
                              s->last_seq < l->last_seq || now_ns <= l->t_ns);
  bool ok = judged(c, s);
  if (!ok || back || c->rate_limit_bps != w->limit_bps) {
    w->n = 0;
    w->head = 0;
    w->last.poll = 0;
    w->limit_bps = c->rate_limit_bps;
    if (!ok)
      return;
  }
  nl_rate_point p = {now_ns,
                     c->delivered_consumer_seq,
                     c->delivered_stream_seq,
                     s->last_seq,
                     c->num_pending,
                     c->num_pending + c->num_ack_pending,
                     w->last.poll + 1};
  w->last = p;
  if (w->n > 0 &&
      now_ns - point(w, w->n - 1u)->t_ns < window_ns / NL_RATE_SPACING)
    return;
  if (w->n == NL_RATE_POINTS) {
    w->head = (uint8_t)((w->head + 1) % NL_RATE_POINTS);
    w->n--;
  }
  w->pts[(w->head + w->n) % NL_RATE_POINTS] = p;
  w->n++;
}

/* What happened between two polls of a run. */
typedef struct {
  double dt_s;
  double sent;     /* Deliveries, repeated ones included. */
  double arrived;  /* Messages that arrived for the consumer. */
  double short_by; /* Arrived less sent. */
  double needed;   /* Deliveries that would have kept up: the arrivals and
                      the repeated deliveries. */
  double advanced; /* Rise of delivered.stream_seq. */
  double added;    /* Rise of the stream's last sequence. */
  double backlog_growth;
} rate_span;

/* The span from a to b (b later) of a consumer, filtered or not. An
 * unfiltered consumer's arrivals are the stream's new sequences, and it
 * falls short by the arrivals it was not sent (repeated deliveries count
 * as sent: never more short than it is); a filtered one's arrivals are
 * the rise of its pending messages and its deliveries, and it falls short
 * by the rise of its pending messages. */
static rate_span span_of(const nl_rate_point *a, const nl_rate_point *b,
                         bool filtered) {
  rate_span r;
  r.dt_s = nl_seconds(b->t_ns - a->t_ns);
  r.sent = (double)(b->consumer_seq - a->consumer_seq);
  r.advanced = (double)(b->stream_seq - a->stream_seq);
  r.added = (double)(b->last_seq - a->last_seq);
  double pend = (double)b->num_pending - (double)a->num_pending;
  r.backlog_growth = (double)b->backlog - (double)a->backlog;
  if (filtered) {
    r.arrived = pend + r.sent > 0 ? pend + r.sent : 0;
    r.short_by = pend;
    r.needed = r.arrived;
  } else {
    r.arrived = r.added;
    r.short_by = r.added - r.sent;
    r.needed = r.added + (r.sent > r.advanced ? r.sent - r.advanced : 0);
  }
  return r;
}

/* Whether the consumer fell behind over r. */
static bool behind(const rate_span *r) {
  return r->short_by >= 1 && r->short_by >= NL_RATE_BEHIND * r->arrived;
}

/* The first checkpoint of a window of at least window_ns and min_polls
 * polls: the newest that is at least that long and that many polls before
 * the latest poll (*whole set), else the oldest held. NULL when none comes
 * before the latest poll. */
static const nl_rate_point *window_start(const nl_rate_watch *w,
                                         int64_t window_ns, uint32_t min_polls,
                                         bool *whole) {
  const nl_rate_point *a = NULL;
  for (unsigned i = 0; i < w->n; i++) {
    const nl_rate_point *p = point(w, i);
    if (p->t_ns <= w->last.t_ns - window_ns &&
        p->poll + min_polls <= w->last.poll)
      a = p;
  }
  *whole = a != NULL;
  if (a == NULL && w->n > 0)
    a = point(w, 0);
  return a != NULL && a->poll < w->last.poll ? a : NULL;
}

/* The checkpoint between a and the latest poll nearest the middle of the
 * two, or NULL when none lies between them. */
static const nl_rate_point *window_middle(const nl_rate_watch *w,
                                          const nl_rate_point *a) {
  const nl_rate_point *m = NULL;
  int64_t mid = a->t_ns + (w->last.t_ns - a->t_ns) / 2;
  for (unsigned i = 0; i < w->n; i++) {
    const nl_rate_point *p = point(w, i);
    if (p->poll <= a->poll || p->poll >= w->last.poll)
      continue;
    if (m == NULL || llabs(p->t_ns - mid) < llabs(m->t_ns - mid))
      m = p;
  }
  return m;
}

/* x rounded up to two significant digits, without pow() or log10(): the
 * plugin must not need libm (hundreds of kB resident in collectd). */
static double round_up2(double x) {
  if (!(x > 0))
    return 0;
  double step = 1;
  while (x / step >= 100 && step < 1e18)
    step *= 10;
  return ceil(x / step) * step;
}

/* v rounded half up to hundredths (floor is inlined; round() is libm's). */
static double hundredths(double v) { return floor(v * 100 + 0.5) / 100; }

/* The larger of a and b (fmax() is libm's). */
static double larger(double a, double b) { return a > b ? a : b; }

/* Fills f from the span r of c's window. */
static void rate_finding(const nl_consumer_state *st, const nl_consumer_snap *c,
                         const nl_stream_snap *s, const nl_forecast *fc,
                         const rate_span *r, unsigned polls,
                         double per_delivery, nl_finding *f) {
  double limit = limit_bytes(c);
  double sent_bytes = r->sent * per_delivery / r->dt_s;
  double in_bytes = r->arrived * per_delivery / r->dt_s;
  double need_bits = 8 * r->needed * per_delivery / r->dt_s;
  double rec = round_up2(larger(2 * need_bits, 2 * (double)c->rate_limit_bps));
  double growth = r->backlog_growth / r->dt_s;
  /* The eviction forecast at the window's rates, or RETENTION_RISK's
   * trusted one when sooner. The oldest unreceived message of an
   * unfiltered consumer ages by the share of the arrivals it was not
   * sent. */
  double age_growth =
      !c->filtered && r->added > 0 ? larger(0, 1 - r->advanced / r->added) : 0;
  nl_limit_kind kind;
  double eta = nl_forecast_eta(fc, s, growth, age_growth, &kind);
  if (fc->seconds < eta) {
    eta = fc->seconds;
    kind = fc->limit;
  }
  nl_finding_start(f, NL_RATE_LIMITED);
  nl_finding_add(f, "rate_limit_bps", (double)c->rate_limit_bps);
  nl_finding_add(f, "delivered_bytes_per_s", floor(sent_bytes));
  nl_finding_add(f, "incoming_bytes_per_s", floor(in_bytes));
  nl_finding_add(f, "recommended_rate_limit_bps", rec);
  nl_finding_add(f, "backlog", (double)c->num_pending);
  nl_finding_add(f, "backlog_growth_per_s", hundredths(growth));
  if (isfinite(eta))
    nl_finding_add(f, "eviction_forecast_s", floor(eta));
  nl_finding_add(f, "window_s", floor(r->dt_s));
  nl_finding_add(f, "window_polls", polls);
  nl_finding_add(f, "delivered_per_s", hundredths(r->sent / r->dt_s));
  nl_finding_add(f, "incoming_per_s", hundredths(r->arrived / r->dt_s));
  nl_finding_add(f, "bytes_per_delivery", floor(per_delivery + 0.5));
  if (s->max_msg_size > 0)
    nl_finding_add(f, "max_msg_size", (double)s->max_msg_size);
  char evict[160] = "";
  if (isfinite(eta) && kind != NL_LIMIT_NONE)
    snprintf(evict, sizeof(evict),
             "; at these rates the stream's %s evicts messages it has not "
             "received in about %.0f s",
             nl_limit_name(kind), eta);
  snprintf(f->description, sizeof(f->description),
           "push consumer held by its rate limit of %" PRIu64
           " bit/s (%.0f B/s): sent %.0f B/s (%.1f msg/s) while %.1f msg/s "
           "(about %.0f B/s) arrived for it over %.0f s; its backlog of "
           "%" PRIu64 " grows by %.1f/s%s",
           c->rate_limit_bps, limit, sent_bytes, r->sent / r->dt_s,
           r->arrived / r->dt_s, in_bytes, r->dt_s, c->num_pending, growth,
           evict);
  nl_shell_names q;
  nl_shell_names_of(st->stream, st->name, &q);
  if (c->durable)
    snprintf(f->recommendation, sizeof(f->recommendation),
             "set rate_limit_bps to %.0f, twice the %.0f bit/s it must "
             "sustain (0 removes the limit); nats consumer edit has no flag "
             "for it (--bps is for nats consumer add only): put the output "
             "of nats consumer info %s %s --json, with config.rate_limit_bps "
             "%.0f, in FILE and apply it with nats consumer edit %s %s "
             "--config FILE, an update through the API that keeps the "
             "consumer's state",
             rec, need_bits, q.stream, q.consumer, rec, q.stream, q.consumer);
  else
    snprintf(f->recommendation, sizeof(f->recommendation),
             "set rate_limit_bps to %.0f, twice the %.0f bit/s it must "
             "sustain (0 removes the limit): the client that creates this "
             "ephemeral consumer must ask for it (the nats CLI edits durable "
             "consumers only)",
             rec, need_bits);
}

/* RATE_LIMITED for consumer x->c (see nl_rate_limited.h): keeps the
 * consumer's rate watch while it has a rate limit and, when the rule of
 * docs/detectors.md holds (raised over a whole window and each of its
 * halves; once raised, present while the latest measurable part of the
 * window shows it), fills f. */
static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_state *st = x->st;
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  const nl_detect_params *p = x->p;
  const nl_forecast *fc = x->forecast;
  int64_t now_ns = x->now_ns;
  if (!c->push || c->rate_limit_bps == 0) {
    nl_class_state_drop(&nl_class_rate_limited, state);
    return false;
  }
  nl_rate_watch *w = nl_class_state(&nl_class_rate_limited, state);
  if (w == NULL)
    return false;
  int64_t window_ns = (int64_t)(p->rate_limited_s * 1e9);
  observe(w, c, s, window_ns, now_ns);
  if (w->last.poll == 0)
    return false;
  /* Raised over a whole window; once held (its clearing hold included),
   * present while the latest half window, or what the run holds of it,
   * shows it. */
  bool held = st->active[NL_RATE_LIMITED] != NULL;
  bool whole;
  const nl_rate_point *a =
      held ? window_start(w, window_ns / 2, 1, &whole)
           : window_start(w, window_ns, NL_RATE_MIN_POLLS, &whole);
  if (a == NULL)
    return false;
  double per_delivery = nl_rate_bytes_per_delivery(c, s);
  double limit = limit_bytes(c);
  rate_span r = span_of(a, &w->last, c->filtered);
  bool at_limit = r.dt_s > 0 && per_delivery > 0 &&
                  r.sent * per_delivery / r.dt_s >= NL_RATE_AT_LIMIT * limit;
  if (!at_limit)
    return false;
  unsigned polls = w->last.poll - a->poll;
  if (held) {
    if (!behind(&r))
      return false;
  } else {
    /* A whole window, behind over each of its halves. */
    const nl_rate_point *m = whole ? window_middle(w, a) : NULL;
    if (m == NULL)
      return false;
    rate_span h1 = span_of(a, m, c->filtered);
    rate_span h2 = span_of(m, &w->last, c->filtered);
    if (!behind(&h1) || !behind(&h2))
      return false;
  }
  rate_finding(st, c, s, fc, &r, polls, per_delivery, f);
  return true;
}

static const nl_option options[] = {
    {"RateLimitedSeconds", NL_OPTION_NUMBER, 86400, NULL, 180.0,
     offsetof(nl_detect_params, rate_limited_s)},
    NL_OPTION_END,
};

const nl_class_def nl_class_rate_limited = {
    .cls = NL_RATE_LIMITED,
    .state_size = sizeof(nl_rate_watch),
    .detect = detect,
    .options = options,
};
