/* SPDX-License-Identifier: MIT */
/* Tests for harness/base/dtype.c: dtype names and sizes, half and bfloat16
 * conversions (round-to-nearest-even ties, subnormals, overflow, inf, NaN,
 * single rounding from double, exhaustive round trips) and tensor element
 * access with integer wrap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <string.h>

#include <scenetest/tensor.h>

#include "base/dtype.h"

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static int f16_is_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0;
}

static int bf16_is_nan(uint16_t h) {
  return (h & 0x7f80u) == 0x7f80u && (h & 0x007fu) != 0;
}

static void dtype_name__every_dtype_round_trips(void **state) {
  (void)state;
  static const char *names[] = {
      "float32", "float64", "float16", "bfloat16",      "int8",
      "int16",   "int32",   "int64",   "uint8",         "bool",
      "uint16",  "uint32",  "uint64",  "float8_e4m3fn", "float8_e5m2"};
  static const size_t sizes[] = {4, 8, 2, 2, 1, 2, 4, 8, 1, 1, 2, 4, 8, 1, 1};
  assert_int_equal(ST_DTYPE_COUNT, 15);
  for (int d = 0; d < ST_DTYPE_COUNT; d++) {
    st_dtype parsed = ST_DTYPE_COUNT;
    assert_string_equal(st_dtype_name((st_dtype)d), names[d]);
    assert_int_equal(st_dtype_size((st_dtype)d), sizes[d]);
    assert_int_equal(st_dtype_parse(names[d], &parsed), ST_OK);
    assert_int_equal(parsed, d);
    assert_int_equal(st_dtype_is_float((st_dtype)d),
                     d <= ST_DTYPE_BFLOAT16 || d >= ST_DTYPE_FLOAT8_E4M3FN);
  }
}

static void dtype_parse__unknown_name(void **state) {
  (void)state;
  st_dtype d = ST_DTYPE_INT8;
  assert_int_equal(st_dtype_parse("float", &d), ST_ENOTFOUND);
  assert_int_equal(st_dtype_parse("Float32", &d), ST_ENOTFOUND);
  assert_int_equal(st_dtype_parse("", &d), ST_ENOTFOUND);
  assert_int_equal(st_dtype_parse(NULL, &d), ST_ENOTFOUND);
  assert_int_equal(d, ST_DTYPE_INT8);
  assert_null(st_dtype_name(ST_DTYPE_COUNT));
  assert_int_equal(st_dtype_size(ST_DTYPE_COUNT), 0);
}

static void f64_to_f16__exact_values(void **state) {
  (void)state;
  assert_int_equal(st_f64_to_f16(0.0), 0x0000);
  assert_int_equal(st_f64_to_f16(-0.0), 0x8000);
  assert_int_equal(st_f64_to_f16(1.0), 0x3c00);
  assert_int_equal(st_f64_to_f16(-2.0), 0xc000);
  assert_int_equal(st_f64_to_f16(0.5), 0x3800);
  assert_int_equal(st_f64_to_f16(65504.0), 0x7bff);
  assert_int_equal(st_f64_to_f16(0x1p-14), 0x0400); /* smallest normal */
}

