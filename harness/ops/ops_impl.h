/* SPDX-License-Identifier: MIT */
/* Private to the built-in backends: the op tables each module registers
 * (generated from op_list.h), the macro that defines the element-wise ops,
 * and the kernels one backend lends another: the reference (golden)
 * kernels, the slow path of the others for float16/bfloat16, and the cpu
 * backend's typed kernels, which the threads backend splits over the pool.
 * What every backend builds on is toolkit.h. */
#ifndef SCENETEST_HARNESS_OPS_IMPL_H
#define SCENETEST_HARNESS_OPS_IMPL_H

#include <scenetest/registry.h>

#include "base/op_list.h"
#include "ops/toolkit.h"

/* Defines a backend's element-wise ops (ST__EW_MAP), PREFIX_copy ..
 * PREFIX_relu, each returning EW(call, its st__ew kind). */
#define ST__EW_OP(PREFIX, EW, op, KIND)                                        \
  static ST_WUR st_status PREFIX##_##op(st_op_call *call) {                    \
    return EW(call, ST__EW_##KIND);                                            \
  }
#define ST__EW_OPS(PREFIX, EW) ST__EW_MAP(ST__EW_OP, PREFIX, EW)

/* A built-in backend's op table, in op_list.h's order: ENTRY(name, ...)
 * gives {"name", the backend's function}; a {NULL, NULL} entry ends it. */
#define ST__OP_TABLE(ENTRY)                                                    \
  {                                                                            \
    ST__BUILTIN_OP_MAP(ENTRY) { NULL, NULL }                                   \
  }

/* Defines a built-in module: st__module_NAME, named "NAME", providing
 * PLATFORMS (a NULL-terminated array), whose init registers the table
 * st__NAME_ops for BACKEND. */
#define ST__BUILTIN_MODULE(NAME, BACKEND, PLATFORMS)                           \
  static ST_WUR st_status NAME##_init(st_registry *reg, st_error *err) {       \
    return st__ops_register(reg, #NAME, BACKEND, st__##NAME##_ops, err);       \
  }                                                                            \
  const st_module st__module_##NAME = {                                        \
      ST_ABI_VERSION, sizeof(st_module), #NAME, PLATFORMS, NAME##_init,        \
  };

/* No platforms: what the reference and common modules provide. */
extern const char *const st__no_platforms[];

/* The built-in modules' op tables, in op_list.h's order. */
extern const st__op_entry st__reference_ops[];
extern const st__op_entry st__cpu_ops[];
extern const st__op_entry st__threads_ops[];
extern const st__op_entry st__common_ops[];

/* The reference kernels: any dtype, one element at a time through the
 * accessors of base/dtype.c, float arithmetic in double rounded once to the
 * dtype, integer arithmetic in uint64_t. Ranges are of output elements (element
 * ops) or output rows (matmul, softmax, transpose). Thread-safety: any
 * thread; disjoint ranges may run concurrently. */
void st__ref_elementwise(st__ew kind, st_op_call *call /* IN/OUT */,
                         size_t begin, size_t end);
/* The same over one dtype throughout for float32, float64 and the signed
 * integers, specialised outside the loop (ops/ref_typed.c, built at -O3);
 * 1 if it handled the call, 0 to take the generic path. */
int st__ref_elementwise_typed(st__ew kind, st_op_call *call /* IN/OUT */,
                              size_t begin, size_t end);
void st__ref_matmul_rows(st_op_call *call /* IN/OUT */, size_t r0, size_t r1);
/* The same, blocked and typed for float32/float64 throughout (ref_typed.c);
 * 1 if it handled the call, 0 to take the generic path. */
int st__ref_matmul_rows_typed(st_op_call *call /* IN/OUT */, size_t r0,
                              size_t r1);
/* The generic path alone, accessor per element: what the typed paths must
 * equal byte for byte (tests) and are measured against (bench_harness). */
void st__ref_matmul_rows_generic(st_op_call *call /* IN/OUT */, size_t r0,
                                 size_t r1);
void st__ref_softmax_rows(st_op_call *call /* IN/OUT */, size_t r0, size_t r1);
void st__ref_transpose_rows(st_op_call *call /* IN/OUT */, size_t r0,
                            size_t r1);
/* The sequential partial sum of x[begin, end) in double / in uint64_t. */
double st__ref_sum_f64(const st_tensor *x /* IN */, size_t begin, size_t end);
uint64_t st__ref_sum_u64(const st_tensor *x /* IN */, size_t begin, size_t end);
/* Typed block sums for float32/float64 and the integers but bool
 * (ref_typed.c): 1 with *out set if handled, 0 for the generic path. */
int st__ref_sum_f64_typed(const st_tensor *x /* IN */, size_t begin, size_t end,
                          double *out /* OUT */);
int st__ref_sum_u64_typed(const st_tensor *x /* IN */, size_t begin, size_t end,
                          uint64_t *out /* OUT */);
double st__ref_sum_f64_generic(const st_tensor *x /* IN */, size_t begin,
                               size_t end);
uint64_t st__ref_sum_u64_generic(const st_tensor *x /* IN */, size_t begin,
                                 size_t end);

/* The cpu backend's typed kernels, which the threads backend splits over
 * the pool: element-wise over [begin, end) (any dtype; halves through the
 * reference kernels), softmax rows [r0, r1) with tmp holding one row of
 * doubles, block sums equal to st__ref_sum_*, and transpose. Thread-safety: any
 * thread; disjoint ranges (each with its own tmp) may run concurrently. */
void st__cpu_elementwise(st__ew kind, st_op_call *call /* IN/OUT */,
                         size_t begin, size_t end);
void st__cpu_softmax_rows(st_op_call *call /* IN/OUT */, size_t r0, size_t r1,
                          double *tmp /* scratch */);
double st__cpu_sum_f64(const st_tensor *x /* IN */, size_t begin, size_t end);
/* Tiled transpose kernels for 1-, 2-, 4- and 8-byte elements
 * (st__transpose_by_size), in square tiles of ST__CPU_TRANSPOSE_TILE; a
 * row range that starts on a tile boundary keeps whole tiles. */
#define ST__CPU_TRANSPOSE_TILE 32
extern const st__transpose_fn st__cpu_transpose_kernels[4];
uint64_t st__cpu_sum_u64(const st_tensor *x /* IN */, size_t begin, size_t end);

#endif
