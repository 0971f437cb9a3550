/* SPDX-License-Identifier: MIT */
/* Did-you-mean suggestions (harness/scene/suggest.c). */
#ifndef SCENETEST_HARNESS_SUGGEST_H
#define SCENETEST_HARNESS_SUGGEST_H

#include <stddef.h>

/* docs/scene-format.md#load-errors: a suggestion is at most this many edits
 * away. */
#define ST__SUGGEST_MAX 2

/* The candidate nearest word (at most ST__SUGGEST_MAX edits, an adjacent
 * transposition counting as one), the first of equals in list order;
 * NULL when none is near enough. The result is one of candidates
 * (borrowed). Thread-safety: any thread. */
const char *st__suggest(const char *word /* IN */,
                        const char *const *candidates /* IN */, size_t n);

/* The edit distance of a and b as st__suggest counts it, capped: above
 * ST__SUGGEST_MAX (or for words over 64 bytes) it is ST__SUGGEST_MAX + 1.
 * Thread-safety: any thread. */
size_t st__suggest_distance(const char *a /* IN */, const char *b /* IN */);

#endif
