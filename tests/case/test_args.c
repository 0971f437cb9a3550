/* SPDX-License-Identifier: MIT */
/* Tests for harness/case/args.c and harness/case/fill.c: every init kind on
 * every dtype it applies to, scalars, `file:` inits and their errors, the
 * random streams (independent of chunking and of argument order,
 * dependent on names and seed, within bounds, the documented bytes of
 * docs/random.md), cloning, and allocation failure without leaks. Plans
 * are built by hand: these tests do not need the loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "case/args.h"
#include "case/fill.h"

/* ---- building plans by hand ------------------------------------------- */

typedef struct fixture {
  struct st_scene scene;
  st__case kase;
  st__rarg args[8];
  st__plan plan;
} fixture;

static void fixture_init(fixture *f) {
  memset(f, 0, sizeof *f);
  f->scene.name = "s";
  f->scene.file = "scenes/s.yaml";
  f->kase.name = "c";
  f->plan.scene = &f->scene;
  f->plan.kase = &f->kase;
  f->plan.args = f->args;
}

static st__num inum(int64_t v) {
  st__num n = {1, v, (double)v};
  return n;
}

static st__num fnum(double v) {
  st__num n = {0, 0, v};
  return n;
}

/* Appends a 1-D or 2-D tensor (dim1 == 0: 1-D). */
static st__rarg *add_tensor(fixture *f, const char *name, st_dtype dtype,
                            int64_t dim0, int64_t dim1, st__init_kind init,
                            st__num a, st__num b) {
  st__rarg *r = &f->args[f->plan.n_args++];
  r->name = name;
  r->is_tensor = 1;
  r->dtype = dtype;
  r->role = ST_ROLE_INPUT;
  r->compare = 1;
  r->ndim = dim1 ? 2 : 1;
  r->shape[0] = dim0;
  r->shape[1] = dim1;
  r->numel = (size_t)dim0 * (size_t)(dim1 ? dim1 : 1);
  r->nbytes = r->numel * st_dtype_size(dtype);
  r->init = init;
  r->a = a;
  r->b = b;
  f->plan.n_tensors++;
  f->plan.total_bytes += r->nbytes;
  return r;
}

static st__rarg *add_scalar(fixture *f, const char *name, st_dtype dtype,
                            st__num value) {
  st__rarg *r = &f->args[f->plan.n_args++];
  r->name = name;
  r->dtype = dtype;
  r->value = value;
  return r;
}

static void build_ok(const fixture *f, uint64_t seed, st__argset *set) {
  st_error err;
  st_error_clear(&err);
  const st_status rc = st__args_build(&f->plan, seed, set, &err);
  if (rc != ST_OK)
    fail_msg("st__args_build: %s", err.message);
}

static const st_dtype all_dtypes[] = {
    ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64, ST_DTYPE_FLOAT16, ST_DTYPE_BFLOAT16,
    ST_DTYPE_INT8,    ST_DTYPE_INT16,   ST_DTYPE_INT32,   ST_DTYPE_INT64,
    ST_DTYPE_UINT8,   ST_DTYPE_BOOL};
#define N_DTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

static const st_dtype float_dtypes[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64,
                                        ST_DTYPE_FLOAT16, ST_DTYPE_BFLOAT16};

/* ---- deterministic inits ---------------------------------------------- */

static void args_build__zeros_ones_fill_every_dtype(void **state) {
  (void)state;
  for (size_t d = 0; d < N_DTYPES; d++) {
    fixture f;
    fixture_init(&f);
    const st_dtype dt = all_dtypes[d];
    add_tensor(&f, "z", dt, 3, 5, ST__INIT_ZEROS, inum(0), inum(0));
    add_tensor(&f, "o", dt, 7, 0, ST__INIT_ONES, inum(0), inum(0));
    add_tensor(&f, "v", dt, 33, 0, ST__INIT_FILL, inum(1), inum(0));
    add_tensor(&f, "w", dt, 5, 0, ST__INIT_FILL,
               st_dtype_is_float(dt) ? fnum(-2.5) : inum(0), inum(0));
    st__argset set;
    build_ok(&f, 0, &set);
    assert_int_equal(set.n_tensors, 4);
    assert_int_equal(set.n_scalars, 0);
    for (size_t t = 0; t < 4; t++) {
      assert_ptr_equal(set.tensors[t].name, f.args[t].name);
      assert_int_equal(set.tensors[t].dtype, dt);
      assert_int_equal((uintptr_t)set.tensors[t].data % 64, 0);
      assert_int_equal(set.tensors[t].nbytes, f.args[t].nbytes);
    }
    assert_int_equal(set.tensors[0].ndim, 2);
    assert_int_equal(set.tensors[0].shape[1], 5);
    for (size_t i = 0; i < 15; i++)
      assert_true(st_tensor_get_f64(&set.tensors[0], i) == 0.0);
    for (size_t i = 0; i < 7; i++)
      assert_true(st_tensor_get_f64(&set.tensors[1], i) == 1.0);
    for (size_t i = 0; i < 33; i++)
      assert_true(st_tensor_get_f64(&set.tensors[2], i) == 1.0);
    const double w = st_dtype_is_float(dt) ? -2.5 : 0.0;
    for (size_t i = 0; i < 5; i++)
      assert_true(st_tensor_get_f64(&set.tensors[3], i) == w);
    st__argset_free(&set);
  }
}

