/* SPDX-License-Identifier: MIT */
/* Tests for harness/case/compare.c: the allclose rule (NaN, infinities, rtol
 * and atol boundaries, integers, float16), the vectorized float32 pre-pass
 * agreeing with the exact rule, empty tensors, the mismatch message and
 * its multi-index, and the bit-exact input check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/compare.h"

typedef struct pair {
  st_tensor a, e;
  unsigned char *abuf, *ebuf;
} pair;

/* Two tensors of the same dtype and shape (ndim 1..3), zero-filled. */
static void pair_init(pair *p, const char *name, st_dtype dtype, int ndim,
                      int64_t d0, int64_t d1, int64_t d2) {
  memset(p, 0, sizeof *p);
  st_tensor *ts[2] = {&p->a, &p->e};
  const int64_t dims[3] = {d0, d1, d2};
  size_t numel = 1;
  for (int d = 0; d < ndim; d++)
    numel *= (size_t)dims[d];
  const size_t nbytes = numel * st_dtype_size(dtype);
  p->abuf = calloc(1, nbytes + 1);
  p->ebuf = calloc(1, nbytes + 1);
  assert_non_null(p->abuf);
  assert_non_null(p->ebuf);
  for (int k = 0; k < 2; k++) {
    ts[k]->name = name;
    ts[k]->dtype = dtype;
    ts[k]->role = ST_ROLE_OUTPUT;
    ts[k]->ndim = ndim;
    for (int d = 0; d < ndim; d++)
      ts[k]->shape[d] = dims[d];
    ts[k]->numel = numel;
    ts[k]->nbytes = nbytes;
  }
  p->a.data = p->abuf;
  p->e.data = p->ebuf;
}

static void pair_free(pair *p) {
  free(p->abuf);
  free(p->ebuf);
}

static void set2(pair *p, size_t i, double actual, double expected) {
  st_tensor_set_f64(&p->a, i, actual);
  st_tensor_set_f64(&p->e, i, expected);
}

static st_status cmp(pair *p, double rtol, double atol, char *msg) {
  return st__compare_close(&p->a, &p->e, rtol, atol, msg, 512);
}

static void compare_close__message_format(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "out", ST_DTYPE_FLOAT32, 2, 4, 256, 0);
  for (size_t i = 0; i < 1024; i++)
    set2(&p, i, 2.0, 2.0);
  set2(&p, 5, 1.5, 2.0);
  set2(&p, 300, 2.25, 2.0);
  set2(&p, 1000, 1.875, 2.0);
  assert_int_equal(cmp(&p, 1.3e-6, 1e-5, msg), ST_EMISMATCH);
  assert_string_equal(msg, "tensor 'out': 3 of 1024 elements differ; first at "
                           "[0, 5]: actual 1.5, expected 2; max abs diff 0.5; "
                           "rtol 1.3e-06, atol 1e-05");
  pair_free(&p);
}

static void compare_close__first_index_is_multi_index(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "y", ST_DTYPE_FLOAT64, 2, 3, 4, 0);
  set2(&p, 6, 1.0, 0.0);
  set2(&p, 9, 1.0, 0.0);
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "2 of 12 elements differ; first at [1, 2]:"));
  pair_free(&p);

  pair_init(&p, "z", ST_DTYPE_INT32, 3, 2, 3, 4);
  set2(&p, 17, 5, 4);
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_string_equal(msg, "tensor 'z': 1 of 24 elements differ; first at "
                           "[1, 1, 1]: actual 5, expected 4; max abs diff "
                           "1; rtol 0, atol 0");
  pair_free(&p);
}

static void compare_close__nan_is_never_close(void **state) {
  (void)state;
  pair p;
  char msg[512];
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64,
                                 ST_DTYPE_FLOAT16, ST_DTYPE_BFLOAT16};
  for (size_t d = 0; d < 4; d++) {
    pair_init(&p, "n", dts[d], 1, 8, 0, 0);
    set2(&p, 2, NAN, 1.0); /* NaN in actual */
    assert_int_equal(cmp(&p, 1e300, 1e300, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "1 of 8 elements differ; first at [2]: "
                                "actual nan, expected 1; max abs diff nan"));
    set2(&p, 2, 1.0, NAN); /* NaN in expected */
    assert_int_equal(cmp(&p, 0.5, 0.5, msg), ST_EMISMATCH);
    set2(&p, 2, NAN, NAN); /* both: equal_nan=False */
    assert_int_equal(cmp(&p, 0.5, 0.5, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "1 of 8"));
    set2(&p, 2, 1.0, 1.0);
    assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
    pair_free(&p);
  }
}

