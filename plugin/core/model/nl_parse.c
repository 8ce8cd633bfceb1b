/* nl_parse.c: JetStream API replies (JSON text) to snapshots, with json-c. */
#include "nl_parse.h"
#include "nl_expect.h"
#include "nl_monitor.h"
#include "nl_subject.h"

#include <ctype.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Returns the member of obj named key when it has the given type, else NULL.
 */
static json_object *member(json_object *obj, const char *key, json_type type) {
  json_object *v = NULL;
  if (obj == NULL || !json_object_is_type(obj, json_type_object))
    return NULL;
  if (!json_object_object_get_ex(obj, key, &v) || v == NULL)
    return NULL;
  return json_object_is_type(v, type) ? v : NULL;
}

/* Reads a non-negative integer member; negative, fractional, non-numeric or
 * absent values give def. Values above INT64_MAX saturate there. */
static uint64_t get_u64(json_object *obj, const char *key, uint64_t def) {
  json_object *v = member(obj, key, json_type_int);
  if (v == NULL)
    return def;
  int64_t s = json_object_get_int64(v);
  if (s < 0)
    return def;
  return (uint64_t)s;
}

/* Reads a signed integer member, or def when absent or not an integer. */
static int64_t get_i64(json_object *obj, const char *key, int64_t def) {
  json_object *v = member(obj, key, json_type_int);
  return v ? json_object_get_int64(v) : def;
}

static bool get_bool(json_object *obj, const char *key) {
  json_object *v = member(obj, key, json_type_boolean);
  return v ? json_object_get_boolean(v) : false;
}

/* The string of v when it is a string of at most NL_NAME_MAX
 * bytes without an embedded NUL (which would cut it short, so that two
 * names could read the same), else NULL. The pointer is owned by v. */
static const char *str_value(json_object *v) {
  if (v == NULL || !json_object_is_type(v, json_type_string))
    return NULL;
  int len = json_object_get_string_len(v);
  const char *s = json_object_get_string(v);
  if (len > NL_NAME_MAX || strlen(s) != (size_t)len)
    return NULL;
  return s;
}

/* Returns the string member key as str_value takes it, else NULL. */
static const char *get_str(json_object *obj, const char *key) {
  return str_value(member(obj, key, json_type_string));
}

/* Reads an RFC 3339 time member, or 0 when absent or unreadable. */
static int64_t get_time(json_object *obj, const char *key) {
  const char *s = get_str(obj, key);
  int64_t ns = 0;
  if (s == NULL || nl_parse_rfc3339(s, &ns) != 0)
    return 0;
  return ns;
}

/* Reads n digits at p into *out. Returns 0, or -1 if a non-digit is seen. */
static int digits(const char *p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)p[i]))
      return -1;
    v = v * 10 + (p[i] - '0');
  }
  *out = v;
  return 0;
}

int nl_parse_rfc3339(const char *text, int64_t *out_ns) {
  int year, mon, day, hour, min, sec;
  if (text == NULL || strlen(text) < 20)
    return -1;
  const char *p = text;
  if (digits(p, 4, &year) || p[4] != '-' || digits(p + 5, 2, &mon) ||
      p[7] != '-' || digits(p + 8, 2, &day) ||
      (p[10] != 'T' && p[10] != 't' && p[10] != ' ') ||
      digits(p + 11, 2, &hour) || p[13] != ':' || digits(p + 14, 2, &min) ||
      p[16] != ':' || digits(p + 17, 2, &sec))
    return -1;
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 ||
      sec > 60)
    return -1;
  p += 19;
  int64_t frac = 0;
  if (*p == '.') {
    p++;
    int n = 0;
    while (isdigit((unsigned char)*p)) {
      if (n < 9) {
        frac = frac * 10 + (*p - '0');
        n++;
      }
      p++;
    }
    if (n == 0)
      return -1;
    for (; n < 9; n++)
      frac *= 10;
  }
  int64_t offset_s = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om;
    if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om))
      return -1;
    offset_s = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
    p += 6;
  } else {
    return -1;
  }
  if (*p != '\0')
    return -1;
  /* Go's zero time (year 1) and anything before the epoch mean "never". */
  if (year < 1970) {
    *out_ns = 0;
    return 0;
  }
  struct tm tm = {.tm_year = year - 1900,
                  .tm_mon = mon - 1,
                  .tm_mday = day,
                  .tm_hour = hour,
                  .tm_min = min,
                  .tm_sec = sec};
  time_t t = timegm(&tm);
  if (t == (time_t)-1)
    return -1;
  int64_t s = (int64_t)t - offset_s;
  if (s < 0 || s > INT64_MAX / 1000000000 - 1)
    return -1;
  *out_ns = s * 1000000000 + frac;
  return 0;
}

