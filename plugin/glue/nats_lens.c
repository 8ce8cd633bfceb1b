/* nats_lens.c: the collectd glue of the nats_lens plugin.
 *
 * One nl_instance per <Instance> block, each registered as a complex read
 * callback. A read starts a poll on the instance's poll thread, which polls
 * JetStream (nl_poll over nl_transport), passes the snapshots through the
 * engine (history and detectors), and dispatches values and state-change
 * notifications. All logic lives in the nl_* core;
 * this file only translates between it and collectd.
 *
 * Threads and locks, per instance.
 *
 * Threads (all but collectd's own are started by nl_init, after collectd
 * forked into the background: a thread started while the configuration is
 * read would not survive the fork):
 * - collectd's reader: nl_read, never two at once for one instance. It
 *   only kicks the poll thread (a mutex held for a flag change) and
 *   returns: it never waits on the network or on another thread's I/O.
 * - the poll thread (nl_poller): poll_run, one poll at a time, each request
 *   bounded by Timeout and the poll by one interval; a kick during a poll
 *   is kept as one and counted (polls_overrun).
 * - the advisory thread (jsapi/nl_advisory_thread): feeds advisories into
 *   the engine (nl_feed_advisories, no network) and then, with no lock held,
 *   reads the consumers CREATED advisories announced (nl_refresh_pending).
 * - cnats threads: deliver advisories into the advisory queue (its own
 *   mutex), reconnect, and call the transport's callbacks.
 * - the libmicrohttpd thread (http/nl_http): answers the REST API from the
 *   documents nl_http_update publishes after each poll; only a history
 *   document not yet kept is rendered from the registry, under
 *   nl_http_lock, waiting at most 0.5 s.
 * - collectd's configuration and shutdown: config_instance (the block read
 *   by nl_config.c) and nl_instance_free (nl_instance.c), when no other
 *   thread of the instance runs (shutdown closes the connection, then stops
 *   the poll, advisory and HTTP threads).
 *
 * Locks, in the order they may be taken (never the other way round):
 * 1. feed_lock (nl_advisory_thread.c): orders feeding between the advisory
 *    thread and the poll's drain; held only while advisories are fed.
 * 2. engine_lock: the engine (registry, findings, stream totals) and
 *    onsets. Held for an apply, an advisory batch, a created consumer's
 *    intake, and the counts; never across a network request.
 * 3. nl_http_lock: the HTTP layer's view of the registry; taken inside
 *    engine_lock around what changes the registry.
 * 4. created_lock: the queue of created consumers (created, n_created,
 *    created_dropped); a leaf.
 * 4. send_lock: what goes out of the plugin (notifications, health events
 *    and their nl_health state, publish_complaint); a leaf. Transitions
 *    are kept while the engine reports them (sink_transition) and sent by
 *    send_transitions, which takes send_lock before it releases
 *    engine_lock and then sends with send_lock alone held: a notification
 *    never holds up the engine, and a health summary (sent under both
 *    locks, since it reads the engine) never goes out before the events of
 *    the changes it counts. A transition that could not be kept (out of
 *    memory) is sent at once, under engine_lock.
 *
 * nl_poller's own mutex guards its flags only (a leaf, never held for a
 * poll).
 *
 * SystemAccount: the poll thread applies each account's view to that
 * account's instance (account_instance: its own engine_lock, send_lock,
 * engine and health state; polls, events and summaries on the parent's
 * connection). An account of AccountAdvisories also has its own
 * connection and advisory thread, started by the poll thread when the
 * account is first seen (after collectd's fork), which takes that
 * account's locks in the order above. The parent's nl_http_lock is taken
 * inside an account's engine_lock, as for a single instance, and never
 * with another account's engine_lock held. The list of account instances
 * is written by the poll thread alone and read at shutdown, after the
 * poll thread stopped; an account instance (and its advisory thread) is
 * freed before the parent's listener.
 *
 * Scope "server" adds no thread or lock: the poll thread alone writes
 * server_name and the scope_* fields; an account instance's nl_health
 * points to server_name, read under send_lock by the same poll thread.
 *
 * A <Coverage> block (nl_central.c) has its own write and read callbacks
 * and one lock of its own, a leaf, described there.
 *
 * Not locked: values_limited is atomic (written by the poll, read by the
 * advisory thread); the transport's connection is set once by the poll
 * before any subscription exists, and cnats is thread-safe; api_requests,
 * api_errors, poll_failing and the poll and connect complaints belong to
 * the poll thread alone, the overrun complaint to the reader alone. */
