/* test_fixture_versions.c: the replies and advisories recorded from each
 * nats-server version (tests/fixtures/<version>/, by
 * tests/tools/record_fixtures.sh) read by the real parsers, with the facts
 * of the recording checked per version: what differs between versions
 * (the MSG_TERMINATED "reason" from 2.10.4, paused consumers and
 * per-message TTLs from 2.11) and what must not. */
#include "core/detect/nl_audit.h"
#include "core/detect/nl_publish_rejected.h"
#include "core/detect/nl_rate_limited.h"
#include "core/model/nl_advisory.h"
#include "core/model/nl_expect.h"
#include "core/model/nl_parse.h"
#include "core/nl_engine.h"
#include "nl_fixture.h"
#include "nl_test.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL
#define MAX_VERSIONS 32

/* One version directory: its name ("2.11.10") and number (2, 11, 10). */
typedef struct {
  char name[64];
  int v[3];
} fx_version;

/* Reads a name made of digits and dots only ("2.9.10") into *out; returns
 * false for any other name. */
static bool version_of(const char *name, fx_version *out) {
  if (!isdigit((unsigned char)name[0]) || strlen(name) >= sizeof(out->name))
    return false;
  for (const char *p = name; *p; p++)
    if (!isdigit((unsigned char)*p) && *p != '.')
      return false;
  memset(out, 0, sizeof(*out));
  strcpy(out->name, name);
  sscanf(name, "%d.%d.%d", &out->v[0], &out->v[1], &out->v[2]);
  return true;
}

