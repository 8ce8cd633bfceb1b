/* nl_http.c: the optional REST API and dashboard of one instance. */
#include "nl_http.h"

#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/report/nl_json.h"
#include "core/report/nl_view.h"
#include "nl_route.h"

/* The dashboard page, embedded at build time from plugin/??/nl_dashboard.html
 * (static const unsigned char nl_dashboard_html[], nl_dashboard_html_len). */
#include "nl_dashboard_html.h"

/* Connections in all, per client address, and the seconds a connection
 * may stay silent before it is closed. */
#define NL_HTTP_CONNECTIONS 256
#define NL_HTTP_PER_CLIENT 16
#define NL_HTTP_IDLE_S 5

/* The TLS versions offered (GnuTLS priority string): 1.2 and 1.3 only. */
#define NL_HTTP_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
/* The realm named in the basic authentication challenge. */
#define NL_HTTP_REALM "Basic realm=\"nats-lens\", charset=\"UTF-8\""

/* History documents kept rendered (one per consumer asked for, or with a
 * finding), how long one is kept after the last request for it, and how
 * long a request for a consumer not yet kept may wait for an apply in
 * progress. */
#define NL_HTTP_HISTORY_KEPT 64
#define NL_HTTP_HISTORY_KEEP_NS (600 * 1000000000LL)
#define NL_HTTP_HISTORY_WAIT_MS 500

#define JSON_TYPE "application/json"
#define HTML_TYPE "text/html; charset=utf-8"
/* The page may only talk to this server and use its own inline code. */
#define PAGE_POLICY                                                            \
  "default-src 'none'; script-src 'unsafe-inline'; style-src "                 \
  "'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; "      \
  "form-action 'none'; frame-ancestors 'none'"

/* A rendered /api/history document, refreshed after each poll. */
typedef struct {
  nl_engine *engine; /* Whose registry holds the consumer. */
  char stream[NL_NAME_MAX + 1];
  char consumer[NL_NAME_MAX + 1];
  char *text;
  size_t len;
  int64_t asked_ns; /* The latest request for it (or poll with a finding). */
  nl_series longer; /* Up to an hour of its polls, from when it was kept. */
} history_doc;

/* SystemAccount: one account's engine and its latest documents, which
 * nl_http_publish merges into those served. */
typedef struct {
  char *account;
  nl_engine *engine;
  struct json_object *active;   /* Its active findings (event objects). */
  struct json_object *resolved; /* Those that cleared lately. */
  nl_view_streams_doc streams;
} account_scope;

struct nl_http {
  struct MHD_Daemon *daemon;
  int fd;
  nl_tls_files tls; /* Empty for plain HTTP (then tls.cert_pem is NULL). */
  nl_auth *auth;    /* Borrowed: NULL without basic authentication. */
  char *instance;
  nl_engine *engine; /* NULL with SystemAccount: see accounts. */
  /* SystemAccount: the accounts seen so far (guarded by doc_lock; added by
   * the poller, never removed before nl_http_stop). */
  account_scope *accounts;
  size_t n_accounts;
  int64_t stale_after_ns; /* Documents older than this are stale. */
  /* The registry lock: held by the poller while it changes the registry,
   * and by /api/history while it renders a consumer not yet kept. */
  pthread_mutex_t registry_lock;
  /* The document lock: guards the fields below, held only to swap or copy. */
  pthread_mutex_t doc_lock;
  char *violations;
  size_t violations_len;
  /* The streams of the latest poll, one rendered part per stream, from
   * which each /api/streams request takes its page. */
  nl_view_streams_doc streams;
  /* History documents of the consumers asked for recently, rendered after
   * each poll (nl_http_update), so a request reads them without waiting. */
  history_doc history[NL_HTTP_HISTORY_KEPT];
  size_t n_history;
  uint64_t polls;
  uint64_t failed_polls;
  int64_t last_poll_ns;
  int64_t last_success_ns;
  bool last_ok;
  char last_error[256];
};

/* libmicrohttpd is not linked into the plugin: it and the GnuTLS chain it
 * needs would be mapped into every collectd that loads the plugin, Listen
 * or not. It is opened the first time an instance starts a listener, once
 * per process, and stays open (its threads run its code until collectd
 * exits). Only the header's types and constants are used directly; the
 * functions are called through this table. */
#define MHD_LIBRARY "libmicrohttpd.so.12"

