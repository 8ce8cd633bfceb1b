/* nl_history.h: per-consumer history across polls.
 *
 * The registry keeps, for every consumer seen, its latest poll whole, a
 * compact form of the few polls before it, and a few running figures
 * (redeliveries, messages lost to eviction, how long the ack floor has been
 * pinned). A consumer's history is reset when it is recreated (its "created"
 * time changes) or its delivered.consumer_seq goes backwards. The registry is
 * not thread-safe: one poller owns it. */
#ifndef NL_HISTORY_H
#define NL_HISTORY_H

#include "nl_finding.h"
#include "nl_snapshot.h"

#define NL_HISTORY_LEN 6
/* NL_HISTORY_LEN as text, for messages (kept equal by a static assertion). */
#define NL_HISTORY_LEN_TEXT "6"
#define NL_EVENTS_LEN 6
_Static_assert(NL_HISTORY_LEN == 6, "NL_HISTORY_LEN_TEXT says 6");

/* One poll's view of a consumer, plus what changed since the poll before.
 * The history keeps it whole for the latest poll only. */
typedef struct {
  int64_t t_ns;
  uint64_t delivered_consumer_seq;
  uint64_t delivered_stream_seq;
  uint64_t ack_floor_stream_seq;
  int64_t ack_last_ns;
  uint64_t num_pending;
  uint32_t num_ack_pending; /* Saturates at UINT32_MAX, as do the next. */
  uint32_t num_redelivered;
  /* Lower bound on redeliveries in the interval that ended at this sample:
   * delta delivered.consumer_seq minus delta delivered.stream_seq. */
  uint32_t redeliveries;
  /* True when redeliveries in the interval were more than expiry of
   * ack_wait (or the first backoff step) could explain: more than the
   * outstanding messages can expire in the interval, or any at all when
   * every message outstanding at its start was delivered less than one
   * delay before its end (NAKs, or NAKs with a delay, then). */
  bool beyond_expiry;
  bool floor_moved;
  bool acked; /* ack_floor.last_active advanced in the interval. */
  uint64_t stream_last_seq; /* The stream's last sequence at this poll. */
  /* Sequences the stream added in the interval that ended at this sample
   * (0 without a poll before, or when the stream went back). */
  uint64_t stream_added;
  /* The stream's num_deleted at this poll, and how much it rose in the
   * interval (0 without a poll before, or when it fell: messages deleted
   * in the middle of the stream, counted until the head passes them). */
  uint64_t stream_num_deleted;
  uint64_t stream_deleted_rise;
} nl_sample;

/* What the history keeps of every poll, the latest included: the fields
 * the detectors read across several polls. */
typedef struct {
  int64_t t_ns;
  uint64_t delivered_consumer_seq;
  uint64_t num_pending;
  uint32_t num_ack_pending;
  uint32_t redeliveries; /* Saturates at NL_PAST_REDELIVERIES_MAX. */
  bool beyond_expiry;
  bool floor_moved;
  bool acked;
} nl_past_sample;

#define NL_PAST_REDELIVERIES_MAX ((1u << 29) - 1)

/* How an older poll is stored (20 bytes): its time, sequence and pending
 * counts as differences from the next newer poll, times in whole
 * milliseconds (nl_state_past gives an older poll's time truncated to the
 * millisecond). A poll whose differences do not fit ends the history
 * (nl_registry_observe). */
typedef struct {
  uint32_t back_ms;        /* Newer poll's whole ms minus this one's. */
  uint32_t delivered_back; /* Newer delivered.consumer_seq minus this. */
  int32_t pending_back;    /* Newer num_pending minus this. */
  uint32_t num_ack_pending;
  uint32_t redeliveries : 29;
  uint32_t beyond_expiry : 1;
  uint32_t floor_moved : 1;
  uint32_t acked : 1;
} nl_packed_sample;

/* Polled intervals with at least one redelivery. Consecutive intervals
 * alike (within a quarter of the redelivery delay, same flags) share one
 * slot, so a few slots span several delays even with short polls. */
