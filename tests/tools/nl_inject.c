/*
 * nl-inject: a JetStream fault-injection tool for the nats-lens tests.
 *
 * Build (make tests/tools/nl-inject):
 *   cc -std=gnu11 -O2 -Wall -Wextra -Iplugin -o tests/tools/nl-inject \
 *     tests/tools/nl_inject.c plugin/jsapi/nl_nkey.c -lnats -ljson-c -lcrypto \
 *     -lpthread
 *
 * Every JetStream operation is a raw JSON request on a `$JS.API.` subject so
 * that the behaviour under test is explicit and does not depend on the
 * helpers of the client library. Every run is bounded in time: each command
 * has its own deadline, and a watchdog alarm ends the process if anything
 * blocks past it. Run `nl-inject help` for the command line.
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <nats/nats.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jsapi/nl_nkey.h"

#define DEFAULT_SERVER "nats://127.0.0.1:4222"
#define MAX_OPTS 64
#define MAX_POS 8
#define SUBJ_MAX 512

static const char *usage_text =
    "usage: nl-inject [--server URL] [--timeout-ms MS] COMMAND ARGS...\n"
    "\n"
    "  stream-create NAME --subjects a,b [--retention limits|interest|"
    "workqueue]\n"
    "      [--max-msgs N] [--max-bytes N] [--max-age SECONDS] [--replicas N]\n"
    "      [--storage file|memory] [--cluster NAME]  (placement in that\n"
    "                                     cluster; updates the stream if it\n"
    "                                     exists)\n"
    "      [--max-msgs-per-subject N] [--allow-msg-ttl]\n"
    "      [--subject-delete-marker-ttl SECONDS]  (the last two need\n"
    "                                     nats-server 2.11+)\n"
    "      [--allow-msg-schedules]        (nats-server 2.12+)\n"
    "      [--discard old|new] [--discard-per-subject]\n"
    "      [--metadata KEY=VALUE]...      (nats-server 2.10+; repeatable)\n"
    "      [--max-msg-size BYTES]         (also the burst of a consumer's\n"
    "                                     rate limit)\n"
    "  stream-edit NAME [--max-msgs N] [--max-bytes N] [--max-age SECONDS]\n"
    "      [--replicas N] [--max-msgs-per-subject N] [--discard old|new]\n"
    "                                     (the others kept, as `nats stream "
    "edit`)\n"
    "  stream-delete NAME\n"
    "  consumer-create STREAM NAME [--filter SUBJ] [--ack explicit|all|none]\n"
    "      [--ack-wait SECONDS] [--max-deliver N] [--max-ack-pending N]\n"
    "      [--deliver-subject SUBJ] [--deliver-group G] [--backoff s1,s2,...]\n"
    "      [--deliver-policy all|new]     (push with --deliver-subject, else "
    "pull)\n"
    "      [--metadata KEY=VALUE]...      (nats-server 2.10+; repeatable)\n"
    "      [--priority-group G --priority-policy overflow|pinned_client|\n"
    "      prioritized [--priority-timeout SECONDS]]  (pull, 2.11+)\n"
    "      [--replicas N] [--memory]\n"
    "      [--rate-limit-bps BITS]        (push: rate_limit_bps)\n"
    "      [--flow-control --heartbeat SECONDS]  (push: flow control and\n"
    "                                     idle heartbeats)\n"
    "      [--inactive-threshold SECONDS] [--ephemeral]  (a name, no durable\n"
    "                                     name); --deliver-policy N starts\n"
    "                                     at stream sequence N\n"
    "  consumer-edit STREAM NAME [--ack-wait SECONDS] [--max-ack-pending N]\n"
    "      [--max-deliver N] [--backoff none|s1,s2,...] [--replicas N]\n"
    "      [--rate-limit-bps BITS]        (0 removes the limit)\n"
    "      [--inactive-threshold SECONDS]\n"
    "                                     (the others kept, as\n"
    "                                     `nats consumer edit`)\n"
    "      [--metadata KEY=VALUE]...      (sets KEY, the other keys kept)\n"
    "  consumer-delete STREAM NAME\n"
    "  consumer-redeploy STREAM NAME   (deleted, created again at its ack\n"
    "      floor + 1 with the same configuration)\n"
    "  publish SUBJECT --count N [--rate PER_SEC] [--size BYTES]\n"
    "      [--keep-going]                 (a failed publish is counted, not "
    "fatal)\n"
    "      [--ttl TTL]                    (each message's Nats-TTL header, "
    "such as 2s)\n"
    "      [--schedule PATTERN --schedule-target SUBJ]  (Nats-Schedule, such\n"
    "                                     as \"@at 2025-01-01T00:00:00Z\", "
    "2.12+)\n"
    "  consume STREAM CONSUMER --duration SECONDS [--mode pull|push]\n"
    "      [--deliver-subject SUBJ] [--queue G] [--batch B] [--workers W]\n"
    "      [--process-ms P] [--process-dist fixed|lognormal]\n"
    "      [--process-sigma S] [--seed N] [--slow-every K --slow-ms P2]\n"
    "      [--stagger-ms MS] [--in-progress [--progress-ms MS]]\n"
    "      [--nak | --nak-seq-mod K | --no-ack] [--term-seq-mod K\n"
    "      [--no-flow-control]            (push: flow-control requests go\n"
    "                                     unanswered, as by a plain\n"
    "                                     subscription)\n"
    "      [--term-reason TEXT]]          (+TERM with the reason TEXT)\n"
    "      [--nak-first-delay-ms MS] [--nak-retries N]\n"
    "      [--max-msgs N] [--expires-ms MS] [--verbose]\n"
    "      [--group G [--min-pending N] [--priority N]]  (pull requests of\n"
    "      priority group G; each worker sends back the pin id it was given)\n"
    "      (lognormal: each message takes P x exp(S x z) ms, z standard\n"
    "      normal, capped at 20 x P; S default 0.5, N default 1, one "
    "generator\n"
    "      per worker; worker i starts i x --stagger-ms late)\n"
    "  info STREAM CONSUMER              (raw CONSUMER.INFO reply)\n"
    "  watch STREAM CONSUMER [--interval SECONDS] [--count N]\n"
    "  record SUBJECT [--count N] [--out FILE] [--duration SECONDS]\n"
    "  request SUBJECT [BODY]            (raw API request, prints the reply)\n"
    "  gather SUBJECT [BODY] [--count N] (prints every reply within\n"
    "                                     --timeout-ms, one per line)\n"
    "  churn STREAM --duration SECONDS   (ephemeral consumers created and\n"
    "                                     deleted as fast as possible)\n"
    "  respond SUBJECT (--reply JSON | --reply-file FILE) [--delay-ms MS]\n"
    "      [--duration SECONDS] [--count N]  (answers requests on SUBJECT,\n"
    "                                        wildcards allowed)\n"
    "\n"
    "--server may appear anywhere; default " DEFAULT_SERVER ".\n"
    "Authentication: user:password@ or token@ in the URL, or --creds FILE,\n"
    "--nkey SEED_FILE; TLS: a tls:// URL with --tls-ca FILE and optionally\n"
    "--tls-cert FILE --tls-key FILE. All of these may appear anywhere.\n"
    "Exit status: 0 success, 1 request or API error, 2 usage error.\n";

/* Options that never take a value; every other option takes one. */
static const char *flag_opts[] = {"--in-progress",
                                  "--nak",
                                  "--no-ack",
                                  "--help",
                                  "--verbose",
                                  "--keep-going",
                                  "--allow-msg-ttl",
                                  "--allow-msg-schedules",
                                  "--memory",
                                  "--ephemeral",
                                  "--discard-per-subject",
                                  "--flow-control",
                                  "--no-flow-control",
                                  NULL};

/* The parsed command line: positionals in order, options by name. */
static struct {
  const char *pos[MAX_POS];
  int npos;
  const char *opt_name[MAX_OPTS];
  const char *opt_val[MAX_OPTS];
  int nopt;
} args;

static natsConnection *g_nc;
static int64_t g_timeout_ms = 2000;

/* Prints a message to stderr and exits with STATUS. */
static void die(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("nl-inject: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(status);
}

/* Returns a monotonic clock reading in milliseconds. */
static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps for MS milliseconds; negative or zero values return at once. */
static void sleep_ms(int64_t ms) {
  if (ms <= 0)
    return;
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
    ;
}

/* Formats the current UTC wall clock as HH:MM:SS.mmm into BUF (>= 16). */
static void wall_hms(char *buf, size_t len) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  snprintf(buf, len, "%02d:%02d:%02d.%03ld", tm.tm_hour, tm.tm_min, tm.tm_sec,
           ts.tv_nsec / 1000000);
}

static bool is_flag(const char *name) {
  for (int i = 0; flag_opts[i]; i++)
    if (strcmp(flag_opts[i], name) == 0)
      return true;
  return false;
}

/* Splits ARGV into positionals and options; exits 2 on malformed input. */
static void parse_args(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strncmp(a, "--", 2) == 0 && a[2] != '\0') {
      if (args.nopt == MAX_OPTS)
        die(2, "too many options");
      args.opt_name[args.nopt] = a;
      if (is_flag(a)) {
        args.opt_val[args.nopt] = "1";
      } else {
        if (i + 1 >= argc)
          die(2, "option %s needs a value", a);
        args.opt_val[args.nopt] = argv[++i];
      }
      args.nopt++;
    } else {
      if (args.npos == MAX_POS)
        die(2, "too many arguments");
      args.pos[args.npos++] = a;
    }
  }
}

/* Exits 2 unless every given option is global or listed in ALLOWED, and the
 * number of positionals (command included) lies in [MINPOS, MAXPOS]. */
