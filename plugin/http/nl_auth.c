/* nl_auth.c: basic authentication of the listener's users by bcrypt hash. */
#include "nl_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A bcrypt hash: "$2b$10$" and 53 characters of salt and digest. */
#define HASH_LEN 60
#define HASH_SALT_LEN 29 /* "$2b$10$" and the 22 characters of salt. */
/* Credentials remembered after a bcrypt check passed. */
#define REMEMBERED 32
#define DIGEST_LEN 32

typedef struct {
  char name[NL_AUTH_NAME_MAX + 1];
  char hash[HASH_LEN + 1];
} auth_user;

typedef struct {
  bool used;
  unsigned char digest[DIGEST_LEN];
} remembered;

struct nl_auth {
  auth_user *users;
  size_t n_users;
  pthread_mutex_t lock; /* Guards the remembered credentials. */
  unsigned char key[DIGEST_LEN];
  remembered seen[REMEMBERED];
  size_t next_seen; /* The slot the next success takes. */
};

static bool bcrypt_char(char c) {
  return c == '.' || c == '/' || (c >= 'A' && c <= 'Z') ||
         (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int nl_auth_hash_check(const char *hash, char *why, size_t whylen) {
  size_t len = strlen(hash);
  if (strncmp(hash, "$2a$", 4) != 0 && strncmp(hash, "$2b$", 4) != 0 &&
      strncmp(hash, "$2y$", 4) != 0) {
    snprintf(why, whylen,
             "is not a bcrypt hash (it starts with $2b$, $2y$ or $2a$)");
    return -1;
  }
  if (len != HASH_LEN || hash[4] < '0' || hash[4] > '9' || hash[5] < '0' ||
      hash[5] > '9' || hash[6] != '$') {
    snprintf(why, whylen,
             "is not a whole bcrypt hash (60 characters, as in "
             "$2b$%02d$ and 53 more)",
             NL_AUTH_COST_MIN);
    return -1;
  }
  for (size_t i = 7; i < len; i++)
    if (!bcrypt_char(hash[i])) {
      snprintf(why, whylen,
               "holds a character bcrypt hashes do not use, at %zu", i + 1);
      return -1;
    }
  int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < NL_AUTH_COST_MIN) {
    snprintf(why, whylen, "has cost %d: too weak (at least %d)", cost,
             NL_AUTH_COST_MIN);
    return -1;
  }
  if (cost > NL_AUTH_COST_MAX) {
    snprintf(why, whylen,
             "has cost %d: each check would take seconds (at most %d)", cost,
             NL_AUTH_COST_MAX);
    return -1;
  }
  return 0;
}

/* The value of base64 character c, or -1. */
static int base64_value(char c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

/* Decodes base64 text (padding optional, nothing after it) into out
 * (outlen bytes). Returns the decoded length, or -1. */
static long base64_decode(const char *text, unsigned char *out, size_t outlen) {
  size_t n = 0, bits = 0, pad = 0;
  unsigned acc = 0;
  for (const char *c = text; *c; c++) {
    if (*c == '=') {
      pad++;
      continue;
    }
    int v = base64_value(*c);
    if (v < 0 || pad > 0)
      return -1;
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (n >= outlen)
        return -1;
      out[n++] = (unsigned char)(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  size_t chars = strlen(text) - pad;
  if (pad > 2 || chars % 4 == 1 || (pad > 0 && (chars + pad) % 4 != 0))
    return -1;
  return (long)n;
}

int nl_auth_parse_basic(const char *header, char *user, size_t userlen,
                        char *password, size_t passlen) {
  if (header == NULL || strncasecmp(header, "Basic ", 6) != 0)
    return -1;
  const char *b64 = header + 6;
  while (*b64 == ' ')
    b64++;
  unsigned char buf[NL_AUTH_NAME_MAX + NL_AUTH_PASSWORD_MAX + 2];
  if (strlen(b64) > 4 * (sizeof(buf) / 3 + 1))
    return -1;
  long n = base64_decode(b64, buf, sizeof(buf));
  if (n <= 0)
    return -1;
  unsigned char *colon = memchr(buf, ':', (size_t)n);
  if (colon == NULL || memchr(buf, '\0', (size_t)n) != NULL)
    return -1;
  size_t ulen = (size_t)(colon - buf), plen = (size_t)n - ulen - 1;
  if (ulen >= userlen || plen >= passlen)
    return -1;
  for (size_t i = 0; i < ulen; i++)
    if (buf[i] < 0x20 || buf[i] == 0x7f)
      return -1;
  memcpy(user, buf, ulen);
  user[ulen] = '\0';
  memcpy(password, colon + 1, plen);
  password[plen] = '\0';
  OPENSSL_cleanse(buf, sizeof(buf));
  return 0;
}

/* Hashes password with the salt and cost of hash (libcrypt) and compares
 * the result with hash in constant time. */
static bool bcrypt_matches(const char *password, const char *hash) {
  struct crypt_data *data = calloc(1, sizeof(*data));
  if (data == NULL)
    return false;
  const char *out = crypt_r(password, hash, data);
  bool ok = out != NULL && strlen(out) == HASH_LEN &&
            CRYPTO_memcmp(out, hash, HASH_LEN) == 0;
  OPENSSL_cleanse(data, sizeof(*data));
  free(data);
  return ok;
}

nl_auth *nl_auth_new(void) {
  nl_auth *a = calloc(1, sizeof(*a));
  if (a == NULL)
    return NULL;
  if (RAND_bytes(a->key, sizeof(a->key)) != 1) {
    free(a);
    return NULL;
  }
  pthread_mutex_init(&a->lock, NULL);
  return a;
}

int nl_auth_add_user(nl_auth *a, const char *name, const char *hash, char *why,
                     size_t whylen) {
  size_t len = strlen(name);
  bool plain = len > 0 && len <= NL_AUTH_NAME_MAX;
  for (size_t i = 0; plain && i < len; i++)
    plain = name[i] != ':' && (unsigned char)name[i] >= 0x20 && name[i] != 0x7f;
  if (!plain) {
    snprintf(why, whylen,
             "user name \"%s\" must be 1 to %d characters without ':' or "
             "control characters",
             name, NL_AUTH_NAME_MAX);
    return -1;
  }
  for (size_t i = 0; i < a->n_users; i++)
    if (strcmp(a->users[i].name, name) == 0) {
      snprintf(why, whylen, "user \"%s\" is given twice", name);
      return -1;
    }
  char reason[160];
  if (nl_auth_hash_check(hash, reason, sizeof(reason)) != 0) {
    snprintf(why, whylen, "the hash of user \"%s\" %s", name, reason);
    return -1;
  }
  /* libcrypt must produce a hash of the same salt from it: a salt it
   * refuses would make every check fail. */
  struct crypt_data *data = calloc(1, sizeof(*data));
  const char *probe = data ? crypt_r("", hash, data) : NULL;
  bool usable = probe != NULL && strlen(probe) == HASH_LEN &&
                strncmp(probe, hash, HASH_SALT_LEN) == 0;
  free(data);
  if (!usable) {
    snprintf(why, whylen,
             "the hash of user \"%s\" is refused by the system's crypt "
             "(libcrypt)",
             name);
    return -1;
  }
  auth_user *grown = realloc(a->users, (a->n_users + 1) * sizeof(*grown));
  if (grown == NULL) {
    snprintf(why, whylen, "out of memory");
    return -1;
  }
  a->users = grown;
  auth_user *u = &a->users[a->n_users++];
  memcpy(u->name, name, len + 1);
  memcpy(u->hash, hash, HASH_LEN + 1);
  return 0;
}

size_t nl_auth_count(const nl_auth *a) { return a ? a->n_users : 0; }

/* The keyed digest of the credentials (user index, password) into out. */
static void credentials_digest(const nl_auth *a, size_t index,
                               const char *password, unsigned char *out) {
  unsigned char buf[sizeof(size_t) + NL_AUTH_PASSWORD_MAX + 1];
  size_t plen = strlen(password);
  memcpy(buf, &index, sizeof(index));
  memcpy(buf + sizeof(index), password, plen);
  unsigned len = DIGEST_LEN;
  HMAC(EVP_sha256(), a->key, sizeof(a->key), buf, sizeof(index) + plen, out,
       &len);
  OPENSSL_cleanse(buf, sizeof(buf));
}

/* True when digest is remembered; looks at every slot, whatever matches. */
static bool remembered_has(nl_auth *a, const unsigned char *digest) {
  bool found = false;
  pthread_mutex_lock(&a->lock);
  for (size_t i = 0; i < REMEMBERED; i++)
    found |= a->seen[i].used &&
             CRYPTO_memcmp(a->seen[i].digest, digest, DIGEST_LEN) == 0;
  pthread_mutex_unlock(&a->lock);
  return found;
}

static void remembered_add(nl_auth *a, const unsigned char *digest) {
  pthread_mutex_lock(&a->lock);
  remembered *r = &a->seen[a->next_seen];
  a->next_seen = (a->next_seen + 1) % REMEMBERED;
  r->used = true;
  memcpy(r->digest, digest, DIGEST_LEN);
  pthread_mutex_unlock(&a->lock);
}

bool nl_auth_check(nl_auth *a, const char *header) {
  if (a == NULL || a->n_users == 0)
    return false;
  char user[NL_AUTH_NAME_MAX + 1], password[NL_AUTH_PASSWORD_MAX + 1];
  if (nl_auth_parse_basic(header, user, sizeof(user), password,
                          sizeof(password)) != 0)
    return false;
  size_t index = a->n_users;
  for (size_t i = 0; i < a->n_users; i++)
    if (strcmp(a->users[i].name, user) == 0)
      index = i;
  bool ok = false;
  if (index == a->n_users) {
    /* An unknown user: the same bcrypt work, whose result is ignored. */
    (void)bcrypt_matches(password, a->users[0].hash);
  } else {
    unsigned char digest[DIGEST_LEN];
    credentials_digest(a, index, password, digest);
    ok = remembered_has(a, digest);
    if (!ok && bcrypt_matches(password, a->users[index].hash)) {
      ok = true;
      remembered_add(a, digest);
    }
  }
  OPENSSL_cleanse(password, sizeof(password));
  return ok;
}

void nl_auth_free(nl_auth *a) {
  if (a == NULL)
    return;
  pthread_mutex_destroy(&a->lock);
  free(a->users);
  OPENSSL_cleanse(a, sizeof(*a));
  free(a);
}