/* Parses a reply and checks that it is an object without an error member.
 * Returns the parsed root (caller puts it), or NULL with err written and *rc
 * set. */
static json_object *parse_reply(const char *json, size_t len, int *rc,
                                char *err, size_t errlen) {
  if (json == NULL || len == 0) {
    snprintf(err, errlen, "empty reply");
    *rc = NL_PARSE_BAD_JSON;
    return NULL;
  }
  if (len > (size_t)INT32_MAX) {
    snprintf(err, errlen, "reply too large (%zu bytes)", len);
    *rc = NL_PARSE_BAD_JSON;
    return NULL;
  }
  json_tokener *tok = json_tokener_new();
  if (tok == NULL) {
    snprintf(err, errlen, "out of memory");
    *rc = NL_PARSE_BAD_JSON;
    return NULL;
  }
  json_object *root = json_tokener_parse_ex(tok, json, (int)len);
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t used = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (root == NULL || jerr != json_tokener_success) {
    /* json-c says "continue" for input that ends inside a value. */
    if (jerr == json_tokener_continue || jerr == json_tokener_success)
      snprintf(err, errlen,
               "truncated JSON: the reply ends after %zu bytes, "
               "inside a value",
               len);
    else
      snprintf(err, errlen, "malformed JSON: %s",
               json_tokener_error_desc(jerr));
    json_object_put(root);
    *rc = NL_PARSE_BAD_JSON;
    return NULL;
  }
  for (; used < len; used++) {
    if (!isspace((unsigned char)json[used])) {
      snprintf(err, errlen, "malformed JSON: trailing data");
      json_object_put(root);
      *rc = NL_PARSE_BAD_JSON;
      return NULL;
    }
  }
  if (!json_object_is_type(root, json_type_object)) {
    snprintf(err, errlen, "reply is not a JSON object");
    json_object_put(root);
    *rc = NL_PARSE_BAD_JSON;
    return NULL;
  }
  json_object *e = member(root, "error", json_type_object);
  if (e != NULL) {
    const char *d = get_str(e, "description");
    snprintf(err, errlen, "API error %" PRId64 " (%" PRId64 "): %.200s",
             get_i64(e, "code", 0), get_i64(e, "err_code", 0),
             d ? d : "no description");
    json_object_put(root);
    *rc = NL_PARSE_API_ERROR;
    return NULL;
  }
  *rc = NL_PARSE_OK;
  return root;
}

/* Fills the paging fields and returns the items array named key, or NULL
 * (with err written) when the reply lacks one. A JSON null array is an empty
 * page. */
static json_object *page_items(json_object *root, const char *key,
                               nl_page_info *page, bool *empty, char *err,
                               size_t errlen) {
  memset(page, 0, sizeof(*page));
  page->total = get_u64(root, "total", 0);
  page->offset = get_u64(root, "offset", 0);
  page->limit = get_u64(root, "limit", 0);
  *empty = false;
  json_object *v = NULL;
  if (!json_object_object_get_ex(root, key, &v)) {
    snprintf(err, errlen, "reply has no \"%s\" member", key);
    return NULL;
  }
  if (v == NULL) {
    *empty = true;
    return NULL;
  }
  if (!json_object_is_type(v, json_type_array)) {
    snprintf(err, errlen, "\"%s\" is not an array", key);
    return NULL;
  }
  page->n_items = json_object_array_length(v);
  return v;
}

/* Maps an enumeration string to its index in names, or def. */
static int enum_value(json_object *obj, const char *key,
                      const char *const *names, int n, int def) {
  const char *s = get_str(obj, key);
  for (int i = 0; s != NULL && i < n; i++)
    if (strcmp(s, names[i]) == 0)
      return i;
  return def;
}

/* Copies the string entries of the array member key of cfg (at most
 * NL_SUBJECTS_MAX, each at most NL_NAME_MAX bytes; other entries skipped)
 * into s->subjects. Returns 0, or -1 when memory runs out. */
static int read_subjects(json_object *cfg, nl_stream_snap *s) {
  json_object *arr = member(cfg, "subjects", json_type_array);
  size_t n = arr ? json_object_array_length(arr) : 0;
  if (n > NL_SUBJECTS_MAX)
    n = NL_SUBJECTS_MAX;
  if (n == 0)
    return 0;
  s->subjects = calloc(n, sizeof(*s->subjects));
  if (s->subjects == NULL)
    return -1;
  for (size_t i = 0; i < n; i++) {
    json_object *v = json_object_array_get_idx(arr, i);
    if (!json_object_is_type(v, json_type_string) ||
        json_object_get_string_len(v) > NL_NAME_MAX)
      continue;
    char *copy = strdup(json_object_get_string(v));
    if (copy == NULL)
      return -1;
    s->subjects[s->n_subjects++] = copy;
  }
  return 0;
}

