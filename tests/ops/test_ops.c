/* SPDX-License-Identifier: MIT */
/* The built-in ops on every built-in backend (reference, cpu, threads)
 * against values worked out by hand, the binding checks and their
 * messages, integer wrap-around, sharding, and the determinism of
 * reduce_sum and matmul across thread and shard counts. Implementations
 * are found through a built-in registry, so the module inits are covered
 * too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/op.h>
#include <scenetest/registry.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

static const char *const backends[] = {"reference", "cpu", "threads"};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

static st_registry *reg;

static int setup(void **state) {
  (void)state;
  return st_registry_new_builtin(&reg) == ST_OK ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  st_registry_free(reg);
  reg = NULL;
  return 0;
}

static st_tensor mk(const char *name, st_dtype dt, st_role role, void *data,
                    int ndim, const int64_t *shape) {
  st_tensor t;
  memset(&t, 0, sizeof t);
  t.name = name;
  t.dtype = dt;
  t.role = role;
  t.ndim = ndim;
  t.numel = 1;
  for (int d = 0; d < ndim; d++) {
    t.shape[d] = shape[d];
    t.numel *= (size_t)shape[d];
  }
  t.nbytes = t.numel * st_dtype_size(dt);
  t.data = data;
  return t;
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define IN ST_ROLE_INPUT
#define OUT ST_ROLE_OUTPUT
#define INOUT ST_ROLE_INOUT

static st_op_fn find(const char *op, const char *backend) {
  st_op_fn fn = NULL;
  st_error err;
  st_error_clear(&err);
  st_status rc =
      st_registry_lookup(reg, op, backend, ST_LOOKUP_KERNEL, &fn, &err);
  if (rc != ST_OK)
    fail_msg("lookup %s on %s: %s", op, backend, err.message);
  return fn;
}

static st_status call_op(const char *backend, const char *op, st_tensor *t,
                         size_t nt, const st_scalar *s, size_t ns,
                         unsigned shard, unsigned shards, unsigned threads,
                         char *msg, size_t msg_size) {
  st_op_call call;
  st_op_call_init(&call);
  call.op = op;
  call.backend = backend;
  call.tensors = t;
  call.n_tensors = nt;
  call.scalars = s;
  call.n_scalars = ns;
  call.shard_index = shard;
  call.shard_count = shards;
  call.max_threads = threads;
  st_status rc = find(op, backend)(&call);
  if (msg)
    snprintf(msg, msg_size, "%s", call.message);
  return rc;
}

/* Runs op on backend as one shard with 2 threads and asserts success. */
static void run_ok(const char *backend, const char *op, st_tensor *t, size_t nt,
                   const st_scalar *s, size_t ns) {
  char msg[ST_OP_MESSAGE_MAX];
  st_status rc = call_op(backend, op, t, nt, s, ns, 0, 1, 2, msg, sizeof msg);
  if (rc != ST_OK)
    fail_msg("%s on %s: %s (%s)", op, backend, st_status_name(rc), msg);
}

static st_scalar scalar_f(const char *name, double f) {
  st_scalar s = {name, ST_DTYPE_FLOAT64, 0, 0, f};
  return s;
}

static st_scalar scalar_i(const char *name, int64_t i) {
  st_scalar s = {name, ST_DTYPE_INT64, 1, i, (double)i};
  return s;
}

/* ---- element-wise ops ---- */

static void add__float32_every_backend(void **state) {
  (void)state;
  float a[4] = {1.0f, 2.0f, 3.0f, 4.5f}, b[4] = {0.5f, -2.0f, 10.0f, 1.0f};
  float want[4] = {1.5f, 0.0f, 13.0f, 5.5f};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float out[4] = {-7, -7, -7, -7};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(4)),
                      mk("b", ST_DTYPE_FLOAT32, IN, b, 1, SHAPE(4)),
                      mk("out", ST_DTYPE_FLOAT32, OUT, out, 1, SHAPE(4))};
    run_ok(backends[k], "add", t, 3, NULL, 0);
    assert_memory_equal(out, want, sizeof want);
  }
}

static void sub_mul__float64_every_backend(void **state) {
  (void)state;
  double a[2][3] = {{1, 2, 3}, {-4, 0.25, 8}};
  double b[2][3] = {{0.5, 2, -1}, {2, 4, 0.125}};
  double want_sub[6] = {0.5, 0, 4, -6, -3.75, 7.875};
  double want_mul[6] = {0.5, 4, -3, -8, 1, 1};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    double out[6];
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT64, IN, a, 2, SHAPE(2, 3)),
                      mk("b", ST_DTYPE_FLOAT64, IN, b, 2, SHAPE(2, 3)),
                      mk("out", ST_DTYPE_FLOAT64, OUT, out, 2, SHAPE(2, 3))};
    run_ok(backends[k], "sub", t, 3, NULL, 0);
    assert_memory_equal(out, want_sub, sizeof out);
    run_ok(backends[k], "mul", t, 3, NULL, 0);
    assert_memory_equal(out, want_mul, sizeof out);
  }
}

static void add__int8_wraps(void **state) {
  (void)state;
  int8_t a[3] = {127, -128, 100}, b[3] = {1, -1, 27},
         want[3] = {-128, 127, 127};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    int8_t out[3] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_INT8, IN, a, 1, SHAPE(3)),
                      mk("b", ST_DTYPE_INT8, IN, b, 1, SHAPE(3)),
                      mk("out", ST_DTYPE_INT8, OUT, out, 1, SHAPE(3))};
    run_ok(backends[k], "add", t, 3, NULL, 0);
    assert_memory_equal(out, want, sizeof want);
  }
}

static void mul__uint8_wraps(void **state) {
  (void)state;
  uint8_t a[3] = {200, 255, 16}, b[3] = {2, 255, 16}, want[3] = {144, 1, 0};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    uint8_t out[3] = {9, 9, 9};
    st_tensor t[3] = {mk("a", ST_DTYPE_UINT8, IN, a, 1, SHAPE(3)),
                      mk("b", ST_DTYPE_UINT8, IN, b, 1, SHAPE(3)),
                      mk("out", ST_DTYPE_UINT8, OUT, out, 1, SHAPE(3))};
    run_ok(backends[k], "mul", t, 3, NULL, 0);
    assert_memory_equal(out, want, sizeof want);
  }
}

/* 32767 * 32767 = 0x3FFF0001: in int arithmetic after promotion from
 * uint16 it would overflow; the low 16 bits are 1. */
static void mul__int16_wraps_without_promotion_overflow(void **state) {
  (void)state;
  int16_t a[2] = {32767, -32768}, b[2] = {32767, -1}, want[2] = {1, -32768};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    int16_t out[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_INT16, IN, a, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_INT16, IN, b, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_INT16, OUT, out, 1, SHAPE(2))};
    run_ok(backends[k], "mul", t, 3, NULL, 0);
    assert_memory_equal(out, want, sizeof want);
  }
}

static void sub__int32_int64_wrap(void **state) {
  (void)state;
  int32_t a32[2] = {INT32_MIN, 5}, b32[2] = {1, 7}, w32[2] = {INT32_MAX, -2};
  int64_t a64[2] = {INT64_MAX, INT64_MIN}, b64[2] = {-1, 1};
  int64_t w64[2] = {INT64_MIN, INT64_MAX};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    int32_t o32[2] = {0};
    int64_t o64[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_INT32, IN, a32, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_INT32, IN, b32, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_INT32, OUT, o32, 1, SHAPE(2))};
    run_ok(backends[k], "sub", t, 3, NULL, 0);
    assert_memory_equal(o32, w32, sizeof w32);
    st_tensor u[3] = {mk("a", ST_DTYPE_INT64, IN, a64, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_INT64, IN, b64, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_INT64, OUT, o64, 1, SHAPE(2))};
    run_ok(backends[k], "sub", u, 3, NULL, 0);
    assert_memory_equal(o64, w64, sizeof w64);
  }
}

