/* check_harness.c: a test file whose tests crash, hang and fail a check
 * between two that pass, for the check of the harness itself
 * (tests/integration/test_unit_harness.sh). It is not among the unit
 * tests: make builds it only when asked for it. */
#include "nl_test.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

static void harness_passes_first(void) { CHECK(1 + 1 == 2); }

static void harness_segfaults(void) { raise(SIGSEGV); }

/* As a failed assertion of a library does. */
static void harness_aborts(void) { abort(); }

static void harness_fails_a_check(void) {
  int two = 2;
  CHECK(two == 3);
}

static void harness_hangs(void) {
  for (;;)
    pause();
}

static void harness_passes_last(void) { CHECK(2 + 2 == 4); }

static const nl_test_case tests[] = {
    NL_TEST(harness_passes_first), NL_TEST(harness_segfaults),
    NL_TEST(harness_aborts),       NL_TEST(harness_fails_a_check),
    NL_TEST(harness_hangs),        NL_TEST(harness_passes_last),
};

NL_TEST_MAIN(tests)
