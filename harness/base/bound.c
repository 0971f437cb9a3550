/* SPDX-License-Identifier: MIT */
/* Error-bound arithmetic (base/bound.h). The unit roundoffs are those of
 * round-to-nearest with the dtypes' significand widths: IEEE binary64 53,
 * binary32 24, binary16 11, bfloat16 8, OCP FP8 E4M3 4 and E5M2 3. Each
 * op's models are its columns of base/op_list.h; no op is named here. */
#include <math.h>
#include <string.h>

#include "base/bound.h"
#include "base/op_list.h"

double st__bound_unit_roundoff(st_dtype dtype) {
  switch (dtype) {
  case ST_DTYPE_FLOAT64:
    return ldexp(1.0, -53);
  case ST_DTYPE_FLOAT32:
    return ldexp(1.0, -24);
  case ST_DTYPE_FLOAT16:
    return ldexp(1.0, -11);
  case ST_DTYPE_BFLOAT16:
    return ldexp(1.0, -8);
  case ST_DTYPE_FLOAT8_E4M3FN:
    return ldexp(1.0, -4);
  case ST_DTYPE_FLOAT8_E5M2:
    return ldexp(1.0, -3);
  default:
    return 0.0;
  }
}

int st__bound_gamma(uint64_t n, double u, double *out) {
  /* n*u is exact for n < 2^53 (u a power of two); a larger n only makes
   * n*u >= 1 the sooner. */
  double nu = (double)n * u;
  if (nu >= 1.0)
    return 0;
  *out = nu / (1.0 - nu);
  return 1;
}

/* Each built-in op's models, from its row of the one op list. */
static const struct {
  const char *op;
  st__bound_n_model n;
  st__bound_r_model r;
} models[] = {
#define XX(name, n_tensors, t0, t1, t2, scalar, dtypes, shapes, written, read, \
           widen, flops, per, bound_n, exact_r, ...)                           \
  {#name, ST__BOUND_N_##bound_n, ST__BOUND_R_##exact_r},
    ST__BUILTIN_OP_MAP(XX)
#undef XX
};

int st__bound_models(const char *op, st__bound_n_model *n,
                     st__bound_r_model *r) {
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    if (strcmp(op, models[i].op) == 0) {
      if (n != NULL)
        *n = models[i].n;
      if (r != NULL)
        *r = models[i].r;
      return 1;
    }
  if (n != NULL)
    *n = ST__BOUND_N_NONE;
  if (r != NULL)
    *r = ST__BOUND_R_NONE;
  return 0;
}

int st__bound_n_of(st__bound_n_model m, uint64_t k, uint64_t len, uint64_t *n) {
  switch (m) {
  case ST__BOUND_N_EXACT:
    *n = 0;
    return 1;
  case ST__BOUND_N_ONE:
    *n = 1;
    return 1;
  case ST__BOUND_N_TWO:
    *n = 2;
    return 1;
  case ST__BOUND_N_K:
    *n = k;
    return 1;
  case ST__BOUND_N_LEN:
    *n = len > 0 ? len - 1 : 0;
    return 1;
  case ST__BOUND_N_SOFTMAX:
  case ST__BOUND_N_NONE:
    break;
  }
  return 0;
}

int st__bound_n(const char *op, uint64_t k, uint64_t len, uint64_t *n) {
  st__bound_n_model m;
  (void)st__bound_models(op, &m, NULL);
  return st__bound_n_of(m, k, len, n);
}

int st__bound_bits(st_dtype dtype) {
  switch (dtype) {
  case ST_DTYPE_FLOAT64:
    return 53;
  case ST_DTYPE_FLOAT32:
    return 24;
  case ST_DTYPE_FLOAT16:
    return 11;
  case ST_DTYPE_BFLOAT16:
    return 8;
  case ST_DTYPE_FLOAT8_E4M3FN:
    return 4;
  case ST_DTYPE_FLOAT8_E5M2:
    return 3;
  default:
    return 0;
  }
}

uint64_t st__bound_input_cap(st_dtype dtype) {
  const int p = st__bound_bits(dtype);
  return p > 0 ? (uint64_t)1 << p : 0;
}

/* The largest r with r*r <= x (x < 2^62). */
static uint64_t isqrt(uint64_t x) {
  uint64_t r = (uint64_t)sqrt((double)x);
  while (r > 0 && r * r > x)
    r--;
  while ((r + 1) * (r + 1) <= x)
    r++;
  return r;
}

int st__bound_exact_range_of(st__bound_r_model m, uint64_t n, st_dtype in,
                             st_dtype out, uint64_t *r) {
  const int p = st__bound_bits(out);
  const uint64_t cap = st__bound_input_cap(in);
  const uint64_t top = p > 0 ? (uint64_t)1 << p : 0; /* 2^p <= 2^53 */
  uint64_t x;
  switch (m) {
  case ST__BOUND_R_TOP:
    x = top;
    break;
  case ST__BOUND_R_HALF:
    x = top / 2;
    break;
  case ST__BOUND_R_SQRT:
    x = isqrt(top);
    break;
  case ST__BOUND_R_AXPY:
    x = isqrt(top);
    while (x > 0 && x * x + x > top)
      x--;
    break;
  case ST__BOUND_R_SQRT_K:
    x = n == 0 ? top : isqrt(top / n); /* n*R^2 <= 2^p: R^2 <= floor(2^p/n) */
    break;
  case ST__BOUND_R_DIV_N:
    x = n == 0 ? top : top / n;
    break;
  case ST__BOUND_R_NONE:
  default:
    return 0;
  }
  *r = x < cap ? x : cap;
  return 1;
}

int st__bound_exact_range(const char *op, uint64_t n, st_dtype in, st_dtype out,
                          uint64_t *r) {
  st__bound_r_model m;
  (void)st__bound_models(op, NULL, &m);
  return st__bound_exact_range_of(m, n, in, out, r);
}

double st__bound_allowed(double factor, double gamma, double magsum, double u_o,
                         double actual, double expected, double atol) {
  return factor * (gamma * magsum + u_o * (fabs(actual) + fabs(expected))) +
         atol;
}