static void compare_close__infinities(void **state) {
  (void)state;
  pair p;
  char msg[512];
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64,
                                 ST_DTYPE_FLOAT16};
  for (size_t d = 0; d < 3; d++) {
    pair_init(&p, "i", dts[d], 1, 4, 0, 0);
    set2(&p, 0, INFINITY, INFINITY);
    set2(&p, 1, -INFINITY, -INFINITY);
    assert_int_equal(cmp(&p, 1e-3, 1e-5, msg), ST_OK);
    assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
    /* Opposite infinities. */
    set2(&p, 1, INFINITY, -INFINITY);
    assert_int_equal(cmp(&p, 1e-3, 1e-5, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "first at [1]: actual inf, expected -inf"));
    /* A finite value against an infinity is not close although
     * rtol * |inf| is infinite: torch requires a finite difference. */
    set2(&p, 1, 1.0, INFINITY);
    assert_int_equal(cmp(&p, 1e-3, 1e-5, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "max abs diff inf"));
    set2(&p, 1, -INFINITY, 1.0);
    assert_int_equal(cmp(&p, 1e-3, 1e30, msg), ST_EMISMATCH);
    pair_free(&p);
  }
}

static void compare_close__empty_tensors(void **state) {
  (void)state;
  pair p;
  char msg[512] = "untouched";
  pair_init(&p, "e", ST_DTYPE_FLOAT32, 2, 0, 5, 0);
  p.a.data = NULL;
  p.e.data = NULL;
  assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
  assert_string_equal(msg, "");
  assert_int_equal(st__compare_exact(&p.a, &p.e, msg, 512), ST_OK);
  pair_free(&p);
}

static void compare_close__rtol_atol_boundaries(void **state) {
  (void)state;
  pair p;
  char msg[512];
  /* Powers of two keep the tolerance exact: 8 * 0.125 == 1. */
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64};
  for (size_t d = 0; d < 2; d++) {
    pair_init(&p, "b", dts[d], 1, 3, 0, 0);
    set2(&p, 1, 9.0, 8.0);
    assert_int_equal(cmp(&p, 0.125, 0, msg), ST_OK);
    set2(&p, 1, 7.0, 8.0);
    assert_int_equal(cmp(&p, 0.125, 0, msg), ST_OK);
    /* One ulp past the boundary (2^-20 is a float32 ulp at 9). */
    set2(&p, 1, 9.0 + 0x1p-20, 8.0);
    assert_int_equal(cmp(&p, 0.125, 0, msg), ST_EMISMATCH);
    /* rtol scales with the expected value, not the actual one. */
    set2(&p, 1, 8.0, 9.0);
    assert_int_equal(cmp(&p, 0.125, 0, msg), ST_OK);
    set2(&p, 1, 8.0, 7.0);
    assert_int_equal(cmp(&p, 0.125, 0, msg), ST_EMISMATCH);
    /* atol alone, and the two summed. */
    set2(&p, 1, 2.5, 2.0);
    assert_int_equal(cmp(&p, 0, 0.5, msg), ST_OK);
    set2(&p, 1, 2.5 + 0x1p-21, 2.0);
    assert_int_equal(cmp(&p, 0, 0.5, msg), ST_EMISMATCH);
    set2(&p, 1, 11.5, 8.0);
    assert_int_equal(cmp(&p, 0.25, 1.5, msg), ST_OK);
    set2(&p, 1, 11.5 + 0x1p-19, 8.0);
    assert_int_equal(cmp(&p, 0.25, 1.5, msg), ST_EMISMATCH);
    /* Zero tolerances: only equal values. */
    set2(&p, 1, 8.0, 8.0);
    assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
    set2(&p, 1, -0.0, 0.0);
    assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
    pair_free(&p);
  }
}

/* The float32 vectorized pre-pass must never call close what the double
 * rule calls a mismatch: random pairs straddling the boundary, counted
 * against the rule evaluated here in double. */
