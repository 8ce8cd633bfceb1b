/* nl_instance.h: what the collectd glue's files share: an instance (one
 * <Instance> block, or one account of a SystemAccount instance), the
 * context of a read, and the functions each file offers the others.
 *
 * nats_lens.c registers instances and runs their reads and threads (its
 * opening comment is the thread model), nl_config.c reads an <Instance>
 * block into one, nl_instance.c makes and frees them, nl_apply.c turns one
 * poll's snapshots into values, notifications and health events, and
 * nl_accounts.c runs the SystemAccount and Scope "server" polls with an
 * account instance per account. */
#ifndef NL_INSTANCE_H
#define NL_INSTANCE_H

#include "collectd.h"

#include "plugin.h"
#include "utils/common/common.h"
#include "utils_complain.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/model/nl_expect.h"
#include "core/model/nl_jsz.h"
#include "core/model/nl_select.h"
#include "core/nl_engine.h"
#include "core/report/nl_health.h"
#include "core/report/nl_onset_rate.h"
#include "http/nl_http.h"
#include "jsapi/nl_advisory_thread.h"
#include "jsapi/nl_poll.h"
#include "jsapi/nl_poll_log.h"
#include "jsapi/nl_transport.h"
#include "nl_poller.h"

#define PLUGIN_NAME "nats_lens"
#define LOG_PREFIX PLUGIN_NAME " plugin: "
/* ConsumerValuesLimit's default: 1,000 consumers' values (18 value lists
 * each) take collectd's cache about 30 MB. */
#define NL_DEFAULT_VALUES_LIMIT 1000
/* A poll that received at least this much hands its memory back to the
 * system afterwards (malloc_trim). */
#define NL_TRIM_BYTES (4 * 1024 * 1024)
/* Longest server name kept for notifications (Scope "server"). */
#define NL_SERVER_NAME_MAX 128

/* A consumer a CREATED advisory announced (names owned). */
struct created_entry {
  char *stream;
  char *consumer;
};

/* CREATED advisories waiting to be read, and read per call of
 * nl_refresh_pending (about once a second, and after each batch). */
#define NL_CREATED_PENDING_MAX 1024
#define NL_CREATED_PER_CALL 32

typedef struct nl_instance nl_instance;

struct nl_instance {
  char *name;
  char **urls;
  size_t n_urls;
  nl_stream_select select; /* Stream and ExcludeStream. */
  double timeout_s;
  cdtime_t interval;
  char *user;
  char *password;
  char *token;
  char *credentials;
  char *nkey_seed;
  char *tls_ca;
  char *tls_cert;
  char *tls_key;
  char *inbox_prefix;
  nl_detect_params params;
  /* Per-consumer values: all of them, only the class gauges of consumers
   * with an active finding, or none (large deployments: collectd keeps
   * about 1.7 kB per value list in its cache, 18 per consumer). */
  enum { VALUES_ALL, VALUES_FINDINGS, VALUES_NONE } consumer_values;
  /* ConsumerValuesLimit: above this many consumers in a poll, "all" sends
   * what "findings" sends (0: no limit); values_limited while it does. */
  unsigned consumer_values_limit;
  atomic_bool values_limited; /* Written by the poll, read by all. */
  /* HealthEvents, HealthSubjectPrefix, SummaryInterval and their state. */
  nl_health health;
  char *listen_host; /* Listen "host" "port"; NULL when not configured. */
  char *listen_port;
  /* ListenTLSCert, ListenTLSKey, ListenClientCA (paths, or NULL) and the
   * users of ListenUser (NULL when none). The listener borrows
   * listen_users, which is freed after it stops. */
  char *listen_tls_cert;
  char *listen_tls_key;
  char *listen_client_ca;
  nl_auth *listen_users;

