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

static const nl_test_case tests[] = {
    NL_TEST(test_name_fit),
};

NL_TEST_MAIN(tests)