static void
compare_close__float32_fast_path_agrees_with_double_rule(void **state) {
  (void)state;
  enum { N = 100000 };
  pair p;
  char msg[512];
  pair_init(&p, "r", ST_DTYPE_FLOAT32, 1, N, 0, 0);
  float *a = p.a.data, *e = p.e.data;
  uint64_t s = 88172645463325252u;
  const double rtol = 1.3e-6, atol = 1e-5;
  size_t want = 0;
  for (size_t i = 0; i < N; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    const float y = (float)((double)(s >> 11) * 0x1p-53 * 200.0 - 100.0);
    const double tol = atol + rtol * fabs((double)y);
    /* Within a few float ulps of the boundary either side. */
    const int k = (int)((s >> 3) % 9) - 4;
    float x = (float)((double)y + tol);
    for (int j = 0; j < (k < 0 ? -k : k); j++)
      x = nextafterf(x, k < 0 ? -INFINITY : INFINITY);
    a[i] = x;
    e[i] = y;
    const double d = fabs((double)x - (double)y);
    want += !((double)x == (double)y || d <= tol);
  }
  assert_true(want > 1000 && want < N - 1000);
  assert_int_equal(cmp(&p, rtol, atol, msg), ST_EMISMATCH);
  char head[64];
  snprintf(head, sizeof head, "tensor 'r': %zu of %d elements", want, N);
  assert_non_null(strstr(msg, head));
  /* A tolerance just below a representable difference, that rounds up to
   * it in float32: the pre-pass must not accept it. */
  memset(a, 0, N * sizeof *a);
  memset(e, 0, N * sizeof *e);
  a[31] = 1.0f + 0x1p-23f;
  e[31] = 1.0f;
  assert_int_equal(cmp(&p, 0x1p-23 * (1.0 - 0x1p-30), 0, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "1 of 100000 elements differ; first at [31]"));
  assert_int_equal(cmp(&p, 0x1p-23, 0, msg), ST_OK);
  /* Subnormal expected values with atol 0: exact rule near underflow. */
  for (size_t i = 0; i < N; i++) {
    e[i] = (float)(i % 50) * 0x1p-149f;
    a[i] = e[i];
  }
  a[777] = nextafterf(e[777], INFINITY);
  /* rtol * |expected| underflows to 0 in float32 but not in double. */
  assert_int_equal(cmp(&p, 0.01, 0, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "1 of 100000 elements differ; first at [777]"));
  pair_free(&p);
}

/* Tensors above the split threshold (8 MiB) are checked in two halves on
 * two threads: a mismatch in either half, and at the seam, is found. */
static void compare_close__large_tensor_both_halves(void **state) {
  (void)state;
  enum { N = 3 << 20 }; /* 12 MiB of float32, 24 MiB of float64 */
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64};
  static const size_t where[] = {0, N / 2 - 1, N / 2, N / 2 + 1, N - 1};
  for (size_t d = 0; d < 2; d++) {
    pair p;
    char msg[512];
    pair_init(&p, "big", dts[d], 1, N, 0, 0);
    for (size_t i = 0; i < N; i++)
      set2(&p, i, (double)(i % 1000), (double)(i % 1000));
    assert_int_equal(cmp(&p, 1e-6, 1e-6, msg), ST_OK);
    for (size_t w = 0; w < sizeof where / sizeof where[0]; w++) {
      char head[96];
      st_tensor_set_f64(&p.a, where[w], -1.0);
      assert_int_equal(cmp(&p, 1e-6, 1e-6, msg), ST_EMISMATCH);
      snprintf(head, sizeof head, "1 of %d elements differ; first at [%zu]", N,
               where[w]);
      assert_non_null(strstr(msg, head));
      st_tensor_set_f64(&p.a, where[w], (double)(where[w] % 1000));
    }
    assert_int_equal(cmp(&p, 1e-6, 1e-6, msg), ST_OK);
    pair_free(&p);
  }
}

