/* nl_advisory.c: JetStream consumer advisories and ack metrics, parsed
 * (see nl_advisory.h; the schemas are in docs/detectors.md). */
#define _GNU_SOURCE /* memmem */
#include "nl_advisory.h"

#include "nl_parse.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

const char *const nl_advisory_subjects[] = {
    "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.>",
    "$JS.EVENT.ADVISORY.CONSUMER.MSG_NAKED.>",
    "$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED.>",
    "$JS.EVENT.ADVISORY.CONSUMER.CREATED.>",
    "$JS.EVENT.ADVISORY.CONSUMER.DELETED.>",
    "$JS.EVENT.ADVISORY.CONSUMER.LEADER_ELECTED.>",
    "$JS.EVENT.ADVISORY.CONSUMER.QUORUM_LOST.>",
    "$JS.EVENT.METRIC.CONSUMER.ACK.>",
    NULL,
};

/* The "type" of each kind; CREATED and DELETED share one and differ in
 * "action". */
static const struct {
  const char *type;
  const char *name;
} kinds[NL_ADV_KIND_COUNT] = {
    [NL_ADV_MAX_DELIVER] = {"io.nats.jetstream.advisory.v1.max_deliver",
                            "max_deliver"},
    [NL_ADV_NAK] = {"io.nats.jetstream.advisory.v1.nak", "nak"},
    [NL_ADV_TERMINATED] = {"io.nats.jetstream.advisory.v1.terminated",
                           "terminated"},
    [NL_ADV_CREATED] = {"io.nats.jetstream.advisory.v1.consumer_action",
                        "created"},
    [NL_ADV_DELETED] = {"io.nats.jetstream.advisory.v1.consumer_action",
                        "deleted"},
    [NL_ADV_LEADER_ELECTED] = {"io.nats.jetstream.advisory.v1."
                               "consumer_leader_elected",
                               "leader_elected"},
    [NL_ADV_QUORUM_LOST] = {"io.nats.jetstream.advisory.v1."
                            "consumer_quorum_lost",
                            "quorum_lost"},
    [NL_ADV_ACK_SAMPLE] = {"io.nats.jetstream.metric.v1.consumer_ack",
                           "ack_sample"},
    [NL_ADV_API_DELETE] = {"io.nats.jetstream.advisory.v1.api_audit",
                           "api_delete"},
};

const char nl_advisory_api_subject[] = "$JS.EVENT.ADVISORY.API";

/* The API subject of a consumer delete request, which an API audit of one
 * names as its "subject". */
static const char delete_prefix[] = "$JS.API.CONSUMER.DELETE.";

bool nl_advisory_wanted(const char *subject, const char *data, size_t len) {
  if (subject == NULL || strcmp(subject, nl_advisory_api_subject) != 0)
    return true;
  return data != NULL &&
         memmem(data, len, delete_prefix, sizeof(delete_prefix) - 1) != NULL;
}

const char *nl_adv_kind_name(nl_adv_kind kind) {
  return (unsigned)kind < NL_ADV_KIND_COUNT ? kinds[kind].name : "unknown";
}

/* Returns the string member key when it is a string without an embedded
 * NUL, else NULL (owned by obj). */
static const char *str_member(json_object *obj, const char *key) {
  json_object *v = NULL;
  if (!json_object_object_get_ex(obj, key, &v) ||
      !json_object_is_type(v, json_type_string))
    return NULL;
  const char *s = json_object_get_string(v);
  return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

/* Reads a non-negative integer member into *out; absent leaves 0. Returns
 * -1 when the member is there but is not such an integer. */
static int u64_member(json_object *obj, const char *key, uint64_t *out) {
  json_object *v = NULL;
  *out = 0;
  if (!json_object_object_get_ex(obj, key, &v) || v == NULL)
    return 0;
  if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
    return -1;
  *out = (uint64_t)json_object_get_int64(v);
  return 0;
}

/* Copies a stream or consumer name into out (NL_ADV_NAME_MAX + 1 bytes).
 * Returns -1 when it is absent, empty, too long, or not one subject token
 * (no '.', '*', '>', white space or control characters). */
static int copy_name(const char *name, char *out) {
  if (name == NULL || name[0] == '\0' || strlen(name) > NL_ADV_NAME_MAX)
    return -1;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p <= ' ' || *p == '.' || *p == '*' || *p == '>' || *p == 0x7f)
      return -1;
  strcpy(out, name);
  return 0;
}

