/* nl_onset_rate.h: how many findings started within the last hour.
 *
 * Sixty one-minute buckets: an operator sees a noisy deployment as one
 * number per instance (the value gauge-onsets_per_hour). */
#ifndef NL_ONSET_RATE_H
#define NL_ONSET_RATE_H

#include <stdint.h>

#define NL_ONSET_RATE_MINUTES 60

typedef struct {
  int64_t minute[NL_ONSET_RATE_MINUTES]; /* Minute number of each bucket. */
  uint32_t count[NL_ONSET_RATE_MINUTES];
} nl_onset_rate;

/* Counts one onset at now_ns. Zero-initialise r before the first call. */
void nl_onset_rate_add(nl_onset_rate *r, int64_t now_ns);

/* Returns the onsets counted in the hour up to now_ns (the current minute
 * and the 59 before it). */
uint64_t nl_onset_rate_last_hour(const nl_onset_rate *r, int64_t now_ns);

#endif
