/* SPDX-License-Identifier: MIT */
/* XML 1.0 escaping (the JUnit report). The rules are those of XML 1.0
 * (Fifth Edition): §2.2 Char for which characters may appear at all,
 * §2.4 for '<' and '&' (and '>' in "]]>"), §2.11 for line ends and §3.3.3
 * for attribute-value normalisation, which is why tabs and line breaks
 * inside attributes are written as character references. */
#include <string.h>

#include "report/json.h"
#include "report/xml.h"

#define REPLACEMENT 0xFFFDu

/* XML 1.0 §2.2: Char ::= #x9 | #xA | #xD | [#x20-#xD7FF] |
 * [#xE000-#xFFFD] | [#x10000-#x10FFFF]. The decoder already turned
 * surrogates and bad bytes into U+FFFD. */
static int xml_char(uint32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* '&' and '<' always, '>' always (for "]]>"), '\r' so that a reader's
 * line-end handling keeps it; in an attribute also '"' and the other
 * whitespace that normalisation would turn into spaces. */
/* clang-format off */
static st__escape_table text_escapes = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['\r'] = "&#13;"};
static st__escape_table attr_escapes = {
    ['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;", ['\r'] = "&#13;",
    ['"'] = "&quot;", ['\t'] = "&#9;", ['\n'] = "&#10;"};
/* clang-format on */

void st__xml_escape(FILE *f, const char *s, int attr) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, n;

  if (s == NULL)
    return;
  n = strlen(s);
  while (i < n) {
    uint32_t cp;
    i += st__utf8_next(p + i, n - i, &cp);
    if (!xml_char(cp))
      cp = REPLACEMENT;
    if (!st__escape_put(f, attr ? attr_escapes : text_escapes, cp))
      st__utf8_put(f, cp);
  }
}
