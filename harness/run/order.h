/* SPDX-License-Identifier: MIT */
/* The order a run reports its cases in: --repeat iterations of the
 * selection, each in selection order or, with --shuffle, in the
 * permutation docs/cli.md#repeat-and-shuffle pins (so another tool can replay
 * it). */
#ifndef SCENETEST_HARNESS_ORDER_H
#define SCENETEST_HARNESS_ORDER_H

#include <scenetest/run.h>

/* Permutes items[0..n) in place as docs/cli.md#repeat-and-shuffle says for one
 * iteration: state = seed; next() adds 0x9e3779b97f4a7c15 to state and returns
 * splitmix64's mix of it; for i = n-1 down to 1: j = next() % (i + 1),
 * swap items i and j. Thread-safety: one thread per items. */
void st__shuffle(size_t *items /* IN/OUT */, size_t n, uint64_t seed);

/* Builds the run's order from the n selected refs: repeat (>= 1)
 * iterations, iteration k (1-based) permuted with seed shuffle_seed + k - 1
 * when shuffle. *out and *iters (the iteration of each entry) are malloc'd
 * with *count = n * repeat entries (the caller frees both). ST_ENOMEM, or
 * ST_EUSAGE when n * repeat overflows. Thread-safety: any thread. */
st_status st__order_build(const st_case_ref *refs /* IN */, size_t n,
                          unsigned repeat, int shuffle, uint64_t shuffle_seed,
                          st_case_ref **out /* OUT */,
                          unsigned **iters /* OUT */, size_t *count /* OUT */,
                          st_error *err /* OUT */) ST_WUR;

#endif
