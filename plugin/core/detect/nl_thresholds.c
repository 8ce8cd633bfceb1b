/* nl_thresholds.c: STREAM_THRESHOLD and CONSUMER_THRESHOLD, a threshold a
 * team set for natscli's checks (metadata io.nats.monitor.*, read by
 * nl_monitor.c) crossed, judged with natscli's own comparisons (jsm.go
 * v0.4.1's monitor package): the same judgement in collectd as in `nats
 * server check` and `nats audit`. A *-critical key crossed is critical, a
 * *-warn key a warning; a value natscli could not read is a warning. The
 * table of keys, and where nats-lens differs, is in docs/detectors.md. */
#include "nl_classes.h"

#include "core/model/nl_monitor.h"
#include "core/model/nl_names.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* A finding as its crossings are added to it. */
typedef struct {
  nl_finding *f;
  size_t len; /* Of f->description written. */
  int crossed;
} verdict;

/* Adds one crossing of severity sev, told by the printf-style text, and
 * the evidence threshold_name = threshold, and value_name = value unless
 * value_name is NULL. */
static void cross(verdict *v, nl_severity sev, const char *threshold_name,
                  double threshold, const char *value_name, double value,
                  const char *fmt, ...) {
  if (sev > v->f->severity)
    v->f->severity = sev;
  nl_finding_add(v->f, threshold_name, threshold);
  if (value_name != NULL)
    nl_finding_add(v->f, value_name, value);
  size_t room = sizeof(v->f->description);
  if (v->len + 3 >= room)
    return;
  if (v->crossed++ > 0)
    v->len += (size_t)snprintf(v->f->description + v->len, room - v->len, "; ");
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(v->f->description + v->len, room - v->len, fmt, ap);
  va_end(ap);
  if (n > 0)
    v->len += (size_t)n < room - v->len ? (size_t)n : room - v->len - 1;
}

/* The key and its value as written (the value made printable) among the
 * n metadata entries of meta: "io.nats.monitor.KEY=VALUE". */
static const char *written(const nl_meta *meta, size_t n, nl_monitor_key key,
                           char *out, size_t len) {
  char full[128];
  snprintf(full, sizeof(full), NL_MONITOR_PREFIX "%s",
           nl_monitor_key_name(key));
  const char *value = "";
  for (size_t i = 0; i < n; i++)
    if (strcmp(meta[i].key, full) == 0)
      value = meta[i].value;
  char shown[64];
  nl_printable(value, false, shown, sizeof(shown));
  snprintf(out, len, "%s=%s", full, shown);
  return out;
}

/* Starts the judgement of an object (a stream when stream is true) with
 * the n metadata entries of meta, reading its thresholds into m and
 * starting v on f (class cls): returns true when it is to be judged. Else
 * v->crossed tells whether f holds a finding: the held one (NULL: none)
 * kept as it is when the reply names no leader of the stream (a
 * replica's state, maybe not caught up, proves nothing either way). */
static bool judge_start(verdict *v, nl_monitor *m, const nl_meta *meta,
                        size_t n, bool stream, bool no_leader,
                        const nl_finding *held, nl_finding *f, nl_class cls) {
  *v = (verdict){f, 0, 0};
  if (n == 0)
    return false;
  if (no_leader) {
    if (held != NULL) {
      *f = *held;
      v->crossed = 1;
    }
    return false;
  }
  nl_monitor_read(meta, n, stream, m);
  if (nl_monitor_disabled(m) || !nl_monitor_any(m))
    return false;
  nl_finding_start(f, cls);
  f->severity = NL_SEVERITY_WARNING; /* Raised by the crossings. */
  f->description[0] = '\0';
  return true;
}

/* Ends the judgement of v: adds the first value natscli could not read,
 * and the recommendation for the object (what: "stream" or "consumer";
 * words: its names as shell words). Returns whether anything was found. */
static bool judge_end(verdict *v, const nl_monitor *m, const char *what,
                      const char *words) {
  if (m->bad_key != NULL) {
    char key[96], value[64];
    nl_printable(m->bad_key, false, key, sizeof(key));
    nl_printable(m->bad_value, false, value, sizeof(value));
    cross(v, NL_SEVERITY_WARNING, nl_monitor_key_unreadable(m->bad), 1, NULL, 0,
          "%s=\"%s\" cannot be read (%s): natscli's checks of this %s fail "
          "on it, nats-lens judges the other keys",
          key, value, m->bad_reason, what);
  }
  if (v->crossed == 0)
    return false;
  snprintf(v->f->recommendation, sizeof(v->f->recommendation),
           "the threshold is the team's own, set for natscli's checks: find "
           "why the %s crossed it (nats %s info %s), or, if it no longer "
           "fits, change the metadata (nats %s edit %s --metadata "
           "KEY=VALUE)",
           what, what, words, what, words);
  return true;
}