typedef struct {
  int64_t t_ns;     /* Poll time of the latest interval in the slot. */
  int64_t first_ns; /* Poll time of the first. */
  uint32_t redeliveries;
  /* All deliveries in the same intervals, new and repeated (the rise of
   * delivered.consumer_seq): the share of redeliveries among them tells
   * most messages outlasting ack_wait from a few long tasks. Saturates. */
  uint32_t deliveries;
  uint16_t intervals;
  bool beyond_expiry;
  /* Acks arrived within one redelivery delay (plus the interval) before
   * this poll: the consumer was alive when these redeliveries happened. */
  bool while_acking;
} nl_redelivery_event;

/* What a consumer's losses to eviction leave to the next poll. */
typedef struct {
  uint64_t through_seq; /* Highest stream sequence counted as lost. */
  uint64_t first_seq;   /* Range of the latest loss, when known (else 0). */
  uint64_t last_seq;
} nl_loss_range;

/* What one incarnation of a consumer (its life between its creation and
 * its deletion under one name) showed at its latest poll, kept when it is
 * replaced by a new one of the same name: where it had read and
 * acknowledged up to, what it still had to deliver and to be acked, and
 * how fast it was moving (how far it may have got after that poll). */
typedef struct {
  int64_t created_ns;
  int64_t t_ns; /* That poll's time. */
  uint64_t ack_floor_stream_seq;
  uint64_t delivered_stream_seq;
  uint64_t num_pending;
  uint64_t num_ack_pending;
  uint64_t stream_last_seq;
  int64_t stream_created_ns; /* Its stream's creation time (0: unknown). */
  /* The fastest its ack floor (stream sequences a second) and its
   * deliveries (a second) moved between two polls of its life. */
  double floor_rate_max;
  double deliver_rate_max;
  uint64_t filter_key; /* nl_consumer_filter_key of its configuration. */
  bool wants_every;    /* nl_consumer_wants_every of its configuration. */
  bool floor_unproven; /* Its floor may be an older one a server restored. */
  /* For st->prior: the creation time of the incarnation that replaced
   * it, and whether a class has judged that one against it. */
  int64_t succeeded_by_ns;
  bool judged;
} nl_incarnation;

/* What the engine keeps of one class for one consumer or stream: the
 * class's private state (a zeroed allocation of its state size; freed with
 * free() after the registry's release hook), and the run of polls in which
 * its condition held while the class's raise debounce holds it back. */
typedef struct {
  void *state;
  int64_t raise_since_ns;
  uint32_t raise_polls;
} nl_class_slot;

