/* SPDX-License-Identifier: MIT */
/* The `reference` backend: the golden implementation of every built-in op.
 * Simple loops over any dtype, one element at a time through the
 * accessors of base/dtype.c, behind the typed fast paths of ref_typed.c
 * (element-wise, blocked matmul, block sums) that compute the same bytes
 * for the common dtypes; float arithmetic and every accumulation
 * (matmul, softmax, reduce_sum) in double, rounded once to the output
 * dtype; integer arithmetic in uint64_t (two's complement wrap-around).
 * It splits its work over at most call->max_threads threads (the CLI's
 * --golden-threads) along boundaries that do not depend on that count, so
 * the golden is the same bytes whatever the cap. The file also owns the
 * list of built-in op names. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

const char *const st__builtin_ops[] = {
#define XX(name, ...) #name,
    ST__BUILTIN_OP_MAP(XX)
#undef XX
        NULL,
};

static int is_binary(st__ew kind) {
  return kind == ST__EW_ADD || kind == ST__EW_SUB || kind == ST__EW_MUL;
}

void st__ref_elementwise(st__ew kind, st_op_call *call, size_t begin,
                         size_t end) {
  st_tensor *t = call->tensors;
  st_tensor *out = is_binary(kind) ? &t[2] : &t[1];
  if (kind == ST__EW_COPY) {
    size_t size = st_dtype_size(t[0].dtype);
    if (out->dtype != t[0].dtype) {
      /* Float to another float dtype (st_op_check allows no other mixed
       * copy): one rounding through double, which holds every float
       * dtype's values exactly. */
      for (size_t i = begin; i < end; i++)
        st_tensor_set_f64(out, i, st_tensor_get_f64(&t[0], i));
      return;
    }
    if (end > begin)
      memcpy((char *)out->data + begin * size,
             (const char *)t[0].data + begin * size, (end - begin) * size);
    return;
  }
  if (st__ref_elementwise_typed(kind, call, begin, end))
    return;
  if (!st__dtype_is_int(t[0].dtype)) {
    double s = (kind == ST__EW_SCALE || kind == ST__EW_AXPY)
                   ? st__scalar_f64(call)
                   : 0.0;
    for (size_t i = begin; i < end; i++) {
      double a = st_tensor_get_f64(&t[0], i), r = 0.0;
      switch (kind) {
      case ST__EW_ADD:
        r = a + st_tensor_get_f64(&t[1], i);
        break;
      case ST__EW_SUB:
        r = a - st_tensor_get_f64(&t[1], i);
        break;
      case ST__EW_MUL:
        r = a * st_tensor_get_f64(&t[1], i);
        break;
      case ST__EW_SCALE:
        r = s * a;
        break;
      case ST__EW_AXPY:
        r = s * a + st_tensor_get_f64(&t[1], i);
        break;
      case ST__EW_RELU:
        /* NaN stays NaN, as torch.relu does. */
        r = a < 0.0 ? 0.0 : a;
        break;
      case ST__EW_COPY:
        break;
      }
      st_tensor_set_f64(out, i, r);
    }
    return;
  }
  uint64_t s =
      (kind == ST__EW_SCALE || kind == ST__EW_AXPY) ? st__scalar_u64(call) : 0;
  const int is_unsigned = st__dtype_is_unsigned(t[0].dtype);
  for (size_t i = begin; i < end; i++) {
    uint64_t a = (uint64_t)st_tensor_get_i64(&t[0], i), r = 0;
    switch (kind) {
    case ST__EW_ADD:
      r = a + (uint64_t)st_tensor_get_i64(&t[1], i);
      break;
    case ST__EW_SUB:
      r = a - (uint64_t)st_tensor_get_i64(&t[1], i);
      break;
    case ST__EW_MUL:
      r = a * (uint64_t)st_tensor_get_i64(&t[1], i);
      break;
    case ST__EW_SCALE:
      r = s * a;
      break;
    case ST__EW_AXPY:
      r = s * a + (uint64_t)st_tensor_get_i64(&t[1], i);
      break;
    case ST__EW_RELU:
      /* Signed values are sign-extended: the top bit is the sign. An
       * unsigned value has no sign (uint64's top bit is a value bit), so
       * relu is the identity there. */
      r = (a >> 63) && !is_unsigned ? 0 : a;
      break;
    case ST__EW_COPY:
      break;
    }
    st_tensor_set_i64(out, i, (int64_t)r);
  }
}

/* Each c[i, j] is sum over k ascending of a[i, k] * b[k, j], in double,
 * starting from 0.0: the cpu and threads backends sum in the same order,
 * so for float32/float64 they agree with the golden bit for bit. */
void st__ref_matmul_rows_generic(st_op_call *call, size_t r0, size_t r1) {
  const st_tensor *a = &call->tensors[0], *b = &call->tensors[1];
  st_tensor *c = &call->tensors[2];
  size_t kk = (size_t)a->shape[1], n = (size_t)b->shape[1];
  double *acc = n ? malloc(n * sizeof *acc) : NULL;
  for (size_t i = r0; i < r1; i++) {
    if (acc == NULL) {
      /* No memory for a row accumulator: the same sums, column order. */
      for (size_t j = 0; j < n; j++) {
        double s = 0.0;
        for (size_t k = 0; k < kk; k++)
          s += st_tensor_get_f64(a, i * kk + k) *
               st_tensor_get_f64(b, k * n + j);
        st_tensor_set_f64(c, i * n + j, s);
      }
      continue;
    }
    for (size_t j = 0; j < n; j++)
      acc[j] = 0.0;
    for (size_t k = 0; k < kk; k++) {
      double aik = st_tensor_get_f64(a, i * kk + k);
      for (size_t j = 0; j < n; j++)
        acc[j] += aik * st_tensor_get_f64(b, k * n + j);
    }
    for (size_t j = 0; j < n; j++)
      st_tensor_set_f64(c, i * n + j, acc[j]);
  }
  free(acc);
}

