/* nl_central.h: the <Coverage> block of a central collectd that agents
 * (Instance blocks with Scope "server") send their values to through
 * collectd's network plugin (docs/agents.md). */
#ifndef NL_CENTRAL_H
#define NL_CENTRAL_H

#include "collectd.h"

#include "liboconfig/oconfig.h"

/* Reads one <Coverage "instance"> block and registers its write callback
 * (the agents' nats_lens_judged values) and read callback (the consumers
 * no agent judges: values and notifications). Returns 0, or -1 with an
 * error logged. */
int nl_central_config(oconfig_item_t *ci);

#endif
