/* test_source.c: SOURCE_STALLED on the STREAM.LIST replies recorded from
 * each nats-server version by tests/tools/record_copies.sh (a mirror
 * FX_MIRROR, a sourced stream FX_SOURCED and a filtered one FX_FILTERED
 * of FX_ORIGIN, before and after FX_ORIGIN is deleted and created again),
 * through the real parser and the engine, with the polls' times set by
 * the test. */
#include "core/model/nl_parse.h"
#include "core/nl_engine.h"
#include "nl_fixture.h"
#include "nl_test.h"

#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

static const char *const versions[] = {"2.9.10", "2.10.16", "2.11.10",
                                       "2.12.0"};
#define N_VERSIONS (sizeof(versions) / sizeof(versions[0]))

/* Parses the recorded list file of version into set; false when missing
 * or unreadable. */
static bool load(const char *version, const char *file, nl_snapshot_set *set) {
  char name[256];
  snprintf(name, sizeof(name), "%s/%s", version, file);
  size_t len = 0;
  char *text = nl_test_read_fixture(name, &len);
  if (text == NULL)
    return false;
  nl_page_info page;
  char err[256] = "";
  memset(set, 0, sizeof(*set));
  int rc = nl_parse_stream_list(text, len, set, &page, err, sizeof(err));
  free(text);
  for (size_t i = 0; i < set->n_streams; i++)
    set->streams[i].consumers_complete = true;
  return rc == NL_PARSE_OK;
}

/* The stream named name of set (a failed check when absent). */
static nl_stream_snap *stream_of(nl_snapshot_set *set, const char *name) {
  nl_stream_snap *s = (nl_stream_snap *)nl_test_stream(set, name);
  CHECK(s != NULL);
  return s;
}

/* An engine fed with parsed polls, and what its sink saw. */
typedef struct {
  nl_engine *engine;
  int64_t t;
  int onsets, clears;
  nl_finding last; /* The latest SOURCE_STALLED onset. */
  char last_stream[64];
  const char *last_reason;
  uint64_t lost[4]; /* Of FX_MIRROR, FX_SOURCED, FX_FILTERED, FX_ORIGIN. */
} run;

static const char *const copies[] = {"FX_MIRROR", "FX_SOURCED", "FX_FILTERED",
                                     "FX_ORIGIN"};

static void on_transition(void *ud, const char *stream, const char *consumer,
                          const nl_finding *f, bool active,
                          const char *reason) {
  (void)consumer;
  run *r = ud;
  if (f->cls != NL_SOURCE_STALLED)
    return;
  if (active) {
    r->onsets++;
    r->last = *f;
    snprintf(r->last_stream, sizeof(r->last_stream), "%s", stream);
  } else {
    r->clears++;
    r->last_reason = reason;
  }
}

static void on_stream(void *ud, const nl_stream_snap *s,
                      const nl_stream_ledger *ledger) {
  uint64_t lost = ledger->lost_total;
  run *r = ud;
  for (size_t i = 0; i < 4; i++)
    if (strcmp(s->name, copies[i]) == 0)
      r->lost[i] = lost;
}

static void run_init(run *r) {
  memset(r, 0, sizeof(*r));
  nl_detect_params p;
  nl_detect_params_default(&p);
  p.config_classes = true;
  r->engine = nl_engine_create(&p);
  r->t = 1800000000LL * SEC;
}

/* Applies set at the run's time, then advances it by step seconds. */
static void run_poll(run *r, const nl_snapshot_set *set, int step) {
  nl_engine_sink sink = {.stream = on_stream, .transition = on_transition};
  nl_engine_apply(r->engine, set, r->t, &sink, r);
  r->t += step * SEC;
}

/* Applies the recorded list file of version n times, step seconds apart. */
static bool run_file(run *r, const char *version, const char *file, int n,
                     int step) {
  nl_snapshot_set set;
  if (!load(version, file, &set))
    return false;
  for (int i = 0; i < n; i++)
    run_poll(r, &set, step);
  nl_snapshot_set_clear(&set);
  return true;
}

