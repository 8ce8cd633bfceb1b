/* fuzz_stream_list.c: libFuzzer target for nl_parse_stream_list.
 *
 * The input is one $JS.API.STREAM.LIST reply as the server (or anything
 * pretending to be one) might send it. Every input must give a result or an
 * error message; the sanitizers catch any memory or undefined-behaviour
 * fault. Each parsed stream is also shaped into a collectd identifier part,
 * as the plugin does with every stream name it reports. */
#include "core/model/nl_names.h"
#include "core/model/nl_parse.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256] = "";
  int rc = nl_parse_stream_list((const char *)data, size, &set, &page, err,
                                sizeof(err));
  if (rc != NL_PARSE_OK && err[0] == '\0')
    __builtin_trap(); /* Every failure must say why. */
  for (size_t i = 0; i < set.n_streams; i++) {
    char out[128];
    if (set.streams[i].name == NULL)
      __builtin_trap();
    nl_name_fit(set.streams[i].name, out, sizeof(out));
    if (strlen(out) >= sizeof(out))
      __builtin_trap();
  }
  /* Both unreadable items and unreadable "missing" entries count as skipped,
   * never more than the page held. */
  if (page.n_skipped > page.n_items + page.n_missing)
    __builtin_trap();
  nl_snapshot_set_clear(&set);
  return 0;
}
