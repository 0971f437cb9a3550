/* SPDX-License-Identifier: MIT */
/* The `cpu` platform: every built-in op on one thread, with typed loops
 * per dtype that the compiler can vectorise. float16/bfloat16 take the
 * reference kernels (one element at a time through double) as their slow
 * path. Accumulations (matmul, softmax, reduce_sum) are in double, summed
 * in the golden's order, so float32 results stay within the default
 * tolerances at any size (a float accumulator over K = 256 terms already
 * drifts past torch's float32 atol of 1e-5). Integer arithmetic wraps: it
 * is done in an unsigned type of at least the width (uint32_t for 8, 16
 * and 32 bits, so that no operand is promoted to int and overflows). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

/* Element-wise kernels over [b, e) for one float type. scale and axpy use
 * the double scalar and round once, like the golden. */
#define CPU_FLOAT_EW(T, SUF)                                                   \
  static void ew_##SUF(st__ew kind, st_op_call *call, size_t b, size_t e) {    \
    st_tensor *t = call->tensors;                                              \
    const T *x = t[0].data;                                                    \
    switch (kind) {                                                            \
    case ST__EW_ADD: {                                                         \
      const T *y = t[1].data;                                                  \
      T *o = t[2].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = x[i] + y[i];                                                    \
      break;                                                                   \
    }                                                                          \
    case ST__EW_SUB: {                                                         \
      const T *y = t[1].data;                                                  \
      T *o = t[2].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = x[i] - y[i];                                                    \
      break;                                                                   \
    }                                                                          \
    case ST__EW_MUL: {                                                         \
      const T *y = t[1].data;                                                  \
      T *o = t[2].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = x[i] * y[i];                                                    \
      break;                                                                   \
    }                                                                          \
    case ST__EW_SCALE: {                                                       \
      double s = st__scalar_f64(call);                                         \
      T *o = t[1].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = (T)(s * (double)x[i]);                                          \
      break;                                                                   \
    }                                                                          \
    case ST__EW_AXPY: {                                                        \
      double s = st__scalar_f64(call);                                         \
      T *y = t[1].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        y[i] = (T)(s * (double)x[i] + (double)y[i]);                           \
      break;                                                                   \
    }                                                                          \
    case ST__EW_RELU: {                                                        \
      T *o = t[1].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = x[i] < (T)0 ? (T)0 : x[i];                                      \
      break;                                                                   \
    }                                                                          \
    case ST__EW_COPY:                                                          \
      memcpy((T *)t[1].data + b, x + b, (e - b) * sizeof(T));                  \
      break;                                                                   \
    }                                                                          \
  }

/* The same for one integer type T computed in unsigned U. RELU(v) is the
 * relu of one value (the identity for unsigned types). */
#define CPU_INT_EW(T, U, SUF, RELU)                                            \
  static void ew_##SUF(st__ew kind, st_op_call *call, size_t b, size_t e) {    \
    st_tensor *t = call->tensors;                                              \
    const T *x = t[0].data;                                                    \
    switch (kind) {                                                            \
    case ST__EW_ADD: {                                                         \
      const T *y = t[1].data;                                                  \
      T *o = t[2].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = (T)(U)((U)x[i] + (U)y[i]);                                      \
      break;                                                                   \
    }                                                                          \
    case ST__EW_SUB: {                                                         \
      const T *y = t[1].data;                                                  \
      T *o = t[2].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = (T)(U)((U)x[i] - (U)y[i]);                                      \
      break;                                                                   \
    }                                                                          \
    case ST__EW_MUL: {                                                         \
      const T *y = t[1].data;                                                  \
      T *o = t[2].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = (T)(U)((U)x[i] * (U)y[i]);                                      \
      break;                                                                   \
    }                                                                          \
    case ST__EW_SCALE: {                                                       \
      U s = (U)st__scalar_u64(call);                                           \
      T *o = t[1].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = (T)(U)(s * (U)x[i]);                                            \
      break;                                                                   \
    }                                                                          \
    case ST__EW_AXPY: {                                                        \
      U s = (U)st__scalar_u64(call);                                           \
      T *y = t[1].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        y[i] = (T)(U)(s * (U)x[i] + (U)y[i]);                                  \
      break;                                                                   \
    }                                                                          \
    case ST__EW_RELU: {                                                        \
      T *o = t[1].data;                                                        \
      for (size_t i = b; i < e; i++)                                           \
        o[i] = RELU(x[i]);                                                     \
      break;                                                                   \
    }                                                                          \
    case ST__EW_COPY:                                                          \
      memcpy((T *)t[1].data + b, x + b, (e - b) * sizeof(T));                  \
      break;                                                                   \
    }                                                                          \
  }

