/* nl_jsz.c: every account's JetStream view from the system account's JSZ
 * replies.
 *
 * A reply of 10,000 consumers is about 4.6 MB of text, and its whole json-c
 * tree about fifteen times that. So a reply is read one account at a time:
 * the account objects of "data.account_details" are found in the text
 * (find_accounts), the rest is parsed on its own, and each account is
 * parsed, read into snapshots and freed before the next. What is kept
 * until the merge is snapshots and names only. */
#include "nl_jsz.h"

#include "nl_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One stream or consumer entry of one reply, for the merge. */
typedef struct {
  const char *account_id; /* Owned by the reply's accounts. */
  size_t account;         /* Index into the reply's accounts. */
  const char *stream;
  const char *consumer; /* NULL for the stream's own entry. */
  size_t reply;
  /* Index of its snapshot in the reply's scratch set (a stream, or a
   * consumer when read), or SIZE_MAX when it was not read. */
  size_t index;
  bool from_leader; /* The reply is its leader's. */
  /* Scope "server", a consumer not from its leader: another server leads
   * it (AWAY_LED), or none does (AWAY_LEADERLESS). */
  uint8_t away;
} entry;

enum { AWAY_NOT = 0, AWAY_LED, AWAY_LEADERLESS };

/* An account named in a reply (both strings owned). */
typedef struct {
  char *id;
  char *name;
} account_name;

/* What one reply gave: its snapshots (streams, and the consumers read from
 * their leader) and every name an entry points to. */
typedef struct {
  char *server_id;
  char *server_name;
  nl_snapshot_set scratch;
  account_name *accounts;
  size_t n_accounts;
  size_t cap_accounts;
  /* Names of the streams and consumers not read (their leader is
   * elsewhere, or their item was unreadable). */
  char **names;
  size_t n_names;
  size_t cap_names;
} kept_reply;

struct nl_jsz {
  const nl_stream_select *accounts;
  const nl_stream_select *streams;
  kept_reply *replies;
  size_t n_replies;
  size_t cap_replies;
  entry *entries;
  size_t n_entries;
  size_t cap_entries;
  size_t expected;
  size_t rejected;
  size_t skipped;    /* Account entries the Account globs left out. */
  bool server_scope; /* nl_jsz_scope_server. */
};

nl_jsz *nl_jsz_create(const nl_stream_select *accounts,
                      const nl_stream_select *streams) {
  nl_jsz *z = calloc(1, sizeof(*z));
  if (z == NULL)
    return NULL;
  z->accounts = accounts;
  z->streams = streams;
  z->expected = 1;
  return z;
}

void nl_jsz_scope_server(nl_jsz *z) { z->server_scope = true; }

static void reply_clear(kept_reply *r) {
  free(r->server_id);
  free(r->server_name);
  nl_snapshot_set_clear(&r->scratch);
  for (size_t i = 0; i < r->n_accounts; i++) {
    free(r->accounts[i].id);
    free(r->accounts[i].name);
  }
  free(r->accounts);
  for (size_t i = 0; i < r->n_names; i++)
    free(r->names[i]);
  free(r->names);
  memset(r, 0, sizeof(*r));
}

/* Forgets every reply and entry (the collector can be used again). */
static void drop_replies(nl_jsz *z) {
  for (size_t i = 0; i < z->n_replies; i++)
    reply_clear(&z->replies[i]);
  z->n_replies = 0;
  z->n_entries = 0;
  z->expected = 1;
  z->rejected = 0;
  z->skipped = 0;
}

void nl_jsz_free(nl_jsz *z) {
  if (z == NULL)
    return;
  drop_replies(z);
  free(z->replies);
  free(z->entries);
  free(z);
}

/* Grows the array *items (of *cap elements of size bytes) to hold n + 1.
 * Returns 0, or -1 when memory runs out. */
