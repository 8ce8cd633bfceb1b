/* nl_poll.c: one poll of the JetStream API through a request function. */
#include "nl_poll.h"

#include "core/model/nl_account.h"
#include "core/model/nl_names.h"
#include "core/model/nl_parse.h"
#include "core/model/nl_subject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Records an error of the poll of kind status (an nl_transport_status),
 * and keeps the first. */
static void note_error(nl_poll_stats *stats, int status, const char *what,
                       const char *why) {
  stats->errors++;
  if (stats->first_error[0] == '\0') {
    snprintf(stats->first_error, sizeof(stats->first_error), "%s: %s", what,
             why);
    stats->first_status = status;
  }
}

typedef int (*page_parser)(const char *json, size_t len, size_t stream_index,
                           nl_snapshot_set *set, nl_page_info *page, char *err,
                           size_t errlen);

static int parse_stream_page(const char *json, size_t len, size_t unused,
                             nl_snapshot_set *set, nl_page_info *page,
                             char *err, size_t errlen) {
  (void)unused;
  return nl_parse_stream_list(json, len, set, page, err, errlen);
}

typedef struct {
  const nl_poll_config *cfg;
  nl_request_fn request;
  void *ctx;
  nl_poll_stats *stats;
  int64_t deadline;    /* Monotonic; 0: none. */
  uint64_t last_total; /* The "total" of the latest page read. */
} poll_run;

/* Reads every page of one listing. Returns 0 when all pages were read and
 * none held unreadable or missing entries, 1 when all were read but some
 * entries were unobservable, -1 on failure (error recorded). */
static int read_listing(poll_run *run, const char *subject, page_parser parse,
                        size_t stream_index, nl_snapshot_set *set) {
  size_t max_pages = run->cfg->max_pages ? run->cfg->max_pages : 1000;
  uint64_t offset = 0;
  int rc = 0;
  for (size_t n = 0; n < max_pages; n++) {
    if (run->deadline && monotonic_ns() > run->deadline) {
      run->stats->cut_off = true;
      note_error(run->stats, NL_TRANSPORT_ERROR, subject,
                 "poll time budget exhausted");
      return -1;
    }
    char payload[64], err[320];
    char *reply = NULL;
    size_t len = 0;
    snprintf(payload, sizeof(payload), "{\"offset\":%llu}",
             (unsigned long long)offset);
    run->stats->requests++;
    int status = run->request(run->ctx, subject, payload, &reply, &len, err,
                              sizeof(err));
    if (status != 0) {
      note_error(run->stats, status < 0 ? status : NL_TRANSPORT_ERROR, subject,
                 err);
      return -1;
    }
    run->stats->bytes_received += len;
    nl_page_info page;
    int prc = parse(reply, len, stream_index, set, &page, err, sizeof(err));
    free(reply);
    if (prc != NL_PARSE_OK) {
      note_error(run->stats, NL_TRANSPORT_ERROR, subject, err);
      return -1;
    }
    if (page.n_skipped > 0 || page.n_missing > 0)
      rc = 1;
    run->last_total = page.total;
    /* A clustered server pages through every entry it knows and reports
     * those whose leader did not answer in "missing" instead of the list:
     * the next page starts after both, or it would repeat entries. */
    size_t n_page = page.n_items + page.n_missing;
    offset += n_page;
    if (n_page == 0)
      return rc;
    /* Clustered servers before 2.9.21 report total = page size for
     * CONSUMER.LIST: a full page whose total equals the page size may be
     * followed by more, so ask once more; any other total is trusted. */
    bool suspect =
        page.limit > 0 && n_page == page.limit && page.total == page.limit;
    if (offset >= page.total && !suspect)
      return rc;
  }
  note_error(run->stats, NL_TRANSPORT_ERROR, subject, "too many pages");
  return -1;
}

/* Asks for the message count of each subject of stream i of set (which
 * nl_subject_counts_wanted named), into its snapshot. A failure is an
 * error of the poll; the stream is then judged without them. */