/* The string member key of obj, or "" when absent or not a string. */
static const char *str_or_empty(json_object *obj, const char *key) {
  const char *v = get_str(obj, key);
  return v != NULL ? v : "";
}

/* The API prefix of an upstream's "external" member, "" when it has none. */
static const char *external_api(json_object *src) {
  return str_or_empty(member(src, "external", json_type_object), "api");
}

/* The identity of one configured upstream (config "mirror" or an entry of
 * config "sources"): its name, API prefix, filter, transforms and start. */
static uint64_t link_key(json_object *src) {
  static const char *const keys[] = {"name", "filter_subject",
                                     "opt_start_time"};
  uint64_t h = NL_HASH_BASIS;
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    const char *v = str_or_empty(src, keys[i]);
    h = nl_hash_bytes(h, v, strlen(v) + 1);
  }
  const char *api = external_api(src);
  h = nl_hash_bytes(h, api, strlen(api) + 1);
  uint64_t start = get_u64(src, "opt_start_seq", 0);
  h = nl_hash_bytes(h, &start, sizeof(start));
  json_object *trs = member(src, "subject_transforms", json_type_array);
  for (size_t i = 0; trs != NULL && i < json_object_array_length(trs); i++) {
    json_object *tr = json_object_array_get_idx(trs, i);
    const char *from = str_or_empty(tr, "src");
    const char *to = str_or_empty(tr, "dest");
    h = nl_hash_bytes(h, from, strlen(from) + 1);
    h = nl_hash_bytes(h, to, strlen(to) + 1);
  }
  return h;
}

/* Copies the printable ASCII of text (at most len - 1 bytes) into buf. */
static void printable_copy(char *buf, size_t len, const char *text) {
  size_t n = 0;
  for (; text != NULL && *text != '\0' && n + 1 < len; text++)
    if (*text >= 0x20 && *text < 0x7f)
      buf[n++] = *text;
  buf[n] = '\0';
}

/* Fills what the server reports of upstream l from info, the item's
 * "mirror" object or a "sources" entry. */
static void read_link_info(json_object *info, nl_source_link *l) {
  l->have_info = true;
  l->lag = get_u64(info, "lag", 0);
  l->active_ns = get_i64(info, "active", -1);
  if (l->active_ns < 0)
    l->active_ns = -1;
  json_object *e = member(info, "error", json_type_object);
  if (e != NULL) {
    l->error_code = get_i64(e, "err_code", 0);
    if (l->error_code == 0)
      l->error_code = get_i64(e, "code", 0);
    if (l->error_code <= 0)
      l->error_code = 1;
    printable_copy(l->error, sizeof(l->error), get_str(e, "description"));
  }
}

/* True when info, an upstream as the server reports it, is the configured
 * upstream src: the same name and API prefix, and the same filter when the
 * report names one (nats-server 2.10 and later). */
static bool link_info_matches(json_object *info, json_object *src) {
  const char *name = get_str(info, "name");
  if (name == NULL || strcmp(name, str_or_empty(src, "name")) != 0 ||
      strcmp(external_api(info), external_api(src)) != 0)
    return false;
  const char *filter = get_str(info, "filter_subject");
  return filter == NULL ||
         strcmp(filter, str_or_empty(src, "filter_subject")) == 0;
}

/* Appends the configured upstream src to s, with the first entry of infos
 * (an array of reports, one report object, or NULL) that matches it and is
 * not used yet (used has an entry per report). Returns 0 (an entry without
 * a usable name is skipped), or -1 when memory runs out. */
static int add_link(json_object *src, json_object *infos, bool *used,
                    nl_stream_snap *s) {
  const char *name = get_str(src, "name");
  if (name == NULL || name[0] == '\0' || s->n_links >= NL_LINKS_MAX)
    return 0;
  nl_source_link *l = &s->links[s->n_links];
  memset(l, 0, sizeof(*l));
  if ((l->name = strdup(name)) == NULL)
    return -1;
  s->n_links++;
  l->external = member(src, "external", json_type_object) != NULL;
  json_object *trs = member(src, "subject_transforms", json_type_array);
  l->filtered = str_or_empty(src, "filter_subject")[0] != '\0' ||
                (trs != NULL && json_object_array_length(trs) > 0);
  l->start_set = get_u64(src, "opt_start_seq", 0) > 0 ||
                 str_or_empty(src, "opt_start_time")[0] != '\0';
  l->key = link_key(src);
  l->active_ns = -1;
  bool one = json_object_is_type(infos, json_type_object);
  size_t n = one ? 1
             : json_object_is_type(infos, json_type_array)
                 ? json_object_array_length(infos)
                 : 0;
  for (size_t i = 0; i < n && i < NL_LINKS_MAX; i++) {
    json_object *info = one ? infos : json_object_array_get_idx(infos, i);
    if (!used[i] && link_info_matches(info, src)) {
      used[i] = true;
      read_link_info(info, l);
      break;
    }
  }
  return 0;
}

