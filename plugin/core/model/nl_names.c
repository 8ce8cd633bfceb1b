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

/* Not allowed in one NATS subject token: white space, control characters,
 * the separator and the wildcards. */
static int token_unsafe(unsigned char ch) {
  return ch <= ' ' || ch == 0x7f || ch == '.' || ch == '*' || ch == '>';
}

/* Copies in to out; or, when in holds a character bad() rejects, does not
 * fit, or is empty and force_empty is set: cuts it at a UTF-8 boundary,
 * replaces rejected characters by '_' and appends "~" and a hash of the
 * whole original. Returns 1 when changed, 0 when copied. */
static int fit(const char *in, char *out, size_t outlen,
               int (*bad)(unsigned char), int force_empty) {
  size_t len = strlen(in);
  int changed = len >= outlen || (force_empty && len == 0);
  for (size_t i = 0; i < len && !changed; i++)
    changed = bad((unsigned char)in[i]);
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
    out[i] = bad((unsigned char)in[i]) ? '_' : in[i];
  snprintf(out + keep, outlen - keep, "~%08x", (unsigned)fnv1a32(in));
  return 1;
}

int nl_name_fit(const char *in, char *out, size_t outlen) {
  return fit(in, out, outlen, unsafe, 0);
}

int nl_name_account_part(const char *account, char *out, size_t outlen) {
  size_t n = 0;
  int changed = 0;
  for (const char *p = account; *p; p++) {
    const char *piece = *p == '-' ? "~2d" : *p == '~' ? "~7e" : NULL;
    size_t len = piece ? 3 : 1;
    if (n + len >= outlen) {
      out[n] = '\0';
      return -1;
    }
    if (piece) {
      memcpy(out + n, piece, 3);
      changed = 1;
    } else {
      out[n] = *p;
    }
    n += len;
  }
  out[n] = '\0';
  return changed;
}

int nl_name_token(const char *in, char *out, size_t outlen) {
  return fit(in, out, outlen, token_unsafe, 1);
}

bool nl_subject_token_valid(const char *name) {
  if (name[0] == '\0')
    return false;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (token_unsafe(*p))
      return false;
  return true;
}

const char *nl_shell_word(const char *name, char *buf, size_t len) {
  bool plain = name[0] != '\0';
  for (const char *p = name; *p && plain; p++)
    plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || *p == '_' || *p == '-';
  if (plain) {
    snprintf(buf, len, "%s", name);
    return buf;
  }
  size_t o = 0;
  if (len < 3) {
    if (len)
      buf[0] = '\0';
    return buf;
  }
  buf[o++] = '\'';
  for (const char *p = name; *p && o + 5 < len; p++) {
    if (*p == '\'') {
      memcpy(buf + o, "'\\''", 4);
      o += 4;
    } else {
      buf[o++] = *p;
    }
  }
  buf[o++] = '\'';
  buf[o] = '\0';
  return buf;
}

void nl_shell_names_of(const char *stream, const char *consumer,
                       nl_shell_names *q) {
  nl_shell_word(stream, q->stream, sizeof(q->stream));
  nl_shell_word(consumer ? consumer : "", q->consumer, sizeof(q->consumer));
}

bool nl_cli_name_usable(const char *name) {
  if (name == NULL || name[0] == '-' || strlen(name) > 255 ||
      !nl_utf8_valid(name))
    return false;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    if (*p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
      return false;
  return true;
}

const char *nl_printable(const char *text, bool nagios, char *out, size_t len) {
  size_t o = 0;
  const unsigned char *p = (const unsigned char *)(text ? text : "");
  for (; *p && o + 1 < len; p++) {
    unsigned char ch = *p;
    if (ch == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
      out[o++] = '?';
      p++;
    } else if (ch < 0x20 || ch == 0x7f) {
      out[o++] = '?';
    } else {
      out[o++] = nagios && ch == '|' ? '/' : (char)ch;
    }
  }
  if (len > 0)
    out[o] = '\0';
  return out;
}

size_t nl_utf8_len(const unsigned char *s) {
  if (s[0] < 0x80)
    return 1;
  size_t n = (s[0] & 0xE0) == 0xC0   ? 2
             : (s[0] & 0xF0) == 0xE0 ? 3
             : (s[0] & 0xF8) == 0xF0 ? 4
                                     : 0;
  if (n == 0 || s[0] == 0xC0 || s[0] == 0xC1 || s[0] > 0xF4)
    return 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xC0) != 0x80)
      return 0;
  return n;
}

bool nl_utf8_valid(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t i = 0; p[i];) {
    size_t n = nl_utf8_len(p + i);
    if (n == 0)
      return false;
    i += n;
  }
  return true;
}
