#!/usr/bin/env python3
"""The mutation check (make mutate): can the unit tests fail?

Each mutation below breaks one rule of the core (or of the polling in
plugin/jsapi, which the unit tests cover too) the way a careless change
would (a consumer skipped, a comparison turned round, a clearing dropped, a
guard against a false finding removed). The check copies the core and the
unit tests to a scratch directory, applies one mutation at a time, builds
the unit tests there and runs them with tests/unit/run.sh (several
mutations at once, each in a copy of its own). A mutation is caught when a
unit test fails (a test that hangs fails after 60 s, and a run is stopped
after 120 s); its line names the first test that failed. It prints one
line per mutation and ends with
"N passed, N failed": a mutation the tests miss, or one whose text is no
longer in the source (the list must follow the code), is a failure.
"""
import concurrent.futures
import os
import queue
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, file, text as it stands, text of the mutation). The text must
# appear exactly once in the file.
MUTATIONS = [
    ("engine skips every consumer", "plugin/core/nl_engine.c",
     "  if (st == NULL)\n    return;\n  const nl_seqclock *clock",
     "  if (st == NULL || 1)\n    return;\n  const nl_seqclock *clock"),
    ("no redelivery is counted", "plugin/core/model/nl_history.c",
     "uint64_t r = sat_sub(dc, ds);", "uint64_t r = 0;"),
    ("a finding never clears by itself", "plugin/core/nl_lifecycle.c",
     "  return held->absent_polls >= NL_CLEAR_POLLS &&",
     "  return 0 && held->absent_polls >= NL_CLEAR_POLLS &&"),
    ("a finding clears without its hold", "plugin/core/nl_lifecycle.c",
     "now_ns - held->absent_since_ns >= hold_ns;",
     "now_ns - held->absent_since_ns >= 0;"),
    ("a fix does not clear at once", "plugin/core/nl_lifecycle.c",
     "if (held->config_key != 0 && key != 0 && key != held->config_key)",
     "if (0 && held->config_key != 0 && key != held->config_key)"),
    ("MAX_PENDING_THROTTLE below the cap", "plugin/core/detect/nl_max_pending_throttle.c",
     "c->num_ack_pending < (uint64_t)c->max_ack_pending",
     "c->num_ack_pending + 1 < (uint64_t)c->max_ack_pending"),
    ("MISSING_PROGRESS without the 2 x delay", "plugin/core/detect/nl_missing_progress.c",
     "(double)stuck >= limit && few;", "(double)stuck >= 0 && few;"),
    ("NAK_STORM takes a restored floor for no progress",
     "plugin/core/detect/nl_nak_storm.c",
     "  if (st->floor_unproven)\n    return false;\n  uint64_t sum = 0;",
     "  if (0)\n    return false;\n  uint64_t sum = 0;"),
    ("a bounded NAK loop is a storm", "plugin/core/detect/nl_nak_storm.c",
     "      nl_nak_loop_bounded(c->max_deliver))\n    return false;",
     "      0)\n    return false;"),
    ("NAK advisories explain nothing", "plugin/core/model/nl_history.c",
     "  if (st->nak_credit < UINT32_MAX)\n    st->nak_credit++;",
     "  (void)st;"),
    ("a restored floor counts as standing", "plugin/core/model/nl_history.c",
     "  nl_state_new_regime(st, now_ns);\n  st->floor_unproven = true;",
     "  nl_state_new_regime(st, now_ns);"),
    ("a floor moving back is a true floor", "plugin/core/model/nl_history.c",
     "  if (floor_back)\n    st->floor_unproven = true;", ""),
    ("a restored creation time is a new consumer", "plugin/core/model/nl_snapshot.c",
     "return a >= b ? a - b <= NL_CREATED_SLACK_NS : b - a <= NL_CREATED_SLACK_NS;",
     "return a == b;"),
    ("an empty Interest stream raises at once", "plugin/core/detect/nl_interest_no_consumers.c",
     "nl_seconds(x->now_ns - prev->empty_since_ns) >= NL_INTEREST_EMPTY_S;",
     "nl_seconds(x->now_ns - prev->empty_since_ns) >= 0;"),
    ("no message counts as lost", "plugin/core/model/nl_history.c",
     "  st->lost_last = lost;", "  st->lost_last = 0;"),
    ("a MAX_DELIVERIES claim is taken on trust",
     "plugin/core/model/nl_advised.c",
     "  return max_deliver > 0 && seq > 0 && seq <= delivered &&",
     "  return true || max_deliver > 0 && seq > 0 && seq <= delivered &&"),
    ("MAX_DELIVER_EXHAUSTED stays after max_deliver is unlimited",
     "plugin/core/detect/nl_max_deliver_exhausted.c",
     "if (x == NULL || (ks != NULL && ks->dead_letter) || x->max_deliver <= 0)",
     "if (x == NULL || (ks != NULL && ks->dead_letter))"),
    ("NAK advisories raise NAK_STORM without polled redeliveries",
     "plugin/core/detect/nl_nak_storm.c",
     "polled_redeliveries_since(st, oldest) < (p->nak_adv_min + 1) / 2)",
     "0)"),
    ("a finding that ended is not kept among the resolved",
     "plugin/core/nl_lifecycle.c",
     "    *r = (nl_resolved){st, co, *held, now_ns, reason};\n    lc->n_resolved++;",
     "    *r = (nl_resolved){st, co, *held, now_ns, reason};"),
    ("a throttle is dated from the poll, not the last delivery",
     "plugin/core/detect/nl_max_pending_throttle.c",
     "  f->condition_since_ns = c->delivered_last_ns;", ""),
    ("stream-level findings are left out of the list", "plugin/core/nl_engine_query.c",
     "        active_add(&l, t->name, NULL, t->active[cls]);", "        ;"),
    ("a stream's own findings leave its health ok", "plugin/core/report/nl_view.c",
     "const char *h = worse(health[i], own);",
     "(void)own;\n      const char *h = health[i];"),
    ("a name the nats CLI takes for an option gets a fix command",
     "plugin/core/model/nl_names.c",
     "if (name == NULL || name[0] == '-' || strlen(name) > 255 ||",
     "if (name == NULL || strlen(name) > 255 ||"),
    ("a consumer listed twice is kept twice", "plugin/jsapi/nl_poll.c",
     "  set->n_consumers =\n      drop_repeated(",
     "  if (0)\n    set->n_consumers = drop_repeated("),
    ("a gone stream is never forgotten", "plugin/core/nl_stream_store.c",
     "    if (r->seen_generation != gen && now_ns - r->last_seen_ns > forget_ns) {",
     "    if (r->seen_generation != gen && now_ns - r->last_seen_ns > forget_ns && 0) {"),
    ("ack_wait is not read", "plugin/core/model/nl_parse.c",
     'c->ack_wait_ns = get_i64(cfg, "ack_wait", 0);',
     'c->ack_wait_ns = get_i64(cfg, "ack_wait_", 0);'),
    ("an agent takes what another server leads for its own", "plugin/core/model/nl_jsz.c",
     "    if (!e.from_leader && z->server_scope)\n      e.away = away_of(cd);",
     "    if (!e.from_leader && z->server_scope)\n      e.from_leader = true;"),
    ("a stream led elsewhere is judged", "plugin/core/model/nl_jsz.c",
     "    s->elsewhere = !first[i].from_leader;",
     "    s->elsewhere = false;"),
    ("a consumer led elsewhere is kept as unobservable", "plugin/core/nl_engine.c",
     "    ctx->kept += away->leaderless;\n    return away->leaderless;",
     "    ctx->kept++;\n    return true;"),
    ("a consumer led elsewhere clears as deleted", "plugin/core/nl_engine.c",
     "  const char *reason = away ? NL_REASON_LED_ELSEWHERE : \"consumer deleted\";",
     "  const char *reason = \"consumer deleted\";"),
    ("coverage ignores a copy without a judge", "plugin/core/report/nl_coverage.c",
     "  if (k->copy_ns > 0 && now_ns - k->copy_ns <= window)",
     "  if (0 && k->copy_ns > 0 && now_ns - k->copy_ns <= window)"),
    ("coverage ignores a silent agent", "plugin/core/report/nl_coverage.c",
     "    return NL_COVERAGE_UNOBSERVABLE; /* Its agent went silent. */",
     "    return NL_COVERAGE_GONE;"),
    ("a paused consumer counts as throttled", "plugin/core/detect/nl_max_pending_throttle.c",
     "  if (c->paused || c->ack_policy == NL_ACK_NONE",
     "  if (c->ack_policy == NL_ACK_NONE"),
    ("a consumer first seen after its stream was empty takes its "
     "sequences as lost", "plugin/core/nl_engine.c",
     "  if (t != NULL && t->unstored_through <= s->last_seq) {",
     "  if (t != NULL && t->unstored_through > s->last_seq) {"),
    ("an empty stream seen with the consumer proves nothing unstored",
     "plugin/core/model/nl_history.c",
     "  if (s->msgs == 0 && s->first_seq <= c->delivered_stream_seq + 1 &&",
     "  if (s->msgs == 1 && s->first_seq <= c->delivered_stream_seq + 1 &&"),
    ("sequences never stored count as unread", "plugin/core/model/nl_history.c",
     "  return delivered_stream_seq > st->unstored_through ? delivered_stream_seq",
     "  return delivered_stream_seq < st->unstored_through ? delivered_stream_seq"),
    ("a stream created again keeps the old one's never-stored sequences",
     "plugin/core/nl_engine.c",
     "  if (t != NULL && t->unstored_through <= s->last_seq) {",
     "  if (t != NULL) {"),
    ("a consumer keeps its never-stored sequences on a stream created again",
     "plugin/core/model/nl_history.c",
     "  if (st->unstored_through > s->last_seq)\n    st->unstored_through = 0;",
     ""),
    ("a first sequence reported while empty is never taken as unstored",
     "plugin/core/nl_engine.c",
     "    t->first_unstored = s->last_seq > 0 && s->first_seq == s->last_seq;",
     "    t->first_unstored = false;"),
    ("any empty stream's first sequence is taken as unstored",
     "plugin/core/nl_engine.c",
     "s->first_seq == s->last_seq;", "s->first_seq <= s->last_seq + 1;"),
    ("a consumer's start is unstored whatever its deliver policy",
     "plugin/core/nl_engine.c",
     "  if (m.first_unstored && c->deliver_all && ",
     "  if (m.first_unstored && "),
    ("a consumer's start is unstored after it delivered",
     "plugin/core/nl_engine.c",
     " && c->delivered_consumer_seq == 0 &&\n      start > m.through)",
     " &&\n      start > m.through)"),
    ("deliver policy all is never read", "plugin/core/model/nl_parse.c",
     "  c->deliver_all = policy != NULL && strcmp(policy, \"all\") == 0;",
     "  c->deliver_all = false;"),
    ("an unstored first sequence outlives a poll that saw messages",
     "plugin/core/nl_engine.c",
     "  t->first_unstored = false;\n  if (s->msgs == 0) {",
     "  if (s->msgs == 0) {"),
    ("a declared processing time raises nothing in the plugin",
     "plugin/core/detect/nl_ack_wait_violation.c",
     "    .configured = configured,\n",
     "    .configured = NULL,\n"),
    ("the fix of observed redeliveries ignores the declared time",
     "plugin/core/detect/nl_slow_processing.c",
     "  return declared > rec ? declared : rec;", "  return rec;"),
    ("MISSING_PROGRESS beside ACK_WAIT_VIOLATION from a declaration",
     "plugin/core/detect/nl_ack_wait_violation.c",
     "    .suppresses = NL_CLASS_BIT(NL_MISSING_PROGRESS),",
     "    .suppresses = 0,"),
    ("a pinned client's standbys count as parallel workers",
     "plugin/core/detect/nl_audit.c",
     "(c->num_waiting >= 2 && !c->pinned_client)", "(c->num_waiting >= 2)"),
    ("an unreadable declaration is told at every poll",
     "plugin/core/detect/nl_configured.c",
     "  if (x == NULL || x->bad_declaration == bad)",
     "  if (x == NULL)"),
    ("an unacked removal counts though the stream still stores it",
     "plugin/core/model/nl_gap.c",
     "  if (s->first_seq <= hi)\n    hi = s->first_seq > 0 ? s->first_seq - 1 : 0;",
     ""),
    ("an unacked removal counts without a limit", "plugin/core/model/nl_gap.c",
     "  if (!nl_removal_by_limit(cause))\n    return bad;",
     "  if (0)\n    return bad;"),
    ("a removal claim at or below the ack floor is taken",
     "plugin/core/model/nl_gap.c",
     "  if (seq == 0 || (s0 != NULL && seq <= s0->ack_floor_stream_seq))",
     "  if (seq == 0)"),
    ("a removal claim is checked by a poll that began before it arrived",
     "plugin/core/model/nl_gap.c",
     "    if (g->claims[i].received_ns >= now_ns)",
     "    if (0)"),
    ("a stream created again past the old last sequence is the same one",
     "plugin/core/nl_engine.c",
     "  if (t->created_ns != 0 && s->created_ns != 0) {",
     "  if (0) {"),
    ("the orphans of a gap count as an expiry round",
     "plugin/core/detect/nl_slow_processing.c",
     "    if (st->gap_ns > 0 && e->first_ns <= st->gap_ns + delay + 2 * dt)",
     "    if (0)"),
    ("a removal that is no loss counts as lost", "plugin/core/model/nl_gap.c",
     "  if (nl_removal_is_loss(cause)) {", "  if (1) {"),
    ("a schedule stream's loss is not held for the stream's next reply",
     "plugin/core/model/nl_gap.c",
     "    if (cause == NL_REMOVED_OTHERWISE && s->allow_msg_schedules && !was_held) {",
     "    if (0) {"),
    ("a held loss is judged on the latest interval alone",
     "plugin/core/model/nl_gap.c",
     "    added += release_loss(g, st);", "    release_loss(g, st);"),
    ("a consumer past a removal without loss is behind a loss",
     "plugin/core/detect/nl_sequence_gap.c",
     "  read = nl_gap_read_through(st, read);", ""),
    ("max_age is the cause without the clock's proof",
     "plugin/core/model/nl_removal.c",
     "  return clock != NULL && nl_seqclock_stored_after(clock, seq, &before_ns) &&",
     "  return false && nl_seqclock_stored_after(clock, seq, &before_ns) &&"),
    ("a message's own TTL is not a cause", "plugin/core/model/nl_removal.c",
     "  if (s->allow_msg_ttl)", "  if (0)"),
    ("a newer message on the subject is not a cause",
     "plugin/core/model/nl_removal.c",
     "  if (s->max_msgs_per_subject > 0)", "  if (0)"),
    ("a discard-new stream evicts at its limit", "plugin/core/model/nl_removal.c",
     "  if (s->discard_new)\n    return false;", ""),
    ("allow_msg_ttl is not read", "plugin/core/model/nl_parse.c",
     'get_bool(cfg, "allow_msg_ttl")', "false"),
    ("a schedule that fired is not a cause", "plugin/core/model/nl_removal.c",
     "  if (cause == NL_REMOVED_OTHERWISE && s->allow_msg_schedules &&\n"
     "      removed <= added)",
     "  if (0)"),
    ("a schedule explains more removals than the stream added",
     "plugin/core/model/nl_removal.c",
     "      removed <= added)", "      1)"),
    ("the sequences a stream added in an interval are not kept",
     "plugin/core/model/nl_history.c",
     "    cur.stream_added = sat_sub(s->last_seq, prev->stream_last_seq);",
     "    (void)prev;"),
    ("allow_msg_schedules is not read", "plugin/core/model/nl_parse.c",
     'get_bool(cfg, "allow_msg_schedules")', "false"),
    ("the oldest unreceived message's age counts removed messages",
     "plugin/core/model/nl_forecast.c",
     "        s->last_seq + 1 - c->num_pending > next)", "        0)"),
    ("PUBLISH_REJECTED for discard old", "plugin/core/detect/nl_publish_rejected.c",
     "  if (!s->discard_new)\n    return NL_FULL_NONE;", ""),
    ("PUBLISH_REJECTED one message below max_msgs",
     "plugin/core/detect/nl_publish_rejected.c",
     "s->msgs >= (uint64_t)s->max_msgs", "s->msgs + 1 >= (uint64_t)s->max_msgs"),
    ("PUBLISH_REJECTED with room under max_bytes",
     "plugin/core/detect/nl_publish_rejected.c",
     "if (s->bytes >= max || max - s->bytes <= avg)", "if (max > 0)"),
    ("PUBLISH_REJECTED for a stream taking messages at max_bytes",
     "plugin/core/detect/nl_publish_rejected.c",
     "(!seen || prev->limit == NL_FULL_NONE || prev->last_seq != s->last_seq)",
     "0"),
    ("PUBLISH_REJECTED for some subjects at their limit",
     "plugin/core/detect/nl_publish_rejected.c",
     "(double)s->msgs >= (double)s->num_subjects * (double)per)",
     "(double)s->msgs > (double)s->num_subjects * (double)(per - 1))"),
    ("PUBLISH_REJECTED for a write-once stream",
     "plugin/core/detect/nl_publish_rejected.c",
     "s->discard_new_per_subject && per > 1 &&",
     "s->discard_new_per_subject && per > 0 &&"),
    ("PUBLISH_REJECTED for a stream declared full",
     "plugin/core/detect/nl_publish_rejected.c",
     "  if (e.full_ok)\n    return false;", ""),
    ("PUBLISH_REJECTED dated from the poll, not the last store",
     "plugin/core/detect/nl_publish_rejected.c",
     "s->last_ts_ns < since)\n    since = s->last_ts_ns;",
     "s->last_ts_ns < since)\n    since = since;"),
    ("a stream declaration that cannot be read is taken",
     "plugin/core/model/nl_expect.c",
     "  if (strcmp(value, \"true\") != 0 && strcmp(value, \"false\") != 0) {",
     "  if (0) {"),
    ("stream metadata is never read", "plugin/core/model/nl_parse.c",
     "  read_metadata(cfg, keep_stream_meta, s);", ""),
    ("CONSUMER_SINGLE_REPLICA on a stream of one replica",
     "plugin/core/detect/nl_audit.c",
     "NL_AUDIT_CONSUMER_SINGLE_REPLICA) || s->replicas <= 1 ||",
     "NL_AUDIT_CONSUMER_SINGLE_REPLICA) || s->replicas < 1 ||"),
    ("CONSUMER_SINGLE_REPLICA for an ephemeral consumer",
     "plugin/core/detect/nl_audit.c",
     "      !c->durable || c->ack_policy == NL_ACK_NONE)\n    return;\n  int replicas",
     "      c->ack_policy == NL_ACK_NONE)\n    return;\n  int replicas"),
    ("CONSUMER_SINGLE_REPLICA for an ack-none consumer",
     "plugin/core/detect/nl_audit.c",
     "      !c->durable || c->ack_policy == NL_ACK_NONE)\n    return;\n  int replicas",
     "      !c->durable)\n    return;\n  int replicas"),
    ("CONSUMER_SINGLE_REPLICA for inherited replicas",
     "plugin/core/detect/nl_audit.c",
     "return c->num_replicas > 0 && c->num_replicas < stream",
     "return c->num_replicas >= 0 && c->num_replicas < stream"),
    ("CONSUMER_SINGLE_REPLICA for mem_storage on a memory stream",
     "plugin/core/detect/nl_audit.c",
     "bool memory = c->mem_storage && !s->memory_storage;",
     "bool memory = c->mem_storage;"),
    ("CONSUMER_SINGLE_REPLICA ignores mem_storage", "plugin/core/detect/nl_audit.c",
     "bool memory = c->mem_storage && !s->memory_storage;",
     "bool memory = false;"),
    ("a change of consumer replicas does not clear at once",
     "plugin/core/model/nl_snapshot.c", "                   c->num_replicas,\n", ""),
    ("consumer replicas are never read", "plugin/core/model/nl_parse.c",
     "  c->num_replicas = (int)get_i64(cfg, \"num_replicas\", 0);",
     "  c->num_replicas = 0;"),
    ("SOURCE_STALLED: a recreated origin is never seen",
     "plugin/core/detect/nl_source_stalled.c",
     "  if (!ls->origin_seen)\n    return false;",
     "  if (1)\n    return false;"),
    ("SOURCE_STALLED: a mirror beyond its origin is no recreation",
     "plugin/core/detect/nl_source_stalled.c",
     "  return copy->is_mirror && !ls->recreated && st->have_prev &&",
     "  return 0 && copy->is_mirror && !ls->recreated && st->have_prev &&"),
    ("SOURCE_STALLED: a mirror beyond its origin counts nothing",
     "plugin/core/detect/nl_source_stalled.c",
     "  if (*ahead)\n    count_lost(ls, origin_new);", ""),
    ("SOURCE_STALLED: an old heartbeat counts as a live link",
     "plugin/core/detect/nl_source_stalled.c",
     "         l->active_ns < now_ns - since_ns && l->lag == 0",
     "         l->lag == 0"),
    ("SOURCE_STALLED: one quiet poll settles the count",
     "plugin/core/detect/nl_source_stalled.c",
     "  if (ls->settled_polls >= NL_SOURCE_SETTLED_POLLS)",
     "  if (ls->settled_polls >= 1)"),
    ("SOURCE_STALLED: messages on their way count as skipped",
     "plugin/core/detect/nl_source_stalled.c",
     "      count_lost(ls, deficit - recent);",
     "      count_lost(ls, deficit);"),
    ("SOURCE_STALLED: a copy skips beyond its position",
     "plugin/core/detect/nl_source_stalled.c",
     "  ls->lost = max_u64(ls->lost, n < ls->cap ? n : ls->cap);",
     "  ls->lost = max_u64(ls->lost, n);"),
    ("SOURCE_STALLED: a filtered link is judged by all its origin holds",
     "plugin/core/detect/nl_source_stalled.c",
     "  bool whole = !l->filtered;", "  bool whole = true;"),
    ("SOURCE_STALLED: a stall needs no time",
     "plugin/core/detect/nl_source_stalled.c",
     "      stalled = ls->gain_ns > 0 && now_ns - ls->gain_ns >= stall_ns;",
     "      stalled = ls->gain_ns > 0;"),
    ("SOURCE_STALLED: the origin's gain is marked at the copy's change",
     "plugin/core/detect/nl_source_stalled.c",
     "    if (st->have_prev && !st->changed) {", "    if (st->have_prev) {"),
    ("SOURCE_STALLED: an origin newer than the copy needs no time",
     "plugin/core/detect/nl_source_stalled.c",
     "      newer = was_newer && now_ns - ls->newer_since_ns >= stall_ns;",
     "      newer = was_newer;"),
    ("SOURCE_STALLED: a configured start is taken for a stall",
     "plugin/core/detect/nl_source_stalled.c",
     "      bool was_newer = !copy->is_mirror && !l->start_set &&",
     "      bool was_newer = !copy->is_mirror &&"),
    ("SOURCE_STALLED: a silent link needs no time",
     "plugin/core/detect/nl_source_stalled.c",
     "      (l->active_ns >= stall_ns ||", "      (l->active_ns >= 0 ||"),
    ("SOURCE_STALLED: waiting messages need no time",
     "plugin/core/detect/nl_source_stalled.c",
     "                 now_ns - st->since_ns >= stall_ns;",
     "                 now_ns - st->since_ns >= 0;"),
    ("SOURCE_STALLED: a copy created again keeps what was counted",
     "plugin/core/detect/nl_source_stalled.c",
     "      !nl_created_same(st->created_ns, copy->created_ns))\n    reset(st);",
     "      !nl_created_same(st->created_ns, copy->created_ns))\n    (void)0;"),
    ("SOURCE_STALLED: a restored origin's numbering is taken for new",
     "plugin/core/detect/nl_source_stalled.c",
     "      if (whole && st->have_prev && !holds_older(o)) {",
     "      if (whole && st->have_prev) {"),
    ("SOURCE_STALLED: origins are never visible", "plugin/core/nl_engine.c",
     "  return strcmp(s->name, name) == 0 && !s->elsewhere ? s : NULL;",
     "  return NULL;"),
    ("SOURCE_STALLED: skipped messages are not the stream's lost ones",
     "plugin/core/detect/nl_source_stalled.c",
     "  *x->lost_total += r.lost_delta;", ""),
    ("upstream reports are matched in order, not by name",
     "plugin/core/model/nl_parse.c",
     "  if (name == NULL || strcmp(name, str_or_empty(src, \"name\")) != 0 ||",
     "  if (name == NULL || 0 ||"),
    ("an upstream's filter is not read", "plugin/core/model/nl_parse.c",
     "  l->filtered = str_or_empty(src, \"filter_subject\")[0] != '\\0' ||",
     "  l->filtered = 0 ||"),
    ("RATE_LIMITED at a third of the limit", "plugin/core/detect/nl_rate_limited.h",
     "#define NL_RATE_AT_LIMIT 0.8", "#define NL_RATE_AT_LIMIT 0.3"),
    ("RATE_LIMITED behind by any shortfall", "plugin/core/detect/nl_rate_limited.c",
     "  return r->short_by >= 1 && r->short_by >= NL_RATE_BEHIND * r->arrived;",
     "  return r->short_by >= 1;"),
    ("RATE_LIMITED without the halves of the window",
     "plugin/core/detect/nl_rate_limited.c",
     "    if (!behind(&h1) || !behind(&h2))", "    if (!behind(&r))"),
    ("RATE_LIMITED with fewer polls than the window's",
     "plugin/core/detect/nl_rate_limited.c",
     "        p->poll + min_polls <= w->last.poll)",
     "        p->poll < w->last.poll)"),
    ("RATE_LIMITED held only while the whole window shows it",
     "plugin/core/detect/nl_rate_limited.c",
     "  bool held = st->active[NL_RATE_LIMITED] != NULL;",
     "  bool held = false;"),
    ("RATE_LIMITED for a consumer held by max_ack_pending",
     "plugin/core/detect/nl_rate_limited.c",
     "           c->num_ack_pending >= (uint64_t)c->max_ack_pending) &&",
     "           0) &&"),
    ("RATE_LIMITED for a headers-only consumer", "plugin/core/detect/nl_rate_limited.c",
     "c->rate_limit_bps > 0 && !c->headers_only &&",
     "c->rate_limit_bps > 0 &&"),
    ("RATE_LIMITED takes the limit in bits for bytes",
     "plugin/core/detect/nl_rate_limited.c",
     "  return (double)(c->rate_limit_bps / 8);",
     "  return (double)c->rate_limit_bps;"),
    ("RATE_LIMITED leaves the reply subject out of a delivery",
     "plugin/core/detect/nl_rate_limited.c",
     "  return body + reply;", "  return body;"),
    ("RATE_LIMITED forecasts no eviction at the window's rates",
     "plugin/core/detect/nl_rate_limited.c",
     "  double eta = nl_forecast_eta(fc, s, growth, age_growth, &kind);",
     "  double eta = INFINITY;\n  kind = NL_LIMIT_NONE;"),
    ("a change of rate limit does not clear at once",
     "plugin/core/model/nl_snapshot.c", "                   (int64_t)c->rate_limit_bps,\n",
     ""),
    ("the rate limit is never read", "plugin/core/model/nl_parse.c",
     "  c->rate_limit_bps = get_u64(cfg, \"rate_limit_bps\", 0);",
     "  c->rate_limit_bps = 0;"),
    ("CONSUMER_EXPIRING at any idle time", "plugin/core/detect/nl_consumer_expiry.c",
     "  if (idle < NL_EXPIRY_WARN_SHARE * t ||", "  if (idle < 0 * t ||"),
    ("CONSUMER_EXPIRING within the gaps it survived",
     "plugin/core/detect/nl_consumer_expiry.c",
     "      w->idle_ns <= w->longest_gap_ns + w->interval_ns)",
     "      w->idle_ns <= 0)"),
    ("a consumer used once is long-lived", "plugin/core/detect/nl_consumer_expiry.c",
     "  return w->last_server_ns - w->first_server_ns >= 2 * w->threshold_ns &&",
     "  return 1 || w->last_server_ns - w->first_server_ns >= 2 * "
     "w->threshold_ns ||"),
    ("an ack-none consumer expires with a loss",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  if (w == NULL || w->ack_none || w->api_deleted || w->paused ||",
     "  if (w == NULL || w->api_deleted || w->paused ||"),
    ("CONSUMER_EXPIRED with nothing to lose", "plugin/core/detect/nl_consumer_expiry.c",
     "      s->last_seq < w->stream_last_seq || !long_lived(w) ||\n"
     "      w->num_pending + w->num_ack_pending == 0)",
     "      s->last_seq < w->stream_last_seq || !long_lived(w))"),
    ("CONSUMER_EXPIRED with its clients maybe at work",
     "plugin/core/detect/nl_consumer_expiry.c",
     "      !w->absent_shown || st->gap_ns >= w->last_poll_ns ||",
     "      st->gap_ns >= w->last_poll_ns ||"),
    ("an API delete is an expiry", "plugin/core/detect/nl_consumer_expiry.c",
     "    w->api_deleted = true;", "    (void)0;"),
    ("a DELETED advisory does not time the delete",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  if (from_advisory)\n    d = w->deleted_adv_ns;",
     "  (void)from_advisory;"),
    ("a delete before the threshold is an expiry",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  if (d < w->visible_ns + w->threshold_ns - NL_EXPIRY_SLACK_NS)\n"
     "    return false;", ""),
    ("a waiting pull request is no client activity",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  if (c->num_waiting > 0 || (c->push && c->push_bound))\n"
     "    v = max64(v, sn);", ""),
    ("a quiet poll does not start the idle time",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  if (c->paused || (!c->push && (!takeable || c->num_waiting > 0)))\n"
     "    w->quiet_ns = sn;", ""),
    ("a push consumer is idle from its last delivery",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  else if (w->unbound_since_ns == 0)\n    w->unbound_since_ns = sn;", ""),
    ("a held message is not granted its ack_wait",
     "plugin/core/detect/nl_consumer_expiry.c",
     "                     ? c->delivered_last_ns + w->delay_ns",
     "                     ? c->delivered_last_ns"),
    ("outliving the threshold is not unseen activity",
     "plugin/core/detect/nl_consumer_expiry.c",
     "  if (w->absent_shown && w->idle_ns > allowed)\n    w->unseen = true;",
     "  (void)allowed;"),
    ("a consumer created again too short clears", "plugin/core/detect/nl_consumer_expiry.c",
     "    if (t == 0 || t >= e->recommended_ns) {", "    if (t >= 0) {"),
    ("CONSUMER_EXPIRED is never given up", "plugin/core/detect/nl_consumer_expiry.c",
     "    if (now_ns - e->absent_since_ns >= NL_EXPIRED_HOLD_NS) {",
     "    if (0) {"),
    ("an API audit of a failed delete counts", "plugin/core/model/nl_advisory.c",
     "  if (!success) {", "  if (0) {"),

]


def run(cmd, cwd, timeout):
    """Runs cmd in cwd; returns (exit status or None on timeout, output)."""
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, ""


def first_failure(out):
    """The first failing test named in unit test output, or a short tail."""
    for line in out.splitlines():
        if line.startswith("FAIL "):
            return line[5:]
    return out.strip().splitlines()[-1] if out.strip() else "no output"


BUILD = ["make", "-s", "unit-build", "CFLAGS=-O0 -g"]
TESTS = ["tests/unit/run.sh", "tests/fixtures"]


def scratch_copy():
    """A scratch directory holding the core, the unit tests and what builds
    them; returns its path."""
    scratch = tempfile.mkdtemp(prefix="nats-lens-mutate.")
    for d in ("plugin", "tests/unit", "tests/fixtures"):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(scratch, d),
                        ignore=shutil.ignore_patterns("*.so", "*.o"))
    for f in ("Makefile", "VERSION"):
        shutil.copy(os.path.join(ROOT, f), scratch)
    return scratch


def baseline(scratch):
    """Builds and runs the unmutated unit tests in scratch; returns None
    when they pass, else the first failure."""
    rc, out = run(BUILD, scratch, 600)
    if rc == 0:
        rc, out = run(TESTS, scratch, 300)
    return None if rc == 0 else first_failure(out)


def check(scratch, mutation):
    """Applies one mutation in scratch, builds and runs the unit tests, and
    puts the source back; returns (passed, its line)."""
    name, path, old, new = mutation
    src = os.path.join(scratch, path)
    with open(src) as fh:
        text = fh.read()
    if text.count(old) != 1:
        return False, "FAIL mutate/%s: its text is %s in %s" % (
            name, "not" if old not in text else "more than once", path)
    with open(src, "w") as fh:
        fh.write(text.replace(old, new))
    try:
        rc, out = run(BUILD, scratch, 600)
        if rc != 0:
            return False, "FAIL mutate/%s: the mutation does not build: %s" % (
                name, out.strip()[-200:])
        rc, out = run(TESTS, scratch, 120)
        if rc == 0:
            return False, "FAIL mutate/%s: no unit test fails" % name
        return True, "PASS mutate/%s (caught: %s)" % (
            name, "tests hang" if rc is None else first_failure(out)[:120])
    finally:
        with open(src, "w") as fh:
            fh.write(text)


def main():
    # One scratch copy per job (NL_MUTATE_JOBS, default one per processor,
    # at most 4); each job takes the next mutation as it finishes one, and
    # the lines come out in the list's order.
    jobs = int(os.environ.get("NL_MUTATE_JOBS") or min(4, os.cpu_count() or 1))
    scratches = []
    try:
        for _ in range(max(1, jobs)):
            scratches.append(scratch_copy())
        with concurrent.futures.ThreadPoolExecutor(len(scratches)) as pool:
            failures = list(pool.map(baseline, scratches))
        if any(failures):
            print("FAIL mutate/baseline: the unmutated tests do not pass: " +
                  next(f for f in failures if f))
            print("0 passed, 1 failed")
            return 1
        free = queue.Queue()
        for scratch in scratches:
            free.put(scratch)

        def one(mutation):
            scratch = free.get()
            try:
                return check(scratch, mutation)
            finally:
                free.put(scratch)

        with concurrent.futures.ThreadPoolExecutor(len(scratches)) as pool:
            results = list(pool.map(one, MUTATIONS))
        for _, line in results:
            print(line)
        passed = sum(1 for ok, _ in results if ok)
        failed = len(results) - passed
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed else 0
    finally:
        for scratch in scratches:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
