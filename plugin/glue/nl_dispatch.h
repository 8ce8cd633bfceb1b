/* nl_dispatch.h: one value of the nats_lens plugin handed to collectd. */
#ifndef NL_DISPATCH_H
#define NL_DISPATCH_H

#include "collectd.h"

#include "plugin.h"

/* Dispatches v as plugin "nats_lens", plugin instance pi, type and type
 * instance ti (NULL: none), at time (0: now, collectd's clock). */
void nl_dispatch_value(const char *pi, const char *type, const char *ti,
                       value_t v, cdtime_t time);

#endif