static void args_build__fill_rounds_into_dtype(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  add_tensor(&f, "a", ST_DTYPE_FLOAT32, 4, 0, ST__INIT_FILL, fnum(0.1),
             inum(0));
  add_tensor(&f, "b", ST_DTYPE_FLOAT16, 4, 0, ST__INIT_FILL, fnum(0.1),
             inum(0));
  add_tensor(&f, "c", ST_DTYPE_INT64, 3, 0, ST__INIT_FILL,
             inum(INT64_C(9007199254740993)), inum(0)); /* 2^53 + 1 */
  st__argset set;
  build_ok(&f, 0, &set);
  float x;
  memcpy(&x, (char *)set.tensors[0].data + 12, 4);
  assert_true(x == 0.1f);
  uint16_t h;
  memcpy(&h, (char *)set.tensors[1].data + 6, 2);
  assert_int_equal(h, st_f64_to_f16(0.1));
  assert_true(st_tensor_get_i64(&set.tensors[2], 2) ==
              INT64_C(9007199254740993));
  st__argset_free(&set);
}

static void args_build__range_every_dtype(void **state) {
  (void)state;
  for (size_t d = 0; d < N_DTYPES; d++) {
    fixture f;
    fixture_init(&f);
    const st_dtype dt = all_dtypes[d];
    add_tensor(&f, "r", dt, 10, 0, ST__INIT_RANGE, inum(-3), inum(2));
    st__argset set;
    build_ok(&f, 0, &set);
    for (size_t i = 0; i < 10; i++) {
      const int64_t want = -3 + 2 * (int64_t)i;
      if (dt == ST_DTYPE_BOOL)
        assert_int_equal(st_tensor_get_i64(&set.tensors[0], i), want != 0);
      else if (dt == ST_DTYPE_UINT8)
        assert_int_equal(st_tensor_get_i64(&set.tensors[0], i), (uint8_t)want);
      else
        assert_true(st_tensor_get_f64(&set.tensors[0], i) == (double)want);
    }
    st__argset_free(&set);
  }
}

static void args_build__range_exact_for_large_ints(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  /* Beyond 2^53 a double computation would lose the low bits. */
  const int64_t start = (INT64_C(1) << 60) + 1;
  add_tensor(&f, "r", ST_DTYPE_INT64, 100, 0, ST__INIT_RANGE, inum(start),
             inum(3));
  add_tensor(&f, "q", ST_DTYPE_FLOAT64, 4, 0, ST__INIT_RANGE, fnum(0.5),
             fnum(0.25));
  st__argset set;
  build_ok(&f, 0, &set);
  for (size_t i = 0; i < 100; i++)
    assert_true(st_tensor_get_i64(&set.tensors[0], i) ==
                start + 3 * (int64_t)i);
  const double *q = set.tensors[1].data;
  assert_true(q[0] == 0.5 && q[1] == 0.75 && q[2] == 1.0 && q[3] == 1.25);
  st__argset_free(&set);
}

static void args_build__values_every_dtype(void **state) {
  (void)state;
  st__num vals[4] = {inum(1), inum(0), inum(5), inum(-1)};
  for (size_t d = 0; d < N_DTYPES; d++) {
    fixture f;
    fixture_init(&f);
    const st_dtype dt = all_dtypes[d];
    st__rarg *r =
        add_tensor(&f, "v", dt, 2, 2, ST__INIT_VALUES, inum(0), inum(0));
    r->values = vals;
    r->n_values = 4;
    st__argset set;
    build_ok(&f, 0, &set);
    const st_tensor *t = &set.tensors[0];
    assert_int_equal(st_tensor_get_i64(t, 0), 1);
    assert_int_equal(st_tensor_get_i64(t, 1), 0);
    assert_int_equal(st_tensor_get_i64(t, 2), dt == ST_DTYPE_BOOL ? 1 : 5);
    assert_int_equal(st_tensor_get_i64(t, 3), dt == ST_DTYPE_BOOL    ? 1
                                              : dt == ST_DTYPE_UINT8 ? 255
                                                                     : -1);
    st__argset_free(&set);
  }
}

static void args_build__values_count_mismatch(void **state) {
  (void)state;
  st__num vals[3] = {fnum(1.5), fnum(2.5), fnum(3.5)};
  fixture f;
  fixture_init(&f);
  st__rarg *r = add_tensor(&f, "v", ST_DTYPE_FLOAT32, 4, 0, ST__INIT_VALUES,
                           inum(0), inum(0));
  r->values = vals;
  r->n_values = 3;
  st__argset set;
  st_error err;
  st_error_clear(&err);
  assert_int_equal(st__args_build(&f.plan, 0, &set, &err), ST_EINVAL);
  assert_non_null(strstr(err.message, "values has 3 entries, expected 4"));
  assert_null(set.tensors);
}