typedef struct {
  __typeof__(&MHD_start_daemon) start_daemon;
  __typeof__(&MHD_stop_daemon) stop_daemon;
  __typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
  __typeof__(&MHD_add_response_header) add_response_header;
  __typeof__(&MHD_queue_response) queue_response;
  __typeof__(&MHD_destroy_response) destroy_response;
  __typeof__(&MHD_lookup_connection_value) lookup_connection_value;
  __typeof__(&MHD_get_connection_info) get_connection_info;
  __typeof__(&MHD_is_feature_supported) is_feature_supported;
} mhd_api;

static mhd_api mhd;
static bool mhd_loaded;
static char mhd_error[256];
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;

/* dlsym returns an object pointer; POSIX makes it convertible to a function
 * pointer, which is copied byte for byte below. */
_Static_assert(sizeof(void *) == sizeof(mhd.start_daemon),
               "function and object pointers differ in size");

/* The pthread_once routine: opens the library and fills mhd, then sets
 * mhd_loaded; on failure leaves the library closed and dlerror's text in
 * mhd_error. */
static void mhd_load(void) {
#define MHD_SYMBOL(f)                                                          \
  { "MHD_" #f, offsetof(mhd_api, f) }
  static const struct {
    const char *name;
    size_t offset;
  } symbols[] = {MHD_SYMBOL(start_daemon),
                 MHD_SYMBOL(stop_daemon),
                 MHD_SYMBOL(create_response_from_buffer),
                 MHD_SYMBOL(add_response_header),
                 MHD_SYMBOL(queue_response),
                 MHD_SYMBOL(destroy_response),
                 MHD_SYMBOL(lookup_connection_value),
                 MHD_SYMBOL(get_connection_info),
                 MHD_SYMBOL(is_feature_supported)};
#undef MHD_SYMBOL
  void *lib = dlopen(MHD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char *why = dlerror();
    snprintf(mhd_error, sizeof(mhd_error), "%s", why ? why : "not found");
    return;
  }
  mhd_api api;
  for (size_t i = 0; i < sizeof(symbols) / sizeof(symbols[0]); i++) {
    dlerror();
    void *sym = dlsym(lib, symbols[i].name);
    if (sym == NULL) {
      const char *why = dlerror();
      snprintf(mhd_error, sizeof(mhd_error), "%s",
               why ? why : "a function is missing");
      dlclose(lib);
      return;
    }
    memcpy((char *)&api + symbols[i].offset, &sym, sizeof(sym));
  }
  mhd = api;
  mhd_loaded = true;
}

/* Makes the mhd table usable, loading the library on the first call from
 * any thread. Returns 0, or -1 with the reason in err; a failure is final
 * for the process (every later call gives the same reason). */
static int mhd_open(char *err, size_t errlen) {
  pthread_once(&mhd_once, mhd_load);
  if (mhd_loaded)
    return 0;
  snprintf(err, errlen, "Listen needs " MHD_LIBRARY ": %s", mhd_error);
  return -1;
}

/* GnuTLS, for the one function that checks a client's certificate against
 * the client CA (libmicrohttpd asks for the certificate but leaves its
 * check to the application). It is the library libmicrohttpd was loaded
 * with, opened only when a listener has a client CA. The session is a
 * gnutls_session_t; GnuTLS's header is not needed for one call. */
#define GNUTLS_LIBRARY "libgnutls.so.30"
typedef int (*verify_peers_fn)(void *session, unsigned int *status);
static verify_peers_fn gnutls_verify_peers;
static char gnutls_error[256];
static pthread_once_t gnutls_once = PTHREAD_ONCE_INIT;

/* The pthread_once routine: sets gnutls_verify_peers, or gnutls_error. */
static void gnutls_load(void) {
  void *lib = dlopen(GNUTLS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  void *sym = lib ? dlsym(lib, "gnutls_certificate_verify_peers2") : NULL;
  if (sym == NULL) {
    const char *why = dlerror();
    snprintf(gnutls_error, sizeof(gnutls_error), "%s", why ? why : "not found");
    return;
  }
  memcpy(&gnutls_verify_peers, &sym, sizeof(sym));
}

/* True when the client of conn presented a certificate that the client CA
 * signed and that is valid now. */
static bool client_verified(struct MHD_Connection *conn) {
  const union MHD_ConnectionInfo *ci =
      mhd.get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  unsigned int status = 1;
  return ci != NULL && ci->tls_session != NULL &&
         gnutls_verify_peers(ci->tls_session, &status) == 0 && status == 0;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Queues a response with a copy of body. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
                             const char *type, const void *body, size_t len) {
  struct MHD_Response *r =
      mhd.create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL)
    return MHD_NO;
  mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
  if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
    mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
    mhd.add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  if (status == MHD_HTTP_UNAUTHORIZED)
    mhd.add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, NL_HTTP_REALM);
  if (strcmp(type, HTML_TYPE) == 0)
    mhd.add_response_header(r, "Content-Security-Policy", PAGE_POLICY);
  enum MHD_Result ret = mhd.queue_response(conn, status, r);
  mhd.destroy_response(r);
  return ret;
}

