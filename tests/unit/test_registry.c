/* test_registry.c: the class table itself (detect/nl_classes.h) and the
 * options its rows carry (detect/nl_options.h). Every row of NL_CLASS_LIST
 * has exactly one definition, whose operations match its scope; the
 * precedence masks form no circle and suppress only classes of their own
 * scope, as docs/detectors.md names them; every audit rule a class names
 * maps back to it, with the severity the audit gives it; option keys are
 * unique, each default is in its option's range, and nl_option_set takes
 * each kind of option at its boundaries. */
#include "core/detect/nl_audit.h"
#include "core/detect/nl_classes.h"
#include "core/detect/nl_options.h"
#include "nl_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A failed check of the case named label (its line and its expression). */
#define N_OF(a) (sizeof(a) / sizeof(*(a)))

/* The rows of NL_CLASS_LIST as written, with the definition each row
 * names (nl_class_<suffix>). */
typedef struct {
  nl_class cls;
  const char *id;
  const char *suffix;
  nl_severity severity;
  bool stream;
  const nl_class_def *def;
} row;

static const row rows[] = {
#define NL_ROW(id, suffix, sev, scope)                                         \
  {NL_##id,           #id, #suffix, NL_SEVERITY_##sev, NL_SCOPE_##scope,       \
   &nl_class_##suffix},
#define NL_SCOPE_CONSUMER false
#define NL_SCOPE_STREAM true
    NL_CLASS_LIST(NL_ROW)
#undef NL_ROW
};

static void test_registry_one_definition_per_row(void) {
  CHECK_EQ_U(N_OF(rows), NL_CLASS_COUNT);
  for (size_t i = 0; i < N_OF(rows); i++) {
    const row *r = &rows[i];
    const char *label = r->id;
    CHECK_CASE(label, r->cls == (nl_class)i);
    /* The table holds the definition the row names, and it is the row's. */
    CHECK_CASE(label, nl_class_defs[r->cls] == r->def);
    CHECK_CASE(label, r->def->cls == r->cls);
    /* No other entry of the table has this row's class, or its
     * definition. */
    int with_cls = 0, same_def = 0;
    for (int k = 0; k < NL_CLASS_COUNT; k++) {
      with_cls += nl_class_defs[k] != NULL && nl_class_defs[k]->cls == r->cls;
      same_def += nl_class_defs[k] == r->def;
    }
    CHECK_CASE(label, with_cls == 1 && same_def == 1);
    /* The names, severity and scope the rest of the code reads. */
    CHECK_CASE(label, strcmp(nl_class_name(r->cls), r->id) == 0);
    CHECK_CASE(label, strcmp(nl_class_type_suffix(r->cls), r->suffix) == 0);
    CHECK_CASE(label, nl_class_severity(r->cls) == r->severity);
    CHECK_CASE(label, nl_class_is_stream(r->cls) == r->stream);
  }
}

static void test_registry_ops_match_scope(void) {
  for (size_t i = 0; i < N_OF(rows); i++) {
    const row *r = &rows[i];
    const nl_class_def *d = r->def;
    const char *label = r->id;
    bool consumer_ops = d->detect || d->configured || d->advised;
    bool stream_ops = d->detect_stream || d->missing;
    if (r->stream) {
      /* Judged per stream: no consumer operation at all. */
      CHECK_CASE(label, stream_ops);
      CHECK_CASE(label, !consumer_ops && !d->record && !d->gone);
    } else {
      /* Judged per consumer: no stream operation or stream event. */
      CHECK_CASE(label, consumer_ops);
      CHECK_CASE(label, !stream_ops && !d->key && !d->after_sweep);
      /* A stream event forgets only what the class keeps for its
       * consumers' stream: what they leave when gone. */
      CHECK_CASE(label,
                 d->forget == 0 || (d->gone != NULL && d->gone_to == r->cls));
    }
    /* What a consumer leaves goes to a stream class, or to what a consumer
     * class keeps for the stream, and only from a class with a state. */
    if (d->gone != NULL) {
      CHECK_CASE(label,
                 (unsigned)d->gone_to < NL_CLASS_COUNT &&
                     (nl_class_is_stream(d->gone_to) || d->gone_to == r->cls));
      CHECK_CASE(label, d->state_size > 0);
    }
    /* A release frees what a state points to: there must be a state. */
    if (d->release != NULL)
      CHECK_CASE(label, d->state_size > 0);
    /* A debounce needs a number of polls or a time, both sane. */
    CHECK_CASE(label, d->raise_s >= 0);
    CHECK_CASE(label, d->audit_rules >> NL_AUDIT_CLASS_COUNT == 0);
  }
}

/* The suppressions docs/detectors.md names: a class raised suppresses the
 * traffic findings of the others. */
static const struct {
  nl_class by;
  nl_class_mask suppresses;
} documented_masks[] = {
    {NL_NAK_STORM,
     NL_CLASS_BIT(NL_ACK_WAIT_VIOLATION) | NL_CLASS_BIT(NL_MISSING_PROGRESS)},
    {NL_ACK_WAIT_VIOLATION, NL_CLASS_BIT(NL_MISSING_PROGRESS)},
    {NL_SEQUENCE_GAP, NL_CLASS_BIT(NL_RETENTION_RISK)},
    {NL_INTEREST_NO_CONSUMERS, NL_CLASS_BIT(NL_MESSAGES_STRANDED)},
    {NL_STORAGE_LIMIT_REACHED, NL_CLASS_BIT(NL_STORAGE_LIMIT_RISK)},
};

static void test_registry_precedence(void) {
  nl_class order[NL_CLASS_COUNT];
  CHECK(nl_class_precedence(order));
  /* A permutation of the classes. */
  int pos[NL_CLASS_COUNT];
  for (int c = 0; c < NL_CLASS_COUNT; c++)
    pos[c] = -1;
  for (int k = 0; k < NL_CLASS_COUNT; k++) {
    CHECK((unsigned)order[k] < NL_CLASS_COUNT);
    if ((unsigned)order[k] < NL_CLASS_COUNT) {
      CHECK(pos[order[k]] == -1);
      pos[order[k]] = k;
    }
  }
  for (int a = 0; a < NL_CLASS_COUNT; a++) {
    const char *label = nl_class_name((nl_class)a);
    nl_class_mask mask = nl_class_defs[a]->suppresses;
    CHECK_CASE(label, mask >> NL_CLASS_COUNT == 0);
    CHECK_CASE(label, (mask & NL_CLASS_BIT(a)) == 0);
    for (int b = 0; b < NL_CLASS_COUNT; b++) {
      if ((mask & NL_CLASS_BIT(b)) == 0)
        continue;
      /* Before what it suppresses, and of the same scope. */
      CHECK_CASE(label, pos[a] >= 0 && pos[b] >= 0 && pos[a] < pos[b]);
      CHECK_CASE(label,
                 nl_class_is_stream((nl_class)a) == nl_class_is_stream(b));
    }
    /* Exactly the masks the documentation names. */
    nl_class_mask documented = 0;
    for (size_t i = 0; i < N_OF(documented_masks); i++)
      if (documented_masks[i].by == (nl_class)a)
        documented = documented_masks[i].suppresses;
    CHECK_CASE(label, mask == documented);
  }
}

/* Appends a stream named name to set, with the audit's safe defaults. */
static nl_stream_snap *audit_stream(nl_snapshot_set *set, const char *name) {
  nl_stream_snap *s = nl_snapshot_set_add_stream(set);
  s->name = strdup(name);
  s->max_msgs = s->max_bytes = -1;
  s->replicas = 1;
  s->consumers_complete = true;
  s->consumer_count = 1;
  return s;
}

/* Appends a durable explicit-ack pull consumer of stream index stream. */
static nl_consumer_snap *audit_consumer(nl_snapshot_set *set, size_t stream,
                                        const char *name) {
  nl_consumer_snap *c = nl_snapshot_set_add_consumer(set);
  c->stream = strdup(set->streams[stream].name);
  c->name = strdup(name);
  c->stream_index = stream;
  c->durable = true;
  c->ack_wait_ns = 30000000000LL;
  c->max_deliver = 5;
  c->max_ack_pending = 1000;
  return c;
}

/* A set that breaks every rule a class raises from: a single-replica
 * stream in a cluster whose consumer list is incomplete, an ack-none
 * consumer, an ack-all one with two pull requests waiting, one declaring
 * a processing time past ack_wait, an interest stream without consumers,
 * a consumer of one replica on a stream of three, and a missing stream. */
static void break_every_rule(nl_snapshot_set *set) {
  nl_stream_snap *s = audit_stream(set, "S");
  s->cluster = strdup("C1");
  s->consumers_complete = false;
  audit_consumer(set, 0, "none")->ack_policy = NL_ACK_NONE;
  nl_consumer_snap *c = audit_consumer(set, 0, "all");
  c->ack_policy = NL_ACK_ALL;
  c->num_waiting = 2;
  c = audit_consumer(set, 0, "declared");
  c->ack_wait_ns = 2000000000LL;
  CHECK(nl_consumer_snap_set_meta(c, "nats_lens.max_processing", "5s") == 0);
  nl_stream_snap *in = audit_stream(set, "IN");
  in->retention = NL_RETENTION_INTEREST;
  in->consumer_count = 0;
  nl_stream_snap *r3 = audit_stream(set, "R3");
  r3->cluster = strdup("C1");
  r3->replicas = 3;
  audit_consumer(set, 2, "one")->num_replicas = 1;
  CHECK(nl_snapshot_set_add_missing(set, "GONE") == 0);
}

static void test_registry_audit_rules(void) {
  nl_snapshot_set set = {0};
  break_every_rule(&set);
  nl_audit_params p;
  nl_audit_params_default(&p);
  nl_audit_result r = {0};
  CHECK(nl_audit_run(&set, NULL, &p, &r) == 0);
  unsigned claimed = 0, by_scope[2] = {0, 0};
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    const nl_class_def *d = nl_class_defs[cls];
    const char *label = nl_class_name((nl_class)cls);
    bool stream = nl_class_is_stream((nl_class)cls);
    /* No rule is claimed by two classes. */
    CHECK_CASE(label, (claimed & d->audit_rules) == 0);
    claimed |= d->audit_rules;
    by_scope[stream] |= d->audit_rules;
    for (int rule = 0; rule < NL_AUDIT_CLASS_COUNT; rule++) {
      if ((d->audit_rules & (1u << rule)) == 0)
        continue;
      char rule_label[96];
      snprintf(rule_label, sizeof(rule_label), "%s from %s", label,
               nl_audit_class_name((nl_audit_class)rule));
      CHECK_CASE(rule_label,
                 nl_class_of_audit_rule((nl_audit_class)rule) == (nl_class)cls);
      /* The audit raises the rule on this set, always with the class's
       * severity, about a consumer for a consumer class and about the
       * stream for a stream class. */
      int found = 0;
      for (size_t i = 0; i < r.n; i++) {
        if (r.items[i].cls != (nl_audit_class)rule)
          continue;
        found++;
        CHECK_CASE(rule_label,
                   r.items[i].f.severity == nl_class_severity((nl_class)cls));
        CHECK_CASE(rule_label, (r.items[i].consumer == NULL) == stream);
      }
      CHECK_CASE(rule_label, found > 0);
    }
  }
  /* The rules no class names map to none. */
  for (int rule = 0; rule < NL_AUDIT_CLASS_COUNT; rule++)
    if ((claimed & (1u << rule)) == 0)
      CHECK_CASE(nl_audit_class_name((nl_audit_class)rule),
                 nl_class_of_audit_rule((nl_audit_class)rule) ==
                     NL_CLASS_COUNT);
  /* Each scope runs the rules of its classes. */
  CHECK_EQ_U(nl_class_audit_rules(false), by_scope[0]);
  CHECK_EQ_U(nl_class_audit_rules(true), by_scope[1]);
  CHECK_EQ_U(by_scope[0] & by_scope[1], 0);
  nl_audit_result_free(&r);
  nl_snapshot_set_clear(&set);
}

