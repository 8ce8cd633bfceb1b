/* test_class_publish_rejected.c: PUBLISH_REJECTED
 * (plugin/core/detect/nl_publish_rejected.c) at the boundaries of each rule
 * of docs/detectors.md, table-driven on the unit tests' world (1 s polls).
 *
 * The first table gives one stream per case, polled a few times: the
 * count limit (max_msgs) at, one message below and one above; the size
 * limit (the room left against the average stored size) at, one byte
 * below and above, its two-poll rule, and an empty stream with max_bytes
 * (the guard that keeps the average from dividing by zero); the
 * per-subject limit at, one below and above, and its look-alikes (a
 * write-once stream, a key-value bucket); the declaration full_ok; the
 * evidence (full_s from the last store, the recommended limit at the edge
 * of int64). The second table follows a stream through the resets: a fix
 * clears at once, a stream drained clears after the clearing hold, a
 * stream created again or not listed forgets its previous poll. */
#include "nl_test.h"
#include "nl_world.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define MAX_EVIDENCE 4
/* condition_since expected to be none (0). */
#define COND_NONE (-1)

/* One evidence value expected of the finding held at the last poll. */
typedef struct {
  const char *name; /* NULL: none. */
  double value;     /* Or -1: must be absent. */
} evidence;

/* A stream M with discard new (unless discard_old) polled `polls` times
 * a second apart. A field left out is 0: no limit, no declaration, no
 * last store, not checked. */
typedef struct {
  const char *name;
  /* The stream's configuration. */
  bool discard_old;
  int64_t max_msgs, max_bytes, per_subject;
  bool new_per_subject;
  /* Its state at the first poll. */
  uint64_t msgs, bytes, subjects;
  /* Its last store this many seconds before the first poll, or at it
   * (last_store_now); else none (last_ts 0). */
  int64_t last_store_s;
  bool last_store_now;
  const char *full_ok; /* Its nats_lens.full_ok, or NULL. */
  /* Polls, and the intervals (bit k: before poll k + 1) in which the
   * stream stored one message (and evicted one: its state is the
   * same). */
  int polls;
  unsigned taking;
  /* A change before each poll, or NULL. */
  void (*hook)(nl_stream_snap *s, int poll);
  /* Expected: the first poll that raised it (0: none), and at the last
   * poll its evidence, condition_since (seconds before the first poll;
   * COND_NONE: none; 0: not checked) and fix command (NULL: not
   * checked). */
  int raised_at;
  evidence ev[MAX_EVIDENCE];
  int64_t cond_s;
  const char *fix;
} pr_case;

/* Lowers max_bytes to 990 before the second poll (an edit): the stream is
 * then at its size limit without having stored anything. */
static void lower_max_bytes(nl_stream_snap *s, int poll) {
  if (poll == 2)
    s->max_bytes = 990;
}

/* Two more messages before the third poll, from the count limit's run on:
 * msgs stays at the limit (each replaced a subject's oldest). */
static void replace_two(nl_stream_snap *s, int poll) {
  if (poll >= 2)
    s->last_seq += 2;
}

/* Room before the second poll, full again before the third: the run at
 * the limit starts again. */
static void room_then_full(nl_stream_snap *s, int poll) {
  s->msgs = poll == 2 ? 4 : 5;
}

