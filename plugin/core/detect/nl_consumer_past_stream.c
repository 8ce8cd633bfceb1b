/* nl_consumer_past_stream.c: state that points past its stream.
 *
 * CONSUMER_PAST_STREAM, a consumer whose
 * delivered position lies beyond its stream's last sequence: the stream
 * went back (its messages were lost on a server, or it was restored from
 * an older backup) while the consumer's state kept its place. The server
 * delivers only sequences above that place, so every message the stream
 * stores up to it, and every new one until the stream passes it, is never
 * delivered, with no error anywhere. The predicate is in
 * docs/detectors.md.
 *
 * The stream is polled before its consumers, so a consumer may show a
 * delivery the stream's reply did not yet count. A stream's last sequence
 * never falls while it lives, so the position the consumer had delivered
 * at the poll before is at or below the stream's last sequence at this
 * poll, unless the stream went back: the class compares the two.
 *
 * STREAM_WENT_BACK, a stream whose last sequence fell while it kept its
 * creation time: the messages between lost, whether or not a consumer
 * had read them, and its consumers' places now past it. */
#include "nl_classes.h"
#include "nl_fix.h"

#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdio.h>

/* How long a replicated stream must keep showing the same going back
 * before it is believed. After a quorum loss, a server that answers as
 * the leader can report the stream empty for a few polls while it
 * recovers (seen on 2.11.10 in test_cluster, on a busy machine: last_seq
 * 0 under consumers at 100 on consecutive polls); its replicas catch up
 * within seconds. A stream of one replica has no copy to catch up from:
 * what it shows on two polls in a row is what it holds. */
#define NL_PAST_REPLICATED_WAIT_NS (60LL * 1000000000LL)

/* The time a going back of stream s must last before it is reported:
 * two polls for a stream of one replica, NL_PAST_REPLICATED_WAIT_NS for
 * a replicated one. */
static int64_t believed_after_ns(const nl_stream_snap *s) {
  return s->replicas > 1 ? NL_PAST_REPLICATED_WAIT_NS : 0;
}

/* What the class keeps of a consumer: its delivered position at the poll
 * before, and while it is past its stream, the lowest last sequence the
 * stream showed. */
typedef struct {
  bool has_prev;
  int64_t created_ns;      /* The incarnation prev_delivered is of. */
  uint64_t prev_delivered; /* delivered.stream_seq at the poll before. */
  uint64_t low_last;       /* The stream's lowest last_seq while past. */
  unsigned polls_past;     /* Polls in a row that found it past. */
  int64_t since_ns;        /* The first poll that found it past (0: no). */
} past_state;

/* The finding for consumer x, past its stream by what k keeps. */
static void describe(const nl_consumer_ctx *x, const past_state *k,
                     nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  uint64_t ahead = c->delivered_stream_seq - s->last_seq;
  uint64_t since = s->last_seq - k->low_last;
  nl_finding_start(f, NL_CONSUMER_PAST_STREAM);
  nl_finding_add(f, "will_not_deliver", (double)ahead);
  nl_finding_add(f, "delivered_stream_seq", (double)c->delivered_stream_seq);
  nl_finding_add(f, "stream_last_seq", (double)s->last_seq);
  nl_finding_add(f, "stream_msgs", (double)s->msgs);
  nl_finding_add(f, "ack_floor_stream_seq", (double)c->ack_floor_stream_seq);
  nl_finding_add(f, "not_delivered_since_found", (double)since);
  nl_finding_add(f, "past_s", nl_seconds(x->now_ns - k->since_ns));
  snprintf(f->description, sizeof(f->description),
           "the consumer has delivered up to stream sequence %" PRIu64
           " but the stream's last sequence is %" PRIu64
           " (the stream went back: messages lost on a server, or a "
           "restore from an older backup): it delivers nothing of the "
           "%" PRIu64 " messages the stream stores, nor the next %" PRIu64
           " published, until the stream passes %" PRIu64,
           c->delivered_stream_seq, s->last_seq, s->msgs, ahead,
           c->delivered_stream_seq);
  uint64_t start = s->first_seq > 0 ? s->first_seq : 1;
  nl_fix_consumer_recreate(c, start, f->fix_command, sizeof(f->fix_command));
  snprintf(f->recommendation, sizeof(f->recommendation),
           "create the consumer again at the stream's first sequence "
           "(%" PRIu64 ", the fix command) so it delivers what the stream "
           "holds; messages it processed before the stream went back may "
           "come again, which at-least-once allows; find why the stream "
           "went back (a server's storage lost, a restore)",
           start);
}

