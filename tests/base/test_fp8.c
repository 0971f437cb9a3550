/* SPDX-License-Identifier: MIT */
/* Tests for the FP8 dtypes (docs/scene-format.md#dtypes): base/fp8.c's
 * conversions against tests/fixtures/fp8_tables.txt (all 256 patterns of
 * each type decoded, and torch's cast of a set of float32 probes: ties,
 * their neighbours, overflow, infinities, NaNs, zeros, subnormals), one
 * rounding from double, e4m3fn's saturating form; and what the harness
 * does with FP8 tensors: the default tolerances, random inits (e4m3fn
 * saturates, e5m2 overflows to infinity), the poison and its NaN rule,
 * and .npy dumps as float32. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fp8.h"
#include "case/fill.h"
#include "case/npy.h"
#include "case/poison.h"
#include "scene/scene.h"

#define TABLES ST_SOURCE_ROOT "/tests/fixtures/fp8_tables.txt"

typedef uint8_t (*encode_fn)(double);
typedef double (*decode_fn)(uint8_t);

static int type_fns(const char *name, encode_fn *enc, decode_fn *dec) {
  if (strcmp(name, "float8_e4m3fn") == 0) {
    *enc = st_f64_to_e4m3fn;
    *dec = st_e4m3fn_to_f64;
    return 1;
  }
  if (strcmp(name, "float8_e5m2") == 0) {
    *enc = st_f64_to_e5m2;
    *dec = st_e5m2_to_f64;
    return 1;
  }
  return 0;
}

static float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Reads the fixture; checks every line of kind `what` and returns how
 * many it checked, per type in n[0] (e4m3fn) and n[1] (e5m2). */
static void check_tables(const char *what, size_t n[2]) {
  FILE *f = fopen(TABLES, "r");
  char line[256];
  assert_non_null(f);
  n[0] = n[1] = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    char kind[16], type[32], a[64], b[64];
    encode_fn enc = NULL;
    decode_fn dec = NULL;
    if (line[0] == '#')
      continue;
    assert_int_equal(sscanf(line, "%15s %31s %63s %63s", kind, type, a, b), 4);
    assert_true(type_fns(type, &enc, &dec));
    if (strcmp(kind, what) != 0)
      continue;
    n[strcmp(type, "float8_e5m2") == 0]++;
    if (strcmp(kind, "decode") == 0) {
      const uint8_t byte = (uint8_t)strtoul(a, NULL, 16);
      const double want = strtod(b, NULL), got = dec(byte);
      if (isnan(want)) {
        if (!isnan(got))
          fail_msg("%s: decode 0x%02x gave %a, want NaN", type, byte, got);
      } else if (got != want || signbit(got) != signbit(want)) {
        fail_msg("%s: decode 0x%02x gave %a, want %a", type, byte, got, want);
      }
    } else {
      const uint32_t bits = (uint32_t)strtoul(a, NULL, 16);
      const uint8_t want = (uint8_t)strtoul(b, NULL, 16);
      const double x = (double)f32_from_bits(bits);
      const uint8_t got = enc(x);
      if (got != want)
        fail_msg("%s: encode %a (0x%08x) gave 0x%02x, want 0x%02x", type, x,
                 bits, got, want);
    }
  }
  fclose(f);
}

/* The fixture says which generator made it and the exact command. */
static void fp8_tables__header_names_generator_and_command(void **state) {
  FILE *f = fopen(TABLES, "r");
  char line[512];
  int generator = 0, command = 0;
  (void)state;
  assert_non_null(f);
  while (fgets(line, sizeof line, f) != NULL && line[0] == '#') {
    generator |= strncmp(line, "# generator: ", 13) == 0;
    command |= strcmp(line, "# command: python3 tests/fixtures/gen_fp8.py > "
                            "tests/fixtures/fp8_tables.txt\n") == 0;
  }
  fclose(f);
  assert_true(generator);
  assert_true(command);
}

static void fp8_decode__every_pattern_matches_fixture(void **state) {
  size_t n[2];
  (void)state;
  check_tables("decode", n);
  assert_int_equal(n[0], 256);
  assert_int_equal(n[1], 256);
}

static void fp8_encode__probes_match_fixture(void **state) {
  size_t n[2];
  (void)state;
  check_tables("encode", n);
  assert_true(n[0] > 500);
  assert_true(n[1] > 400);
}

/* Every non-NaN pattern is its own value's encoding. */
static void fp8_encode__round_trips_every_pattern(void **state) {
  (void)state;
  for (unsigned b = 0; b < 256; b++) {
    const double x = st_e4m3fn_to_f64((uint8_t)b);
    const double y = st_e5m2_to_f64((uint8_t)b);
    if (!isnan(x))
      assert_int_equal(st_f64_to_e4m3fn(x), b);
    if (!isnan(y))
      assert_int_equal(st_f64_to_e5m2(y), b);
  }
}

