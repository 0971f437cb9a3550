/* SPDX-License-Identifier: MIT */
/* The backend toolkit: what every built-in backend (and level 3's sharded
 * dispatch) builds its kernels from. Op tables and their registration,
 * the scalar of scale/axpy, shard and reduce-block arithmetic, the
 * combining of reduce_sum partials, the pool drivers that split
 * element-wise, row and reduce work over the thread pool, and transpose by
 * element size. Element access is base/dtype.c's (st_tensor_get_f64 and
 * friends, scenetest/tensor.h): one implementation, one set of rules. */
#ifndef SCENETEST_HARNESS_TOOLKIT_H
#define SCENETEST_HARNESS_TOOLKIT_H

#include <scenetest/registry.h>

#include "base/dtype.h"
#include "base/pool.h"
#include "base/op_list.h"

/* reduce_sum sums in fixed blocks of this many elements: a block's partial
 * is summed sequentially, the partials are combined in block order, so the
 * result depends on neither the thread nor the shard count. Shards are
 * whole blocks. */
#define ST__REDUCE_BLOCK ((size_t)4096)

/* One op implementation of a backend. Tables end with {NULL, NULL}. */
typedef struct st__op_entry {
  const char *op;
  st_op_fn fn;
} st__op_entry;

/* Registers every entry of ops for backend on behalf of module; stops at
 * the first failure. Thread-safety: any thread. */
st_status st__ops_register(st_registry *reg /* IN/OUT */,
                           const char *module /* IN */,
                           const char *backend /* IN */,
                           const st__op_entry *ops /* IN */,
                           st_error *err /* OUT: may be NULL */) ST_WUR;
/* The implementation of op in ops, or NULL. Thread-safety: any thread. */
st_op_fn st__ops_find(const st__op_entry *ops /* IN */,
                      const char *op /* IN */);

/* The scalar of scale/axpy for a float tensor, and for an integer one
 * (scalar->i when is_int, else (int64)f; st_op_check has made sure f fits
 * int64), as two's complement bits. Thread-safety: any thread. */
double st__scalar_f64(const st_op_call *call /* IN */);
uint64_t st__scalar_u64(const st_op_call *call /* IN */);

/* The element-wise ops are the rows of op_list.h whose family is EW:
 * ST__EW_MAP(XX, A, B) gives XX(A, B, op, KIND) for each. Tensor
 * positions: binary (a, b, out); copy, relu, scale (x, y); axpy (x, y
 * inout). */
/* Element-wise op kinds, ST__EW_COPY (0) .. ST__EW_RELU. */
#define ST__EW_ENUM(A, B, op, KIND) ST__EW_##KIND,
typedef enum st__ew { ST__EW_MAP(ST__EW_ENUM, , ) } st__ew;
#undef ST__EW_ENUM

/* Checks a reduce_sum call (st_op_check) and gives the block range
 * [*kb0, *kb1) of its shard, out of ceil(numel / ST__REDUCE_BLOCK) blocks.
 * Thread-safety: any thread. */
st_status st__reduce_shard_blocks(st_op_call *call /* IN/OUT: message on
                                                       failure */
                                  ,
                                  size_t *kb0 /* OUT */,
                                  size_t *kb1 /* OUT */) ST_WUR;
/* The element range of block k of x. Thread-safety: any thread. */
void st__reduce_block_range(const st_tensor *x /* IN */, size_t k,
                            size_t *begin /* OUT */, size_t *end /* OUT */);

/* A reduce_sum block partial: u for integer dtypes (two's complement bits,
 * added with wrap-around), f for the others. Eight bytes either way, so an
 * array of them is also the byte layout level 3's workers send. */
typedef union st__partial {
  double f;
  uint64_t u;
} st__partial;
/* Stores into out[0] the n partials added in order (the order is part of
 * the result: it is the golden's). Thread-safety: any thread; out is the
 * caller's. */
void st__reduce_combine(st_tensor *out /* IN/OUT */,
                        const st__partial *partials /* IN: n of them */,
                        size_t n);