static void mul__int64_wraps(void **state) {
  (void)state;
  int64_t a[2] = {INT64_MAX, INT64_MIN}, b[2] = {2, -1};
  int64_t want[2] = {-2, INT64_MIN};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    int64_t out[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_INT64, IN, a, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_INT64, IN, b, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_INT64, OUT, out, 1, SHAPE(2))};
    run_ok(backends[k], "mul", t, 3, NULL, 0);
    assert_memory_equal(out, want, sizeof want);
  }
}

static void scale__float_and_int(void **state) {
  (void)state;
  float x[3] = {1.0f, -2.0f, 0.5f}, want[3] = {2.5f, -5.0f, 1.25f};
  int32_t xi[3] = {3, -4, 1 << 30}, wanti[3] = {-6, 8, INT32_MIN};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float y[3] = {0};
    int32_t yi[3] = {0};
    st_scalar s = scalar_f("s", 2.5);
    st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_FLOAT32, OUT, y, 1, SHAPE(3))};
    run_ok(backends[k], "scale", t, 2, &s, 1);
    assert_memory_equal(y, want, sizeof want);
    /* A float scalar on an integer tensor truncates: -2.5 -> -2; and
     * 2^30 * -2 wraps to INT32_MIN. */
    st_scalar si = scalar_f("s", -2.5);
    st_tensor u[2] = {mk("x", ST_DTYPE_INT32, IN, xi, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_INT32, OUT, yi, 1, SHAPE(3))};
    run_ok(backends[k], "scale", u, 2, &si, 1);
    assert_memory_equal(yi, wanti, sizeof wanti);
  }
}

static void axpy__float64_and_int8_wrap(void **state) {
  (void)state;
  double x[3] = {1, 2, -3}, want[3] = {10.5, 2.5, -6.5};
  int8_t xi[3] = {100, -100, 1}, wanti[3] = {44, -44, 5};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    double y[3] = {10, 1.5, -5};
    int8_t yi[3] = {100, -100, 3};
    st_scalar a = scalar_f("alpha", 0.5);
    st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT64, IN, x, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_FLOAT64, INOUT, y, 1, SHAPE(3))};
    run_ok(backends[k], "axpy", t, 2, &a, 1);
    assert_memory_equal(y, want, sizeof want);
    /* 2*100 + 100 = 300 = 44 mod 256; 2*-100 - 100 = -300 = -44. */
    st_scalar ai = scalar_i("alpha", 2);
    st_tensor u[2] = {mk("x", ST_DTYPE_INT8, IN, xi, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_INT8, INOUT, yi, 1, SHAPE(3))};
    run_ok(backends[k], "axpy", u, 2, &ai, 1);
    assert_memory_equal(yi, wanti, sizeof wanti);
  }
}

static void relu__float_int_uint8(void **state) {
  (void)state;
  float x[4] = {-1.5f, 0.0f, 2.0f, -0.25f}, want[4] = {0, 0, 2.0f, 0};
  int8_t xi[3] = {-128, 0, 127}, wanti[3] = {0, 0, 127};
  uint8_t xu[3] = {0, 128, 255};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float y[4] = {9, 9, 9, 9};
    int8_t yi[3] = {9, 9, 9};
    uint8_t yu[3] = {9, 9, 9};
    st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 1, SHAPE(4)),
                      mk("y", ST_DTYPE_FLOAT32, OUT, y, 1, SHAPE(4))};
    run_ok(backends[k], "relu", t, 2, NULL, 0);
    assert_memory_equal(y, want, sizeof want);
    st_tensor u[2] = {mk("x", ST_DTYPE_INT8, IN, xi, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_INT8, OUT, yi, 1, SHAPE(3))};
    run_ok(backends[k], "relu", u, 2, NULL, 0);
    assert_memory_equal(yi, wanti, sizeof wanti);
    st_tensor v[2] = {mk("x", ST_DTYPE_UINT8, IN, xu, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_UINT8, OUT, yu, 1, SHAPE(3))};
    run_ok(backends[k], "relu", v, 2, NULL, 0);
    assert_memory_equal(yu, xu, sizeof xu);
  }
}

static void relu__nan_stays_nan(void **state) {
  (void)state;
  double x[1] = {NAN};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    double y[1] = {0};
    st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT64, IN, x, 1, SHAPE(1)),
                      mk("y", ST_DTYPE_FLOAT64, OUT, y, 1, SHAPE(1))};
    run_ok(backends[k], "relu", t, 2, NULL, 0);
    assert_true(isnan(y[0]));
  }
}

/* Unsigned integers: relu is the identity (uint64's top bit is a value
 * bit), arithmetic wraps at the width. */
static void relu_add_mul__unsigned_wide(void **state) {
  (void)state;
  uint64_t x64[3] = {UINT64_C(0x8000000000000001), UINT64_MAX, 5};
  uint64_t b64[3] = {1, 2, 3}, sum64[3] = {UINT64_C(0x8000000000000002), 1, 8};
  uint16_t x16[2] = {300, 65535}, want16[2] = {24464, 1};
  uint32_t x32[2] = {UINT32_MAX, 7}, want32[2] = {UINT32_MAX - 1, 14};
  st_scalar two = scalar_i("s", 2);
  for (size_t k = 0; k < N_BACKENDS; k++) {
    uint64_t y64[3] = {0};
    uint16_t y16[2] = {0};
    uint32_t y32[2] = {0};
    st_tensor t[2] = {mk("x", ST_DTYPE_UINT64, IN, x64, 1, SHAPE(3)),
                      mk("y", ST_DTYPE_UINT64, OUT, y64, 1, SHAPE(3))};
    run_ok(backends[k], "relu", t, 2, NULL, 0);
    assert_memory_equal(y64, x64, sizeof x64);
    st_tensor u[3] = {mk("a", ST_DTYPE_UINT64, IN, x64, 1, SHAPE(3)),
                      mk("b", ST_DTYPE_UINT64, IN, b64, 1, SHAPE(3)),
                      mk("out", ST_DTYPE_UINT64, OUT, y64, 1, SHAPE(3))};
    run_ok(backends[k], "add", u, 3, NULL, 0);
    assert_memory_equal(y64, sum64, sizeof sum64);
    st_tensor v[3] = {mk("a", ST_DTYPE_UINT16, IN, x16, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_UINT16, IN, x16, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_UINT16, OUT, y16, 1, SHAPE(2))};
    run_ok(backends[k], "mul", v, 3, NULL, 0); /* 90000 mod 2^16 */
    assert_memory_equal(y16, want16, sizeof want16);
    st_tensor w[2] = {mk("x", ST_DTYPE_UINT32, IN, x32, 1, SHAPE(2)),
                      mk("y", ST_DTYPE_UINT32, OUT, y32, 1, SHAPE(2))};
    run_ok(backends[k], "scale", w, 2, &two, 1);
    assert_memory_equal(y32, want32, sizeof want32);
  }
}

/* docs/scene-format.md#ops, mixed precision: float16 in, float32 out is
 * rounded once, from double: 1 + 2^-11 and 1.5 * (1 + 2^-10) are float32
 * values that float16 cannot hold, so a kernel that rounded to the
 * inputs' dtype first would give 1 and 1.5. Every element-wise and
 * structured op, every backend. */
