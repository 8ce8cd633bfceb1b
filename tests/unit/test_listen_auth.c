/* test_listen_auth.c: the listener's basic authentication (nl_auth): the
 * bcrypt hash format at each of its limits, the Authorization header, and
 * checks of right, wrong and unknown credentials, remembered or not. */
#include "http/nl_auth.h"
#include "nl_test.h"

#include <string.h>

/* Hashes of "pw" (Python's bcrypt) at cost 10, and the same salt and
 * digest under each prefix and cost written in. */
#define HASH_PW "$2b$10$zWoEZffne7SewnvtYFp0NeZgO.6EjbJJGPPI9ieUQsD1J4B82pF9K"
#define TAIL "zWoEZffne7SewnvtYFp0NeZgO.6EjbJJGPPI9ieUQsD1J4B82pF9K"
/* A hash of "other" at cost 10. */
#define HASH_OTHER                                                             \
  "$2b$10$xf70ls/yeMa6jfsfdgWiOOzMAb7gcZDrU/s4ful.3OiGZ6nrr8cp6"

static void test_hash_format(void) {
  static const struct {
    const char *hash;
    int ok;
  } rows[] = {
      {HASH_PW, 0},
      {"$2y$10$" TAIL, 0},
      {"$2a$10$" TAIL, 0},
      {"$2x$10$" TAIL, -1}, /* The prefix of the old, buggy hashes. */
      {"$1$10$" TAIL, -1},
      {"", -1},
      {"pw", -1},
      /* The cost at and around its floor and ceiling. */
      {"$2b$09$" TAIL, -1},
      {"$2b$10$" TAIL, 0},
      {"$2b$11$" TAIL, 0},
      {"$2b$15$" TAIL, 0},
      {"$2b$16$" TAIL, -1},
      {"$2b$04$" TAIL, -1},
      {"$2b$1a$" TAIL, -1},
      {"$2b$10x" TAIL, -1},
      /* 59, 61 characters; a character outside bcrypt's alphabet. */
      {"$2b$10$zWoEZffne7SewnvtYFp0NeZgO.6EjbJJGPPI9ieUQsD1J4B82pF9", -1},
      {"$2b$10$zWoEZffne7SewnvtYFp0NeZgO.6EjbJJGPPI9ieUQsD1J4B82pF9KK", -1},
      {"$2b$10$zWoEZffne7SewnvtYFp0NeZgO+6EjbJJGPPI9ieUQsD1J4B82pF9K", -1},
      {"$2b$10$zWoEZffne7SewnvtYFp0NeZgO.6EjbJJGPPI9ieUQsD1J4B82pF9$", -1},
  };
  char why[160];
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    int got = nl_auth_hash_check(rows[i].hash, why, sizeof(why));
    if (got != rows[i].ok)
      fprintf(stderr, "  row %zu: %s\n", i, rows[i].hash);
    CHECK(got == rows[i].ok);
  }
  nl_auth_hash_check("$2b$09$" TAIL, why, sizeof(why));
  CHECK(strstr(why, "cost 9: too weak (at least 10)") != NULL);
  nl_auth_hash_check("$2b$16$" TAIL, why, sizeof(why));
  CHECK(strstr(why, "cost 16") != NULL);
}

static void test_parse_basic(void) {
  char user[NL_AUTH_NAME_MAX + 1], pass[NL_AUTH_PASSWORD_MAX + 1];
  static const struct {
    const char *header, *user, *pass; /* user NULL: refused. */
  } rows[] = {
      {"Basic b3BzOnB3", "ops", "pw"},      /* ops:pw */
      {"basic b3BzOnB3", "ops", "pw"},      /* The scheme in any case. */
      {"Basic   b3BzOnB3", "ops", "pw"},    /* Spaces before the token. */
      {"Basic b3BzOg==", "ops", ""},        /* ops: (empty password) */
      {"Basic b3BzOg", "ops", ""},          /* Padding left out. */
      {"Basic b3BzOmE6Yg==", "ops", "a:b"}, /* Only the first ':' splits. */
      {"Basic OnB3", "", "pw"},             /* :pw */
      {"Bearer b3BzOnB3", NULL, NULL},
      {"Basic", NULL, NULL},
      {"Basic ", NULL, NULL},
      {"Basic b3Bz", NULL, NULL},         /* ops, no ':' */
      {"Basic b3BzOnB3!", NULL, NULL},    /* Not base64. */
      {"Basic b3BzOg=x", NULL, NULL},     /* Data after the padding. */
      {"Basic b3BzOnB3=", NULL, NULL},    /* Padding where none belongs. */
      {"Basic b3BzOnB3b", NULL, NULL},    /* A dangling character. */
      {"Basic AG9wczpwdw==", NULL, NULL}, /* A NUL before the name. */
      {"Basic b3AJczpwdw==", NULL, NULL}, /* A tab in the name. */
      {"", NULL, NULL},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    int rc = nl_auth_parse_basic(rows[i].header, user, sizeof(user), pass,
                                 sizeof(pass));
    bool ok = rows[i].user == NULL
                  ? rc == -1
                  : rc == 0 && strcmp(user, rows[i].user) == 0 &&
                        strcmp(pass, rows[i].pass) == 0;
    if (!ok)
      fprintf(stderr, "  row %zu: %s\n", i, rows[i].header);
    CHECK(ok);
  }
  CHECK(nl_auth_parse_basic(NULL, user, sizeof(user), pass, sizeof(pass)) ==
        -1);
  /* A user name that fills the buffer exactly does not fit its NUL. */
  char small[4];
  CHECK(nl_auth_parse_basic("Basic b3BzOnB3", small, 4, pass, sizeof(pass)) ==
        0);
  CHECK(nl_auth_parse_basic("Basic b3BzOnB3", small, 3, pass, sizeof(pass)) ==
        -1);
  CHECK(nl_auth_parse_basic("Basic b3BzOnB3", user, sizeof(user), small, 2) ==
        -1);
}

