/* nl_transport_check.h: whether the options of a transport fit together,
 * checked before anything connects, for the plugin and the CLI alike. */
#ifndef NL_TRANSPORT_CHECK_H
#define NL_TRANSPORT_CHECK_H

#include "nl_transport.h"

/* How a front end names the transport's options in its messages: as the
 * collectd options (one "option ", two "options ", "User") or as the
 * command line's ("", "", "--user"). */
typedef struct {
  const char *one; /* Put before the name of one option. */
  const char *two; /* Put before the names of two options. */
  const char *url, *user, *password, *token, *credentials, *nkey_seed, *tls_ca,
      *tls_cert, *tls_key;
} nl_transport_names;

/* Checks cfg before anything connects: each URL has a scheme cnats
 * accepts, at most one way to authenticate is set, a password comes with a
 * user, a TLS certificate with its key, and every file named can be read.
 * Returns 0, or -1 with one line in err that names the options as names
 * does (never a secret). */
int nl_transport_config_check(const nl_transport_config *cfg,
                              const nl_transport_names *names, char *err,
                              size_t errlen);

#endif
