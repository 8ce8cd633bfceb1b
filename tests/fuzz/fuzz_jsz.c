/* fuzz_jsz.c: libFuzzer target for the system account's JSZ replies
 * (nl_jsz_add_reply, nl_jsz_finish).
 *
 * The input is one $SYS.REQ.SERVER.PING.JSZ reply as a server (or anything
 * pretending to be one) might send it, taken in twice: once as it is and
 * once cut short at half its length. Every input must give a result or an
 * error message; the merged view must be consistent (every consumer's
 * stream index names one of its account's streams, every name is set);
 * the sanitizers catch any memory or undefined-behaviour fault. */
#include "core/model/nl_jsz.h"
#include "core/model/nl_parse.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nl_jsz *z = nl_jsz_create(NULL, NULL);
  if (z == NULL)
    return 0;
  char err[256] = "";
  int rc = nl_jsz_add_reply(z, (const char *)data, size, err, sizeof(err));
  if (rc != NL_PARSE_OK && err[0] == '\0')
    __builtin_trap(); /* Every failure must say why. */
  err[0] = '\0';
  rc = nl_jsz_add_reply(z, (const char *)data, size / 2, err, sizeof(err));
  if (rc != NL_PARSE_OK && err[0] == '\0')
    __builtin_trap();
  nl_jsz_result r;
  if (nl_jsz_finish(z, &r) == 0) {
    for (size_t i = 0; i < r.n_accounts; i++) {
      const nl_snapshot_set *s = &r.accounts[i].set;
      if (r.accounts[i].id == NULL || r.accounts[i].name == NULL)
        __builtin_trap();
      for (size_t k = 0; k < s->n_streams; k++)
        if (s->streams[k].name == NULL)
          __builtin_trap();
      for (size_t k = 0; k < s->n_consumers; k++)
        if (s->consumers[k].stream_index >= s->n_streams ||
            s->consumers[k].name == NULL ||
            strcmp(s->consumers[k].stream,
                   s->streams[s->consumers[k].stream_index].name) != 0)
          __builtin_trap();
    }
    nl_jsz_result_clear(&r);
  }
  nl_jsz_free(z);
  return 0;
}
