/* nl_test.h: a minimal test harness for the pure core.
 *
 * Each test file holds its tests, a table of them and a main made by
 * NL_TEST_MAIN, and is built into a binary of its own (build/unit/test_*):
 *
 *   static void test_one(void) { CHECK(1 + 1 == 2); }
 *   static const nl_test_case tests[] = {NL_TEST(test_one)};
 *   NL_TEST_MAIN(tests)
 *
 * A new test is a function and a row of its file's table (a static test
 * left out of the table is an unused function the compiler warns about);
 * a new tests/unit/test_*.c is built and run with no other change.
 *
 * The binary runs as `test_x FIXTURE_DIR [FILTER]` (FILTER: only the tests
 * whose name contains it). Each test runs in a child process of its own, so
 * a crash, or a hang past NL_UNIT_TIMEOUT seconds (60), fails that test
 * alone. CHECK records a failure with its line on stderr and goes on; each
 * test's line "PASS unit/<name>" or "FAIL unit/<name>[: why]" is printed
 * when it ends, and "unit: N passed, N failed" at the end.
 * tests/unit/run.sh runs every binary. */
#ifndef NL_TEST_H
#define NL_TEST_H

#include <stddef.h>
#include <stdio.h>

/* The failed checks of the running test, and the fixture directory. */
extern int nl_test_failures;
extern const char *nl_test_fixture_dir;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__,       \
              #cond);                                                          \
    }                                                                          \
  } while (0)

/* CHECK for one case of a table: a failure also names the case. */
#define CHECK_CASE(label, cond)                                                \
  do {                                                                         \
    if (!(cond)) {                                                             \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: case \"%s\": check failed: %s\n", __FILE__,    \
              __LINE__, label, #cond);                                         \
    }                                                                          \
  } while (0)

#define CHECK_EQ_U(a, b)                                                       \
  do {                                                                         \
    unsigned long long va_ = (unsigned long long)(a),                          \
                       vb_ = (unsigned long long)(b);                          \
    if (va_ != vb_) {                                                          \
      nl_test_failures++;                                                      \
      fprintf(stderr, "  %s:%d: %s == %llu, expected %llu\n", __FILE__,        \
              __LINE__, #a, va_, vb_);                                         \
    }                                                                          \
  } while (0)

/* One row of a test file's table: the test's name and function. */
typedef struct {
  const char *name;
  void (*fn)(void);
} nl_test_case;

#define NL_TEST(fn)                                                            \
  { #fn, fn }

/* Runs the n tests of table tests as described above; returns the exit
 * status of the binary (0 when every test passed, else 1). */
int nl_test_main(int argc, char **argv, const nl_test_case *tests, size_t n);

/* The main of a test file, running its table. */
#define NL_TEST_MAIN(table)                                                    \
  int main(int argc, char **argv) {                                            \
    return nl_test_main(argc, argv, table, sizeof(table) / sizeof(table[0]));  \
  }

#endif
