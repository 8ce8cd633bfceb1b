/* test_names.c: names shortened for collectd identifiers. */
#include "core/model/nl_names.h"
#include "nl_test.h"

#include <string.h>

static void test_name_fit(void) {
  char out[128], other[128];
  CHECK(nl_name_fit("ORDERS", out, sizeof(out)) == 0);
  CHECK(strcmp(out, "ORDERS") == 0);
  /* Unsafe characters are replaced, and the result marked with a hash so
   * "a/b" and "a_b" stay distinct. */
  CHECK(nl_name_fit("a/b", out, sizeof(out)) == 1);
  CHECK(strncmp(out, "a_b~", 4) == 0 && strlen(out) == 12);
  CHECK(nl_name_fit("a_b", other, sizeof(other)) == 0);
  CHECK(strcmp(out, other) != 0);
  /* Long names: cut to fit, deterministic, distinct. */
  char a[400], b[400];
  memset(a, 'n', sizeof(a) - 1);
  a[sizeof(a) - 1] = '\0';
  memcpy(b, a, sizeof(a));
  b[398] = 'm';
  CHECK(nl_name_fit(a, out, sizeof(out)) == 1);
  CHECK(strlen(out) == 127);
  CHECK(nl_name_fit(b, other, sizeof(other)) == 1);
  CHECK(strcmp(out, other) != 0);
  char again[128];
  nl_name_fit(a, again, sizeof(again));
  CHECK(strcmp(out, again) == 0);
  /* A cut never splits a UTF-8 character. */
  char u[301] = "";
  for (int i = 0; i < 60; i++)
    strcat(u, "\xc3\xa9\xe6\xbc\xa2");
  nl_name_fit(u, out, sizeof(out));
  size_t prefix = strlen(out) - 9;
  CHECK(((unsigned char)u[prefix] & 0xC0) != 0x80);
  CHECK(memcmp(out, u, prefix) == 0);
  CHECK(out[prefix] == '~');
}

/* The account part of a plugin instance: '-' and '~' escaped, so the two
 * pairs that read alike joined with '-' (account "a-b" + stream "c",
 * account "a" + stream "b-c") are two identifiers. */
static void test_name_account_part(void) {
  struct {
    const char *in, *out;
    int rc;
  } cases[] = {
      {"ORDERS", "ORDERS", 0}, {"a-b", "a~2db", 1},     {"a", "a", 0},
      {"~", "~7e", 1},         {"a~2db", "a~7e2db", 1}, {"", "", 0},
      {"-", "~2d", 1},
  };
  char out[64];
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    CHECK(nl_name_account_part(cases[i].in, out, sizeof(out)) == cases[i].rc);
    CHECK(strcmp(out, cases[i].out) == 0);
  }
  /* Joined as the plugin does, the colliding pairs differ. */
  char one[64], two[64], a1[16], a2[16];
  nl_name_account_part("a-b", a1, sizeof(a1));
  nl_name_account_part("a", a2, sizeof(a2));
  snprintf(one, sizeof(one), "sys-%s-%s", a1, "c");
  snprintf(two, sizeof(two), "sys-%s-%s", a2, "b-c");
  CHECK(strcmp(one, two) != 0);
  /* Too long: -1, cut before an escape, terminated. At the limit: fits. */
  CHECK(nl_name_account_part("ab-", out, 4) == -1);
  CHECK(strcmp(out, "ab") == 0);
  CHECK(nl_name_account_part("ab-", out, 6) == 1);
  CHECK(strcmp(out, "ab~2d") == 0);
  CHECK(nl_name_account_part("abc", out, 3) == -1);
  CHECK(nl_name_account_part("abc", out, 4) == 0);
}

static const nl_test_case tests[] = {
    NL_TEST(test_name_fit),
    NL_TEST(test_name_account_part),
};

NL_TEST_MAIN(tests)
