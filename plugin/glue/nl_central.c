/* nl_central.c: the <Coverage> block of a central collectd.
 *
 * Threads and locks: collectd's write threads call coverage_write with
 * every value dispatched (the network plugin dispatches the agents'), and
 * its reader calls coverage_read once per interval. Both take the block's
 * lock, which guards the tracker (core/nl_coverage) and nothing else, for
 * memory work only: coverage_read copies the changes out under it and
 * dispatches values and notifications after releasing it, so that a
 * write callback run by that dispatch never waits for it. */
#include "nl_central.h"

#include "plugin.h"
#include "utils/common/common.h"

#include <pthread.h>
#include <stdatomic.h>

#include "core/report/nl_coverage.h"
#include "nl_dispatch.h"

#define PLUGIN_NAME "nats_lens"
#define LOG_PREFIX PLUGIN_NAME " plugin: "
#define CLASS_NAME "CONSUMER_UNOBSERVABLE"

typedef struct {
  char *name; /* The agents' Instance name. */
  unsigned intervals;
  pthread_mutex_t lock;
  nl_coverage *cov;
  atomic_int refs; /* One per registered callback. */
} coverage_block;

/* One change or still-unobservable consumer, copied out of the tracker. */
typedef struct {
  char *pi;
  char *consumer;
  char *host;
  nl_coverage_change change;
  bool still; /* Still unobservable (its value is sent again). */
} coverage_item;

typedef struct {
  coverage_item *items;
  size_t n, cap;
} coverage_list;

static void block_release(void *arg) {
  coverage_block *b = arg;
  if (b == NULL || atomic_fetch_sub(&b->refs, 1) != 1)
    return;
  nl_coverage_free(b->cov);
  pthread_mutex_destroy(&b->lock);
  free(b->name);
  free(b);
}

/* Feeds the agents' values into the tracker: nats_lens_judged of the
 * block's instance ("<name>-..."), and the agents' own count values as
 * signs of life. Everything else is ignored. */
static int coverage_write(const data_set_t *ds, const value_list_t *vl,
                          user_data_t *ud) {
  coverage_block *b = ud->data;
  if (strcmp(vl->plugin, PLUGIN_NAME) != 0 || vl->values_len != 1 ||
      ds->ds_num != 1 || ds->ds[0].type != DS_TYPE_GAUGE)
    return 0;
  size_t len = strlen(b->name);
  int64_t t = (int64_t)CDTIME_T_TO_NS(vl->time);
  int64_t interval = (int64_t)CDTIME_T_TO_NS(vl->interval);
  if (strcmp(vl->type, "nats_lens_judged") == 0 &&
      strncmp(vl->plugin_instance, b->name, len) == 0 &&
      vl->plugin_instance[len] == '-') {
    bool judged = vl->values[0].gauge >= 0.5;
    pthread_mutex_lock(&b->lock);
    int rc = nl_coverage_judged(b->cov, vl->host, vl->plugin_instance,
                                vl->type_instance, judged, t, interval);
    pthread_mutex_unlock(&b->lock);
    return rc;
  }
  if (strcmp(vl->plugin_instance, b->name) == 0 &&
      strcmp(vl->type, "count") == 0 &&
      strcmp(vl->type_instance, "consumers_judged") == 0) {
    pthread_mutex_lock(&b->lock);
    int rc = nl_coverage_host(b->cov, vl->host, t, interval);
    pthread_mutex_unlock(&b->lock);
    return rc;
  }
  return 0;
}

/* Copies one report of the tracker into the list (under the lock). */
static void keep_item(coverage_list *l, const char *pi, const char *consumer,
                      nl_coverage_change change, const char *host, bool still) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    coverage_item *items = realloc(l->items, cap * sizeof(*items));
    if (items == NULL)
      return;
    l->items = items;
    l->cap = cap;
  }
  coverage_item it = {strdup(pi), strdup(consumer), host ? strdup(host) : NULL,
                      change, still};
  if (it.pi == NULL || it.consumer == NULL) {
    free(it.pi);
    free(it.consumer);
    free(it.host);
    return;
  }
  l->items[l->n++] = it;
}

static void keep_change(void *ud, const char *pi, const char *consumer,
                        nl_coverage_change change, const char *host) {
  keep_item(ud, pi, consumer, change, host, false);
}

static void keep_still(void *ud, const char *pi, const char *consumer,
                       nl_coverage_change change, const char *host) {
  keep_item(ud, pi, consumer, change, host, true);
}

static void submit(const char *pi, const char *type, const char *ti, double v) {
  nl_dispatch_value(pi, type, ti, (value_t){.gauge = v}, 0);
}

/* Sends the notification of one change: FAILURE when the consumer became
 * unobservable, OKAY when it is judged again or gone. */