static void compare_close__integers_and_bool(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "k", ST_DTYPE_INT64, 1, 3, 0, 0);
  st_tensor_set_i64(&p.a, 0, INT64_C(9007199254740993));
  st_tensor_set_i64(&p.e, 0, INT64_C(9007199254740993));
  assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
  st_tensor_set_i64(&p.a, 2, -3);
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_string_equal(msg, "tensor 'k': 1 of 3 elements differ; first at "
                           "[2]: actual -3, expected 0; max abs diff 3; "
                           "rtol 0, atol 0");
  assert_int_equal(cmp(&p, 0, 3, msg), ST_OK);
  pair_free(&p);

  pair_init(&p, "u", ST_DTYPE_UINT8, 1, 4, 0, 0);
  st_tensor_set_i64(&p.a, 1, 200);
  st_tensor_set_i64(&p.e, 1, 100);
  assert_int_equal(cmp(&p, 0.5, 50, msg), ST_OK); /* 100 <= 50 + 50 */
  assert_int_equal(cmp(&p, 0.5, 49, msg), ST_EMISMATCH);
  pair_free(&p);

  pair_init(&p, "m", ST_DTYPE_BOOL, 1, 4, 0, 0);
  p.abuf[0] = 2; /* a non-canonical true */
  p.ebuf[0] = 1;
  assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
  p.ebuf[3] = 1;
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "first at [3]: actual 0, expected 1"));
  pair_free(&p);
}

/* docs/scene-format.md#compare: integers with rtol = atol = 0 compare as
 * integers, so neighbours beyond 2^53 (equal once rounded to double)
 * differ; uint64 prints and subtracts as unsigned. */
static void compare_close__integers_beyond_2_53_exact(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "k", ST_DTYPE_INT64, 1, 2, 0, 0);
  st_tensor_set_i64(&p.a, 1, INT64_C(9007199254740993));
  st_tensor_set_i64(&p.e, 1, INT64_C(9007199254740992));
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_string_equal(msg, "tensor 'k': 1 of 2 elements differ; first at "
                           "[1]: actual 9007199254740993, expected "
                           "9007199254740992; max abs diff 1; rtol 0, atol 0");
  st_tensor_set_i64(&p.a, 0, INT64_MIN);
  st_tensor_set_i64(&p.e, 0, INT64_MAX);
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "2 of 2 elements differ; first at [0]: actual "
                              "-9223372036854775808, expected "
                              "9223372036854775807; max abs diff "
                              "1.84467441e+19;"));
  pair_free(&p);

  pair_init(&p, "u", ST_DTYPE_UINT64, 1, 3, 0, 0);
  st_tensor_set_i64(&p.a, 2, (int64_t)UINT64_MAX);
  st_tensor_set_i64(&p.e, 2, (int64_t)(UINT64_MAX - 1));
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_string_equal(msg, "tensor 'u': 1 of 3 elements differ; first at "
                           "[2]: actual 18446744073709551615, expected "
                           "18446744073709551614; max abs diff 1; rtol 0, "
                           "atol 0");
  st_tensor_set_i64(&p.e, 2, (int64_t)UINT64_MAX);
  assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
  pair_free(&p);

  const st_dtype narrow[2] = {ST_DTYPE_UINT16, ST_DTYPE_UINT32};
  for (int k = 0; k < 2; k++) {
    pair_init(&p, "w", narrow[k], 1, 2, 0, 0);
    st_tensor_set_i64(&p.a, 0, 65535);
    st_tensor_set_i64(&p.e, 0, 65534);
    assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "actual 65535, expected 65534"));
    assert_int_equal(cmp(&p, 0, 1, msg), ST_OK);
    pair_free(&p);
  }
}

/* FP8: equal NaN bits are not close (no bytewise shortcut), equal numbers
 * are. */
static void compare_close__fp8_nan_bits_not_close(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "f", ST_DTYPE_FLOAT8_E4M3FN, 1, 2, 0, 0);
  p.abuf[0] = p.ebuf[0] = 0x38;
  p.abuf[1] = p.ebuf[1] = 0x7f;
  assert_int_equal(cmp(&p, 0.125, 0x1p-6, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "first at [1]: actual nan, expected nan"));
  assert_int_equal(
      st__compare_close_nan(&p.a, &p.e, 0.125, 0x1p-6, 1, msg, sizeof msg),
      ST_OK);
  pair_free(&p);
}

static void compare_close__float16_values(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "h", ST_DTYPE_FLOAT16, 1, 2, 0, 0);
  set2(&p, 0, 1.0, 1.0 + 0x1p-10); /* one half ulp apart */
  assert_int_equal(cmp(&p, 1e-3, 1e-5, msg), ST_OK);
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EMISMATCH);
  assert_non_null(strstr(msg, "actual 1, expected 1.00097656"));
  pair_free(&p);
}

