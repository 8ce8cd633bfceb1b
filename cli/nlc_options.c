/* nlc_options.c: the command line of nats-lens-check. */
#include "nlc_options.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nlc_options_usage(FILE *out) {
  fputs(
      "Usage: nats-lens-check [OPTIONS]\n"
      "\n"
      "Audits the JetStream streams and consumers of a NATS server for\n"
      "configurations that break at-least-once delivery, and with --watch\n"
      "also runs the live detectors of the nats_lens collectd plugin (the\n"
      "same code). Reads only the JetStream API: it never consumes, acks or\n"
      "changes a message or a consumer.\n"
      "\n"
      "Connection:\n"
      "  -s, --server URL        NATS URL; repeat or comma-separate for a\n"
      "                          cluster (default $NATS_URL, else\n"
      "                          nats://127.0.0.1:4222)\n"
      "      --creds FILE        credentials file (JWT and seed; $NATS_CREDS)\n"
      "      --user USER         user name ($NATS_USER)\n"
      "      --password PASS     password ($NATS_PASSWORD; the environment\n"
      "                          keeps it out of the process list)\n"
      "      --token TOKEN       authentication token ($NATS_TOKEN)\n"
      "      --nkey FILE         NKey seed file\n"
      "      --tls-ca FILE       CA certificates for tls:// servers\n"
      "      --tls-cert FILE     client certificate (with --tls-key)\n"
      "      --tls-key FILE      client key\n"
      "      --timeout SECONDS   per request and for connecting (default 5)\n"
      "      --inbox-prefix P    reply subjects under P (default _INBOX), for\n"
      "                          a user allowed to subscribe to P.> only\n"
      "\n"
      "What to check:\n"
      "      --stream GLOB       only streams matching GLOB (repeatable)\n"
      "      --exclude-stream GLOB  leave out matching streams (repeatable)\n"
      "      --system-account    the user is in the system account: audit\n"
      "                          every account, one request in all\n"
      "      --account GLOB      with --system-account, only accounts\n"
      "                          matching GLOB (repeatable)\n"
      "      --exclude-account GLOB  leave out matching accounts\n"
      "      --watch SECONDS     take --samples snapshots SECONDS apart and\n"
      "                          run the live detectors too\n"
      "      --samples N         snapshots for --watch (default 3, at least "
      "2)\n"
      "      --expect STREAM/CONSUMER:KEY=VALUE\n"
      "                          declare what the server cannot know, as the\n"
      "                          consumer metadata nats_lens.KEY would (for\n"
      "                          nats-server before 2.10, or to override);\n"
      "                          globs allowed; repeatable. KEY is\n"
      "                          max_processing (a duration: 30s, 2m),\n"
      "                          workers (a number) or dead_letter (a name)\n"
      "      --tiny-max-deliver N      max_deliver up to N needs dead-letter\n"
      "                                handling (default 3)\n"
      "      --min-max-ack-pending N   smallest max_ack_pending without\n"
      "                                declared workers (default 10)\n"
      "\n"
      "Output:\n"
      "      --format FORMAT     text (default), json or nagios\n"
      "      --fail-on LEVEL     critical (default) or warning: the lowest\n"
      "                          severity that makes the exit status\n"
      "                          non-zero for text and json\n"
      "      --color WHEN        auto (default: only on a terminal, and not\n"
      "                          when NO_COLOR is set), always or never\n"
      "  -h, --help              this text\n"
      "  -V, --version           the version\n"
      "\n"
      "Exit status: 0 nothing at or above --fail-on, 1 warnings (with\n"
      "--fail-on warning), 2 critical findings, 3 the check could not run\n"
      "(server unreachable, authentication failed, no JetStream, bad\n"
      "option). --format nagios always exits 0 OK, 1 WARNING, 2 CRITICAL,\n"
      "3 UNKNOWN.\n"
      "\n"
      "Examples:\n"
      "  # Is this server's configuration safe? (deployment pipeline)\n"
      "  nats-lens-check --server nats://nats.example:4222 --creds ci.creds\n"
      "\n"
      "  # Fail the pipeline on warnings too, for the ORDERS streams only\n"
      "  nats-lens-check --stream 'ORDERS*' --fail-on warning\n"
      "\n"
      "  # What is wrong right now? Watch for 10 s (6 snapshots 2 s apart)\n"
      "  nats-lens-check --watch 2 --samples 6\n"
      "\n"
      "  # Workers take up to 45 s per message (nats-server 2.9: no metadata)\n"
      "  nats-lens-check --expect 'ORDERS/ship:max_processing=45s'\n"
      "\n"
      "  # For machines, and as a Nagios/Icinga check\n"
      "  nats-lens-check --format json | jq '.findings[].class'\n"
      "  nats-lens-check --format nagios --server nats://127.0.0.1:4222\n",
      out);
}

