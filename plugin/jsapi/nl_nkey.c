/* nl_nkey.c: the public key of an NKey user seed, and connecting with a
 * signed nonce (see nl_nkey.h). */
#include "nl_nkey.h"

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PREFIX_SEED (18 << 3) /* 'S' */
#define PREFIX_USER (20 << 3) /* 'U' */
#define RAW_KEY_LEN 32

static const char B32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* CRC-16/XMODEM, as the nkeys encoding uses. */
static uint16_t crc16(const unsigned char *p, size_t n) {
  uint16_t crc = 0;
  for (size_t i = 0; i < n; i++) {
    crc ^= (uint16_t)(p[i] << 8);
    for (int b = 0; b < 8; b++)
      crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021)
                           : (uint16_t)(crc << 1);
  }
  return crc;
}

/* Decodes unpadded base32 text of length n into out (room for outlen).
 * Returns the number of bytes, or -1 on a bad character or no room. */
static int b32_decode(const char *in, size_t n, unsigned char *out,
                      size_t outlen) {
  uint32_t acc = 0;
  int bits = 0;
  size_t len = 0;
  for (size_t i = 0; i < n; i++) {
    const char *p = strchr(B32, in[i]);
    if (in[i] == '\0' || p == NULL)
      return -1;
    acc = (acc << 5) | (uint32_t)(p - B32);
    bits += 5;
    if (bits >= 8) {
      if (len == outlen)
        return -1;
      out[len++] = (unsigned char)(acc >> (bits - 8));
      bits -= 8;
    }
  }
  return (int)len;
}

/* Encodes n bytes as unpadded base32 into out (NUL-terminated). */
static void b32_encode(const unsigned char *in, size_t n, char *out) {
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    acc = (acc << 8) | in[i];
    bits += 8;
    while (bits >= 5) {
      *out++ = B32[(acc >> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0)
    *out++ = B32[(acc << (5 - bits)) & 31];
  *out = '\0';
}

int nl_nkey_public_from_seed(const char *seed, char *pub, size_t publen,
                             char *err, size_t errlen) {
  unsigned char raw[2 + RAW_KEY_LEN + 2 + 8];
  size_t n = strlen(seed);
  while (n > 0 &&
         (seed[n - 1] == '\n' || seed[n - 1] == '\r' || seed[n - 1] == ' '))
    n--;
  int len = b32_decode(seed, n, raw, sizeof(raw));
  int rc = -1;
  if (publen < NL_NKEY_PUBLIC_LEN + 1) {
    snprintf(err, errlen, "no room for the public key");
  } else if (len != 2 + RAW_KEY_LEN + 2) {
    snprintf(err, errlen, "not an NKey seed (bad encoding or length)");
  } else if (crc16(raw, (size_t)len - 2) !=
             (uint16_t)(raw[len - 2] | (raw[len - 1] << 8))) {
    snprintf(err, errlen, "not an NKey seed (checksum mismatch)");
  } else if ((raw[0] & 0xF8) != PREFIX_SEED ||
             (((raw[0] & 7) << 5) | (raw[1] >> 3)) != PREFIX_USER) {
    snprintf(err, errlen, "not a user seed (it must start with \"SU\")");
  } else {
    EVP_PKEY *key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL,
                                                 raw + 2, RAW_KEY_LEN);
    unsigned char out[1 + RAW_KEY_LEN + 2];
    size_t klen = RAW_KEY_LEN;
    if (key != NULL && EVP_PKEY_get_raw_public_key(key, out + 1, &klen) == 1 &&
        klen == RAW_KEY_LEN) {
      out[0] = PREFIX_USER;
      uint16_t crc = crc16(out, 1 + RAW_KEY_LEN);
      out[1 + RAW_KEY_LEN] = (unsigned char)(crc & 0xff);
      out[2 + RAW_KEY_LEN] = (unsigned char)(crc >> 8);
      b32_encode(out, sizeof(out), pub);
      rc = 0;
    } else {
      snprintf(err, errlen, "cannot derive the public key (OpenSSL Ed25519)");
    }
    EVP_PKEY_free(key);
  }
  OPENSSL_cleanse(raw, sizeof(raw));
  return rc;
}

int nl_nkey_public_from_seed_file(const char *path, char *pub, size_t publen,
                                  char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  if (f == NULL) {
    snprintf(err, errlen, "cannot read NKey seed file \"%s\"", path);
    return -1;
  }
  char line[512];
  int rc = -1;
  bool found = false;
  while (fgets(line, sizeof(line), f) != NULL) {
    if (strncmp(line, "SU", 2) == 0) {
      found = true;
      rc = nl_nkey_public_from_seed(line, pub, publen, err, errlen);
      break;
    }
  }
  OPENSSL_cleanse(line, sizeof(line));
  fclose(f);
  if (!found)
    snprintf(err, errlen,
             "no user seed (a line starting with \"SU\") in "
             "\"%s\"",
             path);
  return rc;
}

natsStatus nl_nkey_connect(natsConnection **nc, natsOptions *opts,
                           bool signs_nonce) {
  natsStatus s = natsConnection_Connect(nc, opts);
  if (s == NATS_CONNECTION_AUTH_FAILED && signs_nonce) {
    *nc = NULL;
    s = natsConnection_Connect(nc, opts);
  }
  return s;
}