static int reserve(void **items, size_t *cap, size_t n, size_t size) {
  if (n < *cap)
    return 0;
  size_t grown_cap = *cap ? 2 * *cap : 16;
  void *grown = realloc(*items, grown_cap * size);
  if (grown == NULL)
    return -1;
  *items = grown;
  *cap = grown_cap;
  return 0;
}

static int entry_add(nl_jsz *z, entry e) {
  if (reserve((void **)&z->entries, &z->cap_entries, z->n_entries,
              sizeof(*z->entries)) != 0)
    return -1;
  z->entries[z->n_entries++] = e;
  return 0;
}

/* Keeps a copy of name in reply r. Returns it, or NULL when memory runs
 * out. */
static const char *keep_name(kept_reply *r, const char *name) {
  char *copy = strdup(name);
  if (copy == NULL || reserve((void **)&r->names, &r->cap_names, r->n_names,
                              sizeof(*r->names)) != 0) {
    free(copy);
    return NULL;
  }
  r->names[r->n_names++] = copy;
  return copy;
}

/* True when item was read from its leader's reply: its "cluster.leader"
 * names the answering server. An item without a cluster object comes from
 * a server that is its only home when the replies name no cluster. */
static bool from_leader(json_object *item, const char *server, bool alone) {
  json_object *cluster = nl_parse_member(item, "cluster", json_type_object);
  if (cluster == NULL)
    return alone;
  const char *leader = nl_parse_string(cluster, "leader");
  return leader != NULL && strcmp(leader, server) == 0;
}

/* Whether consumer item cd, not read from its leader's reply, has a leader
 * at all (Scope "server"). */
static uint8_t away_of(json_object *cd) {
  json_object *cluster = nl_parse_member(cd, "cluster", json_type_object);
  const char *leader = nl_parse_string(cluster, "leader");
  return leader != NULL && leader[0] != '\0' ? AWAY_LED : AWAY_LEADERLESS;
}

/* Reads the consumers of stream detail sd (its snapshot at index si of the
 * reply's scratch set) into entries: those the reply leads are read into
 * the scratch set, the others are kept by name. */
static int take_consumers(nl_jsz *z, size_t ri, size_t acc, json_object *sd,
                          size_t si, bool alone) {
  kept_reply *r = &z->replies[ri];
  json_object *consumers =
      nl_parse_member(sd, "consumer_detail", json_type_array);
  size_t nc = consumers ? json_object_array_length(consumers) : 0;
  for (size_t k = 0; k < nc; k++) {
    json_object *cd = json_object_array_get_idx(consumers, k);
    const char *name = nl_parse_string(cd, "name");
    if (name == NULL || name[0] == '\0')
      continue;
    entry e = {r->accounts[acc].id,
               acc,
               NULL,
               NULL,
               ri,
               SIZE_MAX,
               from_leader(cd, r->server_name, alone),
               AWAY_NOT};
    if (!e.from_leader && z->server_scope)
      e.away = away_of(cd);
    if (e.from_leader && nl_parse_consumer_item(cd, si, &r->scratch) == 0) {
      e.index = r->scratch.n_consumers - 1;
      e.consumer = r->scratch.consumers[e.index].name;
    } else {
      if ((e.consumer = keep_name(r, name)) == NULL)
        return -1;
      e.from_leader = false; /* Led here but unreadable: not observed. */
    }
    e.stream = r->scratch.streams[si].name;
    if (entry_add(z, e) != 0)
      return -1;
  }
  return 0;
}

/* Reads one account object of reply ri into the reply's scratch set and
 * the entries. */