/* Queues {"error": message} with the given status. */
static enum MHD_Result reply_error(struct MHD_Connection *conn, unsigned status,
                                   const char *message) {
  struct json_object *o = json_object_new_object();
  if (o != NULL)
    nl_json_add_string(o, "error", message);
  size_t len = 0;
  char *text = nl_json_take_text(o, &len);
  if (text == NULL)
    return MHD_NO;
  enum MHD_Result ret = reply(conn, status, JSON_TYPE, text, len);
  free(text);
  return ret;
}

/* Queues a copy of one of the swapped-in documents. */
static enum MHD_Result reply_document(nl_http *h, struct MHD_Connection *conn,
                                      char *const *doc, const size_t *len) {
  enum MHD_Result ret = MHD_NO;
  bool have = false;
  pthread_mutex_lock(&h->doc_lock);
  if (*doc != NULL) {
    have = true;
    ret = reply(conn, MHD_HTTP_OK, JSON_TYPE, *doc, *len);
  }
  pthread_mutex_unlock(&h->doc_lock);
  return have
             ? ret
             : reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
}

/* Reads a whole-number query argument name (at most max) into *out;
 * absent leaves it. Returns false when present but not such a number. */
static bool query_number(struct MHD_Connection *conn, const char *name,
                         size_t max, size_t *out) {
  const char *v =
      mhd.lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
  if (v == NULL)
    return true;
  size_t n = 0;
  if (v[0] == '\0' || strlen(v) > 9)
    return false;
  for (const char *c = v; *c; c++) {
    if (*c < '0' || *c > '9')
      return false;
    n = n * 10 + (size_t)(*c - '0');
  }
  if (n > max)
    return false;
  *out = n;
  return true;
}

/* Reads the query argument name, percent-decoded once (the server keeps
 * escapes as received), into out (NL_NAME_MAX + 1 bytes). Returns 1 when
 * present, 0 when absent, -1 when it cannot be decoded or is too long. */
static int query_text(struct MHD_Connection *conn, const char *name,
                      char *out) {
  const char *v =
      mhd.lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
  if (v == NULL)
    return 0;
  return nl_route_decode(v, strlen(v), out, NL_NAME_MAX + 1) < 0 ? -1 : 1;
}

/* GET /api/streams[?offset=&limit=&q=&stream=&state=&consumers=]: a page
 * of the streams of the latest poll (docs/rest-api.md). */
static enum MHD_Result reply_streams(nl_http *h, struct MHD_Connection *conn) {
  nl_view_streams_query q = {0};
  char text_q[NL_NAME_MAX + 1], stream[NL_NAME_MAX + 1];
  char state[NL_NAME_MAX + 1], which[NL_NAME_MAX + 1];
  char account[NL_NAME_MAX + 1];
  int has_account = query_text(conn, "account", account);
  int has_q = query_text(conn, "q", text_q);
  int has_stream = query_text(conn, "stream", stream);
  int has_state = query_text(conn, "state", state);
  int has_which = query_text(conn, "consumers", which);
  if (has_q < 0 || has_stream < 0 || has_state < 0 || has_which < 0 ||
      has_account < 0)
    return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                       "a query argument has a bad escape, a control "
                       "character, or more than 1024 bytes");
  q.q = has_q ? text_q : NULL;
  q.stream = has_stream ? stream : NULL;
  q.account = has_account ? account : NULL;
  q.state = has_state ? state : NULL;
  if (has_which && strcmp(which, "problem") != 0 && strcmp(which, "all") != 0)
    return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                       "consumers is all or problem");
  q.problems_only = has_which && strcmp(which, "problem") == 0;
  if (!query_number(conn, "offset", 100000000, &q.offset) ||
      !query_number(conn, "limit", 100000, &q.limit))
    return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                       "offset and limit are whole numbers (limit at most "
                       "100000)");
  if (q.state != NULL && strcmp(q.state, "ok") != 0 &&
      strcmp(q.state, "warning") != 0 && strcmp(q.state, "critical") != 0 &&
      strcmp(q.state, "problem") != 0)
    return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                       "state is ok, warning, critical or problem");
  size_t len = 0;
  pthread_mutex_lock(&h->doc_lock);
  char *text =
      nl_view_streams_page(&h->streams, &q, h->instance, now_ns(), &len);
  pthread_mutex_unlock(&h->doc_lock);
  if (text == NULL)
    return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
  enum MHD_Result ret = reply(conn, MHD_HTTP_OK, JSON_TYPE, text, len);
  free(text);
  return ret;
}