/* A count of a consumer's information against a *-critical key: crossed
 * at or above it (natscli: value >= threshold, the threshold above 0). */
static const struct {
  nl_monitor_key key;
  const char *value_name;
  size_t offset; /* Of the uint64_t count in nl_consumer_snap. */
} consumer_counts[] = {
    {NL_MON_OUTSTANDING_ACK_CRITICAL, "num_ack_pending",
     offsetof(nl_consumer_snap, num_ack_pending)},
    {NL_MON_WAITING_CRITICAL, "num_waiting",
     offsetof(nl_consumer_snap, num_waiting)},
    {NL_MON_UNPROCESSED_CRITICAL, "num_pending",
     offsetof(nl_consumer_snap, num_pending)},
    {NL_MON_REDELIVERY_CRITICAL, "num_redelivered",
     offsetof(nl_consumer_snap, num_redelivered)},
};

/* The age of a consumer's last delivery or ack against a *-critical
 * duration: crossed at or above it. */
static const struct {
  nl_monitor_key key;
  const char *value_name, *what;
  size_t offset; /* Of the int64_t time in nl_consumer_snap. */
} consumer_ages[] = {
    {NL_MON_LAST_DELIVERY_CRITICAL, "last_delivery_age_s", "delivery",
     offsetof(nl_consumer_snap, delivered_last_ns)},
    {NL_MON_LAST_ACK_CRITICAL, "last_ack_age_s", "ack",
     offsetof(nl_consumer_snap, ack_last_ns)},
};

/* Adds the count crossings of consumer c. */
static void judge_counts(verdict *v, const nl_consumer_snap *c,
                         const nl_monitor *m) {
  for (size_t i = 0; i < sizeof(consumer_counts) / sizeof(consumer_counts[0]);
       i++) {
    const nl_monitor_value *t = &m->v[consumer_counts[i].key];
    uint64_t value =
        *(const uint64_t *)((const char *)c + consumer_counts[i].offset);
    if (!t->set || t->n <= 0 || value < (uint64_t)t->n)
      continue;
    char kv[192];
    cross(v, NL_SEVERITY_CRITICAL,
          nl_monitor_key_evidence(consumer_counts[i].key), (double)t->n,
          consumer_counts[i].value_name, (double)value, "%s: %s is %" PRIu64,
          written(c->meta, c->n_meta, consumer_counts[i].key, kv, sizeof(kv)),
          consumer_counts[i].value_name, value);
  }
}

/* Adds the age crossings of consumer c at now_ns (the server's time of
 * the reply when it gives one). A consumer that never delivered (or
 * acked) is judged by the time since it was created, where natscli
 * reports it at once. */
static void judge_ages(verdict *v, const nl_consumer_snap *c, int64_t now_ns,
                       const nl_monitor *m) {
  int64_t now = c->server_ts_ns > 0 ? c->server_ts_ns : now_ns;
  for (size_t i = 0; i < sizeof(consumer_ages) / sizeof(consumer_ages[0]);
       i++) {
    const nl_monitor_value *t = &m->v[consumer_ages[i].key];
    int64_t last =
        *(const int64_t *)((const char *)c + consumer_ages[i].offset);
    bool never = last <= 0;
    if (never)
      last = c->created_ns;
    if (!t->set || t->n <= 0 || last <= 0 || now - last < t->n)
      continue;
    char kv[192];
    double age = (double)((now - last) / 1000000000);
    cross(v, NL_SEVERITY_CRITICAL,
          nl_monitor_key_evidence(consumer_ages[i].key), nl_seconds(t->n),
          consumer_ages[i].value_name, age,
          never ? "%s: no %s since the consumer was created %.0f s ago"
                : "%s: the last %s was %.0f s ago",
          written(c->meta, c->n_meta, consumer_ages[i].key, kv, sizeof(kv)),
          consumer_ages[i].what, age);
  }
}

