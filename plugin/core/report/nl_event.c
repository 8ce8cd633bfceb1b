/* nl_event.c: health events as JSON text, and their subjects. */
#include "nl_event.h"

#include <stdio.h>
#include <string.h>

#include "core/model/nl_names.h"
#include "nl_json.h"

bool nl_event_prefix_valid(const char *prefix) {
  size_t len = strlen(prefix);
  if (len == 0 || len > NL_EVENT_PREFIX_MAX)
    return false;
  char token[NL_EVENT_PREFIX_MAX + 1];
  const char *p = prefix;
  for (;;) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    memcpy(token, p, n);
    token[n] = '\0';
    if (!nl_subject_token_valid(token))
      return false;
    if (dot == NULL)
      return true;
    p = dot + 1;
  }
}

int nl_event_subject(const char *prefix, const char *stream,
                     const char *consumer, char *out, size_t len) {
  char s[NL_EVENT_TOKEN_MAX], c[NL_EVENT_TOKEN_MAX];
  if (!nl_event_prefix_valid(prefix))
    return -1;
  nl_name_token(stream, s, sizeof(s));
  /* A stream-level finding (empty consumer) takes the token "-". */
  if (consumer[0] == '\0')
    snprintf(c, sizeof(c), "-");
  else
    nl_name_token(consumer, c, sizeof(c));
  int n = snprintf(out, len, "%s.violations.%s.%s", prefix, s, c);
  return n >= 0 && (size_t)n < len ? 0 : -1;
}

int nl_event_summary_subject(const char *prefix, char *out, size_t len) {
  if (!nl_event_prefix_valid(prefix))
    return -1;
  int n = snprintf(out, len, "%s.summary", prefix);
  return n >= 0 && (size_t)n < len ? 0 : -1;
}

struct json_object *nl_event_violation_object(const nl_finding *f) {
  struct json_object *v = json_object_new_object();
  if (v == NULL)
    return NULL;
  nl_json_add_string(v, "type", nl_class_name(f->cls));
  for (int i = 0; i < f->n_evidence; i++)
    nl_json_add_number(v, f->evidence[i].name, f->evidence[i].value);
  nl_json_add_string(v, "fix_command", f->fix_command);
  nl_json_add_string(v, "recommendation", f->recommendation);
  return v;
}

struct json_object *nl_event_object(const nl_event *ev) {
  const nl_finding *f = ev->finding;
  struct json_object *o = json_object_new_object();
  if (o == NULL)
    return NULL;
  struct json_object *v = nl_event_violation_object(f);
  if (v == NULL) {
    json_object_put(o);
    return NULL;
  }
  nl_json_add_string(o, "type", nl_class_name(f->cls));
  nl_json_add_string(o, "state",
                     ev->firing        ? "firing"
                     : ev->handed_over ? "handed_over"
                                       : "resolved");
  nl_json_add_string(o, "severity", nl_severity_name(f->severity));
  nl_json_add_string(o, "instance", ev->instance);
  if (ev->account != NULL)
    nl_json_add_string(o, "account", ev->account);
  if (ev->server != NULL)
    nl_json_add_string(o, "server", ev->server);
  if (ev->takeover)
    json_object_object_add(o, "takeover", json_object_new_boolean(true));
  nl_json_add_string(o, "stream_name", ev->stream);
  nl_json_add_string(o, "consumer_name", ev->consumer);
  nl_json_add_string(o, "description", f->description);
  nl_json_add_time(o, "detected_at", ev->at_ns);
  nl_json_add_time(o, "firing_since", f->since_ns);
  nl_json_add_time(o, "condition_since", f->condition_since_ns);
  nl_json_add_string(o, "reason", ev->reason);
  json_object_object_add(o, "violation", v);
  return o;
}

char *nl_event_json(const nl_event *ev, size_t *len) {
  return nl_json_take_text(nl_event_object(ev), len);
}

char *nl_event_summary_json(const nl_event_summary *s, size_t *len) {
  struct json_object *o = json_object_new_object();
  struct json_object *counts = json_object_new_object();
  if (o == NULL || counts == NULL) {
    json_object_put(o);
    json_object_put(counts);
    return NULL;
  }
  size_t total = 0;
  for (int cls = 0; cls < NL_CLASS_COUNT; cls++) {
    nl_json_add_number(counts, nl_class_name(cls), (double)s->active[cls]);
    total += s->active[cls];
  }
  nl_json_add_string(o, "type", "summary");
  nl_json_add_string(o, "instance", s->instance);
  if (s->account != NULL)
    nl_json_add_string(o, "account", s->account);
  if (s->server != NULL)
    nl_json_add_string(o, "server", s->server);
  nl_json_add_time(o, "at", s->at_ns);
  nl_json_add_number(o, "consumers_watched", (double)s->consumers);
  nl_json_add_number(o, "streams", (double)s->streams);
  nl_json_add_number(o, "active_total", (double)total);
  json_object_object_add(o, "active", counts);
  return nl_json_take_text(o, len);
}