/* Every option, collected by nl_option_each. */
typedef struct {
  const nl_option *o[64];
  size_t n;
} option_list;

static void collect(const nl_option *o, void *ud) {
  option_list *l = ud;
  if (l->n < N_OF(l->o))
    l->o[l->n] = o;
  l->n++;
}

/* The value of o's field in p. */
static double field_of(const nl_option *o, const nl_detect_params *p) {
  const char *field = (const char *)p + o->offset;
  if (o->kind == NL_OPTION_WHOLE)
    return *(const unsigned *)field;
  return *(const double *)field;
}

static void test_registry_options(void) {
  option_list l = {.n = 0};
  nl_option_each(collect, &l);
  CHECK(l.n > 0 && l.n <= N_OF(l.o));
  nl_detect_params defaults;
  nl_detect_params_default(&defaults);
  for (size_t i = 0; i < l.n && i < N_OF(l.o); i++) {
    const nl_option *o = l.o[i];
    const char *label = o->key;
    /* Unique keys (the glue reads them case-insensitively), and fields. */
    for (size_t j = 0; j < i; j++) {
      CHECK_CASE(label, strcasecmp(l.o[j]->key, o->key) != 0);
      CHECK_CASE(label, l.o[j]->offset != o->offset);
    }
    CHECK_CASE(label, nl_option_find(o->key) == o);
    CHECK_CASE(label,
               o->offset + (o->kind == NL_OPTION_WHOLE ? sizeof(unsigned)
                                                       : sizeof(double)) <=
                   sizeof(nl_detect_params));
    /* Its default is what the defaults hold, and within its range. */
    CHECK_CASE(label, field_of(o, &defaults) == o->def);
    nl_detect_params p = defaults;
    char why[128] = "";
    CHECK_CASE(label, nl_option_set(o, &p, o->def, why, sizeof(why)) == 0);
    CHECK_CASE(label, field_of(o, &p) == o->def);
    CHECK_CASE(label, o->max >= 1);
  }
  /* The engine's own: the clearing hold, 30 s by default. */
  const nl_option *hold = nl_option_find("clearholdseconds");
  CHECK(hold != NULL && hold->kind == NL_OPTION_OR_ZERO && hold->def == 30.0);
  CHECK(defaults.clear_hold_s == 30.0);
}

