/* nl_trend.c: whether a value has risen steadily, and over how long. */
#include "nl_trend.h"

#include <string.h>

void nl_trend_init(nl_trend *t, int64_t bucket_ns) {
  memset(t, 0, sizeof(*t));
  t->base_ns = bucket_ns > 0 ? bucket_ns : 1;
  t->bucket_ns = t->base_ns;
}

/* Closes the open bucket: a low below the previous one restarts the rise
 * from this bucket; a full set of points merges pairwise. */
static void close_bucket(nl_trend *t) {
  if (t->n > 0 && t->open_low < t->low[t->n - 1]) {
    t->n = 0;
    t->bucket_ns = t->base_ns;
  }
  if (t->n == NL_TREND_POINTS) {
    /* The lows never fall, so each pair's low is its earlier point. */
    for (unsigned i = 0; i < NL_TREND_POINTS / 2; i++) {
      t->t_ns[i] = t->t_ns[2 * i];
      t->low[i] = t->low[2 * i];
    }
    t->n = NL_TREND_POINTS / 2;
    t->bucket_ns *= 2;
  }
  t->t_ns[t->n] = t->open_ns;
  t->low[t->n] = t->open_low;
  t->n++;
  t->open = false;
}

void nl_trend_add(nl_trend *t, int64_t now_ns, double v) {
  if (t->open && now_ns < t->open_ns) {
    int64_t base = t->base_ns;
    nl_trend_init(t, base);
  }
  if (t->open && now_ns - t->open_ns >= t->bucket_ns)
    close_bucket(t);
  t->last_ns = now_ns;
  if (!t->open) {
    t->open = true;
    t->open_ns = now_ns;
    t->open_low = v;
  } else if (v < t->open_low) {
    t->open_low = v;
  }
}

bool nl_trend_rise(const nl_trend *t, nl_rise *r) {
  if (t->n < 3 || !t->open || t->open_low < t->low[t->n - 1])
    return false;
  /* Over the whole span, and over the last two buckets and the open one:
   * a rise that has levelled off is no longer one. */
  double lows = (double)(t->open_ns - t->t_ns[0]) / 1e9;
  double recent = (double)(t->open_ns - t->t_ns[t->n - 2]) / 1e9;
  if (!(lows > 0) || !(recent > 0))
    return false;
  double whole = (t->open_low - t->low[0]) / lows;
  double late = (t->open_low - t->low[t->n - 2]) / recent;
  if (!(whole > 0) || !(late > 0))
    return false;
  r->growth_per_s = late < whole ? late : whole;
  /* The open bucket's low is its lowest value so far, the latest one
   * included: the rise has held up to the latest value. */
  r->span_s = (double)(t->last_ns - t->t_ns[0]) / 1e9;
  return true;
}