static bool active(run *r, const char *stream) {
  return nl_engine_stream_finding(r->engine, stream, NL_SOURCE_STALLED) != NULL;
}

static double evidence(run *r, const char *stream, const char *name) {
  const nl_finding *f =
      nl_engine_stream_finding(r->engine, stream, NL_SOURCE_STALLED);
  return f != NULL ? nl_finding_get(f, name, -2) : -3;
}

/* Polls set 1 s apart until stream's SOURCE_STALLED is active (want) or
 * no longer, at most 60 times; returns the polls taken. */
static int polls_until(run *r, const nl_snapshot_set *set, const char *stream,
                       bool want) {
  int polls = 0;
  while (active(r, stream) != want && polls < 60) {
    run_poll(r, set, 1);
    polls++;
  }
  return polls;
}

/* A run on version's stream_list_copies.json: set holds the reply (its
 * streams changed by the test between polls), o, m and s its FX_ORIGIN,
 * FX_MIRROR and FX_SOURCED. */
typedef struct {
  run r;
  nl_snapshot_set set;
  nl_stream_snap *o, *m, *s;
} fx_run;

/* Starts c on version's reply and polls it `polls` times. Returns false
 * (a failed check) when the reply or one of its streams is missing; c is
 * to be ended with fx_end either way. */
static bool fx_start(fx_run *c, const char *version, int polls) {
  memset(c, 0, sizeof(*c));
  run_init(&c->r);
  if (!load(version, "stream_list_copies.json", &c->set))
    return false;
  c->o = stream_of(&c->set, "FX_ORIGIN");
  c->m = stream_of(&c->set, "FX_MIRROR");
  c->s = stream_of(&c->set, "FX_SOURCED");
  if (c->o == NULL || c->m == NULL || c->s == NULL)
    return false;
  for (int i = 0; i < polls; i++)
    run_poll(&c->r, &c->set, 1);
  return true;
}

static void fx_end(fx_run *c) {
  nl_snapshot_set_clear(&c->set);
  nl_engine_free(c->r.engine);
}

/* Every version's replies read: the links, their reports and the times. */
static void test_source_parse_versions(void) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    nl_snapshot_set set;
    CHECK(load(versions[v], "stream_list_copies.json", &set));
    nl_stream_snap *o = stream_of(&set, "FX_ORIGIN");
    nl_stream_snap *m = stream_of(&set, "FX_MIRROR");
    nl_stream_snap *s = stream_of(&set, "FX_SOURCED");
    nl_stream_snap *f = stream_of(&set, "FX_FILTERED");
    if (o == NULL || m == NULL || s == NULL || f == NULL) {
      nl_snapshot_set_clear(&set);
      continue;
    }
    CHECK(o->n_links == 0 && o->created_ns > 0 && o->last_ts_ns > 0);
    CHECK_EQ_U(o->start_seq, 0);
    CHECK(m->is_mirror && m->n_links == 1 && !s->is_mirror && s->n_links == 1 &&
          f->n_links == 1);
    const nl_stream_snap *all[] = {m, s, f};
    for (size_t i = 0; i < 3; i++) {
      const nl_source_link *l = &all[i]->links[0];
      CHECK(strcmp(l->name, "FX_ORIGIN") == 0);
      CHECK(!l->external && l->have_info && l->lag == 0);
      CHECK(l->active_ns >= 0 && l->active_ns < 2 * SEC);
      CHECK(l->error_code == 0 && l->error[0] == '\0');
      CHECK(all[i]->created_ns > 0 && all[i]->last_ts_ns > 0);
    }
    CHECK(!m->links[0].filtered && !s->links[0].filtered &&
          f->links[0].filtered);
    CHECK(s->links[0].key != f->links[0].key);
    CHECK_EQ_U(m->last_seq, 50);
    CHECK_EQ_U(s->last_seq, 50);
    CHECK_EQ_U(f->last_seq, 5);
    nl_snapshot_set_clear(&set);
    /* While the origin is gone, 2.9.10 has already retried and reports
     * the server's "stream not found"; 2.10 and later retry after 10 s. */
    CHECK(load(versions[v], "stream_list_copies_missing.json", &set));
    CHECK(nl_test_stream(&set, "FX_ORIGIN") == NULL);
    m = stream_of(&set, "FX_MIRROR");
    if (m != NULL && v == 0) {
      CHECK_EQ_U(m->links[0].error_code, 10059);
      CHECK(strcmp(m->links[0].error, "stream not found") == 0);
    } else if (m != NULL) {
      CHECK_EQ_U(m->links[0].error_code, 0);
    }
    CHECK(m == NULL || m->links[0].active_ns > 7 * SEC);
    nl_snapshot_set_clear(&set);
  }
}