static bool consumer_detect(const nl_consumer_ctx *x, void **state,
                            nl_finding *f) {
  const nl_consumer_snap *c = x->c;
  nl_monitor m;
  verdict v;
  const nl_finding *held =
      x->st->active ? x->st->active[NL_CONSUMER_THRESHOLD] : NULL;
  if (!judge_start(&v, &m, c->meta, c->n_meta, false, x->s->no_leader, held, f,
                   NL_CONSUMER_THRESHOLD))
    return v.crossed > 0;
  judge_counts(&v, c, &m);
  judge_ages(&v, c, x->now_ns, &m);
  nl_shell_names q;
  nl_shell_names_of(c->stream, c->name, &q);
  char words[2 * NL_SHELL_NAME_MAX + 2];
  snprintf(words, sizeof(words), "%s %s", q.stream, q.consumer);
  return judge_end(&v, &m, "consumer", words);
}

/* msgs-warn and msgs-critical: natscli's message thresholds are minimums
 * (the stream holds too few): critical at or below msgs-critical, else a
 * warning at or below msgs-warn, each above 0. */
static void judge_msgs(verdict *v, const nl_stream_snap *s,
                       const nl_monitor *m) {
  static const struct {
    nl_monitor_key key;
    nl_severity sev;
  } levels[] = {{NL_MON_MSGS_CRITICAL, NL_SEVERITY_CRITICAL},
                {NL_MON_MSGS_WARN, NL_SEVERITY_WARNING}};
  for (size_t i = 0; i < 2; i++) {
    const nl_monitor_value *t = &m->v[levels[i].key];
    if (!t->set || t->u == 0 || s->msgs > t->u)
      continue;
    char kv[192];
    cross(v, levels[i].sev, nl_monitor_key_evidence(levels[i].key),
          (double)t->u, "messages", (double)s->msgs,
          "%s: the stream holds %" PRIu64 " messages (natscli's message "
          "thresholds are minimums)",
          written(s->meta, s->n_meta, levels[i].key, kv, sizeof(kv)), s->msgs);
    return; /* natscli stops at the first level crossed. */
  }
}

/* subjects-warn and subjects-critical: upper limits when warn is below
 * critical (at or above), lower limits otherwise (at or below), as natscli
 * decides; critical first. An unset key counts as 0, as in natscli. */
static void judge_subjects(verdict *v, const nl_stream_snap *s,
                           const nl_monitor *m) {
  const nl_monitor_value *w = &m->v[NL_MON_SUBJECTS_WARN];
  const nl_monitor_value *c = &m->v[NL_MON_SUBJECTS_CRITICAL];
  int64_t warn = w->set ? w->n : 0, crit = c->set ? c->n : 0;
  if (warn <= 0 && crit <= 0)
    return;
  bool upper = warn < crit;
  /* A count past INT64_MAX is above every limit. */
  int64_t ns = s->num_subjects > (uint64_t)INT64_MAX ? INT64_MAX
                                                     : (int64_t)s->num_subjects;
  bool critical = upper ? ns >= crit : ns <= crit;
  if (!critical && !(upper ? ns >= warn : ns <= warn))
    return;
  nl_monitor_key key =
      critical ? NL_MON_SUBJECTS_CRITICAL : NL_MON_SUBJECTS_WARN;
  char kv[192];
  if (m->v[key].set)
    written(s->meta, s->n_meta, key, kv, sizeof(kv));
  else
    snprintf(kv, sizeof(kv), NL_MONITOR_PREFIX "%s unset (0)",
             nl_monitor_key_name(key));
  cross(v, critical ? NL_SEVERITY_CRITICAL : NL_SEVERITY_WARNING,
        nl_monitor_key_evidence(key), (double)(critical ? crit : warn),
        "num_subjects", (double)s->num_subjects,
        "%s: the stream holds %" PRIu64 " subjects (natscli reads the "
        "subject thresholds as %s limits, subjects-warn being %s "
        "subjects-critical)",
        kv, s->num_subjects, upper ? "upper" : "lower",
        upper ? "below" : "not below");
}

/* lag-critical and seen-critical on the stream's upstreams (its mirror or
 * sources): crossed at or above; set on a stream that copies from nothing,
 * or whose upstreams report no state, critical as natscli says. */