static void args_build__scalars_take_their_dtype(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  add_tensor(&f, "x", ST_DTYPE_FLOAT32, 2, 0, ST__INIT_ZEROS, inum(0), inum(0));
  add_scalar(&f, "f", ST_DTYPE_FLOAT32, fnum(0.1));
  add_scalar(&f, "d", ST_DTYPE_FLOAT64, fnum(0.1));
  add_scalar(&f, "i", ST_DTYPE_INT32, inum(-7));
  add_scalar(&f, "u", ST_DTYPE_UINT8, inum(300));
  add_scalar(&f, "b", ST_DTYPE_BOOL, inum(2));
  add_scalar(&f, "h", ST_DTYPE_FLOAT16, inum(3));
  st__argset set;
  build_ok(&f, 0, &set);
  assert_int_equal(set.n_tensors, 1);
  assert_int_equal(set.n_scalars, 6);
  const st_scalar *s = set.scalars;
  assert_string_equal(s[0].name, "f");
  assert_false(s[0].is_int);
  assert_true(s[0].f == (double)0.1f);
  assert_true(s[1].f == 0.1);
  assert_true(s[2].is_int && s[2].i == -7 && s[2].f == -7.0);
  assert_true(s[3].is_int && s[3].i == 44);
  assert_true(s[4].is_int && s[4].i == 1);
  assert_true(!s[5].is_int && s[5].f == 3.0 && s[5].i == 3);
  assert_int_equal(s[5].dtype, ST_DTYPE_FLOAT16);
  st__argset_free(&set);
}

static void args_build__empty_tensor(void **state) {
  (void)state;
  static const st__init_kind kinds[] = {
      ST__INIT_ZEROS,   ST__INIT_ONES,   ST__INIT_FILL,    ST__INIT_RANGE,
      ST__INIT_UNIFORM, ST__INIT_NORMAL, ST__INIT_RANDINT, ST__INIT_VALUES};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    fixture f;
    fixture_init(&f);
    add_tensor(&f, "e", ST_DTYPE_FLOAT32, 0, 4, kinds[k], inum(0), inum(1));
    st__argset set;
    build_ok(&f, 0, &set);
    assert_int_equal(set.n_tensors, 1);
    assert_int_equal(set.tensors[0].numel, 0);
    assert_int_equal(set.tensors[0].nbytes, 0);
    assert_int_equal(set.tensors[0].shape[1], 4);
    st__argset clone;
    assert_int_equal(st__argset_clone(&set, &clone), ST_OK);
    st__argset_copy_data(&clone, &set, 0);
    st__argset_free(&clone);
    st__argset_free(&set);
  }
}

/* ---- file inits ------------------------------------------------------- */

static char *write_temp(const void *data, size_t n) {
  char *path = strdup("/tmp/st_test_args_XXXXXX");
  assert_non_null(path);
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, data, n), (ssize_t)n);
  close(fd);
  return path;
}

static void args_build__file_reads_raw_bytes(void **state) {
  (void)state;
  const float vals[6] = {1.5f, -2.0f, 0.25f, 1e30f, -0.0f, 3.0f};
  char *path = write_temp(vals, sizeof vals);
  fixture f;
  fixture_init(&f);
  st__rarg *r = add_tensor(&f, "w", ST_DTYPE_FLOAT32, 2, 3, ST__INIT_FILE,
                           inum(0), inum(0));
  r->path = path;
  st__argset set;
  build_ok(&f, 0, &set);
  assert_memory_equal(set.tensors[0].data, vals, sizeof vals);
  st__argset_free(&set);
  unlink(path);
  free(path);
}

static void args_build__file_size_changed(void **state) {
  (void)state;
  const unsigned char bytes[10] = {0};
  char *path = write_temp(bytes, sizeof bytes);
  fixture f;
  fixture_init(&f);
  st__arg arg;
  memset(&arg, 0, sizeof arg);
  arg.line = 7;
  arg.column = 5;
  arg.init.line = 7;
  arg.init.column = 40;
  arg.init.path_given = "data/w.bin";
  add_tensor(&f, "z", ST_DTYPE_FLOAT32, 1, 0, ST__INIT_ZEROS, inum(0), inum(0));
  st__rarg *r = add_tensor(&f, "w", ST_DTYPE_FLOAT32, 3, 0, ST__INIT_FILE,
                           inum(0), inum(0));
  r->path = path;
  r->arg = &arg;
  st__argset set;
  st_error err;
  st_error_clear(&err);
  assert_int_equal(st__args_build(&f.plan, 0, &set, &err), ST_EIO);
  assert_string_equal(err.file, "scenes/s.yaml");
  assert_int_equal(err.line, 7);
  assert_int_equal(err.column, 40);
  assert_string_equal(err.message,
                      "tensor 'w': file 'data/w.bin' has 10 bytes, expected "
                      "12 (it changed since the scene was loaded)");
  assert_null(set.tensors);
  assert_int_equal(set.n_tensors, 0);
  unlink(path);
  free(path);
}

static void args_build__file_missing(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  st__rarg *r =
      add_tensor(&f, "w", ST_DTYPE_INT8, 3, 0, ST__INIT_FILE, inum(0), inum(0));
  r->path = "/nonexistent/st_test_args.bin";
  st__argset set;
  st_error err;
  st_error_clear(&err);
  assert_int_equal(st__args_build(&f.plan, 0, &set, &err), ST_EIO);
  assert_non_null(strstr(err.message, "tensor 'w': cannot open "
                                      "'/nonexistent/st_test_args.bin'"));
  /* A directory is not a data file. */
  r->path = "/tmp";
  st_error_clear(&err);
  assert_int_equal(st__args_build(&f.plan, 0, &set, &err), ST_EIO);
  assert_non_null(strstr(err.message, "'/tmp'"));
}

/* ---- random inits ----------------------------------------------------- */

