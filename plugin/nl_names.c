/* nl_names.c: stream and consumer names as collectd identifier parts. */
#include "nl_names.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t fnv1a32(const char *s) {
  uint32_t h = 2166136261u;
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    h = (h ^ *p) * 16777619u;
  return h;
}

static int unsafe(unsigned char ch) {
  return ch < 0x20 || ch == 0x7f || ch == '/';
}

int nl_name_fit(const char *in, char *out, size_t outlen) {
  size_t len = strlen(in);
  int changed = len >= outlen;
  for (size_t i = 0; i < len && !changed; i++)
    changed = unsafe((unsigned char)in[i]);
  if (!changed) {
    memcpy(out, in, len + 1);
    return 0;
  }
  /* Room for the prefix: outlen less "~" + 8 hex digits + NUL. */
  size_t keep = outlen - 10;
  if (keep > len)
    keep = len;
  while (keep > 0 && ((unsigned char)in[keep] & 0xC0) == 0x80)
    keep--;
  for (size_t i = 0; i < keep; i++)
    out[i] = unsafe((unsigned char)in[i]) ? '_' : in[i];
  snprintf(out + keep, outlen - keep, "~%08x", (unsigned)fnv1a32(in));
  return 1;
}
