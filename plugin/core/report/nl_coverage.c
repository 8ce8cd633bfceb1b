/* nl_coverage.c: which consumers some agent judges (central side). */
#include "nl_coverage.h"

#include "core/model/nl_snapshot.h"

#include <stdlib.h>
#include <string.h>

/* A host heard from (name owned). */
typedef struct {
  char *name;
  int64_t seen_ns;
  int64_t interval_ns; /* Of its latest value. */
} host_entry;

/* One consumer, whatever host reports it (strings owned). */
typedef struct key_entry {
  struct key_entry *next; /* Hash chain. */
  char *pi;
  char *consumer;
  uint64_t hash;
  int64_t interval_ns; /* Of its latest value. */
  int64_t judged_ns;   /* Latest report judged = 1, or 0. */
  int64_t copy_ns;     /* Latest report judged = 0, or 0. */
  size_t judge_host;   /* Host of the latest judged = 1, or SIZE_MAX. */
  size_t copy_host;    /* Host of the latest judged = 0, or SIZE_MAX. */
  bool unobservable;
} key_entry;

struct nl_coverage {
  unsigned intervals;
  host_entry *hosts;
  size_t n_hosts;
  key_entry **buckets;
  size_t n_buckets;
  size_t n_keys;
  size_t judged;       /* At the latest check. */
  size_t unobservable; /* At the latest check. */
  size_t hosts_alive;  /* At the latest check. */
};

nl_coverage *nl_coverage_create(unsigned intervals) {
  nl_coverage *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return NULL;
  c->intervals = intervals ? intervals : 2;
  c->n_buckets = 1024;
  c->buckets = calloc(c->n_buckets, sizeof(*c->buckets));
  if (c->buckets == NULL) {
    free(c);
    return NULL;
  }
  return c;
}

static void key_free(key_entry *k) {
  free(k->pi);
  free(k->consumer);
  free(k);
}

void nl_coverage_free(nl_coverage *c) {
  if (c == NULL)
    return;
  for (size_t b = 0; b < c->n_buckets; b++)
    for (key_entry *k = c->buckets[b], *next; k != NULL; k = next) {
      next = k->next;
      key_free(k);
    }
  for (size_t i = 0; i < c->n_hosts; i++)
    free(c->hosts[i].name);
  free(c->hosts);
  free(c->buckets);
  free(c);
}

/* Returns the index of host, added when new, or SIZE_MAX when memory runs
 * out; its time seen moves to t_ns. */
static size_t host_seen(nl_coverage *c, const char *host, int64_t t_ns,
                        int64_t interval_ns) {
  size_t i = 0;
  while (i < c->n_hosts && strcmp(c->hosts[i].name, host) != 0)
    i++;
  if (i == c->n_hosts) {
    host_entry *grown = realloc(c->hosts, (c->n_hosts + 1) * sizeof(*grown));
    if (grown == NULL)
      return SIZE_MAX;
    c->hosts = grown;
    if ((grown[i].name = strdup(host)) == NULL)
      return SIZE_MAX;
    grown[i].seen_ns = 0;
    c->n_hosts++;
  }
  if (t_ns > c->hosts[i].seen_ns)
    c->hosts[i].seen_ns = t_ns;
  c->hosts[i].interval_ns = interval_ns;
  return i;
}

int nl_coverage_host(nl_coverage *c, const char *host, int64_t t_ns,
                     int64_t interval_ns) {
  return host_seen(c, host, t_ns, interval_ns) == SIZE_MAX ? -1 : 0;
}

/* The time after which a value sent every interval_ns is overdue: the
 * intervals, and half an interval more (a report a little late is no
 * gap). */
static int64_t window_of(const nl_coverage *c, int64_t interval_ns) {
  return interval_ns * c->intervals + interval_ns / 2;
}

static uint64_t key_hash(const char *pi, const char *consumer) {
  uint64_t h = nl_hash_bytes(NL_HASH_BASIS, pi, strlen(pi) + 1);
  return nl_hash_bytes(h, consumer, strlen(consumer));
}

/* Doubles the buckets once the table holds twice as many keys. */
static void maybe_grow(nl_coverage *c) {
  if (c->n_keys < 2 * c->n_buckets)
    return;
  size_t n = 2 * c->n_buckets;
  key_entry **b = calloc(n, sizeof(*b));
  if (b == NULL)
    return; /* Longer chains, still correct. */
  for (size_t i = 0; i < c->n_buckets; i++)
    for (key_entry *k = c->buckets[i], *next; k != NULL; k = next) {
      next = k->next;
      k->next = b[k->hash % n];
      b[k->hash % n] = k;
    }
  free(c->buckets);
  c->buckets = b;
  c->n_buckets = n;
}