static void mixed__float16_in_float32_out_rounds_once(void **state) {
  (void)state;
  const uint16_t one = st_f32_to_f16(1.0f), tiny = st_f32_to_f16(0x1p-11f);
  uint16_t a[2] = {one, tiny}, b[2] = {tiny, one};
  uint16_t xs[1] = {st_f32_to_f16(1.0f + 0x1p-10f)};
  uint16_t col[2] = {one, one};
  st_scalar s = scalar_f("s", 1.5);
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float out[2] = {0}, y[1] = {0}, c[1] = {0}, r[1] = {0}, cp[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT16, IN, a, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_FLOAT16, IN, b, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_FLOAT32, OUT, out, 1, SHAPE(2))};
    run_ok(backends[k], "add", t, 3, NULL, 0);
    assert_true(out[0] == 1.0f + 0x1p-11f && out[1] == 1.0f + 0x1p-11f);
    st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT16, IN, xs, 1, SHAPE(1)),
                      mk("y", ST_DTYPE_FLOAT32, OUT, y, 1, SHAPE(1))};
    run_ok(backends[k], "scale", u, 2, &s, 1);
    assert_true(y[0] == 1.5f + 0x1p-10f + 0x1p-11f);
    st_tensor m[3] = {mk("a", ST_DTYPE_FLOAT16, IN, a, 2, SHAPE(1, 2)),
                      mk("b", ST_DTYPE_FLOAT16, IN, col, 2, SHAPE(2, 1)),
                      mk("c", ST_DTYPE_FLOAT32, OUT, c, 2, SHAPE(1, 1))};
    run_ok(backends[k], "matmul", m, 3, NULL, 0);
    assert_true(c[0] == 1.0f + 0x1p-11f);
    st_tensor rs[2] = {mk("x", ST_DTYPE_FLOAT16, IN, a, 1, SHAPE(2)),
                       mk("out", ST_DTYPE_FLOAT32, OUT, r, 1, SHAPE(1))};
    run_ok(backends[k], "reduce_sum", rs, 2, NULL, 0);
    assert_true(r[0] == 1.0f + 0x1p-11f);
    st_tensor cpy[2] = {mk("x", ST_DTYPE_FLOAT16, IN, a, 1, SHAPE(2)),
                        mk("y", ST_DTYPE_FLOAT32, OUT, cp, 1, SHAPE(2))};
    run_ok(backends[k], "copy", cpy, 2, NULL, 0);
    assert_true(cp[0] == 1.0f && cp[1] == 0x1p-11f);
    memset(cp, 0, sizeof cp);
    st_tensor tr[2] = {mk("x", ST_DTYPE_FLOAT16, IN, a, 2, SHAPE(1, 2)),
                       mk("y", ST_DTYPE_FLOAT32, OUT, cp, 2, SHAPE(2, 1))};
    run_ok(backends[k], "transpose", tr, 2, NULL, 0);
    assert_true(cp[0] == 1.0f && cp[1] == 0x1p-11f);
    float sm[2] = {0};
    st_tensor so[2] = {mk("x", ST_DTYPE_FLOAT16, IN, col, 2, SHAPE(1, 2)),
                       mk("y", ST_DTYPE_FLOAT32, OUT, sm, 2, SHAPE(1, 2))};
    run_ok(backends[k], "softmax", so, 2, NULL, 0);
    assert_true(sm[0] == 0.5f && sm[1] == 0.5f);
  }
  /* The common module's copy converts too. */
  float cp[2] = {0};
  st_tensor cpy[2] = {mk("x", ST_DTYPE_FLOAT16, IN, a, 1, SHAPE(2)),
                      mk("y", ST_DTYPE_FLOAT32, OUT, cp, 1, SHAPE(2))};
  run_ok(ST_BACKEND_COMMON, "copy", cpy, 2, NULL, 0);
  assert_true(cp[0] == 1.0f && cp[1] == 0x1p-11f);
}

/* FP8 in and out: float32 inputs rounded once into float8_e4m3fn (1.0625
 * + 2^-20 is above the tie, so 1.125), float8_e5m2 overflowing to
 * infinity, and float8_e4m3fn inputs summed into float32 exactly. */
static void mixed__fp8_outputs_and_inputs(void **state) {
  (void)state;
  float a[2] = {1.0f, 60000.0f}, b[2] = {0.0625f + 0x1p-20f, 2000.0f};
  uint8_t e4[2] = {st_f64_to_e4m3fn(1.0), st_f64_to_e4m3fn(0.0625)};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    uint8_t o4[2] = {0}, o5[2] = {0};
    float f[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_FLOAT32, IN, b, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_FLOAT8_E4M3FN, OUT, o4, 1, SHAPE(2))};
    run_ok(backends[k], "add", t, 3, NULL, 0);
    assert_int_equal(o4[0], 0x39);
    assert_int_equal(o4[1], 0x7f); /* 62000: e4m3fn has no infinity */
    t[2] = mk("out", ST_DTYPE_FLOAT8_E5M2, OUT, o5, 1, SHAPE(2));
    run_ok(backends[k], "add", t, 3, NULL, 0);
    assert_int_equal(o5[0], st_f64_to_e5m2(1.0625));
    assert_int_equal(o5[1], 0x7c);
    st_tensor u[3] = {mk("a", ST_DTYPE_FLOAT8_E4M3FN, IN, e4, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_FLOAT8_E4M3FN, IN, e4, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_FLOAT32, OUT, f, 1, SHAPE(2))};
    run_ok(backends[k], "mul", u, 3, NULL, 0);
    assert_true(f[0] == 1.0f && f[1] == 0x1p-8f);
  }
}

static void copy__every_dtype_and_common(void **state) {
  (void)state;
  static const char *const copiers[] = {"reference", "cpu", "threads",
                                        ST_BACKEND_COMMON};
  uint8_t src[48];
  for (size_t i = 0; i < sizeof src; i++)
    src[i] = (uint8_t)(i * 37 + 1);
  for (int d = 0; d < ST_DTYPE_COUNT; d++) {
    size_t n = sizeof src / st_dtype_size((st_dtype)d);
    if (d == ST_DTYPE_BOOL)
      for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i % 3 == 0);
    for (size_t k = 0; k < 4; k++) {
      uint8_t dst[48] = {0};
      st_tensor t[2] = {mk("x", (st_dtype)d, IN, src, 1, SHAPE((int64_t)n)),
                        mk("y", (st_dtype)d, OUT, dst, 1, SHAPE((int64_t)n))};
      run_ok(copiers[k], "copy", t, 2, NULL, 0);
      assert_memory_equal(dst, src, sizeof src);
    }
  }
}

static void add__float16_and_bfloat16_slow_path(void **state) {
  (void)state;
  /* 1.5 + 0.25 = 1.75 and 2048 + 1 = 2049 -> 2048 in float16 (ties to
   * even: 2049 is halfway between 2048 and 2050). */
  uint16_t a[2] = {st_f32_to_f16(1.5f), st_f32_to_f16(2048.0f)};
  uint16_t b[2] = {st_f32_to_f16(0.25f), st_f32_to_f16(1.0f)};
  uint16_t want[2] = {st_f32_to_f16(1.75f), st_f32_to_f16(2048.0f)};
  uint16_t ab[2] = {st_f32_to_bf16(3.0f), st_f32_to_bf16(-1.0f)};
  uint16_t bb[2] = {st_f32_to_bf16(0.5f), st_f32_to_bf16(0.5f)};
  uint16_t wantb[2] = {st_f32_to_bf16(3.5f), st_f32_to_bf16(-0.5f)};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    uint16_t out[2] = {0}, outb[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT16, IN, a, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_FLOAT16, IN, b, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_FLOAT16, OUT, out, 1, SHAPE(2))};
    run_ok(backends[k], "add", t, 3, NULL, 0);
    assert_memory_equal(out, want, sizeof want);
    st_tensor u[3] = {mk("a", ST_DTYPE_BFLOAT16, IN, ab, 1, SHAPE(2)),
                      mk("b", ST_DTYPE_BFLOAT16, IN, bb, 1, SHAPE(2)),
                      mk("out", ST_DTYPE_BFLOAT16, OUT, outb, 1, SHAPE(2))};
    run_ok(backends[k], "add", u, 3, NULL, 0);
    assert_memory_equal(outb, wantb, sizeof wantb);
  }
}

