/* SPDX-License-Identifier: MIT */
/* The reference backend's element-wise loops, blocked matmul and block
 * sums, specialised per dtype outside the loop (issue 14: the generic path
 * calls an out-of-line accessor with a dtype switch per element, 25 us for
 * a 4096-element add). Same bytes as the generic path of
 * backend_reference.c, which still serves every other dtype and mixed
 * dtypes: float arithmetic and accumulation in double rounded once to the
 * output dtype, integers in uint64_t (two's complement wrap-around), relu
 * keeps NaN, sums in the same order (tests/ops/test_ref_typed.c compares the
 * two byte for byte). Built at -O3 with the other hot loops
 * (harness/meson.build) so the compiler vectorises them. */
#include <stdint.h>

#include "ops/ops_impl.h"
#include "ops/toolkit.h"

/* The element-wise loops over one dtype T: W is the type the arithmetic
 * is done in, S the scalar (of type W) for scale and axpy, and RELU(v) the
 * relu of one element. Floats compute in double and round once to T;
 * integers compute in uint64_t, since narrower unsigned types promote to
 * int, where a product overflows (UBSan), and the result truncated to T is
 * the two's complement wrap. */
#define REF_EW_LOOP(T, W, S, RELU)                                             \
  do {                                                                         \
    const T *a = (const T *)t[0].data;                                         \
    const T *b = binary || kind == ST__EW_AXPY ? (const T *)t[1].data : NULL;  \
    T *o = (T *)out->data;                                                     \
    switch (kind) {                                                            \
    case ST__EW_ADD:                                                           \
      for (size_t i = begin; i < end; i++)                                     \
        o[i] = (T)((W)a[i] + (W)b[i]);                                         \
      break;                                                                   \
    case ST__EW_SUB:                                                           \
      for (size_t i = begin; i < end; i++)                                     \
        o[i] = (T)((W)a[i] - (W)b[i]);                                         \
      break;                                                                   \
    case ST__EW_MUL:                                                           \
      for (size_t i = begin; i < end; i++)                                     \
        o[i] = (T)((W)a[i] * (W)b[i]);                                         \
      break;                                                                   \
    case ST__EW_SCALE:                                                         \
      for (size_t i = begin; i < end; i++)                                     \
        o[i] = (T)((S) * (W)a[i]);                                             \
      break;                                                                   \
    case ST__EW_AXPY:                                                          \
      for (size_t i = begin; i < end; i++)                                     \
        o[i] = (T)((S) * (W)a[i] + (W)b[i]);                                   \
      break;                                                                   \
    case ST__EW_RELU:                                                          \
      for (size_t i = begin; i < end; i++)                                     \
        o[i] = RELU(T, a[i]);                                                  \
      break;                                                                   \
    default:                                                                   \
      return 0;                                                                \
    }                                                                          \
  } while (0)

/* Float relu keeps NaN (NaN < 0.0 is false); integer relu compares as
 * signed. */
#define REF_RELU_FLOAT(T, v) (T)((double)(v) < 0.0 ? 0.0 : (double)(v))
#define REF_RELU_INT(T, v) ((v) < 0 ? (T)0 : (v))
#define REF_FLOAT_LOOP(T) REF_EW_LOOP(T, double, s, REF_RELU_FLOAT)
#define REF_INT_LOOP(T) REF_EW_LOOP(T, uint64_t, si, REF_RELU_INT)

int st__ref_elementwise_typed(st__ew kind, st_op_call *call, size_t begin,
                              size_t end) {
  st_tensor *t = call->tensors;
  const int binary =
      kind == ST__EW_ADD || kind == ST__EW_SUB || kind == ST__EW_MUL;
  const size_t n_in = binary || kind == ST__EW_AXPY ? 2 : 1;
  /* out is t[2] for binary ops, else t[1] (axpy's y, unary ops' output):
   * a call needs 3 or 2 tensors before out may be read. */
  const size_t need = binary ? 3 : 2;
  if (call->n_tensors < need)
    return 0;
  st_tensor *out = binary ? &t[2] : &t[1];
  const st_dtype dt = t[0].dtype;
  /* One dtype throughout (the built-in signatures; a plugin's golden op of
   * another shape takes the generic path). */
  if (out->dtype != dt || (n_in == 2 && t[1].dtype != dt))
    return 0;
  if (end <= begin)
    return 1;
  const double s = (kind == ST__EW_SCALE || kind == ST__EW_AXPY)
                       ? st__scalar_f64(call)
                       : 0.0;
  const uint64_t si =
      (kind == ST__EW_SCALE || kind == ST__EW_AXPY) ? st__scalar_u64(call) : 0;
  switch (dt) {
  case ST_DTYPE_FLOAT32:
    REF_FLOAT_LOOP(float);
    return 1;
  case ST_DTYPE_FLOAT64:
    REF_FLOAT_LOOP(double);
    return 1;
  case ST_DTYPE_INT8:
    REF_INT_LOOP(int8_t);
    return 1;
  case ST_DTYPE_INT16:
    REF_INT_LOOP(int16_t);
    return 1;
  case ST_DTYPE_INT32:
    REF_INT_LOOP(int32_t);
    return 1;
  case ST_DTYPE_INT64:
    REF_INT_LOOP(int64_t);
    return 1;
  default:
    return 0;
  }
}

/* Matmul, blocked: ROWS_B rows of c at a time over column tiles of COLS_B,
 * so one load of b[k, j0..j1) feeds ROWS_B accumulators (the unblocked i-k-j
 * loop reloads all of b for every row of c). Every c[i, j] is still the sum
 * over k ascending of a[i, k] * b[k, j] in double from 0.0, so the bytes
 * are those of the generic path and of the cpu backend. The accumulators,
 * ROWS_B * COLS_B doubles (8 KiB), live on the stack. */
