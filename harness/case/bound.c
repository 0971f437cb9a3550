/* SPDX-License-Identifier: MIT */
/* Error-bound arithmetic (case/bound.h). The unit roundoffs are those of
 * round-to-nearest with the dtypes' significand widths: IEEE binary64 53,
 * binary32 24, binary16 11, bfloat16 8, OCP FP8 E4M3 4 and E5M2 3. */
#include <math.h>
#include <string.h>

#include "case/bound.h"

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

double st__bound_allowed(double factor, double gamma, double magsum, double u_o,
                         double actual, double expected, double atol) {
  return factor * (gamma * magsum + u_o * (fabs(actual) + fabs(expected))) +
         atol;
}