typedef struct nl_consumer_state {
  struct nl_consumer_state *next; /* Hash chain. */
  char *stream;
  char *name;
  uint64_t hash;
  int64_t created_ns;
  int64_t first_seen_ns; /* Poll time this incarnation was first held. */
  int64_t delay_ns; /* Redelivery delay (ack_wait or first backoff) seen. */
  uint32_t seen_generation;
  uint32_t resets;   /* Times the history was reset (recreated consumer). */
  uint32_t n_events; /* Events recorded since reset (newest at
                        (n_events - 1) % NL_EVENTS_LEN). */
  uint8_t count;     /* Polls held (at most NL_HISTORY_LEN). */
  uint8_t past_head; /* Index in past of the poll before the latest. */
  /* While the floor stands: whether later messages were acked (see
   * stuck_since_ns below). */
  bool acked_since_floor;
  /* Set by nl_state_after_gap, and when the floor or the delivered counter
   * of the same consumer moves back: the floor may be one the server
   * restored from older state, and it does not count as standing until it
   * moves forward or nothing is pending. */
  bool floor_unproven;

  nl_sample latest; /* The latest poll, when count > 0. */
  /* The count - 1 polls before it, newest at past_head, going back. */
  nl_packed_sample past[NL_HISTORY_LEN - 1];
  /* Redeliveries while the floor stands with later messages acked (see
   * stuck_since_ns below). Saturates. */
  uint32_t redelivered_since_floor;
  /* NL_EVENTS_LEN slots (owned), allocated at the first redelivery: most
   * consumers never need them. */
  nl_redelivery_event *events;

  uint64_t redelivered_total;
  /* NAKs announced by MSG_NAKED advisories (nl_state_add_nak) whose
   * redeliveries no poll has seen yet, at most num_ack_pending: each
   * explains one redelivery as a NAK's, never an expiry. */
  uint32_t nak_credit;
  uint64_t lost_total;
  uint64_t lost_last; /* Lost in the latest interval. */
  /* No sequence at or below it can be lost to this consumer: the stream
   * stored none of them when a poll saw it empty while the consumer was
   * not behind, or before the consumer was first seen, or it is the
   * consumer's start that the stream never stored (0: none known). */
  uint64_t unstored_through;
  /* Allocated at the consumer's first loss (owned), or NULL. */
  nl_loss_range *loss;

  int64_t last_ack_change_ns; /* Poll time ack_last_ns last advanced. */
  int64_t floor_since_ns;     /* Poll time the ack floor took its value. */
  /* While the floor stands with later messages acked: the poll time of
   * the first such ack. */
  int64_t stuck_since_ns;
  int64_t last_stuck_end_ns; /* When the latest stuck period ended. */
  int64_t longest_pin_ns; /* Longest time the floor stood with work pending. */
  /* Poll time of the latest gap in what was seen (nl_state_after_gap), 0
   * when none: the messages the clients held then expire within one
   * redelivery delay of it, and a consumer gone after it is not judged by
   * what was seen before (a restarted server starts every inactivity
   * timer again). */
  int64_t gap_ns;

  /* Active findings by class (owned), or NULL. Until the consumer's first
   * finding this points to one read-only array of NULLs shared by all
   * consumers; nl_state_findings() gives a writable array. */
  nl_finding **active;
  /* What advisories told about it (nl_advised.h; owned, no pointers), or
   * NULL until one needs it. */
  struct nl_advised *advised;
  /* What its losses' causes excuse, and the unacked losses advisories
   * claim (nl_gap.h; owned, no pointers), or NULL until its first loss or
   * claim. */
  struct nl_gap_state *gap;
  /* The trends of its eviction forecast (nl_forecast.h; owned, no
   * pointers), or NULL while its backlog is far from every limit. */
  struct nl_forecast_watch *forecast;
  /* What each class keeps of it (detect/nl_class.h): NL_CLASS_COUNT slots
   * (owned), or NULL until a class keeps something. */
  nl_class_slot *slots;
  /* The incarnation before the latest re-creation under this name (owned),
   * or NULL when the consumer was never created again while held. */
  nl_incarnation *prior;
  /* What the incarnation's configuration and polls say for the next one
   * (nl_state_incarnation): set at each poll. */
  uint64_t filter_key;
  bool wants_every;
  int64_t stream_created_ns;
  double floor_rate_max;
  double deliver_rate_max;
  /* The delivery ledger's running counts (since the consumer was first
   * seen, across its incarnations): messages it skipped (positions a new
   * incarnation will never deliver) and messages the stream removed by
   * design (a newer message on the subject, the message's own TTL)
   * before it processed them. lost_total above counts the rest. */
  uint64_t skipped_total;
  uint64_t discarded_total;
} nl_consumer_state;

typedef struct nl_registry nl_registry;

/* Frees what the state of class cls points to, before the state itself is
 * freed (the engine passes the classes' release functions). */
typedef void (*nl_slot_release)(nl_class cls, void *state);

/* Creates an empty registry, or returns NULL when memory runs out. release
 * (may be NULL) is called for each class state before it is freed. */
nl_registry *nl_registry_create(nl_slot_release release);

/* Frees the registry and every state it holds. NULL is allowed. */
void nl_registry_free(nl_registry *reg);

/* Returns the number of consumers held. */
size_t nl_registry_size(const nl_registry *reg);

/* Records the snapshot c (of stream s) taken at poll time now_ns, creating
 * or resetting the consumer's state as needed, and marks it seen in
 * generation gen. Returns the state (owned by the registry), or NULL when
 * memory runs out or when the consumer was already recorded in generation
 * gen (listed twice in one poll: pages shifted by concurrent creates or
 * deletes). *was_reset is set when an existing history was reset.
 * unstored_through is the highest sequence a consumer first seen now cannot
 * have lost (0: none known): the last sequence of the stream at the latest
 * earlier poll that saw it hold no message (the consumer did not exist
 * then), or its own start when the stream never stored it. */
