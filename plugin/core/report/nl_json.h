/* nl_json.h: small json-c helpers shared by the event and view builders. */
#ifndef NL_JSON_H
#define NL_JSON_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

/* Room for any text nl_json_time writes. */
#define NL_JSON_TIME_MAX 32

/* Writes ns (since the epoch) as RFC 3339 UTC with milliseconds, as in
 * "2024-05-01T12:00:00.250Z", into buf (at least NL_JSON_TIME_MAX bytes).
 * Returns buf. */
char *nl_json_time(int64_t ns, char *buf, size_t len);

/* Adds a number to obj under key: a JSON integer when v is whole and exact
 * in a double, a short decimal otherwise, and null when v is not finite
 * (json-c would print NaN, which is not JSON). */
void nl_json_add_number(struct json_object *obj, const char *key, double v);

/* Adds a string, or null when s is NULL. */
void nl_json_add_string(struct json_object *obj, const char *key,
                        const char *s);

/* Adds a time (ns since the epoch) as RFC 3339 text, or null when 0. */
void nl_json_add_time(struct json_object *obj, const char *key, int64_t ns);

/* Returns obj as compact JSON text (malloc'd, the caller frees) and sets
 * *len (when len is not NULL), then puts obj. Returns NULL when obj is NULL
 * or memory runs out. */
char *nl_json_take_text(struct json_object *obj, size_t *len);

/* The same, leaving obj as it is (the caller still owns it). */
char *nl_json_copy_text(struct json_object *obj, size_t *len);

#endif
