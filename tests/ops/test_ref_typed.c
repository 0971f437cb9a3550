/* SPDX-License-Identifier: MIT */
/* The reference backend's typed fast paths (ops/ref_typed.c) against its
 * generic accessor-per-element path, byte for byte: the blocked matmul over
 * shapes that leave partial row groups and column tiles (odd sizes, K = 0,
 * N around the 256-column tile), with NaN and infinities propagated as
 * before; the block sums for every integer dtype (exact, wrapping at the
 * extremes) and for floats (the same sequential order, NaN kept); and the
 * entry points st__ref_matmul_rows / st__ref_sum_* taking the typed path
 * for the dtypes it covers and the generic one for the others. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/op.h>

#include "base/dtype.h"
#include "ops/ops_impl.h"
#include "ops_testing.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/* In [-1, 1), with a few values far from 1 so that rounding matters. */
static double rnd(void) {
  double u = (double)(next_u64() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  return (next_u64() & 15) == 0 ? u * 1e6 : u;
}

static void matmul_call(st_op_call *call, st_tensor *t) {
  st_op_call_init(call);
  call->op = "matmul";
  call->backend = "reference";
  call->tensors = t;
  call->n_tensors = 3;
  call->shard_count = 1;
  call->max_threads = 1;
}

/* One shape, one float dtype: typed (through st__ref_matmul_rows, over the
 * whole range and over two uneven row ranges) against generic. */
static void check_matmul(st_dtype dt, size_t m, size_t k, size_t n,
                         int specials) {
  size_t es = st_dtype_size(dt);
  unsigned char *a = malloc(m * k * es + 1), *b = malloc(k * n * es + 1);
  unsigned char *want = malloc(m * n * es + 1), *got = malloc(m * n * es + 1);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(want);
  assert_non_null(got);
  st_tensor t[3] = {
      ot_tensor(dt, ST_ROLE_INPUT, a, 2, (int64_t)m, (int64_t)k),
      ot_tensor(dt, ST_ROLE_INPUT, b, 2, (int64_t)k, (int64_t)n),
      ot_tensor(dt, ST_ROLE_OUTPUT, want, 2, (int64_t)m, (int64_t)n)};
  for (size_t i = 0; i < m * k; i++)
    st_tensor_set_f64(&t[0], i, rnd());
  for (size_t i = 0; i < k * n; i++)
    st_tensor_set_f64(&t[1], i, rnd());
  if (specials && m * k > 2 && k * n > 2) {
    st_tensor_set_f64(&t[0], 1, NAN);
    st_tensor_set_f64(&t[1], k * n - 1, INFINITY);
    st_tensor_set_f64(&t[1], 0, -INFINITY);
  }
  st_op_call call;
  matmul_call(&call, t);
  memset(want, 0x5a, m * n * es);
  st__ref_matmul_rows_generic(&call, 0, m);
  t[2].data = got;
  memset(got, 0xa5, m * n * es);
  assert_true(st__ref_matmul_rows_typed(&call, 0, m));
  if (memcmp(got, want, m * n * es) != 0)
    fail_msg("matmul %s %zux%zux%zu: typed differs from generic",
             st_dtype_name(dt), m, k, n);
  /* Row ranges that do not start on a row group. */
  memset(got, 0xa5, m * n * es);
  st__ref_matmul_rows(&call, 0, m / 3);
  st__ref_matmul_rows(&call, m / 3, m);
  if (memcmp(got, want, m * n * es) != 0)
    fail_msg("matmul %s %zux%zux%zu in two ranges: differs from generic",
             st_dtype_name(dt), m, k, n);
  if (specials && m * k > 2 && k * n > 2) {
    /* a[0, 1] is NaN: row 0 of c is NaN throughout. */
    for (size_t j = 0; j < n; j++)
      assert_true(isnan(st_tensor_get_f64(&t[2], j)));
  }
  free(a);
  free(b);
  free(want);
  free(got);
}

static void ref_matmul_typed__equals_generic_odd_shapes(void **state) {
  (void)state;
  static const size_t ms[] = {1, 3, 4, 5, 7, 9};
  static const size_t ks[] = {1, 2, 17};
  static const size_t ns[] = {1, 3, 255, 256, 257, 513};
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64};
  for (size_t d = 0; d < 2; d++)
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
      for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++)
        for (size_t l = 0; l < sizeof ns / sizeof ns[0]; l++)
          check_matmul(dts[d], ms[i], ks[j], ns[l], 0);
}

