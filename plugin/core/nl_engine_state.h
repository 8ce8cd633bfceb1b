/* nl_engine_state.h: what the engine holds, shared by the files of the
 * engine (nl_engine.c: a poll and an advisory through the classes;
 * nl_engine_query.c: what the engine is asked). Not for other layers:
 * they see the engine through nl_engine.h alone. */
#ifndef NL_ENGINE_STATE_H
#define NL_ENGINE_STATE_H

#include "core/detect/nl_audit.h"
#include "core/detect/nl_params.h"
#include "core/model/nl_history.h"
#include "nl_lifecycle.h"
#include "nl_stream_store.h"

struct nl_engine {
  nl_registry *reg;
  nl_detect_params params;
  nl_audit_params audit;
  nl_audit_result scratch;        /* Reused by the configuration classes. */
  nl_class order[NL_CLASS_COUNT]; /* The classes in order of precedence. */
  uint32_t generation;
  nl_stream_store streams;
  nl_lifecycle life;
  uint64_t advisories_fed;
  uint64_t advisories_unknown;
  uint64_t advisories_contradicted;
};

#endif