static void read_subject_counts(poll_run *run, const char *prefix,
                                nl_snapshot_set *set, size_t i) {
  char subject[2 * NL_NAME_MAX], err[320];
  snprintf(subject, sizeof(subject), "%s.STREAM.INFO.%s", prefix,
           set->streams[i].name);
  if (run->deadline && monotonic_ns() > run->deadline) {
    run->stats->cut_off = true;
    note_error(run->stats, NL_TRANSPORT_ERROR, subject,
               "poll time budget exhausted");
    return;
  }
  char *reply = NULL;
  size_t len = 0;
  run->stats->requests++;
  int status = run->request(run->ctx, subject, "{\"subjects_filter\":\">\"}",
                            &reply, &len, err, sizeof(err));
  if (status != 0) {
    note_error(run->stats, status < 0 ? status : NL_TRANSPORT_ERROR, subject,
               err);
    return;
  }
  run->stats->bytes_received += len;
  if (nl_parse_subject_counts(reply, len, &set->streams[i], err, sizeof(err)) !=
      NL_PARSE_OK)
    note_error(run->stats, NL_TRANSPORT_ERROR, subject, err);
  free(reply);
}

/* Reads the account's storage and its limits ($JS.API.INFO) into set's
 * pools. A failure is written into stats->account_error, not counted as an
 * error of the poll; the streams are then judged without the pools (no
 * storage forecast at this poll). */
static void read_account(poll_run *run, const char *prefix,
                         nl_snapshot_set *set) {
  char subject[2 * NL_NAME_MAX], err[320];
  snprintf(subject, sizeof(subject), "%s.INFO", prefix);
  char *reply = NULL;
  size_t len = 0;
  run->stats->requests++;
  int status =
      run->request(run->ctx, subject, "", &reply, &len, err, sizeof(err));
  if (status == 0) {
    run->stats->bytes_received += len;
    status = nl_parse_account_info(reply, len, set, err, sizeof(err));
    free(reply);
  }
  if (status != 0)
    snprintf(run->stats->account_error, sizeof(run->stats->account_error),
             "%s: %s", subject, err);
}

/* An entry of a listing: its group (the stream, for consumers), name and
 * place. */
typedef struct {
  size_t group;
  const char *name;
  size_t index;
} named_index;

static int by_group_name_index(const void *a, const void *b) {
  const named_index *x = a, *y = b;
  if (x->group != y->group)
    return x->group < y->group ? -1 : 1;
  int c = strcmp(x->name, y->name);
  if (c != 0)
    return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Returns a calloc'ed array of n flags marking the entries of items (n,
 * sorted here) that repeat an earlier entry of the same group and name, or
 * NULL when memory runs out. */
static bool *mark_repeated(named_index *items, size_t n) {
  bool *repeated = calloc(n ? n : 1, sizeof(*repeated));
  if (repeated == NULL)
    return NULL;
  qsort(items, n, sizeof(*items), by_group_name_index);
  for (size_t i = 1; i < n; i++)
    if (items[i].group == items[i - 1].group &&
        strcmp(items[i].name, items[i - 1].name) == 0)
      repeated[items[i].index] = true;
  return repeated;
}

/* Drops from items (n entries of size bytes each) the later repeats of an
 * entry of the same group and name (key gives both), freeing each with
 * clear and keeping the order. Returns the entries left (n when memory
 * runs out: nothing is dropped then). */
static size_t drop_repeated(void *items, size_t n, size_t size,
                            void (*key)(const void *item, size_t *group,
                                        const char **name),
                            void (*clear)(void *item)) {
  if (n < 2)
    return n;
  char *base = items;
  named_index *order = malloc(n * sizeof(*order));
  bool *repeated = NULL;
  if (order != NULL) {
    for (size_t i = 0; i < n; i++) {
      order[i].index = i;
      key(base + i * size, &order[i].group, &order[i].name);
    }
    repeated = mark_repeated(order, n);
  }
  size_t kept = n;
  if (repeated != NULL) {
    kept = 0;
    for (size_t i = 0; i < n; i++) {
      if (repeated[i])
        clear(base + i * size);
      else if (kept++ != i)
        memcpy(base + (kept - 1) * size, base + i * size, size);
    }
  }
  free(order);
  free(repeated);
  return kept;
}

static void stream_key(const void *item, size_t *group, const char **name) {
  *group = 0;
  *name = ((const nl_stream_snap *)item)->name;
}

