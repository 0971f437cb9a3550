/* SPDX-License-Identifier: MIT */
/* Did-you-mean suggestions (harness/scene/suggest.c). */
#ifndef SCENETEST_HARNESS_SUGGEST_H
#define SCENETEST_HARNESS_SUGGEST_H

#include <stddef.h>

/* SPEC §13: a suggestion is at most this many edits away. */
#define ST__SUGGEST_MAX 2

/* The candidate nearest word (at most ST__SUGGEST_MAX edits, an adjacent
 * transposition counting as one), the first of equals in list order;
 * NULL when none is near enough. The result is one of candidates
 * (borrowed). Thread-safety: any thread. */
const char *st__suggest(const char *word /* IN */,
                        const char *const *candidates /* IN */, size_t n);

#endif
