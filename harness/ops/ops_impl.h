/* SPDX-License-Identifier: MIT */
/* Private to the built-in backends: the op tables each module registers,
 * element access for any dtype, and the reference (golden) kernels that the
 * other backends reuse as their slow path for float16/bfloat16. */
#ifndef SCENETEST_HARNESS_OPS_IMPL_H
#define SCENETEST_HARNESS_OPS_IMPL_H

#include <scenetest/registry.h>

#include "base/pool.h"

/* reduce_sum sums in fixed blocks of this many elements: a block's partial
 * is summed sequentially, the partials are combined in block order, so the
 * result depends on neither the thread nor the shard count. Shards are
 * whole blocks. */
#define ST__REDUCE_BLOCK ((size_t)4096)

/* The built-in ops (SPEC §2), XX(name) each, in the order of
 * st__builtin_ops and of every built-in op table: one list, so a backend
 * cannot miss an op. */
#define ST__BUILTIN_OP_MAP(XX)                                                 \
  XX(copy)                                                                     \
  XX(add)                                                                      \
  XX(sub)                                                                      \
  XX(mul)                                                                      \
  XX(scale)                                                                    \
  XX(axpy)                                                                     \
  XX(relu)                                                                     \
  XX(matmul)                                                                   \
  XX(softmax)                                                                  \
  XX(reduce_sum)                                                               \
  XX(transpose)

/* Defines a backend's seven element-wise ops, PREFIX_copy .. PREFIX_relu,
 * each returning EW(call, its st__ew kind). */
#define ST__EW_OPS(PREFIX, EW)                                                 \
  static st_status PREFIX##_copy(st_op_call *call) {                           \
    return EW(call, ST__EW_COPY);                                              \
  }                                                                            \
  static st_status PREFIX##_add(st_op_call *call) {                            \
    return EW(call, ST__EW_ADD);                                               \
  }                                                                            \
  static st_status PREFIX##_sub(st_op_call *call) {                            \
    return EW(call, ST__EW_SUB);                                               \
  }                                                                            \
  static st_status PREFIX##_mul(st_op_call *call) {                            \
    return EW(call, ST__EW_MUL);                                               \
  }                                                                            \
  static st_status PREFIX##_scale(st_op_call *call) {                          \
    return EW(call, ST__EW_SCALE);                                             \
  }                                                                            \
  static st_status PREFIX##_axpy(st_op_call *call) {                           \
    return EW(call, ST__EW_AXPY);                                              \
  }                                                                            \
  static st_status PREFIX##_relu(st_op_call *call) {                           \
    return EW(call, ST__EW_RELU);                                              \
  }

/* One op implementation of a backend. Tables end with {NULL, NULL}. */
typedef struct st__op_entry {
  const char *op;
  st_op_fn fn;
} st__op_entry;

extern const st__op_entry st__reference_ops[];
extern const st__op_entry st__cpu_ops[];
extern const st__op_entry st__threads_ops[];
extern const st__op_entry st__common_ops[];

/* Registers every entry of ops for backend on behalf of module; stops at
 * the first failure. Thread-safety: any thread. */
st_status st__ops_register(st_registry *reg /* IN */,
                           const char *module /* IN */,
                           const char *backend /* IN */,
                           const st__op_entry *ops /* IN */,
                           st_error *err /* OUT */) ST_WUR;
/* The implementation of op in ops, or NULL. Thread-safety: any thread. */
st_op_fn st__ops_find(const st__op_entry *ops /* IN */,
                      const char *op /* IN */);

/* 1 for int8..int64 and uint8 (not bool). */
int st__dtype_is_int(st_dtype dtype);
/* Bytes per element of t, from its dtype (0 for an invalid dtype). */
size_t st__elem_size(const st_tensor *t /* IN */);

/* Element i of t as a double (halves through the dtype.c conversions). */
double st__elem_get_f64(const st_tensor *t /* IN */, size_t i);
/* Stores v rounded once to t's dtype; integers wrap (two's complement). */
void st__elem_set_f64(st_tensor *t /* IN/OUT */, size_t i, double v);
/* Element i of an integer/bool tensor as its two's complement bits,
 * sign-extended to 64. */
uint64_t st__elem_get_u64(const st_tensor *t /* IN */, size_t i);
/* Stores the low bits of v (wrap-around). */
void st__elem_set_u64(st_tensor *t /* IN/OUT */, size_t i, uint64_t v);

/* The scalar of scale/axpy for a float tensor, and for an integer one
 * (scalar->i when is_int, else (int64)f; st_op_check has made sure f fits
 * int64), as two's complement bits. */
double st__scalar_f64(const st_op_call *call /* IN */);
uint64_t st__scalar_u64(const st_op_call *call /* IN */);

/* Element-wise op kinds. Tensor positions: binary (a, b, out); copy, relu,
 * scale (x, y); axpy (x, y inout). */
typedef enum st__ew {
  ST__EW_COPY = 0,
  ST__EW_ADD,
  ST__EW_SUB,
  ST__EW_MUL,
  ST__EW_SCALE,
  ST__EW_AXPY,
  ST__EW_RELU
} st__ew;