static void check_args(const char *allowed, int minpos, int maxpos) {
  for (int i = 0; i < args.nopt; i++) {
    const char *n = args.opt_name[i];
    if (strcmp(n, "--server") == 0 || strcmp(n, "--timeout-ms") == 0 ||
        strcmp(n, "--creds") == 0 || strcmp(n, "--nkey") == 0 ||
        strncmp(n, "--tls-", 6) == 0)
      continue;
    size_t len = strlen(n);
    const char *p = allowed;
    bool ok = false;
    while ((p = strstr(p, n)) != NULL) {
      if ((p == allowed || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) {
        ok = true;
        break;
      }
      p += len;
    }
    if (!ok)
      die(2, "option %s is not valid for %s", n, args.pos[0]);
  }
  if (args.npos < minpos || args.npos > maxpos)
    die(2, "wrong number of arguments for %s (see nl-inject help)",
        args.pos[0]);
}

/* Returns the last value given for option NAME, or DEF. */
static const char *opt_str(const char *name, const char *def) {
  const char *v = def;
  for (int i = 0; i < args.nopt; i++)
    if (strcmp(args.opt_name[i], name) == 0)
      v = args.opt_val[i];
  return v;
}

static bool opt_has(const char *name) { return opt_str(name, NULL) != NULL; }

/* Returns option NAME as an integer, or DEF; exits 2 on a malformed value. */
static int64_t opt_ll(const char *name, int64_t def) {
  const char *v = opt_str(name, NULL);
  if (!v)
    return def;
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || *end || end == v)
    die(2, "option %s wants an integer, got '%s'", name, v);
  return x;
}

/* Returns option NAME as a number, or DEF; exits 2 on a malformed value. */
static double opt_double(const char *name, double def) {
  const char *v = opt_str(name, NULL);
  if (!v)
    return def;
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (errno || *end || end == v)
    die(2, "option %s wants a number, got '%s'", name, v);
  return x;
}

/* Converts seconds to nanoseconds, rounding to the nearest nanosecond. */
static int64_t sec_to_ns(double s) { return (int64_t)(s * 1e9 + 0.5); }

/* Connects to the server named by --server; exits 1 on failure. */
static void connect_server(void) {
  natsOptions *opts = NULL;
  const char *url = opt_str("--server", DEFAULT_SERVER);
  g_timeout_ms = opt_ll("--timeout-ms", 2000);
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK)
    s = natsOptions_SetURL(opts, url);
  if (s == NATS_OK)
    s = natsOptions_SetTimeout(opts, g_timeout_ms);
  if (s == NATS_OK)
    s = natsOptions_SetAllowReconnect(opts, false);
  if (s == NATS_OK && opt_has("--creds"))
    s = natsOptions_SetUserCredentialsFromFiles(opts, opt_str("--creds", NULL),
                                                NULL);
  if (s == NATS_OK && opt_has("--nkey")) {
    char pub[NL_NKEY_PUBLIC_LEN + 1], why[256];
    if (nl_nkey_public_from_seed_file(opt_str("--nkey", NULL), pub, sizeof(pub),
                                      why, sizeof(why)) != 0)
      die(2, "--nkey: %s", why);
    s = natsOptions_SetNKeyFromSeed(opts, pub, opt_str("--nkey", NULL));
  }
  if (s == NATS_OK && (opt_has("--tls-ca") || strncmp(url, "tls://", 6) == 0))
    s = natsOptions_SetSecure(opts, true);
  if (s == NATS_OK && opt_has("--tls-ca"))
    s = natsOptions_LoadCATrustedCertificates(opts, opt_str("--tls-ca", NULL));
  if (s == NATS_OK && opt_has("--tls-cert"))
    s = natsOptions_LoadCertificatesChain(opts, opt_str("--tls-cert", NULL),
                                          opt_str("--tls-key", NULL));
  if (s == NATS_OK)
    s = nl_nkey_connect(&g_nc, opts, opt_has("--nkey") || opt_has("--creds"));
  natsOptions_Destroy(opts);
  if (s != NATS_OK)
    die(1, "cannot connect to %s: %s", url, natsStatus_GetText(s));
}

/* Sends BODY to SUBJ and returns the reply text (caller frees), or NULL after
 * printing why to stderr. */
static char *raw_request(const char *subj, const char *body) {
  natsMsg *reply = NULL;
  natsStatus s = natsConnection_RequestString(&reply, g_nc, subj,
                                              body ? body : "", g_timeout_ms);
  if (s == NATS_NO_RESPONDERS) {
    fprintf(stderr, "nl-inject: %s: no responders (is JetStream enabled?)\n",
            subj);
    return NULL;
  }
  if (s != NATS_OK) {
    fprintf(stderr, "nl-inject: %s: %s\n", subj, natsStatus_GetText(s));
    return NULL;
  }
  int len = natsMsg_GetDataLength(reply);
  char *text = malloc((size_t)len + 1);
  if (!text)
    die(1, "out of memory");
  memcpy(text, natsMsg_GetData(reply), (size_t)len);
  text[len] = '\0';
  natsMsg_Destroy(reply);
  return text;
}

/* Returns the integer member KEY of OBJ, or DEF when it is missing. */
static int64_t jint(json_object *obj, const char *key, int64_t def) {
  json_object *v;
  if (!obj || !json_object_object_get_ex(obj, key, &v))
    return def;
  return json_object_get_int64(v);
}

/* Returns the string member KEY of OBJ, or DEF when it is missing. */
static const char *jstr(json_object *obj, const char *key, const char *def) {
  json_object *v;
  if (!obj || !json_object_object_get_ex(obj, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return def;
  return json_object_get_string(v);
}

/* Returns the object member KEY of OBJ, or NULL. */
static json_object *jobj(json_object *obj, const char *key) {
  json_object *v;
  if (!obj || !json_object_object_get_ex(obj, key, &v))
    return NULL;
  return v;
}

/* Sends BODY to SUBJ and returns the parsed reply. Returns NULL after printing
 * why when the request fails, the reply is not JSON, or it has an `error`
 * object; in the last case *ERR_CODE receives its err_code (else 0). */
static json_object *js_request(const char *subj, const char *body,
                               int64_t *err_code) {
  if (err_code)
    *err_code = 0;
  char *text = raw_request(subj, body);
  if (!text)
    return NULL;
  json_object *reply = json_tokener_parse(text);
  if (!reply) {
    fprintf(stderr, "nl-inject: %s: reply is not JSON: %s\n", subj, text);
    free(text);
    return NULL;
  }
  free(text);
  json_object *err = jobj(reply, "error");
  if (err) {
    if (err_code)
      *err_code = jint(err, "err_code", -1);
    fprintf(stderr,
            "nl-inject: %s: API error code %" PRId64 " err_code %" PRId64
            ": %s\n",
            subj, jint(err, "code", -1), jint(err, "err_code", -1),
            jstr(err, "description", "(no description)"));
    json_object_put(reply);
    return NULL;
  }
  return reply;
}

/* Like js_request, but exits 1 on any failure. */
static json_object *js_request_ok(const char *subj, const char *body) {
  json_object *reply = js_request(subj, body, NULL);
  if (!reply)
    exit(1);
  return reply;
}

/* Builds SUBJ from a format; exits 2 if it does not fit. */
static void subjf(char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, SUBJ_MAX, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= SUBJ_MAX)
    die(2, "subject too long");
}

/* Returns a JSON array of the comma-separated items of LIST; when AS_NS is
 * set, items are seconds converted to integer nanoseconds. */
static json_object *csv_array(const char *list, bool as_ns) {
  json_object *arr = json_object_new_array();
  char *copy = strdup(list);
  char *save = NULL;
  for (char *tok = strtok_r(copy, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (as_ns) {
      char *end;
      double x = strtod(tok, &end);
      if (*end || end == tok)
        die(2, "bad duration '%s' in list '%s'", tok, list);
      json_object_array_add(arr, json_object_new_int64(sec_to_ns(x)));
    } else {
      json_object_array_add(arr, json_object_new_string(tok));
    }
  }
  free(copy);
  return arr;
}

/* Sets the --metadata KEY=VALUE options in cfg's metadata (below). */
static void set_metadata(json_object *cfg);

/* stream-create: creates the stream, or updates it when it already exists. */
static int cmd_stream_create(void) {
  check_args("--subjects --retention --max-msgs --max-bytes --max-age "
             "--replicas --storage --cluster --max-msgs-per-subject "
             "--allow-msg-ttl --subject-delete-marker-ttl "
             "--allow-msg-schedules --discard --discard-per-subject "
             "--metadata --max-msg-size",
             2, 2);
  const char *name = args.pos[1];
  const char *subjects = opt_str("--subjects", NULL);
  if (!subjects)
    die(2, "stream-create needs --subjects");
  connect_server();
  json_object *cfg = json_object_new_object();
  json_object_object_add(cfg, "name", json_object_new_string(name));
  json_object_object_add(cfg, "subjects", csv_array(subjects, false));
  json_object_object_add(
      cfg, "retention",
      json_object_new_string(opt_str("--retention", "limits")));
  json_object_object_add(cfg, "max_msgs",
                         json_object_new_int64(opt_ll("--max-msgs", -1)));
  json_object_object_add(cfg, "max_bytes",
                         json_object_new_int64(opt_ll("--max-bytes", -1)));
  json_object_object_add(
      cfg, "max_age",
      json_object_new_int64(sec_to_ns(opt_double("--max-age", 0))));
  json_object_object_add(cfg, "max_consumers", json_object_new_int64(-1));
  json_object_object_add(cfg, "max_msg_size",
                         json_object_new_int64(opt_ll("--max-msg-size", -1)));
  json_object_object_add(
      cfg, "storage", json_object_new_string(opt_str("--storage", "memory")));
  json_object_object_add(cfg, "num_replicas",
                         json_object_new_int64(opt_ll("--replicas", 1)));
  json_object_object_add(cfg, "discard",
                         json_object_new_string(opt_str("--discard", "old")));
  if (opt_has("--max-msgs-per-subject"))
    json_object_object_add(
        cfg, "max_msgs_per_subject",
        json_object_new_int64(opt_ll("--max-msgs-per-subject", -1)));
  if (opt_has("--discard-per-subject"))
    json_object_object_add(cfg, "discard_new_per_subject",
                           json_object_new_boolean(1));
  set_metadata(cfg);
  /* Per-message TTLs and subject delete markers (nats-server 2.11+). */
  if (opt_has("--allow-msg-ttl"))
    json_object_object_add(cfg, "allow_msg_ttl", json_object_new_boolean(1));
  if (opt_has("--subject-delete-marker-ttl"))
    json_object_object_add(cfg, "subject_delete_marker_ttl",
                           json_object_new_int64(sec_to_ns(
                               opt_double("--subject-delete-marker-ttl", 0))));
  /* Message schedules (nats-server 2.12+; the server turns on roll-ups,
   * which schedules need). */
  if (opt_has("--allow-msg-schedules"))
    json_object_object_add(cfg, "allow_msg_schedules",
                           json_object_new_boolean(1));
  /* --cluster: the stream's placement, one cluster of a super-cluster. */
  if (opt_has("--cluster")) {
    json_object *pl = json_object_new_object();
    json_object_object_add(pl, "cluster",
                           json_object_new_string(opt_str("--cluster", "")));
    json_object_object_add(cfg, "placement", pl);
  }
  const char *body =
      json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PLAIN);

  /* The stream exists when STREAM.INFO answers without an error. */
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.STREAM.INFO.%s", name);
  char *info = raw_request(subj, "");
  if (!info)
    return 1;
  json_object *infoj = json_tokener_parse(info);
  bool exists = infoj && !jobj(infoj, "error");
  json_object_put(infoj);
  free(info);

  subjf(subj, "$JS.API.STREAM.%s.%s", exists ? "UPDATE" : "CREATE", name);
  json_object *reply = js_request_ok(subj, body);
  json_object *rc = jobj(reply, "config");
  json_object *st = jobj(reply, "state");
  printf("%s stream %s retention=%s max_msgs=%" PRId64 " max_bytes=%" PRId64
         " max_age_ns=%" PRId64 " storage=%s first_seq=%" PRId64
         " last_seq=%" PRId64 " messages=%" PRId64 "\n",
         exists ? "updated" : "created", name, jstr(rc, "retention", "?"),
         jint(rc, "max_msgs", 0), jint(rc, "max_bytes", 0),
         jint(rc, "max_age", 0), jstr(rc, "storage", "?"),
         jint(st, "first_seq", 0), jint(st, "last_seq", 0),
         jint(st, "messages", 0));
  json_object_put(reply);
  json_object_put(cfg);
  return 0;
}

/* stream-delete: deletes the stream. */
static int cmd_stream_delete(void) {
  check_args("", 2, 2);
  connect_server();
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.STREAM.DELETE.%s", args.pos[1]);
  json_object *reply = js_request_ok(subj, "");
  printf("deleted stream %s\n", args.pos[1]);
  json_object_put(reply);
  return 0;
}

/* consumer-delete: deletes the consumer. */
static int cmd_consumer_delete(void) {
  check_args("", 3, 3);
  connect_server();
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.CONSUMER.DELETE.%s.%s", args.pos[1], args.pos[2]);
  json_object *reply = js_request_ok(subj, "");
  printf("deleted consumer %s.%s\n", args.pos[1], args.pos[2]);
  json_object_put(reply);
  return 0;
}

/* consumer-redeploy: deletes a durable consumer and creates it again with
 * the same configuration, starting where it had acknowledged (deliver
 * policy by_start_sequence at its ack floor + 1), as a careful redeploy
 * does; prints the start sequence. */
static int cmd_consumer_redeploy(void) {
  check_args("", 3, 3);
  const char *stream = args.pos[1], *name = args.pos[2];
  connect_server();
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.CONSUMER.INFO.%s.%s", stream, name);
  json_object *info = js_request_ok(subj, "");
  json_object *cfg = jobj(info, "config");
  if (!cfg)
    die(1, "consumer %s.%s: no config in its info", stream, name);
  int64_t start = jint(jobj(info, "ack_floor"), "stream_seq", 0) + 1;
  subjf(subj, "$JS.API.CONSUMER.DELETE.%s.%s", stream, name);
  json_object_put(js_request_ok(subj, ""));
  json_object_object_add(cfg, "deliver_policy",
                         json_object_new_string("by_start_sequence"));
  json_object_object_add(cfg, "opt_start_seq", json_object_new_int64(start));
  json_object *req = json_object_new_object();
  json_object_object_add(req, "stream_name", json_object_new_string(stream));
  json_object_object_add(req, "config", json_object_get(cfg));
  subjf(subj, "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s", stream, name);
  json_object_put(js_request_ok(
      subj, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN)));
  printf("redeployed consumer %s.%s opt_start_seq=%" PRId64 "\n", stream, name,
         start);
  json_object_put(req);
  json_object_put(info);
  return 0;
}