/* The fault, as recorded on every version: the origin deleted (one poll
 * without it), created again with 20 new messages, and the copies
 * watched. The mirror is raised at the first poll that shows the new
 * origin below its position, with the 20 counted as skipped; the sourced
 * stream once the copies have retried and settled (it took none of the
 * 20). The filtered copy takes nothing by its filter and stays silent. */
static void test_source_recreated_origin(void) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    run r;
    run_init(&r);
    CHECK(run_file(&r, versions[v], "stream_list_copies.json", 3, 1));
    CHECK(run_file(&r, versions[v], "stream_list_copies_missing.json", 1, 1));
    CHECK(r.onsets == 0);
    CHECK(run_file(&r, versions[v], "stream_list_copies_recreated.json", 1, 1));
    CHECK(active(&r, "FX_MIRROR"));
    CHECK(evidence(&r, "FX_MIRROR", "lost_total") == 20);
    CHECK(evidence(&r, "FX_MIRROR", "first_lost_seq") == 1);
    CHECK(evidence(&r, "FX_MIRROR", "last_lost_seq") == 20);
    CHECK(evidence(&r, "FX_MIRROR", "origin_recreated") == 1);
    CHECK(strstr(r.last.fix_command, "nats stream rm FX_MIRROR -f") != NULL);
    CHECK(!active(&r, "FX_SOURCED"));
    /* Not settled while the copies hear nothing from the new origin. */
    CHECK(run_file(&r, versions[v], "stream_list_copies_recreated.json", 3, 1));
    CHECK(!active(&r, "FX_SOURCED"));
    /* Settled: two polls in a row with nothing taken, the origin
     * unchanged and the link live (heard from within 5 s, lag 0). */
    CHECK(run_file(&r, versions[v], "stream_list_copies_later.json", 1, 1));
    CHECK(!active(&r, "FX_SOURCED"));
    CHECK(run_file(&r, versions[v], "stream_list_copies_later.json", 1, 1));
    CHECK(active(&r, "FX_SOURCED"));
    CHECK(evidence(&r, "FX_SOURCED", "lost_total") == 20);
    CHECK(evidence(&r, "FX_SOURCED", "last_lost_seq") == 20);
    /* Held while nothing is fixed (2.10 and later: the mirror's position
     * went back to the new origin's, the skipped 20 stay counted). */
    CHECK(run_file(&r, versions[v], "stream_list_copies_later.json", 60, 1));
    CHECK(active(&r, "FX_MIRROR") && active(&r, "FX_SOURCED"));
    CHECK(!active(&r, "FX_FILTERED"));
    CHECK_EQ_U(r.onsets, 2);
    CHECK_EQ_U(r.clears, 0);
    CHECK_EQ_U(r.lost[0], 20);
    CHECK_EQ_U(r.lost[1], 20);
    CHECK_EQ_U(r.lost[2], 0);
    nl_engine_free(r.engine);
  }
}

/* The fix: the copies created again from their configuration take the
 * new origin from its first message; the findings clear at once (a new
 * creation time is a change of configuration) and stay clear. */
