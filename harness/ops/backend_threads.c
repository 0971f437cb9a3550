/* SPDX-License-Identifier: MIT */
/* The `threads` platform: the built-in ops split over the process's
 * pthread pool (st__parallel_for, up to call->max_threads threads, 0 = all
 * cores). Element-wise ops, softmax and reduce_sum run the cpu backend's
 * typed loops on disjoint ranges; matmul is a row-parallel kernel blocked
 * over rows and columns (a tile of accumulators stays in L1 while b's rows
 * stream through), and transpose is tiled. Sums keep the golden's order
 * (k ascending per matmul element, fixed reduce_sum blocks combined in
 * block order), so results do not depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

/* Work per row chunk: large enough that a chunk costs far more than
 * claiming it, small enough to balance over a few cores. (Element-wise
 * chunks are st__ew_pool's.) */
#define ROW_WORK ((size_t)1 << 16)

/* Matmul tile: MB rows by NB columns of double accumulators (8 KiB). */
#define MB 4
#define NB 256

/* Transpose tile edge. */
#define TB 32

static ST_WUR st_status thr_ew(st_op_call *call, st__ew kind) {
  return st__ew_pool(call, kind, st__cpu_elementwise);
}

/* The element-wise ops, thr_copy .. thr_relu. */
ST__EW_OPS(thr, thr_ew)

/* Rows [r0, r1) of c, in MB x NB tiles. Every c[i, j] is 0.0 plus
 * a[i, k] * b[k, j] for k ascending, in double: the golden's sum. */
#define THR_MATMUL(T, SUF)                                                     \
  static void matmul_##SUF(st_op_call *call, size_t r0, size_t r1) {           \
    const T *a = call->tensors[0].data, *bm = call->tensors[1].data;           \
    T *c = call->tensors[2].data;                                              \
    size_t kk = (size_t)call->tensors[0].shape[1];                             \
    size_t n = (size_t)call->tensors[1].shape[1];                              \
    double acc[MB][NB];                                                        \
    for (size_t i0 = r0; i0 < r1; i0 += MB) {                                  \
      size_t mb = r1 - i0 < MB ? r1 - i0 : MB;                                 \
      for (size_t j0 = 0; j0 < n; j0 += NB) {                                  \
        size_t nb = n - j0 < NB ? n - j0 : NB;                                 \
        for (size_t ii = 0; ii < mb; ii++)                                     \
          for (size_t jj = 0; jj < nb; jj++)                                   \
            acc[ii][jj] = 0.0;                                                 \
        for (size_t k = 0; k < kk; k++) {                                      \
          const T *brow = bm + k * n + j0;                                     \
          for (size_t ii = 0; ii < mb; ii++) {                                 \
            double aik = (double)a[(i0 + ii) * kk + k];                        \
            double *ar = acc[ii];                                              \
            for (size_t jj = 0; jj < nb; jj++)                                 \
              ar[jj] += aik * (double)brow[jj];                                \
          }                                                                    \
        }                                                                      \
        for (size_t ii = 0; ii < mb; ii++)                                     \
          for (size_t jj = 0; jj < nb; jj++)                                   \
            c[(i0 + ii) * n + j0 + jj] = (T)acc[ii][jj];                       \
      }                                                                        \
    }                                                                          \
  }

THR_MATMUL(float, f32)
THR_MATMUL(double, f64)

static void matmul_rows(st_op_call *call, size_t r0, size_t r1) {
  switch (call->tensors[0].dtype) {
  case ST_DTYPE_FLOAT32:
    matmul_f32(call, r0, r1);
    break;
  case ST_DTYPE_FLOAT64:
    matmul_f64(call, r0, r1);
    break;
  default:
    st__ref_matmul_rows(call, r0, r1);
    break;
  }
}

/* Whole MB-row tiles per chunk, except at the end. */
static ST_WUR st_status thr_matmul(st_op_call *call) {
  return st__rows_op(call, 2, ROW_WORK, 1, MB, matmul_rows);
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

/* Output rows [r0, r1) of y[C, R] = x[R, C]^T in TB x TB tiles, so both
 * the reads and the writes of a tile stay within a few cache lines. */
#define THR_TRANSPOSE(T, SUF)                                                  \
  static void transpose_##SUF(const void *xv, void *yv, size_t rows,           \
                              size_t cols, size_t r0, size_t r1) {             \
    const T *x = xv;                                                           \
    T *y = yv;                                                                 \
    for (size_t rb = r0; rb < r1; rb += TB) {                                  \
      size_t re = r1 - rb < TB ? r1 : rb + TB;                                 \
      for (size_t jb = 0; jb < rows; jb += TB) {                               \
        size_t je = rows - jb < TB ? rows : jb + TB;                           \
        for (size_t r = rb; r < re; r++)                                       \
          for (size_t j = jb; j < je; j++)                                     \
            y[r * rows + j] = x[j * cols + r];                                 \
      }                                                                        \
    }                                                                          \
  }

THR_TRANSPOSE(uint8_t, 1)
THR_TRANSPOSE(uint16_t, 2)
THR_TRANSPOSE(uint32_t, 4)
THR_TRANSPOSE(uint64_t, 8)

static const st__transpose_fn transpose_kernels[4] = {
    transpose_1, transpose_2, transpose_4, transpose_8};

static void transpose_rows(st_op_call *call, size_t r0, size_t r1) {
  st__transpose_by_size(call, r0, r1, transpose_kernels);
}

/* Whole TB-row tiles per chunk, except at the end. */
static ST_WUR st_status thr_transpose(st_op_call *call) {
  return st__rows_op(call, 1, ROW_WORK, 0, TB, transpose_rows);
}

#define THR_OP(name, ...) {#name, thr_##name},
const st__op_entry st__threads_ops[] = ST__OP_TABLE(THR_OP);
static const char *const threads_platforms[] = {"threads", NULL};
ST__BUILTIN_MODULE(threads, "threads", threads_platforms)
