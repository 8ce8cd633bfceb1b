/* nl_snapshot.h: what one poll of the JetStream API saw, as plain structs.
 *
 * A snapshot holds the fields of STREAM.LIST / CONSUMER.LIST items that the
 * detectors use. Times are nanoseconds since the Unix epoch (server clock) or
 * durations in nanoseconds; 0 means "absent". Nothing here depends on collectd
 * or on a network connection. */
#ifndef NL_SNAPSHOT_H
#define NL_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest stream or consumer name accepted from a reply. NATS itself limits
 * names to far less; anything longer is a hostile or broken reply. */
#define NL_NAME_MAX 1024

/* Longest redelivery delay (ack_wait or backoff step) the detectors work
 * with: 10^7 s, about 115 days. A reply may carry any int64 duration; longer
 * ones are treated as this so that sums and multiples of delays (up to the
 * largest MissingProgressFactor, 100) cannot overflow. */
#define NL_DURATION_MAX_NS (10000000LL * 1000000000LL)

/* Room for an upstream's error description (nl_source_link.error). */
#define NL_SOURCE_ERROR_MAX 96

typedef enum {
  NL_RETENTION_LIMITS = 0,
  NL_RETENTION_INTEREST,
  NL_RETENTION_WORKQUEUE,
} nl_retention;

typedef enum {
  NL_ACK_EXPLICIT = 0,
  NL_ACK_ALL,
  NL_ACK_NONE,
} nl_ack_policy;

/* Where a consumer starts (config.deliver_policy). */
typedef enum {
  NL_DELIVER_UNKNOWN = 0, /* Absent or not one of the below. */
  NL_DELIVER_ALL,
  NL_DELIVER_LAST,
  NL_DELIVER_NEW,
  NL_DELIVER_BY_START_SEQUENCE, /* At opt_start_seq. */
  NL_DELIVER_BY_START_TIME,     /* At opt_start_time. */
  NL_DELIVER_LAST_PER_SUBJECT,  /* The newest of each subject only. */
} nl_deliver_policy;

/* One upstream of a stream that copies messages from others: its mirror, or
 * one of its sources, as configured (config "mirror" / "sources") and as
 * the server reports it (the item's "mirror" / "sources" info). */
typedef struct {
  char *name;    /* The origin stream's name (owned). */
  bool external; /* In another JetStream domain or account (external.api). */
  /* Takes only part of the origin: a filter_subject or subject_transforms
   * (nats-server 2.10+). */
  bool filtered;
  /* Starts at a configured place (opt_start_seq or opt_start_time), not at
   * the origin's first message. */
  bool start_set;
  /* Identity of the configured upstream: its name, API prefix, filter,
   * transforms and start (opt_start_seq, opt_start_time). */
  uint64_t key;
  /* What the server reports of it (have_info false: no entry matched). */
  bool have_info;
  uint64_t lag;       /* Messages the origin had left at its last delivery. */
  int64_t active_ns;  /* Since the copy last heard from it; -1: never. */
  int64_t error_code; /* The error's err_code, 0 when it reports none. */
  /* The error's description, printable ASCII only, "" when none. */
  char error[NL_SOURCE_ERROR_MAX];
} nl_source_link;
/* Longest replica name kept (longer ones are cut): server names, or the
 * server's "Server name unknown at this time (peerID: X)". */
#define NL_REPLICA_NAME_MAX 64
/* Most replicas kept of one stream or consumer. nats-server takes at most
 * 5 replicas; a leaderless group lists all its peers, the answering one
 * included. */
#define NL_REPLICAS_MAX 8

/* One peer of a stream's or consumer's Raft group other than its leader,
 * as the item's "cluster.replicas" reports it (nats-server's PeerInfo, the
 * same fields on 2.9.10 to 2.12.0; see read_replicas in nl_parse.c). */
typedef struct {
  char name[NL_REPLICA_NAME_MAX]; /* Printable ASCII, maybe cut. */
  bool current;      /* Caught up with the leader and heard from lately. */
  bool offline;      /* Its server is known to be down. */
  int64_t active_ns; /* Since the leader last heard from it; -1: absent. */
  uint64_t lag;      /* Raft operations it is behind (0 when absent). */
} nl_replica;