static void test_source_recreated_copy_clears(void) {
  run r;
  run_init(&r);
  CHECK(run_file(&r, "2.12.0", "stream_list_copies.json", 3, 1));
  CHECK(run_file(&r, "2.12.0", "stream_list_copies_recreated.json", 1, 1));
  CHECK(run_file(&r, "2.12.0", "stream_list_copies_later.json", 3, 1));
  CHECK(active(&r, "FX_MIRROR") && active(&r, "FX_SOURCED"));
  nl_snapshot_set set;
  CHECK(load("2.12.0", "stream_list_copies_later.json", &set));
  const char *names[] = {"FX_MIRROR", "FX_SOURCED"};
  for (size_t i = 0; i < 2; i++) {
    nl_stream_snap *s = stream_of(&set, names[i]);
    if (s == NULL)
      continue;
    s->created_ns = r.t;
    s->msgs = 20;
    s->first_seq = 1;
    s->last_seq = 20;
    s->last_ts_ns = r.t;
  }
  run_poll(&r, &set, 1);
  CHECK(!active(&r, "FX_MIRROR") && !active(&r, "FX_SOURCED"));
  CHECK_EQ_U(r.clears, 2);
  for (int i = 0; i < 90; i++)
    run_poll(&r, &set, 1);
  CHECK_EQ_U(r.onsets, 2);
  nl_snapshot_set_clear(&set);
  nl_engine_free(r.engine);
}

/* An idle origin (the same reply for 3 minutes) raises nothing; a link
 * that hears nothing, not even the heartbeat, is raised once it has been
 * silent for NL_SOURCE_STALL_S: with its error when it reports one. */
static void test_source_idle_and_silent(void) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    fx_run c;
    CHECK(fx_start(&c, versions[v], 180));
    CHECK_EQ_U(c.r.onsets, 0);
    nl_snapshot_set_clear(&c.set);
    CHECK(load(versions[v], "stream_list_copies_missing.json", &c.set));
    nl_stream_snap *m = stream_of(&c.set, "FX_MIRROR");
    if (m != NULL) {
      m->links[0].active_ns = 29 * SEC;
      run_poll(&c.r, &c.set, 1);
      CHECK(!active(&c.r, "FX_MIRROR"));
      m->links[0].active_ns = 31 * SEC;
      run_poll(&c.r, &c.set, 1);
      CHECK(active(&c.r, "FX_MIRROR"));
      CHECK(evidence(&c.r, "FX_MIRROR", "active_s") == 31);
      CHECK(evidence(&c.r, "FX_MIRROR", "origin_visible") == 0);
      if (v == 0) {
        CHECK(evidence(&c.r, "FX_MIRROR", "error_code") == 10059);
        CHECK(strstr(c.r.last.recommendation, "does not exist") != NULL);
        CHECK(strstr(c.r.last.description, "stream not found") != NULL);
      }
      CHECK(c.r.last.fix_command[0] == '\0');
      /* Heard from again: clears after the hold. */
      m->links[0].active_ns = SEC / 2;
      CHECK_EQ_U(polls_until(&c.r, &c.set, "FX_MIRROR", false), 31);
    }
    fx_end(&c);
  }
}

/* The origin gains messages and the sourced copy takes none: raised once
 * the first message it did not take is NL_SOURCE_STALL_S old, and not for
 * the filtered copy (its filter may match none of them). A copy that was
 * only slow (it takes them late) is never raised. */
