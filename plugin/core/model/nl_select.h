/* nl_select.h: which streams an instance or a check watches.
 *
 * The Stream and ExcludeStream options (plugin) and --stream and
 * --exclude-stream (nats-lens-check) are fnmatch globs on stream names. The
 * poll, the audit and the advisory refresh all choose streams through this
 * one rule. */
#ifndef NL_SELECT_H
#define NL_SELECT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
  char **include; /* Stream name globs (fnmatch); none means all. */
  size_t n_include;
  char **exclude; /* Globs of streams left out, after the includes. */
  size_t n_exclude;
} nl_stream_select;

/* Returns true when name is matched by an include glob (or there is none)
 * and by no exclude glob. sel may be NULL: every stream is selected. */
bool nl_stream_selected(const nl_stream_select *sel, const char *name);

#endif
