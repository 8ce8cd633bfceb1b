/* fuzz_consumer_list.c: libFuzzer target for nl_parse_consumer_list, and for
 * the history and detectors fed by what it returns.
 *
 * The input is one $JS.API.CONSUMER.LIST reply, or two separated by a line
 * "--" (two successive polls of the same stream). Each reply is parsed and
 * applied to one engine, one second apart, so hostile numbers (huge,
 * negative, out of order) reach the interval arithmetic of the history and
 * every detector. The sanitizers catch any memory or undefined-behaviour
 * fault; a parse failure must come with a reason. */
#define _GNU_SOURCE /* memmem */
#include "core/nl_engine.h"
#include "core/model/nl_parse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const SEPARATOR = "\n--\n";

/* Parses one reply for the stream "S" and applies it to e at now_ns. */
static void one_poll(nl_engine *e, const char *json, size_t len,
                     int64_t now_ns) {
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256] = "";
  nl_stream_snap *s = nl_snapshot_set_add_stream(&set);
  if (s == NULL)
    return;
  s->name = strdup("S");
  s->first_seq = 1;
  s->last_seq = 100;
  int rc = nl_parse_consumer_list(json, len, 0, &set, &page, err, sizeof(err));
  if (rc != NL_PARSE_OK && err[0] == '\0')
    __builtin_trap();
  set.streams[0].consumers_complete = rc == NL_PARSE_OK && page.n_skipped == 0;
  nl_engine_apply(e, &set, now_ns, NULL, NULL);
  nl_snapshot_set_clear(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  size_t first = size, second_at = size;
  const char *sep = memmem(text, size, SEPARATOR, strlen(SEPARATOR));
  if (sep != NULL) {
    first = (size_t)(sep - text);
    second_at = first + strlen(SEPARATOR);
  }
  nl_detect_params params;
  nl_detect_params_default(&params);
  nl_engine *e = nl_engine_create(&params);
  if (e == NULL)
    return 0;
  const int64_t t0 = 1795988400000000000LL;
  one_poll(e, text, first, t0);
  if (second_at < size)
    one_poll(e, text + second_at, size - second_at, t0 + 1000000000LL);
  one_poll(e, text, first, t0 + 2000000000LL);
  nl_engine_free(e);
  return 0;
}
