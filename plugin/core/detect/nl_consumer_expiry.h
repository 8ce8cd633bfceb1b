/* nl_consumer_expiry.h: a consumer the server removes for inactivity while it
 * is still needed.
 *
 * A consumer with an inactive_threshold is deleted by the server once it
 * has gone that long without client activity. CONSUMER_EXPIRING (warning,
 * per consumer) is raised while a long-lived consumer with work waiting
 * shows no client for a growing share of its threshold; CONSUMER_EXPIRED
 * (critical, per stream: the consumer no longer exists) when such a
 * consumer disappears the way the inactivity timer removes one, with
 * messages unread or unacknowledged. The predicates, why they are right
 * and what each nats-server version does are in docs/detectors.md. Pure
 * functions of their inputs and of the classes' states; the engine
 * serialises. The definitions are nl_class_consumer_expiring and
 * nl_class_consumer_expired (nl_classes.h). */
#ifndef NL_CONSUMER_EXPIRY_H
#define NL_CONSUMER_EXPIRY_H

#include "core/model/nl_advisory.h"
#include "core/model/nl_finding.h"
#include "core/model/nl_history.h"
#include "core/model/nl_snapshot.h"

/* CONSUMER_EXPIRING: raised once the idle time reaches this share of the
 * threshold. */
#define NL_EXPIRY_WARN_SHARE 0.5
/* The recommended threshold: this many times the longest of the threshold,
 * the idle gaps seen and the current one. */
#define NL_EXPIRY_FACTOR 3
/* Clock skew, rounding and the server's timer firing late: a deletion
 * this much before the threshold still counts as on time, and a consumer
 * still listed this much after it is alive for a reason the polls cannot
 * see. */
#define NL_EXPIRY_SLACK_NS 1000000000LL
/* The server adds up to 1 s of jitter to a pull consumer's threshold. */
#define NL_EXPIRY_JITTER_NS 1000000000LL
/* A CONSUMER_EXPIRED entry whose consumer nobody created again for this
 * long is taken for retired and cleared. */
#define NL_EXPIRED_HOLD_NS (3600LL * 1000000000LL)
/* Expired consumers remembered per stream (the oldest makes room). */
#define NL_EXPIRED_MAX 8
/* Longest filter subject kept for the fix command that creates the
 * consumer again (longer: no command). */
#define NL_EXPIRY_FILTER_MAX 256

/* What CONSUMER_EXPIRING keeps of one consumer with an inactive_threshold
 * (its class state, one allocation without pointers). Times marked
 * "server" are on the server's clock: the poll's "ts" (nats-server
 * 2.10+), else the plugin's poll time. */
typedef struct nl_expiry_watch {
  int64_t threshold_ns; /* config.inactive_threshold. */
  int64_t delay_ns;     /* Redelivery delay. */
  int64_t created_ns;
  int64_t first_server_ns; /* The first poll that saw it (server). */
  /* The latest client activity the polls saw (server): creation, the
   * last delivery and ack, a poll that found a pull request waiting or a
   * push subscriber bound. The server's own clock starts no earlier. */
  int64_t visible_ns;
  /* Pull: the latest poll at which a client could have been at work
   * unseen: nothing to deliver (a poll of a client gets nothing, and
   * moves no field), a pull request waiting, or paused (server). */
  int64_t quiet_ns;
  /* Push: the first poll of the current run without a subscriber
   * (server), 0 while bound. */
  int64_t unbound_since_ns;
  /* Since when the polls show no client (server): visible_ns, quiet_ns
   * or unbound_since_ns, and a held message's redelivery delay after its
   * delivery, whichever is latest. The server removes the consumer no
   * sooner than threshold after its last activity, which is no later than
   * this (see docs/detectors.md). */
  int64_t idle_start_ns;
  int64_t idle_ns;        /* The latest poll's time since idle_start_ns. */
  int64_t longest_gap_ns; /* The longest idle run that ended and was
                             survived. */
  int64_t last_poll_ns;   /* The latest poll that listed it (plugin). */
  int64_t last_server_ns; /* ... on the server's clock. */
  int64_t interval_ns;    /* Between its two latest polls (server). */
  /* From advisories, as claims: the server's time of a DELETED advisory,
   * and whether the server audited an API request that deleted it. */
  int64_t deleted_adv_ns;
  bool api_deleted;
  bool takeable; /* Pull work a client would receive at the latest poll. */
  /* The latest poll showed its clients absent (see nl_expiry_observe). */
  bool absent_shown;
  /* It outlived its threshold by the polls' clock: clients are active in
   * ways the polls cannot see (in-progress acks during long tasks, pull
   * requests that get nothing); no warning until its threshold changes. */
  bool unseen;
  bool durable;
  bool push;
  bool paused;
  bool ack_none;
  nl_ack_policy ack_policy;
  int64_t ack_wait_ns;
  int64_t max_deliver;
  int64_t max_ack_pending;
  int64_t stream_limit_ns; /* The stream's consumer_limits threshold. */
  uint64_t num_pending;
  uint64_t num_ack_pending;
  uint64_t ack_floor_stream_seq;
  nl_retention retention;
  uint64_t stream_msgs;
  uint64_t stream_last_seq;
  uint64_t stream_consumers;
  bool filter_kept; /* filter holds the consumer's one filter, or none. */
  char filter[NL_EXPIRY_FILTER_MAX];
} nl_expiry_watch;

/* One consumer the server removed for inactivity, kept with its stream. */
typedef struct {
  char *name;              /* Owned. */
  int64_t absent_since_ns; /* No consumer of the name listed since. */
  int64_t recommended_ns;  /* The threshold that clears it. */
  int64_t recreated_ns;    /* Threshold of a consumer of the name listed
                              again below recommended_ns, 0 none. */
  nl_finding f;            /* What is reported while it is the latest. */
} nl_expired;

/* What CONSUMER_EXPIRED keeps of a stream: its consumers the server
 * removed for inactivity (its class state; the names are owned). */
typedef struct {
  nl_expired items[NL_EXPIRED_MAX]; /* Oldest first. */
  size_t n;
  uint64_t fixes; /* Entries cleared by a consumer created again safely. */
} nl_expired_list;

#endif
