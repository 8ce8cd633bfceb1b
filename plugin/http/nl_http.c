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

#include "core/nl_json.h"
#include "core/nl_view.h"
#include "nl_route.h"

/* The dashboard page, embedded at build time from plugin/??/nl_dashboard.html
 * (static const unsigned char nl_dashboard_html[], nl_dashboard_html_len). */
#include "nl_dashboard_html.h"

/* Connections in all, per client address, and the seconds a connection
 * may stay silent before it is closed. */
#define NL_HTTP_CONNECTIONS 256
#define NL_HTTP_PER_CLIENT 16
#define NL_HTTP_IDLE_S 5

/* History documents kept rendered (one per consumer asked for), how long
 * one is kept after the last request for it, and how long a request for a
 * consumer not yet kept may wait for an apply in progress. */
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
  char stream[NL_NAME_MAX + 1];
  char consumer[NL_NAME_MAX + 1];
  char *text;
  size_t len;
  int64_t asked_ns; /* The latest request for it. */
} history_doc;

struct nl_http {
  struct MHD_Daemon *daemon;
  int fd;
  char *instance;
  nl_engine *engine;
  int64_t stale_after_ns; /* Documents older than this are stale. */
  /* The registry lock: held by the poller while it changes the registry,
   * and by /api/history while it renders a consumer not yet kept. */
  pthread_mutex_t registry_lock;
  /* The document lock: guards the fields below, held only to swap or copy. */
  pthread_mutex_t doc_lock;
  char *violations;
  size_t violations_len;
  char *streams;
  size_t streams_len;
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
                 MHD_SYMBOL(destroy_response)};
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

