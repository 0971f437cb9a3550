/* SPDX-License-Identifier: MIT */
/* The expressions of --tag and -k (docs/cli.md#tags-and--k): pytest's -m
 * and -k grammar, names joined by `and`, `or`, `not` and parentheses,
 * `not` binding tightest, then `and`, then `or`. What a name means (a tag
 * the case has, a substring of its id) is the caller's. CLI-private. */
#ifndef SCENETEST_HARNESS_TAGEXPR_H
#define SCENETEST_HARNESS_TAGEXPR_H

#include <stddef.h>

typedef struct st__tagexpr st__tagexpr;

/* Parses text. 0 with *out set (st__tagexpr_free); -1 with *out NULL, msg
 * the reason (one line) and *column its 1-based position in text; -2 out
 * of memory. A name is a run of letters, digits and _ . - : + [ ] = , /
 * \ that is not an operator word. Thread-safety: any thread. */
int st__tagexpr_parse(const char *text /* IN */, st__tagexpr **out /* OUT */,
                      size_t *column /* OUT */, char *msg /* OUT */,
                      size_t size);

/* The value of e when has(data, name) says whether each name holds.
 * Thread-safety: any thread (e is read only). */
int st__tagexpr_eval(const st__tagexpr *e /* IN */,
                     int (*has)(void *data, const char *name), void *data);

/* Accepts NULL. */
void st__tagexpr_free(st__tagexpr *e /* IN, owned */);

#endif
