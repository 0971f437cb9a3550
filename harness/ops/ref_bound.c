/* SPDX-License-Identifier: MIT */
/* The reference golden with magnitude sums (ops/ref_bound.h). Each loop
 * is backend_reference.c's generic loop with one more accumulator: the
 * same double arithmetic in the same order, rounded once to the output
 * dtype, so the output bytes are the golden's (tests/ops/test_bound_ref.c
 * compares them byte for byte). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/ref_bound.h"
#include "ops/toolkit.h"

typedef struct bctx {
  st_op_call *call;
  double *magsum, *nterm;
  const double *bd; /* matmul: b as doubles, or NULL */
  int kind;         /* matmul 0, softmax 1, element-wise 2 */
  int ew;           /* element-wise: 'a'dd 's'ub 'm'ul 'c' scale 'x' axpy */
} bctx;

static void ew_range(bctx *c, size_t b, size_t e) {
  st_tensor *t = c->call->tensors;
  const int binary = c->ew == 'a' || c->ew == 's' || c->ew == 'm';
  st_tensor *out = binary ? &t[2] : &t[1];
  const double s = c->ew == 'c' || c->ew == 'x' ? st__scalar_f64(c->call) : 0;
  for (size_t i = b; i < e; i++) {
    const double x = st_tensor_get_f64(&t[0], i);
    const double y = binary || c->ew == 'x' ? st_tensor_get_f64(&t[1], i) : 0;
    double r, m;
    switch (c->ew) {
    case 'a':
      r = x + y, m = fabs(x) + fabs(y);
      break;
    case 's':
      r = x - y, m = fabs(x) + fabs(y);
      break;
    case 'm':
      r = x * y, m = fabs(r);
      break;
    case 'c':
      r = s * x, m = fabs(r);
      break;
    default: /* axpy */
      r = s * x + y, m = fabs(s * x) + fabs(y);
      break;
    }
    c->magsum[i] = m;
    st_tensor_set_f64(out, i, r);
  }
}

/* Rows [r0, r1) of c = a @ b: each sum over k ascending from 0.0, as
 * the reference; i-k-j with a row of accumulators (the magnitudes go
 * straight into magsum), or j-k without the memory for them. */
static double b_at(const bctx *c, const st_tensor *b, size_t i) {
  return c->bd ? c->bd[i] : st_tensor_get_f64(b, i);
}

static void matmul_rows(bctx *c, size_t r0, size_t r1) {
  const st_tensor *a = &c->call->tensors[0], *b = &c->call->tensors[1];
  st_tensor *out = &c->call->tensors[2];
  const size_t kk = (size_t)a->shape[1], n = (size_t)b->shape[1];
  double *acc = n ? malloc(n * sizeof *acc) : NULL;
  for (size_t i = r0; i < r1; i++) {
    double *mag = c->magsum + i * n;
    if (acc == NULL) {
      for (size_t j = 0; j < n; j++) {
        double s = 0.0, m = 0.0;
        for (size_t k = 0; k < kk; k++) {
          const double p =
              st_tensor_get_f64(a, i * kk + k) * b_at(c, b, k * n + j);
          s += p;
          m += fabs(p);
        }
        st_tensor_set_f64(out, i * n + j, s);
        mag[j] = m;
      }
      continue;
    }
    for (size_t j = 0; j < n; j++)
      acc[j] = 0.0, mag[j] = 0.0;
    for (size_t k = 0; k < kk; k++) {
      const double x = st_tensor_get_f64(a, i * kk + k);
      for (size_t j = 0; j < n; j++) {
        const double p = x * b_at(c, b, k * n + j);
        acc[j] += p;
        mag[j] += fabs(p);
      }
    }
    for (size_t j = 0; j < n; j++)
      st_tensor_set_f64(out, i * n + j, acc[j]);
  }
  free(acc);
}