/* docs/scene-format.md#compare equal_nan, as
 * torch.testing.assert_close(equal_nan=True): NaN against NaN is close
 * (whatever the payload), NaN against a number or an infinity still is not; on
 * every float dtype, and over a tensor large enough that float32/float64 take
 * the vectorized pass first. */
static void compare_close__equal_nan(void **state) {
  (void)state;
  pair p;
  char msg[512];
  static const st_dtype dts[] = {ST_DTYPE_FLOAT16, ST_DTYPE_BFLOAT16,
                                 ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64};
  for (size_t d = 0; d < 4; d++) {
    pair_init(&p, "n", dts[d], 1, 4099, 0, 0);
    for (size_t i = 0; i < 4099; i++)
      set2(&p, i, 0.5, 0.5);
    set2(&p, 7, NAN, NAN);
    set2(&p, 4098, -NAN, NAN);
    assert_int_equal(st__compare_close_nan(&p.a, &p.e, 0, 0, 1, msg, 512),
                     ST_OK);
    assert_int_equal(st__compare_close_nan(&p.a, &p.e, 0, 0, 0, msg, 512),
                     ST_EMISMATCH);
    assert_non_null(strstr(msg, "2 of 4099 elements differ; first at [7]"));
    set2(&p, 100, NAN, 1.0);
    set2(&p, 200, 1.0, NAN);
    set2(&p, 300, NAN, INFINITY);
    assert_int_equal(st__compare_close_nan(&p.a, &p.e, 1, 1, 1, msg, 512),
                     ST_EMISMATCH);
    assert_non_null(strstr(msg, "3 of 4099 elements differ; first at [100]: "
                                "actual nan, expected 1"));
    pair_free(&p);
  }
}

static void compare_close__layout_mismatch(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "s", ST_DTYPE_FLOAT32, 2, 2, 3, 0);
  p.a.shape[0] = 3;
  p.a.shape[1] = 2;
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EINVAL);
  assert_non_null(strstr(msg, "tensor 's'"));
  p.a.shape[0] = 2;
  p.a.shape[1] = 3;
  p.a.dtype = ST_DTYPE_INT32;
  assert_int_equal(cmp(&p, 0, 0, msg), ST_EINVAL);
  pair_free(&p);
}

static void compare_exact__single_flipped_bit(void **state) {
  (void)state;
  pair p;
  char msg[512];
  pair_init(&p, "a", ST_DTYPE_FLOAT32, 2, 2, 3, 0);
  for (size_t i = 0; i < 6; i++)
    set2(&p, i, (double)i * 0.5, (double)i * 0.5);
  assert_int_equal(st__compare_exact(&p.a, &p.e, msg, sizeof msg), ST_OK);
  p.abuf[4 * 4 + 1] ^= 0x08; /* element 4 = [1, 1] */
  assert_int_equal(st__compare_exact(&p.a, &p.e, msg, sizeof msg),
                   ST_EMISMATCH);
  assert_string_equal(msg, "input 'a' was modified by the kernel: 1 of 24 "
                           "bytes differ; first at element [1, 1]");
  /* A NaN left in place is not a modification (bytes, not values). */
  p.abuf[4 * 4 + 1] ^= 0x08;
  set2(&p, 0, NAN, NAN);
  assert_int_equal(st__compare_exact(&p.a, &p.e, msg, sizeof msg), ST_OK);
  /* -0.0 for 0.0 is. */
  st_tensor_set_f64(&p.a, 5, -2.5);
  st_tensor_set_f64(&p.e, 5, 2.5);
  assert_int_equal(st__compare_exact(&p.a, &p.e, msg, sizeof msg),
                   ST_EMISMATCH);
  assert_non_null(strstr(msg, "first at element [1, 2]"));
  pair_free(&p);
}