static void rng_key__depends_on_names_and_seed(void **state) {
  (void)state;
  const uint64_t k = st__rng_key("s", "c", "x", 0);
  assert_true(k == st__rng_key("s", "c", "x", 0));
  assert_true(k != st__rng_key("t", "c", "x", 0));
  assert_true(k != st__rng_key("s", "d", "x", 0));
  assert_true(k != st__rng_key("s", "c", "y", 0));
  assert_true(k != st__rng_key("s", "c", "x", 1));
  /* The separators keep the boundaries between names. */
  assert_true(st__rng_key("ab", "c", "x", 0) != st__rng_key("a", "bc", "x", 0));
  assert_true(st__rng_key("s", "cx", "", 0) != st__rng_key("s", "c", "x", 0));
}

/* The worked example of docs/random.md, computed there by the Python
 * reference: if these change, the page is wrong. */
static void rng__documented_worked_example(void **state) {
  (void)state;
  const uint64_t k = st__rng_key("s", "c", "x", 0);
  assert_true(k == UINT64_C(0x5cd385d19609aa74));
  assert_true(st__rng_bits(k, 0) == UINT64_C(0x1b2024291b68af4a));
  assert_true(st__rng_bits(k, 1) == UINT64_C(0xbc3ef07987b7c8b7));
  assert_true(st__rng_bits(k, 2) == UINT64_C(0x41d8663dfcff6732));
  assert_true(st__rng_bits32(k, 0) == UINT32_C(0x25f1e2d5));
  assert_true(st__rng_bits32(k, 1) == UINT32_C(0x08440fdc));
  assert_true(st__rng_bits32(k, 2) == UINT32_C(0x0680501b));

  fixture f;
  fixture_init(&f);
  add_tensor(&f, "x", ST_DTYPE_FLOAT32, 4, 0, ST__INIT_UNIFORM, inum(-1),
             inum(1));
  st__argset set;
  build_ok(&f, 0, &set);
  static const unsigned char want[16] = {0x3c, 0x1c, 0x34, 0xbf, 0xe2, 0x77,
                                         0x6f, 0xbf, 0x60, 0xff, 0x72, 0xbf,
                                         0xca, 0x6b, 0x36, 0xbf};
  assert_memory_equal(set.tensors[0].data, want, sizeof want);
  st__argset_free(&set);

  fixture_init(&f);
  add_tensor(&f, "x", ST_DTYPE_FLOAT64, 3, 0, ST__INIT_UNIFORM, inum(0),
             inum(1));
  build_ok(&f, 0, &set);
  const double *u = set.tensors[0].data;
  assert_true(u[0] == 0.10595918658819647 && u[1] == 0.7353353783325637 &&
              u[2] == 0.2572082425440363);
  st__argset_free(&set);

  fixture_init(&f);
  add_tensor(&f, "x", ST_DTYPE_FLOAT64, 3, 0, ST__INIT_NORMAL, inum(0),
             inum(1));
  build_ok(&f, 0, &set);
  const double *z = set.tensors[0].data;
  assert_true(z[0] == -0.1949531763973473 && z[1] == 0.9924880887755204 &&
              z[2] == -0.9844241459543117);
  st__argset_free(&set);

  fixture_init(&f);
  add_tensor(&f, "x", ST_DTYPE_INT32, 8, 0, ST__INIT_RANDINT, inum(0),
             inum(10));
  build_ok(&f, 0, &set);
  static const int32_t ri[8] = {1, 7, 2, 8, 5, 5, 4, 5};
  assert_memory_equal(set.tensors[0].data, ri, sizeof ri);
  st__argset_free(&set);
}

/* The float32 uniform hot loop against a step-by-step scalar computation
 * (volatile temporaries: each operation rounded to float32 on its own, so
 * a contraction into FMA in the vectorized loop would show). */
static void check_scalar_steps(double lo, double hi, uint64_t first, size_t n) {
  float *got = malloc(n * sizeof *got);
  assert_non_null(got);
  const uint64_t key = st__rng_key("scene", "case", "arg", 42);
  st__fill_uniform_f32(got, n, key, first, lo, hi);
  float cap = (float)hi;
  if ((double)cap < hi)
    cap = nextafterf(cap, INFINITY);
  const float below = nextafterf(cap, -INFINITY);
  for (size_t i = 0; i < n; i++) {
    const uint32_t h = st__rng_bits32(key, first + i);
    volatile float u = (float)(h >> 8) * 0x1p-24f;
    volatile float p = (float)(hi - lo) * u;
    volatile float r = (float)lo + p;
    const float want = r < cap ? r : below;
    assert_memory_equal(&got[i], &want, sizeof want);
  }
  free(got);
}

static void fill_uniform_f32__matches_scalar_steps(void **state) {
  (void)state;
  check_scalar_steps(-3.25, 7.0, 1000, 4099);
}

/* The 32- and 64-wide loops (AVX2, AVX-512: whichever this machine has)
 * multiply by w * 2^-24 where that is exact, and fall back to the
 * two-multiply loop where it is not (a width whose 2^-24th is subnormal):
 * the same bytes either way, for widths whose products round differently,
 * and where values reach HI and become the float below it. */
static void fill_uniform_f32__every_width_same_bytes(void **state) {
  (void)state;
  static const double iv[][2] = {
      {0.0, 1.0},
      {-1.0, 1.0},
      {1.0, 1.0 + 0x1p-20},
      {0.1, 0.3},
      {1e-30, 3e-30},
      {0.0, 1e-37},
      {-1e38, 1e38},
      {-7.5, -7.25},
      {1e6, 1e6 + 3.0},
      {0.0, 0x1p-126},
      {16777215.0, 16777216.0},
  };
  for (size_t k = 0; k < sizeof iv / sizeof iv[0]; k++) {
    check_scalar_steps(iv[k][0], iv[k][1], 0, 4096);
    check_scalar_steps(iv[k][0], iv[k][1], 3, 100);
  }
}

