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

#include "backends.h"
#include "ops_impl.h"

/* Items per chunk: large enough that a chunk costs far more than claiming
 * it, small enough to balance over a few cores. */
#define EW_GRAIN ((size_t)1 << 15)
#define ROW_WORK ((size_t)1 << 16)

/* Matmul tile: MB rows by NB columns of double accumulators (8 KiB). */
#define MB 4
#define NB 256

/* Transpose tile edge. */
#define TB 32

typedef struct thr_ctx {
  st_op_call *call;
  st__ew kind;
  size_t offset; /* first element/row/block of the shard */
  double *partial_f;
  uint64_t *partial_u;
} thr_ctx;

static size_t rows_grain(size_t per_row) {
  return per_row >= ROW_WORK ? 1 : ROW_WORK / (per_row ? per_row : 1);
}

static void ew_chunk(void *ctx, size_t b, size_t e) {
  thr_ctx *c = ctx;
  st__cpu_elementwise(c->kind, c->call, c->offset + b, c->offset + e);
}

static st_status thr_ew(st_op_call *call, st__ew kind) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t b, e;
  st_shard_range(call->tensors[0].numel, call->shard_index, call->shard_count,
                 &b, &e);
  thr_ctx c = {call, kind, b, NULL, NULL};
  st__parallel_for(e - b, EW_GRAIN, call->max_threads, ew_chunk, &c);
  return ST_OK;
}

static st_status thr_copy(st_op_call *call) {
  return thr_ew(call, ST__EW_COPY);
}
static st_status thr_add(st_op_call *call) { return thr_ew(call, ST__EW_ADD); }
static st_status thr_sub(st_op_call *call) { return thr_ew(call, ST__EW_SUB); }
static st_status thr_mul(st_op_call *call) { return thr_ew(call, ST__EW_MUL); }
static st_status thr_scale(st_op_call *call) {
  return thr_ew(call, ST__EW_SCALE);
}
static st_status thr_axpy(st_op_call *call) {
  return thr_ew(call, ST__EW_AXPY);
}
static st_status thr_relu(st_op_call *call) {
  return thr_ew(call, ST__EW_RELU);
}

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

static void matmul_chunk(void *ctx, size_t b, size_t e) {
  thr_ctx *c = ctx;
  size_t r0 = c->offset + b, r1 = c->offset + e;
  switch (c->call->tensors[0].dtype) {
  case ST_DTYPE_FLOAT32:
    matmul_f32(c->call, r0, r1);
    break;
  case ST_DTYPE_FLOAT64:
    matmul_f64(c->call, r0, r1);
    break;
  default:
    st__ref_matmul_rows(c->call, r0, r1);
    break;
  }
}

static st_status thr_matmul(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t r0, r1;
  st__shard_rows(call, 2, &r0, &r1);
  size_t per_row =
      (size_t)call->tensors[0].shape[1] * (size_t)call->tensors[1].shape[1];
  /* Whole MB-row tiles per chunk, except at the end. */
  size_t grain = rows_grain(per_row);
  grain = (grain + MB - 1) / MB * MB;
  thr_ctx c = {call, ST__EW_COPY, r0, NULL, NULL};
  st__parallel_for(r1 - r0, grain, call->max_threads, matmul_chunk, &c);
  return ST_OK;
}

static void softmax_chunk(void *ctx, size_t b, size_t e) {
  thr_ctx *c = ctx;
  size_t cols = (size_t)c->call->tensors[0].shape[1];
  double *tmp = cols ? malloc(cols * sizeof *tmp) : NULL;
  if (tmp == NULL) {
    /* No scratch row: the reference kernel needs none and gives the same
     * values. */
    st__ref_softmax_rows(c->call, c->offset + b, c->offset + e);
    return;
  }
  st__cpu_softmax_rows(c->call, c->offset + b, c->offset + e, tmp);
  free(tmp);
}

static st_status thr_softmax(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t r0, r1;
  st__shard_rows(call, 1, &r0, &r1);
  thr_ctx c = {call, ST__EW_COPY, r0, NULL, NULL};
  st__parallel_for(r1 - r0, rows_grain((size_t)call->tensors[0].shape[1]),
                   call->max_threads, softmax_chunk, &c);
  return ST_OK;
}

