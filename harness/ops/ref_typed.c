/* SPDX-License-Identifier: MIT */
/* The reference backend's element-wise loops, specialised per dtype outside
 * the loop (issue 14: the generic path calls an out-of-line accessor with a
 * dtype switch per element, 25 us for a 4096-element add). Same semantics
 * as the generic path of backend_reference.c, which still serves every
 * other dtype and mixed dtypes: float arithmetic in double rounded once to
 * the output dtype, integers in uint64_t (two's complement wrap-around),
 * relu keeps NaN. Built at -O3 with the other hot loops
 * (harness/meson.build) so the compiler vectorises them. */
#include <stdint.h>

#include "ops/ops_impl.h"
#include "ops/toolkit.h"

#define REF_FLOAT_LOOP(T)                                                     \
  do {                                                                        \
    const T *a = (const T *)t[0].data;                                        \
    const T *b = binary || kind == ST__EW_AXPY ? (const T *)t[1].data : NULL; \
    T *o = (T *)out->data;                                                    \
    switch (kind) {                                                           \
    case ST__EW_ADD:                                                          \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((double)a[i] + (double)b[i]);                              \
      break;                                                                  \
    case ST__EW_SUB:                                                          \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((double)a[i] - (double)b[i]);                              \
      break;                                                                  \
    case ST__EW_MUL:                                                          \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((double)a[i] * (double)b[i]);                              \
      break;                                                                  \
    case ST__EW_SCALE:                                                        \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)(s * (double)a[i]);                                         \
      break;                                                                  \
    case ST__EW_AXPY:                                                         \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)(s * (double)a[i] + (double)b[i]);                          \
      break;                                                                  \
    case ST__EW_RELU:                                                         \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((double)a[i] < 0.0 ? 0.0 : (double)a[i]);                  \
      break;                                                                  \
    default:                                                                  \
      return 0;                                                               \
    }                                                                         \
  } while (0)

/* Integer arithmetic in uint64_t:
 * narrower unsigned types promote to int, where a product overflows
 * (UBSan). The result is truncated to T, the two's complement wrap.
 * Relu compares as signed. */
#define REF_INT_LOOP(T)                                                       \
  do {                                                                        \
    const T *a = (const T *)t[0].data;                                        \
    const T *b = binary || kind == ST__EW_AXPY ? (const T *)t[1].data : NULL; \
    T *o = (T *)out->data;                                                    \
    const uint64_t su = si;                                                       \
    switch (kind) {                                                           \
    case ST__EW_ADD:                                                          \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((uint64_t)a[i] + (uint64_t)b[i]);                                        \
      break;                                                                  \
    case ST__EW_SUB:                                                          \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((uint64_t)a[i] - (uint64_t)b[i]);                                        \
      break;                                                                  \
    case ST__EW_MUL:                                                          \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)((uint64_t)a[i] * (uint64_t)b[i]);                                        \
      break;                                                                  \
    case ST__EW_SCALE:                                                        \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)(su * (uint64_t)a[i]);                                             \
      break;                                                                  \
    case ST__EW_AXPY:                                                         \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = (T)(su * (uint64_t)a[i] + (uint64_t)b[i]);                                   \
      break;                                                                  \
    case ST__EW_RELU:                                                         \
      for (size_t i = begin; i < end; i++)                                    \
        o[i] = a[i] < 0 ? (T)0 : a[i];                                        \
      break;                                                                  \
    default:                                                                  \
      return 0;                                                               \
    }                                                                         \
  } while (0)

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
  const uint64_t si = (kind == ST__EW_SCALE || kind == ST__EW_AXPY)
                          ? st__scalar_u64(call)
                          : 0;
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