/* A value given to nl_option_set, against an option's largest value. */
typedef enum {
  V_NEGATIVE,      /* -1 */
  V_ZERO,          /* 0 */
  V_SMALLEST,      /* The smallest positive double. */
  V_HALF,          /* 0.5 */
  V_ONE,           /* 1 */
  V_ONE_AND_A_BIT, /* 1.9: a whole number takes 1. */
  V_MAX,           /* The option's max. */
  V_MAX_AND_A_BIT, /* max + 0.5: a whole number takes max. */
  V_ABOVE_MAX,     /* max + 1 for a whole number, the next double above. */
  V_NAN,
} value_form;

static double value_of(value_form v, const nl_option *o) {
  switch (v) {
  case V_NEGATIVE:
    return -1;
  case V_ZERO:
    return 0;
  case V_SMALLEST:
    return nextafter(0.0, 1.0);
  case V_HALF:
    return 0.5;
  case V_ONE:
    return 1;
  case V_ONE_AND_A_BIT:
    return 1.9;
  case V_MAX:
    return o->max;
  case V_MAX_AND_A_BIT:
    return o->max + 0.5;
  case V_ABOVE_MAX:
    return o->kind == NL_OPTION_WHOLE ? o->max + 1
                                      : nextafter(o->max, INFINITY);
  case V_NAN:
    return NAN;
  }
  return 0;
}

