/* nl_nkey.h: the public key of an NKey user seed.
 *
 * cnats signs the server's nonce with a seed file but must also send the
 * user's public key, which it cannot work out itself. This derives it from
 * the seed (base32, CRC-16 checked, Ed25519 via OpenSSL), so that a seed file
 * alone is enough, as with the other NATS clients. */
#ifndef NL_NKEY_H
#define NL_NKEY_H

#include <nats/nats.h>
#include <stdbool.h>
#include <stddef.h>

/* Length of an encoded NKey public key ("U" + 55 characters), without NUL. */
#define NL_NKEY_PUBLIC_LEN 56

/* Derives the public key from a user seed ("SU..."). Returns 0 and writes
 * the key (NUL-terminated) into pub, which must hold NL_NKEY_PUBLIC_LEN + 1
 * bytes; or -1 with a one-line reason in err (which never quotes the seed).
 * Seed material is wiped from memory before returning. */
int nl_nkey_public_from_seed(const char *seed, char *pub, size_t publen,
                             char *err, size_t errlen);

/* Reads the first line starting with "SU" of a seed file (other lines, such
 * as the comments of a .creds-style file, are skipped) and derives its
 * public key as nl_nkey_public_from_seed does. */
int nl_nkey_public_from_seed_file(const char *path, char *pub, size_t publen,
                                  char *err, size_t errlen);

/* natsConnection_Connect, made once more when the server refused the first
 * attempt's authentication and signs_nonce is set (an NKey seed or a
 * credentials file): cnats 3.4.1 leaves the nonce signature out of CONNECT
 * when the signature's first byte is 0, so 1 such connect in 256 fails with
 * NATS_CONNECTION_AUTH_FAILED; the next attempt signs a new nonce. */
natsStatus nl_nkey_connect(natsConnection **nc, natsOptions *opts,
                           bool signs_nonce);

#endif