/* Returns true when the integer KEY of A and B differ (missing counts as 0). */
static bool int_differs(json_object *a, json_object *b, const char *key) {
  return jint(a, key, 0) != jint(b, key, 0);
}

/* Finds the first --metadata KEY=VALUE option at index from or later:
 * returns its index and sets *key (malloc'd, the caller frees it) and
 * *value (borrowed), or returns -1 when there is none. Exits 2 on an
 * option without '=' or with an empty key. */
static int metadata_opt(int from, char **key, const char **value) {
  for (int i = from; i < args.nopt; i++) {
    if (strcmp(args.opt_name[i], "--metadata") != 0)
      continue;
    const char *kv = args.opt_val[i], *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv)
      die(2, "--metadata wants KEY=VALUE, got '%s'", kv);
    if ((*key = strndup(kv, (size_t)(eq - kv))) == NULL)
      die(1, "out of memory");
    *value = eq + 1;
    return i;
  }
  return -1;
}

/* Sets each --metadata KEY=VALUE option, in order, in the "metadata"
 * object of cfg (created when missing; other keys kept). */
static void set_metadata(json_object *cfg) {
  json_object *meta = jobj(cfg, "metadata");
  char *key;
  const char *value;
  for (int i = 0; (i = metadata_opt(i, &key, &value)) >= 0; i++) {
    if (meta == NULL || !json_object_is_type(meta, json_type_object)) {
      meta = json_object_new_object();
      json_object_object_add(cfg, "metadata", meta);
    }
    json_object_object_add(meta, key, json_object_new_string(value));
    free(key);
  }
}

/* Returns true when the "metadata" object of have holds every --metadata
 * KEY=VALUE option given (the server may add keys of its own). */
static bool metadata_kept(json_object *have) {
  json_object *h = jobj(have, "metadata");
  char *key;
  const char *value;
  bool kept = true;
  for (int i = 0; (i = metadata_opt(i, &key, &value)) >= 0; i++) {
    const char *got = jstr(h, key, NULL);
    kept = kept && got != NULL && strcmp(got, value) == 0;
    free(key);
  }
  return kept;
}

/* consumer-create: creates a durable consumer, or updates it when it exists,
 * and checks that the server kept the requested tunables. */
