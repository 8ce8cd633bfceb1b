/* nl_bench.c: the poll path of the plugin, measured against a real server.
 *
 *   nl-bench setup --server URL --streams S --consumers C [--messages M]
 *       [--replicas R] [--cluster C1,C2,...]
 *       creates streams BENCH_0..S-1 (memory, R replicas) with C durable pull
 *       consumers each, through the JetStream API, and publishes M messages
 *       per stream. With --cluster, stream i is placed in the i-th cluster
 *       of the list, round (placement.cluster: BENCH_0 in C1, BENCH_1 in C2,
 *       ...), so a super-cluster gets an equal share in each cluster;
 *       without it the server places them (in the cluster of the server the
 *       request reached).
 *   nl-bench poll --server URL --polls N [--timeout-ms T]
 *       runs N polls through nl_poll_run and nl_engine_apply (the code the
 *       plugin runs each interval) and prints one JSON object: per poll
 *       medians of wall time, CPU time, requests and bytes received, and the
 *       process's resident memory after the polls.
 *   nl-bench poll-system --server URL --polls N [--timeout-ms T]
 *       the same for a SystemAccount instance (URL: a system-account
 *       user): one JSZ request per poll (nl_jsz_poll_run), each account
 *       applied to an engine of its own; "accounts" says how many.
 *   nl-bench poll-server --server URL --polls N [--timeout-ms T]
 *       the same for an agent (Scope "server"): one
 *       $SYS.REQ.SERVER.<id>.JSZ per poll to the connected server
 *       (nl_jsz_poll_server), what it leads applied.
 *   nl-bench poll-accounts --urls FILE --polls N [--timeout-ms T]
 *       the per-account mode over many accounts: FILE holds one URL per
 *       account (a user of that account), and each poll runs nl_poll_run
 *       and the apply for every account in turn, as that many Instance
 *       blocks would; the figures are the sums over the accounts.
 *   nl-bench gather --server URL --subject S --body B --replies K
 *       [--polls N] [--timeout-ms T]
 *       the transport alone: each poll sends B to S once and takes replies
 *       (nl_transport_gather) until K came or the timeout passed, nothing
 *       parsed: a directed $SYS.REQ.SERVER.<id>.JSZ (K 1) or the PING (K
 *       the cluster's size). "replies" is the median count.
 *   nl-bench server-id --server URL
 *       prints the id of the server the connection went to
 *       (natsConnection_GetConnectedServerId), the <id> of a directed
 *       $SYS.REQ.SERVER.<id>.* request.
 *   Every poll command takes --server-pids P1,P2,...: the utime + stime of
 *   those processes (nats-server, from /proc/PID/stat) is read before and
 *   after each poll; "server_cpu_ms_median" is the median over the polls
 *   of the sum, "server_cpu_ms" the median per process, in their order
 *   (clock-tick resolution, 10 ms on Linux with USER_HZ 100).
 *   nl-bench churn --streams S --new N --polls P [--interval-s I]
 *       stream churn through the engine alone (no server): each poll lists
 *       S streams with one consumer each, N of them named for the first
 *       time (the N oldest are gone), I seconds apart. Prints one JSON
 *       object per tenth of the polls: stream names seen so far, the heap
 *       in use, and the median apply time of that tenth.
 *
 * Build: see the Makefile target build/nl-bench. */
#include "core/nl_engine.h"
#include "jsapi/nl_jsz_poll.h"
#include "jsapi/nl_poll.h"
#include "jsapi/nl_transport.h"

#include <malloc.h>
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const char *arg_value(int argc, char **argv, const char *name,
                             const char *def) {
  for (int i = 0; i + 1 < argc; i++)
    if (strcmp(argv[i], name) == 0)
      return argv[i + 1];
  return def;
}

static double now_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Sends one API request and fails the program on a transport or API error.
 * "stream not found" (10059) is retried for up to 5 s: nats-server 2.11
 * may answer a consumer create so soon after its stream's create. */
