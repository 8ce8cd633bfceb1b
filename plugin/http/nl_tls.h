/* nl_tls.h: the listener's certificate, key and client CA, read and
 * checked at start-up.
 *
 * libmicrohttpd takes them as PEM text and would only fail later, in
 * collectd's init, with no reason given. They are read here with OpenSSL
 * at configuration time instead, so that a missing file, a file without a
 * certificate or key, an encrypted key, a key that does not belong to the
 * certificate, or a certificate out of its validity is refused with the
 * option named. */
#ifndef NL_TLS_H
#define NL_TLS_H

#include <stddef.h>

/* The PEM text of each file (NUL-terminated), or NULL when not given. */
typedef struct {
  char *cert_pem;      /* ListenTLSCert: the certificate, then its chain. */
  char *key_pem;       /* ListenTLSKey: its private key, unencrypted. */
  char *client_ca_pem; /* ListenClientCA: the authorities of clients. */
} nl_tls_files;

/* Reads and checks the files named by cert, key and client_ca (client_ca
 * may be NULL) into out. Returns 0, or -1 with a one-line reason that
 * names the option in err, leaving out empty. */
int nl_tls_load(const char *cert, const char *key, const char *client_ca,
                nl_tls_files *out, char *err, size_t errlen);

/* Wipes the key and frees the texts; leaves f empty. */
void nl_tls_files_free(nl_tls_files *f);

#endif
