/* nl_account.h: the account's JetStream storage and its limits, from the
 * reply of $JS.API.INFO (the account information), as storage pools
 * (nl_storage_pool, nl_snapshot.h).
 *
 * The reply holds the account's use ("memory", "storage"), what the
 * max_bytes of its streams reserve ("reserved_memory",
 * "reserved_storage"), and its limits ("limits": "max_memory",
 * "max_storage", -1 for none); an account with tiered limits holds them
 * per tier instead ("tiers": {"R1": {...}, "R3": {...}}). Only limits of
 * at least one byte make a pool. Reads untrusted text: any input gives a
 * result or an error message, never a crash. */
#ifndef NL_ACCOUNT_H
#define NL_ACCOUNT_H

#include "nl_snapshot.h"

/* Parses the reply into set's pools (replacing any) and sets
 * set->pools_read. Returns NL_PARSE_OK, or a negative NL_PARSE_* code with
 * a one-line reason in err (an error reply, text that is not an account
 * information, a figure that is negative or not a number); set is then
 * unchanged. */
int nl_parse_account_info(const char *json, size_t len, nl_snapshot_set *set,
                          char *err, size_t errlen);

/* Returns the pool of set that binds stream s (of its storage, and its
 * tier or the whole account): the one with the least room left, or NULL
 * when no pool applies. */
const nl_storage_pool *nl_storage_pool_of(const nl_snapshot_set *set,
                                          const nl_stream_snap *s);

#endif