static void api(natsConnection *nc, const char *subject, const char *body) {
  natsMsg *reply = NULL;
  for (int attempt = 0;; attempt++) {
    natsStatus s =
        natsConnection_RequestString(&reply, nc, subject, body, 10000);
    if (s != NATS_OK) {
      fprintf(stderr, "nl-bench: %s: %s\n", subject, natsStatus_GetText(s));
      exit(1);
    }
    if (attempt >= 50 ||
        strstr(natsMsg_GetData(reply), "\"err_code\":10059") == NULL)
      break;
    natsMsg_Destroy(reply);
    reply = NULL;
    nanosleep(&(struct timespec){0, 100000000L}, NULL);
  }
  if (strstr(natsMsg_GetData(reply), "\"error\"") != NULL) {
    fprintf(stderr, "nl-bench: %s: %s\n", subject, natsMsg_GetData(reply));
    exit(1);
  }
  natsMsg_Destroy(reply);
}

static int setup(const char *url, int streams, int consumers, int messages,
                 int replicas, const char *clusters) {
  /* The clusters to place the streams in, round, or none. */
  char list[512], *names[16];
  int n_names = 0;
  snprintf(list, sizeof(list), "%s", clusters != NULL ? clusters : "");
  for (char *tok = strtok(list, ","); tok != NULL && n_names < 16;
       tok = strtok(NULL, ","))
    names[n_names++] = tok;
  natsConnection *nc = NULL;
  natsStatus s = natsConnection_ConnectTo(&nc, url);
  if (s != NATS_OK) {
    fprintf(stderr, "nl-bench: connect %s: %s\n", url, natsStatus_GetText(s));
    return 1;
  }
  char subject[256], body[1024], placement[300];
  for (int i = 0; i < streams; i++) {
    placement[0] = '\0';
    if (n_names > 0)
      snprintf(placement, sizeof(placement),
               ",\"placement\":{\"cluster\":\"%s\"}", names[i % n_names]);
    snprintf(subject, sizeof(subject), "$JS.API.STREAM.CREATE.BENCH_%d", i);
    snprintf(body, sizeof(body),
             "{\"name\":\"BENCH_%d\",\"subjects\":[\"bench.%d.>\"],"
             "\"storage\":\"memory\",\"retention\":\"limits\","
             "\"num_replicas\":%d%s}",
             i, i, replicas, placement);
    api(nc, subject, body);
    for (int c = 0; c < consumers; c++) {
      snprintf(subject, sizeof(subject),
               "$JS.API.CONSUMER.DURABLE.CREATE.BENCH_%d.c%d", i, c);
      snprintf(body, sizeof(body),
               "{\"stream_name\":\"BENCH_%d\",\"config\":{\"durable_name\":"
               "\"c%d\",\"ack_policy\":\"explicit\",\"ack_wait\":"
               "30000000000,\"max_ack_pending\":1000}}",
               i, c);
      api(nc, subject, body);
    }
    for (int m = 0; m < messages; m++) {
      snprintf(subject, sizeof(subject), "bench.%d.x", i);
      api(nc, subject, "payload");
    }
  }
  natsConnection_Destroy(nc);
  return 0;
}

/* Prints the id of the server a connection to url reaches. */
static int server_id(const char *url) {
  natsConnection *nc = NULL;
  char id[128];
  natsStatus s = natsConnection_ConnectTo(&nc, url);
  if (s == NATS_OK)
    s = natsConnection_GetConnectedServerId(nc, id, sizeof(id));
  if (s != NATS_OK || id[0] == '\0') {
    fprintf(stderr, "nl-bench: server-id %s: %s\n", url,
            s != NATS_OK ? natsStatus_GetText(s) : "not connected");
    natsConnection_Destroy(nc);
    return 1;
  }
  printf("%s\n", id);
  natsConnection_Destroy(nc);
  return 0;
}

/* Counts requests and bytes around the real transport. */
typedef struct {
  nl_transport *t;
  uint64_t requests;
  uint64_t bytes;
} counting;

static int counting_request(void *ctx, const char *subject, const char *payload,
                            char **reply, size_t *reply_len, char *err,
                            size_t errlen) {
  counting *c = ctx;
  c->requests++;
  int rc = nl_transport_request(c->t, subject, payload, reply, reply_len, err,
                                errlen);
  if (rc == 0)
    c->bytes += *reply_len;
  return rc;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Reads a "Key:   N kB" line of /proc/self/status, in kB. */
static long proc_status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(key);
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (strncmp(line, key, n) == 0 && line[n] == ':')
      v = strtol(line + n + 1, NULL, 10);
  if (f != NULL)
    fclose(f);
  return v;
}

/* What one kind of poll works on: the transports (one per account in the
 * per-account mode), an engine per account, and the counts. */
