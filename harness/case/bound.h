/* SPDX-License-Identifier: MIT */
/* The arithmetic of a rigorous error bound (Higham, "Accuracy and
 * Stability of Numerical Algorithms", 2nd ed., §3.1 and Lemma 3.1): the
 * unit roundoff of each float dtype, gamma(n) = n*u / (1 - n*u), the
 * accumulation length n of each built-in op, and the allowed difference
 * of one element,
 *
 *   bound_factor * (gamma(n) * magsum + u_o * (|actual| + |expected|))
 *     + atol.
 *
 * The part of `tolerance: bound` that is pure arithmetic; the loader keys,
 * the reference's magnitude sums and the compare that would use it are
 * not wired yet (issue 27). */
#ifndef SCENETEST_HARNESS_CASE_BOUND_H
#define SCENETEST_HARNESS_CASE_BOUND_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/tensor.h>

/* The unit roundoff of a float dtype (2^-p for p significand bits, the
 * implicit one included): float64 2^-53, float32 2^-24, float16 2^-11,
 * bfloat16 2^-8, float8_e4m3fn 2^-4, float8_e5m2 2^-3; 0 for the others.
 * Thread-safety: any thread. */
double st__bound_unit_roundoff(st_dtype dtype);

/* gamma(n) = n*u / (1 - n*u) into *out and 1; 0 when n*u >= 1 (the bound
 * is meaningless: a load error). gamma(0) is 0. */
int st__bound_gamma(uint64_t n, double u, double *out /* OUT */);

/* The accumulation length n of a built-in op: add, sub,
 * mul, scale 1; axpy 2; matmul k (the inner dimension); reduce_sum
 * len - 1 (len the reduced length); copy, transpose, relu 0 (exact).
 * Returns 1, or 0 for an op without a static n (softmax, whose n depends
 * on the data, and any other). */
int st__bound_n(const char *op /* IN */, uint64_t k, uint64_t len,
                uint64_t *n /* OUT */);

/* The allowed |actual - expected| of one element. */
double st__bound_allowed(double factor, double gamma, double magsum, double u_o,
                         double actual, double expected, double atol);

#endif