static int take_account(nl_jsz *z, size_t ri, json_object *acc) {
  kept_reply *r = &z->replies[ri];
  const char *id = nl_parse_string(acc, "id");
  const char *name = nl_parse_string(acc, "name");
  if (id == NULL || id[0] == '\0')
    return 0;
  if (name == NULL || name[0] == '\0')
    name = id;
  if (!nl_stream_selected(z->accounts, name)) {
    z->skipped++;
    return 0;
  }
  if (reserve((void **)&r->accounts, &r->cap_accounts, r->n_accounts,
              sizeof(*r->accounts)) != 0)
    return -1;
  account_name *an = &r->accounts[r->n_accounts];
  an->id = strdup(id);
  an->name = strdup(name);
  if (an->id == NULL || an->name == NULL) {
    free(an->id);
    free(an->name);
    return -1;
  }
  size_t ai = r->n_accounts++;
  /* An account without streams still counts: its engine keeps going. */
  if (entry_add(
          z, (entry){an->id, ai, "", NULL, ri, SIZE_MAX, false, AWAY_NOT}) != 0)
    return -1;
  bool alone = z->expected == 1;
  json_object *streams = nl_parse_member(acc, "stream_detail", json_type_array);
  size_t ns = streams ? json_object_array_length(streams) : 0;
  for (size_t j = 0; j < ns; j++) {
    json_object *sd = json_object_array_get_idx(streams, j);
    const char *stream = nl_parse_string(sd, "name");
    if (stream == NULL || stream[0] == '\0' ||
        !nl_stream_selected(z->streams, stream))
      continue;
    /* Every copy is read (a consumer's snapshot needs its stream's), but
     * only the leader's is used. An unreadable one stands as a name. */
    entry e = {r->accounts[ai].id,
               ai,
               NULL,
               NULL,
               ri,
               SIZE_MAX,
               from_leader(sd, r->server_name, alone),
               AWAY_NOT};
    size_t si = SIZE_MAX;
    if (nl_parse_stream_item(sd, &r->scratch) == 0 &&
        strcmp(r->scratch.streams[r->scratch.n_streams - 1].name, stream) == 0)
      si = r->scratch.n_streams - 1;
    if (si == SIZE_MAX) {
      /* Missing or unreadable config: listed, never observed. */
      if ((e.stream = keep_name(r, stream)) == NULL)
        return -1;
      e.from_leader = false;
      if (entry_add(z, e) != 0)
        return -1;
      continue;
    }
    e.stream = r->scratch.streams[si].name;
    e.index = si;
    if (entry_add(z, e) != 0 || take_consumers(z, ri, ai, sd, si, alone) != 0)
      return -1;
  }
  return 0;
}

/* A span of text: one account object. */
typedef struct {
  size_t start;
  size_t end; /* One past its closing brace. */
} span;

/* Finds the array that is the value of a key "account_details" of an object
 * two levels deep in text (the reply's "data"), with the spans of its
 * elements that are objects. Returns 0 with *open and *close the indexes
 * of its '[' and ']' and *spans (malloc'ed, *n of them); 1 when the text
 * has no such array or is not balanced (it is then parsed whole, which
 * reports what is wrong); -1 when memory runs out. Strings and their
 * escapes are skipped, so no brace or key inside a string counts. */
static int find_accounts(const char *text, size_t len, size_t *open,
                         size_t *close, span **spans, size_t *n) {
  static const char key[] = "\"account_details\"";
  size_t depth = 0, cap = 0, last_string = SIZE_MAX, array = SIZE_MAX;
  *spans = NULL;
  *n = 0;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c == '"') {
      size_t s = i++;
      while (i < len && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      if (i >= len)
        break;
      last_string = s;
      continue;
    }
    if (c == '{' || c == '[') {
      /* The array: '[' right after `"account_details":` at depth 2. */
      if (c == '[' && depth == 2 && array == SIZE_MAX &&
          last_string != SIZE_MAX && i - last_string >= sizeof(key) - 1 &&
          memcmp(text + last_string, key, sizeof(key) - 1) == 0) {
        size_t k = last_string + sizeof(key) - 1;
        while (k < i && (text[k] == ' ' || text[k] == '\t' || text[k] == '\n' ||
                         text[k] == '\r' || text[k] == ':'))
          k++;
        if (k == i)
          array = i;
      }
      if (c == '{' && array != SIZE_MAX && depth == 3) {
        if (reserve((void **)spans, &cap, *n, sizeof(**spans)) != 0) {
          free(*spans);
          *spans = NULL;
          return -1;
        }
        (*spans)[(*n)++] = (span){i, 0};
      }
      depth++;
      last_string = SIZE_MAX;
      continue;
    }
    if (c == '}' || c == ']') {
      if (depth == 0)
        break;
      depth--;
      if (c == '}' && array != SIZE_MAX && depth == 3 && *n > 0)
        (*spans)[*n - 1].end = i + 1;
      if (c == ']' && array != SIZE_MAX && depth == 2) {
        *open = array;
        *close = i;
        return 0;
      }
      last_string = SIZE_MAX;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != ':')
      last_string = SIZE_MAX;
  }
  free(*spans);
  *spans = NULL;
  *n = 0;
  return 1;
}