/* A fill large enough for the streaming-store path (8 MiB and up, on
 * AVX2), starting off a 32-byte boundary: the same bytes as small chunks
 * (which use the portable loop) and as the scalar steps. */
static void fill_uniform_f32__large_fill_same_bytes(void **state) {
  (void)state;
  const size_t n = ((size_t)8 << 20) / sizeof(float) + 37;
  float *big = malloc((n + 8) * sizeof *big);
  float *small = malloc((n + 8) * sizeof *small);
  assert_non_null(big);
  assert_non_null(small);
  const uint64_t key = st__rng_key("s", "c", "big", 9);
  const double lo = -0.5, hi = 0.75;
  st__fill_uniform_f32(big + 1, n, key, 5, lo, hi);
  for (size_t first = 0; first < n; first += 4096) {
    const size_t k = n - first < 4096 ? n - first : 4096;
    st__fill_uniform_f32(small + 1 + first, k, key, 5 + first, lo, hi);
  }
  assert_memory_equal(big + 1, small + 1, n * sizeof *big);
  for (size_t i = 0; i < n; i += 997) {
    volatile float u = (float)(st__rng_bits32(key, 5 + i) >> 8) * 0x1p-24f;
    volatile float p = (float)(hi - lo) * u;
    volatile float r = (float)lo + p;
    assert_true(big[1 + i] == r);
  }
  free(big);
  free(small);
}

/* Across the 2^32-element block boundary of the 32-bit stream. */
static void fill_uniform_f32__crosses_block_boundary(void **state) {
  (void)state;
  const uint64_t key = 12345;
  const uint64_t first = (UINT64_C(1) << 32) - 5;
  float whole[10], part[10];
  st__fill_uniform_f32(whole, 10, key, first, 0.0, 1.0);
  for (size_t i = 0; i < 10; i++)
    st__fill_uniform_f32(&part[i], 1, key, first + i, 0.0, 1.0);
  assert_memory_equal(whole, part, sizeof whole);
  for (size_t i = 0; i < 10; i++) {
    const float want = (float)(st__rng_bits32(key, first + i) >> 8) * 0x1p-24f;
    assert_true(whole[i] == want);
  }
  /* The two blocks are different streams, not one continued. */
  assert_true(st__rng_bits32(key, UINT64_C(1) << 32) != st__rng_bits32(key, 0));
}

static void fill_random__same_bytes_for_any_chunking(void **state) {
  (void)state;
  static const st__init_kind kinds[] = {ST__INIT_UNIFORM, ST__INIT_NORMAL,
                                        ST__INIT_RANDINT};
  static const size_t chunks[] = {1, 7, 64, 333, 1000};
  enum { N = 1000 };
  for (size_t d = 0; d < N_DTYPES; d++) {
    for (size_t k = 0; k < 3; k++) {
      const st_dtype dt = all_dtypes[d];
      const size_t es = st_dtype_size(dt);
      unsigned char *whole = calloc(N, es), *part = calloc(N, es);
      assert_non_null(whole);
      assert_non_null(part);
      st_tensor t = {0};
      t.name = "x";
      t.dtype = dt;
      t.ndim = 1;
      t.shape[0] = N;
      t.numel = N;
      t.nbytes = N * es;
      const st__num a = kinds[k] == ST__INIT_RANDINT ? inum(0) : fnum(-2.0);
      const st__num b = kinds[k] == ST__INIT_RANDINT ? inum(2) : fnum(3.0);
      const uint64_t key = st__rng_key("s", "c", "x", 7);
      t.data = whole;
      assert_int_equal(st__fill_random(&t, kinds[k], a, b, key, 0, N), ST_OK);
      for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
        memset(part, 0xa5, N * es);
        t.data = part;
        for (size_t first = 0; first < N; first += chunks[c]) {
          const size_t n = N - first < chunks[c] ? N - first : chunks[c];
          assert_int_equal(st__fill_random(&t, kinds[k], a, b, key, first, n),
                           ST_OK);
        }
        assert_memory_equal(whole, part, N * es);
      }
      free(whole);
      free(part);
    }
  }
}

static void args_build__random_independent_of_arg_order(void **state) {
  (void)state;
  fixture f1, f2;
  fixture_init(&f1);
  fixture_init(&f2);
  add_tensor(&f1, "a", ST_DTYPE_FLOAT32, 100, 0, ST__INIT_UNIFORM, inum(0),
             inum(1));
  add_tensor(&f1, "b", ST_DTYPE_FLOAT64, 100, 0, ST__INIT_NORMAL, inum(0),
             inum(1));
  add_tensor(&f2, "b", ST_DTYPE_FLOAT64, 100, 0, ST__INIT_NORMAL, inum(0),
             inum(1));
  add_tensor(&f2, "a", ST_DTYPE_FLOAT32, 100, 0, ST__INIT_UNIFORM, inum(0),
             inum(1));
  st__argset s1, s2, s3;
  build_ok(&f1, 3, &s1);
  build_ok(&f2, 3, &s2);
  assert_memory_equal(s1.tensors[0].data, s2.tensors[1].data, 400);
  assert_memory_equal(s1.tensors[1].data, s2.tensors[0].data, 800);
  /* Another seed, another case: other bytes. */
  build_ok(&f1, 4, &s3);
  assert_memory_not_equal(s1.tensors[0].data, s3.tensors[0].data, 400);
  st__argset_free(&s3);
  f1.kase.name = "d";
  build_ok(&f1, 3, &s3);
  assert_memory_not_equal(s1.tensors[0].data, s3.tensors[0].data, 400);
  st__argset_free(&s3);
  st__argset_free(&s1);
  st__argset_free(&s2);
}