static bool detect(const nl_consumer_ctx *x, void **state, nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  const nl_stream_snap *s = x->s;
  past_state *k = nl_class_state(&nl_class_consumer_past_stream, state);
  if (k == NULL)
    return false;
  /* A reply without a leader may be a replica's that has not caught up:
   * it proves nothing either way. */
  if (s->no_leader)
    return false;
  bool same = k->has_prev && nl_created_same(k->created_ns, c->created_ns);
  uint64_t prev = k->prev_delivered;
  k->has_prev = true;
  k->created_ns = c->created_ns;
  k->prev_delivered = c->delivered_stream_seq;
  if (!same || prev <= s->last_seq || c->delivered_stream_seq <= s->last_seq) {
    k->since_ns = 0;
    k->polls_past = 0;
    return false;
  }
  if (k->since_ns == 0 || s->last_seq < k->low_last)
    k->low_last = s->last_seq;
  if (k->since_ns == 0)
    k->since_ns = x->now_ns;
  /* Two polls in a row, and for a replicated stream a minute, so that a
   * server answering while it recovers is not taken for a loss. */
  if (++k->polls_past < 2 || x->now_ns - k->since_ns < believed_after_ns(s))
    return false;
  describe(x, k, f);
  return true;
}

const nl_class_def nl_class_consumer_past_stream = {
    .cls = NL_CONSUMER_PAST_STREAM,
    .state_size = sizeof(past_state),
    .detect = detect,
};

/* A stream hold a went-back finding this long after it was found. */
#define NL_WENT_BACK_HOLD_NS (3600LL * 1000000000LL)

/* What STREAM_WENT_BACK keeps of a stream: its last poll, and the latest
 * fall. */
typedef struct {
  bool has_prev;
  int64_t created_ns;
  uint64_t prev_last, prev_msgs;
  uint64_t fell_from, fell_to, msgs_before, msgs_after; /* The fall. */
  int64_t found_ns;                                     /* 0: no fall held. */
  int64_t fall_ns; /* A fall seen at this poll, to confirm (0: none). */
} went_back_state;

static bool detect_stream(const nl_stream_ctx *x, void **state, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  went_back_state *k = nl_class_state(&nl_class_stream_went_back, state);
  if (k == NULL)
    return false;
  if (s->no_leader) {
    /* A replica's state, maybe not caught up: a held finding holds. */
    const nl_finding *held = x->held[NL_STREAM_WENT_BACK];
    if (held == NULL)
      return false;
    *f = *held;
    return true;
  }
  bool same = k->has_prev && s->created_ns != 0 &&
              nl_created_same(k->created_ns, s->created_ns);
  if (same && k->fall_ns != 0) {
    /* Confirmed when a later poll, at least the wait after the fall
     * (the next poll for a stream of one replica), still shows it below
     * where it was, so a server that recovers is not taken for a fall;
     * dropped as soon as the stream is back where it was. */
    if (s->last_seq >= k->fell_from) {
      k->fall_ns = 0;
    } else if (x->now_ns - k->fall_ns >= believed_after_ns(s)) {
      k->found_ns = x->now_ns;
      k->fall_ns = 0;
    }
  } else if (same && s->last_seq < k->prev_last) {
    k->fell_from = k->prev_last;
    k->fell_to = s->last_seq;
    k->msgs_before = k->prev_msgs;
    k->msgs_after = s->msgs;
    k->fall_ns = x->now_ns;
  }
  if (!same) {
    k->found_ns = 0; /* Created again: a new stream. */
    k->fall_ns = 0;
  }
  k->has_prev = true;
  k->created_ns = s->created_ns;
  /* While a fall waits for its confirmation, the stream's place before it
   * stays the one to compare with. */
  if (k->fall_ns == 0) {
    k->prev_last = s->last_seq;
    k->prev_msgs = s->msgs;
  }
  if (k->found_ns == 0 || x->now_ns - k->found_ns >= NL_WENT_BACK_HOLD_NS)
    return false;
  uint64_t lost =
      k->msgs_before > k->msgs_after ? k->msgs_before - k->msgs_after : 0;
  nl_finding_start(f, NL_STREAM_WENT_BACK);
  nl_finding_add(f, "last_seq_before", (double)k->fell_from);
  nl_finding_add(f, "last_seq_after", (double)k->fell_to);
  nl_finding_add(f, "msgs_before", (double)k->msgs_before);
  nl_finding_add(f, "msgs_after", (double)k->msgs_after);
  nl_finding_add(f, "msgs_lost", (double)lost);
  nl_finding_add(f, "stream_last_seq", (double)s->last_seq);
  char name[128];
  nl_printable(s->name, false, name, sizeof(name));
  snprintf(f->description, sizeof(f->description),
           "stream %s went back: its last sequence fell from %" PRIu64
           " to %" PRIu64 " and it held %" PRIu64
           " messages instead of %" PRIu64 " (at least %" PRIu64
           " lost), while it kept its "
           "creation time: a server lost its stored messages, or it was "
           "restored from an older backup",
           name, k->fell_from, k->fell_to, k->msgs_after, k->msgs_before, lost);
  f->fix_command[0] = '\0';
  snprintf(f->recommendation, sizeof(f->recommendation),
           "no fix command: the messages are gone from the server; restore "
           "them from a backup or have the publishers send them again, and "
           "find why the storage lost them; each consumer whose place is "
           "now past the stream is reported as CONSUMER_PAST_STREAM with "
           "the command that makes it deliver again");
  return true;
}

const nl_class_def nl_class_stream_went_back = {
    .cls = NL_STREAM_WENT_BACK,
    .state_size = sizeof(went_back_state),
    .detect_stream = detect_stream,
};