/* The reference kernels: any dtype, one element at a time through the
 * accessors above, float arithmetic in double rounded once to the dtype,
 * integer arithmetic in uint64_t. Ranges are of output elements (element
 * ops) or output rows (matmul, softmax, transpose). Thread-safety: any
 * thread; disjoint ranges may run concurrently. */
void st__ref_elementwise(st__ew kind, st_op_call *call /* IN/OUT */,
                         size_t begin, size_t end);
void st__ref_matmul_rows(st_op_call *call /* IN/OUT */, size_t r0, size_t r1);
void st__ref_softmax_rows(st_op_call *call /* IN/OUT */, size_t r0, size_t r1);
void st__ref_transpose_rows(st_op_call *call /* IN/OUT */, size_t r0,
                            size_t r1);
/* The sequential partial sum of x[begin, end) in double / in uint64_t. */
double st__ref_sum_f64(const st_tensor *x /* IN */, size_t begin, size_t end);
uint64_t st__ref_sum_u64(const st_tensor *x /* IN */, size_t begin, size_t end);

/* The cpu backend's typed kernels, which the threads backend splits over
 * the pool: element-wise over [begin, end) (any dtype; halves through the
 * reference kernels), softmax rows [r0, r1) with tmp holding one row of
 * doubles, and block sums equal to st__ref_sum_*. */
void st__cpu_elementwise(st__ew kind, st_op_call *call /* IN/OUT */,
                         size_t begin, size_t end);
void st__cpu_softmax_rows(st_op_call *call /* IN/OUT */, size_t r0, size_t r1,
                          double *tmp /* scratch */);
double st__cpu_sum_f64(const st_tensor *x /* IN */, size_t begin, size_t end);
uint64_t st__cpu_sum_u64(const st_tensor *x /* IN */, size_t begin, size_t end);

/* reduce_sum's block range [*kb0, *kb1) for the call's shard, out of
 * ceil(numel / ST__REDUCE_BLOCK) blocks. */
void st__reduce_shard_blocks(const st_op_call *call /* IN */,
                             size_t *kb0 /* OUT */, size_t *kb1 /* OUT */);
/* The element range of block k of x. */
void st__reduce_block_range(const st_tensor *x /* IN */, size_t k,
                            size_t *begin /* OUT */, size_t *end /* OUT */);

/* A typed transpose kernel: output rows [r0, r1) of y[cols, rows] =
 * x[rows, cols]^T, for elements of one size. */
typedef void (*st__transpose_fn)(const void *x, void *y, size_t rows,
                                 size_t cols, size_t r0, size_t r1);
/* Output rows [r0, r1) of transpose through kernels[0..3], the kernels for
 * 1-, 2-, 4- and 8-byte elements, by x's element size (any dtype of those
 * sizes: the kernels move bits); any other size through
 * st__ref_transpose_rows. */
void st__transpose_by_size(st_op_call *call /* IN/OUT */, size_t r0,
                           size_t r1, const st__transpose_fn kernels[4]);

/* The rows (dimension 0) of the op's output tensor (tensor index `out`)
 * that the call's shard computes. */
void st__shard_rows(const st_op_call *call /* IN */, size_t out,
                    size_t *r0 /* OUT */, size_t *r1 /* OUT */);

/* An element-wise kernel over [begin, end) (st__ref_elementwise,
 * st__cpu_elementwise) and a block sum (st__ref_sum_*, st__cpu_sum_*):
 * what the reference and threads backends plug into the pool drivers
 * below. */
typedef void (*st__ew_fn)(st__ew kind, st_op_call *call, size_t begin,
                          size_t end);
typedef double (*st__sum_f64_fn)(const st_tensor *x, size_t begin,
                                 size_t end);
typedef uint64_t (*st__sum_u64_fn)(const st_tensor *x, size_t begin,
                                   size_t end);

/* An element-wise op over the pool: checks the call, then runs ew on
 * chunks of the shard's elements. Thread-safety: any thread. */
st_status st__ew_pool(st_op_call *call /* IN/OUT */, st__ew kind,
                      st__ew_fn ew);
/* A row kernel over output rows [r0, r1) (st__ref_matmul_rows and the
 * like). */
typedef void (*st__rows_fn)(st_op_call *call, size_t r0, size_t r1);
/* Output rows [r0, r1) over the pool, in chunks of grain rows (the chunk
 * boundaries depend on r1 - r0 and grain only), each chunk by rows.
 * Thread-safety: any thread. */
void st__rows_pool(st_op_call *call /* IN/OUT */, size_t r0, size_t r1,
                   size_t grain, st__rows_fn rows);
/* reduce_sum over the pool: checks the call, sums the shard's blocks in
 * parallel (sum_f for floats, sum_u for integers) and combines the
 * partials in block order. With shard_count > 1 (level 3) `out` gets the
 * partial sum of the shard's blocks and the harness combines the shards;
 * with one shard, the sum. Thread-safety: any thread. */
st_status st__reduce_sum_pool(st_op_call *call /* IN/OUT */,
                              st__sum_f64_fn sum_f, st__sum_u64_fn sum_u);

#endif