typedef struct {
  counting *conns;
  size_t n_conns;
  bool system; /* One JSZ request per poll on conns[0]. */
  /* poll-server: that request to conns[0]'s server alone, read as an agent
   * (Scope "server") reads it. */
  bool server_scope;
  /* gather: one request of body to subject per poll on conns[0], taking
   * up to want replies unparsed (subject NULL otherwise). */
  const char *subject, *body;
  int want, replies;
  nl_engine **engines;
  char **ids; /* The account id of each engine (system), or NULL. */
  size_t n_engines;
  nl_detect_params params;
  uint64_t consumers, errors, accounts;
} bench_target;

/* Wraps the reply function of a gather to count bytes. */
typedef struct {
  nl_reply_fn fn;
  void *ud;
  counting *c;
} gather_tap;

static bool tap_reply(void *ud, const char *data, size_t len) {
  gather_tap *t = ud;
  t->c->bytes += len;
  return t->fn(t->ud, data, len);
}

/* Counts one request and the bytes of its replies around the real
 * transport's gather. */
static int counting_gather(void *ctx, const char *subject, const char *payload,
                           nl_reply_fn fn, void *ud, char *err, size_t errlen) {
  counting *c = ctx;
  c->requests++;
  gather_tap tap = {fn, ud, c};
  return nl_transport_gather(c->t, subject, payload, tap_reply, &tap, err,
                             errlen);
}

static int64_t real_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Counts the replies of a plain gather; true once enough came. */
static bool count_reply(void *ud, const char *data, size_t len) {
  (void)data;
  (void)len;
  bench_target *b = ud;
  return ++b->replies >= b->want;
}

