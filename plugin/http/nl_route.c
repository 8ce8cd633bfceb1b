/* nl_route.c: the paths of the REST API, parsed without trusting them. */
#include "nl_route.h"

#include <string.h>

static int hex_value(char ch) {
  if (ch >= '0' && ch <= '9')
    return ch - '0';
  if (ch >= 'a' && ch <= 'f')
    return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F')
    return ch - 'A' + 10;
  return -1;
}

int nl_route_decode(const char *in, size_t inlen, char *out, size_t outlen) {
  size_t o = 0;
  if (outlen == 0)
    return -1;
  for (size_t i = 0; i < inlen; i++) {
    unsigned char ch = (unsigned char)in[i];
    if (ch == '%') {
      if (i + 2 >= inlen)
        return -1;
      int a = hex_value(in[i + 1]), b = hex_value(in[i + 2]);
      if (a < 0 || b < 0)
        return -1;
      ch = (unsigned char)(a * 16 + b);
      i += 2;
    }
    if (ch < 0x20 || ch == 0x7f || o + 1 >= outlen)
      return -1;
    out[o++] = (char)ch;
  }
  out[o] = '\0';
  return (int)o;
}

nl_route nl_route_parse(const char *path, char *stream, char *consumer,
                        size_t namelen) {
  static const struct {
    const char *path;
    nl_route route;
  } fixed[] = {
      {"/", NL_ROUTE_INDEX},
      {"/index.html", NL_ROUTE_INDEX},
      {"/healthz", NL_ROUTE_HEALTHZ},
      {"/api/violations", NL_ROUTE_VIOLATIONS},
      {"/api/streams", NL_ROUTE_STREAMS},
  };
  for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
    if (strcmp(path, fixed[i].path) == 0)
      return fixed[i].route;
  static const char prefix[] = "/api/history/";
  if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
    return NL_ROUTE_NOT_FOUND;
  const char *s = path + sizeof(prefix) - 1;
  const char *slash = strchr(s, '/');
  if (slash == NULL || slash == s || slash[1] == '\0' ||
      strchr(slash + 1, '/') != NULL)
    return NL_ROUTE_NOT_FOUND;
  if (nl_route_decode(s, (size_t)(slash - s), stream, namelen) <= 0 ||
      nl_route_decode(slash + 1, strlen(slash + 1), consumer, namelen) <= 0)
    return NL_ROUTE_BAD_NAME;
  return NL_ROUTE_HISTORY;
}