static void reduce_chunk(void *ctx, size_t b, size_t e) {
  thr_ctx *c = ctx;
  const st_tensor *x = &c->call->tensors[0];
  for (size_t k = b; k < e; k++) {
    size_t lo, hi;
    st__reduce_block_range(x, c->offset + k, &lo, &hi);
    if (c->partial_f)
      c->partial_f[k] = st__cpu_sum_f64(x, lo, hi);
    else
      c->partial_u[k] = st__cpu_sum_u64(x, lo, hi);
  }
}

/* Block partials in parallel, combined in block order. With shard_count
 * > 1 (level 3) `out` gets the partial sum of the shard's blocks and the
 * harness combines the shards; with one shard, the sum. */
static st_status thr_reduce_sum(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  const st_tensor *x = &call->tensors[0];
  st_tensor *out = &call->tensors[1];
  int is_int = st__dtype_is_int(x->dtype);
  size_t kb0, kb1;
  st__reduce_shard_blocks(call, &kb0, &kb1);
  size_t nb = kb1 - kb0;
  thr_ctx c = {call, ST__EW_COPY, kb0, NULL, NULL};
  if (nb > 0) {
    if (is_int)
      c.partial_u = malloc(nb * sizeof *c.partial_u);
    else
      c.partial_f = malloc(nb * sizeof *c.partial_f);
    if (c.partial_u == NULL && c.partial_f == NULL)
      return st_op_call_fail(call, ST_ENOMEM,
                             "op 'reduce_sum': out of memory for %zu block "
                             "partials",
                             nb);
    st__parallel_for(nb, 1, call->max_threads, reduce_chunk, &c);
  }
  if (is_int) {
    uint64_t total = 0;
    for (size_t k = 0; k < nb; k++)
      total += c.partial_u[k];
    st__elem_set_u64(out, 0, total);
  } else {
    double total = 0.0;
    for (size_t k = 0; k < nb; k++)
      total += c.partial_f[k];
    st__elem_set_f64(out, 0, total);
  }
  free(c.partial_u);
  free(c.partial_f);
  return ST_OK;
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

static void transpose_chunk(void *ctx, size_t b, size_t e) {
  thr_ctx *c = ctx;
  const st_tensor *x = &c->call->tensors[0];
  void *y = c->call->tensors[1].data;
  size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
  size_t r0 = c->offset + b, r1 = c->offset + e;
  switch (st__elem_size(x)) {
  case 1:
    transpose_1(x->data, y, rows, cols, r0, r1);
    break;
  case 2:
    transpose_2(x->data, y, rows, cols, r0, r1);
    break;
  case 4:
    transpose_4(x->data, y, rows, cols, r0, r1);
    break;
  case 8:
    transpose_8(x->data, y, rows, cols, r0, r1);
    break;
  default:
    st__ref_transpose_rows(c->call, r0, r1);
    break;
  }
}

static st_status thr_transpose(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t r0, r1;
  st__shard_rows(call, 1, &r0, &r1);
  size_t grain = rows_grain((size_t)call->tensors[1].shape[1]);
  grain = (grain + TB - 1) / TB * TB;
  thr_ctx c = {call, ST__EW_COPY, r0, NULL, NULL};
  st__parallel_for(r1 - r0, grain, call->max_threads, transpose_chunk, &c);
  return ST_OK;
}

const st__op_entry st__threads_ops[] = {
    {"copy", thr_copy},
    {"add", thr_add},
    {"sub", thr_sub},
    {"mul", thr_mul},
    {"scale", thr_scale},
    {"axpy", thr_axpy},
    {"relu", thr_relu},
    {"matmul", thr_matmul},
    {"softmax", thr_softmax},
    {"reduce_sum", thr_reduce_sum},
    {"transpose", thr_transpose},
    {NULL, NULL},
};

static st_status threads_init(st_registry *reg, st_error *err) {
  return st__ops_register(reg, "threads", "threads", st__threads_ops, err);
}

static const char *const threads_platforms[] = {"threads", NULL};

const st_module st__module_threads = {
    ST_ABI_VERSION,
    "threads",
    threads_platforms,
    threads_init,
};