/* GET /healthz. Open to all, it tells the whole state (instance, counts,
 * the last error) only when detail is set: without basic authentication,
 * or to a user. */
static enum MHD_Result reply_healthz(nl_http *h, struct MHD_Connection *conn,
                                     bool detail) {
  struct json_object *o = json_object_new_object();
  if (o == NULL)
    return MHD_NO;
  int64_t now = now_ns();
  pthread_mutex_lock(&h->doc_lock);
  /* An overdue poll (the poll thread stuck in a request, or collectd no
   * longer reading) makes the documents stale, whatever the last poll
   * said. */
  bool stale = h->polls > 0 && h->stale_after_ns > 0 &&
               now - h->last_poll_ns > h->stale_after_ns;
  const char *status = h->polls == 0 ? "starting"
                       : stale       ? "stale"
                       : h->last_ok  ? "ok"
                                     : "failing";
  bool ok = h->polls > 0 && h->last_ok && !stale;
  nl_json_add_string(o, "status", status);
  nl_json_add_time(o, "generated_at", now);
  if (detail) {
    nl_json_add_string(o, "instance", h->instance);
    nl_json_add_number(o, "stale_after_s", (double)h->stale_after_ns / 1e9);
    nl_json_add_number(o, "polls", (double)h->polls);
    nl_json_add_number(o, "failed_polls", (double)h->failed_polls);
    nl_json_add_time(o, "last_poll_at", h->last_poll_ns);
    nl_json_add_time(o, "last_success_at", h->last_success_ns);
    nl_json_add_string(o, "last_error", h->last_ok ? NULL : h->last_error);
  }
  pthread_mutex_unlock(&h->doc_lock);
  size_t len = 0;
  char *text = nl_json_take_text(o, &len);
  if (text == NULL)
    return MHD_NO;
  enum MHD_Result ret =
      reply(conn, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, JSON_TYPE,
            text, len);
  free(text);
  return ret;
}

/* Finds the kept document of stream/consumer; call with doc_lock held.
 * Returns it or NULL. */
static history_doc *history_find(nl_http *h, const nl_engine *e,
                                 const char *stream, const char *consumer) {
  for (size_t i = 0; i < h->n_history; i++)
    if (h->history[i].engine == e &&
        strcmp(h->history[i].stream, stream) == 0 &&
        strcmp(h->history[i].consumer, consumer) == 0)
      return &h->history[i];
  return NULL;
}

/* Keeps text (taken; NULL until history_refresh renders it) as the document
 * of stream/consumer: in its own entry, a free one, or the one asked for
 * longest ago; call with doc_lock held. */
static void history_keep(nl_http *h, nl_engine *e, const char *stream,
                         const char *consumer, char *text, size_t len,
                         int64_t now) {
  history_doc *d = history_find(h, e, stream, consumer);
  bool fresh = d == NULL;
  if (d == NULL && h->n_history < NL_HTTP_HISTORY_KEPT) {
    d = &h->history[h->n_history++];
    d->text = NULL;
  }
  if (d == NULL) {
    d = &h->history[0];
    for (size_t i = 1; i < h->n_history; i++)
      if (h->history[i].asked_ns < d->asked_ns)
        d = &h->history[i];
  }
  if (fresh)
    d->longer = (nl_series){0};
  free(d->text);
  d->engine = e;
  snprintf(d->stream, sizeof(d->stream), "%s", stream);
  snprintf(d->consumer, sizeof(d->consumer), "%s", consumer);
  d->text = text;
  d->len = len;
  d->asked_ns = now;
}

/* Waits at most NL_HTTP_HISTORY_WAIT_MS for the registry lock. */
static bool registry_lock_bounded(nl_http *h) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_nsec += (long)NL_HTTP_HISTORY_WAIT_MS * 1000000L;
  until.tv_sec += until.tv_nsec / 1000000000L;
  until.tv_nsec %= 1000000000L;
  return pthread_mutex_timedlock(&h->registry_lock, &until) == 0;
}

/* GET /api/history/<stream>/<consumer>. A consumer asked for recently is
 * answered from its document rendered after the latest poll, without
 * waiting. Another is rendered from the registry (waiting at most
 * NL_HTTP_HISTORY_WAIT_MS for an apply in progress, else 503 with
 * Retry-After) and kept from then on. */
