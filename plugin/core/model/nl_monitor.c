/* nl_monitor.c: natscli's io.nats.monitor.* thresholds, read from the
 * metadata of a stream or a consumer (see nl_monitor.h). */
#include "nl_monitor.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The keys read, in nl_monitor_key order: the name without the prefix, how
 * it is read, whether a stream (else a consumer) reads it ("enabled" is
 * read by both), and the evidence names of its threshold and of a value
 * that cannot be read. */
static const struct {
  const char *name;
  nl_monitor_kind kind;
  bool stream;
  const char *evidence, *unreadable;
} keys[NL_MON_KEY_COUNT] = {
    [NL_MON_ENABLED] = {"enabled", NL_MON_BOOL, false, "enabled",
                        "unreadable_enabled"},
    [NL_MON_OUTSTANDING_ACK_CRITICAL] = {"outstanding-ack-critical", NL_MON_INT,
                                         false, "outstanding_ack_critical",
                                         "unreadable_outstanding_ack_critical"},
    [NL_MON_WAITING_CRITICAL] = {"waiting-critical", NL_MON_INT, false,
                                 "waiting_critical",
                                 "unreadable_waiting_critical"},
    [NL_MON_UNPROCESSED_CRITICAL] = {"unprocessed-critical", NL_MON_INT, false,
                                     "unprocessed_critical",
                                     "unreadable_unprocessed_critical"},
    [NL_MON_REDELIVERY_CRITICAL] = {"redelivery-critical", NL_MON_INT, false,
                                    "redelivery_critical",
                                    "unreadable_redelivery_critical"},
    [NL_MON_LAST_DELIVERY_CRITICAL] = {"last-delivery-critical",
                                       NL_MON_DURATION, false,
                                       "last_delivery_critical_s",
                                       "unreadable_last_delivery_critical"},
    [NL_MON_LAST_ACK_CRITICAL] = {"last-ack-critical", NL_MON_DURATION, false,
                                  "last_ack_critical_s",
                                  "unreadable_last_ack_critical"},
    [NL_MON_MSGS_WARN] = {"msgs-warn", NL_MON_UINT, true, "msgs_warn",
                          "unreadable_msgs_warn"},
    [NL_MON_MSGS_CRITICAL] = {"msgs-critical", NL_MON_UINT, true,
                              "msgs_critical", "unreadable_msgs_critical"},
    [NL_MON_SUBJECTS_WARN] = {"subjects-warn", NL_MON_INT, true,
                              "subjects_warn", "unreadable_subjects_warn"},
    [NL_MON_SUBJECTS_CRITICAL] = {"subjects-critical", NL_MON_INT, true,
                                  "subjects_critical",
                                  "unreadable_subjects_critical"},
    [NL_MON_LAG_CRITICAL] = {"lag-critical", NL_MON_UINT, true, "lag_critical",
                             "unreadable_lag_critical"},
    [NL_MON_SEEN_CRITICAL] = {"seen-critical", NL_MON_DURATION, true,
                              "seen_critical_s", "unreadable_seen_critical"},
    [NL_MON_MIN_SOURCES] = {"min-sources", NL_MON_INT, true, "min_sources",
                            "unreadable_min_sources"},
    [NL_MON_MAX_SOURCES] = {"max-sources", NL_MON_INT, true, "max_sources",
                            "unreadable_max_sources"},
    [NL_MON_PEER_EXPECT] = {"peer-expect", NL_MON_INT, true, "peer_expect",
                            "unreadable_peer_expect"},
    [NL_MON_PEER_LAG_CRITICAL] = {"peer-lag-critical", NL_MON_UINT, true,
                                  "peer_lag_critical",
                                  "unreadable_peer_lag_critical"},
    [NL_MON_PEER_SEEN_CRITICAL] = {"peer-seen-critical", NL_MON_DURATION, true,
                                   "peer_seen_critical_s",
                                   "unreadable_peer_seen_critical"},
};

const char *nl_monitor_key_evidence(nl_monitor_key key) {
  return (unsigned)key < NL_MON_KEY_COUNT ? keys[key].evidence : "threshold";
}

const char *nl_monitor_key_unreadable(nl_monitor_key key) {
  return (unsigned)key < NL_MON_KEY_COUNT ? keys[key].unreadable : "unreadable";
}

const char *nl_monitor_key_name(nl_monitor_key key) {
  return (unsigned)key < NL_MON_KEY_COUNT ? keys[key].name : "";
}

nl_monitor_kind nl_monitor_key_kind(nl_monitor_key key) {
  return (unsigned)key < NL_MON_KEY_COUNT ? keys[key].kind : NL_MON_INT;
}

/* Reads the digits at text to their end into *out. Returns 0, or -1 when
 * there is no digit, anything else follows, or the number passes max. */