#define ROWS_B 4
#define COLS_B 256

#define REF_MATMUL(T, SUF)                                                     \
  static void matmul_##SUF(const T *a, const T *b, T *c, size_t kk, size_t n,  \
                           size_t r0, size_t r1) {                             \
    double acc[ROWS_B][COLS_B];                                                \
    for (size_t i0 = r0; i0 < r1; i0 += ROWS_B) {                              \
      const size_t rows = r1 - i0 < ROWS_B ? r1 - i0 : ROWS_B;                 \
      for (size_t j0 = 0; j0 < n; j0 += COLS_B) {                              \
        const size_t w = n - j0 < COLS_B ? n - j0 : COLS_B;                    \
        for (size_t r = 0; r < rows; r++)                                      \
          for (size_t j = 0; j < w; j++)                                       \
            acc[r][j] = 0.0;                                                   \
        if (rows == ROWS_B) {                                                  \
          for (size_t k = 0; k < kk; k++) {                                    \
            const T *brow = b + k * n + j0;                                    \
            const double x0 = (double)a[(i0 + 0) * kk + k];                    \
            const double x1 = (double)a[(i0 + 1) * kk + k];                    \
            const double x2 = (double)a[(i0 + 2) * kk + k];                    \
            const double x3 = (double)a[(i0 + 3) * kk + k];                    \
            for (size_t j = 0; j < w; j++) {                                   \
              const double bj = (double)brow[j];                               \
              acc[0][j] += x0 * bj;                                            \
              acc[1][j] += x1 * bj;                                            \
              acc[2][j] += x2 * bj;                                            \
              acc[3][j] += x3 * bj;                                            \
            }                                                                  \
          }                                                                    \
        } else {                                                               \
          for (size_t k = 0; k < kk; k++) {                                    \
            const T *brow = b + k * n + j0;                                    \
            for (size_t r = 0; r < rows; r++) {                                \
              const double x = (double)a[(i0 + r) * kk + k];                   \
              for (size_t j = 0; j < w; j++)                                   \
                acc[r][j] += x * (double)brow[j];                              \
            }                                                                  \
          }                                                                    \
        }                                                                      \
        for (size_t r = 0; r < rows; r++)                                      \
          for (size_t j = 0; j < w; j++)                                       \
            c[(i0 + r) * n + j0 + j] = (T)acc[r][j];                           \
      }                                                                        \
    }                                                                          \
  }

REF_MATMUL(float, f32)
REF_MATMUL(double, f64)

int st__ref_matmul_rows_typed(st_op_call *call, size_t r0, size_t r1) {
  if (call->n_tensors < 3)
    return 0;
  const st_tensor *a = &call->tensors[0], *b = &call->tensors[1];
  st_tensor *c = &call->tensors[2];
  const st_dtype dt = a->dtype;
  if (b->dtype != dt || c->dtype != dt)
    return 0;
  const size_t kk = (size_t)a->shape[1], n = (size_t)b->shape[1];
  switch (dt) {
  case ST_DTYPE_FLOAT32:
    matmul_f32(a->data, b->data, c->data, kk, n, r0, r1);
    return 1;
  case ST_DTYPE_FLOAT64:
    matmul_f64(a->data, b->data, c->data, kk, n, r0, r1);
    return 1;
  default:
    return 0;
  }
}

/* Block sums. Floats: sequential in double, as the generic path and the cpu
 * backend sum, so the golden does not change with this file (a lane-wise
 * sum would vectorise, but change the last bits of float64 sums, which the
 * cpu backend's bitwise agreement with the golden rests on). Integers: the
 * uint64_t sum wraps, so any order gives the same bits, and the compiler
 * vectorises it. The integer dtypes: XX(DTYPE, T, SUF). */
#define REF_SUM_INT_TYPES(XX)                                                  \
  XX(INT8, int8_t, i8)                                                         \
  XX(INT16, int16_t, i16)                                                      \
  XX(INT32, int32_t, i32)                                                      \
  XX(INT64, int64_t, i64)                                                      \
  XX(UINT8, uint8_t, u8)                                                       \
  XX(UINT16, uint16_t, u16)                                                    \
  XX(UINT32, uint32_t, u32)                                                    \
  XX(UINT64, uint64_t, u64)

#define REF_SUM_INT(DTYPE, T, SUF)                                             \
  static uint64_t sum_##SUF(const T *p, size_t b, size_t e) {                  \
    uint64_t s = 0;                                                            \
    for (size_t i = b; i < e; i++)                                             \
      s += (uint64_t)p[i]; /* signed: sign-extends, then wraps */              \
    return s;                                                                  \
  }

REF_SUM_INT_TYPES(REF_SUM_INT)

int st__ref_sum_f64_typed(const st_tensor *x, size_t b, size_t e, double *out) {
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
    return 0;
  }
  *out = s;
  return 1;
}

int st__ref_sum_u64_typed(const st_tensor *x, size_t b, size_t e,
                          uint64_t *out) {
  switch (x->dtype) {
#define REF_SUM_CASE(DTYPE, T, SUF)                                            \
  case ST_DTYPE_##DTYPE:                                                       \
    *out = sum_##SUF(x->data, b, e);                                           \
    return 1;
    REF_SUM_INT_TYPES(REF_SUM_CASE)
#undef REF_SUM_CASE
  default:
    return 0;
  }
}