/* The half-precision slow path of the structured ops: values exactly
 * representable, so every backend must produce these bits. */
static void half_precision__matmul_softmax_reduce_scale(void **state) {
  (void)state;
  uint16_t a[4], b[4], want[4];
  const float av[4] = {1, 2, 3, 4}, bv[4] = {0.5f, 0, 0, 2};
  const float wv[4] = {0.5f, 4, 1.5f, 8};
  for (int i = 0; i < 4; i++) {
    a[i] = st_f32_to_f16(av[i]);
    b[i] = st_f32_to_f16(bv[i]);
    want[i] = st_f32_to_f16(wv[i]);
  }
  uint16_t sx[2] = {st_f32_to_f16(1.0f), st_f32_to_f16(1.0f)};
  uint16_t rx[3] = {st_f32_to_bf16(1.0f), st_f32_to_bf16(2.0f),
                    st_f32_to_bf16(0.5f)};
  uint16_t cx[2] = {st_f32_to_bf16(1.0f), st_f32_to_bf16(-2.0f)};
  uint16_t cwant[2] = {st_f32_to_bf16(3.0f), st_f32_to_bf16(-6.0f)};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    uint16_t c[4] = {0}, sy[2] = {0}, rout = 0, cy[2] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT16, IN, a, 2, SHAPE(2, 2)),
                      mk("b", ST_DTYPE_FLOAT16, IN, b, 2, SHAPE(2, 2)),
                      mk("c", ST_DTYPE_FLOAT16, OUT, c, 2, SHAPE(2, 2))};
    run_ok(backends[k], "matmul", t, 3, NULL, 0);
    assert_memory_equal(c, want, sizeof want);
    st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT16, IN, sx, 2, SHAPE(1, 2)),
                      mk("y", ST_DTYPE_FLOAT16, OUT, sy, 2, SHAPE(1, 2))};
    run_ok(backends[k], "softmax", u, 2, NULL, 0);
    assert_int_equal(sy[0], st_f32_to_f16(0.5f));
    assert_int_equal(sy[1], st_f32_to_f16(0.5f));
    st_tensor v[2] = {mk("x", ST_DTYPE_BFLOAT16, IN, rx, 1, SHAPE(3)),
                      mk("out", ST_DTYPE_BFLOAT16, OUT, &rout, 0, NULL)};
    run_ok(backends[k], "reduce_sum", v, 2, NULL, 0);
    assert_int_equal(rout, st_f32_to_bf16(3.5f));
    st_scalar s = scalar_f("s", 3.0);
    st_tensor w[2] = {mk("x", ST_DTYPE_BFLOAT16, IN, cx, 1, SHAPE(2)),
                      mk("y", ST_DTYPE_BFLOAT16, OUT, cy, 1, SHAPE(2))};
    run_ok(backends[k], "scale", w, 2, &s, 1);
    assert_memory_equal(cy, cwant, sizeof cwant);
  }
}

/* ---- matmul, softmax, reduce_sum, transpose ---- */

static void matmul__hand_computed(void **state) {
  (void)state;
  /* [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154] */
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  float want[4] = {58, 64, 139, 154};
  double ad[6] = {1, 2, 3, 4, 5, 6}, bd[6] = {7, 8, 9, 10, 11, 12};
  double wantd[4] = {58, 64, 139, 154};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float c[4] = {0};
    double cd[4] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 2, SHAPE(2, 3)),
                      mk("b", ST_DTYPE_FLOAT32, IN, b, 2, SHAPE(3, 2)),
                      mk("c", ST_DTYPE_FLOAT32, OUT, c, 2, SHAPE(2, 2))};
    run_ok(backends[k], "matmul", t, 3, NULL, 0);
    assert_memory_equal(c, want, sizeof want);
    st_tensor u[3] = {mk("a", ST_DTYPE_FLOAT64, IN, ad, 2, SHAPE(2, 3)),
                      mk("b", ST_DTYPE_FLOAT64, IN, bd, 2, SHAPE(3, 2)),
                      mk("c", ST_DTYPE_FLOAT64, OUT, cd, 2, SHAPE(2, 2))};
    run_ok(backends[k], "matmul", u, 3, NULL, 0);
    assert_memory_equal(cd, wantd, sizeof wantd);
  }
}

static void matmul__empty_k_gives_zeros(void **state) {
  (void)state;
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float c[4] = {5, 5, 5, 5}, zero[4] = {0};
    st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, NULL, 2, SHAPE(2, 0)),
                      mk("b", ST_DTYPE_FLOAT32, IN, NULL, 2, SHAPE(0, 2)),
                      mk("c", ST_DTYPE_FLOAT32, OUT, c, 2, SHAPE(2, 2))};
    run_ok(backends[k], "matmul", t, 3, NULL, 0);
    assert_memory_equal(c, zero, sizeof zero);
  }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static double rnd(void) {
  /* splitmix64: test data only. */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* A size that exercises partial tiles (M % 4, N % 256 != 0) and chunking;
 * cpu and threads against the golden within float32's default tolerance,
 * for several thread counts, and as three shards written separately. */
static void matmul__random_matches_reference(void **state) {
  (void)state;
  enum { M = 37, K = 300, N = 263 };
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
  float *gold = malloc(sizeof(float) * M * N),
        *c = malloc(sizeof(float) * M * N);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(gold);
  assert_non_null(c);
  for (size_t i = 0; i < M * K; i++)
    a[i] = (float)rnd();
  for (size_t i = 0; i < K * N; i++)
    b[i] = (float)rnd();
  st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 2, SHAPE(M, K)),
                    mk("b", ST_DTYPE_FLOAT32, IN, b, 2, SHAPE(K, N)),
                    mk("c", ST_DTYPE_FLOAT32, OUT, gold, 2, SHAPE(M, N))};
  assert_int_equal(
      call_op("reference", "matmul", t, 3, NULL, 0, 0, 1, 1, NULL, 0), ST_OK);
  t[2].data = c;
  static const unsigned threads[] = {1, 2, 4};
  for (size_t k = 1; k < N_BACKENDS; k++) {
    for (size_t th = 0; th < 3; th++) {
      memset(c, 0, sizeof(float) * M * N);
      assert_int_equal(call_op(backends[k], "matmul", t, 3, NULL, 0, 0, 1,
                               threads[th], NULL, 0),
                       ST_OK);
      for (size_t i = 0; i < (size_t)M * N; i++) {
        double diff = fabs((double)c[i] - (double)gold[i]);
        if (diff > 1e-5 + 1.3e-6 * fabs((double)gold[i]))
          fail_msg("%s threads=%u c[%zu] = %.9g, golden %.9g", backends[k],
                   threads[th], i, c[i], gold[i]);
      }
    }
    memset(c, 0, sizeof(float) * M * N);
    for (unsigned s = 0; s < 3; s++)
      assert_int_equal(
          call_op(backends[k], "matmul", t, 3, NULL, 0, s, 3, 2, NULL, 0),
          ST_OK);
    /* Same summation order as the golden: equal bit for bit. */
    assert_memory_equal(c, gold, sizeof(float) * M * N);
  }
  free(a);
  free(b);
  free(gold);
  free(c);
}

