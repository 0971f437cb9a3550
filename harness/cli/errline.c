/* SPDX-License-Identifier: MIT */
/* The program's "scenetest: error: ..." lines: one line, whatever the
 * message carries. A message quotes what the user gave (an option's
 * value, a path, a platform name), and those may hold terminal escape
 * sequences that must not recolour, move or retitle the user's terminal
 * (D16 of issue 13): control bytes are written as \xHH, UTF-8's C1
 * controls (U+0080..U+009F, CSI among them) as \uHHHH, line breaks as
 * spaces. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/safe_text.h"
#include "cli/cli_internal.h"

void st__cli_vprint_printable(FILE *f, const char *fmt, va_list ap) {
  char small[1024], *text = small;
  const unsigned char *p;
  va_list copy;
  int n;

  va_copy(copy, ap);
  n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL)
    vsnprintf(text, (size_t)n + 1, fmt, copy);
  else if (text == NULL)
    text = small; /* the first 1023 bytes, rather than nothing */
  va_end(copy);
  if (n < 0)
    small[0] = '\0';
  for (p = (const unsigned char *)text; *p != '\0'; p++) {
    if (*p == '\n' || *p == '\r')
      fputc(' ', f);
    else if (*p == '\t')
      fputs("\\t", f);
    else if (*p < 0x20 || *p == 0x7f)
      fprintf(f, "\\x%02x", *p);
    else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
      fprintf(f, "\\u%04x", *++p);
    else if (*p == '[' &&
             st__safe_text_mark_at((const char *)p, strlen((const char *)p)))
      fputs("\\x5b", f); /* docs/reliability.md: never a TIMING line */
    else
      fputc(*p, f);
  }
  if (text != small)
    free(text);
}
