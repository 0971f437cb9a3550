/* SPDX-License-Identifier: MIT */
/* Did-you-mean: the candidate nearest a misspelt word by edit distance
 * (Levenshtein, with an adjacent transposition counting as one edit, as
 * in the optimal string alignment distance), within
 * docs/scene-format.md#load-errors's limit of two edits. Used by the loader for
 * keys and by the validation pass for platforms and ops. */
#include <string.h>

#include "scene/suggest.h"

#define MAX_WORD 64

/* Optimal string alignment distance, capped: anything above cap returns
 * cap + 1, so long words cost nothing. */
static size_t distance(const char *a, const char *b, size_t cap) {
  size_t la = strlen(a), lb = strlen(b);
  size_t rows[3][MAX_WORD + 1];
  if (la > MAX_WORD || lb > MAX_WORD)
    return cap + 1;
  if ((la > lb ? la - lb : lb - la) > cap)
    return cap + 1;
  size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2];
  for (size_t j = 0; j <= lb; j++)
    prev[j] = j;
  for (size_t i = 1; i <= la; i++) {
    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t d = prev[j] + 1;
      if (cur[j - 1] + 1 < d)
        d = cur[j - 1] + 1;
      if (prev[j - 1] + cost < d)
        d = prev[j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          prev2[j - 2] + 1 < d)
        d = prev2[j - 2] + 1;
      cur[j] = d;
    }
    size_t *t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb];
}

size_t st__suggest_distance(const char *a, const char *b) {
  return distance(a, b, ST__SUGGEST_MAX);
}

const char *st__suggest(const char *word, const char *const *candidates,
                        size_t n) {
  const char *best = NULL;
  size_t best_d = ST__SUGGEST_MAX + 1;
  for (size_t i = 0; i < n; i++) {
    if (candidates[i] == NULL || strcmp(candidates[i], word) == 0)
      continue;
    size_t d = distance(word, candidates[i], ST__SUGGEST_MAX);
    /* The first of equally near candidates wins: lists are in a fixed
     * order, so the suggestion is stable. */
    if (d < best_d) {
      best_d = d;
      best = candidates[i];
    }
  }
  return best;
}
