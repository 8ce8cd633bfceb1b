/* nl_configured.c: the configuration rules' findings for one consumer or
 * stream at one poll (see nl_configured.h). */
#include "nl_configured.h"

#include "core/model/nl_advised.h"
#include "core/model/nl_expect.h"

#include <string.h>

void nl_configured_start(nl_configured *k, const nl_snapshot_set *set,
                         nl_configured_kind kind, size_t index, bool on,
                         unsigned rules, const nl_audit_params *audit,
                         nl_audit_result *scratch) {
  *k = (nl_configured){set,   kind,    index, on,   rules,
                       audit, scratch, false, false};
}

/* Runs k's rules into its scratch, once. */
static void run(nl_configured *k) {
  if (k->ran)
    return;
  k->ran = true;
  k->scratch->n = 0;
  int status = 0;
  if (k->kind == NL_CONFIGURED_CONSUMER)
    status =
        nl_audit_consumer(k->set, k->index, k->audit, k->rules, k->scratch);
  else if (k->kind == NL_CONFIGURED_STREAM)
    status = nl_audit_stream(k->set, k->index, k->audit, k->rules, k->scratch);
  else
    status = nl_audit_missing_stream(k->set, k->index, k->audit, k->rules,
                                     k->scratch);
  k->failed = status != 0;
}

const nl_finding *nl_configured_find(nl_configured *k, nl_audit_class rule) {
  if (k == NULL || !k->on || (k->rules & (1u << rule)) == 0)
    return NULL;
  run(k);
  for (size_t i = 0; i < k->scratch->n; i++)
    if (k->scratch->items[i].cls == rule)
      return &k->scratch->items[i].f;
  return NULL;
}

void nl_configured_take(const nl_finding *a, nl_class cls, nl_finding *f) {
  *f = *a;
  f->cls = cls;
}

bool nl_configured_raise(nl_configured *k, nl_audit_class rule, nl_class cls,
                         nl_finding *f) {
  const nl_finding *a = nl_configured_find(k, rule);
  if (a == NULL)
    return false;
  nl_configured_take(a, cls, f);
  return true;
}

bool nl_configured_bad_declaration(nl_configured *k, nl_consumer_state *st,
                                   nl_finding *f) {
  if (!k->on || k->kind != NL_CONFIGURED_CONSUMER ||
      k->index >= k->set->n_consumers)
    return false;
  const nl_consumer_snap *c = &k->set->consumers[k->index];
  uint64_t bad = 0;
  if (c->n_meta > 0) {
    nl_expectations e;
    nl_expect_read(c, &e);
    if (e.bad_key != NULL) {
      /* The key and value with the terminating NUL of each: "a" "bc" and
       * "ab" "c" differ. */
      bad = nl_hash_bytes(NL_HASH_BASIS, e.bad_key, strlen(e.bad_key) + 1);
      bad = nl_hash_bytes(bad, e.bad_value, strlen(e.bad_value) + 1);
      bad = bad ? bad : 1;
    }
  }
  if (bad == 0) {
    if (st->advised != NULL)
      st->advised->bad_declaration = 0;
    return false;
  }
  nl_advised *x = nl_advised_of(st);
  if (x == NULL || x->bad_declaration == bad)
    return false;
  /* The scratch now holds this rule's findings, not k's rules'. */
  k->ran = false;
  k->scratch->n = 0;
  nl_audit_consumer(k->set, k->index, k->audit,
                    1u << NL_AUDIT_INVALID_EXPECTATION, k->scratch);
  if (k->scratch->n == 0)
    return false;
  x->bad_declaration = bad;
  *f = k->scratch->items[0].f;
  return true;
}