/* Appends a copy of each comma-separated part of list to o->urls. Returns
 * 0, or -1 when memory runs out or a part is empty. */
static int add_urls(nlc_options *o, const char *list) {
  const char *p = list;
  for (;;) {
    size_t n = strcspn(p, ",");
    if (n == 0)
      return -1;
    char **urls = realloc(o->urls, (o->n_urls + 1) * sizeof(*urls));
    if (urls == NULL)
      return -1;
    o->urls = urls;
    if ((o->urls[o->n_urls] = strndup(p, n)) == NULL)
      return -1;
    o->n_urls++;
    if (p[n] == '\0')
      return 0;
    p += n + 1;
  }
}

/* Appends a borrowed string to a list. Returns 0, or -1. */
static int add_glob(char ***list, size_t *n, char *glob) {
  char **l = realloc(*list, (*n + 1) * sizeof(*l));
  if (l == NULL)
    return -1;
  l[(*n)++] = glob;
  *list = l;
  return 0;
}

/* Reads a number from min to max. Returns 0, or -1. */
static int number(const char *text, double min, double max, double *out) {
  char *end = NULL;
  double v = strtod(text, &end);
  if (end == text || *end != '\0' || !(v >= min && v <= max))
    return -1;
  *out = v;
  return 0;
}

/* Reads a duration in seconds (a number or Go syntax, nl_parse_duration)
 * from min to max seconds. Returns 0, or -1. */
static int duration_s(const char *text, double min, double max, double *out) {
  int64_t ns;
  if (nl_parse_duration(text, &ns) != 0)
    return -1;
  double v = (double)ns / 1e9;
  if (v < min || v > max)
    return -1;
  *out = v;
  return 0;
}

enum {
  OPT_CREDS = 256,
  OPT_USER,
  OPT_PASSWORD,
  OPT_TOKEN,
  OPT_NKEY,
  OPT_TLS_CA,
  OPT_TLS_CERT,
  OPT_TLS_KEY,
  OPT_TIMEOUT,
  OPT_INBOX_PREFIX,
  OPT_STREAM,
  OPT_EXCLUDE,
  OPT_WATCH,
  OPT_SAMPLES,
  OPT_SYSTEM_ACCOUNT,
  OPT_ACCOUNT,
  OPT_EXCLUDE_ACCOUNT,
  OPT_EXPECT,
  OPT_TINY_MAX_DELIVER,
  OPT_MIN_MAX_ACK_PENDING,
  OPT_FORMAT,
  OPT_FAIL_ON,
  OPT_COLOR,
};

static const struct option long_options[] = {
    {"server", required_argument, NULL, 's'},
    {"creds", required_argument, NULL, OPT_CREDS},
    {"user", required_argument, NULL, OPT_USER},
    {"password", required_argument, NULL, OPT_PASSWORD},
    {"token", required_argument, NULL, OPT_TOKEN},
    {"nkey", required_argument, NULL, OPT_NKEY},
    {"tls-ca", required_argument, NULL, OPT_TLS_CA},
    {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
    {"tls-key", required_argument, NULL, OPT_TLS_KEY},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"inbox-prefix", required_argument, NULL, OPT_INBOX_PREFIX},
    {"stream", required_argument, NULL, OPT_STREAM},
    {"exclude-stream", required_argument, NULL, OPT_EXCLUDE},
    {"watch", required_argument, NULL, OPT_WATCH},
    {"system-account", no_argument, NULL, OPT_SYSTEM_ACCOUNT},
    {"account", required_argument, NULL, OPT_ACCOUNT},
    {"exclude-account", required_argument, NULL, OPT_EXCLUDE_ACCOUNT},
    {"samples", required_argument, NULL, OPT_SAMPLES},
    {"expect", required_argument, NULL, OPT_EXPECT},
    {"tiny-max-deliver", required_argument, NULL, OPT_TINY_MAX_DELIVER},
    {"min-max-ack-pending", required_argument, NULL, OPT_MIN_MAX_ACK_PENDING},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"fail-on", required_argument, NULL, OPT_FAIL_ON},
    {"color", required_argument, NULL, OPT_COLOR},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Applies one parsed option. Returns 0, or -1 with err written. */
