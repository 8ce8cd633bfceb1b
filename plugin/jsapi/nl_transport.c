/* nl_transport.c: the cnats connection of one instance. */
#include "nl_transport.h"

#include "nl_nkey.h"

#include <nats/nats.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct nl_transport {
  natsOptions *opts;
  natsConnection *conn;
  int64_t timeout_ms;
  atomic_uint_fast64_t disconnects;
  /* Set by the closed callback, the last one cnats makes for a connection:
   * nl_transport_free waits for it before freeing what callbacks use. */
  pthread_mutex_t lock;
  pthread_cond_t closed_cond;
  bool closed;
  /* Subscriptions made with nl_transport_subscribe. */
  struct nl_sub *subs;
  bool signs_nonce; /* NKey or credentials: see nl_nkey_connect. */
  bool closing;     /* nl_transport_close was called. */
  /* InboxPrefix, or "_INBOX": the start of nl_transport_gather's reply
   * subjects. */
  char inbox_prefix[256];
};

/* One subscription: the cnats handle and the receiver it calls. */
struct nl_sub {
  struct nl_sub *next;
  natsSubscription *sub;
  nl_message_fn fn;
  void *ud;
  bool draining; /* Set by end_subscriptions while it drains. */
};

/* Removes cnats' source locations ("(conn.c:2088): ") from err. */
static void drop_locations(char *err) {
  char *p;
  while ((p = strstr(err, ".c:")) != NULL) {
    char *open = p;
    while (open > err && *open != '(')
      open--;
    char *close = strstr(p, "): ");
    if (*open != '(' || close == NULL)
      return;
    memmove(open, close + 3, strlen(close + 3) + 1);
  }
}

/* Writes a cnats status and its last error detail into err, and returns
 * the kind of failure it is. */
static nl_transport_status status_text(natsStatus s, const char *what,
                                       char *err, size_t errlen) {
  const char *detail = nats_GetLastError(NULL);
  snprintf(err, errlen, "%s: %s%s%s", what, natsStatus_GetText(s),
           detail && detail[0] ? " (" : "", detail && detail[0] ? detail : "");
  if (detail && detail[0])
    strncat(err, ")", errlen - strlen(err) - 1);
  drop_locations(err);
  /* The server refuses a login with -ERR 'Authorization Violation' (or
   * 'Authentication Timeout'), which cnats may report under another
   * status. */
  if (s == NATS_CONNECTION_AUTH_FAILED || s == NATS_NOT_PERMITTED ||
      strstr(err, "Authorization Violation") != NULL ||
      strstr(err, "Authentication") != NULL)
    return NL_TRANSPORT_AUTH;
  if (s == NATS_TIMEOUT)
    return NL_TRANSPORT_TIMEOUT;
  if (s == NATS_NO_SERVER || s == NATS_CONNECTION_CLOSED ||
      s == NATS_CONNECTION_DISCONNECTED || s == NATS_IO_ERROR)
    return NL_TRANSPORT_UNREACHABLE;
  if (s == NATS_NO_RESPONDERS)
    return NL_TRANSPORT_NO_JETSTREAM;
  return NL_TRANSPORT_ERROR;
}

static void on_disconnect(natsConnection *nc, void *closure) {
  (void)nc;
  nl_transport *t = closure;
  atomic_fetch_add(&t->disconnects, 1);
}

static void on_closed(natsConnection *nc, void *closure) {
  (void)nc;
  nl_transport *t = closure;
  pthread_mutex_lock(&t->lock);
  t->closed = true;
  pthread_cond_signal(&t->closed_cond);
  pthread_mutex_unlock(&t->lock);
}

/* Waits (at most 5 s) until cnats has made its closed callback. */
static void wait_closed(nl_transport *t) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&t->lock);
  while (!t->closed &&
         pthread_cond_timedwait(&t->closed_cond, &t->lock, &until) == 0)
    ;
  pthread_mutex_unlock(&t->lock);
}