static void args_build__uniform_within_bounds(void **state) {
  (void)state;
  enum { N = 20000 };
  for (size_t d = 0; d < 4; d++) {
    fixture f;
    fixture_init(&f);
    add_tensor(&f, "u", float_dtypes[d], N, 0, ST__INIT_UNIFORM, fnum(-1.5),
               fnum(2.5));
    /* An interval narrower than one float32 ulp at 1: rounding would
     * reach HI, which is excluded. */
    add_tensor(&f, "v", float_dtypes[d], 1000, 0, ST__INIT_UNIFORM, fnum(1.0),
               fnum(1.0 + 0x1p-23));
    st__argset set;
    build_ok(&f, 0, &set);
    double sum = 0, mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < N; i++) {
      const double v = st_tensor_get_f64(&set.tensors[0], i);
      assert_true(v >= -1.5 && v < 2.5);
      sum += v;
      mn = v < mn ? v : mn;
      mx = v > mx ? v : mx;
    }
    assert_true(fabs(sum / N - 0.5) < 0.05);
    assert_true(mn < -1.4 && mx > 2.4);
    for (size_t i = 0; i < 1000; i++) {
      const double v = st_tensor_get_f64(&set.tensors[1], i);
      assert_true(v >= 1.0 && v < 1.0 + 0x1p-23);
    }
    st__argset_free(&set);
  }
}

static void args_build__normal_moments(void **state) {
  (void)state;
  enum { N = 40000 };
  for (size_t d = 0; d < 4; d++) {
    fixture f;
    fixture_init(&f);
    add_tensor(&f, "n", float_dtypes[d], N, 0, ST__INIT_NORMAL, fnum(2.0),
               fnum(3.0));
    st__argset set;
    build_ok(&f, 0, &set);
    double s = 0, s2 = 0;
    for (size_t i = 0; i < N; i++) {
      const double v = st_tensor_get_f64(&set.tensors[0], i);
      assert_true(isfinite(v));
      s += v;
      s2 += v * v;
    }
    const double mean = s / N, sd = sqrt(s2 / N - mean * mean);
    assert_true(fabs(mean - 2.0) < 0.1);
    assert_true(fabs(sd - 3.0) < 0.1);
    st__argset_free(&set);
  }
}

static void args_build__randint_within_bounds(void **state) {
  (void)state;
  enum { N = 5000 };
  for (size_t d = 0; d < N_DTYPES; d++) {
    const st_dtype dt = all_dtypes[d];
    const int64_t lo = dt == ST_DTYPE_BOOL || dt == ST_DTYPE_UINT8 ? 0 : -5;
    const int64_t hi = dt == ST_DTYPE_BOOL ? 2 : 5;
    fixture f;
    fixture_init(&f);
    add_tensor(&f, "r", dt, N, 0, ST__INIT_RANDINT, inum(lo), inum(hi));
    st__argset set;
    build_ok(&f, 0, &set);
    int seen[16] = {0};
    for (size_t i = 0; i < N; i++) {
      const double v = st_tensor_get_f64(&set.tensors[0], i);
      assert_true(v == floor(v));
      assert_true(v >= (double)lo && v < (double)hi);
      seen[(int)(v - (double)lo)]++;
    }
    for (int64_t v = 0; v < hi - lo; v++)
      assert_true(seen[v] > 0); /* every value occurs */
    st__argset_free(&set);
  }
  /* The widest span does not overflow. */
  fixture f;
  fixture_init(&f);
  add_tensor(&f, "w", ST_DTYPE_INT64, 1000, 0, ST__INIT_RANDINT,
             inum(INT64_MIN), inum(INT64_MAX));
  st__argset set;
  build_ok(&f, 0, &set);
  int neg = 0, pos = 0;
  for (size_t i = 0; i < 1000; i++) {
    const int64_t v = st_tensor_get_i64(&set.tensors[0], i);
    assert_true(v != INT64_MAX);
    neg += v < 0;
    pos += v > 0;
  }
  assert_true(neg > 400 && pos > 400);
  st__argset_free(&set);
}

/* ---- clone, copy, allocation failure ---------------------------------- */

