/* SPDX-License-Identifier: MIT */
/* The run's order: --repeat iterations of the selection and the --shuffle
 * permutation of each (docs/cli.md#repeat-and-shuffle). Only the order changes:
 * a case's inputs depend on its scene, case, argument names and --seed, never
 * on where it runs in the order or in which iteration. */
#include <stdlib.h>
#include <string.h>

#include "run/order.h"

/* splitmix64 (Steele, Lea, Flood 2014; the mix of Vigna's splitmix64.c):
 * the increment and the two multipliers are its published constants. */
static uint64_t splitmix64_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

void st__shuffle(size_t *items, size_t n, uint64_t seed) {
  uint64_t state = seed;
  size_t i;

  /* Fisher-Yates from the top, as docs/cli.md#repeat-and-shuffle writes it; the
   * modulo bias is part of the pinned permutation. */
  for (i = n; i-- > 1;) {
    size_t j = (size_t)(splitmix64_next(&state) % ((uint64_t)i + 1));
    size_t t = items[i];
    items[i] = items[j];
    items[j] = t;
  }
}

st_status st__order_build(const st_case_ref *refs, size_t n, unsigned repeat,
                          int shuffle, uint64_t shuffle_seed, st_case_ref **out,
                          unsigned **iters, size_t *count, st_error *err) {
  st_case_ref *o = NULL;
  unsigned *it = NULL;
  size_t *perm = NULL, total, i;
  unsigned k;

  *out = NULL;
  *iters = NULL;
  *count = 0;
  if (repeat == 0)
    repeat = 1;
  if (n > 0 && repeat > SIZE_MAX / sizeof *o / n)
    return st_error_set(err, ST_EUSAGE,
                        "--repeat %u times %zu cases is too many", repeat, n);
  total = n * repeat;
  /* One more entry so that an empty selection still allocates. */
  o = malloc((total + 1) * sizeof *o);
  it = malloc((total + 1) * sizeof *it);
  perm = malloc((n + 1) * sizeof *perm);
  if (o == NULL || it == NULL || perm == NULL) {
    free(o);
    free(it);
    free(perm);
    return st_error_set(err, ST_ENOMEM, "out of memory");
  }
  for (k = 1; k <= repeat; k++) {
    for (i = 0; i < n; i++)
      perm[i] = i;
    if (shuffle)
      st__shuffle(perm, n, shuffle_seed + (uint64_t)k - 1);
    for (i = 0; i < n; i++) {
      o[(size_t)(k - 1) * n + i] = refs[perm[i]];
      it[(size_t)(k - 1) * n + i] = k;
    }
  }
  free(perm);
  *out = o;
  *iters = it;
  *count = total;
  return ST_OK;
}
