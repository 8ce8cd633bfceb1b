/* nl_jsz.c: every account's JetStream view from the system account's JSZ
 * replies. */
#include "nl_jsz.h"

#include "nl_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One reply kept until the merge: its parsed text and its server. */
typedef struct {
  json_object *root;
  const char *server_name; /* Owned by root. */
} kept_reply;

struct nl_jsz {
  const nl_stream_select *accounts;
  const nl_stream_select *streams;
  kept_reply *replies;
  size_t n_replies;
  size_t cap_replies;
  size_t expected;
  size_t rejected;
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

static void drop_replies(nl_jsz *z) {
  for (size_t i = 0; i < z->n_replies; i++)
    json_object_put(z->replies[i].root);
  z->n_replies = 0;
}

void nl_jsz_free(nl_jsz *z) {
  if (z == NULL)
    return;
  drop_replies(z);
  free(z->replies);
  free(z);
}

int nl_jsz_add_reply(nl_jsz *z, const char *json, size_t len, char *err,
                     size_t errlen) {
  int rc = NL_PARSE_OK;
  json_object *root = nl_parse_object(json, len, &rc, err, errlen);
  if (root == NULL) {
    z->rejected++;
    return rc;
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
  if (why != NULL) {
    snprintf(err, errlen, "%s%s%s", why, name ? ": " : "", name ? name : "");
    json_object_put(root);
    z->rejected++;
    return NL_PARSE_BAD_JSON;
  }
  for (size_t i = 0; i < z->n_replies; i++) {
    const char *seen = nl_parse_string(
        nl_parse_member(z->replies[i].root, "server", json_type_object), "id");
    if (strcmp(seen, id) == 0) {
      json_object_put(root);
      return NL_PARSE_OK;
    }
  }
  if (z->n_replies == z->cap_replies) {
    size_t cap = z->cap_replies ? 2 * z->cap_replies : 4;
    kept_reply *grown = realloc(z->replies, cap * sizeof(*grown));
    if (grown == NULL) {
      snprintf(err, errlen, "out of memory");
      json_object_put(root);
      z->rejected++;
      return NL_PARSE_BAD_JSON;
    }
    z->replies = grown;
    z->cap_replies = cap;
  }
  z->replies[z->n_replies++] = (kept_reply){root, name};
  int64_t size =
      nl_parse_int(nl_parse_member(data, "meta_cluster", json_type_object),
                   "cluster_size", 1);
  if (size > (int64_t)z->expected && size < 100000)
    z->expected = (size_t)size;
  return NL_PARSE_OK;
}

bool nl_jsz_complete(const nl_jsz *z) { return z->n_replies >= z->expected; }

/* One stream or consumer entry of one reply, for the merge. */
typedef struct {
  const char *account_id;
  const char *account_name;
  const char *stream;
  const char *consumer; /* NULL for the stream's own entry. */
  json_object *item;
  bool from_leader; /* The reply is its leader's. */
} entry;

typedef struct {
  entry *items;
  size_t n;
  size_t cap;
} entry_list;

static int entry_add(entry_list *l, entry e) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 256;
    entry *grown = realloc(l->items, cap * sizeof(*grown));
    if (grown == NULL)
      return -1;
    l->items = grown;
    l->cap = cap;
  }
  l->items[l->n++] = e;
  return 0;
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

/* Lists the entries of one reply's selected accounts and streams. */
static int collect(const nl_jsz *z, const kept_reply *r, entry_list *l,
                   size_t *skipped) {
  json_object *data = nl_parse_member(r->root, "data", json_type_object);
  json_object *accounts =
      nl_parse_member(data, "account_details", json_type_array);
  bool alone = z->expected == 1;
  size_t na = accounts ? json_object_array_length(accounts) : 0;
  for (size_t i = 0; i < na; i++) {
    json_object *acc = json_object_array_get_idx(accounts, i);
    const char *id = nl_parse_string(acc, "id");
    const char *name = nl_parse_string(acc, "name");
    if (id == NULL || id[0] == '\0')
      continue;
    if (name == NULL || name[0] == '\0')
      name = id;
    if (!nl_stream_selected(z->accounts, name)) {
      (*skipped)++;
      continue;
    }
    json_object *streams =
        nl_parse_member(acc, "stream_detail", json_type_array);
    size_t ns = streams ? json_object_array_length(streams) : 0;
    /* An account without streams still counts: its engine keeps going. */
    if (entry_add(l, (entry){id, name, "", NULL, NULL, false}) != 0)
      return -1;
    for (size_t j = 0; j < ns; j++) {
      json_object *sd = json_object_array_get_idx(streams, j);
      const char *stream = nl_parse_string(sd, "name");
      if (stream == NULL || stream[0] == '\0' ||
          !nl_stream_selected(z->streams, stream))
        continue;
      if (entry_add(l, (entry){id, name, stream, NULL, sd,
                               from_leader(sd, r->server_name, alone)}) != 0)
        return -1;
      json_object *consumers =
          nl_parse_member(sd, "consumer_detail", json_type_array);
      size_t nc = consumers ? json_object_array_length(consumers) : 0;
      for (size_t k = 0; k < nc; k++) {
        json_object *cd = json_object_array_get_idx(consumers, k);
        const char *consumer = nl_parse_string(cd, "name");
        if (consumer == NULL || consumer[0] == '\0')
          continue;
        if (entry_add(l, (entry){id, name, stream, consumer, cd,
                                 from_leader(cd, r->server_name, alone)}) != 0)
          return -1;
      }
    }
  }
  return 0;
}

static nl_jsz_account *account_add(nl_jsz_result *out, size_t *cap,
                                   const entry *e) {
  if (out->n_accounts == *cap) {
    size_t grown_cap = *cap ? 2 * *cap : 8;
    nl_jsz_account *grown = realloc(out->accounts, grown_cap * sizeof(*grown));
    if (grown == NULL)
      return NULL;
    out->accounts = grown;
    *cap = grown_cap;
  }
  nl_jsz_account *a = &out->accounts[out->n_accounts];
  memset(a, 0, sizeof(*a));
  a->name = strdup(e->account_name);
  a->id = strdup(e->account_id);
  if (a->name == NULL || a->id == NULL) {
    free(a->name);
    free(a->id);
    return NULL;
  }
  out->n_accounts++;
  return a;
}

/* Merges the entries of one stream (from first, n of them: the stream's
 * own entries, then its consumers') into set. */
static int merge_stream(const entry *first, size_t n, nl_snapshot_set *set) {
  size_t i = 0;
  bool have = false;
  for (; i < n && first[i].consumer == NULL; i++)
    if (!have && first[i].from_leader) {
      if (nl_parse_stream_item(first[i].item, set) != 0)
        set->unobservable++; /* Unreadable: counted as in CONSUMER.LIST. */
      else
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
    if (first[i].from_leader &&
        nl_parse_consumer_item(first[i].item, si, set) == 0)
      read++;
    else {
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
  entry_list l = {0};
  size_t skipped = 0;
  int rc = 0;
  for (size_t i = 0; i < z->n_replies && rc == 0; i++)
    rc = collect(z, &z->replies[i], &l, &skipped);
  if (rc == 0 && l.n > 0)
    qsort(l.items, l.n, sizeof(*l.items), entry_order);
  size_t cap = 0;
  nl_jsz_account *acc = NULL;
  for (size_t i = 0; i < l.n && rc == 0;) {
    const entry *e = &l.items[i];
    if (acc == NULL || strcmp(acc->id, e->account_id) != 0) {
      if ((acc = account_add(out, &cap, e)) == NULL) {
        rc = -1;
        break;
      }
      acc->set.stream_list_short = z->n_replies < z->expected;
    }
    size_t j = i;
    while (j < l.n && strcmp(l.items[j].account_id, e->account_id) == 0 &&
           strcmp(l.items[j].stream, e->stream) == 0)
      j++;
    if (e->stream[0] != '\0')
      rc = merge_stream(e, j - i, &acc->set);
    i = j;
  }
  /* Each server lists every account: count an account left out once. */
  out->accounts_skipped = z->n_replies ? skipped / z->n_replies : 0;
  free(l.items);
  drop_replies(z);
  z->expected = 1;
  z->rejected = 0;
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
  memset(r, 0, sizeof(*r));
}

const nl_jsz_account *nl_jsz_find(const nl_jsz_result *r, const char *id) {
  for (size_t i = 0; i < r->n_accounts; i++)
    if (strcmp(r->accounts[i].id, id) == 0)
      return &r->accounts[i];
  return NULL;
}