int nl_coverage_judged(nl_coverage *c, const char *host, const char *pi,
                       const char *consumer, bool judged, int64_t t_ns,
                       int64_t interval_ns) {
  size_t h = host_seen(c, host, t_ns, interval_ns);
  if (h == SIZE_MAX)
    return -1;
  uint64_t hash = key_hash(pi, consumer);
  key_entry *k = c->buckets[hash % c->n_buckets];
  while (k != NULL && (k->hash != hash || strcmp(k->pi, pi) != 0 ||
                       strcmp(k->consumer, consumer) != 0))
    k = k->next;
  if (k == NULL) {
    k = calloc(1, sizeof(*k));
    if (k == NULL || (k->pi = strdup(pi)) == NULL ||
        (k->consumer = strdup(consumer)) == NULL) {
      if (k != NULL)
        key_free(k);
      return -1;
    }
    k->hash = hash;
    k->judge_host = k->copy_host = SIZE_MAX;
    k->next = c->buckets[hash % c->n_buckets];
    c->buckets[hash % c->n_buckets] = k;
    c->n_keys++;
    maybe_grow(c);
  }
  k->interval_ns = interval_ns;
  if (judged && t_ns >= k->judged_ns) {
    k->judged_ns = t_ns;
    k->judge_host = h;
  } else if (!judged && t_ns >= k->copy_ns) {
    k->copy_ns = t_ns;
    k->copy_host = h;
  }
  return 0;
}

/* The state of key k at now_ns, given the window of its interval: judged
 * within it, unobservable, or gone. */
static nl_coverage_change key_state(const nl_coverage *c, const key_entry *k,
                                    int64_t now_ns, bool *judged) {
  int64_t window = window_of(c, k->interval_ns);
  *judged = k->judged_ns > 0 && now_ns - k->judged_ns <= window;
  if (*judged)
    return NL_COVERAGE_JUDGED_AGAIN;
  if (k->copy_ns > 0 && now_ns - k->copy_ns <= window)
    return NL_COVERAGE_UNOBSERVABLE; /* A copy is there, no judge. */
  size_t last = k->judge_host != SIZE_MAX ? k->judge_host : k->copy_host;
  if (last != SIZE_MAX && now_ns - c->hosts[last].seen_ns >
                              window_of(c, c->hosts[last].interval_ns))
    return NL_COVERAGE_UNOBSERVABLE; /* Its agent went silent. */
  return NL_COVERAGE_GONE;
}

void nl_coverage_check(nl_coverage *c, int64_t now_ns, nl_coverage_fn fn,
                       nl_coverage_fn each, void *ud) {
  c->judged = c->unobservable = 0;
  for (size_t b = 0; b < c->n_buckets; b++) {
    key_entry **link = &c->buckets[b];
    while (*link != NULL) {
      key_entry *k = *link;
      bool judged;
      nl_coverage_change state = key_state(c, k, now_ns, &judged);
      const char *judge =
          k->judge_host != SIZE_MAX ? c->hosts[k->judge_host].name : NULL;
      if (state == NL_COVERAGE_GONE) {
        if (k->unobservable && fn != NULL)
          fn(ud, k->pi, k->consumer, NL_COVERAGE_GONE, judge);
        *link = k->next;
        key_free(k);
        c->n_keys--;
        continue;
      }
      if (judged) {
        c->judged++;
        if (k->unobservable && fn != NULL)
          fn(ud, k->pi, k->consumer, NL_COVERAGE_JUDGED_AGAIN, judge);
        k->unobservable = false;
      } else {
        c->unobservable++;
        if (!k->unobservable && fn != NULL)
          fn(ud, k->pi, k->consumer, NL_COVERAGE_UNOBSERVABLE, judge);
        k->unobservable = true;
        if (each != NULL)
          each(ud, k->pi, k->consumer, NL_COVERAGE_UNOBSERVABLE, judge);
      }
      link = &k->next;
    }
  }
  c->hosts_alive = 0;
  for (size_t i = 0; i < c->n_hosts; i++)
    c->hosts_alive +=
        now_ns - c->hosts[i].seen_ns <= window_of(c, c->hosts[i].interval_ns);
}

void nl_coverage_counts(const nl_coverage *c, size_t *hosts, size_t *judged,
                        size_t *unobservable) {
  *hosts = c->hosts_alive;
  *judged = c->judged;
  *unobservable = c->unobservable;
}