/* The reply's text without the elements of its account_details array (the
 * array left empty), malloc'ed, or NULL when memory runs out. */
static char *without_accounts(const char *text, size_t len, size_t open,
                              size_t close, size_t *out_len) {
  size_t n = (open + 1) + (len - close);
  char *s = malloc(n + 1);
  if (s == NULL)
    return NULL;
  memcpy(s, text, open + 1);
  memcpy(s + open + 1, text + close, len - close);
  s[n] = '\0';
  *out_len = n;
  return s;
}

/* Reads the accounts of reply ri: those of the spans of text, each parsed
 * and freed in turn, and any left in the parsed rest (root). An account
 * span that is not readable JSON is counted as rejected. */
static int take_accounts(nl_jsz *z, size_t ri, const char *text,
                         const span *spans, size_t n, json_object *root) {
  char err[128];
  for (size_t i = 0; i < n; i++) {
    int rc = NL_PARSE_OK;
    if (spans[i].end <= spans[i].start)
      continue;
    json_object *acc =
        nl_parse_object(text + spans[i].start, spans[i].end - spans[i].start,
                        &rc, err, sizeof(err));
    if (acc == NULL) {
      z->rejected++;
      continue;
    }
    rc = take_account(z, ri, acc);
    json_object_put(acc);
    if (rc != 0)
      return -1;
  }
  json_object *data = nl_parse_member(root, "data", json_type_object);
  json_object *rest = nl_parse_member(data, "account_details", json_type_array);
  size_t nr = rest ? json_object_array_length(rest) : 0;
  for (size_t i = 0; i < nr; i++)
    if (take_account(z, ri, json_object_array_get_idx(rest, i)) != 0)
      return -1;
  return 0;
}

int nl_jsz_add_reply(nl_jsz *z, const char *json, size_t len, char *err,
                     size_t errlen) {
  size_t open = 0, close = 0, n_spans = 0, rest_len = len;
  span *spans = NULL;
  int found =
      json ? find_accounts(json, len, &open, &close, &spans, &n_spans) : 1;
  char *rest =
      found == 0 ? without_accounts(json, len, open, close, &rest_len) : NULL;
  int rc = NL_PARSE_OK;
  json_object *root = NULL;
  if (found < 0 || (found == 0 && rest == NULL))
    snprintf(err, errlen, "out of memory");
  else
    root = nl_parse_object(rest ? rest : json, rest_len, &rc, err, errlen);
  free(rest);
  if (root == NULL) {
    free(spans);
    z->rejected++;
    return rc != NL_PARSE_OK ? rc : NL_PARSE_BAD_JSON;
  }
  json_object *server = nl_parse_member(root, "server", json_type_object);
  json_object *data = nl_parse_member(root, "data", json_type_object);
  const char *id = nl_parse_string(server, "id");
  const char *name = nl_parse_string(server, "name");
  const char *why = NULL;
  if (id == NULL || name == NULL || data == NULL)
    why = "not a JSZ reply (no server or data)";
  else if (json_object_get_boolean(
               nl_parse_member(data, "disabled", json_type_boolean)))
    why = "JetStream is not enabled on this server";
  for (size_t i = 0; why == NULL && i < z->n_replies; i++)
    if (strcmp(z->replies[i].server_id, id) == 0 || z->server_scope) {
      /* A second reply of a server already heard: ignored. */
      json_object_put(root);
      free(spans);
      return NL_PARSE_OK;
    }
  if (why != NULL) {
    snprintf(err, errlen, "%s%s%s", why, name ? ": " : "", name ? name : "");
    json_object_put(root);
    free(spans);
    z->rejected++;
    return NL_PARSE_BAD_JSON;
  }
  int64_t size =
      nl_parse_int(nl_parse_member(data, "meta_cluster", json_type_object),
                   "cluster_size", 1);
  if (size > (int64_t)z->expected && size < 100000)
    z->expected = (size_t)size;
  int status = reserve((void **)&z->replies, &z->cap_replies, z->n_replies,
                       sizeof(*z->replies));
  size_t ri = z->n_replies;
  if (status == 0) {
    kept_reply *r = &z->replies[ri];
    memset(r, 0, sizeof(*r));
    r->server_id = strdup(id);
    r->server_name = strdup(name);
    z->n_replies++;
    status = r->server_id && r->server_name
                 ? take_accounts(z, ri, json, spans, n_spans, root)
                 : -1;
  }
  json_object_put(root);
  free(spans);
  if (status != 0) {
    snprintf(err, errlen, "out of memory");
    z->rejected++;
    return NL_PARSE_BAD_JSON;
  }
  return NL_PARSE_OK;
}

