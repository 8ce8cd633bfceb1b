/* nl_jsz.h: every account's JetStream view from the system account's JSZ
 * replies, as one snapshot set per account.
 *
 * A connection in the system account that sends $SYS.REQ.SERVER.PING.JSZ
 * with NL_JSZ_REQUEST receives one reply per server. Each reply holds, per
 * account, the streams that server stores (their config and state) and, per
 * stream, the consumers it stores: leaders and followers alike, each naming
 * its current leader in "cluster.leader". The collector reads each reply
 * into snapshots, one account at a time, and merges them into what the
 * per-account poll would have seen: each stream on its stream leader's reply,
 * each consumer on its consumer leader's reply (which may be another server
 * than its stream's leader). A stream whose leader did not answer is missing
 * and a consumer whose leader did not answer is unobservable, as in the
 * per-account poll. Pure: json-c and libc only. */
#ifndef NL_JSZ_H
#define NL_JSZ_H

#include "nl_select.h"
#include "nl_snapshot.h"

/* The subject the request goes to, and its body. Its account limit,
 * 100,000, is far above any real deployment: nats-server before 2.11 sorts the
 * accounts only when an offset is given, so a first page shorter than all
 * accounts would be an arbitrary subset; one page of everything is exact on
 * every version. */
#define NL_JSZ_SUBJECT "$SYS.REQ.SERVER.PING.JSZ"
#define NL_JSZ_REQUEST                                                         \
  "{\"accounts\":true,\"streams\":true,\"consumer\":true,\"config\":true,"     \
  "\"limit\":100000}"

/* One account of the merged view. */
typedef struct {
  char *name; /* As the server shows it: the name tag, else the id. */
  char *id;   /* The account's id (its public key in operator mode). */
  nl_snapshot_set set;
} nl_jsz_account;

/* What the replies of one poll showed. */
typedef struct {
  nl_jsz_account *accounts; /* Selected accounts, sorted by id. */
  size_t n_accounts;
  size_t servers;  /* Distinct servers that answered. */
  size_t expected; /* Servers of the JetStream cluster (1 when unclustered). */
  size_t accounts_skipped; /* Accounts the Account globs left out. */
  size_t replies_rejected; /* Replies that were not a readable JSZ answer. */
  char *server; /* nl_jsz_scope_server: the answering server's name. */
} nl_jsz_result;

typedef struct nl_jsz nl_jsz;

/* Creates a collector that keeps the accounts accounts selects and, in
 * each, the streams streams selects (either may be NULL: all). The selects
 * must outlive the collector. Returns NULL when memory runs out. */
nl_jsz *nl_jsz_create(const nl_stream_select *accounts,
                      const nl_stream_select *streams);

/* Scope "server": the collector takes one reply (the first; any other is
 * ignored) and keeps what its server leads. Streams and consumers of that
 * reply that another server leads are no longer missing or unobservable:
 * a stream led elsewhere is kept, marked elsewhere, for the consumers this
 * server leads; a consumer led elsewhere (or by none) is listed in the
 * set's elsewhere consumers; no set is marked short. Call before the
 * first reply. */
void nl_jsz_scope_server(nl_jsz *z);

/* Takes in one server's reply. Returns 0, or a negative NL_PARSE_* code
 * with a one-line reason in err (the reply is then counted as rejected:
 * an error answer, a server without JetStream, malformed text). A second
 * reply from a server already heard is ignored. */
int nl_jsz_add_reply(nl_jsz *z, const char *json, size_t len, char *err,
                     size_t errlen);

/* True when every server of the cluster the replies name has answered:
 * the gathering can stop. */
bool nl_jsz_complete(const nl_jsz *z);

/* Merges the replies taken in into *out (which the caller clears with
 * nl_jsz_result_clear) and empties the collector. When fewer servers
 * answered than the cluster holds, every account's set is marked
 * stream_list_short: a stream that only silent servers store may exist.
 * Returns 0, or -1 when memory runs out (out then holds nothing). */
int nl_jsz_finish(nl_jsz *z, nl_jsz_result *out);

void nl_jsz_free(nl_jsz *z);
void nl_jsz_result_clear(nl_jsz_result *r);

/* Returns the account of r whose id is id, or NULL. */
const nl_jsz_account *nl_jsz_find(const nl_jsz_result *r, const char *id);

#endif