/* What the item's "cluster" object says of the group's replicas. */
typedef struct {
  /* The item named a cluster: it lives in a JetStream cluster. */
  bool clustered;
  /* The cluster named no leader (a quorum lost, an election). */
  bool no_leader;
  /* The peers it lists: every one but the leader (all of them when it
   * has no leader), at most NL_REPLICAS_MAX; dropped counts the entries
   * past that or unreadable. */
  nl_replica peers[NL_REPLICAS_MAX];
  size_t n;
  size_t dropped;
} nl_replica_set;

struct nl_meta;

typedef struct {
  char *name;
  nl_retention retention;
  bool discard_new;
  int64_t max_msgs;  /* -1 or 0: unlimited */
  int64_t max_bytes; /* -1 or 0: unlimited */
  int64_t max_age_ns;
  int64_t max_msgs_per_subject; /* -1 or 0: unlimited */
  /* nats-server 2.11+: a message may carry its own TTL (header Nats-TTL)
   * and leave the stream when it runs out ("allow_msg_ttl", which
   * "subject_delete_marker_ttl" also turns on). */
  bool allow_msg_ttl;
  /* nats-server 2.12+: a message published with a Nats-Schedule header is
   * kept on its schedule subject until it fires; then the server stores a
   * new message on the schedule's target subject and purges the schedule
   * subject ("allow_msg_schedules"). */
  bool allow_msg_schedules;
  int replicas;
  uint64_t msgs;
  uint64_t bytes;
  uint64_t first_seq;
  uint64_t last_seq;
  uint64_t num_deleted;
  uint64_t consumer_count;
  /* True when every page of CONSUMER.LIST for this stream was read and no
   * consumer was reported missing or offline. */
  bool consumers_complete;
  /* The subjects the stream captures (owned), at most NL_SUBJECTS_MAX. */
  char **subjects;
  size_t n_subjects;
  /* The JetStream cluster's name when the stream lives in a cluster (the
   * item's "cluster.name", owned), NULL on a single server. */
  char *cluster;
  /* Clustered, and the reply names no leader of the stream (a quorum
   * lost, an election): its state may be a replica's that has not caught
   * up, not the stream's. */
  bool no_leader;
  /* Scope "server": another server leads the stream. It is in the set for
   * the consumers this server leads, and so that none of its consumers is
   * taken for deleted; its stream-level classes are its leader's to judge. */
  bool elsewhere;
  /* Whether discard new applies to the per-subject limit too
   * (discard_new_per_subject). */
  bool discard_new_per_subject;
  /* The subjects the stream holds messages of (state.num_subjects). */
  uint64_t num_subjects;
  /* When the stream last stored a message (state.last_ts, server clock);
   * 0 when it never did. */
  int64_t last_ts_ns;
  /* nats_lens.* and io.nats.monitor.* metadata of the stream
   * (nats-server 2.10+), or set from the plugin's StreamDeclaration
   * option; owned. */
  struct nl_meta *meta;
  size_t n_meta;
  /* Storage "memory" (config.storage); file otherwise. */
  bool memory_storage;
  /* The stream's creation time ("created"), the time of its oldest message
   * ("state.first_ts"; the newest is last_ts_ns), and the sequence a new
   * stream starts after (config "first_seq" less one, nats-server 2.10+; 0
   * otherwise). All 0 when absent. */
  int64_t created_ns;
  int64_t first_ts_ns;
  uint64_t start_seq;
  /* Where it copies messages from (owned, at most NL_LINKS_MAX): its mirror
   * (is_mirror, one link) or its sources; none for an ordinary stream. */
  nl_source_link *links;
  size_t n_links;
  bool is_mirror;
  /* Largest message the stream takes (config.max_msg_size); -1 or 0: the
   * account's or server's max payload. */
  int64_t max_msg_size;
  /* nats-server 2.10+: the longest inactive_threshold the stream allows
   * its consumers, and the one a consumer created without one gets
   * (config.consumer_limits.inactive_threshold); 0 when none. */
  int64_t consumer_inactive_limit_ns;
  /* The messages it holds of each subject (state.subjects of a
   * STREAM.INFO with subjects_filter ">"), asked for only where the poll
   * needs them (nl_subject_counts_wanted; owned): subject_counts_read
   * says whether they were read. */
  struct nl_subject_count *subject_counts;
  size_t n_subject_counts;
  bool subject_counts_read;
  /* Its Raft group's replicas ("cluster"); none on a single server. */
  nl_replica_set group;
} nl_stream_snap;