bool nl_jsz_complete(const nl_jsz *z) {
  return z->n_replies >= (z->server_scope ? 1 : z->expected);
}

/* Account, then stream, then the stream's own entries before its
 * consumers, then consumer; within a name, the leader's entry first. */
static int entry_order(const void *a, const void *b) {
  const entry *x = a, *y = b;
  int c = strcmp(x->account_id, y->account_id);
  if (c == 0)
    c = strcmp(x->stream, y->stream);
  if (c == 0 && (x->consumer == NULL) != (y->consumer == NULL))
    c = x->consumer == NULL ? -1 : 1;
  if (c == 0 && x->consumer != NULL)
    c = strcmp(x->consumer, y->consumer);
  if (c == 0)
    c = (int)y->from_leader - (int)x->from_leader;
  return c;
}

static nl_jsz_account *account_add(nl_jsz_result *out, size_t *cap,
                                   const account_name *an) {
  if (reserve((void **)&out->accounts, cap, out->n_accounts,
              sizeof(*out->accounts)) != 0)
    return NULL;
  nl_jsz_account *a = &out->accounts[out->n_accounts];
  memset(a, 0, sizeof(*a));
  a->name = strdup(an->name);
  a->id = strdup(an->id);
  if (a->name == NULL || a->id == NULL) {
    free(a->name);
    free(a->id);
    return NULL;
  }
  out->n_accounts++;
  return a;
}

/* Merges the entries of one stream (from first, n of them: the stream's
 * own entries, then its consumers') into set, moving the leaders'
 * snapshots out of the replies' scratch sets. */
