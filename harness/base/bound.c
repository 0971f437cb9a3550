/* SPDX-License-Identifier: MIT */
/* Error-bound arithmetic (base/bound.h). The unit roundoffs are those of
 * round-to-nearest with the dtypes' significand widths: IEEE binary64 53,
 * binary32 24, binary16 11, bfloat16 8, OCP FP8 E4M3 4 and E5M2 3. */
#include <math.h>
#include <string.h>

#include "base/bound.h"

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

int st__bound_n(const char *op, uint64_t k, uint64_t len, uint64_t *n) {
  static const char *const one[] = {"add", "sub", "mul", "scale"};
  static const char *const exact[] = {"copy", "transpose", "relu"};
  size_t i;
  for (i = 0; i < sizeof one / sizeof one[0]; i++)
    if (strcmp(op, one[i]) == 0) {
      *n = 1;
      return 1;
    }
  for (i = 0; i < sizeof exact / sizeof exact[0]; i++)
    if (strcmp(op, exact[i]) == 0) {
      *n = 0;
      return 1;
    }
  if (strcmp(op, "axpy") == 0) {
    *n = 2;
    return 1;
  }
  if (strcmp(op, "matmul") == 0) {
    *n = k;
    return 1;
  }
  if (strcmp(op, "reduce_sum") == 0) {
    *n = len > 0 ? len - 1 : 0;
    return 1;
  }
  return 0;
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

int st__bound_exact_range(const char *op, uint64_t n, st_dtype in, st_dtype out,
                          uint64_t *r) {
  const int p = st__bound_bits(out);
  const uint64_t cap = st__bound_input_cap(in);
  const uint64_t top = p > 0 ? (uint64_t)1 << p : 0; /* 2^p <= 2^53 */
  uint64_t x;
  if (strcmp(op, "copy") == 0 || strcmp(op, "relu") == 0 ||
      strcmp(op, "transpose") == 0)
    x = top;
  else if (strcmp(op, "add") == 0 || strcmp(op, "sub") == 0)
    x = top / 2;
  else if (strcmp(op, "mul") == 0 || strcmp(op, "scale") == 0)
    x = isqrt(top);
  else if (strcmp(op, "axpy") == 0) {
    x = isqrt(top);
    while (x > 0 && x * x + x > top)
      x--;
  } else if (strcmp(op, "matmul") == 0)
    x = n == 0 ? top : isqrt(top / n); /* n*R^2 <= 2^p: R^2 <= floor(2^p/n) */
  else if (strcmp(op, "reduce_sum") == 0)
    x = n == 0 ? top : top / n;
  else
    return 0;
  *r = x < cap ? x : cap;
  return 1;
}

double st__bound_allowed(double factor, double gamma, double magsum, double u_o,
                         double actual, double expected, double atol) {
  return factor * (gamma * magsum + u_o * (fabs(actual) + fabs(expected))) +
         atol;
}