/* Returns true when the last two tokens of subject are stream and
 * consumer. */
static bool subject_names(const char *subject, const char *stream,
                          const char *consumer) {
  size_t n = strlen(subject), lc = strlen(consumer), ls = strlen(stream);
  if (n < lc + ls + 2)
    return false;
  const char *c = subject + n - lc, *s = c - 1 - ls;
  return c[-1] == '.' && strcmp(c, consumer) == 0 && s > subject &&
         s[-1] == '.' && strncmp(s, stream, ls) == 0;
}

/* The reasons nats-server (2.10.4+, server/consumer.go ackTermLimitsReason
 * and ackTermUnackedLimitsReason) gives a MSG_TERMINATED it sends because
 * the stream removed the message. */
static const char *const removed_reasons[] = {
    "Message deleted by stream limits",
    "Unacknowledged message was deleted",
};

/* Reads the "reason" of a MSG_TERMINATED into out. */
static void read_reason(json_object *root, nl_advisory *out) {
  const char *reason = str_member(root, "reason");
  if (reason == NULL)
    return;
  for (size_t i = 0; i < sizeof(removed_reasons) / sizeof(removed_reasons[0]);
       i++)
    if (strcmp(reason, removed_reasons[i]) == 0)
      out->removed_from_stream = true;
  size_t n = 0;
  for (; reason[n] != '\0' && n < NL_ADV_REASON_MAX; n++) {
    unsigned char c = (unsigned char)reason[n];
    out->reason[n] = c >= ' ' && c < 0x7f ? (char)c : '?';
  }
  out->reason[n] = '\0';
}

/* Finds the kind of a parsed advisory; -1 when it is not one handled. */
static int find_kind(json_object *root) {
  const char *type = str_member(root, "type");
  if (type == NULL)
    return -1;
  for (int k = 0; k < NL_ADV_KIND_COUNT; k++) {
    if (strcmp(type, kinds[k].type) != 0)
      continue;
    if (k == NL_ADV_CREATED || k == NL_ADV_DELETED) {
      const char *action = str_member(root, "action");
      if (action == NULL)
        return -1;
      if (strcmp(action, "create") == 0)
        return NL_ADV_CREATED;
      if (strcmp(action, "delete") == 0)
        return NL_ADV_DELETED;
      return -1;
    }
    return k;
  }
  return -1;
}

/* Reads an API audit (root, which came on subject, NULL when not known)
 * into out: only a successful consumer delete request is taken. Returns
 * 0, or -1 with a reason in err. */