#include "nl_instance.h"

#include <malloc.h>

#include "core/model/nl_names.h"
#include "http/nl_http.h"
#include "jsapi/nl_advisory_thread.h"
#include "jsapi/nl_poll.h"
#include "jsapi/nl_poll_log.h"
#include "jsapi/nl_transport.h"
#include "nl_central.h"
#include "nl_config.h"
#include "nl_poller.h"

/* After a poll that asked for the account's JetStream usage: when it could
 * not be read (a user without permission for $JS.API.INFO, a server that
 * did not answer), says so once and asks again in ten minutes, so that a
 * request that is refused does not cost every poll its timeout; when read,
 * releases the complaint. */
static void account_info_outcome(nl_instance *inst, cdtime_t now,
                                 const nl_poll_config *pc,
                                 const nl_poll_stats *stats) {
  if (!pc->account_info)
    return;
  if (stats->account_error[0] == '\0') {
    c_release(LOG_INFO, &inst->account_info_complaint,
              LOG_PREFIX "Instance \"%s\": the account's JetStream usage is "
                         "read again.",
              inst->name);
    return;
  }
  char why[sizeof(stats->account_error)];
  nl_printable(stats->account_error, false, why, sizeof(why));
  c_complain(LOG_WARNING, &inst->account_info_complaint,
             LOG_PREFIX "Instance \"%s\": cannot read the account's "
                        "JetStream usage (%s); STORAGE_LIMIT_RISK and "
                        "STORAGE_LIMIT_REACHED are not judged until it can "
                        "be read (asked again every 10 minutes; the user "
                        "needs publish permission on $JS.API.INFO).",
             inst->name, why);
  inst->account_info_retry = now + TIME_T_TO_CDTIME_T(600);
}

/* One poll of an instance, on its poll thread (nl_poller), with the plugin
 * context of the read that asked for it: connects if needed, polls, applies
 * the snapshots, and dispatches values and notifications. A failed poll is
 * reported (log line, POLL_FAILED notification, values). */
