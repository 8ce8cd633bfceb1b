/* nl_series.c: a consumer's longer history for charts (see nl_series.h). */
#include "nl_series.h"

#include "nl_json.h"

static uint32_t sat32(uint64_t v) {
  return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t max32(uint32_t a, uint32_t b) { return a > b ? a : b; }

void nl_series_add(nl_series *s, int64_t t_ns, uint64_t num_pending,
                   uint64_t num_ack_pending, uint64_t redeliveries) {
  if (t_ns <= 0 || (s->n > 0 && t_ns <= s->last_poll_ns))
    return;
  s->last_poll_ns = t_ns;
  int64_t start = t_ns - t_ns % NL_SERIES_STEP_NS;
  nl_series_step *newest = s->n > 0 ? &s->steps[s->head] : NULL;
  if (newest != NULL && newest->start_ns == start) {
    newest->num_pending = max32(newest->num_pending, sat32(num_pending));
    newest->num_ack_pending =
        max32(newest->num_ack_pending, sat32(num_ack_pending));
    uint64_t sum = (uint64_t)newest->redeliveries + redeliveries;
    newest->redeliveries = sat32(sum);
    newest->polls = sat32((uint64_t)newest->polls + 1);
    return;
  }
  s->head = s->n > 0 ? (s->head + 1) % NL_SERIES_STEPS : 0;
  if (s->n < NL_SERIES_STEPS)
    s->n++;
  s->steps[s->head] =
      (nl_series_step){start, sat32(num_pending), sat32(num_ack_pending),
                       sat32(redeliveries), 1};
}

struct json_object *nl_series_object(const nl_series *s) {
  struct json_object *o = json_object_new_object();
  struct json_object *arr = json_object_new_array();
  if (o == NULL || arr == NULL) {
    json_object_put(o);
    json_object_put(arr);
    return NULL;
  }
  nl_json_add_number(o, "step_s", (double)(NL_SERIES_STEP_NS / 1000000000LL));
  for (uint32_t k = s->n; k-- > 0;) {
    const nl_series_step *st =
        &s->steps[(s->head + NL_SERIES_STEPS - k) % NL_SERIES_STEPS];
    struct json_object *so = json_object_new_object();
    if (so == NULL) {
      json_object_put(o);
      json_object_put(arr);
      return NULL;
    }
    nl_json_add_time(so, "t", st->start_ns);
    nl_json_add_number(so, "num_pending", st->num_pending);
    nl_json_add_number(so, "num_ack_pending", st->num_ack_pending);
    nl_json_add_number(so, "redeliveries", st->redeliveries);
    nl_json_add_number(so, "polls", st->polls);
    json_object_array_add(arr, so);
  }
  json_object_object_add(o, "steps", arr);
  return o;
}