/* One subject of a stream and the messages it holds (the subject owned). */
typedef struct nl_subject_count {
  char *subject;
  uint64_t count;
} nl_subject_count;

/* Most upstream links kept from one stream item; the rest are dropped. */
#define NL_LINKS_MAX 64

/* Most stream subjects kept from one item; the rest are dropped. */
#define NL_SUBJECTS_MAX 256

/* One entry of a consumer's or a stream's metadata: a declaration (keys
 * starting with "nats_lens.", nl_expect.h) or one of natscli's thresholds
 * (keys starting with "io.nats.monitor.", nl_monitor.h); nothing else is
 * kept. Both strings owned. */
typedef struct nl_meta {
  char *key;
  char *value;
} nl_meta;

/* Most metadata entries kept per consumer or stream, and longest key or
 * value: room for every declaration and every natscli threshold key (3 and
 * 22 today) with some to spare. */
#define NL_META_MAX 32
#define NL_META_LEN_MAX 256

typedef struct {
  char *stream;
  char *name;
  size_t stream_index; /* Index of the stream in nl_poll_result.streams. */
  int64_t created_ns;
  /* Configuration. */
  nl_ack_policy ack_policy;
  int64_t ack_wait_ns;
  int64_t backoff_first_ns; /* 0 when the consumer has no backoff. */
  int64_t max_deliver;      /* -1 or 0: unlimited. */
  int64_t max_ack_pending;  /* -1 or 0: unlimited. */
  bool filtered;
  /* deliver_policy "all": it starts at the stream's first sequence. */
  bool deliver_all;
  nl_deliver_policy deliver_policy;
  uint64_t opt_start_seq; /* With NL_DELIVER_BY_START_SEQUENCE. */
  bool push;
  bool push_bound;
  bool durable;
  bool has_deliver_group;
  size_t backoff_steps;      /* Entries of config.backoff. */
  int64_t idle_heartbeat_ns; /* Push heartbeat; 0 when off. */
  bool flow_control;
  /* priority_policy "pinned_client" (nats-server 2.11+): the server
   * delivers to one client of the priority group at a time, the pinned
   * one; the pull requests of the others wait and receive nothing. */
  bool pinned_client;
  /* Any priority_policy but none (nats-server 2.11+: overflow,
   * pinned_client, prioritized): pull requests may wait by design. */
  bool has_priority_policy;
  /* nats_lens.* and io.nats.monitor.* metadata (nats-server 2.10+),
   * owned. */
  nl_meta *meta;
  size_t n_meta;
  /* State. */
  uint64_t delivered_consumer_seq;
  uint64_t delivered_stream_seq;
  uint64_t ack_floor_consumer_seq;
  uint64_t ack_floor_stream_seq;
  int64_t delivered_last_ns;
  int64_t ack_last_ns;
  uint64_t num_ack_pending;
  uint64_t num_redelivered;
  uint64_t num_waiting;
  uint64_t num_pending;
  /* nats-server 2.11+: paused until its pause_until time ("paused",
   * "pause_remaining"); the server delivers nothing meanwhile, by the
   * operator's choice, so the consumer is not stalled. */
  bool paused;
  int64_t pause_remaining_ns;
  /* Replicas asked for (config.num_replicas: 0 inherits the stream's),
   * and whether its state is kept in memory (config.mem_storage). */
  int num_replicas;
  bool mem_storage;
  /* Push consumers: the server delivers at most rate_limit_bps / 8 bytes
   * a second (config.rate_limit_bps; 0: no limit), counting each
   * delivery's subject, reply subject, headers and payload. */
  uint64_t rate_limit_bps;
  /* config.headers_only: deliveries carry the headers, not the payload. */
  bool headers_only;
  /* How long the server lets the consumer go without client activity
   * before it deletes it (config.inactive_threshold; the server stamps 5 s
   * on an ephemeral created without one); 0 when it never does. */
  int64_t inactive_threshold_ns;
  /* When the server gathered this information (the item's "ts",
   * nats-server 2.10+, server clock); 0 when absent. */
  int64_t server_ts_ns;
  /* Its one filter subject (filter_subject, or filter_subjects holding
   * exactly one), owned; NULL when it has none or several. */
  char *filter;
  /* Every filter subject (filter_subject, or each of filter_subjects,
   * nats-server 2.10+), owned, at most NL_FILTERS_MAX; none when it is not
   * filtered. filters_cut: it had more than were kept. */
  char **filters;
  size_t n_filters;
  bool filters_cut;
  /* Its Raft group's replicas ("cluster"); none on a single server. */
  nl_replica_set group;
} nl_consumer_snap;