static int cmd_consumer_create(void) {
  check_args("--filter --ack --ack-wait --max-deliver --max-ack-pending "
             "--deliver-subject --deliver-group --backoff --deliver-policy "
             "--metadata --priority-group --priority-policy --priority-timeout "
             "--replicas --memory --rate-limit-bps --inactive-threshold "
             "--ephemeral --flow-control --heartbeat",
             3, 3);
  const char *stream = args.pos[1], *name = args.pos[2];
  bool ephemeral = opt_has("--ephemeral");
  json_object *cfg = json_object_new_object();
  /* --ephemeral: a name but no durable name, as a client that sets only
   * the name makes (the server stamps a 5 s inactive_threshold). */
  json_object_object_add(cfg, ephemeral ? "name" : "durable_name",
                         json_object_new_string(name));
  /* A number: deliver by start sequence (`nats consumer add --deliver N`). */
  const char *policy = opt_str("--deliver-policy", "all");
  char *end = NULL;
  long long start = strtoll(policy, &end, 10);
  if (*policy != '\0' && *end == '\0' && start > 0) {
    json_object_object_add(cfg, "deliver_policy",
                           json_object_new_string("by_start_sequence"));
    json_object_object_add(cfg, "opt_start_seq", json_object_new_int64(start));
  } else {
    json_object_object_add(cfg, "deliver_policy",
                           json_object_new_string(policy));
  }
  if (opt_has("--inactive-threshold"))
    json_object_object_add(cfg, "inactive_threshold",
                           json_object_new_int64(sec_to_ns(
                               opt_double("--inactive-threshold", 0))));
  json_object_object_add(cfg, "ack_policy",
                         json_object_new_string(opt_str("--ack", "explicit")));
  json_object_object_add(cfg, "replay_policy",
                         json_object_new_string("instant"));
  if (opt_has("--ack-wait"))
    json_object_object_add(
        cfg, "ack_wait",
        json_object_new_int64(sec_to_ns(opt_double("--ack-wait", 30))));
  if (opt_has("--max-deliver"))
    json_object_object_add(cfg, "max_deliver",
                           json_object_new_int64(opt_ll("--max-deliver", -1)));
  if (opt_has("--max-ack-pending"))
    json_object_object_add(
        cfg, "max_ack_pending",
        json_object_new_int64(opt_ll("--max-ack-pending", -1)));
  if (opt_has("--filter"))
    json_object_object_add(cfg, "filter_subject",
                           json_object_new_string(opt_str("--filter", "")));
  if (opt_has("--deliver-subject"))
    json_object_object_add(
        cfg, "deliver_subject",
        json_object_new_string(opt_str("--deliver-subject", "")));
  if (opt_has("--deliver-group"))
    json_object_object_add(
        cfg, "deliver_group",
        json_object_new_string(opt_str("--deliver-group", "")));
  if (opt_has("--backoff"))
    json_object_object_add(cfg, "backoff",
                           csv_array(opt_str("--backoff", ""), true));
  set_metadata(cfg);
  if (opt_has("--priority-group")) {
    json_object *groups = json_object_new_array();
    json_object_array_add(
        groups, json_object_new_string(opt_str("--priority-group", "")));
    json_object_object_add(cfg, "priority_groups", groups);
    json_object_object_add(
        cfg, "priority_policy",
        json_object_new_string(opt_str("--priority-policy", "overflow")));
  }
  if (opt_has("--priority-timeout"))
    json_object_object_add(
        cfg, "priority_timeout",
        json_object_new_int64(sec_to_ns(opt_double("--priority-timeout", 0))));
  if (opt_has("--replicas"))
    json_object_object_add(cfg, "num_replicas",
                           json_object_new_int64(opt_ll("--replicas", 0)));
  if (opt_has("--memory"))
    json_object_object_add(cfg, "mem_storage", json_object_new_boolean(1));
  if (opt_has("--rate-limit-bps"))
    json_object_object_add(
        cfg, "rate_limit_bps",
        json_object_new_int64(opt_ll("--rate-limit-bps", 0)));
  if (opt_has("--flow-control"))
    json_object_object_add(cfg, "flow_control", json_object_new_boolean(1));
  if (opt_has("--heartbeat"))
    json_object_object_add(
        cfg, "idle_heartbeat",
        json_object_new_int64(sec_to_ns(opt_double("--heartbeat", 0))));

  json_object *req = json_object_new_object();
  json_object_object_add(req, "stream_name", json_object_new_string(stream));
  json_object_object_add(req, "config", json_object_get(cfg));
  connect_server();

  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.CONSUMER.INFO.%s.%s", stream, name);
  char *info = raw_request(subj, "");
  if (!info)
    return 1;
  json_object *infoj = json_tokener_parse(info);
  bool exists = infoj && !jobj(infoj, "error");
  json_object_put(infoj);
  free(info);

  if (ephemeral)
    subjf(subj, "$JS.API.CONSUMER.CREATE.%s.%s", stream, name);
  else
    subjf(subj, "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s", stream, name);
  json_object *reply = js_request_ok(
      subj, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
  json_object *rc = jobj(reply, "config");

  /* The server may answer a create for an existing durable with the old
   * config; report every requested tunable it did not keep. */
  static const char *tunables[] = {"ack_wait", "max_deliver", "max_ack_pending",
                                   "rate_limit_bps", NULL};
  int kept = 1;
  for (int i = 0; tunables[i]; i++) {
    if (jobj(cfg, tunables[i]) && int_differs(cfg, rc, tunables[i])) {
      /* With a backoff list the server replaces ack_wait by its first step. */
      json_object *bo = jobj(cfg, "backoff");
      if (strcmp(tunables[i], "ack_wait") == 0 && bo &&
          json_object_array_length(bo) > 0 &&
          jint(rc, "ack_wait", 0) ==
              json_object_get_int64(json_object_array_get_idx(bo, 0))) {
        fprintf(stderr, "nl-inject: note: the server set ack_wait to the "
                        "first backoff step\n");
        continue;
      }
      fprintf(stderr,
              "nl-inject: warning: %s requested %" PRId64
              ", server has %" PRId64 "\n",
              tunables[i], jint(cfg, tunables[i], 0), jint(rc, tunables[i], 0));
      kept = 0;
    }
  }
  json_object *want_bo = jobj(cfg, "backoff");
  json_object *have_bo = jobj(rc, "backoff");
  if (want_bo &&
      strcmp(json_object_to_json_string_ext(want_bo, JSON_C_TO_STRING_PLAIN),
             have_bo ? json_object_to_json_string_ext(have_bo,
                                                      JSON_C_TO_STRING_PLAIN)
                     : "null") != 0) {
    fprintf(stderr, "nl-inject: warning: backoff not kept by the server\n");
    kept = 0;
  }
  if (!metadata_kept(rc)) {
    fprintf(stderr, "nl-inject: warning: metadata not kept by the server "
                    "(nats-server 2.9 drops it)\n");
    kept = 0;
  }
  printf("%s consumer %s.%s kind=%s ack_policy=%s ack_wait_ns=%" PRId64
         " max_deliver=%" PRId64 " max_ack_pending=%" PRId64
         " filter=%s backoff=%s\n",
         exists ? "updated" : "created", stream, name,
         jstr(rc, "deliver_subject", NULL) ? "push" : "pull",
         jstr(rc, "ack_policy", "?"), jint(rc, "ack_wait", 0),
         jint(rc, "max_deliver", 0), jint(rc, "max_ack_pending", 0),
         jstr(rc, "filter_subject", "-"),
         have_bo
             ? json_object_to_json_string_ext(have_bo, JSON_C_TO_STRING_PLAIN)
             : "-");
  json_object_put(reply);
  json_object_put(req);
  json_object_put(cfg);
  return kept ? 0 : 1;
}

/* Sets the integer option opt (seconds when as_ns, then stored in
 * nanoseconds) as key of cfg, when given. */
static void edit_int(json_object *cfg, const char *key, const char *opt,
                     bool as_ns) {
  if (!opt_has(opt))
    return;
  int64_t v = as_ns ? sec_to_ns(opt_double(opt, 0)) : opt_ll(opt, 0);
  json_object_object_add(cfg, key, json_object_new_int64(v));
}

/* consumer-edit: changes the named settings of an existing durable
 * consumer and keeps the others, as `nats consumer edit` does: reads its
 * configuration, applies the options, sends it back, and prints the
 * values the server now holds. */
static int cmd_consumer_edit(void) {
  check_args("--ack-wait --max-ack-pending --max-deliver --backoff "
             "--metadata --replicas --rate-limit-bps --inactive-threshold",
             3, 3);
  const char *stream = args.pos[1], *name = args.pos[2];
  connect_server();
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.CONSUMER.INFO.%s.%s", stream, name);
  json_object *info = js_request_ok(subj, "");
  json_object *cfg = jobj(info, "config");
  if (!cfg)
    die(1, "consumer %s.%s: no config in its info", stream, name);
  edit_int(cfg, "ack_wait", "--ack-wait", true);
  edit_int(cfg, "max_ack_pending", "--max-ack-pending", false);
  edit_int(cfg, "max_deliver", "--max-deliver", false);
  edit_int(cfg, "num_replicas", "--replicas", false);
  edit_int(cfg, "rate_limit_bps", "--rate-limit-bps", false);
  edit_int(cfg, "inactive_threshold", "--inactive-threshold", true);
  /* --backoff none removes the backoff (as `nats consumer edit --backoff
   * none`); a list of seconds replaces it. */
  if (opt_has("--backoff")) {
    const char *bo = opt_str("--backoff", "none");
    if (strcmp(bo, "none") == 0)
      json_object_object_del(cfg, "backoff");
    else
      json_object_object_add(cfg, "backoff", csv_array(bo, true));
  }
  set_metadata(cfg);
  json_object *req = json_object_new_object();
  json_object_object_add(req, "stream_name", json_object_new_string(stream));
  json_object_object_add(req, "config", json_object_get(cfg));
  subjf(subj, "$JS.API.CONSUMER.DURABLE.CREATE.%s.%s", stream, name);
  json_object *reply = js_request_ok(
      subj, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN));
  json_object *rc = jobj(reply, "config");
  json_object *bo = jobj(rc, "backoff");
  json_object *meta = jobj(rc, "metadata");
  printf("edited consumer %s.%s ack_wait_ns=%" PRId64
         " max_ack_pending=%" PRId64 " max_deliver=%" PRId64
         " replicas=%" PRId64 " rate_limit_bps=%" PRId64
         " inactive_threshold_ns=%" PRId64 " backoff=%s metadata=%s\n",
         stream, name, jint(rc, "ack_wait", 0), jint(rc, "max_ack_pending", 0),
         jint(rc, "max_deliver", 0), jint(rc, "num_replicas", 0),
         jint(rc, "rate_limit_bps", 0), jint(rc, "inactive_threshold", 0),
         bo ? json_object_to_json_string_ext(bo, JSON_C_TO_STRING_PLAIN) : "-",
         meta ? json_object_to_json_string_ext(meta, JSON_C_TO_STRING_PLAIN)
              : "-");
  if (!metadata_kept(rc))
    die(1, "consumer %s.%s: the server did not keep the metadata", stream,
        name);
  json_object_put(reply);
  json_object_put(req);
  json_object_put(info);
  return 0;
}

/* stream-edit: changes the named limits of an existing stream and keeps
 * the rest of its configuration, as `nats stream edit` does; prints the
 * values the server now holds. */
static int cmd_stream_edit(void) {
  check_args("--max-msgs --max-bytes --max-age --replicas "
             "--max-msgs-per-subject --discard",
             2, 2);
  const char *name = args.pos[1];
  connect_server();
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.STREAM.INFO.%s", name);
  json_object *info = js_request_ok(subj, "");
  json_object *cfg = jobj(info, "config");
  if (!cfg)
    die(1, "stream %s: no config in its info", name);
  edit_int(cfg, "max_msgs", "--max-msgs", false);
  edit_int(cfg, "max_bytes", "--max-bytes", false);
  edit_int(cfg, "max_age", "--max-age", true);
  edit_int(cfg, "num_replicas", "--replicas", false);
  edit_int(cfg, "max_msgs_per_subject", "--max-msgs-per-subject", false);
  if (opt_has("--discard"))
    json_object_object_add(cfg, "discard",
                           json_object_new_string(opt_str("--discard", "")));
  subjf(subj, "$JS.API.STREAM.UPDATE.%s", name);
  json_object *reply = js_request_ok(
      subj, json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PLAIN));
  json_object *rc = jobj(reply, "config");
  printf("edited stream %s max_msgs=%" PRId64 " max_bytes=%" PRId64
         " max_age_ns=%" PRId64 " replicas=%" PRId64
         " max_msgs_per_subject=%" PRId64 " discard=%s\n",
         name, jint(rc, "max_msgs", 0), jint(rc, "max_bytes", 0),
         jint(rc, "max_age", 0), jint(rc, "num_replicas", 0),
         jint(rc, "max_msgs_per_subject", 0), jstr(rc, "discard", "?"));
  json_object_put(reply);
  json_object_put(info);
  return 0;
}

/* Reports one failed publish, said by fmt: fatal, or with --keep-going
 * counted in *failed and told on stderr the first time. */
static void publish_failed(bool keep_going, int64_t *failed, const char *fmt,
                           ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof(what), fmt, ap);
  va_end(ap);
  if (!keep_going)
    die(1, "%s", what);
  if ((*failed)++ == 0)
    fprintf(stderr, "nl-inject: %s (going on)\n", what);
}

/* Sends one message of n bytes to subject and waits for the reply into
 * *reply; with ttl, the message carries it as its Nats-TTL header. */
static natsStatus publish_one(natsMsg **reply, const char *subject,
                              const char *payload, int n,
                              const char *const *hdrs) {
  if (hdrs[0] == NULL)
    return natsConnection_Request(reply, g_nc, subject, payload, n,
                                  g_timeout_ms);
  natsMsg *msg = NULL;
  natsStatus s = natsMsg_Create(&msg, subject, NULL, payload, n);
  for (int i = 0; s == NATS_OK && hdrs[i] != NULL; i += 2)
    s = natsMsgHeader_Set(msg, hdrs[i], hdrs[i + 1]);
  if (s == NATS_OK)
    s = natsConnection_RequestMsg(reply, g_nc, msg, g_timeout_ms);
  natsMsg_Destroy(msg);
  return s;
}

