/* nl_options.c: the detectors' thresholds as configuration options (see
 * nl_options.h). */
#include "nl_options.h"

#include "nl_classes.h"

#include <stdio.h>
#include <strings.h>

/* The engine's own options: the clearing hold of every class. */
static const nl_option engine_options[] = {
    {"ClearHoldSeconds", NL_OPTION_OR_ZERO, 86400, NULL, 30.0,
     offsetof(nl_detect_params, clear_hold_s)},
    NL_OPTION_END,
};

void nl_option_each(void (*fn)(const nl_option *o, void *ud), void *ud) {
  for (const nl_option *o = engine_options; o->key != NULL; o++)
    fn(o, ud);
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    for (const nl_option *o = nl_class_defs[cls]->options; o && o->key; o++)
      fn(o, ud);
}

/* Sets o's field of p to v (no range check). */
static void set_field(const nl_option *o, nl_detect_params *p, double v) {
  char *field = (char *)p + o->offset;
  if (o->kind == NL_OPTION_WHOLE)
    *(unsigned *)field = (unsigned)v;
  else
    *(double *)field = v;
}

static void set_default(const nl_option *o, void *ud) {
  set_field(o, ud, o->def);
}

void nl_detect_params_default(nl_detect_params *p) {
  *p = (nl_detect_params){0};
  /* The thresholds no option sets. */
  p->ack_wait_min_share = 0.25;
  p->nak_adv_window_s = 5.0;
  p->nak_adv_min = 5;
  p->nak_adv_min_deliveries = 3;
  p->config_classes = false;
  nl_option_each(set_default, p);
}

typedef struct {
  const char *key;
  const nl_option *found;
} find_ctx;

static void find_one(const nl_option *o, void *ud) {
  find_ctx *f = ud;
  if (f->found == NULL && strcasecmp(o->key, f->key) == 0)
    f->found = o;
}

const nl_option *nl_option_find(const char *key) {
  find_ctx f = {key, NULL};
  nl_option_each(find_one, &f);
  return f.found;
}

int nl_option_set(const nl_option *o, nl_detect_params *p, double v, char *why,
                  size_t len) {
  if (o->kind == NL_OPTION_WHOLE) {
    /* The whole part, as collectd's integer options read a number. */
    double whole = v >= -2147483648.0 && v <= 2147483647.0 ? (double)(int)v : v;
    if (!(whole >= 1)) {
      snprintf(why, len, "needs a whole number of at least 1");
      return -1;
    }
    if (whole > o->max) {
      snprintf(why, len, "can be at most %g%s%s%s", o->max,
               o->max_why ? " (" : "", o->max_why ? o->max_why : "",
               o->max_why ? ")" : "");
      return -1;
    }
    set_field(o, p, whole);
    return 0;
  }
  bool zero_ok = o->kind == NL_OPTION_OR_ZERO;
  if (!(zero_ok ? v >= 0 : v > 0) || v > o->max) {
    snprintf(why, len, "needs a number %s 0 and at most %g",
             zero_ok ? "of at least" : "greater than", o->max);
    return -1;
  }
  set_field(o, p, v);
  return 0;
}