static void stream_clear(void *item) { nl_stream_snap_clear(item); }

static void consumer_key(const void *item, size_t *group, const char **name) {
  const nl_consumer_snap *c = item;
  *group = c->stream_index;
  *name = c->name;
}

static void consumer_clear(void *item) { nl_consumer_snap_clear(item); }

int nl_poll_run(const nl_poll_config *cfg, nl_request_fn request, void *ctx,
                nl_snapshot_set *set, nl_poll_stats *stats) {
  memset(stats, 0, sizeof(*stats));
  const char *prefix = cfg->api_prefix ? cfg->api_prefix : "$JS.API";
  poll_run run = {cfg,
                  request,
                  ctx,
                  stats,
                  cfg->budget_ns > 0 ? monotonic_ns() + cfg->budget_ns : 0,
                  0};
  char subject[2 * NL_NAME_MAX];
  snprintf(subject, sizeof(subject), "%s.STREAM.LIST", prefix);
  if (read_listing(&run, subject, parse_stream_page, 0, set) < 0)
    return -1;
  /* Pages shifted by streams created, deleted or going offline between
   * requests repeat entries: each stream is kept once, in order. */
  set->n_streams =
      drop_repeated(set->streams, set->n_streams, sizeof(*set->streams),
                    stream_key, stream_clear);
  /* A clustered server may leave a stream out of both the list and its
   * "missing" entries (its servers offline) while counting it in the total:
   * the streams this poll did not see are then unobservable, not gone. */
  if (run.last_total > set->n_streams + set->n_missing_streams) {
    set->stream_list_short = true;
    note_error(stats, NL_TRANSPORT_ERROR, "STREAM.LIST",
               "fewer streams listed than the list's total");
    stats->streams_incomplete++;
  }
  /* Keep only the selected streams, in order. */
  size_t kept = 0;
  for (size_t i = 0; i < set->n_streams; i++) {
    if (nl_stream_selected(&cfg->select, set->streams[i].name))
      set->streams[kept++] = set->streams[i];
    else
      nl_stream_snap_clear(&set->streams[i]);
  }
  set->n_streams = kept;
  /* Streams reported missing (their leader did not answer): kept by name
   * when selected, so that their consumers count as unobservable. */
  kept = 0;
  for (size_t i = 0; i < set->n_missing_streams; i++) {
    if (nl_stream_selected(&cfg->select, set->missing_streams[i])) {
      set->missing_streams[kept++] = set->missing_streams[i];
      note_error(stats, NL_TRANSPORT_ERROR, "STREAM.LIST",
                 "stream reported missing (its leader did not answer)");
      stats->streams_incomplete++;
    } else {
      free(set->missing_streams[i]);
    }
  }
  set->n_missing_streams = kept;
  for (size_t i = 0; i < set->n_streams; i++) {
    if (!nl_subject_token_valid(set->streams[i].name)) {
      note_error(stats, NL_TRANSPORT_ERROR, "STREAM.LIST",
                 "stream name not usable in a subject");
      stats->streams_incomplete++;
      continue;
    }
    snprintf(subject, sizeof(subject), "%s.CONSUMER.LIST.%s", prefix,
             set->streams[i].name);
    int rc = read_listing(&run, subject, nl_parse_consumer_list, i, set);
    set->streams[i].consumers_complete = rc == 0;
    if (rc != 0)
      stats->streams_incomplete++;
  }
  /* The same for consumers, so that every count, value and view sees each
   * consumer once. */
  set->n_consumers =
      drop_repeated(set->consumers, set->n_consumers, sizeof(*set->consumers),
                    consumer_key, consumer_clear);
  /* Work queues and interest streams whose consumers' filters may leave
   * subjects untaken: how many messages each subject holds (the messages
   * no consumer will deliver, MESSAGES_STRANDED). */
  for (size_t i = 0; i < set->n_streams; i++)
    if (nl_subject_counts_wanted(set, i))
      read_subject_counts(&run, prefix, set, i);
  /* The account's storage and its limits (STORAGE_LIMIT_RISK). */
  if (cfg->account_info)
    read_account(&run, prefix, set);
  return 0;
}