static void poll_run(void *ud) {
  nl_instance *inst = ud;
  read_ctx rc = nl_read_start(inst);
  char err[512];
  if (nl_transport_connect(inst->transport, err, sizeof(err)) != 0) {
    c_complain(LOG_ERR, &inst->connect_complaint,
               LOG_PREFIX "Instance \"%s\": cannot reach NATS: %s.", inst->name,
               err);
    inst->api_errors++;
    nl_poll_state(&rc, true, "not connected");
    nl_submit_failed_poll(&rc, false);
    nl_http_poll_failed(inst->http, err, (int64_t)CDTIME_T_TO_NS(rc.time));
    return;
  }
  if (c_would_release(&inst->connect_complaint))
    c_release(LOG_INFO, &inst->connect_complaint,
              LOG_PREFIX "Instance \"%s\": connected to NATS.", inst->name);
  if (inst->adv != NULL &&
      nl_advisory_thread_subscribe(inst->adv, inst->transport, inst->api_audit,
                                   err, sizeof(err)) != 0)
    WARNING(LOG_PREFIX "Instance \"%s\": cannot subscribe to the JetStream "
                       "advisories (%s); findings come from polling only.",
            inst->name, err);

  if (inst->system_account) {
    nl_poll_system(inst, &rc);
    return;
  }
  nl_poll_config pc = {
      .select = inst->select,
      .budget_ns = (int64_t)CDTIME_T_TO_NS(plugin_get_interval()),
      .account_info = rc.time >= inst->account_info_retry,
  };
  nl_snapshot_set set = {0};
  nl_poll_stats stats;
  nl_request_fn request = nl_transport_request;
  void *request_ctx = inst->transport;
  if (inst->poll_log != NULL) {
    nl_poll_log_begin(inst->poll_log, (int64_t)CDTIME_T_TO_NS(rc.time),
                      nl_transport_request, inst->transport);
    request = nl_poll_log_request;
    request_ctx = inst->poll_log;
  }
  int status = nl_poll_run(&pc, request, request_ctx, &set, &stats);
  char why[128];
  if (nl_poll_log_take_stopped(inst->poll_log, why, sizeof(why)))
    WARNING(LOG_PREFIX "Instance \"%s\": the poll log \"%s\" is no longer "
                       "written: %s.",
            inst->name, inst->poll_log_path, why);
  account_info_outcome(inst, rc.time, &pc, &stats);
  if (nl_poll_outcome(inst, &rc, status, &stats) != 0) {
    nl_snapshot_set_clear(&set);
    return;
  }
  if (!inst->polled_once) {
    /* One line per instance, so that a healthy start shows in the log. */
    INFO(LOG_PREFIX "Instance \"%s\": first poll done: %zu stream(s) and "
                    "%zu consumer(s) watched.",
         inst->name, set.n_streams, set.n_consumers);
    inst->polled_once = true;
  }

  nl_update_values_limit(inst, set.n_consumers);
  rc.findings_only = nl_findings_only(inst);
  /* Advisories that arrived before this poll go in first (the advisory
   * thread feeds them too; whichever comes first). Feeding makes no
   * network request, so this waits at most for a batch being fed. */
  nl_advisory_thread_drain(inst->adv);
  uint64_t onsets = 0, contradicted = 0;
  size_t kept = nl_apply_poll(inst, &rc, &set, &onsets, &contradicted);
  nl_submit_advisory_counts(&rc, contradicted);
  nl_submit_instance(&rc, CDTIME_T_TO_DOUBLE(cdtime() - rc.time),
                     set.n_consumers, set.unobservable + kept, set.n_streams,
                     true, onsets);
  nl_snapshot_set_clear(&set);
  /* A large poll's replies and snapshots are freed now; hand their pages
   * back so that collectd's resident memory holds only the per-consumer
   * history. A small poll leaves little to hand back: trimming each read
   * would only cost the daemon's other threads. */
  if (stats.bytes_received >= NL_TRIM_BYTES)
    malloc_trim(0);
}

/* The read callback: kicks the instance's poll thread and returns at once,
 * never waiting on the network or on another thread's I/O. A read that
 * finds the previous poll still running is counted (derive
 * polls_overrun) and carried over; one that finds it running for more
 * than twice the interval and a Timeout (a request that does not end) is
 * logged, once while it lasts. It returns 0 in every case: an error would
 * make collectd double the interval at each failure, up to MaxReadInterval
 * (86,400 s by default), and see the recovery that late; a failed poll is
 * reported by the poll itself (docs/reliability.md). */
static int nl_read(user_data_t *ud) {
  nl_instance *inst = ud->data;
  if (inst->poller == NULL) {
    c_complain(LOG_ERR, &inst->overrun_complaint,
               LOG_PREFIX "Instance \"%s\": no poll thread: it does not "
                          "poll.",
               inst->name);
    return 0;
  }
  if (nl_poller_kick(inst->poller)) {
    c_release(LOG_INFO, &inst->overrun_complaint,
              LOG_PREFIX "Instance \"%s\": polls end in time again.",
              inst->name);
    return 0;
  }
  cdtime_t running = nl_poller_running_for(inst->poller);
  cdtime_t limit =
      2 * plugin_get_interval() + DOUBLE_TO_CDTIME_T(inst->timeout_s);
  if (running > limit)
    c_complain(LOG_WARNING, &inst->overrun_complaint,
               LOG_PREFIX "Instance \"%s\": a poll has run for %.1f s "
                          "(Interval %.1f s, Timeout %.1f s); reads wait "
                          "for it to end.",
               inst->name, CDTIME_T_TO_DOUBLE(running),
               CDTIME_T_TO_DOUBLE(plugin_get_interval()), inst->timeout_s);
  return 0;
}

