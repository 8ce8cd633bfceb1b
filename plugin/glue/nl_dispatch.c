/* nl_dispatch.c: one value of the nats_lens plugin handed to collectd. */
#include "nl_dispatch.h"

#include "utils/common/common.h"

void nl_dispatch_value(const char *pi, const char *type, const char *ti,
                       value_t v, cdtime_t time) {
  value_list_t vl = VALUE_LIST_INIT;
  vl.values = &v;
  vl.values_len = 1;
  vl.time = time;
  sstrncpy(vl.plugin, "nats_lens", sizeof(vl.plugin));
  sstrncpy(vl.plugin_instance, pi, sizeof(vl.plugin_instance));
  sstrncpy(vl.type, type, sizeof(vl.type));
  if (ti != NULL)
    sstrncpy(vl.type_instance, ti, sizeof(vl.type_instance));
  plugin_dispatch_values(&vl);
}