  nl_transport *transport;
  nl_engine *engine;
  nl_http *http; /* The REST API and dashboard, or NULL. */
  /* The poll thread (started by nl_init, after collectd's fork), which the
   * read callback kicks; NULL before nl_init or when it failed. */
  nl_poller *poller;
  c_complain_t overrun_complaint;
  /* Advisories (option Advisories, default true): the advisory path, and
   * the lock that serialises it with the poll around the engine
   * (taken before nl_http_lock). */
  bool advisories;
  /* Option ApiAudit (default false): the advisories include the server's
   * API audits, of which only consumer deletes are kept (CONSUMER_EXPIRED
   * is never raised for a consumer deleted by an API request). */
  bool api_audit;
  nl_advisory_thread *adv;
  pthread_mutex_t engine_lock;
  /* Consumers that CREATED advisories announced, waiting for the advisory
   * thread to read them (refresh_created): one entry per consumer, at most
   * NL_CREATED_PENDING_MAX, the rest left to the next poll and counted. */
  pthread_mutex_t created_lock;
  struct created_entry *created;
  size_t n_created;
  uint64_t created_dropped;
  /* Serialises what goes out of the plugin: notifications, health events
   * and the complaint about publishing them. */
  pthread_mutex_t send_lock;
  /* Findings started in the last hour (guarded by engine_lock, under which
   * every transition is reported). */
  nl_onset_rate onsets;
  c_complain_t publish_complaint;
  c_complain_t poll_complaint;
  /* The account's JetStream usage ($JS.API.INFO; poll thread only): after
   * it could not be read, it is asked again from account_info_retry
   * (cdtime), and the complaint says so once. */
  cdtime_t account_info_retry;
  c_complain_t account_info_complaint;
  c_complain_t connect_complaint;
  bool poll_failing; /* A FAILURE notification for the poll is out. */
  bool polled_once;  /* The first good poll has been logged. */
  /* The transport's disconnect count at the latest good poll: a change is
   * a gap in what the polls saw (nl_engine_gap). */
  uint64_t disconnects_seen;
  uint64_t api_requests;
  uint64_t api_errors;
  /* PollLog: the file every poll reply is appended to (an evaluation aid),
   * or NULL; written by the poll thread alone. */
  char *poll_log_path;
  nl_poll_log *poll_log;
  /* SystemAccount: the credentials are the system account's, and each
   * poll reads every account through one JSZ request (jsapi/nl_jsz_poll).
   * Each account selected (Account, ExcludeAccount) is judged by an
   * account instance of its own, made when the account is first seen and
   * kept for the daemon's life: its engine, health state and subject
   * prefix, onsets and complaints; it borrows the transport. Only the poll
   * thread adds to the list; the HTTP layer has its own copy. */
  bool system_account;
  /* Scope "server" (with SystemAccount): each poll reads the connected
   * server alone ($SYS.REQ.SERVER.<id>.JSZ) and judges what it leads; the
   * same for an account instance of such an instance. first_poll_ns is
   * the time of the instance's (or account instance's) first poll: a
   * consumer first judged later, and created before it was, was taken
   * over from another server's agent. */
  bool server_scope;
  int64_t first_poll_ns;
  /* What log_scope_change last logged (poll thread only). */
  bool scope_logged;
  size_t scope_judged;
  char scope_server[NL_SERVER_NAME_MAX];
  /* The server polled last (summaries name it: nl_health.server). */
  char server_name[NL_SERVER_NAME_MAX];
  nl_stream_select account_select;
  nl_instance **accounts;
  size_t n_accounts;
  /* AccountAdvisories: the accounts whose advisories come on a connection
   * of their own (made at configuration, handed to the account's instance
   * when the account is first seen). */
  struct account_connection *adv_accounts;
  size_t n_adv_accounts;
  /* For an account instance: its parent, its account's name and id, and
   * whether transport is its own (AccountAdvisories) or its parent's. */
  nl_instance *parent;
  char *account;
  char *account_id;
  bool owns_transport;
  /* StreamDeclaration: declarations applied to the streams they name as
   * their nats_lens.* metadata at each poll (owned by the instance; an
   * account instance uses its parent's). */
  nl_expect_spec *stream_decls;
  size_t n_stream_decls;
};

/* An AccountAdvisories entry: the account's name and a connection with
 * that account's credentials (owned until handed over). */
struct account_connection {
  char *account;
  char *credentials; /* A credentials file, or NULL. */
  char *user;        /* Or a user and password, or NULL. */
  char *password;
  nl_transport *transport;
};

/* A transition the engine reported, kept until the engine's locks are
 * released: notifications and health events go out with no lock but
 * send_lock held. */
typedef struct {
  char *stream;
  char *consumer;
  nl_finding finding;
  bool active;
  const char *reason; /* A string constant, or NULL. */
  bool takeover;      /* An onset of a consumer taken over (taken_over). */
} held_transition;

typedef struct {
  held_transition *items;
  size_t n;
  size_t cap;
} transition_list;

/* Context of one read, handed to the engine's sink. */
typedef struct {
  nl_instance *inst;
  cdtime_t time;
  /* Per-consumer values are only the class gauges of consumers with a
   * finding: ConsumerValues "findings", or "all" over ConsumerValuesLimit. */
  bool findings_only;
  /* Where the sink keeps transitions for send_transitions. */
  transition_list *held;
  /* Scope "server": the name of the server polled, or "". */
  char server[NL_SERVER_NAME_MAX];
} read_ctx;