/* Most filter subjects kept of one consumer. */
#define NL_FILTERS_MAX 32

/* A consumer by name (both owned), for the consumers a server stores a
 * copy of and does not lead. */
typedef struct {
  char *stream;
  char *name;
  bool leaderless; /* No server leads it: nobody can judge it now. */
} nl_consumer_ref;

/* One store of JetStream bytes that publishes draw on and that has a
 * limit: the account's file or memory storage (all of it, or one tier
 * "R<n>" of streams with n replicas), read from $JS.API.INFO. A publish
 * that would take it past its limit is refused (docs/detectors.md,
 * STORAGE_LIMIT_RISK). */
typedef struct {
  bool memory;       /* Memory storage, else file storage. */
  int replicas;      /* A tier's streams' replicas; 0: every stream. */
  uint64_t used;     /* Bytes in use, every replica counted. */
  uint64_t limit;    /* Its limit in bytes (> 0). */
  uint64_t reserved; /* Bytes the max_bytes of its streams reserve. */
} nl_storage_pool;

/* Most pools kept of one reply (the account's two, and its tiers'). */
#define NL_POOLS_MAX 12

/* Everything one poll saw. The set owns its snapshots and their strings. */
typedef struct {
  nl_stream_snap *streams;
  size_t n_streams;
  size_t cap_streams;
  nl_consumer_snap *consumers;
  size_t n_consumers;
  size_t cap_consumers;
  /* Consumers the server listed as missing or offline, or item entries that
   * could not be read, in this poll. */
  uint64_t unobservable;
  /* Streams STREAM.LIST reported "missing" (clustered: the stream's leader
   * did not answer), names owned: their information and consumers could
   * not be read in this poll. */
  char **missing_streams;
  size_t n_missing_streams;
  size_t cap_missing_streams;
  /* STREAM.LIST listed (or reported missing) fewer streams than its total:
   * a stream not seen in this poll may still exist. */
  bool stream_list_short;
  /* Scope "server": the consumers the polled server stores a copy of while
   * another server leads them (or none does), sorted by stream, then name
   * (strcmp). Their leader's agent judges them. */
  nl_consumer_ref *elsewhere;
  size_t n_elsewhere;
  size_t cap_elsewhere;
  /* The account's storage with a limit, from $JS.API.INFO (none when
   * it has no limit); pools_read: the reply was read in this poll. */
  nl_storage_pool pools[NL_POOLS_MAX];
  size_t n_pools;
  bool pools_read;
} nl_snapshot_set;

/* Appends a zeroed stream or consumer snapshot and returns it, or NULL when
 * memory runs out. The pointer is valid until the next append. */
nl_stream_snap *nl_snapshot_set_add_stream(nl_snapshot_set *set);
nl_consumer_snap *nl_snapshot_set_add_consumer(nl_snapshot_set *set);

/* Appends a copy of name to the set's missing streams. Returns 0, or -1
 * when memory runs out. */
int nl_snapshot_set_add_missing(nl_snapshot_set *set, const char *name);

/* Returns true when STREAM.LIST reported the stream named name missing. */
bool nl_snapshot_set_is_missing(const nl_snapshot_set *set, const char *name);

/* Appends copies of stream and name to the set's consumers led elsewhere;
 * call in the set's order (stream, then name). Returns 0, or -1 when
 * memory runs out. */