/* torch casts from float32; a double is rounded once here: 1.0625 is the
 * tie between 1 (0x38) and 1.125 (0x39), and 1.0625 + 2^-40, which
 * float32 would round to the tie (and so to the even 0x38), is above it. */
static void fp8_encode__rounds_once_from_double(void **state) {
  (void)state;
  assert_int_equal(st_f64_to_e4m3fn(1.0625), 0x38);
  assert_int_equal(st_f64_to_e4m3fn(1.0625 + 0x1p-40), 0x39);
  assert_int_equal(st_f64_to_e4m3fn(-(1.0625 + 0x1p-40)), 0xb9);
  /* e5m2: 1.125 is the tie between 1 (0x3c) and 1.25 (0x3d). */
  assert_int_equal(st_f64_to_e5m2(1.125), 0x3c);
  assert_int_equal(st_f64_to_e5m2(1.125 + 0x1p-40), 0x3d);
  /* Far below half the smallest subnormal: signed zero. */
  assert_int_equal(st_f64_to_e4m3fn(0x1p-1000), 0x00);
  assert_int_equal(st_f64_to_e5m2(-0x1p-1000), 0x80);
}

/* The range rules: e4m3fn's NaN past 464 and the saturating form the
 * random inits use; e5m2's infinity from 61440 (the tie above 57344 goes
 * to the even pattern, infinity). */
static void fp8_encode__overflow_nan_and_saturation(void **state) {
  (void)state;
  assert_int_equal(st_f64_to_e4m3fn(448.0), 0x7e);
  assert_int_equal(st_f64_to_e4m3fn(464.0), 0x7e);
  assert_int_equal(st_f64_to_e4m3fn(464.0 + 0x1p-40), 0x7f);
  assert_int_equal(st_f64_to_e4m3fn(-1e300), 0xff);
  assert_int_equal(st_f64_to_e4m3fn(INFINITY), 0x7f);
  assert_int_equal(st_f64_to_e4m3fn(NAN), 0x7f);
  assert_int_equal(st_f64_to_e4m3fn(-NAN), 0xff);
  assert_int_equal(st__f64_to_e4m3fn_sat(464.0 + 0x1p-40), 0x7e);
  assert_int_equal(st__f64_to_e4m3fn_sat(1e300), 0x7e);
  assert_int_equal(st__f64_to_e4m3fn_sat(-INFINITY), 0xfe);
  assert_int_equal(st__f64_to_e4m3fn_sat(NAN), 0x7f);
  assert_int_equal(st__f64_to_e4m3fn_sat(3.0), st_f64_to_e4m3fn(3.0));
  assert_int_equal(st_f64_to_e5m2(57344.0), 0x7b);
  assert_int_equal(st_f64_to_e5m2(61440.0 - 0x1p-30), 0x7b);
  assert_int_equal(st_f64_to_e5m2(61440.0), 0x7c);
  assert_int_equal(st_f64_to_e5m2(-1e300), 0xfc);
  assert_int_equal(st_f64_to_e5m2(-INFINITY), 0xfc);
  assert_int_equal(st_f64_to_e5m2(NAN), 0x7f);
  assert_true(isinf(st_e5m2_to_f64(0x7c)) && st_e5m2_to_f64(0xfc) < 0);
  assert_true(isnan(st_e4m3fn_to_f64(0x7f)) && isnan(st_e4m3fn_to_f64(0xff)));
  assert_true(isnan(st_e5m2_to_f64(0x7d)) && isnan(st_e5m2_to_f64(0xfd)));
}

static void default_tolerance__fp8(void **state) {
  double rtol, atol;
  (void)state;
  st__default_tolerance(ST_DTYPE_FLOAT8_E4M3FN, &rtol, &atol);
  assert_true(rtol == 0.125 && atol == 0x1p-6);
  st__default_tolerance(ST_DTYPE_FLOAT8_E5M2, &rtol, &atol);
  assert_true(rtol == 0.25 && atol == 0x1p-14);
  st__default_tolerance(ST_DTYPE_UINT64, &rtol, &atol);
  assert_true(rtol == 0 && atol == 0);
}

static st_tensor tensor1d(st_dtype dt, void *data, size_t n) {
  st_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "x";
  t.dtype = dt;
  t.role = ST_ROLE_OUTPUT;
  t.ndim = 1;
  t.shape[0] = (int64_t)n;
  t.numel = n;
  t.nbytes = n * st_dtype_size(dt);
  t.data = data;
  return t;
}

static st__num num(double f) {
  st__num v = {0, 0, f};
  return v;
}

/* normal(0, 10000): far beyond both ranges in the tails. e4m3fn saturates
 * (no NaN, some elements at +-448); e5m2 does not reach its range with
 * that std, so std 1e6 gives it infinities of both signs. */