static int merge_stream(nl_jsz *z, entry *first, size_t n,
                        nl_snapshot_set *set) {
  size_t i = 0;
  bool have = false;
  bool scoped = z->server_scope;
  for (; i < n && first[i].consumer == NULL; i++) {
    /* Scope "server": a readable copy that another server leads is taken
     * too, marked elsewhere. */
    if (have ||
        (!first[i].from_leader && (!scoped || first[i].index == SIZE_MAX)))
      continue;
    nl_stream_snap *s = nl_snapshot_set_add_stream(set);
    if (s == NULL)
      return -1;
    nl_stream_snap *src =
        &z->replies[first[i].reply].scratch.streams[first[i].index];
    *s = *src;
    /* Moved: the set owns the strings now, and the entries that point to
     * the name still read it. */
    memset(src, 0, sizeof(*src));
    s->consumers_complete = false;
    s->elsewhere = !first[i].from_leader;
    have = true;
  }
  if (!have)
    /* Its leader did not answer (or none is elected): the stream's
     * consumers cannot be judged this poll. */
    return nl_snapshot_set_is_missing(set, first->stream)
               ? 0
               : nl_snapshot_set_add_missing(set, first->stream);
  size_t si = set->n_streams - 1;
  bool complete = true;
  uint64_t read = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && strcmp(first[j].consumer, first[i].consumer) == 0)
      j++;
    /* The leader's entry sorts first within the consumer. */
    if (first[i].from_leader) {
      nl_consumer_snap *c = nl_snapshot_set_add_consumer(set);
      if (c == NULL)
        return -1;
      nl_consumer_snap *src =
          &z->replies[first[i].reply].scratch.consumers[first[i].index];
      *c = *src;
      memset(src, 0, sizeof(*src));
      c->stream_index = si;
      read++;
    } else if (first[i].away != AWAY_NOT) {
      /* Scope "server": its leader's agent judges it. */
      if (nl_snapshot_set_add_elsewhere(set, first[i].stream, first[i].consumer,
                                        first[i].away == AWAY_LEADERLESS) != 0)
        return -1;
      read++;
      complete &= first[i].away == AWAY_LED;
    } else {
      set->unobservable++;
      complete = false;
    }
    i = j;
  }
  /* The stream leader counts the consumers it stores; fewer read than that
   * means some were reported by no answering server. */
  if (read < set->streams[si].consumer_count) {
    set->unobservable += set->streams[si].consumer_count - read;
    complete = false;
  }
  set->streams[si].consumers_complete = complete;
  return 0;
}

int nl_jsz_finish(nl_jsz *z, nl_jsz_result *out) {
  memset(out, 0, sizeof(*out));
  out->servers = z->n_replies;
  out->expected = z->expected;
  out->replies_rejected = z->rejected;
  /* Each server lists every account: count an account left out once. */
  out->accounts_skipped = z->n_replies ? z->skipped / z->n_replies : 0;
  if (z->server_scope && z->n_replies > 0 &&
      (out->server = strdup(z->replies[0].server_name)) == NULL) {
    drop_replies(z);
    return -1;
  }
  if (z->n_entries > 1)
    qsort(z->entries, z->n_entries, sizeof(*z->entries), entry_order);
  size_t cap = 0;
  int rc = 0;
  nl_jsz_account *acc = NULL;
  for (size_t i = 0; i < z->n_entries && rc == 0;) {
    entry *e = &z->entries[i];
    const char *id = e->account_id;
    if (acc == NULL || strcmp(acc->id, id) != 0) {
      const account_name *an = &z->replies[e->reply].accounts[e->account];
      if ((acc = account_add(out, &cap, an)) == NULL) {
        rc = -1;
        break;
      }
      acc->set.stream_list_short =
          !z->server_scope && z->n_replies < z->expected;
    }
    size_t j = i;
    while (j < z->n_entries && strcmp(z->entries[j].account_id, id) == 0 &&
           strcmp(z->entries[j].stream, e->stream) == 0)
      j++;
    if (e->stream[0] != '\0')
      rc = merge_stream(z, e, j - i, &acc->set);
    i = j;
  }
  drop_replies(z);
  if (rc != 0)
    nl_jsz_result_clear(out);
  return rc;
}

void nl_jsz_result_clear(nl_jsz_result *r) {
  for (size_t i = 0; i < r->n_accounts; i++) {
    free(r->accounts[i].name);
    free(r->accounts[i].id);
    nl_snapshot_set_clear(&r->accounts[i].set);
  }
  free(r->accounts);
  free(r->server);
  memset(r, 0, sizeof(*r));
}

const nl_jsz_account *nl_jsz_find(const nl_jsz_result *r, const char *id) {
  for (size_t i = 0; i < r->n_accounts; i++)
    if (strcmp(r->accounts[i].id, id) == 0)
      return &r->accounts[i];
  return NULL;
}