static const pr_case pr_cases[] = {
    /* Count: messages >= max_msgs. */
    {.name = "count: at max_msgs",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 2,
     .raised_at = 1,
     .ev = {{"messages", 5}, {"max_msgs", 5}, {"recommended_limit", 10}},
     .cond_s = COND_NONE,
     .fix = "nats stream edit M --max-msgs 10"},
    {.name = "count: one message below max_msgs",
     .max_msgs = 5,
     .msgs = 4,
     .bytes = 240,
     .subjects = 1,
     .polls = 3},
    {.name = "count: one message above max_msgs",
     .max_msgs = 5,
     .msgs = 6,
     .bytes = 360,
     .subjects = 1,
     .polls = 2,
     .raised_at = 1,
     .ev = {{"messages", 6}}},
    {.name = "count: the smallest limit, one message",
     .max_msgs = 1,
     .msgs = 1,
     .bytes = 60,
     .subjects = 1,
     .polls = 1,
     .raised_at = 1,
     .ev = {{"max_msgs", 1}},
     .fix = "nats stream edit M --max-msgs 2"},
    {.name = "count: max_msgs 0 is no limit",
     .max_msgs = 0,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 3},
    {.name = "count: max_msgs -1 is no limit",
     .max_msgs = -1,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 3},
    {.name = "count: discard old at max_msgs drops its oldest instead",
     .discard_old = true,
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 3},
    {.name = "count: still taking at max_msgs (a per-subject limit replaces)",
     .max_msgs = 5,
     .per_subject = 10,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 3,
     .hook = replace_two,
     .raised_at = 1,
     .ev = {{"taken_last_interval", 2},
            {"subjects", 1},
            {"max_msgs_per_subject", 10}}},
    {.name = "count: full since its last store, 10 s before the first poll",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .last_store_s = 10,
     .polls = 1,
     .raised_at = 1,
     .ev = {{"full_s", 10}},
     .cond_s = 10},
    {.name = "count: a last store at the first poll adds nothing",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .last_store_now = true,
     .polls = 1,
     .raised_at = 1,
     .ev = {{"full_s", 0}},
     .cond_s = COND_NONE},
    {.name = "count: without a last store, full since the first poll",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 3,
     .raised_at = 1,
     .ev = {{"full_s", 2}, {"taken_last_interval", 0}},
     .cond_s = COND_NONE},
    {.name = "count: a poll with room starts the run again",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .polls = 4,
     .hook = room_then_full,
     .raised_at = 1,
     .ev = {{"full_s", 1}},
     .cond_s = COND_NONE},
    {.name = "count: the recommended limit at half of int64",
     .max_msgs = INT64_MAX / 2,
     .msgs = (uint64_t)(INT64_MAX / 2),
     .subjects = 1,
     .polls = 1,
     .raised_at = 1,
     .fix = "nats stream edit M --max-msgs 9223372036854775806"},
    {.name = "count: the recommended limit one past half of int64 stays in it",
     .max_msgs = INT64_MAX / 2 + 1,
     .msgs = (uint64_t)(INT64_MAX / 2 + 1),
     .subjects = 1,
     .polls = 1,
     .raised_at = 1,
     .fix = "nats stream edit M --max-msgs 9223372036854775807"},
    /* Declared full by design. */
    {.name = "declared: full_ok true is silent",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .full_ok = "true",
     .polls = 3},
    {.name = "declared: full_ok false declares it may not be full",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .full_ok = "false",
     .polls = 1,
     .raised_at = 1},
    {.name = "declared: a value that cannot be read declares nothing",
     .max_msgs = 5,
     .msgs = 5,
     .bytes = 300,
     .subjects = 1,
     .full_ok = "TRUE",
     .polls = 1,
     .raised_at = 1},
    /* Size: max_bytes - bytes <= bytes / messages, on the second poll in
     * a row that sees it with nothing stored between them. max_bytes 990,
     * 10 messages: 900 bytes leave 90 of room for an average of 90. */
    {.name = "size: room equal to the average, on the second poll",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 2,
     .raised_at = 2,
     .ev = {{"bytes", 900},
            {"max_bytes", 990},
            {"bytes_free", 90},
            {"avg_msg_bytes", 90}},
     .fix = "nats stream edit M --max-bytes 1980"},
    {.name = "size: one byte more of room than the average",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 899,
     .subjects = 1,
     .polls = 4},
    {.name = "size: one byte of max_bytes more is room",
     .max_bytes = 991,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 4},
    {.name = "size: one byte less of room than the average",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 901,
     .subjects = 1,
     .polls = 2,
     .raised_at = 2,
     .ev = {{"bytes_free", 89}, {"avg_msg_bytes", 90}}},
    {.name = "size: over max_bytes, no room at all",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 1000,
     .subjects = 1,
     .polls = 2,
     .raised_at = 2,
     .ev = {{"bytes_free", 0}, {"avg_msg_bytes", 100}}},
    {.name = "size: the first poll alone does not tell",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 1},
    {.name = "size: a stream that keeps taking is not refusing",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 6,
     .taking = 0x3e},
    {.name = "size: it stops taking: raised on the poll after",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 5,
     .taking = 0x6,
     .raised_at = 4,
     .ev = {{"taken_last_interval", 0}}},
    {.name = "size: at the limit only since an edit: one poll there is not two",
     .max_bytes = 2000,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 3,
     .hook = lower_max_bytes,
     .raised_at = 3,
     .ev = {{"max_bytes", 990}}},
    {.name =
         "size: an empty discard-new stream with max_bytes (no average: the "
         "guard against a division by zero)",
     .max_bytes = 990,
     .polls = 3},
    {.name = "size: no messages but bytes over max_bytes",
     .max_msgs = 5,
     .max_bytes = 990,
     .bytes = 2000,
     .polls = 3},
    {.name = "size: max_bytes 0 is no limit",
     .max_bytes = 0,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 3},
    {.name = "size: discard old at max_bytes",
     .discard_old = true,
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 3},
    {.name = "size: full since its last store counts from it",
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .last_store_s = 60,
     .polls = 2,
     .raised_at = 2,
     .ev = {{"full_s", 61}},
     .cond_s = 60},
    /* Both: the count is the limit named. */
    {.name = "both: at max_msgs and max_bytes, the count is named",
     .max_msgs = 10,
     .max_bytes = 990,
     .msgs = 10,
     .bytes = 900,
     .subjects = 1,
     .polls = 2,
     .raised_at = 1,
     .ev = {{"max_msgs", 10}, {"max_bytes", -1}},
     .fix = "nats stream edit M --max-msgs 20"},
    /* Per subject: discard new per subject, P above 1, messages >=
     * subjects x P. */
    {.name = "subject: every subject at its limit",
     .per_subject = 2,
     .new_per_subject = true,
     .msgs = 4,
     .bytes = 240,
     .subjects = 2,
     .polls = 1,
     .raised_at = 1,
     .ev = {{"subjects", 2},
            {"max_msgs_per_subject", 2},
            {"messages", 4},
            {"recommended_limit", 4}},
     .fix = "nats stream edit M --max-msgs-per-subject 4"},
    {.name = "subject: one message short of every subject full",
     .per_subject = 2,
     .new_per_subject = true,
     .msgs = 3,
     .bytes = 180,
     .subjects = 2,
     .polls = 3},
    {.name = "subject: one message more than every subject full",
     .per_subject = 2,
     .new_per_subject = true,
     .msgs = 5,
     .bytes = 300,
     .subjects = 2,
     .polls = 1,
     .raised_at = 1,
     .ev = {{"messages", 5}}},
    {.name = "subject: one more subject than those full",
     .per_subject = 2,
     .new_per_subject = true,
     .msgs = 4,
     .bytes = 240,
     .subjects = 3,
     .polls = 3},
    {.name = "subject: a write-once stream (P 1) refuses by design",
     .per_subject = 1,
     .new_per_subject = true,
     .msgs = 3,
     .bytes = 180,
     .subjects = 3,
     .polls = 3},
    {.name =
         "subject: a key-value bucket replaces (no discard new per subject)",
     .per_subject = 2,
     .msgs = 4,
     .bytes = 240,
     .subjects = 2,
     .polls = 3},
    {.name = "subject: no subject counted is no subject full",
     .per_subject = 2,
     .new_per_subject = true,
     .msgs = 4,
     .bytes = 240,
     .polls = 3},
    {.name = "subject: the last store does not date a per-subject limit",
     .per_subject = 2,
     .new_per_subject = true,
     .msgs = 4,
     .bytes = 240,
     .subjects = 2,
     .last_store_s = 10,
     .polls = 1,
     .raised_at = 1,
     .ev = {{"full_s", 0}},
     .cond_s = COND_NONE},
};

