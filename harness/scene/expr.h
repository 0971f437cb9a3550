/* SPDX-License-Identifier: MIT */
/* Param expressions (docs/scene-format.md#params-expressions-and-lists):
 * the one grammar every field that takes a param name also takes —
 * integer and decimal literals, + - * / % ( ), unary minus, min(a, b),
 * max(a, b), ceil_div(a, b) and names — evaluated in the integer domain
 * (int64, exact division, overflow checked) or in double. No libyaml
 * here: the loader hands over the scalar's text, and an error comes back
 * as a byte offset into it, which the caller turns into FILE:LINE:COL. */
#ifndef SCENETEST_HARNESS_EXPR_H
#define SCENETEST_HARNESS_EXPR_H

#include <stddef.h>

#include "scene/scene.h"

typedef enum st__expr_domain {
  ST__EXPR_INT = 0,  /* shape dims, randint bounds, rounds, workers,
                        timeout, ints entries, integer-dtype values */
  ST__EXPR_FLOAT = 1 /* rtol, atol, init bounds, float-dtype values */
} st__expr_domain;

/* Longest name the grammar reads (the identifiers' limit). */
#define ST__EXPR_NAME_MAX 128

typedef struct st__expr_error {
  size_t offset;     /* byte offset of the offending token in the text (its
                        length for an unexpected end) */
  int elsewhere;     /* a lookup reported an error at a place of its own (a
                        derived param's expression): offset is meaningless
                        and the message is the lookup's */
  size_t head;       /* bytes of message's "expression '...'" head, before
                        its ": " (a grammar or arithmetic error), so that a
                        caller can insert the case; 0: a lookup's message */
  char message[320]; /* one line, no position */
} st__expr_error;

/* Resolves name (NUL-terminated) in domain. Returns 0 with *out; or
 * nonzero: with err->message empty the evaluator reports an unknown name
 * at the name's token; else err->message is the lookup's (set
 * err->elsewhere when it is not about this token). */
typedef int (*st__expr_lookup)(void *data, const char *name,
                               st__expr_domain domain, st__num *out,
                               st__expr_error *err);

/* Evaluates text. In ST__EXPR_INT every operand of an operator or a
 * function must be an integer, `/` must be exact (a remainder is an error
 * naming both operands), `%` is C's remainder, and every result must fit
 * int64; in ST__EXPR_FLOAT arithmetic is in double. A division (or `%`,
 * or ceil_div) by zero is an error in both. An expression that is a
 * single operand (`N`, `(N)`, `1.5`) yields it unchanged, so that the
 * field's own check says what is wrong with it. Returns 0 with *out, or
 * -1 with *err. Thread-safety: any thread. */
int st__expr_eval(const char *text /* IN */, st__expr_domain domain,
                  st__expr_lookup lookup, void *data, st__num *out /* OUT */,
                  st__expr_error *err /* OUT */) ST_WUR;

/* Called for each name an expression uses, in written order (function
 * names excluded); offset is the name's. Nonzero stops the check with
 * err->message as the error at that name. */
typedef int (*st__expr_name_fn)(void *data, const char *name, size_t offset,
                                st__expr_error *err);

/* Checks text's syntax (and literals' range) without evaluating it;
 * calls fn (may be NULL) for each name. Returns 0, or -1 with *err.
 * Thread-safety: any thread. */
int st__expr_check(const char *text /* IN */, st__expr_name_fn fn, void *data,
                   st__expr_error *err /* OUT */);

/* 1 if text is one name and nothing else (spaces aside): a param
 * reference, not an expression. */
int st__expr_is_name(const char *text /* IN */);

/* strtod in the C locale whatever the process's locale is (the loader's
 * numbers and expressions never follow LC_NUMERIC). Thread-safety: any
 * thread. */
double st__strtod_c(const char *s /* IN */, char **end /* OUT, may be NULL */);

/* Writes the shortest text that reads back (st__strtod_c) as the same
 * number into buf: an integer as itself, a float with the fewest %g
 * digits. Thread-safety: any thread. */
void st__num_str(const st__num *n /* IN */, char *buf /* OUT */, size_t size);

#endif
