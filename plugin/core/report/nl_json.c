/* nl_json.c: small json-c helpers shared by the event and view builders. */
#include "nl_json.h"

#include "core/model/nl_names.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *nl_json_time(int64_t ns, char *buf, size_t len) {
  int64_t secs = ns / 1000000000;
  int64_t rem = ns % 1000000000;
  if (rem < 0) {
    rem += 1000000000;
    secs--;
  }
  time_t t = (time_t)secs;
  struct tm tm;
  if (len == 0)
    return buf;
  if (gmtime_r(&t, &tm) == NULL) {
    snprintf(buf, len, "1970-01-01T00:00:00.000Z");
    return buf;
  }
  snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
           tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
           (int)(rem / 1000000));
  return buf;
}

void nl_json_add_number(struct json_object *obj, const char *key, double v) {
  struct json_object *num;
  if (!isfinite(v))
    num = NULL;
  else if (v == floor(v) && fabs(v) < 9007199254740992.0)
    num = json_object_new_int64((int64_t)v);
  else {
    char text[32];
    snprintf(text, sizeof(text), "%.6g", v);
    num = json_object_new_double_s(v, text);
  }
  json_object_object_add(obj, key, num);
}

void nl_json_add_string(struct json_object *obj, const char *key,
                        const char *s) {
  if (s == NULL) {
    json_object_object_add(obj, key, NULL);
    return;
  }
  const unsigned char *p = (const unsigned char *)s;
  if (nl_utf8_valid(s)) {
    json_object_object_add(obj, key, json_object_new_string(s));
    return;
  }
  /* Names come from server replies: bytes that are not UTF-8 become '?' so
   * the JSON stays valid for strict parsers. */
  size_t len = strlen(s);
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return;
  size_t o = 0;
  for (size_t i = 0; p[i];) {
    size_t n = nl_utf8_len(p + i);
    if (n == 0) {
      copy[o++] = '?';
      i++;
    } else {
      memcpy(copy + o, p + i, n);
      o += n;
      i += n;
    }
  }
  copy[o] = '\0';
  json_object_object_add(obj, key, json_object_new_string(copy));
  free(copy);
}

void nl_json_add_time(struct json_object *obj, const char *key, int64_t ns) {
  char buf[NL_JSON_TIME_MAX];
  json_object_object_add(
      obj, key,
      ns ? json_object_new_string(nl_json_time(ns, buf, sizeof(buf))) : NULL);
}

char *nl_json_copy_text(struct json_object *obj, size_t *len) {
  if (obj == NULL)
    return NULL;
  size_t n = 0;
  const char *text = json_object_to_json_string_length(
      obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
  char *copy = text ? malloc(n + 1) : NULL;
  if (copy != NULL) {
    memcpy(copy, text, n);
    copy[n] = '\0';
    if (len != NULL)
      *len = n;
  }
  return copy;
}

char *nl_json_take_text(struct json_object *obj, size_t *len) {
  char *copy = nl_json_copy_text(obj, len);
  json_object_put(obj);
  return copy;
}