static void fill_random__fp8_normal_saturates_or_overflows(void **state) {
  enum { N = 4096 };
  uint8_t b[N];
  (void)state;
  st_tensor t = tensor1d(ST_DTYPE_FLOAT8_E4M3FN, b, N);
  assert_int_equal(
      st__fill_random(&t, ST__INIT_NORMAL, num(0), num(1e4), 7, 0, N), ST_OK);
  size_t top = 0, bottom = 0;
  for (size_t i = 0; i < N; i++) {
    assert_true((b[i] & 0x7f) != 0x7f); /* never NaN */
    top += b[i] == 0x7e;
    bottom += b[i] == 0xfe;
  }
  assert_true(top > 100 && bottom > 100);
  t = tensor1d(ST_DTYPE_FLOAT8_E5M2, b, N);
  assert_int_equal(
      st__fill_random(&t, ST__INIT_NORMAL, num(0), num(1e6), 7, 0, N), ST_OK);
  size_t inf = 0, ninf = 0;
  for (size_t i = 0; i < N; i++) {
    assert_false(isnan(st_e5m2_to_f64(b[i])));
    inf += b[i] == 0x7c;
    ninf += b[i] == 0xfc;
  }
  assert_true(inf > 100 && ninf > 100);
}

/* uniform [LO, HI): every value in range, HI never reached even when it
 * is the largest finite value, and the chunked fill equals the whole. */
static void fill_random__fp8_uniform_stays_below_hi(void **state) {
  enum { N = 2048 };
  uint8_t b[N], c[N];
  (void)state;
  const st_dtype dts[2] = {ST_DTYPE_FLOAT8_E4M3FN, ST_DTYPE_FLOAT8_E5M2};
  const double his[2] = {448.0, 57344.0};
  for (int k = 0; k < 2; k++) {
    st_tensor t = tensor1d(dts[k], b, N);
    decode_fn dec = k ? st_e5m2_to_f64 : st_e4m3fn_to_f64;
    assert_int_equal(
        st__fill_random(&t, ST__INIT_UNIFORM, num(-2), num(his[k]), 11, 0, N),
        ST_OK);
    double max = -INFINITY;
    for (size_t i = 0; i < N; i++) {
      const double v = dec(b[i]);
      assert_true(v >= -2 && v < his[k]);
      max = v > max ? v : max;
    }
    assert_true(max >= his[k] * 0.75);
    st_tensor u = tensor1d(dts[k], c, N);
    assert_int_equal(st__fill_random(&u, ST__INIT_UNIFORM, num(-2), num(his[k]),
                                     11, 0, 1000),
                     ST_OK);
    assert_int_equal(st__fill_random(&u, ST__INIT_UNIFORM, num(-2), num(his[k]),
                                     11, 1000, N - 1000),
                     ST_OK);
    assert_memory_equal(b, c, N);
  }
}

static void poison__fp8_patterns(void **state) {
  unsigned char pat[8];
  (void)state;
  assert_int_equal(st__poison_bytes(ST_DTYPE_FLOAT8_E4M3FN, pat), 1);
  assert_int_equal(pat[0], 0xff);
  assert_int_equal(st__poison_bytes(ST_DTYPE_FLOAT8_E5M2, pat), 1);
  assert_int_equal(pat[0], 0xfd);
  /* No conversion makes e5m2's poison. */
  assert_int_not_equal(st_f64_to_e5m2(NAN), 0xfd);
  assert_int_not_equal(st_f64_to_e5m2(-NAN), 0xfd);
}

/* e4m3fn's poison is its negative NaN: an unwritten element fails where
 * golden is a number, and is left to compare where golden is either NaN
 * (a kernel computing NaN there writes the same bits). */
static void
poison__e4m3fn_unwritten_fails_only_where_golden_not_nan(void **state) {
  uint8_t a[4], e[4] = {0x38, 0x7f, 0xff, 0x40};
  size_t count;
  (void)state;
  st_tensor ta = tensor1d(ST_DTYPE_FLOAT8_E4M3FN, a, 4);
  st_tensor te = tensor1d(ST_DTYPE_FLOAT8_E4M3FN, e, 4);
  st__poison_fill(&ta);
  assert_memory_equal(a, "\xff\xff\xff\xff", 4);
  assert_int_equal(st__poison_find(&ta, &te, &count), 0);
  assert_int_equal(count, 2);
  a[0] = 0x38;
  assert_int_equal(st__poison_find(&ta, &te, &count), 3);
  assert_int_equal(count, 1);
  /* e5m2: bits equal to golden's are excused, as for every other dtype. */
  uint8_t c[2], g[2] = {0xfd, 0x3c};
  st_tensor tc = tensor1d(ST_DTYPE_FLOAT8_E5M2, c, 2);
  st_tensor tg = tensor1d(ST_DTYPE_FLOAT8_E5M2, g, 2);
  st__poison_fill(&tc);
  assert_memory_equal(c, "\xfd\xfd", 2);
  assert_int_equal(st__poison_find(&tc, &tg, &count), 1);
  assert_int_equal(count, 1);
}