/* One boundary of one kind of option: taken or not, and what is stored. */
typedef struct {
  const char *name;
  nl_option_kind kind;
  value_form value;
  bool taken;
  value_form stored;
} set_case;

static const set_case set_cases[] = {
    /* Whole numbers: at least 1, at most max, the whole part taken. */
    {"whole: 0", NL_OPTION_WHOLE, V_ZERO, false, V_ZERO},
    {"whole: -1", NL_OPTION_WHOLE, V_NEGATIVE, false, V_ZERO},
    {"whole: 0.5 (whole part 0)", NL_OPTION_WHOLE, V_HALF, false, V_ZERO},
    {"whole: 1", NL_OPTION_WHOLE, V_ONE, true, V_ONE},
    {"whole: 1.9 takes 1", NL_OPTION_WHOLE, V_ONE_AND_A_BIT, true, V_ONE},
    {"whole: max", NL_OPTION_WHOLE, V_MAX, true, V_MAX},
    {"whole: max + 1", NL_OPTION_WHOLE, V_ABOVE_MAX, false, V_ZERO},
    {"whole: NaN", NL_OPTION_WHOLE, V_NAN, false, V_ZERO},
    /* Numbers: greater than 0, at most max. */
    {"number: 0", NL_OPTION_NUMBER, V_ZERO, false, V_ZERO},
    {"number: -1", NL_OPTION_NUMBER, V_NEGATIVE, false, V_ZERO},
    {"number: the smallest positive", NL_OPTION_NUMBER, V_SMALLEST, true,
     V_SMALLEST},
    {"number: max", NL_OPTION_NUMBER, V_MAX, true, V_MAX},
    {"number: above max", NL_OPTION_NUMBER, V_ABOVE_MAX, false, V_ZERO},
    {"number: NaN", NL_OPTION_NUMBER, V_NAN, false, V_ZERO},
    /* Numbers or zero: at least 0, at most max. */
    {"or zero: 0", NL_OPTION_OR_ZERO, V_ZERO, true, V_ZERO},
    {"or zero: -1", NL_OPTION_OR_ZERO, V_NEGATIVE, false, V_ZERO},
    {"or zero: the smallest positive", NL_OPTION_OR_ZERO, V_SMALLEST, true,
     V_SMALLEST},
    {"or zero: max", NL_OPTION_OR_ZERO, V_MAX, true, V_MAX},
    {"or zero: above max", NL_OPTION_OR_ZERO, V_ABOVE_MAX, false, V_ZERO},
    {"or zero: NaN", NL_OPTION_OR_ZERO, V_NAN, false, V_ZERO},
};