/* True when version ver is at least a.b.c. */
static bool at_least(const fx_version *ver, int a, int b, int c) {
  int want[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (ver->v[i] != want[i])
      return ver->v[i] > want[i];
  return true;
}

/* Reads file of the version's directory (NULL, and a failed check, when
 * it is missing). */
static char *read_version_file(const fx_version *ver, const char *file,
                               size_t *len) {
  char name[256];
  snprintf(name, sizeof(name), "%s/%s", ver->name, file);
  char *text = nl_test_read_fixture(name, len);
  CHECK(text != NULL);
  return text;
}

/* Parses a CONSUMER.LIST page of the stream at stream_index into set;
 * returns the parse status, or 1 when the file is missing. */
static int parse_consumers(const fx_version *ver, const char *file,
                           size_t stream_index, nl_snapshot_set *set,
                           nl_page_info *page) {
  size_t len;
  char *text = read_version_file(ver, file, &len);
  if (text == NULL)
    return 1;
  char err[256] = "";
  int rc = nl_parse_consumer_list(text, len, stream_index, set, page, err,
                                  sizeof(err));
  free(text);
  return rc;
}

static const nl_consumer_snap *find_consumer(const nl_snapshot_set *set,
                                             const char *name) {
  const nl_consumer_snap *c = nl_test_consumer(set, name);
  if (c == NULL)
    fprintf(stderr, "  consumer %s not parsed\n", name);
  return c;
}

/* Finds stream name in set, or adds a snapshot of it (for streams created
 * after STREAM.LIST was recorded); returns its index. */
static size_t stream_index(nl_snapshot_set *set, const char *name) {
  const nl_stream_snap *held = nl_test_stream(set, name);
  if (held != NULL)
    return (size_t)(held - set->streams);
  nl_stream_snap *s = nl_snapshot_set_add_stream(set);
  if (s != NULL)
    s->name = strdup(name);
  return set->n_streams - 1;
}

/* STREAM.LIST: the five streams with their retention and limits. */
static void check_streams(const fx_version *ver, nl_snapshot_set *set) {
  size_t len;
  char *text = read_version_file(ver, "stream_list.json", &len);
  if (text == NULL)
    return;
  nl_page_info page;
  char err[256] = "";
  CHECK(nl_parse_stream_list(text, len, set, &page, err, sizeof(err)) ==
        NL_PARSE_OK);
  free(text);
  CHECK_EQ_U(set->n_streams, 5);
  CHECK_EQ_U(page.total, 5);
  CHECK_EQ_U(page.n_skipped, 0);
  const nl_stream_snap *s = &set->streams[stream_index(set, "FX_LIMITS")];
  CHECK(s->retention == NL_RETENTION_LIMITS && s->max_msgs == 1000);
  CHECK_EQ_U(s->msgs, 20);
  CHECK_EQ_U(s->n_subjects, 2);
  s = &set->streams[stream_index(set, "FX_INTEREST")];
  CHECK(s->retention == NL_RETENTION_INTEREST);
  s = &set->streams[stream_index(set, "FX_WQ")];
  CHECK(s->retention == NL_RETENTION_WORKQUEUE);
  CHECK_EQ_U(s->first_seq, 4);
  s = &set->streams[stream_index(set, "FX_AGE")];
  CHECK(s->max_age_ns == 3600 * SEC);
  CHECK_EQ_U(set->n_streams, 5); /* Every one was listed. */
}

/* CONSUMER.LIST of FX_LIMITS: its 7 consumers of every kind, none paused;
 * CONSUMER.INFO of PULL. */
static void check_consumers(const fx_version *ver, nl_snapshot_set *set) {
  size_t limits = stream_index(set, "FX_LIMITS");
  nl_page_info page;
  CHECK(parse_consumers(ver, "consumer_list.json", limits, set, &page) ==
        NL_PARSE_OK);
  CHECK_EQ_U(set->n_consumers, 7);
  CHECK_EQ_U(page.total, 7);
  CHECK_EQ_U(page.n_skipped, 0);
  const nl_consumer_snap *c = find_consumer(set, "PULL");
  CHECK(c && !c->push && c->durable && c->ack_policy == NL_ACK_EXPLICIT);
  CHECK(c && c->ack_wait_ns == 30 * SEC && c->max_ack_pending == 100);
  CHECK(c && c->ack_floor_stream_seq == 10 && c->ack_last_ns > 0);
  CHECK(c && c->deliver_all);
  c = find_consumer(set, "PUSH_BOUND");
  CHECK(c && c->push && c->push_bound && !c->has_deliver_group);
  CHECK(c && c->ack_floor_stream_seq == 20);
  c = find_consumer(set, "PUSH_IDLE");
  CHECK(c && c->push && !c->push_bound && c->has_deliver_group);
  CHECK(c && c->num_pending == 20 && c->delivered_stream_seq == 0);
  c = find_consumer(set, "FILTERED");
  CHECK(c && !c->push && c->filtered && c->delivered_stream_seq == 14);
  c = find_consumer(set, "ACK_NONE");
  CHECK(c && c->ack_policy == NL_ACK_NONE && c->delivered_stream_seq == 20);
  c = find_consumer(set, "ACK_ALL");
  CHECK(c && c->ack_policy == NL_ACK_ALL && c->ack_floor_stream_seq == 6);
  c = find_consumer(set, "BACKOFF");
  CHECK(c && c->backoff_steps == 3 && c->backoff_first_ns == 1 * SEC);
  CHECK(c && c->ack_wait_ns == 1 * SEC); /* Set from backoff[0]. */
  CHECK(c && c->max_deliver == 5 && c->max_ack_pending == 3);
  CHECK(c && c->num_redelivered == 3 && c->ack_floor_stream_seq == 0);
  for (size_t i = 0; i < set->n_consumers; i++)
    CHECK(!set->consumers[i].paused);
  size_t len;
  char *text = read_version_file(ver, "consumer_info.json", &len);
  if (text != NULL) {
    char err[256] = "";
    CHECK(nl_parse_consumer_info(text, len, limits, set, err, sizeof(err)) ==
          NL_PARSE_OK);
    CHECK_EQ_U(set->n_consumers, 8);
    c = &set->consumers[set->n_consumers - 1];
    CHECK(strcmp(c->name, "PULL") == 0 && c->max_ack_pending == 100);
    free(text);
  }
}

/* Paging (300 = 256 + 44), an empty list and the error reply. */
static void check_pages_and_errors(const fx_version *ver,
                                   nl_snapshot_set *set) {
  size_t page_stream = stream_index(set, "FX_PAGE");
  size_t before = set->n_consumers;
  nl_page_info p0, p1;
  CHECK(parse_consumers(ver, "consumer_list_page0.json", page_stream, set,
                        &p0) == NL_PARSE_OK);
  CHECK(parse_consumers(ver, "consumer_list_page1.json", page_stream, set,
                        &p1) == NL_PARSE_OK);
  CHECK_EQ_U(p0.total, 300);
  CHECK_EQ_U(p0.limit, 256);
  CHECK_EQ_U(p0.n_items, 256);
  CHECK_EQ_U(p1.total, 300);
  CHECK_EQ_U(p1.offset, 256);
  CHECK_EQ_U(p1.n_items, 44);
  CHECK_EQ_U(set->n_consumers - before, 300);
  nl_page_info page;
  before = set->n_consumers;
  CHECK(parse_consumers(ver, "consumer_list_empty.json",
                        stream_index(set, "FX_AGE"), set,
                        &page) == NL_PARSE_OK);
  CHECK_EQ_U(page.total, 0);
  CHECK_EQ_U(set->n_consumers, before);
  CHECK(parse_consumers(ver, "api_error_no_stream.json",
                        stream_index(set, "FX_AGE"), set,
                        &page) == NL_PARSE_API_ERROR);
}

/* Parses an advisory of the version (with the subject it came on);
 * returns the parse status, or 1 when the file is missing. */
static int parse_advisory(const fx_version *ver, const char *file,
                          const char *subject, nl_advisory *a) {
  size_t len;
  char *text = read_version_file(ver, file, &len);
  if (text == NULL)
    return 1;
  char err[256] = "";
  int rc = nl_advisory_parse(subject, text, len, a, err, sizeof(err));
  free(text);
  return rc;
}

/* The advisories: removed by limits carries its reason from 2.10.4, a
 * client +TERM never does. */
static void check_advisories(const fx_version *ver) {
  nl_advisory a;
  CHECK(parse_advisory(ver, "advisory_terminated_limits.json",
                       "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED."
                       "FX_TERM_LIMITS.C",
                       &a) == 0);
  CHECK(a.kind == NL_ADV_TERMINATED && a.stream_seq == 1);
  CHECK(a.removed_from_stream == at_least(ver, 2, 10, 4));
  CHECK((a.reason[0] != '\0') == at_least(ver, 2, 10, 4));
  CHECK(parse_advisory(ver, "advisory_terminated.json",
                       "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.FX_TERM.C",
                       &a) == 0);
  CHECK(a.kind == NL_ADV_TERMINATED && a.stream_seq == 2);
  CHECK(!a.removed_from_stream && a.reason[0] == '\0');
  CHECK(parse_advisory(ver, "advisory_nak.json",
                       "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.FX_NAK.C",
                       &a) == 0);
  CHECK(a.kind == NL_ADV_NAK && a.stream_seq == 1 && a.deliveries == 1);
  CHECK(parse_advisory(ver, "advisory_max_deliver.json",
                       "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.FX_NAK.C",
                       &a) == 0);
  CHECK(a.kind == NL_ADV_MAX_DELIVER && a.deliveries == 3);
  CHECK(a.timestamp_ns > 0);
  /* The API audit is not a consumer advisory. */
  CHECK(parse_advisory(ver, "advisory_api_audit.json", NULL, &a) == -1);
}

/* Parses the STREAM.INFO file of the version into set; returns the
 * stream, or NULL (and a failed check) when it cannot. */
static const nl_stream_snap *parse_stream_info(const fx_version *ver,
                                               const char *file,
                                               nl_snapshot_set *set) {
  size_t len;
  char *text = read_version_file(ver, file, &len);
  if (text == NULL)
    return NULL;
  char err[256] = "";
  int rc = nl_parse_stream_info(text, len, set, err, sizeof(err));
  free(text);
  CHECK(rc == NL_PARSE_OK);
  return rc == NL_PARSE_OK ? &set->streams[set->n_streams - 1] : NULL;
}

/* What SEQUENCE_GAP tells removals apart by: a key-value replacement's
 * MSG_TERMINATED has the reason of a limit's removal (from 2.10.4), and
 * the stream's max_msgs_per_subject; from 2.11, a stream's allow_msg_ttl
 * and the head past the expired messages; from 2.12, a stream's
 * allow_msg_schedules and the head past a schedule that fired. */
static void check_removals(const fx_version *ver, nl_snapshot_set *set) {
  nl_advisory a;
  CHECK(parse_advisory(ver, "advisory_terminated_subject.json",
                       "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.FX_KV.C",
                       &a) == 0);
  CHECK(a.kind == NL_ADV_TERMINATED && a.stream_seq == 1);
  CHECK(a.removed_from_stream == at_least(ver, 2, 10, 4));
  const nl_stream_snap *s = parse_stream_info(ver, "stream_info_kv.json", set);
  CHECK(s != NULL && s->max_msgs_per_subject == 1 && !s->allow_msg_ttl &&
        s->first_seq == 2);
  if (!at_least(ver, 2, 11, 0))
    return;
  s = parse_stream_info(ver, "stream_info_ttl.json", set);
  CHECK(s != NULL && s->allow_msg_ttl && s->max_msgs_per_subject <= 0 &&
        s->first_seq == 3 && s->msgs == 1 && !s->allow_msg_schedules);
  if (!at_least(ver, 2, 12, 0))
    return;
  /* A delayed message, the stream's first, fired: its copy is the last
   * sequence, the head passed it, and the server moved the consumer that
   * had read nothing past it. */
  s = parse_stream_info(ver, "stream_info_schedule.json", set);
  CHECK(s != NULL && s->allow_msg_schedules && s->first_seq == 2 &&
        s->last_seq == 3 && s->msgs == 2);
  size_t len;
  char *text = read_version_file(ver, "consumer_info_schedule.json", &len);
  if (text == NULL)
    return;
  char err[256] = "";
  CHECK(nl_parse_consumer_info(text, len, set->n_streams - 1, set, err,
                               sizeof(err)) == NL_PARSE_OK);
  free(text);
  const nl_consumer_snap *c = &set->consumers[set->n_consumers - 1];
  CHECK(c->delivered_consumer_seq == 0 && c->delivered_stream_seq == 1 &&
        c->num_pending == 2);
}

/* From 2.11: a consumer paused for an hour, in its CONSUMER.INFO and in
 * the CONSUMER.LIST of its stream. */
static void check_paused(const fx_version *ver, nl_snapshot_set *set) {
  if (!at_least(ver, 2, 11, 0))
    return;
  size_t pause_stream = stream_index(set, "FX_PAUSE");
  size_t len;
  char *text = read_version_file(ver, "consumer_info_paused.json", &len);
  if (text != NULL) {
    char err[256] = "";
    CHECK(nl_parse_consumer_info(text, len, pause_stream, set, err,
                                 sizeof(err)) == NL_PARSE_OK);
    free(text);
    const nl_consumer_snap *c = &set->consumers[set->n_consumers - 1];
    CHECK(strcmp(c->name, "PAUSED") == 0 && c->paused);
    CHECK(c->pause_remaining_ns > 3500 * SEC &&
          c->pause_remaining_ns <= 3600 * SEC);
  }
  nl_page_info page;
  CHECK(parse_consumers(ver, "consumer_list_paused.json", pause_stream, set,
                        &page) == NL_PARSE_OK);
  CHECK_EQ_U(page.n_items, 1);
  const nl_consumer_snap *c = &set->consumers[set->n_consumers - 1];
  CHECK(c->paused && c->pause_remaining_ns > 3500 * SEC);
}

/* Whether PUBLISH_REJECTED is raised for stream name of set on a second
 * poll that saw it as the first did (the size limit needs two). */
static bool rejected(const nl_snapshot_set *set, const char *name) {
  const nl_stream_snap *s = nl_test_stream(set, name);
  CHECK(s != NULL);
  if (s == NULL)
    return false;
  int64_t t = s->last_ts_ns + 5 * SEC;
  nl_full_prev first = nl_full_next(NULL, s, t - SEC);
  nl_finding f;
  return nl_detect_publish_rejected(s, &first, t, &f);
}

/* Parses the STREAM.LIST reply file of the version into set; returns
 * false (a failed check) when it is missing or cannot be read. */
static bool parse_streams(const fx_version *ver, const char *file,
                          nl_snapshot_set *set) {
  size_t len;
  char *text = read_version_file(ver, file, &len);
  if (text == NULL)
    return false;
  nl_page_info page;
  char err[256] = "";
  int rc = nl_parse_stream_list(text, len, set, &page, err, sizeof(err));
  free(text);
  CHECK(rc == NL_PARSE_OK);
  return rc == NL_PARSE_OK;
}

/* STREAM.LIST of the streams at their limits (stream_list_full.json): the
 * fields PUBLISH_REJECTED reads, and which of them it raises; the
 * declaration of FX_FULL_OK is metadata from 2.10 and, on any version, the
 * plugin's StreamDeclaration (applied as the glue applies it). */
static void check_full(const fx_version *ver) {
  nl_snapshot_set set = {0};
  if (!parse_streams(ver, "stream_list_full.json", &set)) {
    nl_snapshot_set_clear(&set);
    return;
  }
  CHECK_EQ_U(set.n_streams, 6);
  const nl_stream_snap *s = nl_test_stream(&set, "FX_FULL_SUBJ");
  CHECK(s != NULL && s->discard_new && s->discard_new_per_subject &&
        s->max_msgs_per_subject == 2 && s->num_subjects == 2 && s->msgs == 4 &&
        s->last_ts_ns > 0);
  s = nl_test_stream(&set, "FX_FULL_BYTES");
  CHECK(s != NULL && s->max_bytes == 1000 && s->bytes > 1000 - 129 &&
        nl_stream_full(s) == NL_FULL_BYTES);
  s = nl_test_stream(&set, "FX_FULL_OK");
  bool meta = at_least(ver, 2, 10, 0);
  CHECK(s != NULL &&
        (nl_stream_snap_meta(s, "nats_lens.full_ok") != NULL) == meta);
  CHECK(rejected(&set, "FX_FULL_MSGS"));
  CHECK(rejected(&set, "FX_FULL_BYTES"));
  CHECK(rejected(&set, "FX_FULL_SUBJ"));
  CHECK(!rejected(&set, "FX_FULL_ROOM"));
  CHECK(!rejected(&set, "FX_FULL_OLD"));
  CHECK(rejected(&set, "FX_FULL_OK") == !meta);
  nl_expect_spec spec = {"FX_FULL_O?", NULL, "full_ok", "true"};
  CHECK_EQ_U(nl_expect_apply_streams(&spec, 1, &set), 1);
  CHECK(!rejected(&set, "FX_FULL_OK"));
  nl_snapshot_set_clear(&set);
}

/* The CONSUMER_SINGLE_REPLICA finding of consumer name of set (the audit
 * rule the plugin raises it through), or NULL. */
static const nl_audit_finding *single_replica(const nl_snapshot_set *set,
                                              const char *stream,
                                              const char *name,
                                              nl_audit_result *r) {
  nl_audit_params p;
  nl_audit_params_default(&p);
  for (size_t i = 0; i < set->n_consumers; i++) {
    const nl_consumer_snap *c = &set->consumers[i];
    if (strcmp(c->name, name) != 0 || strcmp(c->stream, stream) != 0)
      continue;
    r->n = 0;
    CHECK(nl_audit_consumer(set, i, &p, 1u << NL_AUDIT_CONSUMER_SINGLE_REPLICA,
                            r) == 0);
    return r->n > 0 ? &r->items[0] : NULL;
  }
  CHECK(name == NULL); /* The consumer was not parsed. */
  return NULL;
}

/* The 3-node cluster's replies about consumer replicas
 * (record_cluster_fixtures.sh): num_replicas and mem_storage read, and
 * which consumers CONSUMER_SINGLE_REPLICA names. */
static void check_replicas(const fx_version *ver) {
  nl_snapshot_set set = {0};
  if (!parse_streams(ver, "stream_list_replicas.json", &set)) {
    nl_snapshot_set_clear(&set);
    return;
  }
  nl_page_info page;
  size_t file = stream_index(&set, "FX_REP_FILE");
  size_t mem = stream_index(&set, "FX_REP_MEM");
  CHECK(set.streams[file].replicas == 3 && !set.streams[file].memory_storage &&
        set.streams[file].cluster != NULL);
  CHECK(set.streams[mem].memory_storage);
  CHECK(parse_consumers(ver, "consumer_list_replicas.json", file, &set,
                        &page) == NL_PARSE_OK);
  CHECK_EQ_U(page.n_items, 6);
  CHECK(parse_consumers(ver, "consumer_list_replicas_memory.json", mem, &set,
                        &page) == NL_PARSE_OK);
  const nl_consumer_snap *c = find_consumer(&set, "R1");
  CHECK(c != NULL && c->num_replicas == 1 && !c->mem_storage);
  c = find_consumer(&set, "INHERIT");
  CHECK(c != NULL && c->num_replicas == 0);
  nl_audit_result r = {0};
  const nl_audit_finding *f = single_replica(&set, "FX_REP_FILE", "R1", &r);
  CHECK(f != NULL &&
        strcmp(f->f.fix_command,
               "nats consumer edit FX_REP_FILE R1 --replicas 3") == 0);
  f = single_replica(&set, "FX_REP_FILE", "MEM", &r);
  CHECK(f != NULL && f->f.fix_command[0] == '\0' &&
        nl_finding_get(&f->f, "consumer_replicas", 0) == 3);
  static const char *const silent[] = {"INHERIT", "R3", "NONE_R1"};
  for (size_t i = 0; i < sizeof(silent) / sizeof(silent[0]); i++)
    CHECK(single_replica(&set, "FX_REP_FILE", silent[i], &r) == NULL);
  /* The ephemeral consumer of an ordered read, and mem_storage on a
   * memory stream. */
  for (size_t i = 0; i < set.n_consumers; i++)
    if (!set.consumers[i].durable)
      CHECK(single_replica(&set, "FX_REP_FILE", set.consumers[i].name, &r) ==
            NULL);
  CHECK(single_replica(&set, "FX_REP_MEM", "MEM", &r) == NULL);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

/* Whether consumer name of stream FX_RATE holds a RATE_LIMITED finding
 * in engine e. */
static bool rate_limited(nl_engine *e, const char *name) {
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(e), "FX_RATE", name);
  return st != NULL && st->active[NL_RATE_LIMITED] != NULL;
}

/* The eight polls of a consumer held by its rate limit
 * (rate_polls.jsonl, the times in rate_polls_times.txt), applied to an
 * engine with a window of 12 s: the fields RATE_LIMITED reads; RATED
 * raised once the window and 6 polls are seen (the 7th poll or the 8th),
 * FAST (100 times the limit) and HDRS (headers only, no subscriber) never;
 * and the bytes RATED was sent a second, at the estimated bytes of a
 * delivery, within 10 % of its limit of 1,000 B/s. */
static void check_rate(const fx_version *ver) {
  size_t len, tlen;
  char *text = read_version_file(ver, "rate_polls.jsonl", &len);
  char *times = read_version_file(ver, "rate_polls_times.txt", &tlen);
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.rate_limited_s = 12;
  nl_engine *e = nl_engine_create(&p);
  char *line = text, *tp = times;
  int polls = 0, raised_at = -1;
  int64_t t0 = 0;
  uint64_t sent0 = 0;
  double bytes_per_s = 0;
  while (line != NULL && tp != NULL && e != NULL && polls < 8) {
    char *next = strchr(line, '\n');
    char *cons = next ? next + 1 : NULL;
    char *end = cons ? strchr(cons, '\n') : NULL;
    if (cons == NULL || end == NULL)
      break;
    int64_t t = strtoll(tp, &tp, 10);
    nl_snapshot_set set = {0};
    nl_page_info page;
    char err[256] = "";
    CHECK(nl_parse_stream_list(line, (size_t)(next - line), &set, &page, err,
                               sizeof(err)) == NL_PARSE_OK);
    CHECK(nl_parse_consumer_list(cons, (size_t)(end - cons), 0, &set, &page,
                                 err, sizeof(err)) == NL_PARSE_OK);
    set.streams[0].consumers_complete = true;
    const nl_stream_snap *s = nl_test_stream(&set, "FX_RATE");
    const nl_consumer_snap *r = nl_test_consumer(&set, "RATED");
    const nl_consumer_snap *h = nl_test_consumer(&set, "HDRS");
    CHECK(s != NULL && r != NULL && h != NULL);
    if (s == NULL || r == NULL || h == NULL) {
      nl_snapshot_set_clear(&set);
      break;
    }
    CHECK(s->max_msg_size == 1024 && !s->memory_storage);
    CHECK(r->push && r->push_bound && r->rate_limit_bps == 8000 &&
          !r->headers_only);
    CHECK(h->headers_only && h->rate_limit_bps == 8000);
    if (polls == 1) {
      t0 = t;
      sent0 = r->delivered_consumer_seq;
    } else if (polls == 7) {
      bytes_per_s = (double)(r->delivered_consumer_seq - sent0) *
                    nl_rate_bytes_per_delivery(r, s) / nl_seconds(t - t0);
    }
    nl_engine_apply(e, &set, t, NULL, NULL);
    if (raised_at < 0 && rate_limited(e, "RATED"))
      raised_at = polls;
    CHECK(!rate_limited(e, "FAST") && !rate_limited(e, "HDRS"));
    nl_snapshot_set_clear(&set);
    polls++;
    line = end + 1;
  }
  CHECK_EQ_U(polls, 8);
  CHECK(raised_at == 6 || raised_at == 7);
  CHECK(bytes_per_s > 900 && bytes_per_s < 1100);
  nl_engine_free(e);
  free(text);
  free(times);
}

/* Consumers with an inactive_threshold (consumer_list_inactive.json): a
 * durable with 600 s and one filter, a consumer with a name and no durable
 * name, which the server gives 5 s; the reply's time ("ts") from 2.10, and
 * a stream's consumer_limits from 2.10 (stream_list_consumer_limits.json).
 * The API audit of a consumer delete is read as one. */
static void check_inactive(const fx_version *ver, nl_snapshot_set *set) {
  size_t si = stream_index(set, "FX_IDLE");
  nl_page_info page;
  CHECK(parse_consumers(ver, "consumer_list_inactive.json", si, set, &page) ==
        NL_PARSE_OK);
  const nl_consumer_snap *dur = find_consumer(set, "DUR");
  const nl_consumer_snap *eph = find_consumer(set, "EPH");
  if (dur != NULL) {
    CHECK(dur->inactive_threshold_ns == 600 * SEC);
    CHECK(dur->durable);
    CHECK(dur->filter != NULL && strcmp(dur->filter, "fx.idle.a") == 0);
    CHECK((dur->server_ts_ns > 0) == at_least(ver, 2, 10, 0));
  }
  if (eph != NULL) {
    CHECK(eph->inactive_threshold_ns == 5 * SEC);
    CHECK(!eph->durable);
    CHECK(eph->filter == NULL);
  }
  if (at_least(ver, 2, 10, 0)) {
    nl_snapshot_set limited = {0};
    if (parse_streams(ver, "stream_list_consumer_limits.json", &limited))
      CHECK(limited.n_streams == 1 &&
            limited.streams[0].consumer_inactive_limit_ns == 60 * SEC);
    nl_snapshot_set_clear(&limited);
  }
  nl_advisory a;
  CHECK(parse_advisory(ver, "advisory_api_consumer_delete.json",
                       nl_advisory_api_subject, &a) == 0);
  CHECK(a.kind == NL_ADV_API_DELETE && strcmp(a.consumer, "GONE") == 0);
}

static int by_version(const void *a, const void *b) {
  const fx_version *x = a, *y = b;
  for (int i = 0; i < 3; i++)
    if (x->v[i] != y->v[i])
      return x->v[i] < y->v[i] ? -1 : 1;
  return 0;
}

static void test_fixture_versions(void) {
  DIR *dir = opendir(nl_test_fixture_dir);
  CHECK(dir != NULL);
  if (dir == NULL)
    return;
  fx_version versions[MAX_VERSIONS];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL && n < MAX_VERSIONS)
    if (version_of(e->d_name, &versions[n]))
      n++;
  closedir(dir);
  CHECK(n > 0); /* No tests/fixtures/<version>/ found. */
  qsort(versions, n, sizeof(versions[0]), by_version);
  for (size_t i = 0; i < n; i++) {
    int before = nl_test_failures;
    nl_snapshot_set set = {0};
    check_streams(&versions[i], &set);
    check_consumers(&versions[i], &set);
    check_pages_and_errors(&versions[i], &set);
    check_advisories(&versions[i]);
    check_paused(&versions[i], &set);
    check_removals(&versions[i], &set);
    check_full(&versions[i]);
    check_replicas(&versions[i]);
    check_rate(&versions[i]);
    check_inactive(&versions[i], &set);
    nl_snapshot_set_clear(&set);
    if (nl_test_failures != before)
      fprintf(stderr, "  in fixtures of nats-server %s\n", versions[i].name);
  }
}

static const nl_test_case tests[] = {
    NL_TEST(test_fixture_versions),
};

NL_TEST_MAIN(tests)
