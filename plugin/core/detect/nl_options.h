/* nl_options.h: the detectors' thresholds as configuration options: their
 * defaults, and reading an option by its key (the rows of each class's
 * definition and the engine's own, nl_params.h). */
#ifndef NL_OPTIONS_H
#define NL_OPTIONS_H

#include "nl_params.h"

/* Fills p with the defaults: every option's default, and the thresholds no
 * option sets. */
void nl_detect_params_default(nl_detect_params *p);

/* Returns the option named key (case-insensitive), or NULL. */
const nl_option *nl_option_find(const char *key);

/* Calls fn for every option (the engine's, then each class's in the order
 * of the class list). */
void nl_option_each(void (*fn)(const nl_option *o, void *ud), void *ud);

/* Sets option o of p to value v when it is in range (a whole-number option
 * takes v's whole part); returns 0, or -1 with why (len bytes, always
 * terminated) saying what the option needs, as the end of a sentence
 * "option KEY <why>". */
int nl_option_set(const nl_option *o, nl_detect_params *p, double v, char *why,
                  size_t len);

#endif