static void test_registry_option_set_boundaries(void) {
  option_list l = {.n = 0};
  nl_option_each(collect, &l);
  bool kinds[3] = {false, false, false};
  for (size_t i = 0; i < l.n && i < N_OF(l.o); i++) {
    const nl_option *o = l.o[i];
    kinds[o->kind] = true;
    for (size_t k = 0; k < N_OF(set_cases); k++) {
      const set_case *c = &set_cases[k];
      if (c->kind != o->kind)
        continue;
      char label[128];
      snprintf(label, sizeof(label), "%s, %s", o->key, c->name);
      nl_detect_params p;
      nl_detect_params_default(&p);
      char why[128];
      memset(why, 'x', sizeof(why));
      int rc = nl_option_set(o, &p, value_of(c->value, o), why, sizeof(why));
      CHECK_CASE(label, (rc == 0) == c->taken);
      if (c->taken) {
        CHECK_CASE(label, field_of(o, &p) == value_of(c->stored, o));
      } else {
        /* Refused: the field keeps its default, and why says what the
         * option needs. */
        CHECK_CASE(label, rc == -1 && field_of(o, &p) == o->def);
        CHECK_CASE(label, memchr(why, '\0', sizeof(why)) != NULL);
        CHECK_CASE(label, strncmp(why, "needs ", 6) == 0 ||
                              strncmp(why, "can be at most ", 15) == 0);
      }
    }
    /* Above max but whose whole part is max: taken as max, where max is a
     * number an int holds with room above it. */
    if (o->kind == NL_OPTION_WHOLE && o->max < 2147483647.0) {
      nl_detect_params p;
      nl_detect_params_default(&p);
      char why[128];
      CHECK_CASE(o->key, nl_option_set(o, &p, value_of(V_MAX_AND_A_BIT, o), why,
                                       sizeof(why)) == 0 &&
                             field_of(o, &p) == o->max);
    }
  }
  /* Every kind of option is in the table. */
  CHECK(kinds[NL_OPTION_WHOLE] && kinds[NL_OPTION_NUMBER] &&
        kinds[NL_OPTION_OR_ZERO]);
  /* ClearHoldSeconds takes 0: findings clear after 2 polls alone. */
  nl_detect_params p;
  nl_detect_params_default(&p);
  char why[128];
  CHECK(nl_option_set(nl_option_find("ClearHoldSeconds"), &p, 0, why,
                      sizeof(why)) == 0 &&
        p.clear_hold_s == 0);
}

static const nl_test_case tests[] = {
    NL_TEST(test_registry_one_definition_per_row),
    NL_TEST(test_registry_ops_match_scope),
    NL_TEST(test_registry_precedence),
    NL_TEST(test_registry_audit_rules),
    NL_TEST(test_registry_options),
    NL_TEST(test_registry_option_set_boundaries),
};

NL_TEST_MAIN(tests)
