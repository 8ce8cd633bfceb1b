/* nl_transport_check.c: the option checks shared by the plugin and the
 * CLI. */
#include "nl_transport_check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* True when url starts with a scheme cnats accepts and has more after it. */
static bool nats_url(const char *url) {
  static const char *const schemes[] = {"nats://", "tls://", "ws://", "wss://"};
  for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
    size_t n = strlen(schemes[i]);
    if (strncmp(url, schemes[i], n) == 0 && url[n] != '\0')
      return true;
  }
  return false;
}

int nl_transport_config_check(const nl_transport_config *cfg,
                              const nl_transport_names *names, char *err,
                              size_t errlen) {
  const nl_transport_names *n = names;
  for (size_t i = 0; i < cfg->n_urls; i++)
    if (!nats_url(cfg->urls[i])) {
      snprintf(err, errlen,
               "%s%s \"%s\" is not a NATS URL (nats://host:port or "
               "tls://host:port)",
               n->one, n->url, cfg->urls[i]);
      return -1;
    }
  const char *auth_names[] = {n->user, n->token, n->credentials, n->nkey_seed};
  const void *auth[] = {cfg->user, cfg->token, cfg->credentials_file,
                        cfg->nkey_seed_file};
  for (size_t i = 0; i < 4; i++)
    for (size_t j = i + 1; j < 4; j++)
      if (auth[i] != NULL && auth[j] != NULL) {
        snprintf(err, errlen,
                 "%s%s and %s exclude each other (use one way to "
                 "authenticate)",
                 n->two, auth_names[i], auth_names[j]);
        return -1;
      }
  if (cfg->password != NULL && cfg->user == NULL) {
    snprintf(err, errlen, "%s%s needs %s%s", n->one, n->password, n->one,
             n->user);
    return -1;
  }
  if ((cfg->tls_cert_file == NULL) != (cfg->tls_key_file == NULL)) {
    snprintf(err, errlen, "%s%s and %s go together", n->two, n->tls_cert,
             n->tls_key);
    return -1;
  }
  const char *file_names[] = {n->credentials, n->nkey_seed, n->tls_ca,
                              n->tls_cert, n->tls_key};
  const char *files[] = {cfg->credentials_file, cfg->nkey_seed_file,
                         cfg->tls_ca_file, cfg->tls_cert_file,
                         cfg->tls_key_file};
  for (size_t i = 0; i < 5; i++)
    if (files[i] != NULL && access(files[i], R_OK) != 0) {
      snprintf(err, errlen, "%s%s: cannot read \"%.400s\": %s", n->one,
               file_names[i], files[i], strerror(errno));
      return -1;
    }
  return 0;
}
