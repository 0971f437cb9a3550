/* SPDX-License-Identifier: MIT */
/* The `cpu` platform: every built-in op on one thread, with typed loops
 * per dtype that the compiler can vectorise. float16/bfloat16/FP8 and
 * mixed precision (an output of another float dtype) take the reference
 * kernels (one element at a time through double) as their slow path.
 * Accumulations (matmul, softmax, reduce_sum) are in double, summed in
 * the golden's order, so float32 results stay within the default
 * tolerances at any size (a float accumulator over K = 256 terms already
 * drifts past torch's float32 atol of 1e-5). Integer arithmetic wraps: it
 * is done in an unsigned type of at least the width (uint32_t for 8, 16
 * and 32 bits, so that no operand is promoted to int and overflows).
 * Transpose is tiled; the threads backend runs these same kernels (and
 * the element-wise, softmax and sum loops) on its chunks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

/* The typed loops' dtypes: XX(DTYPE, T, BW, SW, SCALAR, RELU, SUF) with T
 * the element type, BW the type add/sub/mul compute in, SW the type of
 * the scalar (from SCALAR(call)) that scale and axpy compute in, and
 * RELU(v) the relu of one value (the identity for unsigned types). Floats
 * take binary ops in T and scalar ops in double, rounded once like the
 * golden; integers compute everything in an unsigned type so that they
 * wrap. */
#define CPU_FLOAT_TYPES(XX)                                                    \
  XX(FLOAT32, float, float, double, st__scalar_f64, RELU_SIGNED, f32)          \
  XX(FLOAT64, double, double, double, st__scalar_f64, RELU_SIGNED, f64)
#define CPU_INT_TYPES(XX)                                                      \
  XX(INT8, int8_t, uint32_t, uint32_t, st__scalar_u64, RELU_SIGNED, i8)        \
  XX(INT16, int16_t, uint32_t, uint32_t, st__scalar_u64, RELU_SIGNED, i16)     \
  XX(INT32, int32_t, uint32_t, uint32_t, st__scalar_u64, RELU_SIGNED, i32)     \
  XX(INT64, int64_t, uint64_t, uint64_t, st__scalar_u64, RELU_SIGNED, i64)     \
  XX(UINT8, uint8_t, uint32_t, uint32_t, st__scalar_u64, RELU_UNSIGNED, u8)    \
  XX(UINT16, uint16_t, uint32_t, uint32_t, st__scalar_u64, RELU_UNSIGNED, u16) \
  XX(UINT32, uint32_t, uint32_t, uint32_t, st__scalar_u64, RELU_UNSIGNED, u32) \
  XX(UINT64, uint64_t, uint64_t, uint64_t, st__scalar_u64, RELU_UNSIGNED, u64)

#define RELU_SIGNED(v) ((v) < 0 ? 0 : (v))
#define RELU_UNSIGNED(v) (v)

/* One case of ew_SUF: out[i] = EXPR for i in [b, e), where out is tensor
 * OUT and y (tensor 1) is read by the binary ops (axpy reads and writes
 * out, tensor 1, in place). */
#define CPU_EW_CASE(KIND, T, OUT, EXPR)                                        \
  case KIND: {                                                                 \
    const T *y = t[1].data;                                                    \
    T *out = t[OUT].data;                                                      \
    (void)y;                                                                   \
    for (size_t i = b; i < e; i++)                                             \
      out[i] = EXPR;                                                           \
    break;                                                                     \
  }

/* The element-wise kernels over [b, e) for one dtype (see above). Copy is
 * bytes, done for every dtype by st__cpu_elementwise. */
#define CPU_EW(DTYPE, T, BW, SW, SCALAR, RELU, SUF)                            \
  static void ew_##SUF(st__ew kind, st_op_call *call, size_t b, size_t e) {    \
    st_tensor *t = call->tensors;                                              \
    const T *x = t[0].data;                                                    \
    /* Only scale and axpy have a scalar to read. */                           \
    SW s = kind == ST__EW_SCALE || kind == ST__EW_AXPY ? (SW)SCALAR(call) : 0; \
    switch (kind) {                                                            \
      CPU_EW_CASE(ST__EW_ADD, T, 2, (T)(BW)((BW)x[i] + (BW)y[i]))              \
      CPU_EW_CASE(ST__EW_SUB, T, 2, (T)(BW)((BW)x[i] - (BW)y[i]))              \
      CPU_EW_CASE(ST__EW_MUL, T, 2, (T)(BW)((BW)x[i] * (BW)y[i]))              \
      CPU_EW_CASE(ST__EW_SCALE, T, 1, (T)(SW)(s * (SW)x[i]))                   \
      CPU_EW_CASE(ST__EW_AXPY, T, 1, (T)(SW)(s * (SW)x[i] + (SW)out[i]))       \
      CPU_EW_CASE(ST__EW_RELU, T, 1, RELU(x[i]))                               \
    case ST__EW_COPY:                                                          \
      break;                                                                   \
    }                                                                          \
  }

