/* nl_auth.h: basic authentication of the listener's users by bcrypt hash.
 *
 * The configuration gives each user a bcrypt hash ("$2b$", "$2y$" or
 * "$2a$", as written by htpasswd -B or Python's bcrypt), never a password.
 * A request's "Authorization: Basic ..." header is checked against them
 * with libcrypt's crypt_r and a comparison in constant time. A bcrypt
 * check costs tens of milliseconds at cost 10, so credentials that passed
 * are remembered as a keyed SHA-256 digest (never in clear): the next
 * request with them costs a microsecond. Failures are never remembered. */
#ifndef NL_AUTH_H
#define NL_AUTH_H

#include <stdbool.h>
#include <stddef.h>

/* The bcrypt costs accepted: below NL_AUTH_COST_MIN a hash is too cheap to
 * guess against (weak), above NL_AUTH_COST_MAX one check would take
 * seconds and stall the listener's thread. */
#define NL_AUTH_COST_MIN 10
#define NL_AUTH_COST_MAX 15

/* The longest user name, and the longest password checked. */
#define NL_AUTH_NAME_MAX 64
#define NL_AUTH_PASSWORD_MAX 1024

typedef struct nl_auth nl_auth;

/* Checks that hash is a bcrypt hash the listener accepts: "$2a$", "$2b$"
 * or "$2y$", a two-digit cost from NL_AUTH_COST_MIN to NL_AUTH_COST_MAX,
 * '$', then 53 characters of bcrypt's alphabet ("./A-Za-z0-9"): 60 in
 * all. Returns 0, or -1 with a one-line reason in why. Pure. */
int nl_auth_hash_check(const char *hash, char *why, size_t whylen);

/* Reads an Authorization header of the Basic scheme ("Basic " in any
 * case, then the base64 of "user:password") into user (userlen bytes) and
 * password (passlen bytes), both NUL-terminated. Returns 0, or -1 when the
 * header is of another scheme, is not base64, has no ':', holds a NUL or
 * another control character in the user name, or does not fit. Pure. */
int nl_auth_parse_basic(const char *header, char *user, size_t userlen,
                        char *password, size_t passlen);

/* An empty set of users, or NULL when out of memory. */
nl_auth *nl_auth_new(void);

/* Adds user name with its bcrypt hash. Returns 0, or -1 with the reason in
 * why: a name that is empty, longer than NL_AUTH_NAME_MAX, holds ':' or a
 * control character, or is there already; a hash nl_auth_hash_check
 * refuses, or one that libcrypt cannot use. */
int nl_auth_add_user(nl_auth *a, const char *name, const char *hash, char *why,
                     size_t whylen);

/* The number of users (0 for a = NULL). */
size_t nl_auth_count(const nl_auth *a);

/* True when header (an Authorization header's value, or NULL) names a user
 * of a with the right password. An unknown user costs one bcrypt check
 * too, so the time does not tell which names exist. Thread-safe. */
bool nl_auth_check(nl_auth *a, const char *header);

/* Frees the users and what was remembered (a may be NULL). */
void nl_auth_free(nl_auth *a);

#endif