/* The world's sink, keeping the reason of the last clear of M, and the
 * polls that reported stream M (its stream-level classes judged). */
static const char *last_reason;
static int m_seen;

static void on_reset_transition(void *ud, const char *stream,
                                const char *consumer, const nl_finding *f,
                                bool active, const char *reason) {
  on_transition(ud, stream, consumer, f, active, reason);
  if (!active && f->cls == NL_PUBLISH_REJECTED)
    last_reason = reason;
}

static void on_stream(void *ud, const nl_stream_snap *s,
                      const nl_stream_ledger *ledger) {
  uint64_t lost = ledger->lost_total;
  (void)ud, (void)lost;
  if (strcmp(s->name, "M") == 0)
    m_seen++;
}

/* One poll of w as world_poll does it (no consumers), with the sink above
 * and streams n_streams of w. */
static void poll_streams(world *w, size_t n_streams) {
  nl_snapshot_set set = {0};
  set.streams = w->streams;
  set.n_streams = n_streams;
  nl_engine_sink sink = {.transition = on_reset_transition,
                         .stream = on_stream};
  nl_engine_apply(w->engine, &set, w->t, &sink, w);
  w->t += w->step_ns;
}

/* Runs case k in a fresh world with stream M. */
static void run_pr_case(const pr_case *k) {
  world w;
  world_init(&w, true);
  m_seen = 0;
  nl_stream_snap *s = add_stream(&w, "M");
  s->discard_new = !k->discard_old;
  s->max_msgs = k->max_msgs;
  s->max_bytes = k->max_bytes;
  s->max_msgs_per_subject = k->per_subject;
  s->discard_new_per_subject = k->new_per_subject;
  s->msgs = k->msgs;
  s->bytes = k->bytes;
  s->num_subjects = k->subjects;
  s->last_seq = k->msgs + 100;
  s->first_seq = s->last_seq - k->msgs + 1;
  int64_t first = w.t;
  s->last_ts_ns = k->last_store_now     ? first
                  : k->last_store_s > 0 ? first - k->last_store_s * SEC
                                        : 0;
  if (k->full_ok != NULL)
    CHECK(nl_stream_snap_set_meta(s, "nats_lens.full_ok", k->full_ok) == 0);
  int raised_at = 0;
  for (int poll = 1; poll <= k->polls; poll++) {
    if (poll > 1 && (k->taking & (1u << (poll - 1)))) {
      s->last_seq++;
      s->first_seq++;
      s->last_ts_ns = w.t - SEC / 2;
    }
    if (k->hook != NULL)
      k->hook(s, poll);
    poll_streams(&w, 1);
    if (raised_at == 0 && active_for(&w, "M", NULL, NL_PUBLISH_REJECTED))
      raised_at = poll;
  }
  /* The scenario happened: every poll judged stream M. */
  CHECK_CASE(k->name, m_seen == k->polls);
  if (raised_at != k->raised_at)
    fprintf(stderr, "  case \"%s\": raised at poll %d, expected %d\n", k->name,
            raised_at, k->raised_at);
  CHECK(raised_at == k->raised_at);
  CHECK_CASE(k->name, w.onsets[NL_PUBLISH_REJECTED] == (k->raised_at ? 1 : 0));
  const nl_finding *f =
      nl_engine_stream_finding(w.engine, "M", NL_PUBLISH_REJECTED);
  if (f != NULL) {
    CHECK_CASE(k->name, nl_finding_holding(f));
    for (int i = 0; i < MAX_EVIDENCE && k->ev[i].name != NULL; i++) {
      double v = nl_finding_get(f, k->ev[i].name, -1);
      if (v != k->ev[i].value)
        fprintf(stderr, "  case \"%s\": %s = %.17g, expected %.17g\n", k->name,
                k->ev[i].name, v, k->ev[i].value);
      CHECK(v == k->ev[i].value);
    }
    if (k->cond_s != 0) {
      int64_t want = k->cond_s == COND_NONE ? 0 : first - k->cond_s * SEC;
      CHECK_CASE(k->name, f->condition_since_ns == want);
    }
    if (k->fix != NULL) {
      if (strcmp(f->fix_command, k->fix) != 0)
        fprintf(stderr, "  case \"%s\": fix \"%s\"\n", k->name, f->fix_command);
      CHECK(strcmp(f->fix_command, k->fix) == 0);
    }
    /* Each refusal the finding names is the server's own text. */
    CHECK_CASE(k->name, strstr(f->description, "error 10077") != NULL);
    if (k->full_ok != NULL && strcmp(k->full_ok, "false") != 0)
      CHECK_CASE(k->name, strstr(f->description, "cannot be read") != NULL);
  }
  world_free(&w);
}

