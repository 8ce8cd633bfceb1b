/* fuzz_advisory.c: libFuzzer target for nl_advisory_parse.
 *
 * The input is one advisory message as it arrives: its subject on the
 * first line, then the JSON body. An input without a newline is a body
 * with no subject. Every input must give a record or an error with a
 * reason; a record's names must be NUL-terminated within their fields. */
#include "core/model/nl_advisory.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  const char *nl = memchr(text, '\n', size);
  char *subject = NULL;
  const char *body = text;
  size_t len = size;
  if (nl != NULL) {
    size_t n = (size_t)(nl - text);
    subject = malloc(n + 1);
    if (subject == NULL)
      return 0;
    memcpy(subject, text, n);
    subject[n] = '\0';
    body = nl + 1;
    len = size - n - 1;
  }
  nl_advisory a;
  char err[256] = "";
  if (nl_advisory_parse(subject, body, len, &a, err, sizeof(err)) == 0) {
    if (memchr(a.stream, '\0', sizeof(a.stream)) == NULL ||
        memchr(a.consumer, '\0', sizeof(a.consumer)) == NULL ||
        a.kind >= NL_ADV_KIND_COUNT)
      __builtin_trap();
  } else if (err[0] == '\0') {
    __builtin_trap(); /* Every failure must say why. */
  }
  free(subject);
  return 0;
}