static void softmax__rows_hand_computed(void **state) {
  (void)state;
  /* exp(0) : exp(ln 3) = 1 : 3, so [0.25, 0.75]; shifting a row by 1000
   * changes nothing (and would overflow exp without the max). */
  double x[2][2] = {{0.0, log(3.0)}, {1000.0, 1000.0 + log(3.0)}};
  float xf[3] = {1.0f, 1.0f, 1.0f};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    double y[4] = {0};
    st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT64, IN, x, 2, SHAPE(2, 2)),
                      mk("y", ST_DTYPE_FLOAT64, OUT, y, 2, SHAPE(2, 2))};
    run_ok(backends[k], "softmax", t, 2, NULL, 0);
    assert_float_equal(y[0], 0.25, 1e-12);
    assert_float_equal(y[1], 0.75, 1e-12);
    assert_float_equal(y[2], 0.25, 1e-12);
    assert_float_equal(y[3], 0.75, 1e-12);
    float yf[3] = {0};
    st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT32, IN, xf, 2, SHAPE(1, 3)),
                      mk("y", ST_DTYPE_FLOAT32, OUT, yf, 2, SHAPE(1, 3))};
    run_ok(backends[k], "softmax", u, 2, NULL, 0);
    for (int i = 0; i < 3; i++)
      assert_true(yf[i] == (float)(1.0 / 3.0));
  }
}

static void reduce_sum__hand_computed(void **state) {
  (void)state;
  float x[5] = {1.5f, 2.0f, -0.5f, 4.0f, 0.25f};
  int8_t xi[4] = {100, 100, 100, -44}; /* 256 wraps to 0 in int8 */
  for (size_t k = 0; k < N_BACKENDS; k++) {
    float out = -1;
    st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 1, SHAPE(5)),
                      mk("out", ST_DTYPE_FLOAT32, OUT, &out, 0, NULL)};
    run_ok(backends[k], "reduce_sum", t, 2, NULL, 0);
    assert_true(out == 7.25f);
    int8_t oi = 5;
    st_tensor u[2] = {mk("x", ST_DTYPE_INT8, IN, xi, 2, SHAPE(2, 2)),
                      mk("out", ST_DTYPE_INT8, OUT, &oi, 1, SHAPE(1))};
    run_ok(backends[k], "reduce_sum", u, 2, NULL, 0);
    assert_int_equal(oi, 0);
    double od = 3;
    st_tensor v[2] = {mk("x", ST_DTYPE_FLOAT64, IN, NULL, 1, SHAPE(0)),
                      mk("out", ST_DTYPE_FLOAT64, OUT, &od, 0, NULL)};
    run_ok(backends[k], "reduce_sum", v, 2, NULL, 0);
    assert_true(od == 0.0);
  }
}

/* Fixed blocks: the same bits on every backend for 1, 2 and 4 threads,
 * over a size that is not a multiple of the block. */
static void reduce_sum__bitwise_identical_across_threads(void **state) {
  (void)state;
  enum { N = 5 * 4096 + 123 };
  float *x = malloc(sizeof(float) * N);
  assert_non_null(x);
  for (size_t i = 0; i < N; i++)
    x[i] = (float)(rnd() * 1000.0);
  float first = 0;
  int have = 0;
  static const unsigned threads[] = {1, 2, 4};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    for (size_t th = 0; th < 3; th++) {
      float out = 0;
      st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 1, SHAPE(N)),
                        mk("out", ST_DTYPE_FLOAT32, OUT, &out, 1, SHAPE(1))};
      assert_int_equal(call_op(backends[k], "reduce_sum", t, 2, NULL, 0, 0, 1,
                               threads[th], NULL, 0),
                       ST_OK);
      if (!have) {
        first = out;
        have = 1;
      }
      assert_memory_equal(&out, &first, sizeof out);
    }
  }
  /* And it is the fixed-block sum, computed here independently. */
  double total = 0;
  for (size_t b = 0; b < N; b += ST__REDUCE_BLOCK) {
    double part = 0;
    for (size_t i = b; i < N && i < b + ST__REDUCE_BLOCK; i++)
      part += x[i];
    total += part;
  }
  assert_true(first == (float)total);
  free(x);
}

/* Shards are whole blocks: each shard's partial is the sum of the blocks
 * st_shard_range gives it, and for integers the partials add up to the
 * total exactly, whatever the shard count. */
static void reduce_sum__shard_partials(void **state) {
  (void)state;
  enum { N = 7 * 4096 + 5 };
  int32_t *x = malloc(sizeof(int32_t) * N);
  double *xd = malloc(sizeof(double) * N);
  assert_non_null(x);
  assert_non_null(xd);
  for (size_t i = 0; i < N; i++) {
    x[i] = (int32_t)(rnd() * 2e9);
    xd[i] = rnd();
  }
  uint32_t total = 0;
  for (size_t i = 0; i < N; i++)
    total += (uint32_t)x[i];
  size_t blocks = (N + ST__REDUCE_BLOCK - 1) / ST__REDUCE_BLOCK;
  for (size_t k = 0; k < N_BACKENDS; k++) {
    for (unsigned shards = 1; shards <= 5; shards++) {
      uint32_t sum = 0;
      for (unsigned s = 0; s < shards; s++) {
        int32_t part = 0;
        st_tensor t[2] = {mk("x", ST_DTYPE_INT32, IN, x, 1, SHAPE(N)),
                          mk("out", ST_DTYPE_INT32, OUT, &part, 0, NULL)};
        assert_int_equal(call_op(backends[k], "reduce_sum", t, 2, NULL, 0, s,
                                 shards, 2, NULL, 0),
                         ST_OK);
        sum += (uint32_t)part;

        double dpart = -1;
        st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT64, IN, xd, 1, SHAPE(N)),
                          mk("out", ST_DTYPE_FLOAT64, OUT, &dpart, 0, NULL)};
        assert_int_equal(call_op(backends[k], "reduce_sum", u, 2, NULL, 0, s,
                                 shards, 2, NULL, 0),
                         ST_OK);
        size_t kb0, kb1;
        st_shard_range(blocks, s, shards, &kb0, &kb1);
        double want = 0;
        for (size_t kb = kb0; kb < kb1; kb++) {
          double p = 0;
          for (size_t i = kb * ST__REDUCE_BLOCK;
               i < N && i < (kb + 1) * ST__REDUCE_BLOCK; i++)
            p += xd[i];
          want += p;
        }
        assert_memory_equal(&dpart, &want, sizeof want);
      }
      assert_int_equal(sum, total);
    }
  }
  free(x);
  free(xd);
}

