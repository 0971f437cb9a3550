/* SPDX-License-Identifier: MIT */
/* The `threads` platform: the built-in ops split over the process's
 * pthread pool (st__parallel_for, up to call->max_threads threads, 0 = all
 * cores). Element-wise ops, softmax and reduce_sum run the cpu backend's
 * typed loops on disjoint ranges; matmul runs the reference's kernel,
 * blocked over rows and columns (a tile of accumulators stays in L1 while
 * b's rows stream through), on chunks of whole row tiles, and transpose the
 * cpu backend's tiled kernels on whole tiles of rows. Sums keep the
 * golden's order (k ascending per matmul element, fixed reduce_sum blocks
 * combined in block order), so results do not depend on the thread
 * count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

/* Work per row chunk: large enough that a chunk costs far more than
 * claiming it, small enough to balance over a few cores. (Element-wise
 * chunks are st__ew_pool's.) */
#define ROW_WORK ((size_t)1 << 16)

/* Matmul tile rows: ref_typed.c's ROWS_B. */
#define MB 4

/* Transpose tile edge: the cpu backend's kernels'. */
#define TB ST__CPU_TRANSPOSE_TILE

static ST_WUR st_status thr_ew(st_op_call *call, st__ew kind) {
  return st__ew_pool(call, kind, st__cpu_elementwise);
}

/* The element-wise ops, thr_copy .. thr_relu. */
ST__EW_OPS(thr, thr_ew)

/* Whole MB-row tiles per chunk, except at the end. The rows are the
 * reference's blocked kernel (ref_typed.c, MB x 256 tiles, built at -O3):
 * every c[i, j] is 0.0 plus a[i, k] * b[k, j] for k ascending, in double,
 * the golden's sum; float16/bfloat16 take its generic path. */
static ST_WUR st_status thr_matmul(st_op_call *call) {
  return st__rows_op(call, 2, ROW_WORK, 1, MB, st__ref_matmul_rows);
}

static void softmax_rows(st_op_call *call, size_t r0, size_t r1) {
  size_t cols = (size_t)call->tensors[0].shape[1];
  double *tmp = cols ? malloc(cols * sizeof *tmp) : NULL;
  if (tmp == NULL) {
    /* No scratch row: the reference kernel needs none and gives the same
     * values. */
    st__ref_softmax_rows(call, r0, r1);
    return;
  }
  st__cpu_softmax_rows(call, r0, r1, tmp);
  free(tmp);
}

static ST_WUR st_status thr_softmax(st_op_call *call) {
  return st__rows_op(call, 1, ROW_WORK, 0, 1, softmax_rows);
}

/* Block partials in parallel, combined in block order (st__reduce_sum_pool),
 * each block summed by the cpu backend's typed loops. */
static ST_WUR st_status thr_reduce_sum(st_op_call *call) {
  return st__reduce_sum_pool(call, st__cpu_sum_f64, st__cpu_sum_u64);
}

static void transpose_rows(st_op_call *call, size_t r0, size_t r1) {
  st__transpose_by_size(call, r0, r1, st__cpu_transpose_kernels);
}

/* Whole TB-row tiles per chunk, except at the end. */
static ST_WUR st_status thr_transpose(st_op_call *call) {
  return st__rows_op(call, 1, ROW_WORK, 0, TB, transpose_rows);
}

#define THR_OP(name, ...) {#name, thr_##name},
const st__op_entry st__threads_ops[] = ST__OP_TABLE(THR_OP);
static const char *const threads_platforms[] = {"threads", NULL};
ST__BUILTIN_MODULE(threads, "threads", threads_platforms)
