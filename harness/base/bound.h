/* SPDX-License-Identifier: MIT */
/* The arithmetic of a rigorous error bound (Higham, "Accuracy and
 * Stability of Numerical Algorithms", 2nd ed., §3.1 and Lemma 3.1): the
 * unit roundoff of each float dtype, gamma(n) = n*u / (1 - n*u), the
 * accumulation length n of each built-in op (its model a column of
 * base/op_list.h), and the allowed difference of one element,
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

/* The error model of a built-in op: the columns bound_n and exact_r of
 * base/op_list.h, ST__BOUND_N_<bound_n> and ST__BOUND_R_<exact_r>. */
typedef enum st__bound_n_model {
  ST__BOUND_N_NONE = 0, /* no model: the bound does not apply */
  ST__BOUND_N_EXACT,    /* n = 0: the op is exact */
  ST__BOUND_N_ONE,      /* n = 1 */
  ST__BOUND_N_TWO,      /* n = 2 */
  ST__BOUND_N_K,        /* n = k, the inner dimension */
  ST__BOUND_N_LEN,      /* n = len - 1, len the reduced length */
  ST__BOUND_N_SOFTMAX   /* n per element, at least C + 4: no static n */
} st__bound_n_model;

typedef enum st__bound_r_model {
  ST__BOUND_R_NONE = 0, /* no exact inputs */
  ST__BOUND_R_TOP,      /* R <= 2^p */
  ST__BOUND_R_HALF,     /* 2R <= 2^p */
  ST__BOUND_R_SQRT,     /* R^2 <= 2^p */
  ST__BOUND_R_AXPY,     /* R^2 + R <= 2^p */
  ST__BOUND_R_SQRT_K,   /* n*R^2 <= 2^p, n = K */
  ST__BOUND_R_DIV_N     /* n*R <= 2^p, n the element count */
} st__bound_r_model;

/* The models of built-in op `op`, from its row of base/op_list.h, into
 * *n and *r; returns 1, or 0 with both NONE for a name that is not a
 * built-in op (a plugin's). Either pointer may be NULL. */
int st__bound_models(const char *op /* IN */, st__bound_n_model *n /* OUT */,
                     st__bound_r_model *r /* OUT */);

/* The accumulation length n under model m: EXACT 0, ONE 1, TWO 2, K k,
 * LEN len - 1 (0 for len 0). Returns 1, or 0 for a model without a
 * static n (SOFTMAX, whose n depends on the data, and NONE). */
int st__bound_n_of(st__bound_n_model m, uint64_t k, uint64_t len,
                   uint64_t *n /* OUT */);

/* st__bound_n_of with built-in op `op`'s model: add, sub, mul, scale 1;
 * axpy 2; matmul k (the inner dimension); reduce_sum len - 1 (len the
 * reduced length); copy, transpose, relu 0 (exact). Returns 1, or 0 for
 * an op without a static n (softmax, and any other). */
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

/* `init: exact`'s R under model m over inputs of dtype in and an output
 * of dtype out: the largest integer such that every result over integers
 * in [-R, R] is exact in p = st__bound_bits(out) bits: SQRT_K n*R^2 <=
 * 2^p, DIV_N n*R <= 2^p, HALF 2R <= 2^p, SQRT R^2 <= 2^p, AXPY R^2 + R
 * <= 2^p, TOP R <= 2^p (n 0: TOP); capped by st__bound_input_cap(in).
 * Returns 1 with *r set (0 when no R >= 1 exists), or 0 for NONE. */
int st__bound_exact_range_of(st__bound_r_model m, uint64_t n, st_dtype in,
                             st_dtype out, uint64_t *r /* OUT */);

/* st__bound_exact_range_of with built-in op `op`'s model: matmul n*R^2
 * <= 2^p (n = K), reduce_sum n*R <= 2^p (n = the element count), add and
 * sub 2R <= 2^p, mul and scale R^2 <= 2^p, axpy R^2 + R <= 2^p, copy,
 * relu and transpose R <= 2^p. Returns 1 with *r set, or 0 for an op
 * without a range (softmax, any other). */
int st__bound_exact_range(const char *op /* IN */, uint64_t n, st_dtype in,
                          st_dtype out, uint64_t *r /* OUT */);

/* The allowed |actual - expected| of one element. */
double st__bound_allowed(double factor, double gamma, double magsum, double u_o,
                         double actual, double expected, double atol);

#endif
