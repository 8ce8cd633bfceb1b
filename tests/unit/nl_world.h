/* nl_world.h: one engine with streams and consumers whose fields the unit
 * tests change between polls, and the advisories they feed it. */
#ifndef NL_WORLD_H
#define NL_WORLD_H

#include "core/nl_engine.h"

#define SEC 1000000000LL

#define MAX_OBJ 10
typedef struct {
  nl_engine *engine;
  int64_t t;
  nl_stream_snap streams[MAX_OBJ];
  size_t n_streams;
  nl_consumer_snap consumers[MAX_OBJ];
  size_t n_consumers;
  char *missing[MAX_OBJ]; /* Streams STREAM.LIST reported missing. */
  size_t n_missing;
  bool list_short; /* STREAM.LIST was short of its total. */
  /* The account's storage pools ($JS.API.INFO), and whether it was read. */
  nl_storage_pool pools[NL_POOLS_MAX];
  size_t n_pools;
  bool pools_read;
  size_t kept; /* Unlisted consumers the last poll kept. */
  int onsets[NL_CLASS_COUNT];
  int clears[NL_CLASS_COUNT];
  nl_finding last[NL_CLASS_COUNT];
  char last_consumer[64];
  /* Unreadable declarations told (the engine's declaration sink), and the
   * last one. */
  int told;
  nl_finding last_told;
  /* Consumer polls listed, and those the histories took in (world_free). */
  int listed, recorded;
  int64_t step_ns; /* Time between polls: 1 s unless a test sets it. */
} world;

/* The engine's sink for transitions: counts onsets and clears by class
 * and keeps the latest finding started (ud is the world). */
void on_transition(void *ud, const char *stream, const char *consumer,
                   const nl_finding *f, bool active, const char *reason);

/* A world at 1,700,000,000 s with 1 s polls, with the configuration
 * classes on or off; PUSH_UNBOUND after 2 s. */
void world_init(world *w, bool config_classes);

/* Adds a stream without limits and returns it. */
nl_stream_snap *add_stream(world *w, const char *name);

/* Adds a durable pull consumer of stream index stream (ack_wait 30 s,
 * max_ack_pending 1000) and returns it. */
nl_consumer_snap *add_consumer(world *w, size_t stream, const char *name);

/* Applies one poll of every stream and consumer at w->t (unreadable
 * declarations counted in w->told), then moves the clock by w->step_ns. */
void world_poll(world *w);

/* Ends a world, freeing its consumers' and streams' metadata. Every consumer
 * listed in a poll must have reached its history: a test that finds nothing
 * must have had its scenario seen. */
void world_free(world *w);

/* Feeds an advisory of kind about stream/consumer, received at w->t (the
 * time of the next poll). */
void world_advise(world *w, nl_adv_kind kind, const char *stream,
                  const char *consumer, uint64_t seq, uint64_t deliveries);

/* Feeds advisory a as it is (its received_ns included) at w->t. */
void world_advise_msg(world *w, const nl_advisory *a);

/* Whether the finding of cls of stream/consumer (stream-level classes:
 * of the stream) is active. */
bool active_for(world *w, const char *stream, const char *consumer,
                nl_class cls);

/* Polls w until the finding of cls of stream/consumer clears, at most
 * limit polls (of 1 s each); returns the polls taken. A condition gone
 * without a change of configuration clears only after the engine's
 * clearing hold (30 s). */
int world_polls_to_clear(world *w, const char *stream, const char *consumer,
                         nl_class cls, int limit);

#endif