static int digits(const char *text, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (*text == '\0')
    return -1;
  for (; *text != '\0'; text++) {
    if (!isdigit((unsigned char)*text))
      return -1;
    unsigned d = (unsigned)(*text - '0');
    if (v > (max - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* Go's strconv.Atoi on a 64-bit build: an optional sign, then digits. */
static int go_atoi(const char *text, int64_t *out) {
  bool neg = *text == '-';
  if (*text == '-' || *text == '+')
    text++;
  uint64_t v;
  if (digits(text, neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v) !=
      0)
    return -1;
  *out = neg ? (int64_t)(0 - v) : (int64_t)v;
  return 0;
}

/* Go's strconv.ParseBool. */
static int go_bool(const char *text, int64_t *out) {
  static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
  static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
  for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
    if (strcmp(text, yes[i]) == 0 || strcmp(text, no[i]) == 0) {
      *out = strcmp(text, yes[i]) == 0;
      return 0;
    }
  }
  return -1;
}

/* The length of a duration unit in nanoseconds, as jsm.go's ParseDuration
 * knows it (Go's units, and w, d, M, y of 7, 1, 30 and 365 days of 24 h),
 * or 0 for an unknown unit. Case matters as there ("M" is a month). */
static double unit_ns(const char *unit, size_t n) {
  static const struct {
    const char *name;
    double ns;
  } units[] = {{"ns", 1},           {"us", 1e3},         {"ms", 1e6},
               {"s", 1e9},          {"m", 60e9},         {"h", 3600e9},
               {"d", 86400e9},      {"D", 86400e9},      {"w", 7 * 86400e9},
               {"W", 7 * 86400e9},  {"M", 30 * 86400e9}, {"y", 365 * 86400e9},
               {"Y", 365 * 86400e9}};
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
    if (strlen(units[i].name) == n && strncmp(unit, units[i].name, n) == 0)
      return units[i].ns;
  return 0;
}

/* jsm.go's ParseDuration, strictly: "0", or an optional sign followed by
 * number-unit pairs ("90s", "1h30m", "1.5d") with nothing between or
 * around them but spaces at the ends. Sets *out in nanoseconds, negative
 * with a leading "-". */
static int jsm_duration(const char *text, int64_t *out) {
  if (strcmp(text, "0") == 0) {
    *out = 0;
    return 0;
  }
  while (isspace((unsigned char)*text))
    text++;
  size_t len = strlen(text);
  while (len > 0 && isspace((unsigned char)text[len - 1]))
    len--;
  const char *p = text, *end = text + len;
  bool neg = p < end && *p == '-';
  if (p < end && (*p == '-' || *p == '+'))
    p++;
  if (p == end)
    return -1;
  double total = 0;
  while (p < end) {
    char number[32];
    size_t n = 0, dots = 0, figures = 0;
    for (; p < end && (isdigit((unsigned char)*p) || *p == '.'); p++) {
      dots += *p == '.';
      figures += *p != '.';
      if (n + 1 < sizeof(number))
        number[n++] = *p;
    }
    number[n] = '\0';
    const char *unit = p;
    while (p < end && isalpha((unsigned char)*p))
      p++;
    double scale = unit_ns(unit, (size_t)(p - unit));
    if (figures == 0 || dots > 1 || n + 1 >= sizeof(number) || scale == 0)
      return -1;
    total += strtod(number, NULL) * scale;
    if (total > 9.2e18)
      return -1;
  }
  *out = neg ? -(int64_t)total : (int64_t)total;
  return 0;
}

int nl_monitor_parse(nl_monitor_kind kind, const char *text,
                     nl_monitor_value *out, char *err, size_t errlen) {
  nl_monitor_value v = {.set = true};
  int rc = -1;
  const char *want = "";
  switch (kind) {
  case NL_MON_INT:
    rc = go_atoi(text, &v.n);
    want = "a whole number";
    break;
  case NL_MON_UINT:
    rc = digits(text, UINT64_MAX, &v.u);
    want = "a whole number of at least 0, digits only";
    break;
  case NL_MON_DURATION:
    rc = jsm_duration(text, &v.n);
    want = "a duration such as 30s, 5m, 1h30m or 1d";
    break;
  case NL_MON_BOOL:
    rc = go_bool(text, &v.n);
    want = "true or false";
    break;
  }
  if (rc != 0) {
    snprintf(err, errlen, "natscli needs %s", want);
    return -1;
  }
  *out = v;
  return 0;
}

void nl_monitor_read(const nl_meta *meta, size_t n, bool stream,
                     nl_monitor *out) {
  const size_t plen = strlen(NL_MONITOR_PREFIX);
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < n; i++) {
    if (strncmp(meta[i].key, NL_MONITOR_PREFIX, plen) != 0)
      continue;
    const char *name = meta[i].key + plen;
    for (int k = 0; k < NL_MON_KEY_COUNT; k++) {
      if (strcmp(name, keys[k].name) != 0 ||
          (k != NL_MON_ENABLED && keys[k].stream != stream))
        continue;
      char why[sizeof(out->bad_reason)];
      if (nl_monitor_parse(keys[k].kind, meta[i].value, &out->v[k], why,
                           sizeof(why)) != 0 &&
          out->bad_key == NULL) {
        out->bad = (nl_monitor_key)k;
        out->bad_key = meta[i].key;
        out->bad_value = meta[i].value;
        snprintf(out->bad_reason, sizeof(out->bad_reason), "%s", why);
      }
    }
  }
}

bool nl_monitor_disabled(const nl_monitor *m) {
  return m->v[NL_MON_ENABLED].set && m->v[NL_MON_ENABLED].n == 0;
}

bool nl_monitor_any(const nl_monitor *m) {
  if (m->bad_key != NULL)
    return true;
  for (int k = NL_MON_ENABLED + 1; k < NL_MON_KEY_COUNT; k++)
    if (m->v[k].set)
      return true;
  return false;
}