/* Reads where stream s copies messages from: config "mirror" or config
 * "sources", matched with the item's "mirror" or "sources" reports.
 * Returns 0, or -1 when memory runs out. */
static int read_links(json_object *item, json_object *cfg, nl_stream_snap *s) {
  json_object *mirror = member(cfg, "mirror", json_type_object);
  json_object *sources = member(cfg, "sources", json_type_array);
  size_t n = mirror != NULL    ? 1
             : sources != NULL ? json_object_array_length(sources)
                               : 0;
  if (n == 0)
    return 0;
  if (n > NL_LINKS_MAX)
    n = NL_LINKS_MAX;
  s->links = calloc(n, sizeof(*s->links));
  if (s->links == NULL)
    return -1;
  bool used[NL_LINKS_MAX] = {false};
  s->is_mirror = mirror != NULL;
  if (s->is_mirror)
    return add_link(mirror, member(item, "mirror", json_type_object), used, s);
  json_object *infos = member(item, "sources", json_type_array);
  for (size_t i = 0; i < n; i++)
    if (add_link(json_object_array_get_idx(sources, i), infos, used, s) != 0)
      return -1;
  return 0;
}

/* Calls keep(key, value, ud) for each "nats_lens." (a declaration) or
 * "io.nats.monitor." (a natscli threshold) entry of the config.metadata
 * object of cfg (nats-server 2.10 and later) whose value is a string. The
 * keeper drops entries past NL_META_MAX or longer than NL_META_LEN_MAX. */
static void read_metadata(json_object *cfg,
                          int (*keep)(void *ud, const char *key,
                                      const char *value),
                          void *ud) {
  json_object *meta = member(cfg, "metadata", json_type_object);
  if (meta == NULL)
    return;
  json_object_object_foreach(meta, key, val) {
    if ((strncmp(key, NL_EXPECT_PREFIX, strlen(NL_EXPECT_PREFIX)) != 0 &&
         strncmp(key, NL_MONITOR_PREFIX, strlen(NL_MONITOR_PREFIX)) != 0) ||
        !json_object_is_type(val, json_type_string))
      continue;
    /* A failure (full, too long, no memory) drops just this entry. */
    (void)keep(ud, key, json_object_get_string(val));
  }
}

static int keep_stream_meta(void *ud, const char *key, const char *value) {
  return nl_stream_snap_set_meta(ud, key, value);
}

static int keep_consumer_meta(void *ud, const char *key, const char *value) {
  return nl_consumer_snap_set_meta(ud, key, value);
}

/* Reads the item's "cluster" object into g. What nats-server sends there
 * (its ClusterInfo and PeerInfo; the same fields on 2.9.10, 2.10.16,
 * 2.11.10 and 2.12.0, read in jetstream_cluster.go clusterInfo() and seen
 * on a 3-node cluster of each): "name", "leader" (absent while none is
 * elected), and "replicas", every peer of the Raft group but the
 * answering leader, each with "name", "current" (its log caught up with
 * the leader's applied index and heard from within the lost-quorum
 * interval), "active" (nanoseconds since the leader last heard from it),
 * "lag" (operations behind the commit; omitted when 0) and "offline"
 * (omitted when false; a server killed is not marked offline for a while,
 * so a lost replica first shows as not current with "active" growing). A
 * leaderless group lists all its peers, the answering one included; a
 * group with every peer offline is listed by the meta leader with every
 * peer offline and not current. Entries that are not objects with a
 * string name are dropped (counted), as are those past NL_REPLICAS_MAX. */
static void read_replicas(json_object *item, nl_replica_set *g) {
  json_object *cluster = member(item, "cluster", json_type_object);
  const char *name = get_str(cluster, "name");
  memset(g, 0, sizeof(*g));
  if (name == NULL || name[0] == '\0')
    return;
  g->clustered = true;
  const char *leader = get_str(cluster, "leader");
  g->no_leader = leader == NULL || leader[0] == '\0';
  json_object *peers = member(cluster, "replicas", json_type_array);
  size_t n = peers ? json_object_array_length(peers) : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *p = json_object_array_get_idx(peers, i);
    const char *peer = get_str(p, "name");
    if (peer == NULL || g->n == NL_REPLICAS_MAX) {
      g->dropped++;
      continue;
    }
    nl_replica *r = &g->peers[g->n++];
    size_t k = 0;
    for (; peer[k] != '\0' && k + 1 < sizeof(r->name); k++)
      r->name[k] = isprint((unsigned char)peer[k]) ? peer[k] : '?';
    r->name[k] = '\0';
    r->current = get_bool(p, "current");
    r->offline = get_bool(p, "offline");
    r->active_ns = get_i64(p, "active", -1);
    if (r->active_ns < -1)
      r->active_ns = -1;
    r->lag = get_u64(p, "lag", 0);
  }
}