static void test_users(void) {
  char why[256];
  nl_auth *a = nl_auth_new();
  CHECK(a != NULL);
  CHECK(nl_auth_count(a) == 0);
  CHECK(!nl_auth_check(a, "Basic b3BzOnB3")); /* No users: nobody. */
  CHECK(nl_auth_add_user(a, "ops", HASH_PW, why, sizeof(why)) == 0);
  CHECK(nl_auth_add_user(a, "ops", HASH_PW, why, sizeof(why)) == -1);
  CHECK(strstr(why, "given twice") != NULL);
  CHECK(nl_auth_add_user(a, "", HASH_PW, why, sizeof(why)) == -1);
  CHECK(nl_auth_add_user(a, "a:b", HASH_PW, why, sizeof(why)) == -1);
  CHECK(nl_auth_add_user(a, "a\tb", HASH_PW, why, sizeof(why)) == -1);
  char name[NL_AUTH_NAME_MAX + 2];
  memset(name, 'n', sizeof(name) - 1);
  name[sizeof(name) - 1] = '\0';
  CHECK(nl_auth_add_user(a, name, HASH_PW, why, sizeof(why)) == -1);
  name[NL_AUTH_NAME_MAX] = '\0';
  CHECK(nl_auth_add_user(a, name, "$2y$10$" TAIL, why, sizeof(why)) == 0);
  CHECK(nl_auth_add_user(a, "weak", "$2b$09$" TAIL, why, sizeof(why)) == -1);
  CHECK(strstr(why, "user \"weak\" has cost 9") != NULL);
  CHECK(nl_auth_count(a) == 2);
  nl_auth_free(a);
  nl_auth_free(NULL);
}

static void test_check(void) {
  char why[256];
  nl_auth *a = nl_auth_new();
  CHECK(nl_auth_add_user(a, "ops", HASH_PW, why, sizeof(why)) == 0);
  CHECK(nl_auth_add_user(a, "dev", "$2y$10$" TAIL, why, sizeof(why)) == 0);
  CHECK(nl_auth_add_user(a, "u2", HASH_OTHER, why, sizeof(why)) == 0);
  CHECK(!nl_auth_check(a, NULL));
  CHECK(!nl_auth_check(a, "Basic b3BzOnB4")); /* ops:px */
  CHECK(!nl_auth_check(a, "Basic b3BzOg==")); /* ops: */
  CHECK(!nl_auth_check(a, "Basic eHl6OnB3")); /* xyz:pw, no such user */
  CHECK(!nl_auth_check(a, "Basic T1BTOnB3")); /* OPS:pw: names are exact */
  CHECK(nl_auth_check(a, "Basic b3BzOnB3"));  /* ops:pw */
  CHECK(nl_auth_check(a, "Basic b3BzOnB3"));  /* Remembered. */
  CHECK(nl_auth_check(a, "Basic ZGV2OnB3"));  /* dev:pw, under $2y$ */
  /* Remembered credentials are those of one user: another user with the
   * same password, or the same user with another, still fail. */
  CHECK(!nl_auth_check(a, "Basic b3BzOnB4"));
  CHECK(!nl_auth_check(a, "Basic eHl6OnB3"));
  CHECK(!nl_auth_check(a, "Basic dTI6cHc="));    /* u2:pw */
  CHECK(nl_auth_check(a, "Basic dTI6b3RoZXI=")); /* u2:other */
  CHECK(!nl_auth_check(NULL, "Basic b3BzOnB3"));
  nl_auth_free(a);
}

static const nl_test_case tests[] = {
    NL_TEST(test_hash_format),
    NL_TEST(test_parse_basic),
    NL_TEST(test_users),
    NL_TEST(test_check),
};

NL_TEST_MAIN(tests)
