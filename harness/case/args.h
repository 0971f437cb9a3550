/* SPDX-License-Identifier: MIT */
/* Building a case's arguments from its plan: tensor buffers with their
 * inits (deterministic counter-based random streams) and scalars. */
#ifndef SCENETEST_HARNESS_ARGS_H
#define SCENETEST_HARNESS_ARGS_H

#include "scene/scene.h"

/* The bound arguments of one case. Tensor names point into the plan's
 * scene; data buffers are owned by the argset. */
typedef struct st__argset {
  st_tensor *tensors; /* owned */
  size_t n_tensors;
  st_scalar *scalars; /* owned */
  size_t n_scalars;
  /* borrowed: the set whose buffers some tensors here share (a tensor
   * whose data equals the lender's tensor at the same index is not
   * freed with this set); it must outlive this set. NULL: none. */
  const struct st__argset *lender;
  /* A gold set under `tolerance: bound` (case/bound_golden.h): per
   * tensor, the reference's magnitude sums and softmax's per-element n
   * (NULL for a tensor without them); owned. NULL: none. */
  double **magsum;
  double **nterm;
} st__argset;

/* Builds every argument of plan with seed. Errors (unreadable `file:`,
 * out of memory) go to err with the file position of the arg.
 * Thread-safety: any thread. */
st_status st__args_build(const st__plan *plan /* IN */, uint64_t seed,
                         st__argset *out /* OUT */,
                         st_error *err /* OUT */) ST_WUR;
/* Deep copy (tensor data included). */
st_status st__argset_clone(const st__argset *src /* IN */,
                           st__argset *dst /* OUT */) ST_WUR;
/* The initial values of a case (what `reset` and the input check go
 * back to): a clone of args, except that outputs the plan poisons
 * (docs/reliability.md#guard-zones-guard-pages-and-poisoning) get no buffer:
 * every run overwrites them with the poison, so their initial zeros would never
 * be read. Thread-safety: any thread. */
st_status st__argset_clone_init(const st__argset *args /* IN */,
                                const st__plan *plan /* IN */,
                                st__argset *init /* OUT */) ST_WUR;
/* The golden's arguments from init (st__argset_clone_init's): poisoned
 * outputs as zeros (their init, which init does not keep), the other
 * tensors copied; with share_inputs, inputs are init's own buffers,
 * borrowed, not copied (for a golden backend that never writes its
 * inputs: the built-in reference). Free it before init. Thread-safety:
 * any thread. */
st_status st__argset_clone_gold(const st__argset *init /* IN */,
                                const st__plan *plan /* IN */, int share_inputs,
                                st__argset *gold /* OUT */) ST_WUR;
/* Writes the `expected:` value of every output that has one
 * (st__rarg.expected) into its tensor of gold, over what golden wrote or
 * the copy of init; random forms draw from the arg's own stream. Errors
 * as st__args_build's. Thread-safety: any thread. */
st_status st__argset_fill_expected(const st__plan *plan /* IN */, uint64_t seed,
                                   st__argset *gold /* IN/OUT */,
                                   st_error *err /* OUT */) ST_WUR;
/* Copies tensor data of src into dst (same shapes); only tensors whose
 * role is not input when outputs_only; tensors without a buffer on either
 * side (a poisoned output in an init set) are left alone. */
void st__argset_copy_data(st__argset *dst /* IN/OUT */,
                          const st__argset *src /* IN */, int outputs_only);
/* Accepts a zeroed argset; buffers borrowed from set->lender stay. */
void st__argset_free(st__argset *set /* IN/OUT */);

/* Tunes glibc's allocator for the harness's pattern: tensor buffers of a
 * few MiB allocated and freed every case. By default glibc mmaps and
 * munmaps each of them, so every case pays a page fault per 4 KiB again
 * and parallel cases serialise on the address-space lock; kept in the heap
 * (up to glibc's 32 MiB cap) the next case reuses faulted pages. Measured
 * by bench/bench_jobs: -j 2 speed-up 1.70x -> 1.9x, -j 1 about 15% faster.
 * Process-wide, so only programs call it (the CLI, the benchmarks), never
 * the library on its own. Thread-safety: call before threads start. */
void st__args_tune_allocator(void);

/* The key of one tensor's random stream, from (scene, case, arg, seed)
 * only; see docs/scene-format.md. */
uint64_t st__rng_key(const char *scene /* IN */, const char *kase /* IN */,
                     const char *arg /* IN */, uint64_t seed);
/* The 64 random bits of element index of the stream key. */
uint64_t st__rng_bits(uint64_t key, uint64_t index);

/* Fills dst[0..n) with uniform float32 in [lo, hi) for elements
 * first..first+n of stream key (any chunking gives the same bytes).
 * The hot loop of the benchmark. */
void st__fill_uniform_f32(float *dst /* OUT */, size_t n, uint64_t key,
                          uint64_t first, double lo, double hi);

#endif
