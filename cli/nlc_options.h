/* nlc_options.h: the command line of nats-lens-check. */
#ifndef NLC_OPTIONS_H
#define NLC_OPTIONS_H

#include "core/detect/nl_audit.h"
#include "core/model/nl_expect.h"
#include "core/model/nl_select.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum {
  NLC_FORMAT_TEXT = 0,
  NLC_FORMAT_JSON,
  NLC_FORMAT_NAGIOS
} nlc_format;

typedef enum {
  NLC_COLOR_AUTO = 0,
  NLC_COLOR_ALWAYS,
  NLC_COLOR_NEVER
} nlc_color;

typedef struct {
  char **urls; /* Owned copies (--server may hold a comma list). */
  size_t n_urls;
  /* Authentication and TLS; borrowed from argv or the environment. */
  const char *user;
  const char *password;
  const char *token;
  const char *creds;
  const char *nkey;
  const char *tls_ca;
  const char *tls_cert;
  const char *tls_key;
  const char *inbox_prefix; /* --inbox-prefix, or NULL (cnats' _INBOX). */
  /* --stream and --exclude-stream (the globs are borrowed from argv). */
  nl_stream_select select;
  /* --system-account: the user is in the system account, and every
   * account is audited through one JSZ request; --account and
   * --exclude-account select accounts (globs borrowed from argv). */
  bool system_account;
  nl_stream_select accounts;
  double watch_s;   /* 0: configuration audit only. */
  unsigned samples; /* Snapshots taken with --watch (at least 2). */
  double timeout_s; /* Per request and for connecting. */
  nlc_format format;
  nl_severity fail_on;
  nlc_color color;
  nl_expect_spec *expects; /* Owned. */
  size_t n_expects;
  nl_audit_params audit;
} nlc_options;

/* What nlc_options_parse decided. */
#define NLC_OPTIONS_RUN 0
#define NLC_OPTIONS_HELP 1
#define NLC_OPTIONS_VERSION 2
#define NLC_OPTIONS_ERROR (-1)

/* Parses argv (and the NATS_URL, NATS_USER, NATS_PASSWORD and NATS_CREDS
 * environment variables, which options override) into o. Returns one of
 * the NLC_OPTIONS_* codes; on NLC_OPTIONS_ERROR a one-line reason is in
 * err. Call nlc_options_free afterwards in every case. */
int nlc_options_parse(int argc, char **argv, nlc_options *o, char *err,
                      size_t errlen);

void nlc_options_free(nlc_options *o);

/* Prints the --help text. */
void nlc_options_usage(FILE *out);

#endif