static void transpose__hand_computed(void **state) {
  (void)state;
  int16_t x[6] = {1, 2, 3, 4, 5, 6}, want[6] = {1, 4, 2, 5, 3, 6};
  double xd[6] = {1, 2, 3, 4, 5, 6}, wantd[6] = {1, 4, 2, 5, 3, 6};
  uint8_t xb[6] = {1, 0, 0, 1, 1, 0}, wantb[6] = {1, 1, 0, 1, 0, 0};
  for (size_t k = 0; k < N_BACKENDS; k++) {
    int16_t y[6] = {0};
    double yd[6] = {0};
    uint8_t yb[6] = {7, 7, 7, 7, 7, 7};
    st_tensor t[2] = {mk("x", ST_DTYPE_INT16, IN, x, 2, SHAPE(2, 3)),
                      mk("y", ST_DTYPE_INT16, OUT, y, 2, SHAPE(3, 2))};
    run_ok(backends[k], "transpose", t, 2, NULL, 0);
    assert_memory_equal(y, want, sizeof want);
    st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT64, IN, xd, 2, SHAPE(2, 3)),
                      mk("y", ST_DTYPE_FLOAT64, OUT, yd, 2, SHAPE(3, 2))};
    run_ok(backends[k], "transpose", u, 2, NULL, 0);
    assert_memory_equal(yd, wantd, sizeof wantd);
    st_tensor v[2] = {mk("x", ST_DTYPE_BOOL, IN, xb, 2, SHAPE(2, 3)),
                      mk("y", ST_DTYPE_BOOL, OUT, yb, 2, SHAPE(3, 2))};
    run_ok(backends[k], "transpose", v, 2, NULL, 0);
    assert_memory_equal(yb, wantb, sizeof wantb);
  }
}

/* Larger than one tile in both directions, with ragged edges. */
static void transpose__large_matches_reference(void **state) {
  (void)state;
  enum { R = 70, C = 101 };
  int32_t *x = malloc(sizeof(int32_t) * R * C);
  int32_t *gold = malloc(sizeof(int32_t) * R * C);
  int32_t *y = malloc(sizeof(int32_t) * R * C);
  assert_non_null(x);
  assert_non_null(gold);
  assert_non_null(y);
  for (size_t i = 0; i < R * C; i++)
    x[i] = (int32_t)i;
  for (size_t r = 0; r < R; r++)
    for (size_t c = 0; c < C; c++)
      gold[c * R + r] = x[r * C + c];
  for (size_t k = 0; k < N_BACKENDS; k++) {
    for (unsigned shards = 1; shards <= 3; shards++) {
      memset(y, 0, sizeof(int32_t) * R * C);
      st_tensor t[2] = {mk("x", ST_DTYPE_INT32, IN, x, 2, SHAPE(R, C)),
                        mk("y", ST_DTYPE_INT32, OUT, y, 2, SHAPE(C, R))};
      for (unsigned s = 0; s < shards; s++)
        assert_int_equal(call_op(backends[k], "transpose", t, 2, NULL, 0, s,
                                 shards, 4, NULL, 0),
                         ST_OK);
      assert_memory_equal(y, gold, sizeof(int32_t) * R * C);
    }
  }
  free(x);
  free(gold);
  free(y);
}

/* Element-wise shards cover disjoint ranges that together are the whole
 * tensor; each shard leaves the others' elements alone. */
static void add__shards_cover_tensor(void **state) {
  (void)state;
  enum { N = 100003 };
  int64_t *a = malloc(sizeof(int64_t) * N), *out = malloc(sizeof(int64_t) * N);
  assert_non_null(a);
  assert_non_null(out);
  for (size_t i = 0; i < N; i++)
    a[i] = (int64_t)i;
  for (size_t k = 0; k < N_BACKENDS; k++) {
    for (size_t i = 0; i < N; i++)
      out[i] = -1;
    st_tensor t[3] = {mk("a", ST_DTYPE_INT64, IN, a, 1, SHAPE(N)),
                      mk("b", ST_DTYPE_INT64, IN, a, 1, SHAPE(N)),
                      mk("out", ST_DTYPE_INT64, OUT, out, 1, SHAPE(N))};
    assert_int_equal(
        call_op(backends[k], "add", t, 3, NULL, 0, 1, 3, 2, NULL, 0), ST_OK);
    size_t b, e;
    st_shard_range(N, 1, 3, &b, &e);
    for (size_t i = 0; i < N; i++)
      if ((i >= b && i < e) ? out[i] != 2 * (int64_t)i : out[i] != -1)
        fail_msg("%s: out[%zu] = %lld", backends[k], i, (long long)out[i]);
    assert_int_equal(
        call_op(backends[k], "add", t, 3, NULL, 0, 0, 3, 2, NULL, 0), ST_OK);
    assert_int_equal(
        call_op(backends[k], "add", t, 3, NULL, 0, 2, 3, 2, NULL, 0), ST_OK);
    for (size_t i = 0; i < N; i++)
      assert_true(out[i] == 2 * (int64_t)i);
  }
  free(a);
  free(out);
}

static void shard_range__splits_evenly(void **state) {
  (void)state;
  size_t b, e;
  st_shard_range(10, 0, 3, &b, &e);
  assert_int_equal(b, 0);
  assert_int_equal(e, 4);
  st_shard_range(10, 1, 3, &b, &e);
  assert_int_equal(b, 4);
  assert_int_equal(e, 7);
  st_shard_range(10, 2, 3, &b, &e);
  assert_int_equal(b, 7);
  assert_int_equal(e, 10);
  st_shard_range(2, 3, 4, &b, &e);
  assert_int_equal(b, e);
  st_shard_range(5, 0, 1, &b, &e);
  assert_int_equal(b, 0);
  assert_int_equal(e, 5);
}

/* ---- binding errors: every backend reports the same message ---- */

static void expect_bind(const char *op, st_tensor *t, size_t nt,
                        const st_scalar *s, size_t ns, const char *want) {
  for (size_t k = 0; k < N_BACKENDS; k++) {
    char msg[ST_OP_MESSAGE_MAX];
    st_status rc =
        call_op(backends[k], op, t, nt, s, ns, 0, 1, 1, msg, sizeof msg);
    assert_int_equal(rc, ST_EBIND);
    assert_string_equal(msg, want);
  }
}

static void op_check__wrong_count(void **state) {
  (void)state;
  float a[2] = {0}, b[2] = {0};
  st_tensor t[2] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(2)),
                    mk("b", ST_DTYPE_FLOAT32, OUT, b, 1, SHAPE(2))};
  st_scalar s = scalar_f("s", 1.0);
  expect_bind("add", t, 2, &s, 1,
              "op 'add': expected 3 tensors (a, b, out) and 0 scalars, got 2 "
              "tensors and 1 scalar");
  expect_bind("scale", t, 2, NULL, 0,
              "op 'scale': expected 2 tensors (x, y) and 1 scalar (s), got 2 "
              "tensors and 0 scalars");
}

static void op_check__dtype_mismatch(void **state) {
  (void)state;
  float a[2] = {0}, out[2] = {0};
  int32_t b[2] = {0};
  st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(2)),
                    mk("b", ST_DTYPE_INT32, IN, b, 1, SHAPE(2)),
                    mk("out", ST_DTYPE_FLOAT32, OUT, out, 1, SHAPE(2))};
  expect_bind("add", t, 3, NULL, 0,
              "op 'add': tensor 'b' has dtype int32, expected float32 (the "
              "dtype of tensor 'a')");
}

/* Mixed precision's binding rules: the tensors an op reads share one
 * dtype; an output only written may be any float dtype when they are
 * float; integer ops keep one dtype; axpy reads y, so y shares x's. */