static void format_index__shapes(void **state) {
  (void)state;
  st_tensor t;
  char buf[64];
  memset(&t, 0, sizeof t);
  t.ndim = 0;
  st__format_index(&t, 0, buf, sizeof buf);
  assert_string_equal(buf, "[]");
  t.ndim = 1;
  t.shape[0] = 7;
  st__format_index(&t, 6, buf, sizeof buf);
  assert_string_equal(buf, "[6]");
  t.ndim = 4;
  t.shape[0] = 2;
  t.shape[1] = 3;
  t.shape[2] = 4;
  t.shape[3] = 5;
  st__format_index(&t, 119, buf, sizeof buf);
  assert_string_equal(buf, "[1, 2, 3, 4]");
  st__format_index(&t, 119, buf, 5); /* truncated, still terminated */
  assert_string_equal(buf, "[1, ");
}

/* The all-close pass skips a block whose bits equal the expected's only
 * when it holds no NaN: for float32 and float64, over more than one block
 * (256 elements) plus a tail, identical tensors pass; the same NaN bits on
 * both sides (a NaN of any payload, the poison's included) still fail
 * without equal_nan and pass with it; equal infinities pass; -0.0 against
 * 0.0 passes (bits differ, values equal); one element beyond tolerance in
 * the last, partial block after equal blocks fails at its index, and one
 * within tolerance there passes. */
static void compare_close__equal_bits_blocks(void **state) {
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64};
  (void)state;
  for (size_t k = 0; k < 2; k++) {
    pair p;
    char msg[512];
    const size_t n = 3 * 256 + 37;
    pair_init(&p, "out", dts[k], 1, (int64_t)n, 0, 0);
    for (size_t i = 0; i < n; i++)
      set2(&p, i, (double)i * 0.25 - 7.0, (double)i * 0.25 - 7.0);
    assert_int_equal(cmp(&p, 1e-5, 1e-8, msg), ST_OK);
    /* The same NaN bits both sides, in the middle block. */
    if (dts[k] == ST_DTYPE_FLOAT32) {
      const uint32_t nan = UINT32_C(0x7FE5A5A5);
      memcpy(p.abuf + 300 * 4, &nan, 4);
      memcpy(p.ebuf + 300 * 4, &nan, 4);
    } else {
      const uint64_t nan = UINT64_C(0x7FFDA5A5A5A5A5A5);
      memcpy(p.abuf + 300 * 8, &nan, 8);
      memcpy(p.ebuf + 300 * 8, &nan, 8);
    }
    assert_int_equal(cmp(&p, 1e-5, 1e-8, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "1 of 805 elements differ; first at [300]"));
    assert_int_equal(
        st__compare_close_nan(&p.a, &p.e, 1e-5, 1e-8, 1, msg, sizeof msg),
        ST_OK);
    set2(&p, 300, INFINITY, INFINITY);
    set2(&p, 301, -INFINITY, -INFINITY);
    set2(&p, 302, -0.0, 0.0);
    assert_int_equal(cmp(&p, 0, 0, msg), ST_OK);
    /* After three equal blocks, in the tail. */
    set2(&p, n - 2, 1.0 + 1e-3, 1.0);
    assert_int_equal(cmp(&p, 1e-5, 1e-8, msg), ST_EMISMATCH);
    assert_non_null(strstr(msg, "1 of 805 elements differ; first at [803]"));
    set2(&p, n - 2, 1.0 + 1e-7, 1.0);
    assert_int_equal(cmp(&p, 1e-5, 1e-8, msg), ST_OK);
    pair_free(&p);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(compare_close__message_format),
      cmocka_unit_test(compare_close__first_index_is_multi_index),
      cmocka_unit_test(compare_close__nan_is_never_close),
      cmocka_unit_test(compare_close__infinities),
      cmocka_unit_test(compare_close__empty_tensors),
      cmocka_unit_test(compare_close__rtol_atol_boundaries),
      cmocka_unit_test(
          compare_close__float32_fast_path_agrees_with_double_rule),
      cmocka_unit_test(compare_close__large_tensor_both_halves),
      cmocka_unit_test(compare_close__integers_and_bool),
      cmocka_unit_test(compare_close__integers_beyond_2_53_exact),
      cmocka_unit_test(compare_close__fp8_nan_bits_not_close),
      cmocka_unit_test(compare_close__float16_values),
      cmocka_unit_test(compare_close__equal_nan),
      cmocka_unit_test(compare_close__equal_bits_blocks),
      cmocka_unit_test(compare_close__layout_mismatch),
      cmocka_unit_test(compare_exact__single_flipped_bit),
      cmocka_unit_test(format_index__shapes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