int nl_snapshot_set_add_elsewhere(nl_snapshot_set *set, const char *stream,
                                  const char *name, bool leaderless);

/* Returns the set's entry for the consumer stream/name led elsewhere, or
 * NULL when the set lists no such consumer. */
const nl_consumer_ref *nl_snapshot_set_elsewhere(const nl_snapshot_set *set,
                                                 const char *stream,
                                                 const char *name);

/* Frees everything the set owns and zeroes it. */
void nl_snapshot_set_clear(nl_snapshot_set *set);

/* Frees the strings a snapshot owns. */
void nl_stream_snap_clear(nl_stream_snap *s);
void nl_consumer_snap_clear(nl_consumer_snap *c);

/* Sets metadata key to value on c (both copied), replacing an entry with the
 * same key. Returns 0, or -1 when c already holds NL_META_MAX entries, a
 * string is longer than NL_META_LEN_MAX or memory runs out. */
int nl_consumer_snap_set_meta(nl_consumer_snap *c, const char *key,
                              const char *value);

/* Frees the n metadata entries of meta (keys and values) and the array. */
void nl_meta_free(struct nl_meta *meta, size_t n);

/* Returns the value of metadata key of c, or NULL when it is not set. */
const char *nl_consumer_snap_meta(const nl_consumer_snap *c, const char *key);

/* The same for the metadata of stream s. */
int nl_stream_snap_set_meta(nl_stream_snap *s, const char *key,
                            const char *value);
const char *nl_stream_snap_meta(const nl_stream_snap *s, const char *key);

/* Returns the effective redelivery delay of a consumer: the first backoff
 * step when it has one and it is shorter than ack_wait, else ack_wait; at
 * most NL_DURATION_MAX_NS. */
int64_t nl_consumer_redelivery_delay_ns(const nl_consumer_snap *c);

/* Whether consumer c asks for every message after its start: it acks
 * (ack policy explicit or all) and does not deliver only the newest
 * message of each subject (deliver policy last_per_subject). Ordered
 * consumers and key-value watchers ack nothing: they do not. */
bool nl_consumer_wants_every(const nl_consumer_snap *c);

/* A key of the subjects consumer c takes (its filters, in any order; the
 * same for every unfiltered consumer): equal keys read the same messages. */
uint64_t nl_consumer_filter_key(const nl_consumer_snap *c);

/* How far a consumer's reported creation time may move and still name the
 * same consumer. A restarted server reports the creation time it restored
 * from its store, which differs from the one it reported before by a
 * fraction of a millisecond (seen on 2.9.10 and 2.12.0: 0.2 to 0.4 ms, once
 * after the consumer's first restart); a consumer deleted and created
 * again with the same name is created later than that. */
#define NL_CREATED_SLACK_NS 50000000LL

/* True when creation times a and b name the same consumer (they differ by
 * at most NL_CREATED_SLACK_NS). */
bool nl_created_same(int64_t a, int64_t b);

/* Returns a key of the configuration that decides how s is retained and
 * where it copies from (its mirror or sources) and, when c is not NULL,
 * how c delivers (ack policy and timing, limits, backoff, push settings,
 * filter, metadata); created_ns is the creation time as first seen (see
 * nl_created_same) of c, or of s when c is NULL: equal keys mean nothing a
 * fix changes has changed (a stream or consumer created again is a fix).
 * Never 0 (0 means "not known" in nl_finding.config_key). */
uint64_t nl_config_key(const nl_consumer_snap *c, int64_t created_ns,
                       const nl_stream_snap *s);

/* The FNV-1a basis, and FNV-1a over n bytes of data continuing from h: the
 * one hash of the core (configuration keys, the consumer registry, the
 * stream index). */
#define NL_HASH_BASIS 14695981039346656037ULL
uint64_t nl_hash_bytes(uint64_t h, const void *data, size_t n);

/* Returns the stream's limit in messages (max_msgs, or max_bytes at the
 * average message size, whichever is smaller), or 0 when it has neither. */
double nl_stream_limit_messages(const nl_stream_snap *s);

/* A duration in nanoseconds as seconds. */
static inline double nl_seconds(int64_t ns) { return (double)ns / 1e9; }

#endif