static void test_source_stall_rule(void) {
  fx_run c;
  if (!fx_start(&c, "2.9.10", 3)) {
    CHECK(false);
    fx_end(&c);
    return;
  }
  /* The mirror keeps up; the sourced stream stops taking. */
  int polls = 0;
  while (!active(&c.r, "FX_SOURCED") && polls < 60) {
    c.o->last_seq++;
    c.o->msgs++;
    c.m->last_seq++;
    c.m->msgs++;
    run_poll(&c.r, &c.set, 1);
    polls++;
  }
  /* The mark is the poll after the copy's last change; the origin gained
   * at the next poll, 30 s before the finding. */
  CHECK_EQ_U(polls, 31);
  CHECK(!active(&c.r, "FX_MIRROR") && !active(&c.r, "FX_FILTERED"));
  CHECK(evidence(&c.r, "FX_SOURCED", "origin_recreated") == 0);
  CHECK(c.r.last.fix_command[0] == '\0');
  /* It takes them again: cleared after the hold. */
  c.s->last_seq = c.s->msgs = c.o->last_seq;
  polls = 0;
  while (active(&c.r, "FX_SOURCED") && polls < 60) {
    c.o->last_seq++;
    c.s->last_seq++;
    c.m->last_seq++;
    run_poll(&c.r, &c.set, 1);
    polls++;
  }
  CHECK_EQ_U(polls, 31);
  /* Slow: behind by 20 s of messages but taking. */
  for (int i = 0; i < 120; i++) {
    c.o->last_seq += 2;
    c.m->last_seq += 2;
    if (i >= 20)
      c.s->last_seq += 2;
    run_poll(&c.r, &c.set, 1);
  }
  CHECK_EQ_U(c.r.onsets, 1);
  /* A poll that reads the copy after a message the origin's read missed
   * (the items of one list are read one after the other): the copy holds
   * one more than the origin showed; from the next poll on both are
   * still. Nothing was left untaken: silent. */
  for (int i = 0; i < 40; i++) {
    if (i == 0)
      c.s->last_seq = c.o->last_seq; /* Caught up: both took 50 first. */
    c.s->last_seq += i == 0 ? 3 : 0;
    c.m->last_seq += i == 0 ? 3 : 0;
    c.o->last_seq += i <= 1 ? (i == 0 ? 2 : 1) : 0;
    run_poll(&c.r, &c.set, 1);
  }
  CHECK_EQ_U(c.r.onsets, 1);
  fx_end(&c);
}

/* An origin deleted and created again that the copies retry on while it
 * is still empty: they take everything it receives and nothing is
 * counted. The sourced stream as 2.9.10 and later do; the mirror as 2.10
 * and later do (its last sequence goes back to the new origin's 0 while
 * it keeps its 50 messages, then follows the new origin). */
static void test_source_recreated_empty_is_silent(void) {
  fx_run c;
  CHECK(fx_start(&c, "2.10.16", 3));
  if (c.o != NULL && c.s != NULL && c.m != NULL) {
    c.o->created_ns += 30 * SEC;
    c.o->first_ts_ns = 0;
    c.o->last_seq = c.o->msgs = 0;
    c.o->first_seq = 0;
    for (int i = 0; i < 60; i++) {
      if (i == 5)
        c.m->last_seq = 0;
      if (i >= 10) {
        c.o->last_seq++;
        c.o->msgs++;
        c.s->last_seq++;
        c.s->msgs++;
        c.s->last_ts_ns = c.r.t;
        c.m->last_seq++;
        c.m->msgs++;
      }
      run_poll(&c.r, &c.set, 1);
    }
  }
  CHECK(!active(&c.r, "FX_SOURCED") && !active(&c.r, "FX_MIRROR"));
  CHECK_EQ_U(c.r.onsets, 0);
  CHECK_EQ_U(c.r.lost[0], 0);
  CHECK_EQ_U(c.r.lost[1], 0);
  fx_end(&c);
}

/* Right after the origin is deleted and created again, the copy may still
 * report a recent heartbeat: the last one of its consumer on the deleted
 * origin. That is no live consumer on the new origin, so the copy's
 * deficit is not counted yet; a heartbeat heard after the new origin was
 * first seen is, once the copy and the origin stay unchanged for two
 * polls. */
static void test_source_old_heartbeat_is_not_live(void) {
  fx_run c;
  CHECK(fx_start(&c, "2.9.10", 3));
  if (c.o != NULL && c.s != NULL) {
    /* Deleted 0.2 s before this poll, created again with 20 messages. */
    int64_t deleted = c.r.t - SEC / 5;
    c.o->created_ns = c.o->first_ts_ns = c.r.t - SEC / 10;
    c.o->last_seq = c.o->msgs = 20;
    for (int i = 0; i < 4; i++) {
      c.s->links[0].active_ns = c.r.t - deleted;
      run_poll(&c.r, &c.set, 1);
    }
    CHECK(!active(&c.r, "FX_SOURCED"));
    CHECK_EQ_U(c.r.lost[1], 0);
    /* Its retry on the new origin: heartbeats every second. */
    for (int i = 0; i < 2; i++) {
      c.s->links[0].active_ns = SEC / 2;
      run_poll(&c.r, &c.set, 1);
    }
    CHECK(active(&c.r, "FX_SOURCED"));
    CHECK_EQ_U(c.r.lost[1], 20);
  }
  fx_end(&c);
}

