/* nl_test.h: a minimal test harness for the pure core.
 *
 * Each test is a function registered in the table of main.c. CHECK records a
 * failure with its line and goes on; the runner prints "PASS name" or
 * "FAIL name" per test, and "unit: N passed, N failed" at the end. */
#ifndef NL_TEST_H
#define NL_TEST_H

#include "core/model/nl_snapshot.h"

#include <stdio.h>

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

/* Reads a fixture file into a malloc'd buffer; returns NULL if missing. */
char *nl_test_read_fixture(const char *name, size_t *len);

/* The first stream, or consumer (of any stream), named name in set; NULL
 * when there is none. */
const nl_stream_snap *nl_test_stream(const nl_snapshot_set *set,
                                     const char *name);
const nl_consumer_snap *nl_test_consumer(const nl_snapshot_set *set,
                                         const char *name);

#endif