CPU_FLOAT_TYPES(CPU_EW)
CPU_INT_TYPES(CPU_EW)

void st__cpu_elementwise(st__ew kind, st_op_call *call, size_t begin,
                         size_t end) {
  if (end <= begin)
    return;
  const int binary =
      kind == ST__EW_ADD || kind == ST__EW_SUB || kind == ST__EW_MUL;
  const st_dtype out_dtype = call->tensors[binary ? 2 : 1].dtype;
  if (kind == ST__EW_COPY || out_dtype != call->tensors[0].dtype) {
    /* Copy: any dtype, bool included, bytes (or a float conversion).
     * Mixed precision: the reference's loop, which rounds once to the
     * output's dtype. */
    st__ref_elementwise(kind, call, begin, end);
    return;
  }
  switch (call->tensors[0].dtype) {
#define CPU_EW_DISPATCH(DTYPE, T, BW, SW, SCALAR, RELU, SUF)                   \
  case ST_DTYPE_##DTYPE:                                                       \
    ew_##SUF(kind, call, begin, end);                                          \
    return;
    CPU_FLOAT_TYPES(CPU_EW_DISPATCH)
    CPU_INT_TYPES(CPU_EW_DISPATCH)
#undef CPU_EW_DISPATCH
  default:
    st__ref_elementwise(kind, call, begin, end);
    return;
  }
}

/* i-k-j order with a double accumulator row: the inner loop streams a row
 * of b and of acc (vectorisable), and every c[i, j] is summed over k
 * ascending from 0.0, the golden's order. acc holds n doubles. */
#define CPU_MATMUL(T, SUF)                                                     \
  static void matmul_##SUF(st_op_call *call, size_t r0, size_t r1,             \
                           double *acc) {                                      \
    const T *a = call->tensors[0].data, *bm = call->tensors[1].data;           \
    T *c = call->tensors[2].data;                                              \
    size_t kk = (size_t)call->tensors[0].shape[1];                             \
    size_t n = (size_t)call->tensors[1].shape[1];                              \
    for (size_t i = r0; i < r1; i++) {                                         \
      for (size_t j = 0; j < n; j++)                                           \
        acc[j] = 0.0;                                                          \
      for (size_t k = 0; k < kk; k++) {                                        \
        double aik = (double)a[i * kk + k];                                    \
        const T *brow = bm + k * n;                                            \
        for (size_t j = 0; j < n; j++)                                         \
          acc[j] += aik * (double)brow[j];                                     \
      }                                                                        \
      for (size_t j = 0; j < n; j++)                                           \
        c[i * n + j] = (T)acc[j];                                              \
    }                                                                          \
  }

CPU_MATMUL(float, f32)
CPU_MATMUL(double, f64)

/* The exponentials are kept in tmp (cols doubles) rather than computed
 * twice; the values are the golden's. */
#define CPU_SOFTMAX(T, SUF)                                                    \
  static void softmax_##SUF(st_op_call *call, size_t r0, size_t r1,            \
                            double *tmp) {                                     \
    const T *x = call->tensors[0].data;                                        \
    T *y = call->tensors[1].data;                                              \
    size_t cols = (size_t)call->tensors[0].shape[1];                           \
    for (size_t r = r0; r < r1; r++) {                                         \
      const T *xr = x + r * cols;                                              \
      T *yr = y + r * cols;                                                    \
      double m = -INFINITY, sum = 0.0;                                         \
      for (size_t j = 0; j < cols; j++)                                        \
        if ((double)xr[j] > m)                                                 \
          m = (double)xr[j];                                                   \
      for (size_t j = 0; j < cols; j++) {                                      \
        tmp[j] = exp((double)xr[j] - m);                                       \
        sum += tmp[j];                                                         \
      }                                                                        \
      for (size_t j = 0; j < cols; j++)                                        \
        yr[j] = (T)(tmp[j] / sum);                                             \
    }                                                                          \
  }

CPU_SOFTMAX(float, f32)
CPU_SOFTMAX(double, f64)

void st__cpu_softmax_rows(st_op_call *call, size_t r0, size_t r1, double *tmp) {
  if (call->tensors[1].dtype != call->tensors[0].dtype)
    st__ref_softmax_rows(call, r0, r1); /* mixed precision */
  else if (call->tensors[0].dtype == ST_DTYPE_FLOAT32)
    softmax_f32(call, r0, r1, tmp);
  else if (call->tensors[0].dtype == ST_DTYPE_FLOAT64)
    softmax_f64(call, r0, r1, tmp);
  else
    st__ref_softmax_rows(call, r0, r1);
}

/* Block sums: the reference's own typed sums (ref_typed.c), sequential
 * within [b, e) and exact for integers, so this backend's reduce_sum is
 * the golden's bit for bit. */
double st__cpu_sum_f64(const st_tensor *x, size_t b, size_t e) {
  return st__ref_sum_f64(x, b, e);
}

