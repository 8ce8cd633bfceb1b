/* nl_trend.h: whether a value has risen steadily, and over how long.
 *
 * A trend takes one value per poll and keeps the lowest value of each
 * bucket of time. A rise is sustained while no bucket's low falls below
 * the low of the bucket before: a batch that is drained, a burst, or noise
 * around a level breaks it. When the buckets fill during a long rise, each
 * pair merges into its earlier half and the bucket length doubles, so a
 * rise of any length is held in NL_TREND_POINTS points. Pure data, no
 * allocation. */
#ifndef NL_TREND_H
#define NL_TREND_H

#include <stdbool.h>
#include <stdint.h>

#define NL_TREND_POINTS 8

typedef struct {
  int64_t t_ns[NL_TREND_POINTS]; /* Start of each closed bucket. */
  double low[NL_TREND_POINTS];   /* Its lowest value. */
  uint8_t n;                     /* Closed buckets held, oldest first. */
  bool open;                     /* A bucket is being filled. */
  int64_t open_ns;               /* Its start. */
  int64_t last_ns;               /* The latest value's time. */
  double open_low;               /* Its lowest value so far. */
  int64_t bucket_ns;             /* Length of the buckets now. */
  int64_t base_ns;               /* Length after a restart. */
} nl_trend;

/* A sustained rise: from the oldest bucket held to now. */
typedef struct {
  double growth_per_s; /* Rise of the lows per second over the span. */
  double span_s;       /* How long it has been sustained. */
} nl_rise;

/* Starts an empty trend with buckets of bucket_ns (> 0). */
void nl_trend_init(nl_trend *t, int64_t bucket_ns);

/* Adds the value v seen at now_ns (times must not go back: a value older
 * than the open bucket restarts the trend). */
void nl_trend_add(nl_trend *t, int64_t now_ns, double v);

/* Returns true and fills *r when the trend holds a sustained rise: at least
 * three closed buckets whose lows never fall, the open bucket's low not
 * below the last of them, and a rise both over the whole span and over the
 * last two closed buckets and the open one (a rise that levelled off is
 * none). The growth is the smaller of the two rates. */
bool nl_trend_rise(const nl_trend *t, nl_rise *r);

#endif