/* Fills hdrs (room for 7 entries) with the header names and values that
 * publish's options ask for, in pairs, ending with NULL: Nats-TTL from
 * --ttl, Nats-Schedule and Nats-Schedule-Target from --schedule and
 * --schedule-target (nats-server 2.12+, a stream with
 * allow_msg_schedules), which go together. */
static void publish_headers(const char **hdrs) {
  int k = 0;
  if (opt_has("--ttl")) {
    hdrs[k++] = "Nats-TTL";
    hdrs[k++] = opt_str("--ttl", NULL);
  }
  if (opt_has("--schedule") != opt_has("--schedule-target"))
    die(2, "publish: --schedule and --schedule-target go together");
  if (opt_has("--schedule")) {
    hdrs[k++] = "Nats-Schedule";
    hdrs[k++] = opt_str("--schedule", NULL);
    hdrs[k++] = "Nats-Schedule-Target";
    hdrs[k++] = opt_str("--schedule-target", NULL);
  }
  hdrs[k] = NULL;
}

/* publish: sends COUNT messages with JetStream acknowledgement, paced by
 * --rate when given; with --keep-going a failed publish (a server down, no
 * stream leader) is counted and skipped instead of ending the run. */
static int cmd_publish(void) {
  check_args("--count --rate --size --keep-going --ttl --schedule "
             "--schedule-target",
             2, 2);
  bool keep_going = opt_has("--keep-going");
  const char *hdrs[7];
  publish_headers(hdrs);
  int64_t failed = 0;
  const char *subject = args.pos[1];
  int64_t count = opt_ll("--count", 1);
  double rate = opt_double("--rate", 0);
  int64_t size = opt_ll("--size", 32);
  if (count < 0 || size < 0 || size > 8 * 1024 * 1024 || rate < 0)
    die(2, "publish: bad --count, --size or --rate");
  /* A paced run lasts count / rate: the watchdog allows that and a minute. */
  if (rate > 0)
    alarm((unsigned)((double)count / rate) + 60);
  connect_server();
  char *payload = malloc((size_t)size + 64);
  if (!payload)
    die(1, "out of memory");
  int64_t start = mono_ms(), first_seq = -1, last_seq = -1;
  const char *stream = "?";
  json_object *last = NULL;
  for (int64_t i = 0; i < count; i++) {
    if (rate > 0)
      sleep_ms(start + (int64_t)(i * 1000.0 / rate) - mono_ms());
    int n = snprintf(payload, (size_t)size + 64, "nl-inject %" PRId64 " ", i);
    if (n < size) {
      memset(payload + n, 'x', (size_t)(size - n));
      n = (int)size;
    }
    natsMsg *reply = NULL;
    natsStatus s = publish_one(&reply, subject, payload, n, hdrs);
    /* Reconnects are off: a closed connection never comes back, so even
     * --keep-going ends, and whoever runs this can start it again. */
    if (s == NATS_CONNECTION_CLOSED)
      die(1, "publish %s #%" PRId64 ": %s", subject, i, natsStatus_GetText(s));
    if (s != NATS_OK) {
      publish_failed(
          keep_going, &failed, "publish %s #%" PRId64 ": %s%s", subject, i,
          natsStatus_GetText(s),
          s == NATS_NO_RESPONDERS ? " (no stream captures this subject?)" : "");
      continue;
    }
    json_object *ack = json_tokener_parse(natsMsg_GetData(reply));
    natsMsg_Destroy(reply);
    if (!ack) {
      publish_failed(keep_going, &failed,
                     "publish %s #%" PRId64 ": reply is not JSON", subject, i);
      continue;
    }
    json_object *err = jobj(ack, "error");
    if (err) {
      publish_failed(
          keep_going, &failed,
          "publish %s #%" PRId64 ": API error err_code %" PRId64 ": %s",
          subject, i, jint(err, "err_code", -1), jstr(err, "description", "?"));
      json_object_put(ack);
      continue;
    }
    if (first_seq < 0)
      first_seq = jint(ack, "seq", -1);
    last_seq = jint(ack, "seq", -1);
    json_object_put(last);
    last = ack;
    stream = jstr(ack, "stream", "?");
  }
  printf("published %" PRId64 " to %s stream=%s seq=%" PRId64 "..%" PRId64
         " in %" PRId64 " ms, %" PRId64 " failed\n",
         count - failed, subject, stream, first_seq, last_seq,
         mono_ms() - start, failed);
  json_object_put(last);
  free(payload);
  return 0;
}

/* Delivery metadata parsed from a JetStream ack reply subject. */
typedef struct {
  char stream[128];
  char consumer[128];
  int64_t delivered, stream_seq, consumer_seq, timestamp, pending;
} delivery;

/* Parses REPLY, either the 2.9 form
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>`
 * (9 tokens) or the newer form with `<domain>.<account hash>` after `ACK`
 * and an optional trailing token (11 or 12 tokens). Returns false when it is
 * neither. */
static bool parse_ack_reply(const char *reply, delivery *d) {
  if (!reply || strncmp(reply, "$JS.ACK.", 8) != 0)
    return false;
  const char *tok[16];
  size_t len[16];
  int n = 0;
  const char *p = reply;
  while (n < 16) {
    const char *dot = strchr(p, '.');
    tok[n] = p;
    len[n] = dot ? (size_t)(dot - p) : strlen(p);
    n++;
    if (!dot)
      break;
    p = dot + 1;
  }
  int base;
  if (n == 9)
    base = 2;
  else if (n == 11 || n == 12)
    base = 4;
  else
    return false;
  if (len[base] >= sizeof d->stream || len[base + 1] >= sizeof d->consumer)
    return false;
  memcpy(d->stream, tok[base], len[base]);
  d->stream[len[base]] = '\0';
  memcpy(d->consumer, tok[base + 1], len[base + 1]);
  d->consumer[len[base + 1]] = '\0';
  int64_t *nums[] = {&d->delivered, &d->stream_seq, &d->consumer_seq,
                     &d->timestamp, &d->pending};
  for (int i = 0; i < 5; i++)
    *nums[i] = strtoll(tok[base + 2 + i], NULL, 10);
  return true;
}

/* Settings and shared counters of one consume run. */
static struct {
  const char *stream, *consumer;
  bool pull, verbose, in_progress, nak_all, no_ack;
  bool no_flow_control; /* Flow-control requests go unanswered. */
  int64_t batch, process_ms, slow_every, slow_ms, progress_ms, nak_mod;
  int64_t nak_first_delay_ms; /* NAK first deliveries with this delay. */
  int64_t nak_retries; /* NAK (no delay) each message's first N deliveries. */
  int64_t term_mod;
  const char *term_reason; /* --term-reason, or NULL. */
  int64_t max_msgs, expires_ms, start_ms, deadline_ms;
  bool lognormal;     /* --process-dist lognormal */
  double sigma;       /* --process-sigma */
  uint64_t seed;      /* --seed, as two's complement */
  int64_t stagger_ms; /* worker i starts i x this late */
  const char *group;  /* --group: the priority group of pull requests. */
  int64_t min_pending, priority; /* --min-pending, --priority (0: none). */
  atomic_llong pinned;           /* Deliveries that carried a pin id. */
  natsSubscription *push_sub;
  pthread_mutex_t push_mu;
  atomic_llong received, redelivered_seen, acked, naked, termed;
  atomic_llong in_progress_sent;
  atomic_llong abandoned, status_msgs, pull_requests, max_delivered, taken;
  atomic_bool stop;
} run;

/* The processing-time generator: splitmix64 and Marsaglia's polar method,
 * as in the Go, JavaScript and Python injectors, so that a seed gives the
 * same times in all four. */
#define NL_GAMMA 0x9E3779B97F4A7C15ULL

typedef struct {
  uint64_t state;
} nl_rng;

static uint64_t nl_mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Seeds worker WORKER's generator from --seed. */
static void nl_rng_init(nl_rng *r, int worker) {
  r->state = nl_mix64(run.seed ^ nl_mix64((uint64_t)(worker + 1) * NL_GAMMA));
}

/* A uniform double in [0, 1). */
static double nl_uniform(nl_rng *r) {
  r->state += NL_GAMMA;
  return (double)(nl_mix64(r->state) >> 11) * (1.0 / 9007199254740992.0);
}

/* A standard normal draw (polar method). */
static double nl_normal(nl_rng *r) {
  double v1, v2, s;
  do {
    v1 = 2 * nl_uniform(r) - 1;
    v2 = 2 * nl_uniform(r) - 1;
    s = v1 * v1 + v2 * v2;
  } while (s >= 1 || s == 0);
  return v1 * sqrt(-2 * log(s) / s);
}

/* The processing time of the next message: --process-ms, or with
 * lognormal P x exp(S x z) capped at 20 x P, rounded to the millisecond. */
static int64_t nl_work_ms(nl_rng *r) {
  if (!run.lognormal)
    return run.process_ms;
  double p = (double)run.process_ms;
  double t = p * exp(run.sigma * nl_normal(r));
  if (t > 20 * p)
    t = 20 * p;
  return t > 0 ? (int64_t)(t + 0.5) : 0;
}

/* Logs one per-message event to stderr when --verbose is set. */
static void vlog(int worker, const delivery *d, const char *what) {
  if (!run.verbose)
    return;
  fprintf(stderr,
          "t=%.3f w=%d sseq=%" PRId64 " cseq=%" PRId64 " dc=%" PRId64 " %s\n",
          (mono_ms() - run.start_ms) / 1000.0, worker, d->stream_seq,
          d->consumer_seq, d->delivered, what);
}

/* Sends BODY to the reply subject of a delivered message. */
static void reply_to(const char *reply, const char *body) {
  natsStatus s = natsConnection_PublishString(g_nc, reply, body);
  if (s != NATS_OK)
    fprintf(stderr, "nl-inject: cannot send %s: %s\n", body,
            natsStatus_GetText(s));
}

/* Processes one message: waits for the modelled processing time, sending
 * +WPI while doing so when asked, then acks, NAKs or leaves it unacked.
 * Returns false when the run deadline interrupted the processing. */