static enum MHD_Result reply_history(nl_http *h, struct MHD_Connection *conn,
                                     const char *stream, const char *consumer) {
  int64_t now = now_ns();
  char account[NL_NAME_MAX + 1] = "";
  int has_account = query_text(conn, "account", account);
  if (has_account < 0)
    return reply_error(conn, MHD_HTTP_BAD_REQUEST, "bad account argument");
  if (h->engine == NULL && has_account == 0)
    return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                       "this instance watches every account: name it, as "
                       "in ?account=NAME");
  pthread_mutex_lock(&h->doc_lock);
  nl_engine *e = h->engine;
  for (size_t i = 0; e == NULL && i < h->n_accounts; i++)
    if (strcmp(h->accounts[i].account, account) == 0)
      e = h->accounts[i].engine;
  if (e == NULL) {
    pthread_mutex_unlock(&h->doc_lock);
    return reply_error(conn, MHD_HTTP_NOT_FOUND, "no such account");
  }
  history_doc *d = history_find(h, e, stream, consumer);
  if (d != NULL && d->text != NULL) {
    d->asked_ns = now;
    enum MHD_Result ret = reply(conn, MHD_HTTP_OK, JSON_TYPE, d->text, d->len);
    pthread_mutex_unlock(&h->doc_lock);
    return ret;
  }
  pthread_mutex_unlock(&h->doc_lock);
  if (!registry_lock_bounded(h))
    return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
                       "a poll is being applied: retry in a second");
  bool found = false;
  size_t len = 0;
  char *text = nl_view_history(nl_engine_registry(e), stream, consumer,
                               h->instance, now, &found, &len);
  pthread_mutex_unlock(&h->registry_lock);
  if (!found)
    return reply_error(conn, MHD_HTTP_NOT_FOUND, "no such stream/consumer");
  if (text == NULL)
    return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
  enum MHD_Result ret = reply(conn, MHD_HTTP_OK, JSON_TYPE, text, len);
  pthread_mutex_lock(&h->doc_lock);
  history_keep(h, e, stream, consumer, text, len, now);
  pthread_mutex_unlock(&h->doc_lock);
  return ret;
}

/* Keeps the history of every consumer with an active finding (its longer
 * history starts with the finding, watched or not): a new one gets an
 * entry without text, which history_refresh renders. Call with doc_lock
 * held and the registry stable. */
static void history_keep_findings(nl_http *h, nl_engine *e, int64_t now) {
  nl_active *list = NULL;
  size_t n = 0;
  if (nl_engine_active(e, NULL, NULL, &list, &n) != 0)
    return;
  for (size_t i = 0; i < n; i++) {
    if (list[i].consumer == NULL || list[i].consumer[0] == '\0')
      continue;
    history_doc *d = history_find(h, e, list[i].stream, list[i].consumer);
    if (d != NULL)
      d->asked_ns = now;
    else
      history_keep(h, e, list[i].stream, list[i].consumer, NULL, 0, now);
  }
  free(list);
}

/* Renders the kept history documents of engine e again from its registry
 * (stable: the caller holds its engine lock), after keeping those of consumers
 * with a finding (after a poll) and adding the latest poll to each one's longer
 * history, and drops those of consumers that are gone or not asked for in
 * NL_HTTP_HISTORY_KEEP_NS. Holds doc_lock throughout (a few milliseconds
 * at 64 documents): requests wait for that, never for a poll. */