/* A copy whose last delivery left messages waiting (lag) and that took
 * nothing since is raised after NL_SOURCE_STALL_S, its origin visible or
 * not (another domain: the finding says what could not be checked). A
 * copy with a lag that keeps taking is not. */
static void test_source_waiting(void) {
  fx_run c;
  CHECK(fx_start(&c, "2.11.10", 0));
  nl_stream_snap *f = stream_of(&c.set, "FX_FILTERED");
  if (c.s != NULL && f != NULL) {
    c.s->links[0].lag = 7;
    f->links[0].lag = 3;
    f->links[0].external = true;
    for (int i = 0; i < 40; i++) {
      c.s->last_seq++; /* Taking. */
      run_poll(&c.r, &c.set, 1);
    }
    CHECK(!active(&c.r, "FX_SOURCED"));
    CHECK(active(&c.r, "FX_FILTERED"));
    CHECK(evidence(&c.r, "FX_FILTERED", "lag") == 3);
    CHECK(evidence(&c.r, "FX_FILTERED", "origin_visible") == 0);
    CHECK(strstr(c.r.last.description, "could not be checked") != NULL);
    CHECK(strstr(c.r.last.recommendation, "$JS.FC.>") != NULL);
    /* Raised at the poll 30 s after its last change. */
    CHECK_EQ_U(polls_until(&c.r, &c.set, "FX_SOURCED", true), 30);
  }
  fx_end(&c);
}

/* First seen after the fact (the plugin started once the origin was
 * created again): the sourced stream's newest message is older than its
 * origin, which holds messages, for NL_SOURCE_STALL_S of polls; the
 * mirror's position is beyond the origin at two polls in a row. Both are
 * raised, the mirror with the origin's messages counted as skipped. */
static void test_source_first_seen_after_recreation(void) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    run r;
    run_init(&r);
    CHECK(run_file(&r, versions[v], "stream_list_copies_later.json", 1, 1));
    CHECK(!active(&r, "FX_SOURCED") && !active(&r, "FX_MIRROR"));
    CHECK(run_file(&r, versions[v], "stream_list_copies_later.json", 1, 1));
    /* 2.9.10's mirror still holds 50, above the new origin's 20; from
     * 2.10 its last sequence went back to 20 and nothing shows. */
    CHECK(active(&r, "FX_MIRROR") == (v == 0));
    /* The sourced stream at the poll 30 s after the first. */
    int polls = 2;
    while (!active(&r, "FX_SOURCED") && polls < 60) {
      CHECK(run_file(&r, versions[v], "stream_list_copies_later.json", 1, 1));
      polls++;
    }
    CHECK_EQ_U(polls, 31);
    CHECK(evidence(&r, "FX_SOURCED", "origin_recreated") == 1);
    CHECK(strstr(r.last.fix_command, "nats stream add FX_SOURCED --config") !=
          NULL);
    CHECK(!active(&r, "FX_FILTERED"));
    if (v == 0)
      CHECK_EQ_U(r.lost[0], 20);
    /* The same with a configured start: it may rightly take none of
     * what the origin held. */
    nl_snapshot_set set;
    CHECK(load(versions[v], "stream_list_copies_later.json", &set));
    nl_stream_snap *s = stream_of(&set, "FX_SOURCED");
    if (s != NULL) {
      s->name[0] = 'Y'; /* A stream of its own: YX_SOURCED. */
      s->links[0].start_set = true;
      for (int i = 0; i < 40; i++)
        run_poll(&r, &set, 1);
      CHECK(!active(&r, "YX_SOURCED"));
    }
    nl_snapshot_set_clear(&set);
    nl_engine_free(r.engine);
  }
}

/* A copy that resumes past the new origin's first messages while the
 * origin keeps receiving: the skipped ones are counted while messages
 * flow (those of the last interval may still be on their way, the rest
 * not), never more than were skipped. */
