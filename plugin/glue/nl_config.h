/* nl_config.h: an <Instance> block read into an instance ready for its
 * read callback. */
#ifndef NL_CONFIG_H
#define NL_CONFIG_H

#include "collectd.h"

#include "liboconfig/oconfig.h"

#include "nl_instance.h"

/* Reads one Instance block into a new instance: its name and options,
 * checked together, then its connections, poll log, engine and listener,
 * in that order. Returns the instance, ready for its read callback (its
 * threads start in collectd's init), or NULL after logging why, with
 * everything made so far freed. Configuration time only. */
nl_instance *nl_config_instance(oconfig_item_t *ci);

#endif