void st__ref_matmul_rows(st_op_call *call, size_t r0, size_t r1) {
  if (!st__ref_matmul_rows_typed(call, r0, r1))
    st__ref_matmul_rows_generic(call, r0, r1);
}

/* Numerically stable: exp(x - max(row)) / sum, all in double. */
void st__ref_softmax_rows(st_op_call *call, size_t r0, size_t r1) {
  const st_tensor *x = &call->tensors[0];
  st_tensor *y = &call->tensors[1];
  size_t cols = (size_t)x->shape[1];
  for (size_t r = r0; r < r1; r++) {
    size_t base = r * cols;
    double m = -INFINITY;
    for (size_t j = 0; j < cols; j++) {
      double v = st_tensor_get_f64(x, base + j);
      if (v > m)
        m = v;
    }
    double sum = 0.0;
    for (size_t j = 0; j < cols; j++)
      sum += exp(st_tensor_get_f64(x, base + j) - m);
    for (size_t j = 0; j < cols; j++)
      st_tensor_set_f64(y, base + j,
                        exp(st_tensor_get_f64(x, base + j) - m) / sum);
  }
}

/* Output rows: y[r, j] = x[j, r] for r in [r0, r1). */
void st__ref_transpose_rows(st_op_call *call, size_t r0, size_t r1) {
  const st_tensor *x = &call->tensors[0];
  st_tensor *y = &call->tensors[1];
  size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
  size_t size = st_dtype_size(x->dtype);
  if (y->dtype != x->dtype) {
    /* Float to another float dtype: one rounding through double. */
    for (size_t r = r0; r < r1 && r < cols; r++)
      for (size_t j = 0; j < rows; j++)
        st_tensor_set_f64(y, r * rows + j, st_tensor_get_f64(x, j * cols + r));
    return;
  }
  for (size_t r = r0; r < r1 && r < cols; r++)
    for (size_t j = 0; j < rows; j++)
      memcpy((char *)y->data + (r * rows + j) * size,
             (const char *)x->data + (j * cols + r) * size, size);
}

double st__ref_sum_f64_generic(const st_tensor *x, size_t begin, size_t end) {
  double s = 0.0;
  for (size_t i = begin; i < end; i++)
    s += st_tensor_get_f64(x, i);
  return s;
}

uint64_t st__ref_sum_u64_generic(const st_tensor *x, size_t begin, size_t end) {
  uint64_t s = 0;
  for (size_t i = begin; i < end; i++)
    s += (uint64_t)st_tensor_get_i64(x, i);
  return s;
}

double st__ref_sum_f64(const st_tensor *x, size_t begin, size_t end) {
  double s;
  if (st__ref_sum_f64_typed(x, begin, end, &s))
    return s;
  return st__ref_sum_f64_generic(x, begin, end);
}

uint64_t st__ref_sum_u64(const st_tensor *x, size_t begin, size_t end) {
  uint64_t s;
  if (st__ref_sum_u64_typed(x, begin, end, &s))
    return s;
  return st__ref_sum_u64_generic(x, begin, end);
}

static ST_WUR st_status ref_ew(st_op_call *call, st__ew kind) {
  return st__ew_pool(call, kind, st__ref_elementwise);
}

/* The element-wise ops, ref_copy .. ref_relu. */
ST__EW_OPS(ref, ref_ew)

/* The row ops over the pool (st__rows_op), in chunks of about 2^16
 * (matmul) or 2^14 element operations. */
static ST_WUR st_status ref_matmul(st_op_call *call) {
  return st__rows_op(call, 2, (size_t)1 << 16, 1, 1, st__ref_matmul_rows);
}

static ST_WUR st_status ref_softmax(st_op_call *call) {
  return st__rows_op(call, 1, (size_t)1 << 14, 0, 1, st__ref_softmax_rows);
}

static ST_WUR st_status ref_transpose(st_op_call *call) {
  return st__rows_op(call, 1, (size_t)1 << 14, 0, 1, st__ref_transpose_rows);
}

/* With shard_count > 1 (level 3) each shard writes the partial sum of its
 * own blocks into `out`; the harness combines the shards' partials. With
 * one shard `out` is the whole sum. */
static ST_WUR st_status ref_reduce_sum(st_op_call *call) {
  return st__reduce_sum_pool(call, st__ref_sum_f64, st__ref_sum_u64);
}

#define REF_OP(name, ...) {#name, ref_##name},
const st__op_entry st__reference_ops[] = ST__OP_TABLE(REF_OP);
/* The golden backend is not a platform: --platform reference is not a
 * thing a user runs kernels on. */
ST__BUILTIN_MODULE(reference, ST_BACKEND_REFERENCE, st__no_platforms)