static void judge_upstreams(verdict *v, const nl_stream_snap *s,
                            const nl_monitor *m, uint64_t *reporting) {
  const nl_monitor_value *lag = &m->v[NL_MON_LAG_CRITICAL];
  const nl_monitor_value *seen = &m->v[NL_MON_SEEN_CRITICAL];
  bool on_lag = lag->set && lag->u > 0, on_seen = seen->set && seen->n > 0;
  uint64_t lagged = 0, inactive = 0, max_lag = 0;
  int64_t max_active = 0;
  *reporting = 0;
  for (size_t i = 0; i < s->n_links; i++) {
    const nl_source_link *l = &s->links[i];
    if (!l->have_info)
      continue;
    (*reporting)++;
    if (on_lag && l->lag >= lag->u) {
      lagged++;
      max_lag = l->lag > max_lag ? l->lag : max_lag;
    }
    if (on_seen && l->active_ns >= seen->n) {
      inactive++;
      max_active = l->active_ns > max_active ? l->active_ns : max_active;
    }
  }
  char kv[192];
  nl_monitor_key key = on_lag ? NL_MON_LAG_CRITICAL : NL_MON_SEEN_CRITICAL;
  /* natscli judges the mirror when no source reports: "not mirrored". */
  if ((on_lag || on_seen) && *reporting == 0)
    cross(v, NL_SEVERITY_CRITICAL, "upstreams_expected", 1, "upstreams", 0,
          "%s: %s", written(s->meta, s->n_meta, key, kv, sizeof(kv)),
          s->n_links == 0 ? "the stream is neither a mirror nor sourced"
          : s->is_mirror  ? "the mirror reports no state"
                          : "none of its sources reports its state");
  if (lagged > 0)
    cross(v, NL_SEVERITY_CRITICAL, nl_monitor_key_evidence(NL_MON_LAG_CRITICAL),
          (double)lag->u, "max_lag", (double)max_lag,
          "%s: %" PRIu64 " upstream(s) lag, the most by %" PRIu64,
          written(s->meta, s->n_meta, NL_MON_LAG_CRITICAL, kv, sizeof(kv)),
          lagged, max_lag);
  if (inactive > 0)
    cross(v, NL_SEVERITY_CRITICAL,
          nl_monitor_key_evidence(NL_MON_SEEN_CRITICAL), nl_seconds(seen->n),
          "max_active_s", nl_seconds(max_active),
          "%s: %" PRIu64 " upstream(s) not heard from, one for %.0f s",
          written(s->meta, s->n_meta, NL_MON_SEEN_CRITICAL, kv, sizeof(kv)),
          inactive, nl_seconds(max_active));
}

/* min-sources and max-sources on how many sources the server reports on
 * (natscli counts those; a mirror has none): below the minimum, else
 * above the maximum, critical. */
static void judge_sources(verdict *v, const nl_stream_snap *s,
                          const nl_monitor *m, uint64_t reporting) {
  int64_t sources = s->is_mirror ? 0 : (int64_t)reporting;
  const nl_monitor_value *min = &m->v[NL_MON_MIN_SOURCES];
  const nl_monitor_value *max = &m->v[NL_MON_MAX_SOURCES];
  bool low = min->set && min->n > 0 && sources < min->n;
  if (!low && !(max->set && max->n > 0 && sources > max->n))
    return;
  char kv[192];
  cross(v, NL_SEVERITY_CRITICAL,
        nl_monitor_key_evidence(low ? NL_MON_MIN_SOURCES : NL_MON_MAX_SOURCES),
        (double)(low ? min->n : max->n), "sources", (double)sources,
        "%s: %" PRId64 " source(s) report",
        written(s->meta, s->n_meta,
                low ? NL_MON_MIN_SOURCES : NL_MON_MAX_SOURCES, kv, sizeof(kv)),
        sources);
}

/* peer-expect, peer-lag-critical and peer-seen-critical on the stream's
 * Raft group, as natscli's cluster check judges them, when one of them is
 * set (natscli also runs the check on every replicated stream without
 * them, where an unset peer-expect counts as 0 and fails it; nats-lens
 * does not). Critical each: a stream that is not clustered or has one
 * replica; the leader and its peers other than peer-expect (natscli then
 * stops); a peer offline; a peer more than peer-lag-critical operations
 * behind, or not heard from for longer than peer-seen-critical. A reply
 * without a leader is not judged (judge_start): STREAM_REPLICAS_AT_RISK
 * reports the leaderless group. */
