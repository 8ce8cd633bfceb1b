/* nl_series.h: a consumer's longer history for charts: up to an hour of
 * polls downsampled into fixed steps, beside the detectors' short history.
 *
 * Each step keeps the largest num_pending and num_ack_pending and the sum
 * of redeliveries of the polls that fell into it. Pure: no locking. */
#ifndef NL_SERIES_H
#define NL_SERIES_H

#include <stdint.h>

#include <json-c/json.h>

/* Steps kept and their length: 120 steps of 30 s, one hour. */
#define NL_SERIES_STEPS 120
#define NL_SERIES_STEP_NS (30 * 1000000000LL)

typedef struct {
  int64_t start_ns; /* Start of the step (a multiple of NL_SERIES_STEP_NS). */
  uint32_t num_pending;
  uint32_t num_ack_pending;
  uint32_t redeliveries;
  uint32_t polls; /* Polls that fell into the step. */
} nl_series_step;

typedef struct {
  nl_series_step steps[NL_SERIES_STEPS];
  uint32_t n;    /* Steps held, at most NL_SERIES_STEPS. */
  uint32_t head; /* Index of the newest step. */
  int64_t last_poll_ns;
} nl_series;

/* Adds one poll taken at t_ns. A poll no later than the last one added is
 * ignored (the same poll offered twice); one that falls into the newest
 * step is merged into it; a later one starts a new step (the oldest is
 * dropped when all are held). Values above UINT32_MAX saturate. */
void nl_series_add(nl_series *s, int64_t t_ns, uint64_t num_pending,
                   uint64_t num_ack_pending, uint64_t redeliveries);

/* The series as a JSON object {"step_s": 30, "steps": [{"t", "num_pending",
 * "num_ack_pending", "redeliveries", "polls"}, ...]}, oldest first; NULL
 * when memory runs out. */
struct json_object *nl_series_object(const nl_series *s);

#endif