/* Reads one stream item into s. Returns 0, or -1 when it lacks a usable
 * name. */
static int read_stream(json_object *item, nl_stream_snap *s) {
  static const char *const retention[] = {"limits", "interest", "workqueue"};
  json_object *cfg = member(item, "config", json_type_object);
  json_object *st = member(item, "state", json_type_object);
  const char *name = get_str(cfg, "name");
  if (name == NULL || name[0] == '\0' || st == NULL)
    return -1;
  s->name = strdup(name);
  if (s->name == NULL)
    return -1;
  s->retention = (nl_retention)enum_value(cfg, "retention", retention, 3, 0);
  const char *discard = get_str(cfg, "discard");
  s->discard_new = discard != NULL && strcmp(discard, "new") == 0;
  s->max_msgs = get_i64(cfg, "max_msgs", -1);
  s->max_bytes = get_i64(cfg, "max_bytes", -1);
  s->max_age_ns = get_i64(cfg, "max_age", 0);
  s->max_msgs_per_subject = get_i64(cfg, "max_msgs_per_subject", -1);
  s->allow_msg_ttl = get_bool(cfg, "allow_msg_ttl");
  s->allow_msg_schedules = get_bool(cfg, "allow_msg_schedules");
  s->replicas = (int)get_i64(cfg, "num_replicas", 1);
  s->msgs = get_u64(st, "messages", 0);
  s->bytes = get_u64(st, "bytes", 0);
  s->first_seq = get_u64(st, "first_seq", 0);
  s->last_seq = get_u64(st, "last_seq", 0);
  s->num_deleted = get_u64(st, "num_deleted", 0);
  s->consumer_count = get_u64(st, "consumer_count", 0);
  s->discard_new_per_subject = get_bool(cfg, "discard_new_per_subject");
  s->num_subjects = get_u64(st, "num_subjects", 0);
  s->last_ts_ns = get_time(st, "last_ts");
  read_metadata(cfg, keep_stream_meta, s);
  const char *storage = get_str(cfg, "storage");
  s->memory_storage = storage != NULL && strcmp(storage, "memory") == 0;
  s->max_msg_size = get_i64(cfg, "max_msg_size", -1);
  s->consumer_inactive_limit_ns =
      get_i64(member(cfg, "consumer_limits", json_type_object),
              "inactive_threshold", 0);
  if (s->consumer_inactive_limit_ns < 0)
    s->consumer_inactive_limit_ns = 0;
  /* Only clustered servers name a cluster in the item. */
  const char *cluster =
      get_str(member(item, "cluster", json_type_object), "name");
  read_replicas(item, &s->group);
  s->no_leader = s->group.no_leader;
  if (cluster != NULL && cluster[0] != '\0' &&
      (s->cluster = strdup(cluster)) == NULL)
    return -1;
  s->created_ns = get_time(item, "created");
  s->first_ts_ns = get_time(st, "first_ts");
  uint64_t first = get_u64(cfg, "first_seq", 0);
  s->start_seq = first > 0 ? first - 1 : 0;
  if (read_links(item, cfg, s) != 0)
    return -1;
  return read_subjects(cfg, s);
}

int nl_parse_stream_list(const char *json, size_t len, nl_snapshot_set *set,
                         nl_page_info *page, char *err, size_t errlen) {
  int rc;
  bool empty;
  memset(page, 0, sizeof(*page));
  json_object *root = parse_reply(json, len, &rc, err, errlen);
  if (root == NULL)
    return rc;
  json_object *items = page_items(root, "streams", page, &empty, err, errlen);
  json_object *missing = member(root, "missing", json_type_array);
  if (missing != NULL) {
    /* Clustered: streams whose leader did not answer. Names only; entries
     * that are not strings or are too long are counted as skipped. */
    page->n_missing = json_object_array_length(missing);
    for (size_t i = 0; i < page->n_missing; i++) {
      json_object *m = json_object_array_get_idx(missing, i);
      const char *name = json_object_is_type(m, json_type_string)
                             ? json_object_get_string(m)
                             : NULL;
      if (name == NULL || name[0] == '\0' || strlen(name) > NL_NAME_MAX ||
          nl_snapshot_set_add_missing(set, name) != 0)
        page->n_skipped++;
    }
  }
  if (items == NULL) {
    json_object_put(root);
    return empty ? NL_PARSE_OK : NL_PARSE_BAD_JSON;
  }
  for (size_t i = 0; i < page->n_items; i++) {
    nl_stream_snap *s = nl_snapshot_set_add_stream(set);
    if (s == NULL) {
      snprintf(err, errlen, "out of memory");
      json_object_put(root);
      return NL_PARSE_BAD_JSON;
    }
    if (read_stream(json_object_array_get_idx(items, i), s) != 0) {
      nl_stream_snap_clear(s);
      set->n_streams--;
      page->n_skipped++;
    }
  }
  json_object_put(root);
  return NL_PARSE_OK;
}