/* The utime + stime of process pid in ms, or -1 when unreadable. */
static double proc_cpu_ms(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  size_t n = f != NULL ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
  if (f != NULL)
    fclose(f);
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* The command name may hold spaces. */
  unsigned long long ut, st;
  /* After ")": state (field 3) ... utime is field 14, stime field 15. */
  if (p == NULL || sscanf(p + 2,
                          "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
                          "%*u %llu %llu",
                          &ut, &st) != 2)
    return -1;
  return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* The engine of account id (made at its first sight), or NULL. */
static nl_engine *account_engine(bench_target *b, const char *id) {
  for (size_t i = 0; i < b->n_engines; i++)
    if (strcmp(b->ids[i], id) == 0)
      return b->engines[i];
  b->engines = realloc(b->engines, (b->n_engines + 1) * sizeof(*b->engines));
  b->ids = realloc(b->ids, (b->n_engines + 1) * sizeof(*b->ids));
  if (b->engines == NULL || b->ids == NULL)
    return NULL;
  b->ids[b->n_engines] = strdup(id);
  return b->engines[b->n_engines++] = nl_engine_create(&b->params);
}

/* One poll of every account of b, applied; *apply_ms gets the time spent
 * in the applies. Returns 0, or 1 on failure. */
static int bench_poll(bench_target *b, double *apply_ms) {
  nl_poll_stats stats;
  b->consumers = 0;
  *apply_ms = 0;
  if (b->subject != NULL) {
    char err[512];
    b->replies = 0;
    int n = counting_gather(&b->conns[0], b->subject, b->body, count_reply, b,
                            err, sizeof(err));
    if (n <= 0) {
      fprintf(stderr, "nl-bench: gather %s: %s\n", b->subject,
              n < 0 ? err : "no reply in time");
      return 1;
    }
    return 0;
  }
  if (b->system) {
    nl_jsz_result r;
    char id[128];
    if (b->server_scope &&
        nl_transport_server_id(b->conns[0].t, id, sizeof(id)) != 0) {
      fprintf(stderr, "nl-bench: not connected\n");
      return 1;
    }
    if ((b->server_scope ? nl_jsz_poll_server(counting_gather, &b->conns[0], id,
                                              NULL, NULL, &r, &stats)
                         : nl_jsz_poll_run(counting_gather, &b->conns[0], NULL,
                                           NULL, &r, &stats)) != 0) {
      fprintf(stderr, "nl-bench: poll failed: %s\n", stats.first_error);
      return 1;
    }
    b->errors += stats.errors;
    b->accounts = r.n_accounts;
    double a0 = now_ms(CLOCK_MONOTONIC);
    for (size_t i = 0; i < r.n_accounts; i++) {
      nl_engine *e = account_engine(b, r.accounts[i].id);
      if (e == NULL)
        return 1;
      nl_engine_apply(e, &r.accounts[i].set, real_now_ns(), NULL, NULL);
      b->consumers += r.accounts[i].set.n_consumers;
    }
    *apply_ms = now_ms(CLOCK_MONOTONIC) - a0;
    nl_jsz_result_clear(&r);
    return 0;
  }
  b->accounts = b->n_conns;
  for (size_t i = 0; i < b->n_conns; i++) {
    nl_poll_config pc = {0};
    nl_snapshot_set set = {0};
    if (nl_poll_run(&pc, counting_request, &b->conns[i], &set, &stats) != 0) {
      fprintf(stderr, "nl-bench: poll failed: %s\n", stats.first_error);
      return 1;
    }
    b->errors += stats.errors;
    double a0 = now_ms(CLOCK_MONOTONIC);
    nl_engine_apply(b->engines[i], &set, real_now_ns(), NULL, NULL);
    *apply_ms += now_ms(CLOCK_MONOTONIC) - a0;
    b->consumers += set.n_consumers;
    nl_snapshot_set_clear(&set);
  }
  return 0;
}

/* Runs polls polls of b, pause_ms apart (not timed), and prints one JSON
 * line of medians. Returns 0, or 1 on failure. */
static int poll_bench(bench_target *b, int polls, int pause_ms,
                      const long *pids, int n_pids) {
  long rss_before = proc_status_kb("VmRSS");
  double *srv = calloc((size_t)(polls * (n_pids + 1)), sizeof(double));
  double *srv_sum = calloc((size_t)polls, sizeof(double));
  double *replies = calloc((size_t)polls, sizeof(double));
  double s0[16];
  double *wall = calloc((size_t)polls, sizeof(double));
  double *cpu = calloc((size_t)polls, sizeof(double));
  double *parse_apply = calloc((size_t)polls, sizeof(double));
  uint64_t requests = 0, bytes = 0;
  for (int i = 0; i < polls; i++) {
    if (i > 0 && pause_ms > 0)
      nanosleep(
          &(struct timespec){pause_ms / 1000, (pause_ms % 1000) * 1000000L},
          NULL);
    uint64_t r0 = 0, b0 = 0;
    for (size_t k = 0; k < b->n_conns; k++) {
      r0 += b->conns[k].requests;
      b0 += b->conns[k].bytes;
    }
    for (int k = 0; k < n_pids; k++)
      s0[k] = proc_cpu_ms(pids[k]);
    double w0 = now_ms(CLOCK_MONOTONIC);
    double c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID);
    if (bench_poll(b, &parse_apply[i]) != 0)
      return 1;
    cpu[i] = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    wall[i] = now_ms(CLOCK_MONOTONIC) - w0;
    for (int k = 0; k < n_pids; k++) {
      srv[k * polls + i] = proc_cpu_ms(pids[k]) - s0[k];
      srv_sum[i] += srv[k * polls + i];
    }
    replies[i] = b->replies;
    requests = bytes = 0;
    for (size_t k = 0; k < b->n_conns; k++) {
      requests += b->conns[k].requests;
      bytes += b->conns[k].bytes;
    }
    requests -= r0;
    bytes -= b0;
    malloc_trim(0); /* As the plugin does after each poll. */
  }
  long rss_after = proc_status_kb("VmRSS");
  struct mallinfo2 mi = mallinfo2();
  printf("{\"polls\":%d,\"accounts\":%llu,\"consumers\":%llu,"
         "\"requests_per_poll\":%llu,"
         "\"bytes_per_poll\":%llu,\"wall_ms_median\":%.2f,"
         "\"cpu_ms_median\":%.2f,\"apply_ms_median\":%.2f,"
         "\"rss_kb_before\":%ld,\"rss_kb_after\":%ld,\"hwm_kb\":%ld,"
         "\"heap_in_use_kb\":%zu,\"errors\":%llu,",
         polls, (unsigned long long)b->accounts,
         (unsigned long long)b->consumers, (unsigned long long)requests,
         (unsigned long long)bytes, median(wall, polls), median(cpu, polls),
         median(parse_apply, polls), rss_before, rss_after,
         proc_status_kb("VmHWM"), mi.uordblks / 1024,
         (unsigned long long)b->errors);
  printf("\"replies\":%.0f,\"server_cpu_ms_median\":%.1f,\"server_cpu_ms\":[",
         median(replies, polls), median(srv_sum, polls));
  for (int k = 0; k < n_pids; k++)
    printf("%s%.1f", k ? "," : "", median(srv + k * polls, polls));
  printf("]}\n");
  free(srv);
  free(srv_sum);
  free(replies);
  free(wall);
  free(cpu);
  free(parse_apply);
  return 0;
}

