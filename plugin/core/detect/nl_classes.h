/* nl_classes.h: the table of every class definition, and what is looked up
 * in it.
 *
 * nl_class_defs holds one definition per row of NL_CLASS_LIST
 * (model/nl_finding.h), each defined in its own file under detect/ as
 * nl_class_<suffix>. A class file includes this header for its own
 * definition's type and for its siblings' ids. */
#ifndef NL_CLASSES_H
#define NL_CLASSES_H

#include "nl_class.h"

#define NL_CLASS_DECLARE(id, suffix, severity, scope)                          \
  extern const nl_class_def nl_class_##suffix;
NL_CLASS_LIST(NL_CLASS_DECLARE)
#undef NL_CLASS_DECLARE

/* Every class's definition, indexed by nl_class. */
extern const nl_class_def *const nl_class_defs[NL_CLASS_COUNT];

/* Fills order with the classes in the order of precedence: each class
 * before every class its mask suppresses, the list's order where the masks
 * leave a choice. Returns false, with order the list's order, when the
 * masks form a circle (a unit test checks they do not). */
bool nl_class_precedence(nl_class order[NL_CLASS_COUNT]);

/* Returns the class raised from audit rule rule, or NL_CLASS_COUNT when
 * none is. */
nl_class nl_class_of_audit_rule(nl_audit_class rule);

/* The audit rules of every class of the given scope (stream or not). */
unsigned nl_class_audit_rules(bool stream);

/* Returns *state, allocating d's state zeroed when it is NULL; NULL when
 * memory runs out. */
void *nl_class_state(const nl_class_def *d, void **state);

/* Frees *state (after d's release) and sets it to NULL. */
void nl_class_state_drop(const nl_class_def *d, void **state);

/* Frees what the state of class cls points to (its release), for the
 * history's and the engine's slots. */
void nl_class_release(nl_class cls, void *state);

#endif
