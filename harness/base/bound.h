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
 * and the integer range of `init: exact`
 * (docs/scene-format.md#the-error-bound, #exact-inputs). Pure arithmetic:
 * the plan (scene/plan_bound.c), the reference's magnitude sums
 * (ops/ref_bound.c) and the compare (case/bound_compare.c) use it. */
#ifndef SCENETEST_HARNESS_BASE_BOUND_H
#define SCENETEST_HARNESS_BASE_BOUND_H

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

/* The significand width p of a float dtype, the implicit bit included
 * (u = 2^-p): float64 53, float32 24, float16 11, bfloat16 8,
 * float8_e4m3fn 4, float8_e5m2 3; 0 for the others. */
int st__bound_bits(st_dtype dtype);

/* The largest integer an input of dtype holds exactly with every integer
 * below it: 2^p (float8_e4m3fn 16, float8_e5m2 8, bfloat16 256, float16
 * 2048, float32 2^24, float64 2^53); 0 for a dtype that is not float. */
uint64_t st__bound_input_cap(st_dtype dtype);

/* `init: exact`'s R for built-in op over inputs of dtype in and an output
 * of dtype out: the largest integer such that every result over integers
 * in [-R, R] is exact in p = st__bound_bits(out) bits: matmul n*R^2 <=
 * 2^p (n = K), reduce_sum n*R <= 2^p (n = the element count), add and sub
 * 2R <= 2^p, mul and scale R^2 <= 2^p, axpy R^2 + R <= 2^p, copy, relu and
 * transpose R <= 2^p; capped by st__bound_input_cap(in). Returns 1 with
 * *r set (0 when no R >= 1 exists), or 0 for an op without a range
 * (softmax, any other). */
int st__bound_exact_range(const char *op /* IN */, uint64_t n, st_dtype in,
                          st_dtype out, uint64_t *r /* OUT */);

/* The allowed |actual - expected| of one element. */
double st__bound_allowed(double factor, double gamma, double magsum, double u_o,
                         double actual, double expected, double atol);

#endif
