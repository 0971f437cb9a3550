/* SPDX-License-Identifier: MIT */
/* Text escaping for the reporters: a forgiving UTF-8 decoder, JSON string
 * literals (events, later the json format) and YAML double-quoted scalars
 * (TAP diagnostics). Whatever bytes a message holds (a kernel's text, a
 * file name), the output stays well-formed. */
#include <stdio.h>
#include <string.h>

#include "base/safe_text.h"
#include "report/json.h"

#define REPLACEMENT 0xFFFDu

size_t st__utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
  uint32_t c = s[0], min;
  size_t len, i;

  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  /* RFC 3629 §4: lead bytes C0, C1 and F5..FF never occur; continuation
   * bytes alone are invalid. */
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    c &= 0x1F;
    min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    c &= 0x0F;
    min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    c &= 0x07;
    min = 0x10000;
  } else {
    *cp = REPLACEMENT;
    return 1;
  }
  if (n < len) {
    *cp = REPLACEMENT;
    return 1;
  }
  for (i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) {
      *cp = REPLACEMENT;
      return 1;
    }
    c = (c << 6) | (s[i] & 0x3Fu);
  }
  /* Overlong forms, UTF-16 surrogates and code points past U+10FFFF are
   * not UTF-8 either (RFC 3629 §3). */
  if (c < min || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) {
    *cp = REPLACEMENT;
    return 1;
  }
  *cp = c;
  return len;
}

void st__utf8_put(FILE *f, uint32_t cp) {
  if (cp < 0x80) {
    fputc((int)cp, f);
  } else if (cp < 0x800) {
    fputc((int)(0xC0 | (cp >> 6)), f);
    fputc((int)(0x80 | (cp & 0x3F)), f);
  } else if (cp < 0x10000) {
    fputc((int)(0xE0 | (cp >> 12)), f);
    fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
    fputc((int)(0x80 | (cp & 0x3F)), f);
  } else {
    fputc((int)(0xF0 | (cp >> 18)), f);
    fputc((int)(0x80 | ((cp >> 12) & 0x3F)), f);
    fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
    fputc((int)(0x80 | (cp & 0x3F)), f);
  }
}

/* A code point that is not a control character, in ASCII: printable
 * ASCII as itself, anything past it as a \u or \U escape. */
static void put_ascii_cp(FILE *f, uint32_t cp) {
  if (cp < 0x7F)
    fputc((int)cp, f);
  else if (cp <= 0xFFFF)
    fprintf(f, "\\u%04x", (unsigned)cp);
  else
    fprintf(f, "\\U%08x", (unsigned)cp);
}

/* How a dialect writes a code point that is not one of the escapes that
 * JSON and YAML share (quote, backslash, \n, \r, \t). */
typedef void (*put_cp_fn)(FILE *f, uint32_t cp);

/* clang-format off */
static st__escape_table quoted_escapes = {
    ['"'] = "\\\"", ['\\'] = "\\\\", ['\n'] = "\\n", ['\r'] = "\\r",
    ['\t'] = "\\t"};
/* clang-format on */

/* s[0, n) as a double-quoted string: the shared escapes here, every other
 * code point through put_cp. The '[' of a [TIMING] token is written as
 * bracket (JSON's \u005b, YAML's \x5b: the same text to a reader of the
 * format) so that a line of TAP or JSON Lines in a CI log is never taken
 * for a phase or record line (docs/reliability.md). */
static void put_quoted(FILE *f, const char *s, size_t n, put_cp_fn put_cp,
                       const char *bracket) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;

  fputc('"', f);
  while (i < n) {
    uint32_t cp;
    if (p[i] == '[' && st__safe_text_mark_at(s + i, n - i)) {
      fputs(bracket, f);
      i++;
      continue;
    }
    i += st__utf8_next(p + i, n - i, &cp);
    if (!st__escape_put(f, quoted_escapes, cp))
      put_cp(f, cp);
  }
  fputc('"', f);
}

int st__escape_put(FILE *f, const st__escape_table table, uint32_t cp) {
  if (cp >= 128 || table[cp] == NULL)
    return 0;
  fputs(table[cp], f);
  return 1;
}

static void put_json_cp(FILE *f, uint32_t cp) {
  if (cp == '\b')
    fputs("\\b", f);
  else if (cp == '\f')
    fputs("\\f", f);
  /* U+2028/U+2029 are valid JSON but end lines in JavaScript and in some
   * line-oriented readers; JSON Lines stays one object a line. */
  else if (cp < 0x20 || cp == 0x7F || cp == 0x2028 || cp == 0x2029 ||
           cp == REPLACEMENT)
    fprintf(f, "\\u%04x", (unsigned)cp);
  else
    st__utf8_put(f, cp);
}

/* TAP::Parser::YAMLish::Reader (Test::Harness 3.44) understands \xXX but
 * not \uXXXX, so control characters use \x. Everything past ASCII is
 * escaped as \u/\U (YAML 1.1 §5.7): prove -v prints a "Wide character"
 * warning for any non-ASCII text in a TAP line, and a reader that does not
 * know \u keeps the escape as text. */
static void put_yaml_cp(FILE *f, uint32_t cp) {
  if (cp < 0x20 || cp == 0x7F)
    fprintf(f, "\\x%02x", (unsigned)cp);
  else
    put_ascii_cp(f, cp);
}

void st__json_string_n(FILE *f, const char *s, size_t n) {
  put_quoted(f, s, n, put_json_cp, "\\u005b");
}

void st__json_string(FILE *f, const char *s) {
  if (s == NULL)
    fputs("null", f);
  else
    st__json_string_n(f, s, strlen(s));
}

void st__json_string_array(FILE *f, const char *const *items, size_t n) {
  fputc('[', f);
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      fputs(", ", f);
    st__json_string(f, items[i]);
  }
  fputc(']', f);
}

void st__json_members(FILE *f, const char *const *kv, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i > 0)
      fputs(", ", f);
    st__json_string(f, kv[2 * i]);
    fputs(": ", f);
    st__json_string(f, kv[2 * i + 1]);
  }
}

void st__yaml_string(FILE *f, const char *s) {
  if (s == NULL)
    fputs("~", f);
  else
    put_quoted(f, s, strlen(s), put_yaml_cp, "\\x5b");
}

void st__ascii_line(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, n = strlen(s);

  while (i < n) {
    uint32_t cp;
    if (p[i] == '[' && st__safe_text_mark_at(s + i, n - i)) {
      fputs("\\x5b", f); /* docs/reliability.md, as in put_quoted */
      i++;
      continue;
    }
    i += st__utf8_next(p + i, n - i, &cp);
    if (cp < 0x20 || cp == 0x7F)
      fputc(' ', f);
    else
      put_ascii_cp(f, cp);
  }
}