static void notify_change(const coverage_block *b, const coverage_item *it) {
  /* The plugin instance without "<name>-": "<account>-<stream>". */
  const char *where = it->pi + strlen(b->name) + 1;
  char msg[NOTIF_MAX_MSG_LEN];
  const char *host = it->host ? it->host : "none";
  if (it->change == NL_COVERAGE_UNOBSERVABLE)
    snprintf(msg, sizeof(msg),
             CLASS_NAME " %s/%s: no agent has judged it for %u intervals; "
                        "last judged on host %s",
             where, it->consumer, b->intervals, host);
  else if (it->change == NL_COVERAGE_JUDGED_AGAIN)
    snprintf(msg, sizeof(msg), CLASS_NAME " %s/%s cleared: judged on host %s",
             where, it->consumer, host);
  else
    snprintf(msg, sizeof(msg),
             CLASS_NAME " %s/%s cleared: no agent reports it any more "
                        "(deleted)",
             where, it->consumer);
  notification_t n = {.severity = it->change == NL_COVERAGE_UNOBSERVABLE
                                      ? NOTIF_FAILURE
                                      : NOTIF_OKAY,
                      .time = cdtime()};
  sstrncpy(n.host, hostname_g, sizeof(n.host));
  sstrncpy(n.plugin, PLUGIN_NAME, sizeof(n.plugin));
  sstrncpy(n.plugin_instance, it->pi, sizeof(n.plugin_instance));
  sstrncpy(n.type_instance, CLASS_NAME, sizeof(n.type_instance));
  sstrncpy(n.message, msg, sizeof(n.message));
  plugin_notification_meta_add_string(&n, "instance", b->name);
  plugin_notification_meta_add_string(&n, "class", CLASS_NAME);
  plugin_notification_meta_add_string(&n, "consumer", it->consumer);
  plugin_notification_meta_add_string(
      &n, "state",
      it->change == NL_COVERAGE_UNOBSERVABLE ? "firing" : "resolved");
  if (it->host != NULL)
    plugin_notification_meta_add_string(&n, "host_last", it->host);
  plugin_dispatch_notification(&n);
  plugin_notification_meta_free(n.meta);
}

/* Checks coverage once per interval: a notification per change, the
 * value nats_lens_consumer_unobservable of each consumer unobservable (1)
 * or no longer (0, once), and the block's counts. */
static int coverage_read(user_data_t *ud) {
  coverage_block *b = ud->data;
  coverage_list l = {0};
  size_t hosts, judged, unobservable;
  pthread_mutex_lock(&b->lock);
  nl_coverage_check(b->cov, (int64_t)CDTIME_T_TO_NS(cdtime()), keep_change,
                    keep_still, &l);
  nl_coverage_counts(b->cov, &hosts, &judged, &unobservable);
  pthread_mutex_unlock(&b->lock);
  for (size_t i = 0; i < l.n; i++) {
    coverage_item *it = &l.items[i];
    if (!it->still)
      notify_change(b, it);
    if (it->still || it->change != NL_COVERAGE_UNOBSERVABLE)
      submit(it->pi, "nats_lens_consumer_unobservable", it->consumer,
             it->still ? 1.0 : 0.0);
    free(it->pi);
    free(it->consumer);
    free(it->host);
  }
  free(l.items);
  submit(b->name, "count", "agents", (double)hosts);
  /* Not "consumers_judged": that is an agent's sign of life above. */
  submit(b->name, "count", "consumers_covered", (double)judged);
  submit(b->name, "count", "consumers_unobservable", (double)unobservable);
  return 0;
}

int nl_central_config(oconfig_item_t *ci) {
  coverage_block *b = calloc(1, sizeof(*b));
  if (b == NULL)
    return -1;
  b->intervals = 2;
  pthread_mutex_init(&b->lock, NULL);
  atomic_init(&b->refs, 1);
  cdtime_t interval = 0;
  int status = cf_util_get_string(ci, &b->name);
  if (status != 0 || b->name[0] == '\0' || strchr(b->name, '/') != NULL) {
    ERROR(LOG_PREFIX "a Coverage block needs the agents' Instance name, as "
                     "in <Coverage \"prod\">.");
    status = -1;
  }
  for (int i = 0; status == 0 && i < ci->children_num; i++) {
    oconfig_item_t *child = ci->children + i;
    int n = 0;
    if (strcasecmp("Intervals", child->key) == 0) {
      status = cf_util_get_int(child, &n);
      if (status == 0 && (n < 1 || n > 100)) {
        ERROR(LOG_PREFIX "Coverage \"%s\": Intervals must be 1 to 100.",
              b->name);
        status = -1;
      }
      b->intervals = (unsigned)n;
    } else if (strcasecmp("Interval", child->key) == 0)
      status = cf_util_get_cdtime(child, &interval);
    else
      WARNING(LOG_PREFIX "Coverage \"%s\": unknown option \"%s\" ignored.",
              b->name, child->key);
  }
  if (status == 0 && (b->cov = nl_coverage_create(b->intervals)) == NULL) {
    ERROR(LOG_PREFIX "Coverage \"%s\": out of memory.", b->name);
    status = -1;
  }
  if (status != 0) {
    block_release(b);
    return -1;
  }
  char cb[DATA_MAX_NAME_LEN];
  snprintf(cb, sizeof(cb), PLUGIN_NAME "/coverage/%s", b->name);
  atomic_fetch_add(&b->refs, 1);
  if (plugin_register_write(
          cb, coverage_write,
          &(user_data_t){.data = b, .free_func = block_release}) != 0) {
    block_release(b); /* The write callback's reference. */
    block_release(b);
    return -1;
  }
  return plugin_register_complex_read(
      NULL, cb, coverage_read, interval,
      &(user_data_t){.data = b, .free_func = block_release});
}
