/* nl_expect.c: declared expectations from consumer metadata and from
 * expectation specs. */
#include "nl_expect.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads one unit at *p ("ns", "us", "µs", "ms", "s", "m", "h"), advancing
 * p. Returns the unit in nanoseconds, or 0 when none is known. */
static double duration_unit(const char **p) {
  static const struct {
    const char *name;
    double ns;
  } units[] = {{"ns", 1},  {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6},
               {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
  /* Two-letter units first, so "ms" is not read as "m". */
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    size_t n = strlen(units[i].name);
    if (strncmp(*p, units[i].name, n) == 0) {
      *p += n;
      return units[i].ns;
    }
  }
  return 0;
}

/* Reads a non-negative decimal number at *p, advancing p. Returns 0, or -1
 * when no digit is there. */
static int decimal(const char **p, double *out) {
  const char *s = *p;
  double v = 0, scale = 1;
  bool any = false, frac = false;
  for (; isdigit((unsigned char)*s) || (*s == '.' && !frac); s++) {
    if (*s == '.') {
      frac = true;
      continue;
    }
    any = true;
    if (frac) {
      scale /= 10;
      v += (*s - '0') * scale;
    } else {
      v = v * 10 + (*s - '0');
    }
  }
  if (!any)
    return -1;
  *p = s;
  *out = v;
  return 0;
}

int nl_parse_duration(const char *text, int64_t *out_ns) {
  if (text == NULL || *text == '\0')
    return -1;
  const char *p = text;
  double total = 0, v;
  if (decimal(&p, &v) != 0)
    return -1;
  if (*p == '\0') {
    total = v * 1e9; /* A bare number is seconds. */
  } else {
    for (;;) {
      double unit = duration_unit(&p);
      if (unit == 0)
        return -1;
      total += v * unit;
      if (*p == '\0')
        break;
      if (decimal(&p, &v) != 0)
        return -1;
    }
  }
  if (!(total >= 1) || total > 9.2e18)
    return -1;
  /* Rounded half up by hand: llround() alone would make the plugin load
   * libm, hundreds of kB of collectd's resident memory. */
  int64_t ns = (int64_t)total;
  *out_ns = total - (double)ns >= 0.5 ? ns + 1 : ns;
  return 0;
}

bool nl_expect_key_known(const char *key) {
  return strcmp(key, "max_processing") == 0 || strcmp(key, "workers") == 0 ||
         strcmp(key, "dead_letter") == 0;
}

/* Reads a whole number of workers (1 to 1000000). Returns 0, or -1. */
static int parse_workers(const char *value, int64_t *out) {
  char *end = NULL;
  if (!isdigit((unsigned char)value[0]))
    return -1;
  long long v = strtoll(value, &end, 10);
  if (*end != '\0' || v < 1 || v > 1000000)
    return -1;
  *out = v;
  return 0;
}

int nl_expect_check_value(const char *key, const char *value, char *err,
                          size_t errlen) {
  int64_t v;
  if (strcmp(key, "max_processing") == 0) {
    if (nl_parse_duration(value, &v) != 0) {
      snprintf(err, errlen,
               "max_processing needs a duration such as 30s, 2m or 1m30s");
      return -1;
    }
  } else if (strcmp(key, "workers") == 0) {
    if (parse_workers(value, &v) != 0) {
      snprintf(err, errlen, "workers needs a whole number from 1 to 1000000");
      return -1;
    }
  } else if (strcmp(key, "dead_letter") == 0) {
    if (value[0] == '\0') {
      snprintf(err, errlen,
               "dead_letter needs a non-empty text naming where exhausted "
               "messages go");
      return -1;
    }
  } else {
    snprintf(err, errlen,
             "unknown key (known: max_processing, workers, dead_letter)");
    return -1;
  }
  return 0;
}

/* Where the first declaration that could not be read goes (the bad_*
 * fields of nl_expectations and nl_stream_expectations). */
typedef struct {
  const char **key;
  const char **value;
  char *reason;
  size_t reason_len;
} bad_declaration;

/* The declarations one kind of object reads: which keys it knows, how a
 * value is checked, and what a checked value sets (in ud). */
typedef struct {
  bool (*known)(const char *key);
  int (*check)(const char *key, const char *value, char *err, size_t errlen);
  void (*take)(const char *key, const char *value, void *ud);
} declaration_kind;

/* Reads the n metadata entries of meta as declarations of kind k: each
 * known "nats_lens." key with a value that checks is taken into ud;
 * unknown keys are ignored; the first that does not check goes into bad
 * (whose key stays NULL when all were read). */
static void read_declarations(const nl_meta *meta, size_t n,
                              const declaration_kind *k, void *ud,
                              bad_declaration bad) {
  const size_t plen = strlen(NL_EXPECT_PREFIX);
  for (size_t i = 0; i < n; i++) {
    if (strncmp(meta[i].key, NL_EXPECT_PREFIX, plen) != 0)
      continue;
    const char *key = meta[i].key + plen;
    const char *value = meta[i].value;
    if (!k->known(key))
      continue; /* Unknown declarations are ignored. */
    char why[128];
    if (k->check(key, value, why, sizeof(why)) != 0) {
      if (*bad.key == NULL) {
        *bad.key = key;
        *bad.value = value;
        snprintf(bad.reason, bad.reason_len, "%s", why);
      }
      continue;
    }
    k->take(key, value, ud);
  }
}

/* Sets a consumer declaration that checked into the nl_expectations ud. */
static void take_consumer(const char *key, const char *value, void *ud) {
  nl_expectations *out = ud;
  if (strcmp(key, "max_processing") == 0)
    nl_parse_duration(value, &out->max_processing_ns);
  else if (strcmp(key, "workers") == 0)
    parse_workers(value, &out->workers);
  else
    out->dead_letter = value;
}

void nl_expect_read(const nl_consumer_snap *c, nl_expectations *out) {
  static const declaration_kind kind = {nl_expect_key_known,
                                        nl_expect_check_value, take_consumer};
  memset(out, 0, sizeof(*out));
  read_declarations(c->meta, c->n_meta, &kind, out,
                    (bad_declaration){&out->bad_key, &out->bad_value,
                                      out->bad_reason,
                                      sizeof(out->bad_reason)});
}

bool nl_expect_stream_key_known(const char *key) {
  return strcmp(key, "full_ok") == 0;
}

int nl_expect_stream_check_value(const char *key, const char *value, char *err,
                                 size_t errlen) {
  if (strcmp(key, "full_ok") != 0) {
    snprintf(err, errlen, "unknown stream key (known: full_ok)");
    return -1;
  }
  if (strcmp(value, "true") != 0 && strcmp(value, "false") != 0) {
    snprintf(err, errlen, "full_ok needs true or false");
    return -1;
  }
  return 0;
}

/* Sets a stream declaration that checked into the nl_stream_expectations
 * ud. */
static void take_stream(const char *key, const char *value, void *ud) {
  nl_stream_expectations *out = ud;
  (void)key; /* full_ok is the only stream declaration. */
  out->full_ok = strcmp(value, "true") == 0;
}

void nl_expect_stream_read(const nl_stream_snap *s,
                           nl_stream_expectations *out) {
  static const declaration_kind kind = {
      nl_expect_stream_key_known, nl_expect_stream_check_value, take_stream};
  memset(out, 0, sizeof(*out));
  read_declarations(s->meta, s->n_meta, &kind, out,
                    (bad_declaration){&out->bad_key, &out->bad_value,
                                      out->bad_reason,
                                      sizeof(out->bad_reason)});
}

void nl_expect_spec_free(nl_expect_spec *spec) {
  free(spec->stream_glob);
  free(spec->consumer_glob);
  free(spec->key);
  free(spec->value);
  memset(spec, 0, sizeof(*spec));
}

/* Returns a malloc'd copy of the n bytes at s, or NULL. */
static char *copy_n(const char *s, size_t n) {
  char *c = malloc(n + 1);
  if (c != NULL) {
    memcpy(c, s, n);
    c[n] = '\0';
  }
  return c;
}

int nl_expect_parse_spec(const char *arg, nl_expect_spec *out, char *err,
                         size_t errlen) {
  memset(out, 0, sizeof(*out));
  /* STREAM/CONSUMER:key=value. Names cannot hold '/', so the first one
   * splits them; the last ':' before the first '=' starts the key. */
  const char *slash = strchr(arg, '/');
  const char *eq = strchr(arg, '=');
  const char *colon = NULL;
  for (const char *p = slash ? slash + 1 : arg; eq && p < eq; p++)
    if (*p == ':')
      colon = p;
  if (slash == NULL || eq == NULL || colon == NULL || slash == arg ||
      colon == slash + 1 || eq == colon + 1) {
    snprintf(err, errlen,
             "\"%.200s\" is not STREAM/CONSUMER:key=value (for example "
             "ORDERS/worker:max_processing=30s)",
             arg);
    return -1;
  }
  const char *key = colon + 1;
  size_t klen = (size_t)(eq - key);
  const size_t plen = strlen(NL_EXPECT_PREFIX);
  if (klen > plen && strncmp(key, NL_EXPECT_PREFIX, plen) == 0) {
    key += plen;
    klen -= plen;
  }
  out->stream_glob = copy_n(arg, (size_t)(slash - arg));
  out->consumer_glob = copy_n(slash + 1, (size_t)(colon - slash - 1));
  out->key = copy_n(key, klen);
  out->value = strdup(eq + 1);
  if (out->stream_glob == NULL || out->consumer_glob == NULL ||
      out->key == NULL || out->value == NULL) {
    snprintf(err, errlen, "out of memory");
    nl_expect_spec_free(out);
    return -1;
  }
  char why[160];
  if (strlen(out->value) > NL_META_LEN_MAX) {
    snprintf(err, errlen, "\"%.200s\": the value is longer than %d bytes", arg,
             NL_META_LEN_MAX);
    nl_expect_spec_free(out);
    return -1;
  }
  if (nl_expect_check_value(out->key, out->value, why, sizeof(why)) != 0) {
    snprintf(err, errlen, "\"%.200s\": %s", arg, why);
    nl_expect_spec_free(out);
    return -1;
  }
  return 0;
}

size_t nl_expect_apply_streams(const nl_expect_spec *specs, size_t n,
                               nl_snapshot_set *set) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    char key[NL_META_LEN_MAX + 1];
    snprintf(key, sizeof(key), "%s%s", NL_EXPECT_PREFIX, specs[i].key);
    for (size_t j = 0; j < set->n_streams; j++) {
      nl_stream_snap *s = &set->streams[j];
      if (fnmatch(specs[i].stream_glob, s->name, 0) == 0 &&
          nl_stream_snap_set_meta(s, key, specs[i].value) == 0)
        total++;
    }
  }
  return total;
}

size_t nl_expect_apply(const nl_expect_spec *specs, size_t n,
                       nl_snapshot_set *set, size_t *matched) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    char key[NL_META_LEN_MAX + 1];
    snprintf(key, sizeof(key), "%s%s", NL_EXPECT_PREFIX, specs[i].key);
    if (matched != NULL)
      matched[i] = 0;
    for (size_t j = 0; j < set->n_consumers; j++) {
      nl_consumer_snap *c = &set->consumers[j];
      if (fnmatch(specs[i].stream_glob, c->stream, 0) != 0 ||
          fnmatch(specs[i].consumer_glob, c->name, 0) != 0)
        continue;
      if (nl_consumer_snap_set_meta(c, key, specs[i].value) != 0)
        continue;
      total++;
      if (matched != NULL)
        matched[i]++;
    }
  }
  return total;
}
