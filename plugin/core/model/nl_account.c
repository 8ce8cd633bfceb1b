/* nl_account.c: the account's storage pools from $JS.API.INFO (see
 * nl_account.h). */
#include "nl_account.h"

#include "nl_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the whole number key of obj into *out: absent is 0 (none = absent,
 * true); a number below min, or a member that is not an integer, is an
 * error (false). */
static bool read_figure(json_object *obj, const char *key, int64_t min,
                        int64_t *out) {
  json_object *v = NULL;
  *out = 0;
  if (!json_object_object_get_ex(obj, key, &v) || v == NULL)
    return true;
  if (!json_object_is_type(v, json_type_int))
    return false;
  *out = json_object_get_int64(v);
  return *out >= min;
}

/* Adds to pools (n of them so far) the memory and file pools of one usage
 * object (the account's, or a tier's) whose limits are in its "limits".
 * Returns false when a figure cannot be read. */
static bool add_pools(json_object *usage, int replicas, nl_storage_pool *pools,
                      size_t *n) {
  int64_t mem, store, res_mem, res_store, max_mem, max_store;
  json_object *limits = nl_parse_member(usage, "limits", json_type_object);
  if (!read_figure(usage, "memory", 0, &mem) ||
      !read_figure(usage, "storage", 0, &store) ||
      !read_figure(usage, "reserved_memory", 0, &res_mem) ||
      !read_figure(usage, "reserved_storage", 0, &res_store) ||
      !read_figure(limits, "max_memory", -1, &max_mem) ||
      !read_figure(limits, "max_storage", -1, &max_store))
    return false;
  /* reserved_* are unsigned in the server and print as 2^64-1 when
   * unset on some versions: json-c then gives INT64_MAX, read as none. */
  if (res_mem == INT64_MAX)
    res_mem = 0;
  if (res_store == INT64_MAX)
    res_store = 0;
  if (limits != NULL && max_mem > 0 && *n < NL_POOLS_MAX)
    pools[(*n)++] = (nl_storage_pool){true, replicas, (uint64_t)mem,
                                      (uint64_t)max_mem, (uint64_t)res_mem};
  if (limits != NULL && max_store > 0 && *n < NL_POOLS_MAX)
    pools[(*n)++] = (nl_storage_pool){false, replicas, (uint64_t)store,
                                      (uint64_t)max_store, (uint64_t)res_store};
  return true;
}

/* The replicas of a tier whose limit this file knows how the server
 * applies: 1 for "R1", else 0. A tier of more replicas is left out:
 * nats-server 2.9 compares the use of every replica with the tier's limit
 * as it is, 2.10 and later with the limit times the replicas, and the
 * reply does not say which server answered. */
static int tier_replicas(const char *name) {
  return strcmp(name, "R1") == 0 ? 1 : 0;
}

int nl_parse_account_info(const char *json, size_t len, nl_snapshot_set *set,
                          char *err, size_t errlen) {
  int rc;
  json_object *root = nl_parse_object(json, len, &rc, err, errlen);
  if (root == NULL)
    return rc;
  nl_storage_pool pools[NL_POOLS_MAX];
  size_t n = 0;
  bool ok = nl_parse_member(root, "limits", json_type_object) != NULL &&
            add_pools(root, 0, pools, &n);
  json_object *tiers = nl_parse_member(root, "tiers", json_type_object);
  if (ok && tiers != NULL) {
    json_object_object_foreach(tiers, name, tier) {
      int replicas = tier_replicas(name);
      if (replicas == 0 || !json_object_is_type(tier, json_type_object))
        continue; /* A tier the limits of streams do not name. */
      if (!add_pools(tier, replicas, pools, &n)) {
        ok = false;
        break;
      }
    }
  }
  json_object_put(root);
  if (!ok) {
    snprintf(err, errlen,
             "account information without readable usage and "
             "limits");
    return NL_PARSE_BAD_JSON;
  }
  memcpy(set->pools, pools, n * sizeof(pools[0]));
  set->n_pools = n;
  set->pools_read = true;
  return NL_PARSE_OK;
}

/* Room left in pool p (0 when at or past its limit). */
static uint64_t room(const nl_storage_pool *p) {
  return p->used < p->limit ? p->limit - p->used : 0;
}

const nl_storage_pool *nl_storage_pool_of(const nl_snapshot_set *set,
                                          const nl_stream_snap *s) {
  const nl_storage_pool *best = NULL;
  int replicas = s->replicas > 0 ? s->replicas : 1;
  for (size_t i = 0; i < set->n_pools; i++) {
    const nl_storage_pool *p = &set->pools[i];
    if (p->memory != s->memory_storage ||
        (p->replicas != 0 && p->replicas != replicas))
      continue;
    if (best == NULL || room(p) < room(best))
      best = p;
  }
  return best;
}
