/* SPDX-License-Identifier: MIT */
/* The per-element fills behind st__args_build (harness/case/fill.c): random
 * inits from the counter-based streams of args.h, and the 32-bit stream
 * that the float uniform fills use. The algorithm is specified in
 * docs/random.md; these functions and that page change together. */
#ifndef SCENETEST_HARNESS_FILL_H
#define SCENETEST_HARNESS_FILL_H

#include "scene/scene.h"

/* The 32 random bits of element index of stream key (the float32, float16
 * and bfloat16 uniform fills use these; everything else uses
 * st__rng_bits). Thread-safety: any thread. */
uint32_t st__rng_bits32(uint64_t key, uint64_t index);

/* Fills elements first..first+n of t (t->data holds all t->numel elements)
 * for a random init (ST__INIT_UNIFORM, ST__INIT_NORMAL or ST__INIT_RANDINT)
 * with parameters a and b from stream key. Any split of a tensor into
 * calls gives the same bytes. Returns ST_EINVAL for another init kind.
 * Thread-safety: any thread; calls on disjoint ranges may run in
 * parallel. */
st_status st__fill_random(st_tensor *t /* IN/OUT */, st__init_kind kind,
                          st__num a, st__num b, uint64_t key, uint64_t first,
                          size_t n) ST_WUR;

/* Test hook: allocations made by st__args_build / st__argset_clone on the
 * calling thread fail once this many have succeeded (-1: never, the
 * default). Thread-local, so only a test's own thread is affected. Defined
 * in harness/case/args.c. */
extern _Thread_local long st__args_fail_after;

#endif