/* Keeps every filter subject of consumer c: filter (filter_subject), or
 * the strings of filters (filter_subjects), at most NL_FILTERS_MAX.
 * Returns -1 when memory runs out. */
static int read_filters(const char *filter, json_object *filters,
                        nl_consumer_snap *c) {
  size_t n = filters ? json_object_array_length(filters) : 0;
  size_t want = filter != NULL && filter[0] != '\0' && n == 0 ? 1 : n;
  if (want == 0)
    return 0;
  if (want > NL_FILTERS_MAX) {
    want = NL_FILTERS_MAX;
    c->filters_cut = true;
  }
  if ((c->filters = calloc(want, sizeof(*c->filters))) == NULL)
    return -1;
  for (size_t i = 0; i < want; i++) {
    const char *f =
        n == 0 ? filter : str_value(json_object_array_get_idx(filters, i));
    if (f == NULL || f[0] == '\0')
      continue;
    if ((c->filters[c->n_filters] = strdup(f)) == NULL)
      return -1;
    c->n_filters++;
  }
  return 0;
}

/* Reads one consumer item into c. Returns 0, or -1 when it lacks a usable
 * name or state (an offline placeholder, or a malformed entry). */
static int read_consumer(json_object *item, const char *stream,
                         nl_consumer_snap *c) {
  static const char *const ack[] = {"explicit", "all", "none"};
  const char *name = get_str(item, "name");
  json_object *cfg = member(item, "config", json_type_object);
  json_object *delivered = member(item, "delivered", json_type_object);
  json_object *floor = member(item, "ack_floor", json_type_object);
  if (name == NULL || name[0] == '\0' || cfg == NULL || delivered == NULL ||
      floor == NULL)
    return -1;
  c->stream = strdup(stream);
  c->name = strdup(name);
  if (c->stream == NULL || c->name == NULL)
    return -1;
  c->created_ns = get_time(item, "created");
  c->ack_policy = (nl_ack_policy)enum_value(cfg, "ack_policy", ack, 3, 0);
  c->ack_wait_ns = get_i64(cfg, "ack_wait", 0);
  json_object *backoff = member(cfg, "backoff", json_type_array);
  if (backoff != NULL && json_object_array_length(backoff) > 0) {
    json_object *b0 = json_object_array_get_idx(backoff, 0);
    if (json_object_is_type(b0, json_type_int))
      c->backoff_first_ns = json_object_get_int64(b0);
    c->backoff_steps = json_object_array_length(backoff);
  }
  c->idle_heartbeat_ns = get_i64(cfg, "idle_heartbeat", 0);
  if (c->idle_heartbeat_ns < 0)
    c->idle_heartbeat_ns = 0;
  c->flow_control = get_bool(cfg, "flow_control");
  const char *priority = get_str(cfg, "priority_policy");
  c->pinned_client = priority != NULL && strcmp(priority, "pinned_client") == 0;
  c->has_priority_policy =
      priority != NULL && strcmp(priority, "none") != 0 && priority[0] != '\0';
  read_metadata(cfg, keep_consumer_meta, c);
  c->max_deliver = get_i64(cfg, "max_deliver", -1);
  c->max_ack_pending = get_i64(cfg, "max_ack_pending", -1);
  const char *filter = get_str(cfg, "filter_subject");
  json_object *filters = member(cfg, "filter_subjects", json_type_array);
  c->filtered = (filter != NULL && filter[0] != '\0') ||
                (filters != NULL && json_object_array_length(filters) > 0);
  /* The one filter subject, for a fix that creates the consumer again. */
  size_t n_filters = filters ? json_object_array_length(filters) : 0;
  if ((filter == NULL || filter[0] == '\0') && n_filters == 1)
    filter = str_value(json_object_array_get_idx(filters, 0));
  if (c->filtered && n_filters <= 1 && filter != NULL && filter[0] != '\0' &&
      (c->filter = strdup(filter)) == NULL)
    return -1;
  if (read_filters(filter, filters, c) != 0)
    return -1;
  static const char *const policies[] = {"",
                                         "all",
                                         "last",
                                         "new",
                                         "by_start_sequence",
                                         "by_start_time",
                                         "last_per_subject"};
  c->deliver_policy = (nl_deliver_policy)enum_value(
      cfg, "deliver_policy", policies, sizeof(policies) / sizeof(*policies), 0);
  c->deliver_all = c->deliver_policy == NL_DELIVER_ALL;
  c->opt_start_seq = get_u64(cfg, "opt_start_seq", 0);
  const char *deliver = get_str(cfg, "deliver_subject");
  c->push = deliver != NULL && deliver[0] != '\0';
  const char *group = get_str(cfg, "deliver_group");
  c->has_deliver_group = group != NULL && group[0] != '\0';
  const char *durable = get_str(cfg, "durable_name");
  c->durable = durable != NULL && durable[0] != '\0';
  c->push_bound = get_bool(item, "push_bound");
  c->delivered_consumer_seq = get_u64(delivered, "consumer_seq", 0);
  c->delivered_stream_seq = get_u64(delivered, "stream_seq", 0);
  c->delivered_last_ns = get_time(delivered, "last_active");
  c->ack_floor_consumer_seq = get_u64(floor, "consumer_seq", 0);
  c->ack_floor_stream_seq = get_u64(floor, "stream_seq", 0);
  c->ack_last_ns = get_time(floor, "last_active");
  c->num_ack_pending = get_u64(item, "num_ack_pending", 0);
  c->num_redelivered = get_u64(item, "num_redelivered", 0);
  c->num_waiting = get_u64(item, "num_waiting", 0);
  c->num_pending = get_u64(item, "num_pending", 0);
  c->num_replicas = (int)get_i64(cfg, "num_replicas", 0);
  if (c->num_replicas < 0 || c->num_replicas > 1000)
    c->num_replicas = 0;
  c->mem_storage = get_bool(cfg, "mem_storage");
  c->rate_limit_bps = get_u64(cfg, "rate_limit_bps", 0);
  c->headers_only = get_bool(cfg, "headers_only");
  c->paused = get_bool(item, "paused");
  c->pause_remaining_ns = c->paused ? get_i64(item, "pause_remaining", 0) : 0;
  c->inactive_threshold_ns = get_i64(cfg, "inactive_threshold", 0);
  if (c->inactive_threshold_ns < 0)
    c->inactive_threshold_ns = 0;
  if (c->inactive_threshold_ns > NL_DURATION_MAX_NS)
    c->inactive_threshold_ns = NL_DURATION_MAX_NS;
  c->server_ts_ns = get_time(item, "ts");
  read_replicas(item, &c->group);
  return 0;
}

