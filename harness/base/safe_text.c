/* SPDX-License-Identifier: MIT */
/* The escaping of safe_text.h, one byte (or one C1 pair) at a time, so
 * that the buffer and the FILE writer agree byte for byte. */
#include <stdio.h>
#include <string.h>

#include "base/safe_text.h"

int st__safe_text_mark_at(const char *s, size_t n) {
  return n >= sizeof ST__TIMING_MARK - 1 &&
         memcmp(s, ST__TIMING_MARK, sizeof ST__TIMING_MARK - 1) == 0;
}

/* The escape for s[0..n) at its start, in out (at most 7 bytes and a
 * NUL), with *used the bytes of s it stands for; 0 when the byte goes
 * out as it is. */
static int escape_at(const unsigned char *s, size_t n, unsigned flags,
                     char out[8], size_t *used) {
  unsigned char c = s[0];
  *used = 1;
  if ((c == '\n' || c == '\t') && (flags & ST__SAFE_KEEP_LINES))
    return 0;
  if (c < 0x20 || c == 0x7f) {
    snprintf(out, 8, "\\x%02x", c);
    return 1;
  }
  if (c == 0xc2 && n > 1 && s[1] >= 0x80 && s[1] <= 0x9f) {
    snprintf(out, 8, "\\u%04x", s[1]);
    *used = 2;
    return 1;
  }
  if (c == '[' && st__safe_text_mark_at((const char *)s, n)) {
    memcpy(out, "\\x5b", 5);
    return 1;
  }
  return 0;
}

size_t st__safe_text(char *dst, size_t cap, const char *s, size_t n,
                     unsigned flags) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, o = 0;
  while (i < n) {
    char esc[8];
    size_t used, k;
    if (escape_at(p + i, n - i, flags, esc, &used)) {
      k = strlen(esc);
      if (o + k >= cap)
        break;
      memcpy(dst + o, esc, k);
      o += k;
    } else {
      if (o + 1 >= cap)
        break;
      dst[o++] = (char)p[i];
    }
    i += used;
  }
  dst[o] = '\0';
  return o;
}

void st__safe_text_put(FILE *f, const char *s, size_t n, unsigned flags) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    char esc[8];
    size_t used;
    if (escape_at(p + i, n - i, flags, esc, &used))
      fputs(esc, f);
    else
      fputc(p[i], f);
    i += used;
  }
}