/* Checks a row op's call (st_op_check) and gives the rows (dimension 0)
 * of its output tensor (tensor index `out`) that the call's shard
 * computes. Thread-safety: any thread. */
st_status st__shard_rows(st_op_call *call /* IN/OUT: message on failure */,
                         size_t out, size_t *r0 /* OUT */,
                         size_t *r1 /* OUT */) ST_WUR;

/* A typed transpose kernel: output rows [r0, r1) of y[cols, rows] =
 * x[rows, cols]^T, for elements of one size. */
typedef void (*st__transpose_fn)(const void *x /* IN */, void *y /* OUT */,
                                 size_t rows, size_t cols, size_t r0,
                                 size_t r1);
/* Output rows [r0, r1) of transpose through kernels[0..3], the kernels for
 * 1-, 2-, 4- and 8-byte elements, by x's element size (every dtype has one
 * of those sizes; the kernels move bits). The call must have passed
 * st_op_check. Thread-safety: any thread; disjoint row ranges may run
 * concurrently. */
void st__transpose_by_size(st_op_call *call /* IN/OUT */, size_t r0, size_t r1,
                           const st__transpose_fn kernels[4] /* IN */);

/* An element-wise kernel over [begin, end) (st__ref_elementwise,
 * st__cpu_elementwise) and a block sum (st__ref_sum_*, st__cpu_sum_*):
 * what the reference and threads backends plug into the pool drivers
 * below. */
typedef void (*st__ew_fn)(st__ew kind, st_op_call *call /* IN/OUT */,
                          size_t begin, size_t end);
typedef double (*st__sum_f64_fn)(const st_tensor *x /* IN */, size_t begin,
                                 size_t end);
typedef uint64_t (*st__sum_u64_fn)(const st_tensor *x /* IN */, size_t begin,
                                   size_t end);

/* Checks an element-wise call (st_op_check) and gives the element range
 * [*begin, *end) of its shard. Thread-safety: any thread. */
st_status st__ew_shard(st_op_call *call /* IN/OUT: message on failure */,
                       size_t *begin /* OUT */, size_t *end /* OUT */) ST_WUR;
/* An element-wise op over the pool: checks the call, then runs ew on
 * chunks of the shard's elements. Thread-safety: any thread. */
st_status st__ew_pool(st_op_call *call /* IN/OUT */, st__ew kind,
                      st__ew_fn ew) ST_WUR;
/* A row kernel over output rows [r0, r1) (st__ref_matmul_rows and the
 * like). */
typedef void (*st__rows_fn)(st_op_call *call /* IN/OUT */, size_t r0,
                            size_t r1);
/* Output rows [r0, r1) over the pool, in chunks of grain rows (the chunk
 * boundaries depend on r1 - r0 and grain only), each chunk by rows.
 * Thread-safety: any thread. */
void st__rows_pool(st_op_call *call /* IN/OUT */, size_t r0, size_t r1,
                   size_t grain, st__rows_fn rows);
/* A row op over the pool: checks the call (st_op_check), then computes
 * the shard's rows of output tensor `out` by rows in chunks of about
 * `work` element operations, rounded up to whole tiles of `tile` rows
 * (tile >= 1). A row costs the output's columns, times K (tensor 0's
 * columns) for matmul (k_terms). Thread-safety: any thread. */
st_status st__rows_op(st_op_call *call /* IN/OUT */, size_t out, size_t work,
                      int k_terms, size_t tile, st__rows_fn rows) ST_WUR;
/* reduce_sum over the pool: checks the call, sums the shard's blocks in
 * parallel (sum_f for floats, sum_u for integers) and combines the
 * partials in block order. With shard_count > 1 (level 3) `out` gets the
 * partial sum of the shard's blocks and the harness combines the shards;
 * with one shard, the sum. Thread-safety: any thread. */
st_status st__reduce_sum_pool(st_op_call *call /* IN/OUT */,
                              st__sum_f64_fn sum_f,
                              st__sum_u64_fn sum_u) ST_WUR;

#endif
