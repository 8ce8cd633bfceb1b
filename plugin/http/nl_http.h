/* nl_http.h: the optional REST API and dashboard of one instance.
 *
 * A libmicrohttpd listener with its own thread serves documents that the
 * poll thread renders after each poll (nl_http_update) and swaps in under
 * a short mutex, so a request never waits for a poll and a poll never
 * waits for a request: the findings (active and resolved), the streams
 * one rendered part per stream (each /api/streams request takes its page
 * from them), and the history of up to 64 consumers (those asked for
 * recently and those with a finding, each with its longer history). Only
 * the first /api/history request for another consumer reads the engine's
 * registry itself, under the registry lock, which every writer (the poll,
 * the advisory thread) holds while it changes the registry. Endpoints and
 * shapes are in docs/rest-api.md. Every function accepts h == NULL and
 * then does nothing, so an instance without a listener needs no checks. */
#ifndef NL_HTTP_H
#define NL_HTTP_H

#include "core/nl_engine.h"
#include "nl_auth.h"
#include "nl_tls.h"

typedef struct {
  const char *host;     /* Address to bind, as in "127.0.0.1" or "::1". */
  const char *port;     /* Decimal port, 1 to 65535. */
  const char *instance; /* Shown in every document (copied). */
  /* Read for /api/history; must outlive the server. NULL for a
   * SystemAccount instance, whose accounts come with
   * nl_http_update_account. */
  nl_engine *engine;
  /* /healthz says "stale" (503) when the latest poll started longer ago
   * than this (0: never). */
  int64_t stale_after_ns;
  /* TLS (1.2 and later only): the checked PEM files (nl_tls_load, copied),
   * or NULL for plain HTTP. With a client CA, every request needs a client
   * certificate that it signed. */
  const nl_tls_files *tls;
  /* The users of basic authentication (must outlive the server), or NULL:
   * with them, every path but /healthz needs a user's credentials, and
   * /healthz says more than its status only to a user. */
  nl_auth *auth;
} nl_http_config;

typedef struct nl_http nl_http;

/* Returned by nl_http_create when libmicrohttpd.so.12 cannot be loaded
 * (a listener that was to use TLS is never started without it). */
#define NL_HTTP_NO_LIBRARY (-2)

/* Binds host:port, without serving yet: a listening socket survives
 * collectd's fork into the background, a thread would not. The first call
 * in the process loads libmicrohttpd.so.12 (the plugin does not link it).
 * Returns 0 and sets *out; or NL_HTTP_NO_LIBRARY when the library or one of
 * its functions is missing, or -1 on any other failure (bad port, address
 * in use, TLS asked of a library built without it, ...), both with a
 * one-line reason in err. */
int nl_http_create(const nl_http_config *cfg, nl_http **out, char *err,
                   size_t errlen);

/* Starts the thread that serves the bound socket (from collectd's init,
 * after the fork). Returns 0 (also when already serving), or -1 with err. */
int nl_http_serve(nl_http *h, char *err, size_t errlen);

/* Stops the listener (waiting for requests in progress) and frees it. */
void nl_http_stop(nl_http *h);

/* Taken around whatever changes the registry (nl_engine_apply, an
 * advisory): while held, no request reads the registry. Hold it for no
 * longer than that. */
void nl_http_lock(nl_http *h);
void nl_http_unlock(nl_http *h);

/* Renders the documents of the poll just applied (set, taken at poll_ns)
 * without the registry lock, then swaps them in. Call from the poller,
 * after nl_http_unlock and with the instance's engine lock still held, so
 * that nothing changes the registry meanwhile. */
void nl_http_update(nl_http *h, const nl_snapshot_set *set, int64_t poll_ns);

/* SystemAccount: renders the documents of one account's engine e (which
 * must outlive the server) after its poll's set was applied, as
 * nl_http_update does and under the same locks (e's engine lock held,
 * after nl_http_unlock); nl_http_publish then serves every account's
 * documents merged, each stream and finding naming its account. */
void nl_http_update_account(nl_http *h, const char *account, nl_engine *e,
                            const nl_snapshot_set *set, int64_t poll_ns);

/* SystemAccount: merges the documents of every account into those served
 * and counts a poll at poll_ns (0: none). Each account's streams move into
 * the served document, so call it once per poll, with no engine lock held,
 * after every account's nl_http_update_account of that poll. */
void nl_http_publish(nl_http *h, int64_t poll_ns);

/* Records a failed poll (why: one line) for /healthz; the documents of the
 * last good poll stay. */
void nl_http_poll_failed(nl_http *h, const char *why, int64_t poll_ns);

#endif
