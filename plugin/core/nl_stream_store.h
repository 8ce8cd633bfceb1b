/* nl_stream_store.h: what the engine keeps per stream name between polls.
 *
 * One record per stream name listed or reported missing lately: the
 * running count of messages its consumers lost, its stream-level findings
 * and what each stream class keeps of it, its sequence clock, and what
 * the polls proved it never stored. Records are found by name through an
 * open-addressing index; a record neither listed nor missing for a while
 * is forgotten (nl_store_forget), so that streams coming and going all day
 * do not grow the engine. Not thread-safe: the engine's caller serialises. */
#ifndef NL_STREAM_STORE_H
#define NL_STREAM_STORE_H

#include "core/model/nl_finding.h"
#include "core/model/nl_history.h"
#include "core/model/nl_seqclock.h"

typedef struct {
  char *name;
  uint64_t lost_total;
  uint64_t stranded; /* Set by MESSAGES_STRANDED at each poll. */
  uint32_t seen_generation;
  int64_t last_seen_ns; /* Poll time it was last listed or missing. */
  nl_finding *active[NL_CLASS_COUNT]; /* Stream-level classes only. */
  /* What each stream class keeps of it (NL_CLASS_COUNT slots, owned), or
   * NULL until one keeps something. */
  nl_class_slot *slots;
  nl_seqclock *clock; /* Of a max_age stream (owned), or NULL. */
  /* The last sequence at the latest poll that saw the stream hold no
   * message (0: none seen): a consumer first seen after it can lose none
   * of those sequences. */
  uint64_t unstored_through;
  /* The latest poll saw it hold no message with first_seq equal to
   * last_seq: its first sequence is one it never stored. */
  bool first_unstored;
  /* Its creation time as first seen (a restarted server reports one a
   * fraction of a millisecond off: nl_created_same), for its
   * configuration key. */
  int64_t created_ns;
  /* Where the poll of set_generation listed it (streams are looked up by
   * name, as the origins of copies). */
  size_t set_index;
  uint32_t set_generation;
} nl_stream_rec;

typedef struct {
  nl_stream_rec *recs;
  size_t n;
  size_t cap;
  /* Open-addressing index of recs by name: NL_STORE_NO_SLOT or an index
   * into recs; n_index is 0 or a power of two at least twice n. */
  size_t *index;
  size_t n_index;
} nl_stream_store;

/* Returns the record of the stream named name, or NULL. */
nl_stream_rec *nl_store_find(const nl_stream_store *store, const char *name);

/* Returns the record of the stream named name, creating it empty; NULL
 * when memory runs out. A pointer stays valid until the next record is
 * created or forgotten. */
nl_stream_rec *nl_store_get(nl_stream_store *store, const char *name);

/* Returns r's slot of class cls, allocating r's slots at the first call;
 * NULL when memory runs out. */
nl_class_slot *nl_store_slot(nl_stream_rec *r, nl_class cls);

/* Frees the records not seen in generation gen and not seen for
 * forget_ns before now_ns (their findings were cleared when they went). */
void nl_store_forget(nl_stream_store *store, uint32_t gen, int64_t now_ns,
                     int64_t forget_ns);

/* Frees every record and the store's arrays. */
void nl_store_free(nl_stream_store *store);

#endif
