/* nl_finding.c: class names, severities and evidence helpers. */
#include "nl_finding.h"

#include "nl_names.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The facts of each class, from its row of NL_CLASS_LIST. */
static const struct {
  const char *name;
  const char *suffix;
  nl_severity severity;
  bool stream_level;
} classes[NL_CLASS_COUNT] = {
#define NL_CLASS_ROW(id, sfx, sev, scope)                                      \
  [NL_##id] = {#id, #sfx, NL_SEVERITY_##sev, NL_SCOPE_##scope},
#define NL_SCOPE_CONSUMER false
#define NL_SCOPE_STREAM true
    NL_CLASS_LIST(NL_CLASS_ROW)
#undef NL_CLASS_ROW
#undef NL_SCOPE_CONSUMER
#undef NL_SCOPE_STREAM
};

const char *nl_class_name(nl_class cls) {
  return (unsigned)cls < NL_CLASS_COUNT ? classes[cls].name : "UNKNOWN";
}

const char *nl_class_type_suffix(nl_class cls) {
  return (unsigned)cls < NL_CLASS_COUNT ? classes[cls].suffix : "unknown";
}

nl_severity nl_class_severity(nl_class cls) {
  return (unsigned)cls < NL_CLASS_COUNT ? classes[cls].severity
                                        : NL_SEVERITY_WARNING;
}

bool nl_class_is_stream(nl_class cls) {
  return (unsigned)cls < NL_CLASS_COUNT && classes[cls].stream_level;
}

const char *nl_severity_name(nl_severity sev) {
  return sev == NL_SEVERITY_CRITICAL ? "critical" : "warning";
}

void nl_finding_start(nl_finding *f, nl_class cls) {
  memset(f, 0, sizeof(*f));
  f->cls = cls;
  f->severity = nl_class_severity(cls);
}

void nl_finding_add(nl_finding *f, const char *name, double value) {
  if (f->n_evidence >= NL_EVIDENCE_MAX)
    return;
  f->evidence[f->n_evidence].name = name;
  f->evidence[f->n_evidence].value = value;
  f->n_evidence++;
}

double nl_finding_get(const nl_finding *f, const char *name, double def) {
  for (int i = 0; i < f->n_evidence; i++)
    if (strcmp(f->evidence[i].name, name) == 0)
      return f->evidence[i].value;
  return def;
}

void nl_finding_set(nl_finding *f, const char *name, double value) {
  for (int i = 0; i < f->n_evidence; i++)
    if (strcmp(f->evidence[i].name, name) == 0) {
      f->evidence[i].value = value;
      return;
    }
  nl_finding_add(f, name, value);
}

char *nl_finding_format_evidence(const nl_finding *f, char *buf, size_t len) {
  size_t used = 0;
  if (len == 0)
    return buf;
  buf[0] = '\0';
  static const char more[] = ", ...";
  for (int i = 0; i < f->n_evidence; i++) {
    char item[NL_TEXT_MAX];
    double v = f->evidence[i].value;
    int n =
        snprintf(item, sizeof(item),
                 v == floor(v) && fabs(v) < 1e15 ? "%s%s=%.0f" : "%s%s=%.3g",
                 i ? ", " : "", f->evidence[i].name, v);
    /* Room for the item, and for ", ..." after it unless it is the last. */
    size_t need = (size_t)(n > 0 ? n : 0) +
                  (i + 1 < f->n_evidence ? sizeof(more) - 1 : 0) + 1;
    if (n < 0 || (size_t)n >= sizeof(item) || used + need > len) {
      const char *tail = used ? more : more + 2; /* "..." alone first. */
      if (used + strlen(tail) + 1 <= len)
        memcpy(buf + used, tail, strlen(tail) + 1);
      break;
    }
    memcpy(buf + used, item, (size_t)n + 1);
    used += (size_t)n;
  }
  return buf;
}

void nl_finding_guard_fix(nl_finding *f, const char *stream,
                          const char *consumer) {
  if (f->fix_command[0] == '\0')
    return;
  bool fits = strlen(f->fix_command) + 1 < sizeof(f->fix_command);
  if (fits && nl_cli_name_usable(stream) &&
      (consumer == NULL || consumer[0] == '\0' || nl_cli_name_usable(consumer)))
    return;
  f->fix_command[0] = '\0';
  size_t n = strlen(f->recommendation);
  snprintf(f->recommendation + n, sizeof(f->recommendation) - n,
           "%sno fix command is printed: the stream or consumer name would "
           "not reach the nats CLI as it is (it starts with '-', holds a "
           "control character or bytes that are not UTF-8, or is longer "
           "than 255 bytes)",
           n > 0 ? "; " : "");
}