int nl_transport_create(const nl_transport_config *cfg, nl_transport **out,
                        char *err, size_t errlen) {
  *out = NULL;
  if (cfg->n_urls == 0) {
    snprintf(err, errlen, "no URL configured");
    return -1;
  }
  nl_transport *t = calloc(1, sizeof(*t));
  if (t == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  pthread_mutex_init(&t->lock, NULL);
  pthread_cond_init(&t->closed_cond, NULL);
  t->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : 2000;
  t->signs_nonce = cfg->nkey_seed_file != NULL || cfg->credentials_file != NULL;
  bool tls = cfg->tls_ca_file || cfg->tls_cert_file;
  for (size_t i = 0; i < cfg->n_urls; i++)
    if (strncmp(cfg->urls[i], "tls://", 6) == 0)
      tls = true;
  natsStatus s = natsOptions_Create(&t->opts);
  const char *step = "options";
  if (s == NATS_OK) {
    step = "URL";
    s = natsOptions_SetServers(t->opts, (const char **)cfg->urls,
                               (int)cfg->n_urls);
  }
  if (s == NATS_OK)
    s = natsOptions_SetTimeout(t->opts, t->timeout_ms);
  if (s == NATS_OK)
    s = natsOptions_SetName(t->opts, cfg->name ? cfg->name : "nats-lens");
  if (s == NATS_OK)
    s = natsOptions_SetIgnoreDiscoveredServers(t->opts,
                                               cfg->listed_servers_only);
  if (s == NATS_OK)
    s = natsOptions_SetMaxReconnect(t->opts, -1);
  if (s == NATS_OK)
    s = natsOptions_SetReconnectWait(t->opts, 1000);
  if (s == NATS_OK)
    s = natsOptions_SetDisconnectedCB(t->opts, on_disconnect, t);
  if (s == NATS_OK)
    s = natsOptions_SetClosedCB(t->opts, on_closed, t);
  /* A stalled server must not hold the read callback in a socket write. */
  if (s == NATS_OK)
    s = natsOptions_SetWriteDeadline(t->opts, t->timeout_ms);
  /* The advisory subscriptions share cnats' delivery thread instead of one
   * thread each: their callbacks only queue the message. */
  if (s == NATS_OK)
    s = natsOptions_UseGlobalMessageDelivery(t->opts, true);
  if (s == NATS_OK && cfg->user) {
    step = "User/Password";
    s = natsOptions_SetUserInfo(t->opts, cfg->user, cfg->password);
  }
  if (s == NATS_OK && cfg->token) {
    step = "Token";
    s = natsOptions_SetToken(t->opts, cfg->token);
  }
  if (s == NATS_OK && cfg->credentials_file) {
    step = "Credentials";
    s = natsOptions_SetUserCredentialsFromFiles(t->opts, cfg->credentials_file,
                                                NULL);
  }
  if (s == NATS_OK && cfg->nkey_seed_file) {
    /* cnats sends the public key it is given; work it out from the seed. */
    char pub[NL_NKEY_PUBLIC_LEN + 1], why[256];
    if (nl_nkey_public_from_seed_file(cfg->nkey_seed_file, pub, sizeof(pub),
                                      why, sizeof(why)) != 0) {
      snprintf(err, errlen, "NKeySeed: %s", why);
      nl_transport_free(t);
      return -1;
    }
    step = "NKeySeed";
    s = natsOptions_SetNKeyFromSeed(t->opts, pub, cfg->nkey_seed_file);
  }
  snprintf(t->inbox_prefix, sizeof(t->inbox_prefix), "%s",
           cfg->inbox_prefix ? cfg->inbox_prefix : "_INBOX");
  if (s == NATS_OK && cfg->inbox_prefix) {
    step = "InboxPrefix";
    /* Kept whole for nl_transport_gather's reply subjects. */
    s = strlen(cfg->inbox_prefix) < sizeof(t->inbox_prefix)
            ? natsOptions_SetCustomInboxPrefix(t->opts, cfg->inbox_prefix)
            : NATS_INVALID_ARG;
  }
  if (s == NATS_OK && tls) {
    step = "TLS";
    s = natsOptions_SetSecure(t->opts, true);
  }
  if (s == NATS_OK && cfg->tls_ca_file) {
    step = "TLSCA";
    s = natsOptions_LoadCATrustedCertificates(t->opts, cfg->tls_ca_file);
  }
  if (s == NATS_OK && (cfg->tls_cert_file || cfg->tls_key_file)) {
    step = "TLSCert/TLSKey";
    s = natsOptions_LoadCertificatesChain(t->opts, cfg->tls_cert_file,
                                          cfg->tls_key_file);
  }
  if (s != NATS_OK) {
    status_text(s, step, err, errlen);
    nl_transport_free(t);
    return -1;
  }
  *out = t;
  return 0;
}

int nl_transport_connect(nl_transport *t, char *err, size_t errlen) {
  if (t->conn != NULL) {
    if (nl_transport_connected(t))
      return 0;
    snprintf(err, errlen, "connection lost, cnats is reconnecting");
    return NL_TRANSPORT_UNREACHABLE;
  }
  natsStatus s = nl_nkey_connect(&t->conn, t->opts, t->signs_nonce);
  if (s != NATS_OK) {
    t->conn = NULL;
    return status_text(s, "connect", err, errlen);
  }
  return NL_TRANSPORT_OK;
}

bool nl_transport_connected(nl_transport *t) {
  return t->conn != NULL &&
         natsConnection_Status(t->conn) == NATS_CONN_STATUS_CONNECTED;
}

int nl_transport_server_id(nl_transport *t, char *buf, size_t len) {
  if (len > 0)
    buf[0] = '\0';
  if (!nl_transport_connected(t) ||
      natsConnection_GetConnectedServerId(t->conn, buf, len) != NATS_OK ||
      buf[0] == '\0') {
    if (len > 0)
      buf[0] = '\0';
    return -1;
  }
  return 0;
}

uint64_t nl_transport_disconnects(nl_transport *t) {
  return atomic_load(&t->disconnects);
}

int nl_transport_request(void *ctx, const char *subject, const char *payload,
                         char **reply, size_t *reply_len, char *err,
                         size_t errlen) {
  nl_transport *t = ctx;
  *reply = NULL;
  *reply_len = 0;
  if (!nl_transport_connected(t)) {
    snprintf(err, errlen, "not connected (cnats is reconnecting)");
    return NL_TRANSPORT_UNREACHABLE;
  }
  natsMsg *msg = NULL;
  natsStatus s = natsConnection_RequestString(&msg, t->conn, subject, payload,
                                              t->timeout_ms);
  if (s == NATS_NO_RESPONDERS) {
    snprintf(err, errlen,
             "no responders: JetStream is not enabled for this account or "
             "server");
    return NL_TRANSPORT_NO_JETSTREAM;
  }
  if (s == NATS_TIMEOUT) {
    snprintf(err, errlen, "no reply within %lld ms", (long long)t->timeout_ms);
    return NL_TRANSPORT_TIMEOUT;
  }
  if (s != NATS_OK)
    return status_text(s, "request", err, errlen);
  int len = natsMsg_GetDataLength(msg);
  char *copy = malloc((size_t)len + 1);
  if (copy == NULL) {
    natsMsg_Destroy(msg);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  memcpy(copy, natsMsg_GetData(msg), (size_t)len);
  copy[len] = '\0';
  natsMsg_Destroy(msg);
  *reply = copy;
  *reply_len = (size_t)len;
  return 0;
}

static int64_t monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* After a gather that received nothing: when the server refused this
 * connection a publish or subscription naming subject (its last
 * asynchronous error), writes why into err and returns true. */
static bool refused(nl_transport *t, const char *subject, char *err,
                    size_t errlen) {
  const char *text = NULL;
  natsStatus s = natsConnection_GetLastError(t->conn, &text);
  if (s != NATS_NOT_PERMITTED || text == NULL || strstr(text, subject) == NULL)
    return false;
  snprintf(err, errlen, "the server refused it: %s", text);
  return true;
}

int nl_transport_gather(void *ctx, const char *subject, const char *payload,
                        nl_reply_fn fn, void *ud, char *err, size_t errlen) {
  nl_transport *t = ctx;
  if (!nl_transport_connected(t)) {
    snprintf(err, errlen, "not connected (cnats is reconnecting)");
    return NL_TRANSPORT_UNREACHABLE;
  }
  natsInbox *nuid = NULL;
  natsSubscription *sub = NULL;
  char inbox[320];
  natsStatus s = natsInbox_Create(&nuid);
  if (s == NATS_OK) {
    /* natsInbox_Create gives "_INBOX.<unique>": keep the unique part. */
    const char *unique = strchr(nuid, '.');
    snprintf(inbox, sizeof(inbox), "%s.%s", t->inbox_prefix,
             unique ? unique + 1 : nuid);
    s = natsConnection_SubscribeSync(&sub, t->conn, inbox);
  }
  if (s == NATS_OK)
    s = natsConnection_PublishRequestString(t->conn, subject, inbox, payload);
  int64_t deadline = monotonic_ms() + t->timeout_ms;
  int received = 0;
  bool done = false;
  while (s == NATS_OK && !done) {
    int64_t left = deadline - monotonic_ms();
    natsMsg *msg = NULL;
    if (left <= 0)
      break;
    natsStatus ns = natsSubscription_NextMsg(&msg, sub, left);
    if (ns == NATS_TIMEOUT)
      break;
    if (ns != NATS_OK) {
      s = ns;
      break;
    }
    if (natsMsg_IsNoResponders(msg)) {
      natsMsg_Destroy(msg);
      s = NATS_NO_RESPONDERS;
      break;
    }
    int len = natsMsg_GetDataLength(msg);
    done = fn(ud, natsMsg_GetData(msg), len > 0 ? (size_t)len : 0);
    received++;
    natsMsg_Destroy(msg);
  }
  natsSubscription_Destroy(sub);
  natsInbox_Destroy(nuid);
  if (s == NATS_NO_RESPONDERS) {
    snprintf(err, errlen, "no responders on %s", subject);
    return NL_TRANSPORT_NO_JETSTREAM;
  }
  if (s != NATS_OK)
    return status_text(s, "request", err, errlen);
  if (received == 0 && refused(t, subject, err, errlen))
    return NL_TRANSPORT_AUTH;
  if (received == 0 && refused(t, inbox, err, errlen))
    return NL_TRANSPORT_AUTH;
  return received;
}

int nl_transport_publish(void *ctx, const char *subject, const char *data,
                         size_t len, char *err, size_t errlen) {
  nl_transport *t = ctx;
  if (!nl_transport_connected(t)) {
    snprintf(err, errlen, "not connected (cnats is reconnecting)");
    return -1;
  }
  if (len > (size_t)INT32_MAX) {
    snprintf(err, errlen, "message too large");
    return -1;
  }
  natsStatus s = natsConnection_Publish(t->conn, subject, data, (int)len);
  if (s != NATS_OK) {
    status_text(s, "publish", err, errlen);
    return -1;
  }
  return 0;
}

static void on_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg,
                       void *closure) {
  (void)nc;
  (void)sub;
  struct nl_sub *s = closure;
  int len = natsMsg_GetDataLength(msg);
  s->fn(s->ud, natsMsg_GetSubject(msg), natsMsg_GetData(msg),
        len > 0 ? (size_t)len : 0);
  natsMsg_Destroy(msg);
}

int nl_transport_subscribe(nl_transport *t, const char *subject,
                           nl_message_fn fn, void *ud, char *err,
                           size_t errlen) {
  if (t->conn == NULL) {
    snprintf(err, errlen, "not connected");
    return -1;
  }
  struct nl_sub *s = calloc(1, sizeof(*s));
  if (s == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  s->fn = fn;
  s->ud = ud;
  natsStatus st =
      natsConnection_Subscribe(&s->sub, t->conn, subject, on_message, s);
  if (st != NATS_OK) {
    status_text(st, "subscribe", err, errlen);
    free(s);
    return -1;
  }
  s->next = t->subs;
  t->subs = s;
  return 0;
}

/* Ends every subscription, waiting (at most 1 s for all of them) until the
 * messages cnats already holds are handed over, so that no callback runs
 * after this returns. A subscription still draining then (a server that
 * does not answer) is unsubscribed. */
static void end_subscriptions(nl_transport *t) {
  bool connected = nl_transport_connected(t);
  for (struct nl_sub *s = t->subs; s != NULL; s = s->next)
    s->draining = connected && natsSubscription_Drain(s->sub) == NATS_OK;
  int64_t deadline = nats_Now() + 1000;
  for (struct nl_sub *s = t->subs; s != NULL; s = s->next) {
    int64_t left = deadline - nats_Now();
    if (!s->draining || left <= 0 ||
        natsSubscription_WaitForDrainCompletion(s->sub, left) != NATS_OK)
      natsSubscription_Unsubscribe(s->sub);
  }
}

void nl_transport_close(nl_transport *t) {
  if (t == NULL || t->conn == NULL || t->closing)
    return;
  t->closing = true;
  end_subscriptions(t);
  /* cnats makes the disconnected and closed callbacks from its own thread
   * after Close returns; t must outlive them. */
  natsConnection_Close(t->conn);
  wait_closed(t);
}

void nl_transport_free(nl_transport *t) {
  if (t == NULL)
    return;
  nl_transport_close(t);
  while (t->subs != NULL) {
    struct nl_sub *s = t->subs;
    t->subs = s->next;
    natsSubscription_Destroy(s->sub);
    free(s);
  }
  if (t->conn != NULL)
    natsConnection_Destroy(t->conn);
  natsOptions_Destroy(t->opts);
  pthread_cond_destroy(&t->closed_cond);
  pthread_mutex_destroy(&t->lock);
  free(t);
}