#define RELU_SIGNED(v) ((v) < 0 ? 0 : (v))
#define RELU_UNSIGNED(v) (v)

CPU_FLOAT_EW(float, f32)
CPU_FLOAT_EW(double, f64)
CPU_INT_EW(int8_t, uint32_t, i8, RELU_SIGNED)
CPU_INT_EW(int16_t, uint32_t, i16, RELU_SIGNED)
CPU_INT_EW(int32_t, uint32_t, i32, RELU_SIGNED)
CPU_INT_EW(int64_t, uint64_t, i64, RELU_SIGNED)
CPU_INT_EW(uint8_t, uint32_t, u8, RELU_UNSIGNED)

void st__cpu_elementwise(st__ew kind, st_op_call *call, size_t begin,
                         size_t end) {
  if (end <= begin)
    return;
  if (kind == ST__EW_COPY) {
    /* Any dtype, bool included: bytes. */
    st__ref_elementwise(kind, call, begin, end);
    return;
  }
  switch (call->tensors[0].dtype) {
  case ST_DTYPE_FLOAT32:
    ew_f32(kind, call, begin, end);
    return;
  case ST_DTYPE_FLOAT64:
    ew_f64(kind, call, begin, end);
    return;
  case ST_DTYPE_INT8:
    ew_i8(kind, call, begin, end);
    return;
  case ST_DTYPE_INT16:
    ew_i16(kind, call, begin, end);
    return;
  case ST_DTYPE_INT32:
    ew_i32(kind, call, begin, end);
    return;
  case ST_DTYPE_INT64:
    ew_i64(kind, call, begin, end);
    return;
  case ST_DTYPE_UINT8:
    ew_u8(kind, call, begin, end);
    return;
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
  if (call->tensors[0].dtype == ST_DTYPE_FLOAT32)
    softmax_f32(call, r0, r1, tmp);
  else if (call->tensors[0].dtype == ST_DTYPE_FLOAT64)
    softmax_f64(call, r0, r1, tmp);
  else
    st__ref_softmax_rows(call, r0, r1);
}

/* Typed block sums: sequential within [b, e), like st__ref_sum_*. */
double st__cpu_sum_f64(const st_tensor *x, size_t b, size_t e) {
  double s = 0.0;
  if (x->dtype == ST_DTYPE_FLOAT32) {
    const float *p = x->data;
    for (size_t i = b; i < e; i++)
      s += (double)p[i];
  } else if (x->dtype == ST_DTYPE_FLOAT64) {
    const double *p = x->data;
    for (size_t i = b; i < e; i++)
      s += p[i];
  } else {
    s = st__ref_sum_f64(x, b, e);
  }
  return s;
}

#define CPU_SUM_INT(T, SUF)                                                    \
  static uint64_t sum_##SUF(const void *data, size_t b, size_t e) {            \
    const T *p = data;                                                         \
    uint64_t s = 0;                                                            \
    for (size_t i = b; i < e; i++)                                             \
      s += (uint64_t)(int64_t)p[i];                                            \
    return s;                                                                  \
  }

CPU_SUM_INT(int8_t, i8)
CPU_SUM_INT(int16_t, i16)
CPU_SUM_INT(int32_t, i32)
CPU_SUM_INT(int64_t, i64)
CPU_SUM_INT(uint8_t, u8)

