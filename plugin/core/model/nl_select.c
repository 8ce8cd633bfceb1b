/* nl_select.c: which streams an instance or a check watches. */
#include "nl_select.h"

#include <fnmatch.h>

bool nl_stream_selected(const nl_stream_select *sel, const char *name) {
  if (sel == NULL)
    return true;
  bool in = sel->n_include == 0;
  for (size_t i = 0; i < sel->n_include && !in; i++)
    in = fnmatch(sel->include[i], name, 0) == 0;
  for (size_t i = 0; i < sel->n_exclude && in; i++)
    in = fnmatch(sel->exclude[i], name, 0) != 0;
  return in;
}