/* Connects to each of the n urls (one transport each) and runs the
 * benchmark: the per-account mode, or with system the SystemAccount mode
 * on urls[0]. Returns 0, or 1 on failure. */
/* poll-server: the target reads as an agent does (bench_target). */
static bool bench_server_scope;

static int bench_urls(char **urls, size_t n, bool system, int polls,
                      int64_t timeout_ms, int pause_ms, const char *subject,
                      const char *body, int want, const long *pids,
                      int n_pids) {
  if (subject != NULL)
    system = true; /* One connection, on urls[0]. */
  bench_target b = {.system = system,
                    .server_scope = bench_server_scope,
                    .n_conns = system ? 1 : n,
                    .subject = subject,
                    .body = body,
                    .want = want};
  b.conns = calloc(b.n_conns, sizeof(*b.conns));
  nl_detect_params_default(&b.params);
  if (!system) {
    b.engines = calloc(n, sizeof(*b.engines));
    b.n_engines = n;
  }
  char err[512];
  for (size_t i = 0; i < b.n_conns; i++) {
    const char *u[] = {urls[i]};
    nl_transport_config tc = {
        .urls = u, .n_urls = 1, .timeout_ms = timeout_ms, .name = "nl-bench"};
    if (nl_transport_create(&tc, &b.conns[i].t, err, sizeof(err)) != 0 ||
        nl_transport_connect(b.conns[i].t, err, sizeof(err)) != 0) {
      fprintf(stderr, "nl-bench: %s: %s\n", urls[i], err);
      return 1;
    }
    if (!system)
      b.engines[i] = nl_engine_create(&b.params);
  }
  int rc = poll_bench(&b, polls, pause_ms, pids, n_pids);
  for (size_t i = 0; i < b.n_engines; i++) {
    nl_engine_free(b.engines[i]);
    if (b.ids != NULL)
      free(b.ids[i]);
  }
  free(b.engines);
  free(b.ids);
  for (size_t i = 0; i < b.n_conns; i++)
    nl_transport_free(b.conns[i].t);
  free(b.conns);
  return rc;
}

/* Reads one URL per line of path into *out (at most 10,000). Returns how
 * many, or 0 when none could be read. */
static size_t read_urls(const char *path, char ***out) {
  FILE *f = fopen(path, "r");
  char line[1024];
  size_t n = 0;
  *out = calloc(10000, sizeof(**out));
  while (f != NULL && *out != NULL && n < 10000 &&
         fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] != '\0')
      (*out)[n++] = strdup(line);
  }
  if (f != NULL)
    fclose(f);
  return n;
}