static void history_refresh(nl_http *h, nl_engine *e, int64_t now,
                            bool polled) {
  nl_registry *reg = nl_engine_registry(e);
  pthread_mutex_lock(&h->doc_lock);
  if (polled)
    history_keep_findings(h, e, now);
  for (size_t i = 0; i < h->n_history;) {
    history_doc *d = &h->history[i];
    if (d->engine != e) {
      i++;
      continue;
    }
    const nl_consumer_state *st = nl_registry_find(reg, d->stream, d->consumer);
    if (st == NULL || now - d->asked_ns > NL_HTTP_HISTORY_KEEP_NS) {
      free(d->text);
      *d = h->history[--h->n_history];
      continue;
    }
    const nl_sample *s0 = nl_state_latest(st);
    if (s0 != NULL)
      nl_series_add(&d->longer, s0->t_ns, s0->num_pending, s0->num_ack_pending,
                    s0->redeliveries);
    bool found = false;
    size_t len = 0;
    char *text =
        nl_view_history_series(reg, d->stream, d->consumer, h->instance, now,
                               &d->longer, &found, &len);
    if (text != NULL) {
      free(d->text);
      d->text = text;
      d->len = len;
    }
    i++;
  }
  pthread_mutex_unlock(&h->doc_lock);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
                              const char *url, const char *method,
                              const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
  (void)version;
  (void)upload_data;
  (void)upload_data_size;
  (void)con_cls;
  nl_http *h = cls;
  /* With a client CA, no path answers a client without its certificate. */
  if (h->tls.client_ca_pem != NULL && !client_verified(conn))
    return reply_error(conn, MHD_HTTP_FORBIDDEN,
                       "a client certificate signed by the ListenClientCA "
                       "authority is needed");
  char stream[NL_NAME_MAX + 1], consumer[NL_NAME_MAX + 1];
  nl_route route = nl_route_parse(url, stream, consumer, sizeof(stream));
  bool user =
      h->auth == NULL ||
      nl_auth_check(h->auth,
                    mhd.lookup_connection_value(conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION));
  if (!user && route != NL_ROUTE_HEALTHZ)
    return reply_error(conn, MHD_HTTP_UNAUTHORIZED,
                       "a user name and password are needed");
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return reply_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                       "only GET and HEAD are allowed");
  switch (route) {
  case NL_ROUTE_INDEX:
    return reply(conn, MHD_HTTP_OK, HTML_TYPE, nl_dashboard_html,
                 nl_dashboard_html_len);
  case NL_ROUTE_HEALTHZ:
    return reply_healthz(h, conn, user);
  case NL_ROUTE_VIOLATIONS:
    return reply_document(h, conn, &h->violations, &h->violations_len);
  case NL_ROUTE_STREAMS:
    return reply_streams(h, conn);
  case NL_ROUTE_HISTORY:
    return reply_history(h, conn, stream, consumer);
  case NL_ROUTE_BAD_NAME:
    return reply_error(conn, MHD_HTTP_BAD_REQUEST,
                       "bad stream or consumer name in the path");
  case NL_ROUTE_NOT_FOUND:
  default:
    return reply_error(conn, MHD_HTTP_NOT_FOUND, "no such path");
  }
}

/* Keeps the path exactly as received: nl_route decodes each segment on its
 * own, so "%2F" in a name is not a separator and "%00" is refused. */
static size_t keep_escapes(void *cls, struct MHD_Connection *c, char *s) {
  (void)cls;
  (void)c;
  return strlen(s);
}

/* Opens a listening socket on host:port. Returns it, or -1 with err. */
static int listen_on(const char *host, const char *port, char *err,
                     size_t errlen) {
  char *end = NULL;
  long p = strtol(port, &end, 10);
  if (port[0] == '\0' || *end != '\0' || p < 1 || p > 65535) {
    snprintf(err, errlen, "Listen: port \"%s\" is not a number from 1 to 65535",
             port);
    return -1;
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC,
                           .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
  struct addrinfo *res = NULL;
  int rc = getaddrinfo(host, port, &hints, &res);
  if (rc != 0) {
    snprintf(err, errlen, "Listen: cannot resolve \"%s\": %s", host,
             gai_strerror(rc));
    return -1;
  }
  int fd = -1, saved = 0;
  for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      saved = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
      saved = errno;
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0)
    snprintf(err, errlen, "Listen: cannot listen on %s port %s: %s", host, port,
             strerror(saved));
  return fd;
}

/* Keeps a copy of the PEM texts of tls in h, after checking that the
 * library can serve TLS (and check client certificates, with a client
 * CA). Returns 0, or -1 with err. */
static int use_tls(nl_http *h, const nl_tls_files *tls, char *err,
                   size_t errlen) {
  if (mhd.is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
    snprintf(err, errlen,
             "ListenTLSCert: " MHD_LIBRARY " was built without TLS support");
    return -1;
  }
  if (tls->client_ca_pem != NULL) {
    pthread_once(&gnutls_once, gnutls_load);
    if (gnutls_verify_peers == NULL) {
      snprintf(err, errlen,
               "ListenClientCA needs " GNUTLS_LIBRARY " to check client "
               "certificates: %s",
               gnutls_error);
      return -1;
    }
  }
  h->tls.cert_pem = strdup(tls->cert_pem);
  h->tls.key_pem = strdup(tls->key_pem);
  if (tls->client_ca_pem != NULL)
    h->tls.client_ca_pem = strdup(tls->client_ca_pem);
  if (h->tls.cert_pem == NULL || h->tls.key_pem == NULL ||
      (tls->client_ca_pem != NULL && h->tls.client_ca_pem == NULL)) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  return 0;
}

