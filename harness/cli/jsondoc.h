/* SPDX-License-Identifier: MIT */
/* A strict JSON (RFC 8259) reader into a tree, for `scenetest merge`
 * (merge.c; docs/cli.md#merge): any bytes in, a sequence of top-level
 * values out (one document, or JSON Lines), or the line and column where
 * the bytes stopped being JSON and what was expected there. A pure
 * function over a buffer, so that the fuzz target (tests/fuzz/fuzz_merge.c)
 * drives exactly what the CLI runs. CLI-private. */
#ifndef SCENETEST_HARNESS_JSONDOC_H
#define SCENETEST_HARNESS_JSONDOC_H

#include <stddef.h>
#include <stdint.h>

typedef enum st__jtype {
  ST__J_NULL,
  ST__J_BOOL,
  ST__J_NUM,
  ST__J_STR,
  ST__J_ARR,
  ST__J_OBJ
} st__jtype;

typedef struct st__jval {
  st__jtype type;
  int b;                  /* BOOL */
  char *str;              /* STR: decoded UTF-8, no NUL; NUM: its text */
  size_t len;             /* of str */
  struct st__jval *items; /* ARR: elements; OBJ: member values */
  char **keys;            /* OBJ: member names (decoded) */
  size_t n;               /* ARR, OBJ: count */
  size_t line, col;       /* where the value starts, 1-based */
} st__jval;

/* Where and why the reading stopped. */
typedef struct st__jerr {
  size_t line, col;
  const char *expected; /* "a value", "',' or '}'", ... (static) */
} st__jerr;

#define ST__JSON_BAD (-1)
#define ST__JSON_NOMEM (-2)

/* Reads text[0..len) as whitespace-separated JSON values (at most 64
 * deep; a NUL byte is never JSON). 0 with *vals (n of them, malloc'd:
 * st__json_free); ST__JSON_BAD with *err filled, or ST__JSON_NOMEM, both
 * with *vals NULL and *n 0. Thread-safety: any thread. */
int st__json_parse(const char *text /* IN */, size_t len,
                   st__jval **vals /* OUT, owned */, size_t *n /* OUT */,
                   st__jerr *err /* OUT */);
void st__json_free(st__jval *vals /* IN, owned */, size_t n);

/* The member named key of an object, NULL when v is not an object or has
 * none (the last one, when repeated). */
const st__jval *st__json_get(const st__jval *v /* IN */,
                             const char *key /* IN */);
/* v as a non-negative integer (digits only, no fraction or exponent)
 * that fits 64 bits: 1 with *out, else 0. */
int st__json_u64(const st__jval *v /* IN */, uint64_t *out /* OUT */);

/* The value of hex digit c, or -1 when c is none (both JSON readers:
 * this one and rerun_parse.c's). Thread-safety: any thread. */
int st__json_hexval(char c);

/* Advances *p over the JSON number (RFC 8259 section 6) that starts
 * there, as far as it is one: 1 when it is whole, 0 with *p at the byte
 * where a digit was expected (both JSON readers). Thread-safety: any
 * thread. */
int st__json_number(const char **p /* IN/OUT */, const char *end /* IN */);

/* The JSON escape whose letter is at p (after its '\'), decoded into
 * enc (1 to 3 bytes of UTF-8, their count in *add; a \u naming a
 * surrogate, paired or not, becomes U+FFFD): the bytes it takes from p
 * (1, or 5 for \uXXXX); 0 for no letter of RFC 8259 section 7 (or
 * p == end); -1 for a \u without four hex digits; -2 for \u0000, which
 * no name of ours holds (both JSON readers). Thread-safety: any thread. */
int st__json_escape(const char *p /* IN */, const char *end /* IN */,
                    char enc[4] /* OUT */, size_t *add /* OUT */);

#endif