static void f64_to_f16__ties_round_to_even(void **state) {
  (void)state;
  /* Halfway between 1 and 1 + 2^-10: down to the even 1. */
  assert_int_equal(st_f64_to_f16(1.0 + 0x1p-11), 0x3c00);
  /* Halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up to the even one. */
  assert_int_equal(st_f64_to_f16(1.0 + 3 * 0x1p-11), 0x3c02);
  /* Just above and below a tie. */
  assert_int_equal(st_f64_to_f16(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  assert_int_equal(st_f64_to_f16(1.0 + 0x1p-11 - 0x1p-40), 0x3c00);
  assert_int_equal(st_f64_to_f16(-(1.0 + 3 * 0x1p-11)), 0xbc02);
}

static void f64_to_f16__rounds_once_not_via_float(void **state) {
  (void)state;
  /* Just above a half tie, but within float precision of it: rounding to
   * float first lands exactly on the tie, which then goes to even (down).
   * One rounding from the double goes up. */
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  assert_int_equal(st_f32_to_f16((float)d), 0x3c00);
  assert_int_equal(st_f64_to_f16(d), 0x3c01);
  const double b = 1.0 + 0x1p-8 + 0x1p-40;
  assert_int_equal(st_f32_to_bf16((float)b), 0x3f80);
  assert_int_equal(st_f64_to_bf16(b), 0x3f81);
}

static void f64_to_f16__subnormals(void **state) {
  (void)state;
  assert_int_equal(st_f64_to_f16(0x1p-24), 0x0001); /* smallest subnormal */
  assert_int_equal(st_f64_to_f16(0x1p-25), 0x0000); /* tie -> even 0 */
  assert_int_equal(st_f64_to_f16(-0x1p-25), 0x8000);
  assert_int_equal(st_f64_to_f16(0x1p-25 * 1.0000001), 0x0001);
  assert_int_equal(st_f64_to_f16(3 * 0x1p-25), 0x0002); /* tie -> even 2 */
  assert_int_equal(st_f64_to_f16(1023 * 0x1p-24), 0x03ff);
  /* A tie between the largest subnormal and the smallest normal. */
  assert_int_equal(st_f64_to_f16(1023.5 * 0x1p-24), 0x0400);
  assert_int_equal(st_f64_to_f16(0x1p-30), 0x0000);
  assert_int_equal(st_f64_to_f16(DBL_MIN), 0x0000);
  assert_int_equal(st_f64_to_f16(5e-324), 0x0000);
  assert_true(st_f16_to_f32(0x0001) == 0x1p-24f);
  assert_true(st_f16_to_f32(0x83ff) == -1023 * 0x1p-24f);
}

static void f64_to_f16__overflow_inf_nan(void **state) {
  (void)state;
  /* 65520 is the tie between 65504 and 65536 (not representable): even
   * goes up to infinity, as IEEE and torch do. */
  assert_int_equal(st_f64_to_f16(65519.99), 0x7bff);
  assert_int_equal(st_f64_to_f16(65520.0), 0x7c00);
  assert_int_equal(st_f64_to_f16(1e10), 0x7c00);
  assert_int_equal(st_f64_to_f16(-1e300), 0xfc00);
  assert_int_equal(st_f64_to_f16(INFINITY), 0x7c00);
  assert_int_equal(st_f64_to_f16(-INFINITY), 0xfc00);
  const uint16_t n = st_f64_to_f16(NAN);
  assert_true(f16_is_nan(n));
  assert_true(n & 0x0200u);                  /* quiet */
  assert_true(isnan(st_f16_to_f32(0x7c01))); /* signalling in, NaN out */
  assert_true(f32_bits(st_f16_to_f32(0x7c01)) & 0x00400000u);
  assert_true(isinf(st_f16_to_f32(0xfc00)) && st_f16_to_f32(0xfc00) < 0);
}

static void f16_round_trip__all_65536_patterns(void **state) {
  (void)state;
  for (uint32_t h = 0; h <= 0xffffu; h++) {
    const float f = st_f16_to_f32((uint16_t)h);
    const uint16_t back = st_f32_to_f16(f);
    const uint16_t back64 = st_f64_to_f16((double)f);
    if (f16_is_nan((uint16_t)h)) {
      assert_true(isnan(f));
      assert_true(f16_is_nan(back));
      assert_int_equal(back & 0x8000u, h & 0x8000u);
      /* A quiet NaN keeps its payload exactly. */
      if (h & 0x0200u)
        assert_int_equal(back, h);
    } else {
      assert_int_equal(back, h);
      assert_int_equal(back64, h);
      /* The decoded value is the IEEE one. */
      const unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
      double want = e == 31  ? INFINITY
                    : e == 0 ? ldexp(m, -24)
                             : ldexp(1024 + m, (int)e - 25);
      if (h & 0x8000u)
        want = -want;
      assert_true((double)f == want);
    }
  }
}

static void bf16_round_trip__all_65536_patterns(void **state) {
  (void)state;
  for (uint32_t h = 0; h <= 0xffffu; h++) {
    const float f = st_bf16_to_f32((uint16_t)h);
    const uint16_t back = st_f32_to_bf16(f);
    if (bf16_is_nan((uint16_t)h)) {
      assert_true(isnan(f));
      assert_true(bf16_is_nan(back));
      if (h & 0x0040u)
        assert_int_equal(back, h);
    } else {
      assert_int_equal(f32_bits(f), h << 16);
      assert_int_equal(back, h);
    }
  }
}

static void f32_to_bf16__rounding_and_limits(void **state) {
  (void)state;
  assert_int_equal(st_f32_to_bf16(1.0f), 0x3f80);
  assert_int_equal(st_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);     /* tie */
  assert_int_equal(st_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82); /* tie */
  assert_int_equal(st_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  /* FLT_MAX is above the tie below 2^128: infinity. */
  assert_int_equal(st_f32_to_bf16(FLT_MAX), 0x7f80);
  assert_int_equal(st_f64_to_bf16(3.3895313892515355e38), 0x7f7f);
  assert_int_equal(st_f64_to_bf16(1e39), 0x7f80);
  assert_int_equal(st_f64_to_bf16(0x1p-133), 0x0001); /* smallest subnormal */
  assert_int_equal(st_f64_to_bf16(0x1p-134), 0x0000); /* tie -> 0 */
  assert_int_equal(st_f64_to_bf16(-0x1p-126), 0x8080);
  assert_true(bf16_is_nan(st_f32_to_bf16(NAN)));
  assert_true(st_f32_to_bf16(NAN) & 0x0040u);
  assert_int_equal(st_f32_to_bf16(-INFINITY), 0xff80);
}

static st_tensor one_elem(st_dtype dtype, void *buf) {
  st_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "t";
  t.dtype = dtype;
  t.ndim = 1;
  t.shape[0] = 1;
  t.numel = 1;
  t.nbytes = st_dtype_size(dtype);
  t.data = buf;
  return t;
}

static void tensor_set_i64__integers_wrap(void **state) {
  (void)state;
  unsigned char buf[8];
  st_tensor t = one_elem(ST_DTYPE_INT8, buf);
  st_tensor_set_i64(&t, 0, 200);
  assert_int_equal(st_tensor_get_i64(&t, 0), -56);
  st_tensor_set_i64(&t, 0, -129);
  assert_int_equal(st_tensor_get_i64(&t, 0), 127);
  t = one_elem(ST_DTYPE_UINT8, buf);
  st_tensor_set_i64(&t, 0, -1);
  assert_int_equal(st_tensor_get_i64(&t, 0), 255);
  st_tensor_set_i64(&t, 0, 300);
  assert_int_equal(st_tensor_get_i64(&t, 0), 44);
  t = one_elem(ST_DTYPE_INT16, buf);
  st_tensor_set_i64(&t, 0, 40000);
  assert_int_equal(st_tensor_get_i64(&t, 0), -25536);
  t = one_elem(ST_DTYPE_INT32, buf);
  st_tensor_set_i64(&t, 0, INT64_C(0x100000005));
  assert_int_equal(st_tensor_get_i64(&t, 0), 5);
  st_tensor_set_i64(&t, 0, INT64_C(2147483648));
  assert_int_equal(st_tensor_get_i64(&t, 0), INT32_MIN);
  t = one_elem(ST_DTYPE_INT64, buf);
  st_tensor_set_i64(&t, 0, INT64_MIN);
  assert_true(st_tensor_get_i64(&t, 0) == INT64_MIN);
  t = one_elem(ST_DTYPE_BOOL, buf);
  st_tensor_set_i64(&t, 0, 256); /* not wrapped: bool stores v != 0 */
  assert_int_equal(buf[0], 1);
  st_tensor_set_i64(&t, 0, 0);
  assert_int_equal(buf[0], 0);
}

static void tensor_set_f64__integers_truncate_and_wrap(void **state) {
  (void)state;
  unsigned char buf[8];
  st_tensor t = one_elem(ST_DTYPE_INT8, buf);
  st_tensor_set_f64(&t, 0, 3.7);
  assert_int_equal(st_tensor_get_i64(&t, 0), 3);
  st_tensor_set_f64(&t, 0, -3.7);
  assert_int_equal(st_tensor_get_i64(&t, 0), -3);
  st_tensor_set_f64(&t, 0, NAN);
  assert_int_equal(st_tensor_get_i64(&t, 0), 0);
  t = one_elem(ST_DTYPE_UINT8, buf);
  st_tensor_set_f64(&t, 0, 300.0);
  assert_int_equal(st_tensor_get_i64(&t, 0), 44);
  st_tensor_set_f64(&t, 0, -1.0);
  assert_int_equal(st_tensor_get_i64(&t, 0), 255);
  t = one_elem(ST_DTYPE_INT64, buf);
  st_tensor_set_f64(&t, 0, 0x1p64 + 0x1p12); /* wraps to 2^12 */
  assert_int_equal(st_tensor_get_i64(&t, 0), 4096);
  st_tensor_set_f64(&t, 0, -0x1p63);
  assert_true(st_tensor_get_i64(&t, 0) == INT64_MIN);
  t = one_elem(ST_DTYPE_BOOL, buf);
  st_tensor_set_f64(&t, 0, 0.25);
  assert_int_equal(buf[0], 1);
  st_tensor_set_f64(&t, 0, -0.0);
  assert_int_equal(buf[0], 0);
  st_tensor_set_f64(&t, 0, NAN);
  assert_int_equal(buf[0], 1);
  buf[0] = 7; /* a non-canonical true byte reads as 1 */
  assert_int_equal(st_tensor_get_i64(&t, 0), 1);
  assert_true(st_tensor_get_f64(&t, 0) == 1.0);
}

static void tensor_set_f64__floats_round_once(void **state) {
  (void)state;
  unsigned char buf[8];
  st_tensor t = one_elem(ST_DTYPE_FLOAT16, buf);
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  st_tensor_set_f64(&t, 0, d);
  assert_true(st_tensor_get_f64(&t, 0) == 1.0 + 0x1p-10);
  t = one_elem(ST_DTYPE_BFLOAT16, buf);
  st_tensor_set_f64(&t, 0, 0.1);
  assert_true(st_tensor_get_f64(&t, 0) == (double)st_bf16_to_f32(0x3dcd));
  t = one_elem(ST_DTYPE_FLOAT32, buf);
  st_tensor_set_f64(&t, 0, 0.1);
  assert_true(st_tensor_get_f64(&t, 0) == (double)0.1f);
  t = one_elem(ST_DTYPE_FLOAT64, buf);
  st_tensor_set_f64(&t, 0, 0.1);
  assert_true(st_tensor_get_f64(&t, 0) == 0.1);
  assert_int_equal(st_tensor_get_i64(&t, 0), 0);
}

static void tensor_set_i64__large_ints_round_once(void **state) {
  (void)state;
  unsigned char buf[8];
  /* 2^62 + 2^54 + 1 is just above a bfloat16 tie; via double it would
   * land exactly on the tie and round down to even. */
  const int64_t v = (INT64_C(1) << 62) + (INT64_C(1) << 54) + 1;
  st_tensor t = one_elem(ST_DTYPE_BFLOAT16, buf);
  st_tensor_set_i64(&t, 0, v);
  uint16_t h;
  memcpy(&h, buf, 2);
  assert_int_equal(h, 0x5e81);
  assert_int_equal(st_f64_to_bf16((double)v), 0x5e80);
  st_tensor_set_i64(&t, 0, -v);
  memcpy(&h, buf, 2);
  assert_int_equal(h, 0xde81);
  t = one_elem(ST_DTYPE_FLOAT16, buf);
  st_tensor_set_i64(&t, 0, 70000);
  memcpy(&h, buf, 2);
  assert_int_equal(h, 0x7c00);
  t = one_elem(ST_DTYPE_FLOAT32, buf);
  st_tensor_set_i64(&t, 0, (INT64_C(1) << 40) + (INT64_C(1) << 16) + 1);
  assert_true(st_tensor_get_f64(&t, 0) == 0x1p40 + 0x1p17);
}

/* The one element-access implementation's rules for values a dtype cannot
 * hold (kernels, fills and compares all go through it): a bool stores
 * v != 0, so NaN and 0.5 are true, as Python's bool() says; an integer
 * stores the value truncated toward zero and wrapped modulo 2^N; NaN and
 * the infinities, which have no integer value, store 0. */
static void tensor_set_f64__bool_is_nonzero(void **state) {
  (void)state;
  unsigned char buf[8];
  st_tensor t = one_elem(ST_DTYPE_BOOL, buf);
  const double trues[] = {0.5, -0.5, NAN, -INFINITY, 0x1p-1074};
  for (size_t i = 0; i < sizeof trues / sizeof trues[0]; i++) {
    buf[0] = 0;
    st_tensor_set_f64(&t, 0, trues[i]);
    assert_int_equal(buf[0], 1);
  }
  st_tensor_set_f64(&t, 0, 0.0);
  assert_int_equal(buf[0], 0);
}

static void tensor_set_f64__out_of_range_ints_wrap(void **state) {
  (void)state;
  unsigned char buf[8];
  st_tensor t = one_elem(ST_DTYPE_INT32, buf);
  st_tensor_set_f64(&t, 0, 0x1p32 + 5.0);
  assert_int_equal(st_tensor_get_i64(&t, 0), 5);
  st_tensor_set_f64(&t, 0, -0x1p31 - 1.0);
  assert_int_equal(st_tensor_get_i64(&t, 0), INT32_MAX);
  t = one_elem(ST_DTYPE_INT16, buf);
  st_tensor_set_f64(&t, 0, 65535.9); /* truncated to 65535, then wrapped */
  assert_int_equal(st_tensor_get_i64(&t, 0), -1);
  t = one_elem(ST_DTYPE_INT64, buf);
  st_tensor_set_f64(&t, 0, 1e30); /* 1e30 mod 2^64, from Python's int */
  assert_true(st_tensor_get_i64(&t, 0) == INT64_C(5076964154930102272));
  st_tensor_set_f64(&t, 0, INFINITY);
  assert_int_equal(st_tensor_get_i64(&t, 0), 0);
  st_tensor_set_f64(&t, 0, -INFINITY);
  assert_int_equal(st_tensor_get_i64(&t, 0), 0);
  t = one_elem(ST_DTYPE_UINT8, buf);
  st_tensor_set_f64(&t, 0, NAN);
  assert_int_equal(st_tensor_get_i64(&t, 0), 0);
}

/* The backends' transpose picks a kernel by element size and has none for
 * sizes other than these. */
static void dtype_size__every_dtype_is_1_2_4_or_8(void **state) {
  (void)state;
  for (int d = 0; d < ST_DTYPE_COUNT; d++) {
    size_t size = st_dtype_size((st_dtype)d);
    assert_true(size == 1 || size == 2 || size == 4 || size == 8);
  }
  assert_int_equal(st_dtype_size(ST_DTYPE_COUNT), 0);
}

static void dtype_is_int__integer_dtypes_only(void **state) {
  (void)state;
  int n = 0;
  for (int d = 0; d < ST_DTYPE_COUNT; d++)
    n += st__dtype_is_int((st_dtype)d);
  assert_int_equal(n, 8);
  assert_true(
      st__dtype_is_int(ST_DTYPE_INT8) && st__dtype_is_int(ST_DTYPE_INT16) &&
      st__dtype_is_int(ST_DTYPE_INT32) && st__dtype_is_int(ST_DTYPE_INT64) &&
      st__dtype_is_int(ST_DTYPE_UINT8) && st__dtype_is_int(ST_DTYPE_UINT16) &&
      st__dtype_is_int(ST_DTYPE_UINT32) && st__dtype_is_int(ST_DTYPE_UINT64));
  assert_false(st__dtype_is_int(ST_DTYPE_FLOAT8_E4M3FN));
  assert_false(st__dtype_is_int(ST_DTYPE_BOOL));
  assert_false(st__dtype_is_int(ST_DTYPE_FLOAT16));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dtype_name__every_dtype_round_trips),
      cmocka_unit_test(dtype_parse__unknown_name),
      cmocka_unit_test(f64_to_f16__exact_values),
      cmocka_unit_test(f64_to_f16__ties_round_to_even),
      cmocka_unit_test(f64_to_f16__rounds_once_not_via_float),
      cmocka_unit_test(f64_to_f16__subnormals),
      cmocka_unit_test(f64_to_f16__overflow_inf_nan),
      cmocka_unit_test(f16_round_trip__all_65536_patterns),
      cmocka_unit_test(bf16_round_trip__all_65536_patterns),
      cmocka_unit_test(f32_to_bf16__rounding_and_limits),
      cmocka_unit_test(tensor_set_i64__integers_wrap),
      cmocka_unit_test(tensor_set_f64__integers_truncate_and_wrap),
      cmocka_unit_test(tensor_set_f64__floats_round_once),
      cmocka_unit_test(tensor_set_i64__large_ints_round_once),
      cmocka_unit_test(tensor_set_f64__bool_is_nonzero),
      cmocka_unit_test(tensor_set_f64__out_of_range_ints_wrap),
      cmocka_unit_test(dtype_size__every_dtype_is_1_2_4_or_8),
      cmocka_unit_test(dtype_is_int__integer_dtypes_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