static void argset_clone__deep_copy_and_copy_data(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  add_tensor(&f, "in", ST_DTYPE_FLOAT32, 8, 0, ST__INIT_RANGE, inum(0),
             inum(1));
  st__rarg *o = add_tensor(&f, "out", ST_DTYPE_INT16, 4, 0, ST__INIT_FILL,
                           inum(9), inum(0));
  o->role = ST_ROLE_OUTPUT;
  add_scalar(&f, "s", ST_DTYPE_FLOAT64, fnum(0.5));
  st__argset set, clone;
  build_ok(&f, 0, &set);
  assert_int_equal(st__argset_clone(&set, &clone), ST_OK);
  assert_int_equal(clone.n_tensors, 2);
  assert_int_equal(clone.n_scalars, 1);
  assert_true(clone.scalars[0].f == 0.5);
  for (size_t t = 0; t < 2; t++) {
    assert_ptr_not_equal(clone.tensors[t].data, set.tensors[t].data);
    assert_int_equal((uintptr_t)clone.tensors[t].data % 64, 0);
    assert_memory_equal(clone.tensors[t].data, set.tensors[t].data,
                        set.tensors[t].nbytes);
  }
  memset(clone.tensors[0].data, 0x11, clone.tensors[0].nbytes);
  memset(clone.tensors[1].data, 0x22, clone.tensors[1].nbytes);
  assert_true(st_tensor_get_f64(&set.tensors[0], 3) == 3.0);
  /* outputs_only restores the output and leaves the input alone. */
  st__argset_copy_data(&clone, &set, 1);
  assert_memory_equal(clone.tensors[1].data, set.tensors[1].data, 8);
  assert_int_equal(((unsigned char *)clone.tensors[0].data)[0], 0x11);
  st__argset_copy_data(&clone, &set, 0);
  assert_memory_equal(clone.tensors[0].data, set.tensors[0].data, 32);
  st__argset_free(&clone);
  st__argset_free(&clone); /* a freed argset is zeroed: free again is ok */
  st__argset_free(NULL);
  st__argset_free(&set);
}

/* A case's sets as case_prepare makes them: an input, an output with an
 * explicit init (fill 5) and a poisoned output (no init: zeros). */
static void clone_fixture(fixture *f, st__argset *args) {
  fixture_init(f);
  add_tensor(f, "a", ST_DTYPE_FLOAT32, 8, 0, ST__INIT_FILL, fnum(3.0), inum(0));
  st__rarg *o = add_tensor(f, "o", ST_DTYPE_FLOAT32, 8, 0, ST__INIT_FILL,
                           fnum(5.0), inum(0));
  o->role = ST_ROLE_OUTPUT;
  st__rarg *p = add_tensor(f, "p", ST_DTYPE_FLOAT32, 8, 0, ST__INIT_ZEROS,
                           inum(0), inum(0));
  p->role = ST_ROLE_OUTPUT;
  p->poison = 1;
  add_scalar(f, "s", ST_DTYPE_INT32, inum(1));
  build_ok(f, 0, args);
}

/* init keeps what reset and the input check read, and no buffer for the
 * poisoned output, which every run overwrites. */
static void argset_clone_init__no_buffer_for_poisoned_output(void **state) {
  (void)state;
  fixture f;
  st__argset args, init;
  clone_fixture(&f, &args);
  assert_int_equal(st__argset_clone_init(&args, &f.plan, &init), ST_OK);
  assert_int_equal(init.n_tensors, 3);
  assert_int_equal(init.n_scalars, 1);
  assert_ptr_not_equal(init.tensors[0].data, args.tensors[0].data);
  assert_memory_equal(init.tensors[0].data, args.tensors[0].data, 32);
  assert_ptr_not_equal(init.tensors[1].data, args.tensors[1].data);
  assert_memory_equal(init.tensors[1].data, args.tensors[1].data, 32);
  assert_null(init.tensors[2].data);
  assert_int_equal(init.tensors[2].nbytes, 32);
  /* reset: the explicit output gets its init bytes back, the poisoned one
   * (no buffer in init) is left as it is, and inputs are not touched. */
  memset(args.tensors[0].data, 0x11, 32);
  memset(args.tensors[1].data, 0x22, 32);
  memset(args.tensors[2].data, 0x33, 32);
  st__argset_copy_data(&args, &init, 1);
  assert_int_equal(((unsigned char *)args.tensors[0].data)[0], 0x11);
  assert_true(st_tensor_get_f64(&args.tensors[1], 7) == 5.0);
  assert_int_equal(((unsigned char *)args.tensors[2].data)[31], 0x33);
  st__argset_free(&init);
  st__argset_free(&args);
}

/* gold: the explicit output's init bytes, the poisoned output's zeros (the
 * init the golden runs on), inputs borrowed from init only when asked, and
 * freeing gold leaves init's buffers to init (ASan: no double free, no
 * leak). */
static void
argset_clone_gold__init_bytes_zeros_and_borrowed_inputs(void **state) {
  (void)state;
  fixture f;
  st__argset args, init, gold;
  const float zeros[8] = {0};
  clone_fixture(&f, &args);
  assert_int_equal(st__argset_clone_init(&args, &f.plan, &init), ST_OK);
  for (int share = 0; share <= 1; share++) {
    assert_int_equal(st__argset_clone_gold(&init, &f.plan, share, &gold),
                     ST_OK);
    assert_int_equal(gold.n_tensors, 3);
    assert_int_equal(gold.n_scalars, 1);
    if (share)
      assert_ptr_equal(gold.tensors[0].data, init.tensors[0].data);
    else
      assert_ptr_not_equal(gold.tensors[0].data, init.tensors[0].data);
    assert_true(st_tensor_get_f64(&gold.tensors[0], 7) == 3.0);
    assert_ptr_not_equal(gold.tensors[1].data, init.tensors[1].data);
    assert_true(st_tensor_get_f64(&gold.tensors[1], 0) == 5.0);
    assert_true(st_tensor_get_f64(&gold.tensors[1], 7) == 5.0);
    assert_non_null(gold.tensors[2].data);
    assert_memory_equal(gold.tensors[2].data, zeros, sizeof zeros);
    st__argset_free(&gold);
    /* init's input is still init's, intact. */
    assert_true(st_tensor_get_f64(&init.tensors[0], 7) == 3.0);
  }
  st__argset_free(&init);
  st__argset_free(&args);
}