static void test_source_flowing_count(void) {
  nl_snapshot_set set;
  CHECK(load("2.12.0", "stream_list_copies.json", &set));
  nl_stream_snap *o = stream_of(&set, "FX_ORIGIN");
  nl_stream_snap *s = stream_of(&set, "FX_SOURCED");
  if (o == NULL || s == NULL)
    return;
  /* The sourced stream is the only copy polled. */
  nl_stream_snap keep[2] = {*o, *s};
  nl_snapshot_set one = set;
  one.streams = keep;
  one.n_streams = 2;
  o = &keep[0];
  s = &keep[1];
  run r;
  run_init(&r);
  for (int i = 0; i < 3; i++)
    run_poll(&r, &one, 1);
  o->created_ns = o->first_ts_ns = r.t;
  o->last_seq = o->msgs = 0;
  run_poll(&r, &one, 1);
  /* 4 msg/s; the copy retries 8 s later and skips the 32 there are. */
  uint64_t max_lost = 0;
  for (int i = 0; i < 30; i++) {
    o->last_seq += 4;
    if (i >= 8)
      s->last_seq = 50 + o->last_seq - 32 - (i % 3); /* 0-2 in flight. */
    s->links[0].active_ns = i >= 8 ? SEC / 10 : (int64_t)(i + 2) * SEC;
    run_poll(&r, &one, 1);
    if (r.lost[1] > max_lost)
      max_lost = r.lost[1];
  }
  CHECK(active(&r, "FX_SOURCED"));
  CHECK(max_lost >= 28 && max_lost <= 32);
  nl_engine_free(r.engine);
  memset(&one, 0, sizeof(one));
  nl_snapshot_set_clear(&set);
}

/* Hostile or odd upstreams never fail the stream item: links without a
 * usable name are skipped, reports are matched by name and API prefix
 * (not by order; a report of a stream not configured is ignored), an
 * error without a description is kept as a code, and a control character
 * in a description is dropped. */
static void test_source_parse_odd(void) {
  const char *text =
      "{\"type\":\"io.nats.jetstream.api.v1.stream_list_response\","
      "\"total\":1,\"offset\":0,\"limit\":256,\"streams\":[{"
      "\"config\":{\"name\":\"C\",\"sources\":[{\"name\":\"A\"},"
      "{\"name\":7},{\"name\":\"\"},{\"name\":\"B\",\"external\":{\"api\":"
      "\"$JS.x.API\"},\"opt_start_seq\":9,\"subject_transforms\":[{"
      "\"src\":\"b.>\",\"dest\":\"c.>\"}]},{\"name\":\"A\","
      "\"filter_subject\":\"a.b\"}]},"
      "\"created\":\"2026-12-01T00:00:00Z\",\"state\":{\"messages\":1,"
      "\"last_seq\":1,\"last_ts\":\"bad\"},"
      "\"sources\":[{\"name\":\"Z\",\"lag\":99,\"active\":1},"
      "{\"name\":\"B\",\"external\":{\"api\":\"$JS.x.API\"},"
      "\"lag\":4,\"active\":-1,\"error\":{\"code\":503}},"
      "{\"name\":\"A\",\"filter_subject\":\"a.b\",\"lag\":2,\"active\":5},"
      "{\"name\":\"A\",\"lag\":1,\"active\":9,\"error\":{\"err_code\":10059,"
      "\"description\":\"stream\\u0007 not found\"}}, 12, null]}]}";
  nl_snapshot_set set = {0};
  nl_page_info page;
  char err[256];
  CHECK(nl_parse_stream_list(text, strlen(text), &set, &page, err,
                             sizeof(err)) == NL_PARSE_OK);
  CHECK_EQ_U(set.n_streams, 1);
  const nl_stream_snap *c = set.n_streams ? &set.streams[0] : NULL;
  if (c != NULL && c->n_links == 3) {
    CHECK(!c->is_mirror && c->created_ns > 0 && c->last_ts_ns == 0);
    const nl_source_link *a = &c->links[0], *b = &c->links[1],
                         *af = &c->links[2];
    CHECK(strcmp(a->name, "A") == 0 && !a->filtered && !a->external);
    CHECK(a->have_info && a->lag == 1 && a->active_ns == 9);
    CHECK(a->error_code == 10059 && strcmp(a->error, "stream not found") == 0);
    CHECK(strcmp(b->name, "B") == 0 && b->external && b->filtered);
    CHECK(!a->start_set && b->start_set && !af->start_set);
    CHECK(b->have_info && b->lag == 4 && b->active_ns == -1);
    CHECK(b->error_code == 503 && b->error[0] == '\0');
    CHECK(af->filtered && af->have_info && af->lag == 2 && af->error_code == 0);
    CHECK(a->key != af->key && a->key != b->key);
  } else {
    CHECK(c != NULL && c->n_links == 3);
  }
  nl_snapshot_set_clear(&set);
}

