/* nl_coverage.h: which consumers some agent judges, on the central side of
 * an agent-per-server deployment (Scope "server", docs/agents.md).
 *
 * Each agent reports, every poll, nats_lens_judged per consumer its server
 * stores: 1 where its server leads the consumer (it judges it), 0 where
 * another server does. The central collectd receives them from every host
 * through collectd's network plugin and feeds them here, keyed by the
 * value's plugin instance ("<instance>-<account>-<stream>") and consumer,
 * whatever host sent them, so that a consumer whose leader moves from host
 * to host is one key. Every check finds the consumers no agent judged in
 * the last window (a number of intervals): unobservable while a copy of
 * the consumer is still reported or the host that last judged it has gone
 * silent; forgotten (deleted) when every host that reported it still
 * sends but none reports it. Pure: libc only. */
#ifndef NL_COVERAGE_H
#define NL_COVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct nl_coverage nl_coverage;

/* Creates the tracker; a consumer is unobservable after intervals of its
 * values' interval without a judge. Returns NULL when memory runs out. */
nl_coverage *nl_coverage_create(unsigned intervals);
void nl_coverage_free(nl_coverage *c);

/* Records that host reported consumer (of plugin instance pi) at t_ns,
 * judged (1) or a copy led elsewhere (0), on values sent every
 * interval_ns. Returns 0, or -1 when memory runs out. */
int nl_coverage_judged(nl_coverage *c, const char *host, const char *pi,
                       const char *consumer, bool judged, int64_t t_ns,
                       int64_t interval_ns);

/* Records that host's agent sent its own values at t_ns, every
 * interval_ns (it is alive). Returns 0, or -1 when memory runs out. */
int nl_coverage_host(nl_coverage *c, const char *host, int64_t t_ns,
                     int64_t interval_ns);

/* A consumer's change of state found by nl_coverage_check: it became
 * unobservable (host is the one that last judged it, or NULL when none
 * ever did), or is judged again (host judges it now), or is gone
 * (deleted: reported by no host while they all still send). */
typedef enum {
  NL_COVERAGE_UNOBSERVABLE,
  NL_COVERAGE_JUDGED_AGAIN,
  NL_COVERAGE_GONE
} nl_coverage_change;

typedef void (*nl_coverage_fn)(void *ud, const char *pi, const char *consumer,
                               nl_coverage_change change, const char *host);

/* Checks every consumer at now_ns: reports each change to fn (a consumer
 * that is gone while unobservable reports NL_COVERAGE_GONE; one gone while
 * judged is forgotten silently), then calls each (may be NULL) for every
 * consumer still unobservable. */
void nl_coverage_check(nl_coverage *c, int64_t now_ns, nl_coverage_fn fn,
                       nl_coverage_fn each, void *ud);

/* Counts at the latest check: hosts heard within their window, consumers
 * judged, consumers unobservable. */
void nl_coverage_counts(const nl_coverage *c, size_t *hosts, size_t *judged,
                        size_t *unobservable);

#endif