uint64_t st__cpu_sum_u64(const st_tensor *x, size_t b, size_t e) {
  switch (x->dtype) {
  case ST_DTYPE_INT8:
    return sum_i8(x->data, b, e);
  case ST_DTYPE_INT16:
    return sum_i16(x->data, b, e);
  case ST_DTYPE_INT32:
    return sum_i32(x->data, b, e);
  case ST_DTYPE_INT64:
    return sum_i64(x->data, b, e);
  case ST_DTYPE_UINT8:
    return sum_u8(x->data, b, e);
  default:
    return st__ref_sum_u64(x, b, e);
  }
}

#define CPU_TRANSPOSE(T, SUF)                                                  \
  static void transpose_##SUF(const void *xv, void *yv, size_t rows,           \
                              size_t cols, size_t r0, size_t r1) {             \
    const T *x = xv;                                                           \
    T *y = yv;                                                                 \
    for (size_t r = r0; r < r1; r++)                                           \
      for (size_t j = 0; j < rows; j++)                                        \
        y[r * rows + j] = x[j * cols + r];                                     \
  }

CPU_TRANSPOSE(uint8_t, 1)
CPU_TRANSPOSE(uint16_t, 2)
CPU_TRANSPOSE(uint32_t, 4)
CPU_TRANSPOSE(uint64_t, 8)

static const st__transpose_fn transpose_kernels[4] = {
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

static ST_WUR st_status cpu_matmul(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t r0, r1;
  st__shard_rows(call, 2, &r0, &r1);
  st_dtype dt = call->tensors[0].dtype;
  if (dt != ST_DTYPE_FLOAT32 && dt != ST_DTYPE_FLOAT64) {
    st__ref_matmul_rows(call, r0, r1);
    return ST_OK;
  }
  size_t n = (size_t)call->tensors[1].shape[1];
  if (r1 <= r0 || n == 0)
    return ST_OK;
  double *acc = malloc(n * sizeof *acc);
  if (acc == NULL)
    return st_op_call_fail(call, ST_ENOMEM,
                           "op 'matmul': out of memory for a row of %zu", n);
  if (dt == ST_DTYPE_FLOAT32)
    matmul_f32(call, r0, r1, acc);
  else
    matmul_f64(call, r0, r1, acc);
  free(acc);
  return ST_OK;
}

static ST_WUR st_status cpu_softmax(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t r0, r1;
  st__shard_rows(call, 1, &r0, &r1);
  st_dtype dt = call->tensors[0].dtype;
  size_t cols = (size_t)call->tensors[0].shape[1];
  if (dt != ST_DTYPE_FLOAT32 && dt != ST_DTYPE_FLOAT64) {
    st__ref_softmax_rows(call, r0, r1);
    return ST_OK;
  }
  if (r1 <= r0 || cols == 0)
    return ST_OK;
  double *tmp = malloc(cols * sizeof *tmp);
  if (tmp == NULL)
    return st_op_call_fail(
        call, ST_ENOMEM, "op 'softmax': out of memory for a row of %zu", cols);
  st__cpu_softmax_rows(call, r0, r1, tmp);
  free(tmp);
  return ST_OK;
}

/* With shard_count > 1 (level 3) `out` gets the partial sum of the shard's
 * blocks, and the harness combines the shards; with one shard, the sum. */
static ST_WUR st_status cpu_reduce_sum(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  const st_tensor *x = &call->tensors[0];
  st_tensor *out = &call->tensors[1];
  size_t kb0, kb1, lo, hi;
  st__reduce_shard_blocks(call, &kb0, &kb1);
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
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t r0, r1;
  st__shard_rows(call, 1, &r0, &r1);
  st__transpose_by_size(call, r0, r1, transpose_kernels);
  return ST_OK;
}

const st__op_entry st__cpu_ops[] = {
#define XX(name, ...) {#name, cpu_##name},
    ST__BUILTIN_OP_MAP(XX)
#undef XX
    {NULL, NULL},
};

static ST_WUR st_status cpu_init(st_registry *reg, st_error *err) {
  return st__ops_register(reg, "cpu", "cpu", st__cpu_ops, err);
}

static const char *const cpu_platforms[] = {"cpu", NULL};

const st_module st__module_cpu = {
    ST_ABI_VERSION,
    sizeof(st_module),
    "cpu",
    cpu_platforms,
    cpu_init,
};