static int apply(nlc_options *o, int opt, char *arg, char *err, size_t errlen) {
  double v;
  switch (opt) {
  case 's':
    if (add_urls(o, arg) != 0) {
      snprintf(err, errlen, "--server needs URLs separated by commas");
      return -1;
    }
    return 0;
  case OPT_CREDS:
    o->creds = arg;
    return 0;
  case OPT_USER:
    o->user = arg;
    return 0;
  case OPT_PASSWORD:
    o->password = arg;
    return 0;
  case OPT_TOKEN:
    o->token = arg;
    return 0;
  case OPT_NKEY:
    o->nkey = arg;
    return 0;
  case OPT_TLS_CA:
    o->tls_ca = arg;
    return 0;
  case OPT_TLS_CERT:
    o->tls_cert = arg;
    return 0;
  case OPT_TLS_KEY:
    o->tls_key = arg;
    return 0;
  case OPT_TIMEOUT:
    if (duration_s(arg, 0.1, 600, &o->timeout_s) != 0) {
      snprintf(err, errlen, "--timeout needs 0.1 to 600 seconds");
      return -1;
    }
    return 0;
  case OPT_INBOX_PREFIX:
    o->inbox_prefix = arg;
    return 0;
  case OPT_SYSTEM_ACCOUNT:
    o->system_account = true;
    return 0;
  case OPT_STREAM:
  case OPT_EXCLUDE:
  case OPT_ACCOUNT:
  case OPT_EXCLUDE_ACCOUNT: {
    /* --stream and --exclude-stream select streams, --account and
     * --exclude-account accounts. */
    nl_stream_select *sel =
        opt == OPT_STREAM || opt == OPT_EXCLUDE ? &o->select : &o->accounts;
    bool exclude = opt == OPT_EXCLUDE || opt == OPT_EXCLUDE_ACCOUNT;
    if ((exclude ? add_glob(&sel->exclude, &sel->n_exclude, arg)
                 : add_glob(&sel->include, &sel->n_include, arg)) != 0) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    return 0;
  }
  case OPT_WATCH:
    if (duration_s(arg, 0.1, 3600, &o->watch_s) != 0) {
      snprintf(err, errlen, "--watch needs 0.1 to 3600 seconds");
      return -1;
    }
    return 0;
  case OPT_SAMPLES:
    if (number(arg, 2, 1000, &v) != 0 || v != (unsigned)v) {
      snprintf(err, errlen, "--samples needs a whole number from 2 to 1000");
      return -1;
    }
    o->samples = (unsigned)v;
    return 0;
  case OPT_EXPECT: {
    nl_expect_spec *e =
        realloc(o->expects, (o->n_expects + 1) * sizeof(*o->expects));
    if (e == NULL) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    o->expects = e;
    char why[400];
    if (nl_expect_parse_spec(arg, &o->expects[o->n_expects], why,
                             sizeof(why)) != 0) {
      snprintf(err, errlen, "--expect %s", why);
      return -1;
    }
    o->n_expects++;
    return 0;
  }
  case OPT_TINY_MAX_DELIVER:
  case OPT_MIN_MAX_ACK_PENDING:
    if (number(arg, 1, 1e9, &v) != 0 || v != (int64_t)v) {
      snprintf(err, errlen, "--%s needs a whole number of at least 1",
               opt == OPT_TINY_MAX_DELIVER ? "tiny-max-deliver"
                                           : "min-max-ack-pending");
      return -1;
    }
    if (opt == OPT_TINY_MAX_DELIVER)
      o->audit.tiny_max_deliver = (int64_t)v;
    else
      o->audit.min_max_ack_pending = (int64_t)v;
    return 0;
  case OPT_FORMAT:
    if (strcmp(arg, "text") == 0)
      o->format = NLC_FORMAT_TEXT;
    else if (strcmp(arg, "json") == 0)
      o->format = NLC_FORMAT_JSON;
    else if (strcmp(arg, "nagios") == 0)
      o->format = NLC_FORMAT_NAGIOS;
    else {
      snprintf(err, errlen, "--format is text, json or nagios");
      return -1;
    }
    return 0;
  case OPT_FAIL_ON:
    if (strcmp(arg, "critical") == 0)
      o->fail_on = NL_SEVERITY_CRITICAL;
    else if (strcmp(arg, "warning") == 0)
      o->fail_on = NL_SEVERITY_WARNING;
    else {
      snprintf(err, errlen, "--fail-on is warning or critical");
      return -1;
    }
    return 0;
  case OPT_COLOR:
    if (strcmp(arg, "auto") == 0)
      o->color = NLC_COLOR_AUTO;
    else if (strcmp(arg, "always") == 0)
      o->color = NLC_COLOR_ALWAYS;
    else if (strcmp(arg, "never") == 0)
      o->color = NLC_COLOR_NEVER;
    else {
      snprintf(err, errlen, "--color is auto, always or never");
      return -1;
    }
    return 0;
  default:
    snprintf(err, errlen, "unknown option");
    return -1;
  }
}

