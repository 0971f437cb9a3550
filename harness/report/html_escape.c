/* SPDX-License-Identifier: MIT */
/* HTML escaping (report/html_escape.h): what the HTML reports write for
 * every string that came from a scene, a kernel, a log or captured
 * output. Built on the forgiving UTF-8 decoder of report/json.c, so a
 * byte sequence that is not UTF-8 becomes U+FFFD and never reaches the
 * page raw. */
#include <stdint.h>
#include <string.h>

#include "report/html_escape.h"
#include "report/json.h"

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD in UTF-8 */

/* clang-format off */
static st__escape_table html_escapes = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['"'] = "&quot;",
    ['\''] = "&#39;"};
/* clang-format on */

void st__html_text_n(FILE *f, const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;

  while (i < n) {
    uint32_t cp;
    size_t len = st__utf8_next(p + i, n - i, &cp);
    if (st__escape_put(f, html_escapes, cp)) {
      i += len;
      continue;
    }
    switch (cp) {
    case '\t':
    case '\n':
      fputc((int)cp, f);
      break;
    case '\r':
      if (i + 1 < n && p[i + 1] == '\n')
        break;
      fputs("&#x240D;", f);
      break;
    case 0:
      /* HTML forbids &#0; (WHATWG "null character reference"): a NUL
       * shows as U+FFFD. */
      fputs(REPLACEMENT, f);
      break;
    default:
      if (cp < 0x20)
        fprintf(f, "&#x%X;", 0x2400u + cp); /* Control Pictures */
      else if (cp == 0x7F)
        fputs("&#x2421;", f);
      else if (cp >= 0x80 && cp <= 0x9F)
        fputs(REPLACEMENT, f);
      else if (cp == 0xFFFD && len == 1)
        fputs(REPLACEMENT, f); /* a bad byte */
      else
        fwrite(p + i, 1, len, f); /* valid UTF-8, copied as it is */
      break;
    }
    i += len;
  }
}

void st__html_text(FILE *f, const char *s) {
  if (s != NULL)
    st__html_text_n(f, s, strlen(s));
}

void st__html_json_string(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, n;

  if (s == NULL) {
    fputs("null", f);
    return;
  }
  n = strlen(s);
  fputc('"', f);
  while (i < n) {
    uint32_t cp;
    size_t len = st__utf8_next(p + i, n - i, &cp);
    if (cp == '"' || cp == '\\')
      fprintf(f, "\\%c", (int)cp);
    else if (cp == '\n')
      fputs("\\n", f);
    else if (cp == '\t')
      fputs("\\t", f);
    else if (cp < 0x20 || cp == 0x7F || cp == '<' || cp == '>' || cp == '&' ||
             cp == 0x2028 || cp == 0x2029)
      fprintf(f, "\\u%04x", (unsigned)cp);
    else if (cp == 0xFFFD && len == 1)
      fputs("\\ufffd", f);
    else
      fwrite(p + i, 1, len, f);
    i += len;
  }
  fputc('"', f);
}