static enum MHD_Result reply_healthz(nl_http *h, struct MHD_Connection *conn) {
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
  nl_json_add_string(o, "instance", h->instance);
  nl_json_add_time(o, "generated_at", now);
  nl_json_add_number(o, "stale_after_s", (double)h->stale_after_ns / 1e9);
  nl_json_add_number(o, "polls", (double)h->polls);
  nl_json_add_number(o, "failed_polls", (double)h->failed_polls);
  nl_json_add_time(o, "last_poll_at", h->last_poll_ns);
  nl_json_add_time(o, "last_success_at", h->last_success_ns);
  nl_json_add_string(o, "last_error", h->last_ok ? NULL : h->last_error);
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
static history_doc *history_find(nl_http *h, const char *stream,
                                 const char *consumer) {
  for (size_t i = 0; i < h->n_history; i++)
    if (strcmp(h->history[i].stream, stream) == 0 &&
        strcmp(h->history[i].consumer, consumer) == 0)
      return &h->history[i];
  return NULL;
}

/* Keeps text (taken) as the document of stream/consumer: in its own entry,
 * a free one, or the one asked for longest ago; call with doc_lock held. */
static void history_keep(nl_http *h, const char *stream, const char *consumer,
                         char *text, size_t len, int64_t now) {
  history_doc *d = history_find(h, stream, consumer);
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
  free(d->text);
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
  pthread_mutex_lock(&h->doc_lock);
  history_doc *d = history_find(h, stream, consumer);
  if (d != NULL) {
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
  char *text = nl_view_history(nl_engine_registry(h->engine), stream, consumer,
                               h->instance, now, &found, &len);
  pthread_mutex_unlock(&h->registry_lock);
  if (!found)
    return reply_error(conn, MHD_HTTP_NOT_FOUND, "no such stream/consumer");
  if (text == NULL)
    return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "out of memory");
  enum MHD_Result ret = reply(conn, MHD_HTTP_OK, JSON_TYPE, text, len);
  pthread_mutex_lock(&h->doc_lock);
  history_keep(h, stream, consumer, text, len, now);
  pthread_mutex_unlock(&h->doc_lock);
  return ret;
}

/* Renders the kept history documents again from the registry (stable: the
 * caller holds the engine lock), dropping those of consumers that are gone
 * or not asked for in NL_HTTP_HISTORY_KEEP_NS. */
static void history_refresh(nl_http *h, int64_t now) {
  pthread_mutex_lock(&h->doc_lock);
  size_t n = h->n_history;
  history_doc keep[NL_HTTP_HISTORY_KEPT];
  memcpy(keep, h->history, n * sizeof(*keep));
  pthread_mutex_unlock(&h->doc_lock);
  /* Rendered outside doc_lock, so requests go on meanwhile; each entry is
   * found again by its names afterwards (a request may have added or
   * replaced entries in between). */
  char *texts[NL_HTTP_HISTORY_KEPT];
  size_t lens[NL_HTTP_HISTORY_KEPT];
  bool gone[NL_HTTP_HISTORY_KEPT];
  for (size_t i = 0; i < n; i++) {
    bool found = false;
    texts[i] = NULL;
    lens[i] = 0;
    gone[i] = now - keep[i].asked_ns > NL_HTTP_HISTORY_KEEP_NS;
    if (!gone[i]) {
      texts[i] =
          nl_view_history(nl_engine_registry(h->engine), keep[i].stream,
                          keep[i].consumer, h->instance, now, &found, &lens[i]);
      gone[i] = !found;
    }
  }
  pthread_mutex_lock(&h->doc_lock);
  for (size_t i = 0; i < n; i++) {
    history_doc *d = history_find(h, keep[i].stream, keep[i].consumer);
    if (d == NULL) {
      free(texts[i]);
      continue;
    }
    if (gone[i]) {
      free(texts[i]);
      free(d->text);
      *d = h->history[--h->n_history];
    } else if (texts[i] != NULL) {
      free(d->text);
      d->text = texts[i];
      d->len = lens[i];
    }
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
  if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
      strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
    return reply_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
                       "only GET and HEAD are allowed");
  char stream[NL_NAME_MAX + 1], consumer[NL_NAME_MAX + 1];
  switch (nl_route_parse(url, stream, consumer, sizeof(stream))) {
  case NL_ROUTE_INDEX:
    return reply(conn, MHD_HTTP_OK, HTML_TYPE, nl_dashboard_html,
                 nl_dashboard_html_len);
  case NL_ROUTE_HEALTHZ:
    return reply_healthz(h, conn);
  case NL_ROUTE_VIOLATIONS:
    return reply_document(h, conn, &h->violations, &h->violations_len);
  case NL_ROUTE_STREAMS:
    return reply_document(h, conn, &h->streams, &h->streams_len);
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
  h->fd = -1;
  pthread_mutex_init(&h->registry_lock, NULL);
  pthread_mutex_init(&h->doc_lock, NULL);
  /* Documents for the time before the first poll. */
  nl_snapshot_set empty = {0};
  nl_http_update(h, &empty, 0);
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
  h->daemon = mhd.start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, handle, h,
      MHD_OPTION_LISTEN_SOCKET, h->fd, MHD_OPTION_CONNECTION_LIMIT,
      (unsigned)NL_HTTP_CONNECTIONS, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
      (unsigned)NL_HTTP_PER_CLIENT, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)NL_HTTP_IDLE_S, MHD_OPTION_UNESCAPE_CALLBACK, keep_escapes,
      NULL, MHD_OPTION_END);
  if (h->daemon == NULL) {
    snprintf(err, errlen, "Listen: the HTTP server did not start");
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
  free(h->streams);
  free(h->instance);
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

void nl_http_update(nl_http *h, const nl_snapshot_set *set, int64_t poll_ns) {
  if (h == NULL)
    return;
  /* Whatever changes the engine (a poll, an advisory) does so under the
   * instance's engine lock, which the caller holds: reading it here needs
   * no registry lock. */
  int64_t now = now_ns();
  size_t vlen = 0, slen = 0;
  char *v = nl_view_violations(h->engine, h->instance, now, &vlen);
  char *s = nl_view_streams(set, h->engine, h->instance, poll_ns, now, &slen);
  pthread_mutex_lock(&h->doc_lock);
  if (v != NULL) {
    free(h->violations);
    h->violations = v;
    h->violations_len = vlen;
    v = NULL;
  }
  if (s != NULL) {
    free(h->streams);
    h->streams = s;
    h->streams_len = slen;
    s = NULL;
  }
  if (poll_ns != 0) {
    h->polls++;
    h->last_poll_ns = poll_ns;
    h->last_success_ns = poll_ns;
    h->last_ok = true;
    h->last_error[0] = '\0';
  }
  pthread_mutex_unlock(&h->doc_lock);
  history_refresh(h, now);
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
