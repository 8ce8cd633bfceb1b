/* nl_tls.c: the listener's certificate, key and client CA, read and
 * checked at start-up. */
#include "nl_tls.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No PEM file of these is larger: a bigger one is a mistake. */
#define PEM_MAX (1024 * 1024)

/* Reads the whole file path (option names it in errors) into a new
 * NUL-terminated string. Returns it, or NULL with err. */
static char *read_pem(const char *option, const char *path, char *err,
                      size_t errlen) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, errlen, "%s \"%s\" cannot be read: %s", option, path,
             strerror(errno));
    return NULL;
  }
  char *text = malloc(PEM_MAX + 1);
  size_t n = text ? fread(text, 1, PEM_MAX + 1, f) : 0;
  bool failed = text == NULL || ferror(f);
  fclose(f);
  if (failed || n > PEM_MAX || n == 0) {
    snprintf(err, errlen, "%s \"%s\" %s", option, path,
             failed   ? "cannot be read"
             : n == 0 ? "is empty"
                      : "is larger than 1 MiB: not a PEM file");
    free(text);
    return NULL;
  }
  text[n] = '\0';
  return text;
}

/* The certificates in pem, first to last; NULL when there is none. */
static STACK_OF(X509) * pem_certificates(const char *pem) {
  BIO *bio = BIO_new_mem_buf(pem, -1);
  STACK_OF(X509) *certs = sk_X509_new_null();
  X509 *x = NULL;
  while (bio != NULL && certs != NULL &&
         (x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL)
    if (sk_X509_push(certs, x) == 0)
      X509_free(x);
  BIO_free(bio);
  ERR_clear_error();
  if (certs != NULL && sk_X509_num(certs) == 0) {
    sk_X509_free(certs);
    certs = NULL;
  }
  return certs;
}

/* Refuses to decrypt: an encrypted key would need a passphrase that
 * collectd cannot ask for. */
static int no_passphrase(char *buf, int size, int rwflag, void *u) {
  (void)buf;
  (void)size;
  (void)rwflag;
  (void)u;
  return -1;
}

/* The private key in pem, or NULL. */
static EVP_PKEY *pem_key(const char *pem) {
  BIO *bio = BIO_new_mem_buf(pem, -1);
  EVP_PKEY *key =
      bio ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL) : NULL;
  BIO_free(bio);
  ERR_clear_error();
  return key;
}

/* Checks the server's certificate (the first of certs) against its key
 * and today's date. Returns 0, or -1 with err. */
static int check_server_cert(X509 *cert, EVP_PKEY *key, const char *path,
                             char *err, size_t errlen) {
  if (X509_check_private_key(cert, key) != 1) {
    ERR_clear_error();
    snprintf(err, errlen,
             "ListenTLSKey does not match the certificate of ListenTLSCert "
             "\"%s\" (the first certificate of the file)",
             path);
    return -1;
  }
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) <= 0) {
    snprintf(err, errlen, "ListenTLSCert \"%s\" has expired", path);
    return -1;
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) >= 0) {
    snprintf(err, errlen, "ListenTLSCert \"%s\" is not valid yet", path);
    return -1;
  }
  return 0;
}

void nl_tls_files_free(nl_tls_files *f) {
  if (f->key_pem != NULL)
    OPENSSL_cleanse(f->key_pem, strlen(f->key_pem));
  free(f->cert_pem);
  free(f->key_pem);
  free(f->client_ca_pem);
  *f = (nl_tls_files){0};
}

int nl_tls_load(const char *cert, const char *key, const char *client_ca,
                nl_tls_files *out, char *err, size_t errlen) {
  *out = (nl_tls_files){0};
  nl_tls_files f = {0};
  STACK_OF(X509) *chain = NULL, *cas = NULL;
  EVP_PKEY *pkey = NULL;
  int status = -1;
  f.cert_pem = read_pem("ListenTLSCert", cert, err, errlen);
  if (f.cert_pem == NULL)
    goto done;
  f.key_pem = read_pem("ListenTLSKey", key, err, errlen);
  if (f.key_pem == NULL)
    goto done;
  if (client_ca != NULL &&
      (f.client_ca_pem = read_pem("ListenClientCA", client_ca, err, errlen)) ==
          NULL)
    goto done;
  if ((chain = pem_certificates(f.cert_pem)) == NULL) {
    snprintf(err, errlen, "ListenTLSCert \"%s\" holds no PEM certificate",
             cert);
    goto done;
  }
  if ((pkey = pem_key(f.key_pem)) == NULL) {
    snprintf(err, errlen,
             "ListenTLSKey \"%s\" holds no PEM private key (an encrypted "
             "key is not supported)",
             key);
    goto done;
  }
  if (check_server_cert(sk_X509_value(chain, 0), pkey, cert, err, errlen) != 0)
    goto done;
  if (f.client_ca_pem != NULL &&
      (cas = pem_certificates(f.client_ca_pem)) == NULL) {
    snprintf(err, errlen, "ListenClientCA \"%s\" holds no PEM certificate",
             client_ca);
    goto done;
  }
  *out = f;
  f = (nl_tls_files){0};
  status = 0;
done:
  sk_X509_pop_free(chain, X509_free);
  sk_X509_pop_free(cas, X509_free);
  EVP_PKEY_free(pkey);
  nl_tls_files_free(&f);
  return status;
}