static bool handle_msg(int worker, natsMsg *msg, nl_rng *rng) {
  const char *reply = natsMsg_GetReply(msg);
  delivery d;
  if (!parse_ack_reply(reply, &d)) {
    /* Status messages (heartbeats, flow control, pull errors) land here. */
    const char *status = NULL;
    natsMsgHeader_Get(msg, "Status", &status);
    run.status_msgs++;
    if (status && strcmp(status, "100") == 0 && !run.no_flow_control) {
      /* A flow-control request carries its reply subject; an idle
       * heartbeat sent while the consumer waits for an answer names it
       * in Nats-Consumer-Stalled. Client libraries answer both. */
      const char *stalled = NULL;
      natsMsgHeader_Get(msg, "Nats-Consumer-Stalled", &stalled);
      if (reply && *reply)
        reply_to(reply, "");
      else if (stalled && *stalled)
        reply_to(stalled, "");
    }
    return true;
  }
  run.received++;
  if (d.delivered > 1)
    run.redelivered_seen++;
  long long prev = run.max_delivered;
  while (d.delivered > prev &&
         !atomic_compare_exchange_weak(&run.max_delivered, &prev, d.delivered))
    ;
  /* Drawn for every delivery, so the slow ones do not shift the series. */
  int64_t work = nl_work_ms(rng);
  if (run.lognormal) {
    char what[48];
    snprintf(what, sizeof what, "recv work=%" PRId64, work);
    vlog(worker, &d, what);
  } else {
    vlog(worker, &d, "recv");
  }

  if (run.slow_every > 0 && d.stream_seq % run.slow_every == 0)
    work = run.slow_ms;
  int64_t end = mono_ms() + work;
  int64_t next_wpi = run.in_progress ? mono_ms() + run.progress_ms : INT64_MAX;
  for (;;) {
    int64_t now = mono_ms();
    if (now >= end)
      break;
    if (now >= run.deadline_ms) {
      run.abandoned++;
      vlog(worker, &d, "abandoned");
      return false;
    }
    if (now >= next_wpi) {
      reply_to(reply, "+WPI");
      run.in_progress_sent++;
      vlog(worker, &d, "wpi");
      next_wpi = now + run.progress_ms;
    }
    int64_t until = end < next_wpi ? end : next_wpi;
    if (until > run.deadline_ms)
      until = run.deadline_ms;
    int64_t step = until - now;
    sleep_ms(step > 50 ? 50 : step);
  }
  if (run.term_mod > 0 && d.stream_seq % run.term_mod == 0) {
    /* A reason after "+TERM " is sent on in the MSG_TERMINATED advisory
     * (nats-server 2.10+), whatever it says. */
    char body[256];
    snprintf(body, sizeof(body), "+TERM%s%s", run.term_reason ? " " : "",
             run.term_reason ? run.term_reason : "");
    reply_to(reply, body);
    run.termed++;
    vlog(worker, &d, "term");
  } else if (run.nak_first_delay_ms > 0 && d.delivered == 1) {
    /* A transient error: retried once after the delay, then acked. */
    char body[64];
    snprintf(body, sizeof(body), "-NAK {\"delay\": %lld}",
             (long long)run.nak_first_delay_ms * 1000000LL);
    reply_to(reply, body);
    run.naked++;
    vlog(worker, &d, "nak-delay");
  } else if (run.nak_all ||
             (run.nak_mod > 0 && d.stream_seq % run.nak_mod == 0) ||
             (run.nak_retries > 0 && (int64_t)d.delivered <= run.nak_retries)) {
    /* A plain NAK: the consumer's backoff, if any, spaces the retries. */
    reply_to(reply, "-NAK");
    run.naked++;
    vlog(worker, &d, "nak");
  } else if (!run.no_ack) {
    reply_to(reply, "+ACK");
    run.acked++;
    vlog(worker, &d, "ack");
  } else {
    vlog(worker, &d, "no-ack");
  }
  return true;
}

/* Counts one taken message; returns false once --max-msgs is used up. */
static bool take_one(void) {
  if (run.max_msgs <= 0)
    return true;
  long long n = ++run.taken;
  if (n >= run.max_msgs)
    run.stop = true;
  return n <= run.max_msgs;
}

/* Waits until worker ID's start, ID x --stagger-ms after the run's, or the
 * deadline or a stop if sooner. */
static void stagger_wait(int id) {
  if (run.stagger_ms <= 0)
    return;
  int64_t start = run.start_ms + (int64_t)id * run.stagger_ms;
  for (;;) {
    int64_t now = mono_ms();
    if (now >= start || now >= run.deadline_ms || run.stop)
      break;
    int64_t until = start < run.deadline_ms ? start : run.deadline_ms;
    sleep_ms(until - now > 50 ? 50 : until - now);
  }
  if (run.verbose)
    fprintf(stderr, "t=%.3f w=%d start\n", (mono_ms() - run.start_ms) / 1000.0,
            id);
}

/* Worker for pull mode: its own inbox, one MSG.NEXT request at a time. */
static void *pull_worker(void *arg) {
  int id = (int)(intptr_t)arg;
  nl_rng rng;
  nl_rng_init(&rng, id);
  natsInbox *inbox = NULL;
  natsSubscription *sub = NULL;
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.CONSUMER.MSG.NEXT.%s.%s", run.stream, run.consumer);
  if (natsInbox_Create(&inbox) != NATS_OK ||
      natsConnection_SubscribeSync(&sub, g_nc, inbox) != NATS_OK)
    die(1, "worker %d: cannot subscribe to an inbox", id);
  char pin[64] = ""; /* The pin id the server gave this worker. */
  stagger_wait(id);
  while (!run.stop && mono_ms() < run.deadline_ms - 20) {
    int64_t remaining = run.deadline_ms - mono_ms();
    int64_t expires = remaining < run.expires_ms ? remaining : run.expires_ms;
    char body[512];
    int n = snprintf(body, sizeof body,
                     "{\"batch\":%" PRId64 ",\"expires\":%" PRId64, run.batch,
                     expires * 1000000);
    /* A priority group's request names it, and the pin id this worker was
     * given (pinned_client), its overflow threshold or its priority. */
    if (run.group != NULL)
      n += snprintf(body + n, sizeof body - (size_t)n, ",\"group\":\"%s\"",
                    run.group);
    if (pin[0] != '\0')
      n += snprintf(body + n, sizeof body - (size_t)n, ",\"id\":\"%s\"", pin);
    if (run.min_pending > 0)
      n += snprintf(body + n, sizeof body - (size_t)n,
                    ",\"min_pending\":%" PRId64, run.min_pending);
    if (run.priority > 0)
      n += snprintf(body + n, sizeof body - (size_t)n, ",\"priority\":%" PRId64,
                    run.priority);
    snprintf(body + n, sizeof body - (size_t)n, "}");
    if (natsConnection_PublishRequestString(g_nc, subj, inbox, body) != NATS_OK)
      die(1, "worker %d: cannot send the pull request", id);
    run.pull_requests++;
    /* The server ends the request with a 408 status when it expires; the
     * local bound is only a fallback, far enough past it that this worker
     * never has two requests open at a busy server (two would let it hold
     * two messages at once). */
    int64_t req_end = mono_ms() + expires + 2000;
    int64_t got = 0;
    while (!run.stop && got < run.batch) {
      int64_t wait = req_end - mono_ms();
      if (wait <= 0)
        break;
      natsMsg *msg = NULL;
      natsStatus s = natsSubscription_NextMsg(&msg, sub, wait);
      if (s == NATS_TIMEOUT)
        break;
      if (s != NATS_OK) {
        fprintf(stderr, "nl-inject: worker %d: %s\n", id,
                natsStatus_GetText(s));
        sleep_ms(100);
        break;
      }
      if (!natsMsg_GetReply(msg)) {
        /* A status message (404, 408, 409; 423 for a pin id no longer
         * current, which is then forgotten) ends this request. */
        const char *st = NULL;
        if (natsMsgHeader_Get(msg, "Status", &st) == NATS_OK && st != NULL &&
            strcmp(st, "423") == 0)
          pin[0] = '\0';
        run.status_msgs++;
        if (run.verbose) {
          const char *code = NULL, *desc = NULL;
          natsMsgHeader_Get(msg, "Status", &code);
          natsMsgHeader_Get(msg, "Description", &desc);
          fprintf(stderr, "t=%.3f w=%d status %s %s\n",
                  (mono_ms() - run.start_ms) / 1000.0, id, code ? code : "?",
                  desc ? desc : "");
        }
        natsMsg_Destroy(msg);
        break;
      }
      got++;
      const char *pid = NULL;
      if (natsMsgHeader_Get(msg, "Nats-Pin-Id", &pid) == NATS_OK &&
          pid != NULL) {
        snprintf(pin, sizeof pin, "%s", pid);
        run.pinned++;
      }
      if (!take_one()) {
        natsMsg_Destroy(msg);
        break;
      }
      bool finished = handle_msg(id, msg, &rng);
      natsMsg_Destroy(msg);
      if (!finished)
        break;
    }
  }
  natsSubscription_Unsubscribe(sub);
  natsSubscription_Destroy(sub);
  natsInbox_Destroy(inbox);
  return NULL;
}

/* Worker for push mode: takes messages, in order, from the shared
 * subscription's pending buffer (unbounded). */
static void *push_worker(void *arg) {
  int id = (int)(intptr_t)arg;
  nl_rng rng;
  nl_rng_init(&rng, id);
  stagger_wait(id);
  while (!run.stop && mono_ms() < run.deadline_ms) {
    natsMsg *msg = NULL;
    pthread_mutex_lock(&run.push_mu);
    natsStatus s = natsSubscription_NextMsg(&msg, run.push_sub, 100);
    pthread_mutex_unlock(&run.push_mu);
    if (s == NATS_TIMEOUT)
      continue;
    /* Reconnects are off: a closed connection never comes back, so end
     * (as a pull worker does) and let whoever runs this start it again. */
    if (s == NATS_CONNECTION_CLOSED || s == NATS_INVALID_SUBSCRIPTION)
      die(1, "worker %d: %s", id, natsStatus_GetText(s));
    if (s != NATS_OK) {
      fprintf(stderr, "nl-inject: worker %d: %s\n", id, natsStatus_GetText(s));
      sleep_ms(100);
      continue;
    }
    /* Only deliveries count towards --max-msgs, not status messages. */
    const char *reply = natsMsg_GetReply(msg);
    if (reply && strncmp(reply, "$JS.ACK.", 8) == 0 && !take_one()) {
      natsMsg_Destroy(msg);
      break;
    }
    handle_msg(id, msg, &rng);
    natsMsg_Destroy(msg);
  }
  return NULL;
}

