/* nl_advisory_fetch.c: reading a consumer announced by a CREATED advisory (see
 * nl_advisory_fetch.h). */
#include "nl_advisory_fetch.h"

#include "core/model/nl_names.h"
#include "core/model/nl_parse.h"

#include <stdio.h>
#include <stdlib.h>

/* Sends one API request and parses its reply with the stream or consumer
 * parser (consumer when stream_index is not SIZE_MAX). Returns 0 or -1. */
static int fetch(nl_request_fn request, void *ctx, const char *subject,
                 size_t stream_index, nl_snapshot_set *set, char *err,
                 size_t errlen) {
  char *reply = NULL;
  size_t len = 0;
  char why[320];
  if (request(ctx, subject, "", &reply, &len, why, sizeof(why)) != 0) {
    snprintf(err, errlen, "%s: %s", subject, why);
    return -1;
  }
  int rc = stream_index == SIZE_MAX
               ? nl_parse_stream_info(reply, len, set, why, sizeof(why))
               : nl_parse_consumer_info(reply, len, stream_index, set, why,
                                        sizeof(why));
  free(reply);
  if (rc != NL_PARSE_OK) {
    snprintf(err, errlen, "%s: %s", subject, why);
    return -1;
  }
  return 0;
}

int nl_advisory_fetch_consumer(nl_request_fn request, void *ctx,
                               const char *stream, const char *consumer,
                               nl_snapshot_set *set, char *err, size_t errlen) {
  if (!nl_subject_token_valid(stream) || !nl_subject_token_valid(consumer)) {
    snprintf(err, errlen, "name not usable in a subject");
    return -1;
  }
  char subject[2 * NL_NAME_MAX + 64];
  snprintf(subject, sizeof(subject), "$JS.API.STREAM.INFO.%s", stream);
  if (fetch(request, ctx, subject, SIZE_MAX, set, err, errlen) != 0)
    return -1;
  snprintf(subject, sizeof(subject), "$JS.API.CONSUMER.INFO.%s.%s", stream,
           consumer);
  return fetch(request, ctx, subject, 0, set, err, errlen);
}