static void op_check__mixed_precision_rules(void **state) {
  (void)state;
  uint16_t h[2] = {0};
  float f[2] = {0};
  int32_t i[2] = {0};
  st_tensor t[3] = {mk("a", ST_DTYPE_INT32, IN, i, 1, SHAPE(2)),
                    mk("b", ST_DTYPE_INT32, IN, i, 1, SHAPE(2)),
                    mk("out", ST_DTYPE_FLOAT32, OUT, f, 1, SHAPE(2))};
  expect_bind("add", t, 3, NULL, 0,
              "op 'add': tensor 'out' has dtype float32, expected int32 (the "
              "dtype of tensor 'a')");
  t[0] = mk("a", ST_DTYPE_FLOAT16, IN, h, 1, SHAPE(2));
  t[1] = mk("b", ST_DTYPE_FLOAT16, IN, h, 1, SHAPE(2));
  t[2] = mk("out", ST_DTYPE_INT32, OUT, i, 1, SHAPE(2));
  expect_bind("add", t, 3, NULL, 0,
              "op 'add': tensor 'out' has dtype int32, expected a float dtype "
              "(tensor 'a' is float16; the output of float inputs may be any "
              "float dtype)");
  t[1] = mk("b", ST_DTYPE_FLOAT32, IN, f, 1, SHAPE(2));
  t[2] = mk("out", ST_DTYPE_FLOAT32, OUT, f, 1, SHAPE(2));
  expect_bind("add", t, 3, NULL, 0,
              "op 'add': tensor 'b' has dtype float32, expected float16 (the "
              "dtype of tensor 'a')");
  st_scalar s = scalar_f("alpha", 1.0);
  st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT16, IN, h, 1, SHAPE(2)),
                    mk("y", ST_DTYPE_FLOAT32, INOUT, f, 1, SHAPE(2))};
  expect_bind("axpy", u, 2, &s, 1,
              "op 'axpy': tensor 'y' has dtype float32, expected float16 (the "
              "dtype of tensor 'x')");
  uint8_t bo[2] = {0};
  st_tensor v[2] = {mk("x", ST_DTYPE_BOOL, IN, bo, 1, SHAPE(2)),
                    mk("y", ST_DTYPE_UINT8, OUT, bo, 1, SHAPE(2))};
  expect_bind("copy", v, 2, NULL, 0,
              "op 'copy': tensor 'y' has dtype uint8, expected bool (the "
              "dtype of tensor 'x')");
}

static void op_check__unsupported_dtype(void **state) {
  (void)state;
  int32_t a[4] = {0}, b[4] = {0}, c[4] = {0};
  st_tensor t[3] = {mk("a", ST_DTYPE_INT32, IN, a, 2, SHAPE(2, 2)),
                    mk("b", ST_DTYPE_INT32, IN, b, 2, SHAPE(2, 2)),
                    mk("c", ST_DTYPE_INT32, OUT, c, 2, SHAPE(2, 2))};
  expect_bind("matmul", t, 3, NULL, 0,
              "op 'matmul': tensor 'a' has dtype int32, expected a float "
              "dtype (float32, float64, float16, bfloat16, float8_e4m3fn, "
              "float8_e5m2)");
  uint8_t x[2] = {0}, y[2] = {0};
  st_tensor u[3] = {mk("a", ST_DTYPE_BOOL, IN, x, 1, SHAPE(2)),
                    mk("b", ST_DTYPE_BOOL, IN, x, 1, SHAPE(2)),
                    mk("out", ST_DTYPE_BOOL, OUT, y, 1, SHAPE(2))};
  expect_bind("add", u, 3, NULL, 0,
              "op 'add': tensor 'a' has dtype bool, expected a float or "
              "integer dtype (not bool)");
}

static void op_check__matmul_shapes(void **state) {
  (void)state;
  float a[10] = {0}, b[12] = {0}, c[8] = {0};
  st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 2, SHAPE(2, 5)),
                    mk("b", ST_DTYPE_FLOAT32, IN, b, 2, SHAPE(3, 4)),
                    mk("c", ST_DTYPE_FLOAT32, OUT, c, 2, SHAPE(2, 4))};
  expect_bind("matmul", t, 3, NULL, 0,
              "op 'matmul': tensor 'b' has shape [3, 4], expected [5, N] (K = "
              "5 from tensor 'a')");
  st_tensor u[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 2, SHAPE(2, 3)),
                    mk("b", ST_DTYPE_FLOAT32, IN, b, 2, SHAPE(3, 4)),
                    mk("c", ST_DTYPE_FLOAT32, OUT, c, 2, SHAPE(4, 2))};
  expect_bind("matmul", u, 3, NULL, 0,
              "op 'matmul': tensor 'c' has shape [4, 2], expected [2, 4] (M = "
              "2 from tensor 'a', N = 4 from tensor 'b')");
  st_tensor v[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(6)),
                    mk("b", ST_DTYPE_FLOAT32, IN, b, 2, SHAPE(3, 4)),
                    mk("c", ST_DTYPE_FLOAT32, OUT, c, 2, SHAPE(2, 4))};
  expect_bind("matmul", v, 3, NULL, 0,
              "op 'matmul': tensor 'a' has 1 dimension, expected 2 ([M, K])");
}

static void op_check__transpose_shape(void **state) {
  (void)state;
  float x[6] = {0}, y[6] = {0};
  st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 2, SHAPE(2, 3)),
                    mk("y", ST_DTYPE_FLOAT32, OUT, y, 2, SHAPE(2, 3))};
  expect_bind("transpose", t, 2, NULL, 0,
              "op 'transpose': tensor 'y' has shape [2, 3], expected [3, 2] "
              "(the transpose of tensor 'x', shape [2, 3])");
}

static void op_check__reduce_sum_out_shape(void **state) {
  (void)state;
  float x[6] = {0}, out[2] = {0};
  st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 1, SHAPE(6)),
                    mk("out", ST_DTYPE_FLOAT32, OUT, out, 1, SHAPE(2))};
  expect_bind("reduce_sum", t, 2, NULL, 0,
              "op 'reduce_sum': tensor 'out' has shape [2], expected [] or [1] "
              "(one element)");
  st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT32, IN, x, 1, SHAPE(6)),
                    mk("out", ST_DTYPE_FLOAT32, OUT, out, 2, SHAPE(1, 1))};
  expect_bind("reduce_sum", u, 2, NULL, 0,
              "op 'reduce_sum': tensor 'out' has shape [1, 1], expected [] or "
              "[1] (one element)");
}

static void op_check__elementwise_shape_and_role(void **state) {
  (void)state;
  float a[4] = {0}, b[3] = {0}, out[4] = {0};
  st_tensor t[3] = {mk("a", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(4)),
                    mk("b", ST_DTYPE_FLOAT32, IN, b, 1, SHAPE(3)),
                    mk("out", ST_DTYPE_FLOAT32, OUT, out, 1, SHAPE(4))};
  expect_bind("sub", t, 3, NULL, 0,
              "op 'sub': tensor 'b' has shape [3], expected [4] (the shape of "
              "tensor 'a')");
  st_tensor u[2] = {mk("x", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(4)),
                    mk("y", ST_DTYPE_FLOAT32, IN, out, 1, SHAPE(4))};
  expect_bind("relu", u, 2, NULL, 0,
              "op 'relu': tensor 'y' is written by the op (as 'y') but has "
              "role input; give it role output or inout");
}

static void op_check__scalar_out_of_int64(void **state) {
  (void)state;
  int32_t x[2] = {0}, y[2] = {0};
  st_tensor t[2] = {mk("x", ST_DTYPE_INT32, IN, x, 1, SHAPE(2)),
                    mk("y", ST_DTYPE_INT32, OUT, y, 1, SHAPE(2))};
  st_scalar s = scalar_f("factor", 1e30);
  expect_bind("scale", t, 2, &s, 1,
              "op 'scale': scalar 'factor' (s) = 1e+30 does not fit int64, "
              "needed for int32 tensor 'x'");
}

