/* SPDX-License-Identifier: MIT */
/* Error-bound arithmetic (harness/base/bound.h) on worked examples
 * computed by hand: matmul with K = 1, 7, 1024, reduce_sum and axpy, in
 * float32, float16 and bfloat16, and the lengths where n*u >= 1. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <scenetest/scenetest.h>

#include "base/bound.h"

/* Equal to within a few ulps of double: the bound's own rounding. */
static void assert_near(double got, double want) {
  if (!(fabs(got - want) <= 1e-15 * fabs(want))) {
    print_message("got %.17g, want %.17g\n", got, want);
    fail();
  }
}

static void unit_roundoff__every_float_dtype(void **state) {
  (void)state;
  assert_true(st__bound_unit_roundoff(ST_DTYPE_FLOAT64) == 0x1p-53);
  assert_true(st__bound_unit_roundoff(ST_DTYPE_FLOAT32) == 0x1p-24);
  assert_true(st__bound_unit_roundoff(ST_DTYPE_FLOAT16) == 0x1p-11);
  assert_true(st__bound_unit_roundoff(ST_DTYPE_BFLOAT16) == 0x1p-8);
  assert_true(st__bound_unit_roundoff(ST_DTYPE_FLOAT8_E4M3FN) == 0x1p-4);
  assert_true(st__bound_unit_roundoff(ST_DTYPE_FLOAT8_E5M2) == 0x1p-3);
  assert_true(st__bound_unit_roundoff(ST_DTYPE_INT32) == 0.0);
}

/* matmul, one element: a's row times b's column. */
static void bound__matmul_k1_k7_k1024(void **state) {
  double g;
  uint64_t n;
  (void)state;
  /* K = 1, float32: [3] x [5] = 15. gamma(1) = 1 / (2^24 - 1), magsum
   * 15, and the output's rounding 2^-24 * (15 + 15). */
  assert_true(st__bound_n("matmul", 1, 0, &n) && n == 1);
  assert_true(st__bound_gamma(n, 0x1p-24, &g));
  assert_near(g, 1.0 / 16777215.0);
  assert_near(st__bound_allowed(1, g, 15, 0x1p-24, 15, 15, 0),
              15.0 / 16777215.0 + 30.0 / 16777216.0);
  /* K = 7, float16: ones times twos = 14. gamma(7) = 7/2048 / (1 -
   * 7/2048) = 7 / 2041; magsum 14. */
  assert_true(st__bound_n("matmul", 7, 0, &n) && n == 7);
  assert_true(st__bound_gamma(n, 0x1p-11, &g));
  assert_near(g, 7.0 / 2041.0);
  assert_near(st__bound_allowed(1, g, 14, 0x1p-11, 14, 14, 0),
              98.0 / 2041.0 + 28.0 / 2048.0);
  /* bound_factor and atol: 2 * (...) + 1e-3. */
  assert_near(st__bound_allowed(2, g, 14, 0x1p-11, 14, 14, 1e-3),
              2 * (98.0 / 2041.0 + 28.0 / 2048.0) + 1e-3);
  /* K = 7, bfloat16: 7/256 / (249/256) = 7 / 249. */
  assert_true(st__bound_gamma(7, 0x1p-8, &g));
  assert_near(g, 7.0 / 249.0);
  /* K = 1024: float32 1 / (2^14 - 1); float16 n*u = 1/2, gamma 1;
   * bfloat16 n*u = 4: meaningless. */
  assert_true(st__bound_n("matmul", 1024, 0, &n) && n == 1024);
  assert_true(st__bound_gamma(n, 0x1p-24, &g));
  assert_near(g, 1.0 / 16383.0);
  assert_true(st__bound_gamma(n, 0x1p-11, &g));
  assert_near(g, 1.0);
  assert_false(st__bound_gamma(n, 0x1p-8, &g));
}

/* n*u >= 1 is refused exactly at the edge. */
static void bound_gamma__meaningless_from_n_u_one(void **state) {
  double g = -1;
  (void)state;
  assert_true(st__bound_gamma(255, 0x1p-8, &g));
  assert_near(g, 255.0); /* (255/256) / (1/256) */
  assert_false(st__bound_gamma(256, 0x1p-8, &g));
  assert_true(st__bound_gamma(2047, 0x1p-11, &g));
  assert_false(st__bound_gamma(2048, 0x1p-11, &g));
  assert_false(st__bound_gamma(UINT64_MAX, 0x1p-53, &g));
  assert_true(st__bound_gamma(0, 0x1p-8, &g) && g == 0.0);
}

static void bound__reduce_sum_and_axpy(void **state) {
  double g;
  uint64_t n;
  (void)state;
  /* reduce_sum of [1, -2, 3, -4, 5, -6, 7, -8] in float32: n = 7,
   * gamma = 7 / (2^24 - 7), magsum 36, the sum -4. */
  assert_true(st__bound_n("reduce_sum", 0, 8, &n) && n == 7);
  assert_true(st__bound_gamma(n, 0x1p-24, &g));
  assert_near(g, 7.0 / 16777209.0);
  assert_near(st__bound_allowed(1, g, 36, 0x1p-24, -4, -4, 0),
              252.0 / 16777209.0 + 8.0 / 16777216.0);
  /* float16 over 2049 elements: n = 2048, n*u = 1. */
  assert_true(st__bound_n("reduce_sum", 0, 2049, &n) && n == 2048);
  assert_false(st__bound_gamma(n, 0x1p-11, &g));
  /* axpy 2*3 + (-1) = 5 in float16: n = 2, gamma = 2 / 2046, magsum
   * |2*3| + |-1| = 7. */
  assert_true(st__bound_n("axpy", 0, 0, &n) && n == 2);
  assert_true(st__bound_gamma(n, 0x1p-11, &g));
  assert_near(g, 1.0 / 1023.0);
  assert_near(st__bound_allowed(1, g, 7, 0x1p-11, 5, 5, 0),
              7.0 / 1023.0 + 10.0 / 2048.0);
  /* In bfloat16: gamma = 2 / 254. */
  assert_true(st__bound_gamma(n, 0x1p-8, &g));
  assert_near(g, 1.0 / 127.0);
  /* The rest of the table. */
  assert_true(st__bound_n("add", 0, 0, &n) && n == 1);
  assert_true(st__bound_n("scale", 0, 0, &n) && n == 1);
  assert_true(st__bound_n("relu", 0, 0, &n) && n == 0);
  assert_false(st__bound_n("softmax", 0, 0, &n));
  assert_false(st__bound_n("gemm_plugin_op", 0, 0, &n));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unit_roundoff__every_float_dtype),
      cmocka_unit_test(bound__matmul_k1_k7_k1024),
      cmocka_unit_test(bound_gamma__meaningless_from_n_u_one),
      cmocka_unit_test(bound__reduce_sum_and_axpy),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