static void ref_matmul_typed__nan_and_inf_propagate(void **state) {
  (void)state;
  check_matmul(ST_DTYPE_FLOAT32, 6, 5, 259, 1);
  check_matmul(ST_DTYPE_FLOAT64, 9, 3, 7, 1);
}

/* K = 0: every c[i, j] is the empty sum, 0.0. */
static void ref_matmul_typed__empty_k_gives_zeros(void **state) {
  (void)state;
  float c[5 * 3];
  for (size_t i = 0; i < 15; i++)
    c[i] = 7.0f;
  float dummy = 0.0f;
  st_tensor t[3] = {ot_tensor(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, &dummy, 2, 5, 0),
                    ot_tensor(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, &dummy, 2, 0, 3),
                    ot_tensor(ST_DTYPE_FLOAT32, ST_ROLE_OUTPUT, c, 2, 5, 3)};
  st_op_call call;
  matmul_call(&call, t);
  assert_true(st__ref_matmul_rows_typed(&call, 0, 5));
  for (size_t i = 0; i < 15; i++)
    assert_true(c[i] == 0.0f);
}

/* Half precision and mixed dtypes are not the typed path's: it declines
 * and st__ref_matmul_rows still computes them (generically). */
static void ref_matmul_typed__declines_other_dtypes(void **state) {
  (void)state;
  uint16_t a[4], b[4], c[4], want[4];
  st_tensor t[3] = {ot_tensor(ST_DTYPE_FLOAT16, ST_ROLE_INPUT, a, 2, 2, 2),
                    ot_tensor(ST_DTYPE_FLOAT16, ST_ROLE_INPUT, b, 2, 2, 2),
                    ot_tensor(ST_DTYPE_FLOAT16, ST_ROLE_OUTPUT, c, 2, 2, 2)};
  for (size_t i = 0; i < 4; i++) {
    st_tensor_set_f64(&t[0], i, (double)i + 1.0);
    st_tensor_set_f64(&t[1], i, 0.5 * (double)i);
  }
  st_op_call call;
  matmul_call(&call, t);
  assert_false(st__ref_matmul_rows_typed(&call, 0, 2));
  st__ref_matmul_rows(&call, 0, 2);
  memcpy(want, c, sizeof c);
  memset(c, 0, sizeof c);
  st__ref_matmul_rows_generic(&call, 0, 2);
  assert_memory_equal(c, want, sizeof c);
  /* [[1, 2], [3, 4]] x [[0, .5], [1, 1.5]] = [[2, 3.5], [4, 7.5]] */
  assert_true(st_tensor_get_f64(&t[2], 0) == 2.0);
  assert_true(st_tensor_get_f64(&t[2], 3) == 7.5);
  float af[4] = {0};
  t[0] = ot_tensor(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, af, 2, 2, 2);
  assert_false(st__ref_matmul_rows_typed(&call, 0, 2));
}

/* Every integer dtype: the typed sum equals the generic one and the exact
 * value modulo 2^64, including sums that wrap. */