/* consume: runs W workers for --duration seconds, then prints a summary. */
static int cmd_consume(void) {
  check_args("--duration --mode --deliver-subject --queue --batch --workers "
             "--process-ms --slow-every --slow-ms --in-progress --progress-ms "
             "--nak --nak-seq-mod --nak-first-delay-ms --nak-retries "
             "--term-seq-mod --term-reason --no-flow-control "
             "--no-ack --max-msgs "
             "--expires-ms --verbose --process-dist --process-sigma --seed "
             "--stagger-ms --group --min-pending --priority",
             3, 3);
  run.stream = args.pos[1];
  run.consumer = args.pos[2];
  if (!opt_has("--duration"))
    die(2, "consume needs --duration");
  double duration = opt_double("--duration", 0);
  const char *mode = opt_str("--mode", "pull");
  if (strcmp(mode, "pull") != 0 && strcmp(mode, "push") != 0)
    die(2, "--mode must be pull or push");
  run.pull = strcmp(mode, "pull") == 0;
  run.batch = opt_ll("--batch", 1);
  int64_t workers = opt_ll("--workers", 1);
  run.process_ms = opt_ll("--process-ms", 0);
  run.slow_every = opt_ll("--slow-every", 0);
  run.slow_ms = opt_ll("--slow-ms", run.process_ms);
  run.in_progress = opt_has("--in-progress");
  run.progress_ms = opt_ll("--progress-ms", 1000);
  run.nak_all = opt_has("--nak");
  run.nak_mod = opt_ll("--nak-seq-mod", 0);
  run.nak_first_delay_ms = opt_ll("--nak-first-delay-ms", 0);
  run.nak_retries = opt_ll("--nak-retries", 0);
  run.term_mod = opt_ll("--term-seq-mod", 0);
  run.term_reason = opt_str("--term-reason", NULL);
  run.no_ack = opt_has("--no-ack");
  run.no_flow_control = opt_has("--no-flow-control");
  run.max_msgs = opt_ll("--max-msgs", 0);
  run.expires_ms = opt_ll("--expires-ms", 5000);
  run.verbose = opt_has("--verbose");
  const char *dist = opt_str("--process-dist", "fixed");
  if (strcmp(dist, "fixed") != 0 && strcmp(dist, "lognormal") != 0)
    die(2, "--process-dist must be fixed or lognormal");
  run.lognormal = strcmp(dist, "lognormal") == 0;
  run.sigma = opt_double("--process-sigma", 0.5);
  if (!(run.sigma >= 0 && run.sigma <= 10))
    die(2, "--process-sigma must lie in [0, 10]");
  run.seed = (uint64_t)opt_ll("--seed", 1);
  run.stagger_ms = opt_ll("--stagger-ms", 0);
  run.group = opt_str("--group", NULL);
  run.min_pending = opt_ll("--min-pending", 0);
  run.priority = opt_ll("--priority", 0);
  if (run.group != NULL && (strlen(run.group) > 64 || strchr(run.group, '"')))
    die(2, "--group must be a name of at most 64 characters");
  if (run.stagger_ms < 0 || run.stagger_ms > 3600000)
    die(2, "--stagger-ms must lie in [0, 3600000]");
  if (duration <= 0 || duration > 3600 || run.batch < 1 || workers < 1 ||
      workers > 64 || run.progress_ms < 10 || run.expires_ms < 10)
    die(2, "consume: bad --duration, --batch, --workers, --progress-ms or "
           "--expires-ms");
  if (run.nak_all + (run.nak_mod > 0) + run.no_ack +
          (run.nak_first_delay_ms > 0) + (run.nak_retries > 0) >
      1)
    die(2, "--nak, --nak-seq-mod, --nak-first-delay-ms, --nak-retries and "
           "--no-ack exclude each other");
  alarm((unsigned)duration + 30);
  connect_server();

  /* Push mode needs the deliver subject: given, or read from the consumer. */
  char subj[SUBJ_MAX];
  if (!run.pull) {
    const char *deliver = opt_str("--deliver-subject", NULL);
    const char *queue = opt_str("--queue", NULL);
    json_object *info = NULL;
    if (!deliver || !queue) {
      subjf(subj, "$JS.API.CONSUMER.INFO.%s.%s", run.stream, run.consumer);
      info = js_request_ok(subj, "");
      json_object *cfg = jobj(info, "config");
      if (!deliver)
        deliver = jstr(cfg, "deliver_subject", NULL);
      if (!queue)
        queue = jstr(cfg, "deliver_group", NULL);
      if (!deliver)
        die(2, "consumer %s.%s is a pull consumer; use --mode pull", run.stream,
            run.consumer);
    }
    natsStatus s =
        queue ? natsConnection_QueueSubscribeSync(&run.push_sub, g_nc, deliver,
                                                  queue)
              : natsConnection_SubscribeSync(&run.push_sub, g_nc, deliver);
    if (s != NATS_OK)
      die(1, "cannot subscribe to %s: %s", deliver, natsStatus_GetText(s));
    natsSubscription_SetPendingLimits(run.push_sub, -1, -1);
    pthread_mutex_init(&run.push_mu, NULL);
    json_object_put(info);
  }

  run.start_ms = mono_ms();
  run.deadline_ms = run.start_ms + (int64_t)(duration * 1000);
  pthread_t th[64];
  for (int64_t i = 0; i < workers; i++)
    if (pthread_create(&th[i], NULL, run.pull ? pull_worker : push_worker,
                       (void *)(intptr_t)i) != 0)
      die(1, "cannot start worker %" PRId64, i);
  for (int64_t i = 0; i < workers; i++)
    pthread_join(th[i], NULL);
  if (run.push_sub) {
    natsSubscription_Unsubscribe(run.push_sub);
    natsSubscription_Destroy(run.push_sub);
  }
  natsConnection_FlushTimeout(g_nc, g_timeout_ms);

  printf("{\"mode\":\"%s\",\"workers\":%" PRId64 ",\"elapsed_ms\":%" PRId64
         ",\"received\":%lld,\"redelivered_seen\":%lld,\"acked\":%lld,"
         "\"naked\":%lld,\"termed\":%lld,\"in_progress_sent\":%lld,"
         "\"abandoned\":%lld,"
         "\"max_delivery_count\":%lld,\"status_msgs\":%lld,"
         "\"pull_requests\":%lld,\"pinned\":%lld}\n",
         mode, workers, mono_ms() - run.start_ms, (long long)run.received,
         (long long)run.redelivered_seen, (long long)run.acked,
         (long long)run.naked, (long long)run.termed,
         (long long)run.in_progress_sent, (long long)run.abandoned,
         (long long)run.max_delivered, (long long)run.status_msgs,
         (long long)run.pull_requests, (long long)run.pinned);
  return 0;
}

/* info: prints the raw CONSUMER.INFO reply; exits 1 if it is an error. */
static int cmd_info(void) {
  check_args("", 3, 3);
  connect_server();
  char subj[SUBJ_MAX];
  subjf(subj, "$JS.API.CONSUMER.INFO.%s.%s", args.pos[1], args.pos[2]);
  char *text = raw_request(subj, "");
  if (!text)
    return 1;
  puts(text);
  json_object *j = json_tokener_parse(text);
  int rc = (!j || jobj(j, "error")) ? 1 : 0;
  json_object_put(j);
  free(text);
  return rc;
}

/* Copies the HH:MM:SS.mmm part of an RFC 3339 time into BUF, or "-". */
static void short_time(const char *rfc, char *buf, size_t len) {
  const char *t = rfc ? strchr(rfc, 'T') : NULL;
  if (!t) {
    snprintf(buf, len, "-");
    return;
  }
  snprintf(buf, len, "%.12s", t + 1);
}

/* watch: polls CONSUMER.INFO and STREAM.INFO and prints one line per poll. */
static int cmd_watch(void) {
  check_args("--interval --count", 3, 3);
  const char *stream = args.pos[1], *consumer = args.pos[2];
  double interval = opt_double("--interval", 1);
  int64_t count = opt_ll("--count", 10);
  if (interval < 0.05 || count < 1 || interval * count > 3600)
    die(2, "watch: bad --interval or --count");
  alarm((unsigned)(interval * count) + 30);
  connect_server();
  char csubj[SUBJ_MAX], ssubj[SUBJ_MAX];
  subjf(csubj, "$JS.API.CONSUMER.INFO.%s.%s", stream, consumer);
  subjf(ssubj, "$JS.API.STREAM.INFO.%s", stream);
  int64_t start = mono_ms(), pcs = -1, pss = -1;
  for (int64_t i = 0; i < count; i++) {
    sleep_ms(start + (int64_t)(i * interval * 1000) - mono_ms());
    double t = (mono_ms() - start) / 1000.0;
    char now[32];
    wall_hms(now, sizeof now);
    json_object *ci = js_request(csubj, "", NULL);
    json_object *si = js_request(ssubj, "", NULL);
    if (!ci || !si) {
      printf("t=%.1f at=%s error\n", t, now);
      fflush(stdout);
      json_object_put(ci);
      json_object_put(si);
      continue;
    }
    json_object *dl = jobj(ci, "delivered"), *af = jobj(ci, "ack_floor");
    json_object *st = jobj(si, "state");
    int64_t cs = jint(dl, "consumer_seq", 0), ss = jint(dl, "stream_seq", 0);
    char fl[32], dla[32];
    short_time(jstr(af, "last_active", NULL), fl, sizeof fl);
    short_time(jstr(dl, "last_active", NULL), dla, sizeof dla);
    printf("t=%.1f at=%s cseq=%" PRId64 "(+%" PRId64 ") sseq=%" PRId64
           "(+%" PRId64 ") dc-ds=%" PRId64 " floor=%" PRId64
           " floor_at=%s dlv_at=%s ack_pend=%" PRId64 " redeliv=%" PRId64
           " pend=%" PRId64 " wait=%" PRId64 " first=%" PRId64 " last=%" PRId64
           "\n",
           t, now, cs, pcs < 0 ? 0 : cs - pcs, ss, pss < 0 ? 0 : ss - pss,
           pcs < 0 ? 0 : (cs - pcs) - (ss - pss), jint(af, "stream_seq", 0), fl,
           dla, jint(ci, "num_ack_pending", 0), jint(ci, "num_redelivered", 0),
           jint(ci, "num_pending", 0), jint(ci, "num_waiting", 0),
           jint(st, "first_seq", 0), jint(st, "last_seq", 0));
    fflush(stdout);
    pcs = cs;
    pss = ss;
    json_object_put(ci);
    json_object_put(si);
  }
  return 0;
}