nl_consumer_state *nl_registry_observe(nl_registry *reg,
                                       const nl_consumer_snap *c,
                                       const nl_stream_snap *s, int64_t now_ns,
                                       uint32_t gen, uint64_t unstored_through,
                                       bool *was_reset);

/* The highest stream sequence that cannot be unread by st's consumer: the
 * larger of its delivered stream sequence and st->unstored_through. */
uint64_t nl_state_read_through(const nl_consumer_state *st,
                               uint64_t delivered_stream_seq);

/* Looks a consumer up; returns NULL when it is not held. */
nl_consumer_state *nl_registry_find(nl_registry *reg, const char *stream,
                                    const char *name);

/* Calls fn for each state (in no set order). fn must not add or remove. */
void nl_registry_each(nl_registry *reg,
                      void (*fn)(nl_consumer_state *st, void *ud), void *ud);

/* Removes every state not seen in generation gen for which keep() returns
 * false, calling gone() first for each (either may be NULL). */
void nl_registry_sweep(nl_registry *reg, uint32_t gen,
                       bool (*keep)(const nl_consumer_state *st, void *ud),
                       void (*gone)(nl_consumer_state *st, void *ud), void *ud);

/* Fills *out with what st's current incarnation showed at its latest
 * poll (nl_incarnation; succeeded_by_ns and judged cleared). Returns false
 * when its history is empty. */
bool nl_state_incarnation(const nl_consumer_state *st, nl_incarnation *out);

/* Returns the latest poll's sample, or NULL when the history is empty. */
const nl_sample *nl_state_latest(const nl_consumer_state *st);

/* Fills *out with what the history keeps of the k-th newest poll (0 is the
 * latest). Returns false, leaving *out alone, when the history holds fewer
 * than k + 1 polls. */
bool nl_state_past(const nl_consumer_state *st, unsigned k,
                   nl_past_sample *out);

/* Starts a new regime for st at now_ns: the redelivery rounds, the standing
 * floor and the longest pin seen so far no longer count (a new ack_wait,
 * or a gap in what was seen, such as a reconnect after a server restart,
 * whose crashed clients leave messages to expire). */
void nl_state_new_regime(nl_consumer_state *st, int64_t now_ns);

/* Starts a new regime after a gap in what was seen (the connection was lost
 * and made again). The server may have restarted, and a restarted server
 * can report an ack floor older than the state it acts on (seen on 2.9.10:
 * a work queue consumer back with ack_floor 1 after 1,600 acks, and the
 * floor held there for as long as messages stayed pending). Until the
 * floor is seen moving, or nothing is pending, a standing floor is no
 * evidence of a message left behind. */
void nl_state_after_gap(nl_consumer_state *st, int64_t now_ns);

/* Counts one NAK of st announced by an advisory: the next redelivery polled
 * is explained by it (see nak_credit). */
void nl_state_add_nak(nl_consumer_state *st);

/* Returns st's findings array (st->active) made writable, allocating it on
 * the first call for st; NULL when memory runs out (st->active is then
 * still the shared read-only array). */
nl_finding **nl_state_findings(nl_consumer_state *st);

/* Returns st's slot of class cls, or NULL when st keeps nothing for any
 * class yet. */
nl_class_slot *nl_state_slot(const nl_consumer_state *st, nl_class cls);

/* Returns st's slot of class cls, allocating st's slots at the first call;
 * NULL when memory runs out. */
nl_class_slot *nl_state_slot_make(nl_consumer_state *st, nl_class cls);

/* Frees the states of slots (NL_CLASS_COUNT of them), calling release
 * first for each (release may be NULL), and zeroes them. */
void nl_slots_clear(nl_class_slot *slots, nl_slot_release release);

/* Returns the k-th newest redelivery event, or NULL. */
const nl_redelivery_event *nl_state_event(const nl_consumer_state *st,
                                          unsigned k);

#endif
