/* SPDX-License-Identifier: MIT */
/* HTML escaping for the HTML reports (the run's and those of `timing` and
 * `compare`): text and attribute values that show any input bytes as
 * text, and JSON string literals that are safe inside a
 * <script type="application/json"> block. CLI-private; the tools layer may
 * include it (tests/lint/layers_check.py). */
#ifndef SCENETEST_HARNESS_HTML_ESCAPE_H
#define SCENETEST_HARNESS_HTML_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) as HTML text, valid both as element content and inside
 * a quoted attribute value: '&', '<', '>', '"' and '\'' as character
 * references; invalid UTF-8 (one U+FFFD per bad byte, as st__utf8_next)
 * and NUL as U+FFFD; the other C0 controls, DEL and the C1 controls as
 * the Control Pictures character that names them (&#x2401; for 0x01,
 * &#x2421; for DEL) or, for C1, U+FFFD; tab and newline as they are, a
 * carriage return before a newline dropped (CRLF output reads as lines)
 * and any other one as &#x240D;. Nothing the input holds can end an
 * element, open a tag or start a character reference.
 * Thread-safety: one thread per f. */
void st__html_text_n(FILE *f /* IN */, const char *s /* IN */, size_t n);
/* As above for a NUL-terminated string; NULL writes nothing. */
void st__html_text(FILE *f /* IN */, const char *s /* IN, may be NULL */);

/* Writes s as a JSON string literal (quotes included) that is also safe
 * inside <script type="application/json">: as st__json_string, plus '<',
 * '>' and '&' as \u003c, \u003e, \u0026, so no "</script" or "<!--" can
 * appear. NULL writes `null`. Thread-safety: one thread per f. */
void st__html_json_string(FILE *f /* IN */,
                          const char *s /* IN, may be NULL */);

#endif