/* record: writes the payloads of the next N messages on SUBJECT to --out
 * (stdout by default), one per line; exits 1 if fewer arrived in time. */
static int cmd_record(void) {
  check_args("--count --out --duration", 2, 2);
  int64_t count = opt_ll("--count", 1);
  double duration = opt_double("--duration", 60);
  const char *out = opt_str("--out", NULL);
  if (count < 1 || duration <= 0 || duration > 3600)
    die(2, "record: bad --count or --duration");
  alarm((unsigned)duration + 30);
  connect_server();
  natsSubscription *sub = NULL;
  natsStatus s = natsConnection_SubscribeSync(&sub, g_nc, args.pos[1]);
  if (s == NATS_OK)
    s = natsConnection_FlushTimeout(g_nc, g_timeout_ms);
  if (s != NATS_OK)
    die(1, "cannot subscribe to %s: %s", args.pos[1], natsStatus_GetText(s));
  FILE *f = stdout;
  int64_t deadline = mono_ms() + (int64_t)(duration * 1000), got = 0;
  while (got < count) {
    int64_t wait = deadline - mono_ms();
    if (wait <= 0)
      break;
    natsMsg *msg = NULL;
    if (natsSubscription_NextMsg(&msg, sub, wait) != NATS_OK)
      break;
    /* The file is opened on the first message so a timeout leaves none. */
    if (out && f == stdout && !(f = fopen(out, "w")))
      die(1, "cannot write %s: %s", out, strerror(errno));
    fwrite(natsMsg_GetData(msg), 1, (size_t)natsMsg_GetDataLength(msg), f);
    fputc('\n', f);
    fflush(f);
    fprintf(stderr, "recorded %s\n", natsMsg_GetSubject(msg));
    natsMsg_Destroy(msg);
    got++;
  }
  if (f != stdout)
    fclose(f);
  natsSubscription_Destroy(sub);
  if (got < count) {
    fprintf(stderr,
            "nl-inject: record %s: %" PRId64 " of %" PRId64
            " messages before the deadline\n",
            args.pos[1], got, count);
    return 1;
  }
  return 0;
}

/* request: sends a raw request and prints the reply exactly as received;
 * exits 1 only when no reply arrived. */
static int cmd_request(void) {
  check_args("", 2, 3);
  connect_server();
  char *text = raw_request(args.pos[1], args.npos > 2 ? args.pos[2] : "");
  if (!text)
    return 1;
  fputs(text, stdout);
  fputc('\n', stdout);
  free(text);
  return 0;
}

/* gather: sends BODY to SUBJECT and prints every reply (one per line)
 * that comes within --timeout-ms, or until --count replies: the requests
 * many servers answer ($SYS.REQ.SERVER.PING.*). */
static int cmd_gather(void) {
  check_args("--count", 2, 3);
  long want = (long)opt_double("--count", 0);
  connect_server();
  natsInbox *inbox = NULL;
  natsSubscription *sub = NULL;
  natsStatus s = natsInbox_Create(&inbox);
  if (s == NATS_OK)
    s = natsConnection_SubscribeSync(&sub, g_nc, inbox);
  if (s == NATS_OK)
    s = natsConnection_PublishRequestString(g_nc, args.pos[1], inbox,
                                            args.npos > 2 ? args.pos[2] : "");
  long got = 0;
  int64_t end = mono_ms() + g_timeout_ms;
  while (s == NATS_OK && (want <= 0 || got < want)) {
    int64_t left = end - mono_ms();
    natsMsg *m = NULL;
    if (left <= 0 || natsSubscription_NextMsg(&m, sub, left) != NATS_OK)
      break;
    fwrite(natsMsg_GetData(m), 1, (size_t)natsMsg_GetDataLength(m), stdout);
    fputc('\n', stdout);
    natsMsg_Destroy(m);
    got++;
  }
  natsSubscription_Destroy(sub);
  natsInbox_Destroy(inbox);
  if (s != NATS_OK)
    die(1, "gather: %s", natsStatus_GetText(s));
  fprintf(stderr, "gathered %ld replies\n", got);
  return got > 0 ? 0 : 1;
}

/* churn: creates ephemeral consumers on STREAM and deletes each at once,
 * as fast as the server answers, for --duration seconds (the consumer
 * churn of request-reply services); prints how many were created. */
static int cmd_churn(void) {
  check_args("--duration", 2, 2);
  const char *stream = args.pos[1];
  double duration = opt_double("--duration", 0);
  if (duration <= 0 || duration > 600)
    die(2, "churn: --duration must be between 0 and 600 seconds");
  alarm((unsigned)duration + 30);
  connect_server();
  char subj[SUBJ_MAX], body[SUBJ_MAX + 128];
  subjf(subj, "$JS.API.CONSUMER.CREATE.%s", stream);
  snprintf(body, sizeof(body),
           "{\"stream_name\":\"%s\",\"config\":{\"ack_policy\":"
           "\"explicit\",\"deliver_policy\":\"new\","
           "\"inactive_threshold\":5000000000}}",
           stream);
  int64_t end = mono_ms() + (int64_t)(duration * 1000), created = 0;
  while (mono_ms() < end) {
    json_object *reply = js_request(subj, body, NULL);
    const char *name = reply ? jstr(jobj(reply, "config"), "name", NULL) : NULL;
    if (name == NULL)
      name = reply ? jstr(reply, "name", NULL) : NULL;
    if (name != NULL) {
      created++;
      char del[SUBJ_MAX];
      subjf(del, "$JS.API.CONSUMER.DELETE.%s.%s", stream, name);
      char *text = raw_request(del, "");
      free(text);
    }
    json_object_put(reply);
  }
  printf("churn %s created=%" PRId64 "\n", stream, created);
  return 0;
}

/* Reads a whole file into a malloc'd string; exits 2 when it cannot. */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    die(2, "cannot read %s: %s", path, strerror(errno));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
    die(2, "cannot read %s", path);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

/* respond: a stand-in server for one subject. Answers every request on
 * SUBJECT (wildcards allowed) with the given reply after --delay-ms, one at
 * a time, until --count requests were answered or --duration passed.
 * Prints "ready" on stderr once subscribed, and one line per answer. */
static int cmd_respond(void) {
  check_args("--reply --reply-file --delay-ms --duration --count", 2, 2);
  const char *reply = opt_str("--reply", NULL);
  char *owned = NULL;
  if (opt_has("--reply-file"))
    reply = owned = read_file(opt_str("--reply-file", NULL));
  if (!reply)
    die(2, "respond: --reply or --reply-file is required");
  int64_t delay = opt_ll("--delay-ms", 0);
  int64_t count = opt_ll("--count", INT64_MAX);
  double duration = opt_double("--duration", 60);
  if (delay < 0 || count < 1 || duration <= 0 || duration > 3600)
    die(2, "respond: bad --delay-ms, --count or --duration");
  alarm((unsigned)duration + (unsigned)(delay / 1000) + 30);
  connect_server();
  natsSubscription *sub = NULL;
  natsStatus s = natsConnection_SubscribeSync(&sub, g_nc, args.pos[1]);
  if (s == NATS_OK)
    s = natsSubscription_SetPendingLimits(sub, -1, -1);
  if (s == NATS_OK)
    s = natsConnection_FlushTimeout(g_nc, g_timeout_ms);
  if (s != NATS_OK)
    die(1, "cannot subscribe to %s: %s", args.pos[1], natsStatus_GetText(s));
  fprintf(stderr, "ready\n");
  int64_t deadline = mono_ms() + (int64_t)(duration * 1000), answered = 0;
  while (answered < count) {
    int64_t wait = deadline - mono_ms();
    if (wait <= 0)
      break;
    natsMsg *msg = NULL;
    if (natsSubscription_NextMsg(&msg, sub, wait) != NATS_OK)
      break;
    const char *to = natsMsg_GetReply(msg);
    if (to && to[0]) {
      sleep_ms(delay);
      natsConnection_PublishString(g_nc, to, reply);
      answered++;
      fprintf(stderr, "answered %s after %" PRId64 " ms\n",
              natsMsg_GetSubject(msg), delay);
    }
    natsMsg_Destroy(msg);
  }
  natsSubscription_Destroy(sub);
  free(owned);
  return 0;
}

int main(int argc, char **argv) {
  parse_args(argc, argv);
  if (args.npos == 0 || strcmp(args.pos[0], "help") == 0 || opt_has("--help")) {
    fputs(usage_text, args.npos == 0 ? stderr : stdout);
    return args.npos == 0 ? 2 : 0;
  }
  static const struct {
    const char *name;
    int (*fn)(void);
  } cmds[] = {{"stream-create", cmd_stream_create},
              {"stream-edit", cmd_stream_edit},
              {"consumer-edit", cmd_consumer_edit},
              {"stream-delete", cmd_stream_delete},
              {"consumer-create", cmd_consumer_create},
              {"consumer-delete", cmd_consumer_delete},
              {"consumer-redeploy", cmd_consumer_redeploy},
              {"publish", cmd_publish},
              {"consume", cmd_consume},
              {"info", cmd_info},
              {"watch", cmd_watch},
              {"record", cmd_record},
              {"request", cmd_request},
              {"gather", cmd_gather},
              {"churn", cmd_churn},
              {"respond", cmd_respond}};
  for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
    if (strcmp(args.pos[0], cmds[i].name) != 0)
      continue;
    /* A default watchdog bounds commands that set no deadline of their own;
     * each command connects once its arguments are valid. */
    alarm(300);
    int rc = cmds[i].fn();
    if (g_nc) {
      natsConnection_FlushTimeout(g_nc, g_timeout_ms);
      natsConnection_Destroy(g_nc);
    }
    nats_Close();
    return rc;
  }
  fprintf(stderr, "nl-inject: unknown command '%s'\n%s", args.pos[0],
          usage_text);
  return 2;
}