int nl_http_create(const nl_http_config *cfg, nl_http **out, char *err,
                   size_t errlen) {
  *out = NULL;
  if (mhd_open(err, errlen) != 0)
    return NL_HTTP_NO_LIBRARY;
  nl_http *h = calloc(1, sizeof(*h));
  if (h == NULL || (h->instance = strdup(cfg->instance)) == NULL) {
    free(h);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  h->engine = cfg->engine;
  h->stale_after_ns = cfg->stale_after_ns;
  h->auth = cfg->auth;
  h->fd = -1;
  pthread_mutex_init(&h->registry_lock, NULL);
  pthread_mutex_init(&h->doc_lock, NULL);
  if (cfg->tls != NULL && use_tls(h, cfg->tls, err, errlen) != 0) {
    nl_http_stop(h);
    return -1;
  }
  /* Documents for the time before the first poll. */
  nl_snapshot_set empty = {0};
  if (h->engine != NULL)
    nl_http_update(h, &empty, 0);
  else
    nl_http_publish(h, 0);
  h->fd = listen_on(cfg->host, cfg->port, err, errlen);
  if (h->fd < 0) {
    nl_http_stop(h);
    return -1;
  }
  *out = h;
  return 0;
}

int nl_http_serve(nl_http *h, char *err, size_t errlen) {
  if (h == NULL || h->daemon != NULL)
    return 0;
  /* One polling thread answers every connection. A client may hold at
   * most NL_HTTP_PER_CLIENT of them, and a connection that sends nothing
   * for NL_HTTP_IDLE_S seconds is closed: a few slow or idle clients
   * (slowloris) cannot take every slot. */
  bool tls = h->tls.cert_pem != NULL;
  struct MHD_OptionItem tls_options[] = {
      {MHD_OPTION_HTTPS_MEM_CERT, 0, h->tls.cert_pem},
      {MHD_OPTION_HTTPS_MEM_KEY, 0, h->tls.key_pem},
      {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)NL_HTTP_TLS_PRIORITIES},
      {h->tls.client_ca_pem ? MHD_OPTION_HTTPS_MEM_TRUST : MHD_OPTION_END, 0,
       h->tls.client_ca_pem},
      {MHD_OPTION_END, 0, NULL}};
  h->daemon = mhd.start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | (tls ? MHD_USE_TLS : 0),
      0, NULL, NULL, handle, h, MHD_OPTION_LISTEN_SOCKET, h->fd,
      MHD_OPTION_CONNECTION_LIMIT, (unsigned)NL_HTTP_CONNECTIONS,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)NL_HTTP_PER_CLIENT,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)NL_HTTP_IDLE_S,
      MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes, NULL, MHD_OPTION_ARRAY,
      tls ? tls_options : &tls_options[4], MHD_OPTION_END);
  if (h->daemon == NULL) {
    snprintf(err, errlen,
             tls ? "Listen: the HTTPS server did not start (GnuTLS refused "
                   "ListenTLSCert, ListenTLSKey or ListenClientCA)"
                 : "Listen: the HTTP server did not start");
    return -1;
  }
  h->fd = -1; /* The daemon owns the socket now and closes it on stop. */
  return 0;
}

void nl_http_stop(nl_http *h) {
  if (h == NULL)
    return;
  if (h->daemon != NULL)
    mhd.stop_daemon(h->daemon);
  if (h->fd >= 0)
    close(h->fd);
  pthread_mutex_destroy(&h->registry_lock);
  pthread_mutex_destroy(&h->doc_lock);
  for (size_t i = 0; i < h->n_history; i++)
    free(h->history[i].text);
  free(h->violations);
  nl_view_streams_doc_free(&h->streams);
  for (size_t i = 0; i < h->n_accounts; i++) {
    free(h->accounts[i].account);
    json_object_put(h->accounts[i].active);
    json_object_put(h->accounts[i].resolved);
    nl_view_streams_doc_free(&h->accounts[i].streams);
  }
  free(h->accounts);
  free(h->instance);
  nl_tls_files_free(&h->tls);
  free(h);
}

void nl_http_lock(nl_http *h) {
  if (h != NULL)
    pthread_mutex_lock(&h->registry_lock);
}

void nl_http_unlock(nl_http *h) {
  if (h != NULL)
    pthread_mutex_unlock(&h->registry_lock);
}

/* Swaps in a new violations document (taken, NULL: keep the old) and
 * streams document (taken when have_streams), and counts a poll at poll_ns
 * (0: none). */
static void swap_documents(nl_http *h, char *v, size_t vlen,
                           nl_view_streams_doc *s, bool have_streams,
                           int64_t poll_ns) {
  pthread_mutex_lock(&h->doc_lock);
  if (v != NULL) {
    free(h->violations);
    h->violations = v;
    h->violations_len = vlen;
  }
  nl_view_streams_doc old = {0};
  if (have_streams) {
    old = h->streams;
    h->streams = *s;
  }
  if (poll_ns != 0) {
    h->polls++;
    h->last_poll_ns = poll_ns;
    h->last_success_ns = poll_ns;
    h->last_ok = true;
    h->last_error[0] = '\0';
  }
  pthread_mutex_unlock(&h->doc_lock);
  nl_view_streams_doc_free(&old);
}

