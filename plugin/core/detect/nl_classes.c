/* nl_classes.c: the table of every class definition, its order of
 * precedence, and what is looked up in it (see nl_classes.h). */
#include "nl_classes.h"

#include <stdlib.h>

const nl_class_def *const nl_class_defs[NL_CLASS_COUNT] = {
#define NL_CLASS_ENTRY(id, suffix, severity, scope)                            \
  [NL_##id] = &nl_class_##suffix,
    NL_CLASS_LIST(NL_CLASS_ENTRY)
#undef NL_CLASS_ENTRY
};

/* Kahn's algorithm: the first class in the list's order that nothing
 * left suppresses goes next. */
bool nl_class_precedence(nl_class order[NL_CLASS_COUNT]) {
  unsigned suppressed_by[NL_CLASS_COUNT] = {0};
  for (int a = 0; a < NL_CLASS_COUNT; a++)
    for (int b = 0; b < NL_CLASS_COUNT; b++)
      if (nl_class_defs[a]->suppresses & NL_CLASS_BIT(b))
        suppressed_by[b]++;
  bool placed[NL_CLASS_COUNT] = {false};
  for (int n = 0; n < NL_CLASS_COUNT; n++) {
    int next = -1;
    for (int c = 0; c < NL_CLASS_COUNT && next < 0; c++)
      if (!placed[c] && suppressed_by[c] == 0)
        next = c;
    if (next < 0) {
      for (int c = 0; c < NL_CLASS_COUNT; c++)
        order[c] = (nl_class)c;
      return false;
    }
    placed[next] = true;
    order[n] = (nl_class)next;
    for (int b = 0; b < NL_CLASS_COUNT; b++)
      if (nl_class_defs[next]->suppresses & NL_CLASS_BIT(b))
        suppressed_by[b]--;
  }
  return true;
}

nl_class nl_class_of_audit_rule(nl_audit_class rule) {
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (nl_class_defs[cls]->audit_rules & (1u << rule))
      return (nl_class)cls;
  return NL_CLASS_COUNT;
}

unsigned nl_class_audit_rules(bool stream) {
  unsigned rules = 0;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++)
    if (nl_class_is_stream((nl_class)cls) == stream)
      rules |= nl_class_defs[cls]->audit_rules;
  return rules;
}

void nl_class_release(nl_class cls, void *state) {
  if ((unsigned)cls < NL_CLASS_COUNT && nl_class_defs[cls]->release != NULL &&
      state != NULL)
    nl_class_defs[cls]->release(state);
}

void *nl_class_state(const nl_class_def *d, void **state) {
  if (*state == NULL && d->state_size > 0)
    *state = calloc(1, d->state_size);
  return *state;
}

void nl_class_state_drop(const nl_class_def *d, void **state) {
  if (*state == NULL)
    return;
  if (d->release != NULL)
    d->release(*state);
  free(*state);
  *state = NULL;
}