/* A 2.9.10 mirror whose new origin passes its old position (50): the
 * mirror ignores the new origin's messages up to 50, retries, and takes 51
 * on; while it retries its link is live and nothing changes, which reads
 * as settled with all 60 untaken. It cannot skip beyond its position:
 * counted 50, never more. */
static void test_source_count_capped_at_position(void) {
  fx_run c;
  CHECK(fx_start(&c, "2.9.10", 3));
  if (c.o != NULL && c.m != NULL) {
    c.o->created_ns = c.o->first_ts_ns = c.r.t;
    c.o->last_seq = c.o->msgs = 20;
    run_poll(&c.r, &c.set, 1);
    CHECK_EQ_U(c.r.lost[0], 20);
    c.o->last_seq = c.o->msgs = 60;
    c.m->links[0].active_ns = SEC / 2;
    for (int i = 0; i < 4; i++)
      run_poll(&c.r, &c.set, 1);
    c.m->last_seq = c.m->msgs = 60;
    for (int i = 0; i < 4; i++)
      run_poll(&c.r, &c.set, 1);
    CHECK(active(&c.r, "FX_MIRROR"));
    CHECK_EQ_U(c.r.lost[0], 50);
    CHECK(evidence(&c.r, "FX_MIRROR", "last_lost_seq") == 50);
  }
  fx_end(&c);
}

/* An origin restored from a backup (deleted and created again holding its
 * old messages, stored before its new creation time) keeps its sequence
 * numbers: the copies resume where they were and skip nothing, and
 * nothing is counted or raised. A new origin that holds only new messages
 * is counted as before. */
static void test_source_restored_origin_is_not_counted(void) {
  fx_run c;
  CHECK(fx_start(&c, "2.11.10", 3));
  if (c.o != NULL && c.m != NULL && c.s != NULL) {
    c.o->created_ns = c.r.t;
    c.o->first_ts_ns = c.r.t - 60 * SEC; /* Its oldest message. */
    for (int i = 0; i < 60; i++) {
      if (i >= 5) {
        c.o->last_seq++;
        c.m->last_seq++;
        c.m->msgs++;
        c.s->last_seq++;
        c.s->last_ts_ns = c.r.t;
      }
      c.m->links[0].active_ns = c.s->links[0].active_ns = SEC / 2;
      run_poll(&c.r, &c.set, 1);
    }
    CHECK_EQ_U(c.r.onsets, 0);
    CHECK_EQ_U(c.r.lost[0] + c.r.lost[1], 0);
  }
  fx_end(&c);
}

static const nl_test_case tests[] = {
    NL_TEST(test_source_parse_versions),
    NL_TEST(test_source_recreated_origin),
    NL_TEST(test_source_recreated_copy_clears),
    NL_TEST(test_source_idle_and_silent),
    NL_TEST(test_source_stall_rule),
    NL_TEST(test_source_recreated_empty_is_silent),
    NL_TEST(test_source_old_heartbeat_is_not_live),
    NL_TEST(test_source_waiting),
    NL_TEST(test_source_first_seen_after_recreation),
    NL_TEST(test_source_flowing_count),
    NL_TEST(test_source_parse_odd),
    NL_TEST(test_source_count_capped_at_position),
    NL_TEST(test_source_restored_origin_is_not_counted),
};

NL_TEST_MAIN(tests)
