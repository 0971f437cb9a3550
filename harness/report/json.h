/* SPDX-License-Identifier: MIT */
/* Text escaping for the reporters: UTF-8 decoding that never fails (bad
 * bytes become U+FFFD), JSON string literals valid for any input bytes, and
 * YAML double-quoted scalars for TAP diagnostics. CLI-private. */
#ifndef SCENETEST_HARNESS_JSON_H
#define SCENETEST_HARNESS_JSON_H

#include <stdint.h>
#include <stdio.h>

#include <scenetest/common.h>

/* Decodes the code point at s[0..n) (n >= 1). Returns the bytes consumed
 * (1..4) and sets *cp; an invalid, overlong, surrogate or truncated
 * sequence consumes 1 byte and yields U+FFFD, so a caller always makes
 * progress. Thread-safety: any thread. */
size_t st__utf8_next(const unsigned char *s /* IN */, size_t n,
                     uint32_t *cp /* OUT */);

/* An escape table: for each ASCII code point what a format writes in its
 * place, NULL for none. st__escape_put writes table[cp] and returns 1
 * when cp has an entry, else writes nothing and returns 0.
 * Thread-safety: one thread per f. */
typedef const char *const st__escape_table[128];
int st__escape_put(FILE *f /* IN */, const st__escape_table table /* IN */,
                   uint32_t cp);

/* Writes cp (at most U+10FFFF, not a surrogate) as UTF-8.
 * Thread-safety: one thread per f. */
void st__utf8_put(FILE *f /* IN */, uint32_t cp);

/* Writes s[0..n) as a JSON string literal, quotes included: '"', '\\' and
 * control characters escaped (\n, \t, ... or \u00XX), U+007F and the
 * line separators U+2028/U+2029 as \uXXXX, invalid UTF-8 as \ufffd, the
 * rest as UTF-8. The result is valid JSON (RFC 8259) whatever the bytes.
 * Thread-safety: one thread per f. */
void st__json_string_n(FILE *f /* IN */, const char *s /* IN */, size_t n);
/* As above for a NUL-terminated string; NULL writes `null`. */
void st__json_string(FILE *f /* IN */, const char *s /* IN, may be NULL */);

/* Writes items[0..n) as a JSON array of strings: `["a", "b"]` (`[]` when
 * n is 0). Thread-safety: one thread per f. */
void st__json_string_array(FILE *f /* IN */, const char *const *items /* IN */,
                           size_t n);
/* Writes n "key": "value" members, ", "-separated and without braces, from
 * kv = {key0, value0, key1, value1, ...} (a NULL value writes null).
 * Thread-safety: one thread per f. */
void st__json_members(FILE *f /* IN */, const char *const *kv /* IN */,
                      size_t n);

/* Writes s as a YAML 1.1 double-quoted scalar in pure ASCII, quotes
 * included: '"', '\\', \n, \t, \r, other control characters as \xXX,
 * everything past ASCII as \uXXXX or \UXXXXXXXX, invalid UTF-8 as
 * \ufffd. PyYAML reads it back to the same text; prove's YAMLish reader
 * keeps \u escapes as text. NULL writes `~`.
 * Thread-safety: one thread per f. */
void st__yaml_string(FILE *f /* IN */, const char *s /* IN, may be NULL */);

/* Writes s on one line in printable ASCII, for a TAP directive's reason:
 * line breaks and other control characters become spaces, the rest past
 * ASCII \uXXXX as in st__yaml_string. Thread-safety: one thread per f. */
void st__ascii_line(FILE *f /* IN */, const char *s /* IN */);

#endif