/* Runs the cases of pr_cases whose name starts with prefix (a group of
 * one rule); at least one must. */
static void run_pr_cases(const char *prefix) {
  int n = 0;
  for (size_t i = 0; i < sizeof(pr_cases) / sizeof(pr_cases[0]); i++)
    if (strncmp(pr_cases[i].name, prefix, strlen(prefix)) == 0) {
      run_pr_case(&pr_cases[i]);
      n++;
    }
  CHECK(n > 0);
}

static void test_publish_rejected_count(void) { run_pr_cases("count:"); }

static void test_publish_rejected_declared(void) { run_pr_cases("declared:"); }

static void test_publish_rejected_size(void) { run_pr_cases("size:"); }

static void test_publish_rejected_both_limits(void) { run_pr_cases("both:"); }

static void test_publish_rejected_per_subject(void) {
  run_pr_cases("subject:");
}

/* Every case of pr_cases is in one of the groups above. */
static void test_publish_rejected_groups(void) {
  static const char *const groups[] = {
      "count:", "declared:", "size:", "both:", "subject:"};
  for (size_t i = 0; i < sizeof(pr_cases) / sizeof(pr_cases[0]); i++) {
    int in = 0;
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
      in += strncmp(pr_cases[i].name, groups[g], strlen(groups[g])) == 0;
    if (in != 1)
      fprintf(stderr, "  case \"%s\" is in %d groups\n", pr_cases[i].name, in);
    CHECK(in == 1);
  }
}

