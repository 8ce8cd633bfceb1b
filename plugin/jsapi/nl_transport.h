/* nl_transport.h: the cnats connection of one instance, and requests on it.
 *
 * The connection is created once and cnats reconnects by itself (to any seed
 * URL); requests fail fast while it is not connected. No collectd calls. */
#ifndef NL_TRANSPORT_H
#define NL_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *const *urls; /* Seed URLs (nats:// or tls://). */
  size_t n_urls;
  int64_t timeout_ms; /* Per request, and for connecting. */
  const char *name;   /* Connection name shown by the server. */
  /* Authentication; NULL when unset. */
  const char *user;
  const char *password;
  const char *token;
  const char *credentials_file; /* JWT + seed (.creds). */
  const char *nkey_seed_file;
  const char *tls_ca_file;
  const char *tls_cert_file;
  const char *tls_key_file;
  /* Prefix of the reply subjects (cnats default "_INBOX" when NULL); lets a
   * server permit this client's inbox alone (see docs/security.md). */
  const char *inbox_prefix;
  /* Connect to the listed servers only, never to those the cluster
   * announces (Scope "server": the agent watches its own server alone). */
  bool listed_servers_only;
} nl_transport_config;

typedef struct nl_transport nl_transport;

/* What a transport call met: its return value, 0 on success. Every failure
 * also leaves a one-line reason in err, free of cnats' source locations. */
typedef enum {
  NL_TRANSPORT_OK = 0,
  NL_TRANSPORT_ERROR = -1,        /* Anything not below. */
  NL_TRANSPORT_AUTH = -2,         /* The server refused the credentials. */
  NL_TRANSPORT_UNREACHABLE = -3,  /* No server reached, or connection lost. */
  NL_TRANSPORT_TIMEOUT = -4,      /* No reply within the timeout. */
  NL_TRANSPORT_NO_JETSTREAM = -5, /* No responders on the JetStream API. */
} nl_transport_status;

/* Builds the connection options (files are read now). Returns 0 and sets
 * *out, or -1 with a one-line reason in err. Does not connect. */
int nl_transport_create(const nl_transport_config *cfg, nl_transport **out,
                        char *err, size_t errlen);

/* Connects when no connection exists yet. Once a connection exists cnats
 * keeps reconnecting on its own. Returns 0 when connected, else the kind of
 * failure (nl_transport_status: AUTH, UNREACHABLE, TIMEOUT or ERROR) with
 * the reason in err. */
int nl_transport_connect(nl_transport *t, char *err, size_t errlen);

/* Ends the subscriptions and closes the connection: requests waiting for a
 * reply, and any made later, fail at once (NL_TRANSPORT_UNREACHABLE), and
 * no callback runs after it returns. t stays valid until
 * nl_transport_free; closing twice is harmless. */
void nl_transport_close(nl_transport *t);

/* Returns true when the connection is up now. */
bool nl_transport_connected(nl_transport *t);

/* Copies the id of the server the connection is on now into buf. Returns
 * 0, or -1 when not connected (buf then holds ""). */
int nl_transport_server_id(nl_transport *t, char *buf, size_t len);

/* Returns how many times the connection was lost since creation. */
uint64_t nl_transport_disconnects(nl_transport *t);

/* An nl_request_fn (see nl_poll.h) on transport ctx: fails with
 * NL_TRANSPORT_UNREACHABLE while not connected, NL_TRANSPORT_NO_JETSTREAM
 * when nothing answers the subject, NL_TRANSPORT_TIMEOUT, or
 * NL_TRANSPORT_ERROR. */
int nl_transport_request(void *ctx, const char *subject, const char *payload,
                         char **reply, size_t *reply_len, char *err,
                         size_t errlen);

/* Receives one reply of a gathered request (data is not NUL-terminated and
 * is valid only during the call). Returns true when no more are wanted. */
typedef bool (*nl_reply_fn)(void *ud, const char *data, size_t len);

/* Sends payload to subject with a reply subject of its own (under the
 * InboxPrefix) and passes each reply to fn, on the calling thread, until fn
 * returns true or the timeout has passed since the request went out: a
 * request answered by many servers ($SYS.REQ.SERVER.PING.*). Returns how
 * many replies fn received (0 when none came in time), or a negative
 * nl_transport_status with err: UNREACHABLE while not connected,
 * NO_JETSTREAM when nothing listens on subject, AUTH when the server
 * refused the publish or the reply subscription (err names the subject),
 * ERROR. */
int nl_transport_gather(void *ctx, const char *subject, const char *payload,
                        nl_reply_fn fn, void *ud, char *err, size_t errlen);

/* An nl_publish_fn (see nl_health.h) on transport ctx: publishes len bytes
 * of data on subject. Fails at once while not connected (nothing is queued
 * for a reconnect); otherwise cnats buffers the message and its flusher
 * thread sends it, and a stalled socket fails the write after the timeout.
 * Returns 0, or -1 with a one-line reason in err. */
int nl_transport_publish(void *ctx, const char *subject, const char *data,
                         size_t len, char *err, size_t errlen);

/* Receives one message of a subscription, on a cnats thread. data is not
 * NUL-terminated and is valid only during the call. */
typedef void (*nl_message_fn)(void *ud, const char *subject, const char *data,
                              size_t len);

/* Subscribes to subject (wildcards allowed) on the connection, which must
 * have been made (nl_transport_connect succeeded once); cnats renews the
 * subscription after each reconnect. fn runs on a cnats thread for every
 * message until nl_transport_free, which ends the subscription and waits
 * (at most 1 s) for a call in progress. Nothing is ever acked or replied
 * to. Returns 0, or -1 with a one-line reason in err. */
int nl_transport_subscribe(nl_transport *t, const char *subject,
                           nl_message_fn fn, void *ud, char *err,
                           size_t errlen);

/* Closes the connection and frees everything. NULL is allowed. */
void nl_transport_free(nl_transport *t);

#endif