/* Every allocation of the two clones fails in turn: a clean ST_ENOMEM,
 * a zeroed set, and nothing of the lender freed or leaked. */
static void argset_clone_gold__every_allocation_failure_is_clean(void **state) {
  (void)state;
  fixture f;
  st__argset args;
  clone_fixture(&f, &args);
  for (int which = 0; which < 3; which++) {
    for (long k = 0;; k++) {
      st__argset out;
      st_status rc;
      st__args_fail_after = k;
      if (which == 0)
        rc = st__argset_clone_init(&args, &f.plan, &out);
      else
        rc = st__argset_clone_gold(&args, &f.plan, which == 2, &out);
      st__args_fail_after = -1;
      if (rc == ST_OK) {
        st__argset_free(&out);
        break;
      }
      assert_int_equal(rc, ST_ENOMEM);
      assert_null(out.tensors);
      assert_int_equal(out.n_tensors, 0);
      assert_true(k < 16);
    }
  }
  assert_true(st_tensor_get_f64(&args.tensors[0], 0) == 3.0);
  st__argset_free(&args);
}

/* Every allocation fails in turn (SQLite's fault-injection idea): each
 * failure is a clean ST_ENOMEM with a zeroed argset; LeakSanitizer (the
 * asan build) checks nothing leaks. */
static void args_build__every_allocation_failure_is_clean(void **state) {
  (void)state;
  fixture f;
  fixture_init(&f);
  add_tensor(&f, "a", ST_DTYPE_FLOAT32, 16, 0, ST__INIT_UNIFORM, inum(0),
             inum(1));
  add_tensor(&f, "e", ST_DTYPE_FLOAT32, 0, 0, ST__INIT_ZEROS, inum(0), inum(0));
  add_tensor(&f, "b", ST_DTYPE_INT8, 3, 3, ST__INIT_FILL, inum(2), inum(0));
  add_scalar(&f, "s", ST_DTYPE_INT32, inum(1));
  int failures = 0;
  for (long k = 0;; k++) {
    st__argset set;
    st_error err;
    st_error_clear(&err);
    st__args_fail_after = k;
    const st_status rc = st__args_build(&f.plan, 0, &set, &err);
    st__args_fail_after = -1;
    if (rc == ST_OK) {
      assert_int_equal(set.n_tensors, 3);
      st__argset_free(&set);
      break;
    }
    assert_int_equal(rc, ST_ENOMEM);
    assert_int_equal(err.code, ST_ENOMEM);
    assert_null(set.tensors);
    assert_null(set.scalars);
    assert_int_equal(set.n_tensors, 0);
    failures++;
    assert_true(k < 100);
  }
  /* Two arrays and two non-empty buffers. */
  assert_int_equal(failures, 4);

  st__argset set;
  build_ok(&f, 0, &set);
  failures = 0;
  for (long k = 0;; k++) {
    st__argset clone;
    st__args_fail_after = k;
    const st_status rc = st__argset_clone(&set, &clone);
    st__args_fail_after = -1;
    if (rc == ST_OK) {
      st__argset_free(&clone);
      break;
    }
    assert_int_equal(rc, ST_ENOMEM);
    assert_null(clone.tensors);
    assert_int_equal(clone.n_tensors, 0);
    failures++;
    assert_true(k < 100);
  }
  assert_int_equal(failures, 4);
  st__argset_free(&set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(args_build__zeros_ones_fill_every_dtype),
      cmocka_unit_test(args_build__fill_rounds_into_dtype),
      cmocka_unit_test(args_build__range_every_dtype),
      cmocka_unit_test(args_build__range_exact_for_large_ints),
      cmocka_unit_test(args_build__values_every_dtype),
      cmocka_unit_test(args_build__values_count_mismatch),
      cmocka_unit_test(args_build__scalars_take_their_dtype),
      cmocka_unit_test(args_build__empty_tensor),
      cmocka_unit_test(args_build__file_reads_raw_bytes),
      cmocka_unit_test(args_build__file_size_changed),
      cmocka_unit_test(args_build__file_missing),
      cmocka_unit_test(rng_key__depends_on_names_and_seed),
      cmocka_unit_test(rng__documented_worked_example),
      cmocka_unit_test(fill_uniform_f32__matches_scalar_steps),
      cmocka_unit_test(fill_uniform_f32__every_width_same_bytes),
      cmocka_unit_test(fill_uniform_f32__large_fill_same_bytes),
      cmocka_unit_test(fill_uniform_f32__crosses_block_boundary),
      cmocka_unit_test(fill_random__same_bytes_for_any_chunking),
      cmocka_unit_test(args_build__random_independent_of_arg_order),
      cmocka_unit_test(args_build__uniform_within_bounds),
      cmocka_unit_test(args_build__normal_moments),
      cmocka_unit_test(args_build__randint_within_bounds),
      cmocka_unit_test(argset_clone__deep_copy_and_copy_data),
      cmocka_unit_test(args_build__every_allocation_failure_is_clean),
      cmocka_unit_test(argset_clone_init__no_buffer_for_poisoned_output),
      cmocka_unit_test(argset_clone_gold__init_bytes_zeros_and_borrowed_inputs),
      cmocka_unit_test(argset_clone_gold__every_allocation_failure_is_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