/* The resets: steps applied to stream M (max_msgs 5 or max_bytes 990 with
 * discard new), each checked after it. */
typedef enum {
  R_END = 0,    /* The end of the steps (a step left out). */
  R_POLL,       /* Polls arg times (1 when 0). */
  R_ROOM,       /* Four of five messages. */
  R_FULL,       /* Five of five. */
  R_RAISE,      /* max_msgs 10: a fix. */
  R_OLD,        /* Discard old: a fix. */
  R_DECLARE,    /* nats_lens.full_ok=true: a fix. */
  R_RECREATE,   /* Deleted and created again, as it was. */
  R_UNLIST,     /* Not listed (deleted). */
  R_LIST,       /* Listed again as it was. */
  R_BYTES_FULL, /* At max_bytes: 900 of 990 bytes in 10 messages. */
  R_STORE,      /* One message stored (and one evicted). */
} r_op;

typedef struct {
  r_op op;
  int arg;
  int expect; /* After the step: 1 raised, 0 not, -1 not checked. */
} r_step;

typedef struct {
  const char *name;
  r_step steps[16];
  int onsets, clears;
  const char *reason; /* Of the last clear, or NULL. */
} reset_case;

static const reset_case reset_cases[] = {
    {.name = "reset: max_msgs raised clears at once",
     .steps = {{R_FULL, 0, -1},
               {R_POLL, 0, 1},
               {R_RAISE, 0, -1},
               {R_POLL, 0, 0},
               {R_POLL, 40, 0},
               {R_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: discard old clears at once",
     .steps = {{R_FULL, 0, -1},
               {R_POLL, 0, 1},
               {R_OLD, 0, -1},
               {R_POLL, 0, 0},
               {R_POLL, 40, 0},
               {R_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: declared full by design clears at once",
     .steps = {{R_FULL, 0, -1},
               {R_POLL, 0, 1},
               {R_DECLARE, 0, -1},
               {R_POLL, 0, 0},
               {R_POLL, 40, 0},
               {R_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: drained, held 30 polls after the first with room",
     .steps = {{R_FULL, 0, -1},
               {R_POLL, 0, 1},
               {R_ROOM, 0, -1},
               {R_POLL, 30, 1},
               {R_POLL, 0, 0},
               {R_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: full again within the hold keeps one finding",
     .steps = {{R_FULL, 0, -1},
               {R_POLL, 0, 1},
               {R_ROOM, 0, -1},
               {R_POLL, 29, 1},
               {R_FULL, 0, -1},
               {R_POLL, 0, 1},
               {R_ROOM, 0, -1},
               {R_POLL, 30, 1},
               {R_POLL, 0, 0},
               {R_END, 0, -1}},
     .onsets = 1,
     .clears = 1},
    {.name = "reset: a stream created again forgets its poll before",
     .steps = {{R_BYTES_FULL, 0, -1},
               {R_POLL, 2, 1},
               {R_RECREATE, 0, -1},
               {R_POLL, 0, 0},
               {R_POLL, 0, 1},
               {R_END, 0, -1}},
     .onsets = 2,
     .clears = 1},
    {.name = "reset: a stream not listed clears, and forgets its poll before",
     .steps = {{R_BYTES_FULL, 0, -1},
               {R_POLL, 2, 1},
               {R_UNLIST, 0, -1},
               {R_POLL, 0, 0},
               {R_LIST, 0, -1},
               {R_POLL, 0, 0},
               {R_POLL, 0, 1},
               {R_END, 0, -1}},
     .onsets = 2,
     .clears = 1,
     .reason = "stream not listed"},
    {.name = "reset: a message stored at max_bytes starts the two polls again",
     .steps = {{R_BYTES_FULL, 0, -1},
               {R_POLL, 1, 0},
               {R_STORE, 0, -1},
               {R_POLL, 0, 0},
               {R_POLL, 0, 1},
               {R_END, 0, -1}},
     .onsets = 1},
};

static void run_reset_case(const reset_case *k) {
  world w;
  world_init(&w, true);
  last_reason = NULL;
  nl_stream_snap *s = add_stream(&w, "M");
  s->created_ns = w.t - 3600 * SEC;
  s->discard_new = true;
  s->msgs = 4;
  s->bytes = 240;
  s->last_seq = 104;
  s->first_seq = 101;
  s->num_subjects = 1;
  size_t listed = 1;
  int step = 0;
  for (const r_step *p = k->steps; p->op != R_END; p++, step++) {
    switch (p->op) {
    case R_POLL:
      for (int i = 0; i < (p->arg > 0 ? p->arg : 1); i++)
        poll_streams(&w, listed);
      break;
    case R_ROOM:
      s->msgs = 4;
      break;
    case R_FULL:
      s->max_msgs = 5;
      s->msgs = 5;
      break;
    case R_RAISE:
      s->max_msgs = 10;
      break;
    case R_OLD:
      s->discard_new = false;
      break;
    case R_DECLARE:
      CHECK(nl_stream_snap_set_meta(s, "nats_lens.full_ok", "true") == 0);
      break;
    case R_RECREATE:
      s->created_ns = w.t - SEC / 2;
      break;
    case R_UNLIST:
      listed = 0;
      break;
    case R_LIST:
      listed = 1;
      break;
    case R_BYTES_FULL:
      s->max_bytes = 990;
      s->msgs = 10;
      s->bytes = 900;
      break;
    case R_STORE:
      s->last_seq++;
      s->first_seq++;
      break;
    case R_END:
      break;
    }
    if (p->expect >= 0) {
      bool on = active_for(&w, "M", NULL, NL_PUBLISH_REJECTED);
      if (on != (p->expect == 1))
        fprintf(stderr, "  case \"%s\", step %d: raised %d, expected %d\n",
                k->name, step + 1, on, p->expect);
      CHECK(on == (p->expect == 1));
    }
  }
  bool ok = w.onsets[NL_PUBLISH_REJECTED] == k->onsets &&
            w.clears[NL_PUBLISH_REJECTED] == k->clears;
  if (!ok)
    fprintf(stderr, "  case \"%s\": %d onsets, %d clears\n", k->name,
            w.onsets[NL_PUBLISH_REJECTED], w.clears[NL_PUBLISH_REJECTED]);
  CHECK(ok);
  CHECK_CASE(k->name, (last_reason == NULL && k->reason == NULL) ||
                          (last_reason != NULL && k->reason != NULL &&
                           strcmp(last_reason, k->reason) == 0));
  world_free(&w);
}

static void test_publish_rejected_resets(void) {
  for (size_t i = 0; i < sizeof(reset_cases) / sizeof(reset_cases[0]); i++)
    run_reset_case(&reset_cases[i]);
}

static const nl_test_case tests[] = {
    NL_TEST(test_publish_rejected_count),
    NL_TEST(test_publish_rejected_declared),
    NL_TEST(test_publish_rejected_size),
    NL_TEST(test_publish_rejected_both_limits),
    NL_TEST(test_publish_rejected_per_subject),
    NL_TEST(test_publish_rejected_groups),
    NL_TEST(test_publish_rejected_resets),
};

NL_TEST_MAIN(tests)