/* Parses a reply about the consumers of the stream at stream_index of set.
 * Returns the root object (the caller puts it), or NULL with *rc and err
 * set. */
static json_object *parse_for_stream(const char *json, size_t len,
                                     size_t stream_index,
                                     const nl_snapshot_set *set, int *rc,
                                     char *err, size_t errlen) {
  if (stream_index >= set->n_streams) {
    snprintf(err, errlen, "no such stream index");
    *rc = NL_PARSE_BAD_JSON;
    return NULL;
  }
  return parse_reply(json, len, rc, err, errlen);
}

int nl_parse_consumer_list(const char *json, size_t len, size_t stream_index,
                           nl_snapshot_set *set, nl_page_info *page, char *err,
                           size_t errlen) {
  int rc;
  bool empty;
  memset(page, 0, sizeof(*page));
  json_object *root =
      parse_for_stream(json, len, stream_index, set, &rc, err, errlen);
  if (root == NULL)
    return rc;
  json_object *missing = member(root, "missing", json_type_array);
  json_object *items = page_items(root, "consumers", page, &empty, err, errlen);
  if (missing != NULL) {
    page->n_missing = json_object_array_length(missing);
    set->unobservable += page->n_missing;
  }
  if (items == NULL) {
    json_object_put(root);
    return empty ? NL_PARSE_OK : NL_PARSE_BAD_JSON;
  }
  for (size_t i = 0; i < page->n_items; i++) {
    nl_consumer_snap *c = nl_snapshot_set_add_consumer(set);
    if (c == NULL) {
      snprintf(err, errlen, "out of memory");
      json_object_put(root);
      return NL_PARSE_BAD_JSON;
    }
    /* The stream name is read again on every call because appending
     * consumers never moves the stream array. */
    if (read_consumer(json_object_array_get_idx(items, i),
                      set->streams[stream_index].name, c) != 0) {
      nl_consumer_snap_clear(c);
      set->n_consumers--;
      page->n_skipped++;
      set->unobservable++;
    } else {
      c->stream_index = stream_index;
    }
  }
  json_object_put(root);
  return NL_PARSE_OK;
}

int nl_parse_stream_info(const char *json, size_t len, nl_snapshot_set *set,
                         char *err, size_t errlen) {
  int rc;
  json_object *root = parse_reply(json, len, &rc, err, errlen);
  if (root == NULL)
    return rc;
  nl_stream_snap *s = nl_snapshot_set_add_stream(set);
  rc = NL_PARSE_OK;
  if (s == NULL) {
    snprintf(err, errlen, "out of memory");
    rc = NL_PARSE_BAD_JSON;
  } else if (read_stream(root, s) != 0) {
    nl_stream_snap_clear(s);
    set->n_streams--;
    snprintf(err, errlen, "not a readable stream");
    rc = NL_PARSE_BAD_JSON;
  }
  json_object_put(root);
  return rc;
}