static void op_check__inconsistent_tensor(void **state) {
  (void)state;
  float a[4] = {0};
  st_tensor t[2] = {mk("x", ST_DTYPE_FLOAT32, IN, a, 1, SHAPE(4)),
                    mk("y", ST_DTYPE_FLOAT32, OUT, a, 1, SHAPE(4))};
  t[1].nbytes = 8;
  expect_bind("copy", t, 2, NULL, 0,
              "op 'copy': tensor 'y' is inconsistent (shape gives 4 elements, "
              "numel is 4, nbytes is 8)");
}

static void op_check__unknown_op_is_ok(void **state) {
  (void)state;
  st_op_call call;
  st_op_call_init(&call);
  call.op = "plugin_op";
  assert_int_equal(st_op_check(&call), ST_OK);
  assert_string_equal(call.message, "");
}

/* A call that was memset instead of st_op_call_init'ed (size 0), or one
 * smaller than ABI 2's first layout, is a usage error with a message. */
static void op_check__size_below_first_layout_is_einval(void **state) {
  (void)state;
  st_op_call call;
  memset(&call, 0, sizeof call);
  call.op = "add";
  assert_int_equal(st_op_check(&call), ST_EINVAL);
  assert_non_null(strstr(call.message, "st_op_call has size 0, less than"));
  assert_non_null(strstr(call.message, "st_op_call_init()"));
  st_op_call_init(&call);
  call.size = offsetof(st_op_call, message);
  call.op = "plugin_op";
  assert_int_equal(st_op_check(&call), ST_EINVAL);
}

/* st_op_call_init: the layout's size, shard 0 of 1, nothing reported. */
static void op_call_init__defaults(void **state) {
  (void)state;
  st_op_call call;
  memset(&call, 0x5a, sizeof call);
  st_op_call_init(&call);
  assert_int_equal(call.size, sizeof(st_op_call));
  assert_int_equal(call.shard_index, 0);
  assert_int_equal(call.shard_count, 1);
  assert_null(call.platform_state);
  assert_true(call.device_ns == ST_NS_NONE);
  assert_true(call.copy_ns == ST_NS_NONE);
  assert_true(ST_NS_NONE == UINT64_MAX);
  assert_string_equal(call.message, "");
}

static void op_call_fail__first_message_wins(void **state) {
  (void)state;
  st_op_call call;
  st_op_call_init(&call);
  assert_int_equal(st_op_call_fail(&call, ST_ESKIP, "first %d", 1), ST_ESKIP);
  assert_int_equal(st_op_call_fail(&call, ST_EBIND, "second\nline"), ST_EBIND);
  assert_string_equal(call.message, "first 1");
}

/* reduce_sum's partials are added in block order (the golden's), with
 * two's complement wrap-around for integers: the order shows in floats
 * (1e16 + 1 rounds back to 1e16, so the 1 is lost only in this order). */
static void reduce_combine__block_order_and_wrap(void **state) {
  (void)state;
  int64_t i64 = 7;
  double f64 = 7.0;
  st_tensor ti = mk("out", ST_DTYPE_INT64, ST_ROLE_OUTPUT, &i64, 1, SHAPE(1));
  st_tensor tf = mk("out", ST_DTYPE_FLOAT64, ST_ROLE_OUTPUT, &f64, 1, SHAPE(1));
  const st__partial pi[] = {{.u = UINT64_MAX}, {.u = 2}};
  const st__partial pf[] = {{.f = 1e16}, {.f = 1.0}, {.f = -1e16}};
  st__reduce_combine(&ti, pi, 2);
  assert_int_equal(i64, 1);
  st__reduce_combine(&tf, pf, 3);
  assert_true(f64 == 0.0);
  st__reduce_combine(&tf, NULL, 0);
  assert_true(f64 == 0.0 && !signbit(f64));
}

/* Every name in st__builtin_ops has a signature (a check that rejects a
 * wrong count) and an implementation on every backend, and the tables
 * hold nothing else. */
static void builtin_ops__every_backend_implements_each(void **state) {
  (void)state;
  static const st__op_entry *const tables[] = {st__reference_ops, st__cpu_ops,
                                               st__threads_ops};
  size_t n_ops = 0;
  for (const char *const *op = st__builtin_ops; *op; op++, n_ops++) {
    st_op_call call;
    st_op_call_init(&call);
    call.op = *op;
    assert_int_equal(st_op_check(&call), ST_EBIND);
    for (size_t k = 0; k < N_BACKENDS; k++) {
      assert_non_null(st__ops_find(tables[k], *op));
      assert_non_null(find(*op, backends[k]));
    }
  }
  /* As many as op_list.h has rows (st__builtin_ops ends with NULL). */
#define XX(...) +1
  assert_int_equal(n_ops, 0 ST__BUILTIN_OP_MAP(XX));
#undef XX
  for (size_t k = 0; k < N_BACKENDS; k++) {
    size_t n = 0;
    for (const st__op_entry *e = tables[k]; e->op; e++)
      n++;
    assert_int_equal(n, n_ops);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add__float32_every_backend),
      cmocka_unit_test(sub_mul__float64_every_backend),
      cmocka_unit_test(add__int8_wraps),
      cmocka_unit_test(mul__uint8_wraps),
      cmocka_unit_test(mul__int16_wraps_without_promotion_overflow),
      cmocka_unit_test(sub__int32_int64_wrap),
      cmocka_unit_test(mul__int64_wraps),
      cmocka_unit_test(scale__float_and_int),
      cmocka_unit_test(axpy__float64_and_int8_wrap),
      cmocka_unit_test(relu__float_int_uint8),
      cmocka_unit_test(relu__nan_stays_nan),
      cmocka_unit_test(relu_add_mul__unsigned_wide),
      cmocka_unit_test(mixed__float16_in_float32_out_rounds_once),
      cmocka_unit_test(mixed__fp8_outputs_and_inputs),
      cmocka_unit_test(copy__every_dtype_and_common),
      cmocka_unit_test(add__float16_and_bfloat16_slow_path),
      cmocka_unit_test(half_precision__matmul_softmax_reduce_scale),
      cmocka_unit_test(matmul__hand_computed),
      cmocka_unit_test(matmul__empty_k_gives_zeros),
      cmocka_unit_test(matmul__random_matches_reference),
      cmocka_unit_test(softmax__rows_hand_computed),
      cmocka_unit_test(reduce_sum__hand_computed),
      cmocka_unit_test(reduce_sum__bitwise_identical_across_threads),
      cmocka_unit_test(reduce_sum__shard_partials),
      cmocka_unit_test(transpose__hand_computed),
      cmocka_unit_test(transpose__large_matches_reference),
      cmocka_unit_test(add__shards_cover_tensor),
      cmocka_unit_test(shard_range__splits_evenly),
      cmocka_unit_test(op_check__wrong_count),
      cmocka_unit_test(op_check__dtype_mismatch),
      cmocka_unit_test(op_check__mixed_precision_rules),
      cmocka_unit_test(op_check__unsupported_dtype),
      cmocka_unit_test(op_check__matmul_shapes),
      cmocka_unit_test(op_check__transpose_shape),
      cmocka_unit_test(op_check__reduce_sum_out_shape),
      cmocka_unit_test(op_check__elementwise_shape_and_role),
      cmocka_unit_test(op_check__scalar_out_of_int64),
      cmocka_unit_test(op_check__inconsistent_tensor),
      cmocka_unit_test(op_check__unknown_op_is_ok),
      cmocka_unit_test(op_call_fail__first_message_wins),
      cmocka_unit_test(op_check__size_below_first_layout_is_einval),
      cmocka_unit_test(op_call_init__defaults),
      cmocka_unit_test(builtin_ops__every_backend_implements_each),
      cmocka_unit_test(reduce_combine__block_order_and_wrap),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
