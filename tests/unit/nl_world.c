/* nl_world.c: the unit tests' world of streams and consumers polled by
 * one engine (see nl_world.h). */
#include "nl_world.h"

#include "nl_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void on_transition(void *ud, const char *stream, const char *consumer,
                   const nl_finding *f, bool active, const char *reason) {
  (void)stream, (void)reason;
  world *w = ud;
  if (active) {
    w->onsets[f->cls]++;
    w->last[f->cls] = *f;
    snprintf(w->last_consumer, sizeof(w->last_consumer), "%s", consumer);
  } else {
    w->clears[f->cls]++;
  }
}

static void on_declaration(void *ud, const char *stream, const char *consumer,
                           const nl_finding *f) {
  (void)stream, (void)consumer;
  world *w = ud;
  w->told++;
  w->last_told = *f;
}

void world_init(world *w, bool config_classes) {
  memset(w, 0, sizeof(*w));
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = config_classes;
  p.push_unbound_s = 2;
  w->engine = nl_engine_create(&p);
  w->t = 1700000000LL * SEC;
  w->step_ns = SEC;
}

nl_stream_snap *add_stream(world *w, const char *name) {
  nl_stream_snap *s = &w->streams[w->n_streams++];
  s->name = (char *)name;
  s->max_msgs = -1;
  s->max_bytes = -1;
  s->first_seq = 1;
  s->consumers_complete = true;
  return s;
}

nl_consumer_snap *add_consumer(world *w, size_t stream, const char *name) {
  nl_consumer_snap *c = &w->consumers[w->n_consumers++];
  c->stream = w->streams[stream].name;
  c->stream_index = stream;
  c->name = (char *)name;
  c->created_ns = 1600000000LL * SEC;
  c->ack_wait_ns = 30 * SEC;
  c->max_ack_pending = 1000;
  c->max_deliver = -1;
  c->durable = true;
  w->streams[stream].consumer_count++;
  return c;
}

void world_poll(world *w) {
  nl_snapshot_set set = {0};
  set.streams = w->streams;
  set.n_streams = w->n_streams;
  set.consumers = w->consumers;
  set.n_consumers = w->n_consumers;
  set.missing_streams = w->missing;
  set.n_missing_streams = w->n_missing;
  set.stream_list_short = w->list_short;
  memcpy(set.pools, w->pools, sizeof(set.pools));
  set.n_pools = w->n_pools;
  set.pools_read = w->pools_read;
  nl_engine_sink sink = {.transition = on_transition,
                         .declaration = on_declaration};
  w->kept = nl_engine_apply(w->engine, &set, w->t, &sink, w);
  for (size_t i = 0; i < w->n_consumers; i++) {
    const nl_consumer_snap *c = &w->consumers[i];
    nl_consumer_state *st =
        nl_registry_find(nl_engine_registry(w->engine), c->stream, c->name);
    const nl_sample *latest = st != NULL ? nl_state_latest(st) : NULL;
    w->listed++;
    if (latest != NULL && latest->t_ns == w->t &&
        latest->delivered_consumer_seq == c->delivered_consumer_seq)
      w->recorded++;
  }
  w->t += w->step_ns;
}

void world_free(world *w) {
  CHECK_EQ_U(w->recorded, w->listed);
  nl_engine_free(w->engine);
  for (size_t i = 0; i < w->n_consumers; i++)
    nl_meta_free(w->consumers[i].meta, w->consumers[i].n_meta);
  for (size_t i = 0; i < w->n_streams; i++)
    nl_meta_free(w->streams[i].meta, w->streams[i].n_meta);
}

void world_advise(world *w, nl_adv_kind kind, const char *stream,
                  const char *consumer, uint64_t seq, uint64_t deliveries) {
  nl_advisory a = {.kind = kind, .stream_seq = seq, .deliveries = deliveries};
  snprintf(a.stream, sizeof(a.stream), "%s", stream);
  snprintf(a.consumer, sizeof(a.consumer), "%s", consumer);
  a.received_ns = w->t;
  world_advise_msg(w, &a);
}

void world_advise_msg(world *w, const nl_advisory *a) {
  nl_engine_sink sink = {.transition = on_transition};
  nl_engine_advisory(w->engine, a, w->t, &sink, w);
}

bool active_for(world *w, const char *stream, const char *consumer,
                nl_class cls) {
  if (nl_class_is_stream(cls))
    return nl_engine_stream_finding(w->engine, stream, cls) != NULL;
  nl_consumer_state *st =
      nl_registry_find(nl_engine_registry(w->engine), stream, consumer);
  return st != NULL && st->active[cls] != NULL;
}

int world_polls_to_clear(world *w, const char *stream, const char *consumer,
                         nl_class cls, int limit) {
  int polls = 0;
  while (active_for(w, stream, consumer, cls) && polls < limit) {
    world_poll(w);
    polls++;
  }
  return polls;
}
