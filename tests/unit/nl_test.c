/* nl_test.c: runs the table of one test file, each test in a child process
 * of its own (see nl_test.h). */
#define _GNU_SOURCE /* sigabbrev_np */
#include "nl_test.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int nl_test_failures;
const char *nl_test_fixture_dir = "tests/fixtures";

/* The exit status of a test child whose checks failed; any other non-zero
 * status is the child's own end (a sanitizer report, an exit in the code
 * under test). */
#define CHECKS_FAILED 3

/* Seconds a test may take before it is stopped (SIGALRM) and failed:
 * NL_UNIT_TIMEOUT, 60 unless set. */
static unsigned timeout_s(void) {
  const char *v = getenv("NL_UNIT_TIMEOUT");
  unsigned long s = v != NULL ? strtoul(v, NULL, 10) : 0;
  return s > 0 && s < 86400 ? (unsigned)s : 60;
}

/* Runs t in a child process and sets *status to its wait status; returns
 * false (errno set) when no child could be made. */
static bool run_child(const nl_test_case *t, unsigned timeout, int *status) {
  fflush(NULL); /* Nothing buffered may be written twice. */
  pid_t pid = fork();
  if (pid < 0)
    return false;
  if (pid == 0) {
    alarm(timeout);
    t->fn();
    exit(nl_test_failures == 0 ? 0 : CHECKS_FAILED);
  }
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR)
      return false;
  return true;
}

/* Prints the line of test name from its wait status; returns whether it
 * passed. */
static bool report(const char *name, int status, unsigned timeout) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    printf("PASS unit/%s\n", name);
    return true;
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == CHECKS_FAILED) {
    printf("FAIL unit/%s\n", name);
  } else if (WIFEXITED(status)) {
    printf("FAIL unit/%s: exited with status %d\n", name, WEXITSTATUS(status));
  } else if (WTERMSIG(status) == SIGALRM) {
    printf("FAIL unit/%s: timed out after %u s\n", name, timeout);
  } else {
    const char *abbrev = sigabbrev_np(WTERMSIG(status));
    printf("FAIL unit/%s: crashed (signal %d, SIG%s)\n", name, WTERMSIG(status),
           abbrev != NULL ? abbrev : "?");
  }
  return false;
}

int nl_test_main(int argc, char **argv, const nl_test_case *tests, size_t n) {
  /* Each line is out as soon as it is printed, piped or not; stderr (the
   * checks' detail lines) is unbuffered. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 1)
    nl_test_fixture_dir = argv[1];
  const char *only = argc > 2 ? argv[2] : NULL;
  unsigned timeout = timeout_s();
  int passed = 0, failed = 0;
  for (size_t i = 0; i < n; i++) {
    if (only != NULL && strstr(tests[i].name, only) == NULL)
      continue;
    int status;
    bool ok;
    if (run_child(&tests[i], timeout, &status)) {
      ok = report(tests[i].name, status, timeout);
    } else {
      printf("FAIL unit/%s: not run: %s\n", tests[i].name, strerror(errno));
      ok = false;
    }
    passed += ok;
    failed += !ok;
  }
  printf("unit: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
