/* nl_onset_rate.c: how many findings started within the last hour. */
#include "nl_onset_rate.h"

/* Minute numbers start at 1, so that a zeroed bucket belongs to none. */
static int64_t minute_of(int64_t ns) {
  return (ns < 0 ? 0 : ns / 60000000000LL) + 1;
}

void nl_onset_rate_add(nl_onset_rate *r, int64_t now_ns) {
  int64_t m = minute_of(now_ns);
  int i = (int)(m % NL_ONSET_RATE_MINUTES);
  if (r->minute[i] != m) {
    r->minute[i] = m;
    r->count[i] = 0;
  }
  if (r->count[i] < UINT32_MAX)
    r->count[i]++;
}

uint64_t nl_onset_rate_last_hour(const nl_onset_rate *r, int64_t now_ns) {
  int64_t m = minute_of(now_ns);
  uint64_t n = 0;
  for (int i = 0; i < NL_ONSET_RATE_MINUTES; i++)
    if (r->minute[i] > m - NL_ONSET_RATE_MINUTES && r->minute[i] <= m)
      n += r->count[i];
  return n;
}