static void ref_sum_typed__integers_exact(void **state) {
  (void)state;
  static const st_dtype dts[] = {ST_DTYPE_INT8, ST_DTYPE_INT16, ST_DTYPE_INT32,
                                 ST_DTYPE_INT64, ST_DTYPE_UINT8};
  enum { N = 4096 + 37 };
  int64_t *vals = malloc(N * sizeof *vals);
  unsigned char *buf = malloc(N * 8);
  assert_non_null(vals);
  assert_non_null(buf);
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    st_tensor x = ot_tensor(dts[d], ST_ROLE_INPUT, buf, 1, N, 0);
    unsigned bits = (unsigned)st_dtype_size(dts[d]) * 8;
    for (size_t i = 0; i < N; i++) {
      uint64_t r = next_u64();
      int64_t v;
      if (dts[d] == ST_DTYPE_UINT8)
        v = (int64_t)(r & 0xff);
      else if (bits == 64)
        v = (i % 3 == 0) ? INT64_MAX - (int64_t)(r & 7) : (int64_t)r;
      else
        v = (int64_t)(r >> (64 - bits)) - ((int64_t)1 << (bits - 1));
      vals[i] = v;
      st_tensor_set_i64(&x, i, v);
    }
    static const size_t ranges[][2] = {{0, N}, {0, 0}, {5, 6}, {3, 4099}};
    for (size_t r = 0; r < 4; r++) {
      size_t b = ranges[r][0], e = ranges[r][1];
      uint64_t exact = 0, got = 0;
      for (size_t i = b; i < e; i++)
        exact += (uint64_t)vals[i];
      assert_true(st__ref_sum_u64_typed(&x, b, e, &got));
      assert_true(got == exact);
      assert_true(st__ref_sum_u64_generic(&x, b, e) == exact);
      assert_true(st__ref_sum_u64(&x, b, e) == exact);
    }
  }
  free(vals);
  free(buf);
}

/* Floats: the typed sum is the generic sequential sum, bit for bit; a NaN
 * anywhere makes it NaN; bool is left to the generic path. */
static void ref_sum_typed__floats_equal_generic_nan_kept(void **state) {
  (void)state;
  enum { N = 4096 };
  float f[N];
  double g[N];
  for (size_t i = 0; i < N; i++) {
    f[i] = (float)rnd();
    g[i] = rnd();
  }
  st_tensor x = ot_tensor(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, f, 1, N, 0);
  st_tensor y = ot_tensor(ST_DTYPE_FLOAT64, ST_ROLE_INPUT, g, 1, N, 0);
  double s = 0.0;
  assert_true(st__ref_sum_f64_typed(&x, 0, N, &s));
  assert_true(s == st__ref_sum_f64_generic(&x, 0, N));
  assert_true(st__ref_sum_f64_typed(&y, 7, N - 1, &s));
  assert_true(s == st__ref_sum_f64_generic(&y, 7, N - 1));
  f[1000] = NAN;
  g[17] = NAN;
  assert_true(isnan(st__ref_sum_f64(&x, 0, N)));
  assert_true(isnan(st__ref_sum_f64(&y, 0, N)));
  /* NaN outside the range does not leak in. */
  assert_false(isnan(st__ref_sum_f64(&x, 1001, N)));
  unsigned char bools[3] = {1, 0, 1};
  st_tensor z = ot_tensor(ST_DTYPE_BOOL, ST_ROLE_INPUT, bools, 1, 3, 0);
  uint64_t u = 99;
  assert_false(st__ref_sum_u64_typed(&z, 0, 3, &u));
  assert_true(u == 99);
  assert_true(st__ref_sum_u64(&z, 0, 3) == 2);
  assert_false(st__ref_sum_f64_typed(&z, 0, 3, &s));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ref_matmul_typed__equals_generic_odd_shapes),
      cmocka_unit_test(ref_matmul_typed__nan_and_inf_propagate),
      cmocka_unit_test(ref_matmul_typed__empty_k_gives_zeros),
      cmocka_unit_test(ref_matmul_typed__declines_other_dtypes),
      cmocka_unit_test(ref_sum_typed__integers_exact),
      cmocka_unit_test(ref_sum_typed__floats_equal_generic_nan_kept),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