static int read_api_delete(json_object *root, const char *subject,
                           nl_advisory *out, char *err, size_t errlen) {
  const char *api = str_member(root, "subject");
  const char *reply = str_member(root, "response");
  if (subject != NULL && strcmp(subject, nl_advisory_api_subject) != 0) {
    snprintf(err, errlen, "API audit on %.200s", subject);
    return -1;
  }
  if (api == NULL || strncmp(api, delete_prefix, sizeof(delete_prefix) - 1)) {
    snprintf(err, errlen, "API audit of %.200s, not a consumer delete",
             api ? api : "no subject");
    return -1;
  }
  /* "<stream>.<consumer>": two names, each one token. */
  const char *names = api + sizeof(delete_prefix) - 1;
  const char *dot = strchr(names, '.');
  char stream[NL_ADV_NAME_MAX + 2] = "";
  size_t ls = dot ? (size_t)(dot - names) : 0;
  if (dot != NULL && ls <= NL_ADV_NAME_MAX) {
    memcpy(stream, names, ls);
    stream[ls] = '\0';
  }
  if (dot == NULL || copy_name(stream, out->stream) != 0 ||
      copy_name(dot + 1, out->consumer) != 0) {
    snprintf(err, errlen,
             "API audit of a consumer delete without valid "
             "names");
    return -1;
  }
  /* The reply must say it succeeded: a refused delete removed nothing. */
  int rc = 0;
  char why[128];
  json_object *r =
      reply ? nl_parse_object(reply, strlen(reply), &rc, why, sizeof(why))
            : NULL;
  json_object *ok = NULL;
  bool success = r != NULL && json_object_object_get_ex(r, "success", &ok) &&
                 json_object_is_type(ok, json_type_boolean) &&
                 json_object_get_boolean(ok);
  json_object_put(r);
  if (!success) {
    snprintf(err, errlen, "API audit of a consumer delete that failed");
    return -1;
  }
  out->kind = NL_ADV_API_DELETE;
  return 0;
}

int nl_advisory_parse(const char *subject, const char *data, size_t len,
                      nl_advisory *out, char *err, size_t errlen) {
  memset(out, 0, sizeof(*out));
  int rc = 0;
  json_object *root = nl_parse_object(data, len, &rc, err, errlen);
  if (root == NULL)
    return -1;
  int status = -1;
  int kind = find_kind(root);
  if (kind == NL_ADV_API_DELETE) {
    const char *ts = str_member(root, "timestamp");
    status = read_api_delete(root, subject, out, err, errlen);
    if (status == 0 &&
        (ts == NULL || nl_parse_rfc3339(ts, &out->timestamp_ns) != 0))
      out->timestamp_ns = 0;
    json_object_put(root);
    if (status != 0)
      memset(out, 0, sizeof(*out));
    return status;
  }
  const char *ts = str_member(root, "timestamp");
  uint64_t ack_time = 0;
  if (kind < 0) {
    const char *type = str_member(root, "type");
    snprintf(err, errlen, "not a consumer advisory (type %.100s)",
             type ? type : "missing");
  } else if (copy_name(str_member(root, "stream"), out->stream) != 0 ||
             copy_name(str_member(root, "consumer"), out->consumer) != 0) {
    snprintf(err, errlen, "%s advisory without a valid stream and consumer",
             kinds[kind].name);
  } else if (subject != NULL &&
             !subject_names(subject, out->stream, out->consumer)) {
    snprintf(err, errlen, "%s advisory names %s/%s but came on %.200s",
             kinds[kind].name, out->stream, out->consumer, subject);
  } else if (u64_member(root, "stream_seq", &out->stream_seq) != 0 ||
             u64_member(root, "consumer_seq", &out->consumer_seq) != 0 ||
             u64_member(root, "deliveries", &out->deliveries) != 0 ||
             u64_member(root, "ack_time", &ack_time) != 0) {
    snprintf(err, errlen, "%s advisory with a malformed number",
             kinds[kind].name);
  } else if ((kind == NL_ADV_MAX_DELIVER || kind == NL_ADV_NAK ||
              kind == NL_ADV_TERMINATED || kind == NL_ADV_ACK_SAMPLE) &&
             out->stream_seq == 0) {
    snprintf(err, errlen, "%s advisory without a stream sequence",
             kinds[kind].name);
  } else {
    out->kind = (nl_adv_kind)kind;
    out->ack_time_ns =
        ack_time > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)ack_time;
    if (ts == NULL || nl_parse_rfc3339(ts, &out->timestamp_ns) != 0)
      out->timestamp_ns = 0;
    if (kind == NL_ADV_TERMINATED)
      read_reason(root, out);
    status = 0;
  }
  json_object_put(root);
  if (status != 0)
    memset(out, 0, sizeof(*out));
  return status;
}