static void softmax_rows(bctx *c, size_t r0, size_t r1) {
  const st_tensor *x = &c->call->tensors[0];
  st_tensor *y = &c->call->tensors[1];
  const size_t cols = (size_t)x->shape[1];
  for (size_t r = r0; r < r1; r++) {
    const size_t base = r * cols;
    double m = -INFINITY, sum = 0.0, w = 0.0;
    for (size_t j = 0; j < cols; j++) {
      const double v = st_tensor_get_f64(x, base + j);
      if (v > m)
        m = v;
    }
    for (size_t j = 0; j < cols; j++) {
      const double d = st_tensor_get_f64(x, base + j) - m;
      const double e = exp(d);
      sum += e;
      w += e * fabs(d);
    }
    for (size_t j = 0; j < cols; j++) {
      const double d = st_tensor_get_f64(x, base + j) - m;
      const double v = exp(d) / sum;
      st_tensor_set_f64(y, base + j, v);
      c->magsum[base + j] = v;
      c->nterm[base + j] = (double)cols + 4 + ceil(fabs(d) + w / sum);
    }
  }
}

static void chunk(void *ctx, size_t b, size_t e) {
  bctx *c = ctx;
  if (c->kind == 0)
    matmul_rows(c, b, e);
  else if (c->kind == 1)
    softmax_rows(c, b, e);
  else
    ew_range(c, b, e);
}

/* reduce_sum: ST__REDUCE_BLOCK blocks summed from 0.0, the partials then
 * summed in block order, as st__reduce_sum_pool and st__reduce_combine. */
static void reduce_sum(st_op_call *call, double *magsum) {
  const st_tensor *x = &call->tensors[0];
  const size_t nb =
      x->numel / ST__REDUCE_BLOCK + (x->numel % ST__REDUCE_BLOCK != 0);
  double total = 0.0, mag = 0.0;
  for (size_t k = 0; k < nb; k++) {
    size_t lo, hi;
    double s = 0.0;
    st__reduce_block_range(x, k, &lo, &hi);
    for (size_t i = lo; i < hi; i++) {
      const double v = st_tensor_get_f64(x, i);
      s += v;
      mag += fabs(v);
    }
    total += s;
  }
  st_tensor_set_f64(&call->tensors[1], 0, total);
  magsum[0] = mag;
}

st_status st__ref_bound(st_op_call *call, double *magsum, double *nterm) {
  static const struct {
    const char *op;
    int ew;
  } ews[] = {
      {"add", 'a'}, {"sub", 's'}, {"mul", 'm'}, {"scale", 'c'}, {"axpy", 'x'}};
  st_status rc = st_op_check(call);
  bctx c = {call, magsum, nterm, NULL, 2, 0};
  double *bd = NULL;
  if (rc != ST_OK)
    return rc;
  if (call->shard_count > 1)
    return ST_EINVAL;
  for (size_t i = 0; i < sizeof ews / sizeof ews[0]; i++)
    if (strcmp(call->op, ews[i].op) == 0)
      c.ew = ews[i].ew;
  if (c.ew != 0) {
    st__parallel_for(call->tensors[0].numel, (size_t)1 << 15, call->max_threads,
                     chunk, &c);
    return ST_OK;
  }
  if (strcmp(call->op, "reduce_sum") == 0) {
    reduce_sum(call, magsum);
    return ST_OK;
  }
  if (strcmp(call->op, "softmax") == 0) {
    if (nterm == NULL)
      return ST_EINVAL;
    c.kind = 1;
    st__parallel_for((size_t)call->tensors[0].shape[0], 16, call->max_threads,
                     chunk, &c);
    return ST_OK;
  }
  if (strcmp(call->op, "matmul") != 0)
    return ST_EINVAL;
  /* b as doubles once, so the inner loop reads no accessor; without the
   * memory, the accessor (the same values). */
  const st_tensor *b = &call->tensors[1];
  if (b->numel > 0 && (bd = malloc(b->numel * sizeof *bd)) != NULL)
    for (size_t i = 0; i < b->numel; i++)
      bd[i] = st_tensor_get_f64(b, i);
  c.bd = bd;
  c.kind = 0;
  const size_t per_row =
      (size_t)call->tensors[2].shape[1] * (size_t)call->tensors[0].shape[1];
  const size_t grain = per_row >= ((size_t)1 << 16)
                           ? 1
                           : ((size_t)1 << 16) / (per_row ? per_row : 1);
  st__parallel_for((size_t)call->tensors[0].shape[0], grain, call->max_threads,
                   chunk, &c);
  free(bd);
  return ST_OK;
}