/* The churn benchmark (see the top of the file). */
static int churn_bench(int streams, int fresh, int polls, double interval_s) {
  nl_detect_params params;
  nl_detect_params_default(&params);
  params.config_classes = true;
  nl_engine *engine = nl_engine_create(&params);
  if (engine == NULL || streams < 1 || fresh < 0 || polls < 10)
    return 1;
  int tenth = polls / 10;
  double *apply = calloc((size_t)tenth, sizeof(*apply));
  int64_t t = 1700000000LL * 1000000000LL;
  char name[64];
  for (int poll = 0; poll < polls; poll++) {
    nl_snapshot_set set = {0};
    long first = (long)poll * fresh; /* The oldest name listed. */
    for (int i = 0; i < streams; i++) {
      nl_stream_snap *st = nl_snapshot_set_add_stream(&set);
      nl_consumer_snap *c = nl_snapshot_set_add_consumer(&set);
      if (st == NULL || c == NULL)
        return 1;
      snprintf(name, sizeof(name), "CHURN_%ld", first + i);
      st->name = strdup(name);
      st->retention = NL_RETENTION_LIMITS;
      st->replicas = 1;
      st->consumers_complete = true;
      st->consumer_count = 1;
      c->stream = strdup(name);
      c->name = strdup("worker");
      c->stream_index = set.n_streams - 1;
      c->created_ns = t - 1000000000LL;
      c->ack_policy = NL_ACK_EXPLICIT;
      c->ack_wait_ns = 30000000000LL;
      c->max_ack_pending = 1000;
      c->max_deliver = -1;
      c->durable = true;
    }
    double t0 = now_ms(CLOCK_MONOTONIC);
    nl_engine_apply(engine, &set, t, NULL, NULL);
    apply[poll % tenth] = now_ms(CLOCK_MONOTONIC) - t0;
    nl_snapshot_set_clear(&set);
    t += (int64_t)(interval_s * 1e9);
    if ((poll + 1) % tenth == 0) {
      struct mallinfo2 mi = mallinfo2(); /* Live bytes, mapped blocks too. */
      printf("{\"polls\": %d, \"stream_names_seen\": %ld, "
             "\"streams_held\": %zu, \"heap_in_use_mb\": %.2f, "
             "\"apply_ms_median\": %.3f}\n",
             poll + 1, first + streams, nl_engine_streams_held(engine),
             (double)(mi.uordblks + mi.hblkhd) / 1048576.0,
             median(apply, tenth));
    }
  }
  free(apply);
  nl_engine_free(engine);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: nl-bench setup|poll|poll-system|poll-accounts|gather|"
            "server-id|churn ...\n");
    return 2;
  }
  const char *url = arg_value(argc, argv, "--server", "nats://127.0.0.1:4222");
  if (strcmp(argv[1], "setup") == 0)
    return setup(url, atoi(arg_value(argc, argv, "--streams", "1")),
                 atoi(arg_value(argc, argv, "--consumers", "10")),
                 atoi(arg_value(argc, argv, "--messages", "0")),
                 atoi(arg_value(argc, argv, "--replicas", "1")),
                 arg_value(argc, argv, "--cluster", NULL));
  int polls = atoi(arg_value(argc, argv, "--polls", "5"));
  int64_t timeout_ms = atoll(arg_value(argc, argv, "--timeout-ms", "5000"));
  int pause_ms = atoi(arg_value(argc, argv, "--pause-ms", "0"));
  char *one[] = {(char *)url};
  long pids[16];
  int n_pids = 0;
  char pidlist[512];
  snprintf(pidlist, sizeof(pidlist), "%s",
           arg_value(argc, argv, "--server-pids", ""));
  for (char *tok = strtok(pidlist, ","); tok != NULL && n_pids < 16;
       tok = strtok(NULL, ","))
    pids[n_pids++] = atol(tok);
  if (strcmp(argv[1], "server-id") == 0)
    return server_id(url);
  if (strcmp(argv[1], "poll") == 0)
    return bench_urls(one, 1, false, polls, timeout_ms, pause_ms, NULL, NULL, 0,
                      pids, n_pids);
  if (strcmp(argv[1], "poll-system") == 0)
    return bench_urls(one, 1, true, polls, timeout_ms, pause_ms, NULL, NULL, 0,
                      pids, n_pids);
  if (strcmp(argv[1], "poll-server") == 0) {
    bench_server_scope = true;
    return bench_urls(one, 1, true, polls, timeout_ms, pause_ms, NULL, NULL, 0,
                      pids, n_pids);
  }
  if (strcmp(argv[1], "gather") == 0)
    return bench_urls(
        one, 1, true, polls, timeout_ms, pause_ms,
        arg_value(argc, argv, "--subject", "$SYS.REQ.SERVER.PING"),
        arg_value(argc, argv, "--body", ""),
        atoi(arg_value(argc, argv, "--replies", "1")), pids, n_pids);
  if (strcmp(argv[1], "poll-accounts") == 0) {
    char **urls = NULL;
    size_t n = read_urls(arg_value(argc, argv, "--urls", ""), &urls);
    if (n == 0) {
      fprintf(stderr, "nl-bench: poll-accounts needs --urls FILE\n");
      return 2;
    }
    return bench_urls(urls, n, false, polls, timeout_ms, pause_ms, NULL, NULL,
                      0, pids, n_pids);
  }
  if (strcmp(argv[1], "churn") == 0)
    return churn_bench(atoi(arg_value(argc, argv, "--streams", "1000")),
                       atoi(arg_value(argc, argv, "--new", "100")),
                       atoi(arg_value(argc, argv, "--polls", "2000")),
                       atof(arg_value(argc, argv, "--interval-s", "10")));
  fprintf(stderr, "nl-bench: unknown command %s\n", argv[1]);
  return 2;
}