void nl_http_update_account(nl_http *h, const char *account, nl_engine *e,
                            const nl_snapshot_set *set, int64_t poll_ns) {
  if (h == NULL)
    return;
  int64_t now = now_ns();
  struct json_object *active = NULL, *resolved = NULL;
  nl_view_violation_arrays(e, h->instance, account, &active, &resolved);
  nl_view_streams_doc s;
  bool have_streams =
      nl_view_streams_parts_account(set, e, account, poll_ns, &s) == 0;
  pthread_mutex_lock(&h->doc_lock);
  account_scope *a = NULL;
  for (size_t i = 0; a == NULL && i < h->n_accounts; i++)
    if (h->accounts[i].engine == e)
      a = &h->accounts[i];
  if (a == NULL) {
    account_scope *grown =
        realloc(h->accounts, (h->n_accounts + 1) * sizeof(*grown));
    char *name = strdup(account);
    if (grown != NULL)
      h->accounts = grown;
    if (grown != NULL && name != NULL) {
      a = &h->accounts[h->n_accounts++];
      *a = (account_scope){.account = name, .engine = e};
    } else
      free(name);
  }
  nl_view_streams_doc old = {0};
  if (a != NULL && active != NULL) {
    json_object_put(a->active);
    json_object_put(a->resolved);
    a->active = active;
    a->resolved = resolved;
    active = resolved = NULL;
  }
  if (a != NULL && have_streams) {
    old = a->streams;
    a->streams = s;
    have_streams = false;
  }
  pthread_mutex_unlock(&h->doc_lock);
  json_object_put(active);
  json_object_put(resolved);
  nl_view_streams_doc_free(&old);
  if (have_streams)
    nl_view_streams_doc_free(&s);
  history_refresh(h, e, now, poll_ns != 0);
}

void nl_http_publish(nl_http *h, int64_t poll_ns) {
  if (h == NULL)
    return;
  pthread_mutex_lock(&h->doc_lock);
  size_t n = h->n_accounts;
  struct json_object **active = calloc(n ? n : 1, sizeof(*active));
  struct json_object **resolved = calloc(n ? n : 1, sizeof(*resolved));
  nl_view_streams_doc *docs = calloc(n ? n : 1, sizeof(*docs));
  char *v = NULL;
  size_t vlen = 0;
  nl_view_streams_doc s;
  bool have_streams = false;
  if (active != NULL && resolved != NULL && docs != NULL) {
    for (size_t i = 0; i < n; i++) {
      active[i] = h->accounts[i].active;
      resolved[i] = h->accounts[i].resolved;
      docs[i] = h->accounts[i].streams;
    }
    v = nl_view_violations_merged(active, resolved, n, h->instance, now_ns(),
                                  &vlen);
    /* Each account's parts move into the served document: every account
     * renders new ones each poll (nl_http_update_account) before this. */
    have_streams = nl_view_streams_merge(docs, n, &s) == 0;
    for (size_t i = 0; have_streams && i < n; i++)
      h->accounts[i].streams = (nl_view_streams_doc){0};
  }
  pthread_mutex_unlock(&h->doc_lock);
  free(active);
  free(resolved);
  free(docs);
  swap_documents(h, v, vlen, &s, have_streams, poll_ns);
}

void nl_http_update(nl_http *h, const nl_snapshot_set *set, int64_t poll_ns) {
  if (h == NULL)
    return;
  /* Whatever changes the engine (a poll, an advisory) does so under the
   * instance's engine lock, which the caller holds: reading it here needs
   * no registry lock. */
  int64_t now = now_ns();
  size_t vlen = 0;
  char *v = nl_view_violations(h->engine, h->instance, now, &vlen);
  nl_view_streams_doc s;
  bool have_streams = nl_view_streams_parts(set, h->engine, poll_ns, &s) == 0;
  swap_documents(h, v, vlen, &s, have_streams, poll_ns);
  history_refresh(h, h->engine, now, poll_ns != 0);
}

void nl_http_poll_failed(nl_http *h, const char *why, int64_t poll_ns) {
  if (h == NULL)
    return;
  pthread_mutex_lock(&h->doc_lock);
  h->polls++;
  h->failed_polls++;
  h->last_poll_ns = poll_ns;
  h->last_ok = false;
  snprintf(h->last_error, sizeof(h->last_error), "%s", why ? why : "");
  pthread_mutex_unlock(&h->doc_lock);
}
