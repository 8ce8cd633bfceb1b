/* test_nkey.c: the public key of an NKey user seed.
 *
 * The pair below was made for this test with the nkeys library
 * (tests/tools/nl_keygen.go); it guards nothing. */
#include "jsapi/nl_nkey.h"
#include "nl_test.h"

#include <stdio.h>
#include <string.h>

static const char *const SEED =
    "SUAFGUJYKUTZWHLYNFHRLGUDIZLKAKFLXPYHHIYSPWE7GAQFQZFRPF3O3Y";
static const char *const PUB =
    "UBDES4B3YZKLT5JOSA3RZVWCXCAENRELEAB4GBSAPUY7ELFRMMEZ3VNK";

static void test_nkey_public_from_seed(void) {
  char pub[NL_NKEY_PUBLIC_LEN + 1], err[256] = "";
  CHECK(nl_nkey_public_from_seed(SEED, pub, sizeof(pub), err, sizeof(err)) ==
        0);
  CHECK(strcmp(pub, PUB) == 0);
  char line[128];
  snprintf(line, sizeof(line), "%s\r\n", SEED);
  CHECK(nl_nkey_public_from_seed(line, pub, sizeof(pub), err, sizeof(err)) ==
        0);
  CHECK(strcmp(pub, PUB) == 0);
}

static void test_nkey_bad_seeds(void) {
  char pub[NL_NKEY_PUBLIC_LEN + 1], err[256];
  char flipped[80];
  strcpy(flipped, SEED);
  flipped[20] = flipped[20] == 'A' ? 'B' : 'A'; /* checksum no longer fits */
  const char *bad[] = {
      "",
      "SU",
      "not a seed at all",
      flipped,
      PUB, /* a public key is not a seed */
      "SAAGNWIXOXLPPX3AWFX6ZIDIRPFOKRZQ6JJ4NIDFSDOK6HNSFPKMPBRQYQ", /* bad */
      "su"
      "afgujykutzwhlynfhrlgudizlkakflxpyhhiyspwe7gaqfqzfrpf3o3y",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    err[0] = '\0';
    CHECK(nl_nkey_public_from_seed(bad[i], pub, sizeof(pub), err,
                                   sizeof(err)) == -1);
    CHECK(err[0] != '\0');
    CHECK(strstr(err, "SUAFG") == NULL); /* never quotes the seed */
  }
  err[0] = '\0';
  CHECK(nl_nkey_public_from_seed(SEED, pub, 10, err, sizeof(err)) == -1);
  CHECK(nl_nkey_public_from_seed_file("/nonexistent/seed.nk", pub, sizeof(pub),
                                      err, sizeof(err)) == -1);
  CHECK(strstr(err, "/nonexistent/seed.nk") != NULL);
}

static const nl_test_case tests[] = {
    NL_TEST(test_nkey_public_from_seed),
    NL_TEST(test_nkey_bad_seeds),
};

NL_TEST_MAIN(tests)
