/* SPDX-License-Identifier: MIT */
/* Error-bound arithmetic (harness/base/bound.h) on worked examples
 * computed by hand: matmul with K = 1, 7, 1024, reduce_sum and axpy, in
 * float32, float16 and bfloat16, and the lengths where n*u >= 1; each
 * op's n and R by name, and every row of base/op_list.h against the
 * models its columns name. */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <scenetest/scenetest.h>

#include "base/bound.h"
#include "base/op_list.h"

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

/* st__bound_n(op, 7, 9) and st__bound_exact_range(op, 16, float64,
 * float32) against has_n/n and has_r/r (an unset output stays 12345);
 * names the op on a mismatch. */
static void check_op(const char *op, int has_n, uint64_t n, int has_r,
                     uint64_t r) {
  uint64_t gn = 12345, gr = 12345;
  const int hn = st__bound_n(op, 7, 9, &gn);
  const int hr =
      st__bound_exact_range(op, 16, ST_DTYPE_FLOAT64, ST_DTYPE_FLOAT32, &gr);
  if (hn != has_n || gn != (has_n ? n : 12345) || hr != has_r ||
      gr != (has_r ? r : 12345)) {
    print_message("%s: n %d %" PRIu64 ", R %d %" PRIu64 "; want n %d %" PRIu64
                  ", R %d %" PRIu64 "\n",
                  op, hn, gn, hr, gr, has_n, n, has_r, r);
    fail();
  }
}

/* Each built-in op by name, against the tables of
 * docs/scene-format.md#the-error-bound and #exact-inputs: n with k = 7
 * and len = 9, R for a float32 output (p = 24) from float64 inputs with
 * n = 16. axpy's R is the largest with R^2 + R <= 2^24: 4095^2 + 4095 =
 * 16773120 fits, 4096^2 + 4096 does not. */
static void bound__every_builtin_op_by_name(void **state) {
  static const struct {
    const char *op;
    int has_n;
    uint64_t n;
    int has_r;
    uint64_t r;
  } want[] = {
      {"copy", 1, 0, 1, 1u << 24},      {"add", 1, 1, 1, 1u << 23},
      {"sub", 1, 1, 1, 1u << 23},       {"mul", 1, 1, 1, 4096},
      {"scale", 1, 1, 1, 4096},         {"axpy", 1, 2, 1, 4095},
      {"relu", 1, 0, 1, 1u << 24},      {"matmul", 1, 7, 1, 1024},
      {"softmax", 0, 0, 0, 0},          {"reduce_sum", 1, 8, 1, 1u << 20},
      {"transpose", 1, 0, 1, 1u << 24}, {"gemm_plugin_op", 0, 0, 0, 0},
  };
  (void)state;
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    check_op(want[i].op, want[i].has_n, want[i].n, want[i].has_r, want[i].r);
}

/* The value of each model (k = 7, len = 9; R as above), indexed by the
 * enums: what a row's columns promise. */
static const uint64_t n_of_model[] = {
    [ST__BOUND_N_EXACT] = 0, [ST__BOUND_N_ONE] = 1, [ST__BOUND_N_TWO] = 2,
    [ST__BOUND_N_K] = 7,     [ST__BOUND_N_LEN] = 8,
};
static const uint64_t r_of_model[] = {
    [ST__BOUND_R_TOP] = 1u << 24, [ST__BOUND_R_HALF] = 1u << 23,
    [ST__BOUND_R_SQRT] = 4096,    [ST__BOUND_R_AXPY] = 4095,
    [ST__BOUND_R_SQRT_K] = 1024,  [ST__BOUND_R_DIV_N] = 1u << 20,
};

/* Every row of base/op_list.h: st__bound_n and st__bound_exact_range give
 * a model for exactly the rows whose columns bound_n and exact_r name one
 * (NONE, and SOFTMAX for n, name none), with that model's value; a row
 * without the columns does not compile here. */
static void bound_models__every_op_list_row(void **state) {
  static const struct {
    const char *op;
    st__bound_n_model n;
    st__bound_r_model r;
  } rows[] = {
#define XX(name, n_tensors, t0, t1, t2, scalar, dtypes, shapes, written, read, \
           widen, flops, per, bound_n, exact_r, family, kind, formula)         \
  {#name, ST__BOUND_N_##bound_n, ST__BOUND_R_##exact_r},
      ST__BUILTIN_OP_MAP(XX)
#undef XX
  };
  (void)state;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const int has_n =
        rows[i].n != ST__BOUND_N_NONE && rows[i].n != ST__BOUND_N_SOFTMAX;
    const int has_r = rows[i].r != ST__BOUND_R_NONE;
    st__bound_n_model nm = ST__BOUND_N_NONE;
    st__bound_r_model rm = ST__BOUND_R_NONE;
    /* A model new to the enums needs its value above. */
    assert_true(!has_n ||
                (size_t)rows[i].n < sizeof n_of_model / sizeof n_of_model[0]);
    assert_true(!has_r ||
                (size_t)rows[i].r < sizeof r_of_model / sizeof r_of_model[0]);
    assert_true(st__bound_models(rows[i].op, &nm, &rm));
    assert_int_equal(nm, rows[i].n);
    assert_int_equal(rm, rows[i].r);
    check_op(rows[i].op, has_n, has_n ? n_of_model[rows[i].n] : 0, has_r,
             has_r ? r_of_model[rows[i].r] : 0);
  }
  /* No model: neither function gives one, for a name or a model. */
  st__bound_n_model nm = ST__BOUND_N_ONE;
  st__bound_r_model rm = ST__BOUND_R_TOP;
  uint64_t v = 12345;
  assert_false(st__bound_models("gemm_plugin_op", &nm, &rm));
  assert_int_equal(nm, ST__BOUND_N_NONE);
  assert_int_equal(rm, ST__BOUND_R_NONE);
  assert_false(st__bound_n_of(ST__BOUND_N_NONE, 7, 9, &v));
  assert_false(st__bound_n_of(ST__BOUND_N_SOFTMAX, 7, 9, &v));
  assert_false(st__bound_exact_range_of(ST__BOUND_R_NONE, 16, ST_DTYPE_FLOAT64,
                                        ST_DTYPE_FLOAT32, &v));
  assert_int_equal(v, 12345);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unit_roundoff__every_float_dtype),
      cmocka_unit_test(bound__matmul_k1_k7_k1024),
      cmocka_unit_test(bound_gamma__meaningless_from_n_u_one),
      cmocka_unit_test(bound__reduce_sum_and_axpy),
      cmocka_unit_test(bound__every_builtin_op_by_name),
      cmocka_unit_test(bound_models__every_op_list_row),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
