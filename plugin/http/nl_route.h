/* nl_route.h: the paths of the REST API, parsed without trusting them.
 *
 * The HTTP server hands over the path exactly as received (still
 * percent-encoded), so that "%2F" inside a name is not taken for a path
 * separator. Pure: no network. */
#ifndef NL_ROUTE_H
#define NL_ROUTE_H

#include <stddef.h>

typedef enum {
  NL_ROUTE_NOT_FOUND = 0, /* No such path. */
  NL_ROUTE_BAD_NAME,      /* A history path with a name that cannot be. */
  NL_ROUTE_INDEX,         /* "/" or "/index.html": the dashboard. */
  NL_ROUTE_HEALTHZ,       /* "/healthz" */
  NL_ROUTE_VIOLATIONS,    /* "/api/violations" */
  NL_ROUTE_STREAMS,       /* "/api/streams" */
  NL_ROUTE_HISTORY,       /* "/api/history/<stream>/<consumer>" */
} nl_route;

/* Decodes one percent-encoded path segment of inlen bytes into out (outlen
 * bytes, NUL-terminated). '+' stays '+'. Returns the decoded length, or -1
 * when a '%' is not followed by two hex digits, when the result would hold
 * a control character (NUL included), or does not fit in outlen - 1
 * bytes. */
int nl_route_decode(const char *in, size_t inlen, char *out, size_t outlen);

/* Parses a raw request path. For NL_ROUTE_HISTORY, fills stream and
 * consumer (each namelen bytes, names longer than namelen - 1 are
 * NL_ROUTE_BAD_NAME) with the decoded names. A trailing '/' is not
 * accepted except for "/". */
nl_route nl_route_parse(const char *path, char *stream, char *consumer,
                        size_t namelen);

#endif