int nl_parse_subject_counts(const char *json, size_t len, nl_stream_snap *s,
                            char *err, size_t errlen) {
  int rc;
  json_object *root = parse_reply(json, len, &rc, err, errlen);
  if (root == NULL)
    return rc;
  json_object *cfg = member(root, "config", json_type_object);
  json_object *state = member(root, "state", json_type_object);
  const char *name = cfg != NULL ? get_str(cfg, "name") : NULL;
  json_object *subjects =
      state != NULL ? member(state, "subjects", json_type_object) : NULL;
  rc = NL_PARSE_BAD_JSON;
  if (name == NULL || strcmp(name, s->name) != 0) {
    snprintf(err, errlen, "subject counts of another stream");
  } else if (subjects != NULL &&
             json_object_object_length(subjects) > NL_SUBJECT_COUNTS_MAX) {
    snprintf(err, errlen, "more than %d subjects", NL_SUBJECT_COUNTS_MAX);
  } else {
    size_t n =
        subjects != NULL ? (size_t)json_object_object_length(subjects) : 0;
    nl_subject_count *counts = n > 0 ? calloc(n, sizeof(*counts)) : NULL;
    size_t kept = 0;
    bool ok = n == 0 || counts != NULL;
    if (ok && subjects != NULL) {
      json_object_object_foreach(subjects, key, val) {
        int64_t v = json_object_get_int64(val);
        if (!json_object_is_type(val, json_type_int) || v < 0 || kept == n ||
            (counts[kept].subject = strdup(key)) == NULL) {
          ok = false;
          break;
        }
        counts[kept++].count = (uint64_t)v;
      }
    }
    if (ok) {
      for (size_t i = 0; i < s->n_subject_counts; i++)
        free(s->subject_counts[i].subject);
      free(s->subject_counts);
      s->subject_counts = counts;
      s->n_subject_counts = kept;
      s->subject_counts_read = true;
      rc = NL_PARSE_OK;
    } else {
      for (size_t i = 0; i < kept; i++)
        free(counts[i].subject);
      free(counts);
      snprintf(err, errlen, "unreadable subject counts");
    }
  }
  json_object_put(root);
  return rc;
}

int nl_parse_consumer_info(const char *json, size_t len, size_t stream_index,
                           nl_snapshot_set *set, char *err, size_t errlen) {
  int rc;
  json_object *root =
      parse_for_stream(json, len, stream_index, set, &rc, err, errlen);
  if (root == NULL)
    return rc;
  const char *stream = set->streams[stream_index].name;
  const char *named = get_str(root, "stream_name");
  nl_consumer_snap *c = NULL;
  rc = NL_PARSE_BAD_JSON;
  if (named != NULL && strcmp(named, stream) != 0)
    snprintf(err, errlen, "consumer of another stream");
  else if ((c = nl_snapshot_set_add_consumer(set)) == NULL)
    snprintf(err, errlen, "out of memory");
  else if (read_consumer(root, stream, c) != 0) {
    nl_consumer_snap_clear(c);
    set->n_consumers--;
    snprintf(err, errlen, "not a readable consumer");
  } else {
    c->stream_index = stream_index;
    rc = NL_PARSE_OK;
  }
  json_object_put(root);
  return rc;
}

json_object *nl_parse_member(json_object *obj, const char *key,
                             json_type type) {
  return member(obj, key, type);
}

const char *nl_parse_string(json_object *obj, const char *key) {
  return get_str(obj, key);
}

int64_t nl_parse_int(json_object *obj, const char *key, int64_t def) {
  return get_i64(obj, key, def);
}

int nl_parse_stream_item(struct json_object *item, nl_snapshot_set *set) {
  nl_stream_snap *s = nl_snapshot_set_add_stream(set);
  if (s == NULL)
    return -1;
  if (read_stream(item, s) != 0) {
    nl_stream_snap_clear(s);
    set->n_streams--;
    return -1;
  }
  return 0;
}

int nl_parse_consumer_item(struct json_object *item, size_t stream_index,
                           nl_snapshot_set *set) {
  if (stream_index >= set->n_streams)
    return -1;
  nl_consumer_snap *c = nl_snapshot_set_add_consumer(set);
  if (c == NULL)
    return -1;
  if (read_consumer(item, set->streams[stream_index].name, c) != 0) {
    nl_consumer_snap_clear(c);
    set->n_consumers--;
    return -1;
  }
  c->stream_index = stream_index;
  return 0;
}

struct json_object *nl_parse_object(const char *json, size_t len, int *rc,
                                    char *err, size_t errlen) {
  return parse_reply(json, len, rc, err, errlen);
}