uint64_t st__cpu_sum_u64(const st_tensor *x, size_t b, size_t e) {
  return st__ref_sum_u64(x, b, e);
}

/* Output rows [r0, r1) of y[C, R] = x[R, C]^T in TB x TB tiles, so both
 * the reads and the writes of a tile stay within a few cache lines. */
#define TB ST__CPU_TRANSPOSE_TILE
#define CPU_TRANSPOSE(T, SUF)                                                  \
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

CPU_TRANSPOSE(uint8_t, 1)
CPU_TRANSPOSE(uint16_t, 2)
CPU_TRANSPOSE(uint32_t, 4)
CPU_TRANSPOSE(uint64_t, 8)

const st__transpose_fn st__cpu_transpose_kernels[4] = {
    transpose_1, transpose_2, transpose_4, transpose_8};

static ST_WUR st_status cpu_ew(st_op_call *call, st__ew kind) {
  size_t b, e;
  st_status rc = st__ew_shard(call, &b, &e);
  if (rc == ST_OK)
    st__cpu_elementwise(kind, call, b, e);
  return rc;
}

/* The element-wise ops, cpu_copy .. cpu_relu. */
ST__EW_OPS(cpu, cpu_ew)

/* A float32/float64 row kernel over output rows [r0, r1), with a scratch
 * row of doubles (matmul's accumulators, softmax's exponentials). */
typedef void (*cpu_row_fn)(st_op_call *call, size_t r0, size_t r1, double *row);

/* A row op: checks the call, then computes the shard's rows of output
 * tensor `out` by f32 or f64 with one scratch row of as many doubles as
 * tensor `wide` has columns; other dtypes take ref, which needs none. */
static ST_WUR st_status cpu_row_op(st_op_call *call, size_t out, size_t wide,
                                   const char *op, cpu_row_fn f32,
                                   cpu_row_fn f64, st__rows_fn ref) {
  size_t r0, r1;
  st_status rc = st__shard_rows(call, out, &r0, &r1);
  if (rc != ST_OK)
    return rc;
  st_dtype dt = call->tensors[0].dtype;
  if ((dt != ST_DTYPE_FLOAT32 && dt != ST_DTYPE_FLOAT64) ||
      call->tensors[out].dtype != dt) {
    ref(call, r0, r1);
    return ST_OK;
  }
  size_t n = (size_t)call->tensors[wide].shape[1];
  if (r1 <= r0 || n == 0)
    return ST_OK;
  double *row = malloc(n * sizeof *row);
  if (row == NULL)
    return st_op_call_fail(call, ST_ENOMEM,
                           "op '%s': out of memory for a row of %zu", op, n);
  (dt == ST_DTYPE_FLOAT32 ? f32 : f64)(call, r0, r1, row);
  free(row);
  return ST_OK;
}

static ST_WUR st_status cpu_matmul(st_op_call *call) {
  return cpu_row_op(call, 2, 1, "matmul", matmul_f32, matmul_f64,
                    st__ref_matmul_rows);
}

static ST_WUR st_status cpu_softmax(st_op_call *call) {
  return cpu_row_op(call, 1, 0, "softmax", softmax_f32, softmax_f64,
                    st__ref_softmax_rows);
}

/* With shard_count > 1 (level 3) `out` gets the partial sum of the shard's
 * blocks, and the harness combines the shards; with one shard, the sum. */
static ST_WUR st_status cpu_reduce_sum(st_op_call *call) {
  const st_tensor *x = &call->tensors[0];
  st_tensor *out = &call->tensors[1];
  size_t kb0, kb1, lo, hi;
  st_status rc = st__reduce_shard_blocks(call, &kb0, &kb1);
  if (rc != ST_OK)
    return rc;
  if (st__dtype_is_int(x->dtype)) {
    uint64_t total = 0;
    for (size_t k = kb0; k < kb1; k++) {
      st__reduce_block_range(x, k, &lo, &hi);
      total += st__cpu_sum_u64(x, lo, hi);
    }
    st_tensor_set_i64(out, 0, (int64_t)total);
  } else {
    double total = 0.0;
    for (size_t k = kb0; k < kb1; k++) {
      st__reduce_block_range(x, k, &lo, &hi);
      total += st__cpu_sum_f64(x, lo, hi);
    }
    st_tensor_set_f64(out, 0, total);
  }
  return ST_OK;
}

static ST_WUR st_status cpu_transpose(st_op_call *call) {
  size_t r0, r1;
  st_status rc = st__shard_rows(call, 1, &r0, &r1);
  if (rc != ST_OK)
    return rc;
  st__transpose_by_size(call, r0, r1, st__cpu_transpose_kernels);
  return ST_OK;
}

#define CPU_OP(name, ...) {#name, cpu_##name},
const st__op_entry st__cpu_ops[] = ST__OP_TABLE(CPU_OP);
static const char *const cpu_platforms[] = {"cpu", NULL};
ST__BUILTIN_MODULE(cpu, "cpu", cpu_platforms)
