/* nl_parse.h: JetStream API replies (JSON text) to snapshots.
 *
 * Every function here reads untrusted text: any input gives either a result
 * or an error message, never a crash. */
#ifndef NL_PARSE_H
#define NL_PARSE_H

#include <json-c/json.h>

#include "nl_snapshot.h"

/* The paging fields of a LIST reply, and what the page held. */
typedef struct {
  uint64_t total;
  uint64_t offset;
  uint64_t limit;
  size_t n_items;   /* Items in the page, readable or not. */
  size_t n_skipped; /* Items and "missing" entries that could not be read
                     * (offline, malformed): at most n_items + n_missing. */
  size_t n_missing; /* Entries in the "missing" array. */
} nl_page_info;

/* Return codes of the parse functions. */
#define NL_PARSE_OK 0
#define NL_PARSE_BAD_JSON (-1) /* Not JSON, or not the expected shape. */
#define NL_PARSE_API_ERROR                                                     \
  (-2) /* The server answered with an error object.                            \
        */

/* Parses one page of $JS.API.STREAM.LIST and appends a snapshot per stream to
 * set (with consumers_complete false). On failure returns a negative code and
 * writes a one-line reason into err; set may then hold part of the page. */
int nl_parse_stream_list(const char *json, size_t len, nl_snapshot_set *set,
                         nl_page_info *page, char *err, size_t errlen);

/* Parses one page of $JS.API.CONSUMER.LIST.<stream> and appends a snapshot
 * per readable consumer to set, recording stream_index. Consumers listed as
 * missing, offline placeholders and malformed items are counted in page and
 * in set->unobservable. Return codes as nl_parse_stream_list. */
int nl_parse_consumer_list(const char *json, size_t len, size_t stream_index,
                           nl_snapshot_set *set, nl_page_info *page, char *err,
                           size_t errlen);

/* Parses the reply of $JS.API.STREAM.INFO.<stream> asked with
 * subjects_filter ">" into s->subject_counts (replacing any), at most
 * NL_SUBJECT_COUNTS_MAX subjects, and sets s->subject_counts_read. A reply
 * of another stream, one with more subjects (the rest left out: the
 * counts would be short) or an unreadable one leaves s unchanged and
 * returns an error. */
int nl_parse_subject_counts(const char *json, size_t len, nl_stream_snap *s,
                            char *err, size_t errlen);

/* Parses the reply of $JS.API.STREAM.INFO.<stream> (one stream item) and
 * appends its snapshot to set (consumers_complete false). Return codes as
 * nl_parse_stream_list. */
int nl_parse_stream_info(const char *json, size_t len, nl_snapshot_set *set,
                         char *err, size_t errlen);

/* Parses the reply of $JS.API.CONSUMER.INFO.<stream>.<consumer> (one
 * consumer item) of the stream at stream_index of set and appends its
 * snapshot. Return codes as nl_parse_stream_list; an item that is not a
 * readable consumer of that stream is NL_PARSE_BAD_JSON. */
int nl_parse_consumer_info(const char *json, size_t len, size_t stream_index,
                           nl_snapshot_set *set, char *err, size_t errlen);

/* Parses an RFC 3339 UTC time ("2026-11-29T21:40:01.123456789Z", offsets
 * allowed) into nanoseconds since the epoch. Returns 0 and sets *out_ns, or
 * -1 when the text is not such a time. Go's zero time gives 0. */
int nl_parse_rfc3339(const char *text, int64_t *out_ns);

/* The member key of obj when it has type type, else NULL (obj may be NULL
 * or not an object). Owned by obj. */
struct json_object *nl_parse_member(struct json_object *obj, const char *key,
                                    json_type type);

/* The string member key of obj when it is at most NL_NAME_MAX bytes without
 * an embedded NUL, else NULL. Owned by obj. */
const char *nl_parse_string(struct json_object *obj, const char *key);

/* The integer member key of obj, or def when absent or not an integer. */
int64_t nl_parse_int(struct json_object *obj, const char *key, int64_t def);

/* Appends the snapshot of one stream item (a STREAM.LIST entry, or a JSZ
 * stream_detail with its config) to set, consumers_complete false. Returns
 * 0, or -1 when item is not a readable stream or memory runs out (set is
 * then unchanged). */
int nl_parse_stream_item(struct json_object *item, nl_snapshot_set *set);

/* Appends the snapshot of one consumer item (a CONSUMER.LIST entry, or a
 * JSZ consumer_detail with its config) of the stream at stream_index of
 * set. Returns 0, or -1 when item is not a readable consumer or memory runs
 * out (set is then unchanged). */
int nl_parse_consumer_item(struct json_object *item, size_t stream_index,
                           nl_snapshot_set *set);

/* Parses text that must be one JSON object (white space around it allowed)
 * and not a JetStream API error reply. Returns the object (the caller puts
 * it), or NULL with *rc set to a negative code and a reason in err. */
struct json_object *nl_parse_object(const char *json, size_t len, int *rc,
                                    char *err, size_t errlen);

#endif