/* Every instance configured, for nl_init (collectd owns them: each is freed
 * with its read callback). */
static nl_instance **instances;
static size_t n_instances;

/* Reads one Instance block (nl_config_instance) and registers its read
 * callback, which frees the instance with collectd's shutdown. Returns 0,
 * or -1 after logging why, or the registration's status. */
static int config_instance(oconfig_item_t *ci) {
  nl_instance *inst = nl_config_instance(ci);
  if (inst == NULL)
    return -1;
  nl_instance **grown =
      realloc(instances, (n_instances + 1) * sizeof(*instances));
  if (grown == NULL) {
    ERROR(LOG_PREFIX "Instance \"%s\": out of memory.", inst->name);
    nl_instance_free(inst);
    return -1;
  }
  instances = grown;
  char cb_name[DATA_MAX_NAME_LEN];
  snprintf(cb_name, sizeof(cb_name), PLUGIN_NAME "/%s", inst->name);
  int status = plugin_register_complex_read(
      NULL, cb_name, nl_read, inst->interval,
      &(user_data_t){.data = inst, .free_func = nl_instance_free});
  if (status == 0)
    instances[n_instances++] = inst;
  return status;
}

/* collectd's configuration callback: reads each Instance and Coverage
 * block, and warns about anything else. Returns -1 when a block could not
 * be read (the others are kept), else 0. */
static int nl_config(oconfig_item_t *ci) {
  int status = 0;
  for (int i = 0; i < ci->children_num; i++) {
    oconfig_item_t *child = ci->children + i;
    if (strcasecmp("Instance", child->key) == 0) {
      if (config_instance(child) != 0)
        status = -1;
    } else if (strcasecmp("Coverage", child->key) == 0) {
      if (nl_central_config(child) != 0)
        status = -1;
    } else {
      WARNING(LOG_PREFIX "unknown option \"%s\" ignored (options go inside "
                         "an <Instance> or <Coverage> block).",
              child->key);
    }
  }
  return status;
}

/* collectd's init, after it forked into the background: starts each
 * instance's threads (a thread started while the configuration is read
 * would not survive the fork). An instance whose advisory thread or
 * listener cannot start polls without them; one without a poll thread
 * does not poll, and says so at each read. */
static int nl_init(void) {
  char err[512];
  for (size_t i = 0; i < n_instances; i++) {
    nl_instance *inst = instances[i];
    if (inst->advisories && inst->adv == NULL &&
        (inst->adv = nl_advisory_thread_start(4096, nl_feed_advisories,
                                              nl_refresh_pending, inst, err,
                                              sizeof(err))) == NULL)
      ERROR(LOG_PREFIX "Instance \"%s\": %s; findings come from polling "
                       "only.",
            inst->name, err);
    if (inst->http != NULL) {
      if (nl_http_serve(inst->http, err, sizeof(err)) == 0)
        INFO(LOG_PREFIX "Instance \"%s\": REST API and dashboard on "
                        "%s://%s:%s/%s",
             inst->name, inst->listen_tls_cert ? "https" : "http",
             inst->listen_host, inst->listen_port,
             inst->listen_client_ca ? " (client certificates required)" : "");
      else
        ERROR(LOG_PREFIX "Instance \"%s\": %s; it polls without the REST "
                         "API and dashboard.",
              inst->name, err);
    }
    if (inst->poller == NULL &&
        (inst->poller = nl_poller_start("nats_lens_poll", poll_run, inst, err,
                                        sizeof(err))) == NULL)
      ERROR(LOG_PREFIX "Instance \"%s\": %s.", inst->name, err);
  }
  return 0;
}

/* collectd's shutdown: the instances themselves are freed with their read
 * callbacks (before this runs); only the list of them is left. */
static int nl_shutdown(void) {
  free(instances);
  instances = NULL;
  n_instances = 0;
  return 0;
}

void module_register(void) {
  plugin_register_complex_config(PLUGIN_NAME, nl_config);
  plugin_register_init(PLUGIN_NAME, nl_init);
  plugin_register_shutdown(PLUGIN_NAME, nl_shutdown);
}