static void judge_peers(verdict *v, const nl_stream_snap *s,
                        const nl_monitor *m) {
  const nl_monitor_value *expect = &m->v[NL_MON_PEER_EXPECT];
  const nl_monitor_value *lag = &m->v[NL_MON_PEER_LAG_CRITICAL];
  const nl_monitor_value *seen = &m->v[NL_MON_PEER_SEEN_CRITICAL];
  bool on_expect = expect->set && expect->n > 0;
  bool on_lag = lag->set && lag->u > 0, on_seen = seen->set && seen->n > 0;
  if (!on_expect && !on_lag && !on_seen)
    return;
  nl_monitor_key key = on_expect ? NL_MON_PEER_EXPECT
                       : on_lag  ? NL_MON_PEER_LAG_CRITICAL
                                 : NL_MON_PEER_SEEN_CRITICAL;
  char kv[192];
  written(s->meta, s->n_meta, key, kv, sizeof(kv));
  int64_t peers = (int64_t)s->group.n + 1; /* The leader and those listed. */
  if (!s->group.clustered || s->replicas <= 1) {
    cross(v, NL_SEVERITY_CRITICAL, "replicas_expected", 2, "replicas",
          (double)s->replicas, "%s: the stream is not clustered", kv);
    return;
  }
  if (on_expect && peers != expect->n) {
    cross(v, NL_SEVERITY_CRITICAL, nl_monitor_key_evidence(NL_MON_PEER_EXPECT),
          (double)expect->n, "peers", (double)peers,
          "%s: the stream's group has %" PRId64 " peers", kv, peers);
    return;
  }
  uint64_t offline = 0, lagged = 0, inactive = 0, max_lag = 0;
  int64_t max_active = 0;
  for (size_t i = 0; i < s->group.n; i++) {
    const nl_replica *r = &s->group.peers[i];
    offline += r->offline;
    if (on_lag && r->lag > lag->u) {
      lagged++;
      max_lag = r->lag > max_lag ? r->lag : max_lag;
    }
    if (on_seen && r->active_ns > seen->n) {
      inactive++;
      max_active = r->active_ns > max_active ? r->active_ns : max_active;
    }
  }
  if (offline > 0)
    cross(v, NL_SEVERITY_CRITICAL, "peers_offline_allowed", 0, "peers_offline",
          (double)offline, "%s: %" PRIu64 " peer(s) offline", kv, offline);
  if (lagged > 0)
    cross(v, NL_SEVERITY_CRITICAL,
          nl_monitor_key_evidence(NL_MON_PEER_LAG_CRITICAL), (double)lag->u,
          "max_peer_lag", (double)max_lag,
          "%s: %" PRIu64 " peer(s) behind, the most by %" PRIu64 " operations",
          written(s->meta, s->n_meta, NL_MON_PEER_LAG_CRITICAL, kv, sizeof(kv)),
          lagged, max_lag);
  if (inactive > 0)
    cross(
        v, NL_SEVERITY_CRITICAL,
        nl_monitor_key_evidence(NL_MON_PEER_SEEN_CRITICAL), nl_seconds(seen->n),
        "max_peer_active_s", nl_seconds(max_active),
        "%s: %" PRIu64 " peer(s) not heard from, one for %.0f s",
        written(s->meta, s->n_meta, NL_MON_PEER_SEEN_CRITICAL, kv, sizeof(kv)),
        inactive, nl_seconds(max_active));
}

static bool stream_detect(const nl_stream_ctx *x, void **state, nl_finding *f) {
  const nl_stream_snap *s = x->s;
  nl_monitor m;
  verdict v;
  if (!judge_start(&v, &m, s->meta, s->n_meta, true, s->no_leader,
                   x->held[NL_STREAM_THRESHOLD], f, NL_STREAM_THRESHOLD))
    return v.crossed > 0;
  judge_msgs(&v, s, &m);
  judge_subjects(&v, s, &m);
  uint64_t reporting;
  judge_upstreams(&v, s, &m, &reporting);
  judge_sources(&v, s, &m, reporting);
  judge_peers(&v, s, &m);
  nl_shell_names q;
  nl_shell_names_of(s->name, NULL, &q);
  return judge_end(&v, &m, "stream", q.stream);
}

/* Two polls in a row, so a count that touches the threshold for one poll
 * (a burst the workers absorb) is not reported. */
const nl_class_def nl_class_consumer_threshold = {
    .cls = NL_CONSUMER_THRESHOLD,
    .detect = consumer_detect,
    .raise_polls = 2,
};

const nl_class_def nl_class_stream_threshold = {
    .cls = NL_STREAM_THRESHOLD,
    .detect_stream = stream_detect,
    .raise_polls = 2,
};