/* Applies one poll's snapshots (set, taken at rc's time) to inst, an
 * instance or an account instance: the StreamDeclaration options to its
 * streams, then through the engine (values and
 * transitions), then the REST API's documents, the notifications and
 * health events of the transitions, and the summary when one is due.
 * Returns how many consumers the engine kept unlisted (unobservable this
 * poll), and sets *onsets (findings started in the last hour) and
 * *contradicted (advisory claims the polls refuted). */
size_t nl_apply_poll(nl_instance *inst, read_ctx *rc, nl_snapshot_set *set,
                     uint64_t *onsets, uint64_t *contradicted);

/* Feeds advisories into the engine, on the advisory thread or from the
 * poll's drain: under the engine lock, with the findings they
 * prove sent once the lock is released; created consumers are only
 * queued (note_created). */
void nl_feed_advisories(void *ud, const nl_advisory *a, size_t n);

/* Whether inst sends only the class gauges of consumers with a finding, as
 * its latest poll decided. */
bool nl_findings_only(const nl_instance *inst);

/* Counts a poll's requests and reports its outcome (status and stats from
 * nl_poll_run or nl_jsz_poll_run): a failed poll is logged (once while
 * failures repeat), notified and counted, and -1 returned; a poll that
 * read only part of what exists is logged the same way, and one that read
 * everything releases the complaint. */
int nl_poll_outcome(nl_instance *inst, read_ctx *rc, int status,
                    nl_poll_stats *stats);

/* Reports a poll failure once when it starts and NOTIF_OKAY once it ends. */
void nl_poll_state(const read_ctx *rc, bool failing, const char *why);

/* The connection the polls, health events and summaries of inst go on:
 * its parent's for an account instance (which may have one of its own for
 * its advisories, AccountAdvisories). */
nl_transport *nl_poll_transport(const nl_instance *inst);

/* The context of a read (or advisory batch) of inst starting now. */
read_ctx nl_read_start(nl_instance *inst);

/* The advisory thread's idle work: reads up to NL_CREATED_PER_CALL of the
 * queued created consumers, oldest first, with no lock held during the
 * requests. */
void nl_refresh_pending(void *ud);

/* Builds the plugin_instance "<instance>-<stream>", or
 * "<instance>-<account>-<stream>" for an account instance. */
void nl_stream_plugin_instance(const nl_instance *inst, const char *stream,
                               char *out, size_t len);

/* Dispatches the advisory counts: received, dropped (queue full), rejected
 * (unreadable) and contradicted (claims the polls refuted, counted by the
 * engine); and the created consumers waiting to be read and those left to
 * the next poll (their queue full). */
void nl_submit_advisory_counts(const read_ctx *rc, uint64_t contradicted);

/* Reports a poll that saw nothing: every consumer held is unobservable this
 * poll (neither healthy nor violating; its history and findings are kept as
 * they were). */
void nl_submit_failed_poll(const read_ctx *rc, bool connected);

/* Dispatches one GAUGE value of rc's instance at rc's time. */
void nl_submit_gauge(const read_ctx *rc, const char *pi, const char *type,
                     const char *ti, double v);

/* Submits the instance's own values; onsets is the number of findings
 * started in the last hour. */
void nl_submit_instance(const read_ctx *rc, double duration, size_t consumers,
                        size_t unobservable, size_t streams, bool connected,
                        uint64_t onsets);

/* Decides whether ConsumerValuesLimit limits "all" to what "findings"
 * sends from a poll of n_consumers on (inst->values_limited), and logs when
 * that starts or stops. */
void nl_update_values_limit(nl_instance *inst, size_t n_consumers);

/* One poll of a SystemAccount instance: one JSZ request for every account
 * (with Scope "server", for what the connected server leads), each
 * account's view applied to its account instance; an account no
 * longer listed by a complete poll has its consumers dropped (an empty
 * view), one missing from a short poll keeps them, unobservable. */
void nl_poll_system(nl_instance *inst, read_ctx *rc);

/* Returns a zeroed instance with its locks and complaints initialised, or
 * NULL when memory runs out: the start of an account instance, which takes
 * its options from its parent (nl_accounts.c). */
nl_instance *nl_instance_new(void);

/* Returns an instance as nl_instance_new does, with the defaults of an
 * <Instance> block's options set (detector thresholds, Advisories,
 * HealthEvents, Timeout, ConsumerValuesLimit), or NULL when memory runs
 * out: the start of an instance the configuration fills. */
nl_instance *nl_instance_new_defaults(void);

/* Frees an instance or account instance (collectd's free function of the
 * read callback): closes its connection, stops its threads, then frees
 * its account instances, listener, engine and options. */
void nl_instance_free(void *arg);

#endif
