/* SPDX-License-Identifier: MIT */
/* A case's params as values
 * (docs/scene-format.md#params-expressions-and-lists): a number, a param name
 * or an expression evaluated against one case, derived params followed through
 * their own expressions, list params for the fields that take a whole list. The
 * plan (every arg field) and the loader (rounds, rtol, atol, timeout) resolve
 * through these, so every field reads params alike and every message has the
 * same form. */
#ifndef SCENETEST_HARNESS_PARAMS_H
#define SCENETEST_HARNESS_PARAMS_H

#include "scene/expr.h"
#include "scene/scene.h"

/* Where and what: one load error. */
typedef struct st__val_error {
  int line, column;
  char message[480];
} st__val_error;

/* The column of byte offset off of v's text (its first character's plus
 * off when the text maps one to one, else v's own column). */
int st__val_column(const st__val *v /* IN */, size_t off);

/* The value of v (ST__VAL_NUM, or ST__VAL_NAME: a param name or an
 * expression) for case k in domain. what names the field in messages
 * ("shape", "fill"). Returns 0 with *out, and *dep set to 1 when a param
 * was read; else -1 with *err at the offending token (in a derived
 * param's own expression when the problem is there).
 * Thread-safety: any thread. */
int st__val_eval(const st__case *k /* IN */, const st__val *v /* IN */,
                 st__expr_domain domain, const char *what /* IN */,
                 st__num *out /* OUT */, int *dep /* IN/OUT */,
                 st__val_error *err /* OUT */) ST_WUR;

/* The list param v names (shape: DIMS), for case k: 0 with *out, or -1
 * with *err (no such param, or a param that is not a list).
 * Thread-safety: any thread. */
int st__val_list(const st__case *k /* IN */, const st__val *v /* IN */,
                 const char *what /* IN */,
                 const st__param **out /* OUT: borrowed from k */,
                 st__val_error *err /* OUT */) ST_WUR;

/* Case k's param of that name, or NULL. Thread-safety: any thread. */
const st__param *st__case_param(const st__case *k /* IN */,
                                const char *name /* IN */);

/* Sets `used` on the param of that name (NULL-safe for unknown names)
 * and on every param its expression or list reaches, which the
 * unused-param warning reads (docs/scene-format.md#load-errors).
 * Thread-safety: one thread per case. */
void st__case_param_use(st__case *k /* IN/OUT */, const char *name /* IN */);
/* st__case_param_use for every name the text of v (a name or an
 * expression) holds. Thread-safety: one thread per case. */
void st__case_val_use(st__case *k /* IN/OUT */, const st__val *v /* IN */);

#endif