/* Returns the environment variable name when set and not empty, else
 * NULL. */
static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && v[0] ? v : NULL;
}

int nlc_options_parse(int argc, char **argv, nlc_options *o, char *err,
                      size_t errlen) {
  memset(o, 0, sizeof(*o));
  o->samples = 3;
  o->timeout_s = 5;
  o->fail_on = NL_SEVERITY_CRITICAL;
  nl_audit_params_default(&o->audit);
  o->user = env("NATS_USER");
  o->password = env("NATS_PASSWORD");
  o->creds = env("NATS_CREDS");
  o->token = env("NATS_TOKEN");
  bool samples_set = false;
  opterr = 0;
  optind = 1;
  int opt;
  while ((opt = getopt_long(argc, argv, ":s:hV", long_options, NULL)) != -1) {
    if (opt == 'h')
      return NLC_OPTIONS_HELP;
    if (opt == 'V')
      return NLC_OPTIONS_VERSION;
    if (opt == '?' || opt == ':') {
      const char *name = argv[optind - 1] ? argv[optind - 1] : "?";
      snprintf(err, errlen,
               opt == ':' ? "option %.100s needs a value"
                          : "unknown option %.100s",
               name);
      return NLC_OPTIONS_ERROR;
    }
    if (opt == OPT_SAMPLES)
      samples_set = true;
    if (apply(o, opt, optarg, err, errlen) != 0)
      return NLC_OPTIONS_ERROR;
  }
  if (optind < argc) {
    snprintf(err, errlen, "unexpected argument \"%.100s\"", argv[optind]);
    return NLC_OPTIONS_ERROR;
  }
  if ((o->accounts.n_include || o->accounts.n_exclude) && !o->system_account) {
    snprintf(err, errlen,
             "--account and --exclude-account go with "
             "--system-account");
    return NLC_OPTIONS_ERROR;
  }
  if (o->system_account && o->watch_s > 0) {
    snprintf(err, errlen,
             "--watch does not go with --system-account (the "
             "audit reads every account once)");
    return NLC_OPTIONS_ERROR;
  }
  if (samples_set && o->watch_s == 0) {
    snprintf(err, errlen, "--samples goes with --watch");
    return NLC_OPTIONS_ERROR;
  }
  if (o->n_urls == 0 &&
      add_urls(o, env("NATS_URL") ? env("NATS_URL")
                                  : "nats://127.0.0.1:4222") != 0) {
    snprintf(err, errlen, "NATS_URL needs URLs separated by commas");
    return NLC_OPTIONS_ERROR;
  }
  return NLC_OPTIONS_RUN;
}

void nlc_options_free(nlc_options *o) {
  for (size_t i = 0; i < o->n_urls; i++)
    free(o->urls[i]);
  free(o->urls);
  free(o->select.include);
  free(o->select.exclude);
  free(o->accounts.include);
  free(o->accounts.exclude);
  for (size_t i = 0; i < o->n_expects; i++)
    nl_expect_spec_free(&o->expects[i]);
  free(o->expects);
  memset(o, 0, sizeof(*o));
}
