/* nl_poll_log.c: a record of every reply a poll received, for evaluation. */
#include "nl_poll_log.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nl_poll_log {
  FILE *fh;
  uint64_t bytes;       /* Written so far, with what the file held. */
  bool stopped;         /* Nothing more is written. */
  bool stop_untold;     /* stopped, and not yet taken by the caller. */
  char why[128];        /* Why it stopped. */
  int64_t poll_time_ns; /* Of the poll being recorded. */
  nl_request_fn request;
  void *ctx;
};

int nl_poll_log_open(const char *path, nl_poll_log **out, char *err,
                     size_t errlen) {
  nl_poll_log *log = calloc(1, sizeof(*log));
  if (log == NULL) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  log->fh = fopen(path, "a");
  if (log->fh == NULL) {
    snprintf(err, errlen, "cannot open poll log \"%s\": %s", path,
             strerror(errno));
    free(log);
    return -1;
  }
  long at = ftell(log->fh);
  log->bytes = at > 0 ? (uint64_t)at : 0;
  *out = log;
  return 0;
}

void nl_poll_log_close(nl_poll_log *log) {
  if (log == NULL)
    return;
  fclose(log->fh);
  free(log);
}

void nl_poll_log_begin(nl_poll_log *log, int64_t poll_time_ns,
                       nl_request_fn request, void *ctx) {
  log->poll_time_ns = poll_time_ns;
  log->request = request;
  log->ctx = ctx;
}

/* Stops the log for good, keeping the reason for the caller. */
static void stop(nl_poll_log *log, const char *why) {
  log->stopped = true;
  log->stop_untold = true;
  snprintf(log->why, sizeof(log->why), "%s", why);
}

/* Writes the reply's bytes with line breaks turned into spaces: JSON
 * allows a raw line break only between tokens, where a space means the
 * same, so each reply stays on its one line. */
static int write_reply(FILE *fh, const char *reply, size_t len) {
  size_t from = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i < len && reply[i] != '\n' && reply[i] != '\r')
      continue;
    if (i > from && fwrite(reply + from, 1, i - from, fh) != i - from)
      return -1;
    if (i < len && fputc(' ', fh) == EOF)
      return -1;
    from = i + 1;
  }
  return 0;
}

/* Appends one line for a reply: {"t":..,"subject":..,"request":..,
 * "reply":..}. */
static void append(nl_poll_log *log, const char *subject, const char *payload,
                   const char *reply, size_t len) {
  if (log->stopped)
    return;
  if (log->bytes + len + 512 + strlen(subject) > NL_POLL_LOG_MAX_BYTES) {
    stop(log, "it reached 1 GiB");
    return;
  }
  json_object *subj = json_object_new_string(subject);
  const char *subj_text =
      subj ? json_object_to_json_string_ext(subj, JSON_C_TO_STRING_PLAIN)
           : "\"\"";
  /* payload is the poll's own request ({"offset":N}); an empty one is
   * written as null. */
  int n =
      fprintf(log->fh, "{\"t\":%.6f,\"subject\":%s,\"request\":%s,\"reply\":",
              (double)log->poll_time_ns / 1e9, subj_text,
              payload && payload[0] ? payload : "null");
  json_object_put(subj);
  if (n < 0 || write_reply(log->fh, reply, len) != 0 ||
      fputs("}\n", log->fh) == EOF || fflush(log->fh) != 0) {
    stop(log, strerror(errno));
    return;
  }
  log->bytes += (uint64_t)n + len + 2;
}

int nl_poll_log_request(void *ctx, const char *subject, const char *payload,
                        char **reply, size_t *reply_len, char *err,
                        size_t errlen) {
  nl_poll_log *log = ctx;
  int status =
      log->request(log->ctx, subject, payload, reply, reply_len, err, errlen);
  if (status == 0 && *reply != NULL)
    append(log, subject, payload, *reply, *reply_len);
  return status;
}

bool nl_poll_log_take_stopped(nl_poll_log *log, char *why, size_t whylen) {
  if (log == NULL || !log->stop_untold)
    return false;
  log->stop_untold = false;
  snprintf(why, whylen, "%s", log->why);
  return true;
}