/* .npy of FP8 is float32 under NAME.float8_*-as-f32.npy; uint16/32/64 are
 * numpy's <u2/<u4/<u8. */
static void npy_write__fp8_as_float32_and_unsigned(void **state) {
  char dir[] = "/tmp/st_fp8_npy_XXXXXX", path[512], want[600];
  uint8_t b[3] = {0x38, 0xc0, 0x7e};
  (void)state;
  assert_non_null(mkdtemp(dir));
  st_tensor t = tensor1d(ST_DTYPE_FLOAT8_E4M3FN, b, 3);
  assert_int_equal(
      st__npy_write(dir, "s", "c", "x.actual", &t, path, sizeof path), ST_OK);
  snprintf(want, sizeof want, "%s/s/c/x.actual.float8_e4m3fn-as-f32.npy", dir);
  assert_string_equal(path, want);
  FILE *f = fopen(path, "rb");
  unsigned char buf[257] = {0}; /* read at most 256: NUL-terminated */
  assert_non_null(f);
  const size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  /* The data starts after the 10-byte preamble and the header. */
  const size_t data = 10 + (size_t)(buf[8] | buf[9] << 8);
  assert_int_equal(data % 64, 0);
  assert_int_equal(got, data + 12);
  assert_non_null(strstr((const char *)buf + 10, "'descr': '<f4'"));
  assert_non_null(strstr((const char *)buf + 10, "'shape': (3,)"));
  float v[3];
  memcpy(v, buf + data, sizeof v);
  assert_true(v[0] == 1.0f && v[1] == -2.0f && v[2] == 448.0f);
  unlink(path);
  uint8_t e5[1] = {0x7c};
  t = tensor1d(ST_DTYPE_FLOAT8_E5M2, e5, 1);
  assert_int_equal(
      st__npy_write(dir, "s", "c", "y.expected", &t, path, sizeof path), ST_OK);
  snprintf(want, sizeof want, "%s/s/c/y.expected.float8_e5m2-as-f32.npy", dir);
  assert_string_equal(path, want);
  unlink(path);
  uint64_t u[1] = {UINT64_MAX};
  t = tensor1d(ST_DTYPE_UINT64, u, 1);
  assert_int_equal(st__npy_write(dir, "s", "c", "z", &t, path, sizeof path),
                   ST_OK);
  snprintf(want, sizeof want, "%s/s/c/z.npy", dir);
  assert_string_equal(path, want);
  f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(buf, 1, sizeof buf - 1, f), data + 8);
  fclose(f);
  assert_non_null(strstr((const char *)buf + 10, "'descr': '<u8'"));
  assert_memory_equal(buf + data, u, 8);
  unlink(path);
  const st_dtype ud[2] = {ST_DTYPE_UINT16, ST_DTYPE_UINT32};
  const char *const descr[2] = {"'descr': '<u2'", "'descr': '<u4'"};
  for (int k = 0; k < 2; k++) {
    t = tensor1d(ud[k], u, 1);
    assert_int_equal(st__npy_write(dir, "s", "c", "w", &t, path, sizeof path),
                     ST_OK);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 64);
    fclose(f);
    assert_non_null(strstr((const char *)buf + 10, descr[k]));
    unlink(path);
  }
  char sub[600];
  snprintf(sub, sizeof sub, "%s/s/c", dir);
  assert_int_equal(rmdir(sub), 0);
  snprintf(sub, sizeof sub, "%s/s", dir);
  assert_int_equal(rmdir(sub), 0);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fp8_tables__header_names_generator_and_command),
      cmocka_unit_test(fp8_decode__every_pattern_matches_fixture),
      cmocka_unit_test(fp8_encode__probes_match_fixture),
      cmocka_unit_test(fp8_encode__round_trips_every_pattern),
      cmocka_unit_test(fp8_encode__rounds_once_from_double),
      cmocka_unit_test(fp8_encode__overflow_nan_and_saturation),
      cmocka_unit_test(default_tolerance__fp8),
      cmocka_unit_test(fill_random__fp8_normal_saturates_or_overflows),
      cmocka_unit_test(fill_random__fp8_uniform_stays_below_hi),
      cmocka_unit_test(poison__fp8_patterns),
      cmocka_unit_test(
          poison__e4m3fn_unwritten_fails_only_where_golden_not_nan),
      cmocka_unit_test(npy_write__fp8_as_float32_and_unsigned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
