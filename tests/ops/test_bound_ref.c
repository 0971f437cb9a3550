/* SPDX-License-Identifier: MIT */
/* `tolerance: bound` and `init: exact` below the CLI
 * (docs/scene-format.md#the-error-bound, #exact-inputs):
 * - the reference with magnitude sums (ops/ref_bound.c) writes the bytes
 *   the reference op writes, for every op with a bound in float32,
 *   float16 and bfloat16, and its sums on examples computed by hand;
 * - the plan (scene/plan_bound.c) of scenes loaded from text: n, gamma(n),
 *   the unit roundoffs and bound_factor for matmul K = 1, 7, 1024,
 *   reduce_sum and axpy in float32, float16 and bfloat16 (n*u >= 1 is a
 *   load error), rtol 0 and atol 0 unless given;
 * - init: exact's R for every float dtype and several K (by hand), the
 *   plan's randint bounds [-R, R + 1) and its exact default tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

#include "base/bound.h"
#include "base/dtype.h"
#include "case/bound_compare.h"
#include "ops/ops_impl.h"
#include "ops/ref_bound.h"
#include "ops_testing.h"
#include "scene/scene.h"

/* A tensor over zeroed data of its own (8 bytes an element, one more). */
static st_tensor mk(st_dtype dt, st_role role, int ndim, int64_t d0,
                    int64_t d1) {
  const size_t numel = (size_t)d0 * (ndim == 2 ? (size_t)d1 : 1);
  void *data = calloc(numel + 1, 8);
  assert_non_null(data);
  return ot_tensor(dt, role, data, ndim, d0, d1);
}

static void call_of(st_op_call *call, const char *op, st_tensor *t, size_t n,
                    st_scalar *s) {
  st_op_call_init(call);
  call->op = op;
  call->backend = "reference";
  call->tensors = t;
  call->n_tensors = n;
  call->scalars = s;
  call->n_scalars = s ? 1 : 0;
  call->max_threads = 2;
}

/* Runs op twice over the same inputs: the reference op into one output,
 * st__ref_bound into a copy; the bytes must agree. out is the written
 * tensor's index; magsum (and nterm for softmax) are returned. */
static void same_bytes(const char *op, st_tensor *t, size_t n, size_t out,
                       st_scalar *s, double *magsum, double *nterm) {
  st_op_call call;
  const size_t nb = t[out].nbytes;
  unsigned char *before = malloc(nb + 1), *want = malloc(nb + 1);
  assert_non_null(before);
  assert_non_null(want);
  memcpy(before, t[out].data, nb); /* axpy reads y */
  call_of(&call, op, t, n, s);
  assert_int_equal(st__ops_find(st__reference_ops, op)(&call), ST_OK);
  memcpy(want, t[out].data, nb);
  memcpy(t[out].data, before, nb);
  call_of(&call, op, t, n, s);
  assert_int_equal(st__ref_bound(&call, magsum, nterm), ST_OK);
  if (memcmp(want, t[out].data, nb) != 0) {
    print_message("%s in %s: bytes differ from the reference op\n", op,
                  st_dtype_name(t[out].dtype));
    fail();
  }
  free(before);
  free(want);
}

static double rnd(uint64_t *s) {
  *s = *s * 6364136223846793005u + 1442695040888963407u;
  return (double)(*s >> 11) * 0x1p-53 * 4.0 - 2.0;
}

static void fill(st_tensor *t, uint64_t *seed) {
  for (size_t i = 0; i < t->numel; i++)
    st_tensor_set_f64(t, i, rnd(seed));
}

static void free_all(st_tensor *t, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(t[i].data);
}

static void ref_bound__same_bytes_as_the_reference(void **state) {
  static const st_dtype dts[] = {ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT16,
                                 ST_DTYPE_BFLOAT16, ST_DTYPE_FLOAT64};
  static const char *const ew[] = {"add", "sub", "mul"};
  uint64_t seed = 42;
  (void)state;
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    const st_dtype dt = dts[d];
    double *ms = malloc(5000 * sizeof *ms), *nt = malloc(5000 * sizeof *nt);
    assert_non_null(ms);
    assert_non_null(nt);
    for (size_t k = 0; k < 3; k++) {
      st_tensor t[3] = {mk(dt, ST_ROLE_INPUT, 1, 100, 0),
                        mk(dt, ST_ROLE_INPUT, 1, 100, 0),
                        mk(dt, ST_ROLE_OUTPUT, 1, 100, 0)};
      fill(&t[0], &seed);
      fill(&t[1], &seed);
      same_bytes(ew[k], t, 3, 2, NULL, ms, NULL);
      free_all(t, 3);
    }
    st_scalar s;
    memset(&s, 0, sizeof s);
    s.f = -1.5;
    for (int axpy = 0; axpy < 2; axpy++) {
      st_tensor t[2] = {
          mk(dt, ST_ROLE_INPUT, 1, 77, 0),
          mk(dt, axpy ? ST_ROLE_INOUT : ST_ROLE_OUTPUT, 1, 77, 0)};
      fill(&t[0], &seed);
      fill(&t[1], &seed);
      same_bytes(axpy ? "axpy" : "scale", t, 2, 1, &s, ms, NULL);
      free_all(t, 2);
    }
    {
      st_tensor t[3] = {mk(dt, ST_ROLE_INPUT, 2, 9, 70),
                        mk(dt, ST_ROLE_INPUT, 2, 70, 13),
                        mk(dt, ST_ROLE_OUTPUT, 2, 9, 13)};
      fill(&t[0], &seed);
      fill(&t[1], &seed);
      same_bytes("matmul", t, 3, 2, NULL, ms, NULL);
      free_all(t, 3);
    }
    {
      st_tensor t[2] = {mk(dt, ST_ROLE_INPUT, 2, 5, 33),
                        mk(dt, ST_ROLE_OUTPUT, 2, 5, 33)};
      fill(&t[0], &seed);
      same_bytes("softmax", t, 2, 1, NULL, ms, nt);
      free_all(t, 2);
    }
    {
      /* Two reduce blocks and a partial one. */
      st_tensor t[2] = {mk(dt, ST_ROLE_INPUT, 1, 4999, 0),
                        mk(dt, ST_ROLE_OUTPUT, 1, 1, 0)};
      fill(&t[0], &seed);
      same_bytes("reduce_sum", t, 2, 1, NULL, ms, NULL);
      free_all(t, 2);
    }
    free(ms);
    free(nt);
  }
}

/* The magnitude sums of small examples, by hand. */
static void ref_bound__magnitude_sums_by_hand(void **state) {
  double ms[4], nt[4];
  (void)state;
  {
    /* [1 -2 3] @ [4 5 -6]^T = 4 - 10 - 18 = -24; magsum 4 + 10 + 18. */
    st_tensor t[3] = {mk(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, 2, 1, 3),
                      mk(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, 2, 3, 1),
                      mk(ST_DTYPE_FLOAT32, ST_ROLE_OUTPUT, 2, 1, 1)};
    const double a[3] = {1, -2, 3}, b[3] = {4, 5, -6};
    for (int i = 0; i < 3; i++) {
      st_tensor_set_f64(&t[0], (size_t)i, a[i]);
      st_tensor_set_f64(&t[1], (size_t)i, b[i]);
    }
    same_bytes("matmul", t, 3, 2, NULL, ms, NULL);
    assert_true(st_tensor_get_f64(&t[2], 0) == -24.0);
    assert_true(ms[0] == 32.0);
    free_all(t, 3);
  }
  {
    /* reduce_sum [1, -2, 3]: 2, magsum 6. */
    st_tensor t[2] = {mk(ST_DTYPE_FLOAT16, ST_ROLE_INPUT, 1, 3, 0),
                      mk(ST_DTYPE_FLOAT16, ST_ROLE_OUTPUT, 1, 1, 0)};
    st_tensor_set_f64(&t[0], 0, 1);
    st_tensor_set_f64(&t[0], 1, -2);
    st_tensor_set_f64(&t[0], 2, 3);
    same_bytes("reduce_sum", t, 2, 1, NULL, ms, NULL);
    assert_true(st_tensor_get_f64(&t[1], 0) == 2.0);
    assert_true(ms[0] == 6.0);
    free_all(t, 2);
  }
  {
    /* axpy 2 * 3 + (-1) = 5, magsum |2*3| + |-1| = 7. */
    st_scalar s;
    memset(&s, 0, sizeof s);
    s.f = 2;
    st_tensor t[2] = {mk(ST_DTYPE_BFLOAT16, ST_ROLE_INPUT, 1, 1, 0),
                      mk(ST_DTYPE_BFLOAT16, ST_ROLE_INOUT, 1, 1, 0)};
    st_tensor_set_f64(&t[0], 0, 3);
    st_tensor_set_f64(&t[1], 0, -1);
    same_bytes("axpy", t, 2, 1, &s, ms, NULL);
    assert_true(st_tensor_get_f64(&t[1], 0) == 5.0);
    assert_true(ms[0] == 7.0);
    free_all(t, 2);
  }
  {
    /* softmax [0, 0]: 0.5 each; magsum y_i = 0.5; n = C + 4 + ceil(0). A
     * row [0, ln 3]: y = [1/4, 3/4], m = ln 3; for x_0: |x_0 - m| = ln 3
     * plus y_0 * ln 3 = ln 3 * 5/4 = 1.37..., ceil 2: n = 2 + 4 + 2. */
    st_tensor t[2] = {mk(ST_DTYPE_FLOAT64, ST_ROLE_INPUT, 2, 2, 2),
                      mk(ST_DTYPE_FLOAT64, ST_ROLE_OUTPUT, 2, 2, 2)};
    st_tensor_set_f64(&t[0], 2, 0);
    st_tensor_set_f64(&t[0], 3, log(3.0));
    same_bytes("softmax", t, 2, 1, NULL, ms, nt);
    assert_true(ms[0] == 0.5 && ms[1] == 0.5);
    assert_true(nt[0] == 6 && nt[1] == 6);
    assert_true(fabs(ms[2] - 0.25) < 1e-15 && fabs(ms[3] - 0.75) < 1e-15);
    assert_true(nt[2] == 8); /* ln 3 + 0.25 ln 3 = 1.37 */
    assert_true(nt[3] == 7); /* 0 + 0.25 ln 3 = 0.27 */
    free_all(t, 2);
  }
  {
    /* copy has no magnitude sums. */
    st_op_call call;
    st_tensor t[2] = {mk(ST_DTYPE_FLOAT32, ST_ROLE_INPUT, 1, 1, 0),
                      mk(ST_DTYPE_FLOAT32, ST_ROLE_OUTPUT, 1, 1, 0)};
    call_of(&call, "copy", t, 2, NULL);
    assert_int_equal(st__ref_bound(&call, ms, NULL), ST_EINVAL);
    free_all(t, 2);
  }
}

/* ---- plans of scenes loaded from text ---------------------------------- */

typedef struct loaded {
  st_scene_set *set;
  st_error_list errors;
  st_status rc;
} loaded;

static void load(loaded *l, const char *text) {
  st_load_options o;
  st_load_options_init(&o);
  st_error_list_init(&l->errors);
  assert_int_equal(st_scene_set_new(&l->set), ST_OK);
  l->rc = st_scene_set_load_string(l->set, "t.yaml", text, strlen(text), &o,
                                   &l->errors);
}

static void unload(loaded *l) {
  st_error_list_free(&l->errors);
  st_scene_set_free(l->set);
}

/* The rarg named name in the plan of case ci of the set's one scene. */
static const st__rarg *plan_arg(loaded *l, st__plan *p, size_t ci,
                                const char *name) {
  const st_scene *s = st_scene_set_get(l->set, 0);
  assert_int_equal(st__plan_resolve(s, ci, UINT64_MAX, p, NULL), ST_OK);
  for (size_t i = 0; i < p->n_args; i++)
    if (strcmp(p->args[i].name, name) == 0)
      return &p->args[i];
  fail();
  return NULL;
}

static void assert_near(double got, double want) {
  if (!(fabs(got - want) <= 1e-15 * fabs(want))) {
    print_message("got %.17g, want %.17g\n", got, want);
    fail();
  }
}

#define MATMUL_SCENE(DT, OUT, KS)                                              \
  "scene: mm\nkernel: matmul\ntolerance: bound\nargs:\n"                       \
  "  - {tensor: a, dtype: " DT ", shape: [2, K], init: {uniform: [-1, 1]}}\n"  \
  "  - {tensor: b, dtype: " DT ", shape: [K, 3], init: {uniform: [-1, 1]}}\n"  \
  "  - {tensor: c, dtype: " OUT ", shape: [2, 3], role: output}\n"             \
  "cases:\n  - {name: k, matrix: {K: " KS "}}\n"

/* matmul K = 1, 7, 1024: n = K, gamma(K) in the compute dtype. */
static void plan_bound__matmul_every_dtype(void **state) {
  static const struct {
    const char *dt;
    double u;
    double gamma[3]; /* K = 1, 7, 1024; 0: n*u >= 1 */
  } rows[] = {
      {"float32", 0x1p-24, {1 / 16777215.0, 7 / 16777209.0, 1 / 16383.0}},
      {"float16", 0x1p-11, {1 / 2047.0, 7 / 2041.0, 1.0}},
  };
  static const uint64_t ks[3] = {1, 7, 1024};
  char text[1024];
  (void)state;
  for (size_t r = 0; r < 2; r++) {
    loaded l;
    snprintf(text, sizeof text, MATMUL_SCENE("%s", "%s", "[1, 7, 1024]"),
             rows[r].dt, rows[r].dt, rows[r].dt);
    load(&l, text);
    assert_int_equal(l.rc, ST_OK);
    for (size_t ci = 0; ci < 3; ci++) {
      st__plan p;
      const st__rarg *c = plan_arg(&l, &p, ci, "c");
      assert_true(c->bound && !c->bound_softmax);
      assert_true(c->bound_n == ks[ci]);
      assert_near(c->bound_gamma, rows[r].gamma[ci]);
      assert_true(c->bound_uc == rows[r].u && c->bound_uo == rows[r].u);
      assert_true(c->bound_factor == 1 && c->rtol == 0 && c->atol == 0);
      st__plan_free(&p);
    }
    unload(&l);
  }
  /* bfloat16: K = 1 and 7 hold (gamma 1/255, 7/249); K = 1024 is the load
   * error, at the scene's `tolerance`. */
  {
    loaded l;
    snprintf(text, sizeof text, MATMUL_SCENE("%s", "%s", "[1, 7]"), "bfloat16",
             "bfloat16", "bfloat16");
    load(&l, text);
    assert_int_equal(l.rc, ST_OK);
    st__plan p;
    const st__rarg *c = plan_arg(&l, &p, 1, "c");
    assert_near(c->bound_gamma, 7 / 249.0);
    st__plan_free(&p);
    c = plan_arg(&l, &p, 0, "c");
    assert_near(c->bound_gamma, 1 / 255.0);
    st__plan_free(&p);
    unload(&l);
    snprintf(text, sizeof text, MATMUL_SCENE("%s", "%s", "[1024]"), "bfloat16",
             "bfloat16", "bfloat16");
    load(&l, text);
    assert_int_equal(l.rc, ST_ELOAD);
    assert_int_equal(l.errors.count, 1);
    assert_int_equal(l.errors.items[0].line, 3);
    assert_int_equal(l.errors.items[0].column, 12);
    assert_non_null(strstr(l.errors.items[0].message, "n*u >= 1"));
    unload(&l);
  }
  /* float16 in, float32 out, compute_dtype float16 on the case and
   * bound_factor 2 on the tensor: u_c 2^-11, u_o 2^-24; a given atol
   * stays. */
  {
    loaded l;
    load(&l, "scene: mm\nkernel: matmul\ntolerance: bound\natol: 1.0e-6\n"
             "args:\n"
             "  - {tensor: a, dtype: float16, shape: [2, 7], init: ones}\n"
             "  - {tensor: b, dtype: float16, shape: [7, 3], init: ones}\n"
             "  - {tensor: c, dtype: float32, shape: [2, 3], role: output, "
             "bound_factor: 2}\n"
             "cases:\n  - {name: k, compute_dtype: float16}\n");
    assert_int_equal(l.rc, ST_OK);
    st__plan p;
    const st__rarg *c = plan_arg(&l, &p, 0, "c");
    assert_near(c->bound_gamma, 7 / 2041.0);
    assert_true(c->bound_uc == 0x1p-11 && c->bound_uo == 0x1p-24);
    assert_true(c->bound_factor == 2 && c->atol == 1e-6 && c->rtol == 0);
    st__plan_free(&p);
    unload(&l);
  }
}

/* reduce_sum (n = N - 1) and axpy (n = 2) in float32, float16 and
 * bfloat16; a case's `tolerance: allclose` over the scene's bound. */
static void plan_bound__reduce_sum_and_axpy(void **state) {
  static const char *const dts[] = {"float32", "float16", "bfloat16"};
  static const double us[] = {0x1p-24, 0x1p-11, 0x1p-8};
  char text[1024];
  (void)state;
  for (size_t d = 0; d < 3; d++) {
    loaded l;
    st__plan p;
    snprintf(text, sizeof text,
             "scene: rs\nkernel: reduce_sum\ntolerance: bound\nargs:\n"
             "  - {tensor: x, dtype: %s, shape: [8], init: ones}\n"
             "  - {tensor: out, dtype: %s, shape: [1], role: output}\n"
             "cases:\n  - name: a\n  - {name: b, tolerance: allclose}\n",
             dts[d], dts[d]);
    load(&l, text);
    assert_int_equal(l.rc, ST_OK);
    const st__rarg *o = plan_arg(&l, &p, 0, "out");
    assert_true(o->bound && o->bound_n == 7);
    assert_near(o->bound_gamma, 7 * us[d] / (1 - 7 * us[d]));
    st__plan_free(&p);
    o = plan_arg(&l, &p, 1, "out");
    assert_false(o->bound); /* the dtype's default rtol, not 0 */
    assert_true(o->rtol > 0);
    st__plan_free(&p);
    unload(&l);
    snprintf(text, sizeof text,
             "scene: ax\nkernel: axpy\nargs:\n"
             "  - {tensor: x, dtype: %s, shape: [4], init: ones}\n"
             "  - {tensor: y, dtype: %s, shape: [4], role: inout, init: ones, "
             "tolerance: bound}\n"
             "  - {scalar: alpha, dtype: %s, value: 2}\n"
             "cases:\n  - name: a\n",
             dts[d], dts[d], dts[d]);
    load(&l, text);
    assert_int_equal(l.rc, ST_OK);
    o = plan_arg(&l, &p, 0, "y");
    assert_true(o->bound && o->bound_n == 2);
    assert_near(o->bound_gamma, 2 * us[d] / (1 - 2 * us[d]));
    st__plan_free(&p);
    unload(&l);
  }
  /* copy is exact: no bound, rtol 0, atol 0. */
  loaded l;
  st__plan p;
  load(&l, "scene: cp\nkernel: copy\ntolerance: bound\nargs:\n"
           "  - {tensor: x, dtype: float16, shape: [4], init: ones}\n"
           "  - {tensor: y, dtype: float16, shape: [4], role: output}\n"
           "cases:\n  - name: a\n");
  assert_int_equal(l.rc, ST_OK);
  const st__rarg *o = plan_arg(&l, &p, 0, "y");
  assert_false(o->bound);
  assert_true(o->rtol == 0 && o->atol == 0);
  st__plan_free(&p);
  unload(&l);
}

/* st__bound_exact_range gives op a range, want, for n, in and out. */
static void range_is(const char *op, uint64_t n, st_dtype in, st_dtype out,
                     uint64_t want) {
  uint64_t r = 0;
  assert_true(st__bound_exact_range(op, n, in, out, &r));
  assert_int_equal(r, want);
}

/* R by hand: matmul floor(sqrt(2^p / K)), reduce_sum floor(2^p / N),
 * add 2^(p-1), mul floor(sqrt(2^p)), axpy R^2 + R <= 2^p; capped by the
 * input dtype. */
static void exact_range__every_float_dtype(void **state) {
  static const struct {
    st_dtype dt;
    uint64_t k1, k7, k1024, k4096, sum100, add, mul, axpy;
  } rows[] = {
      {ST_DTYPE_FLOAT32, 4096, 1548, 128, 64, 167772, 1u << 23, 4096, 4095},
      {ST_DTYPE_FLOAT16, 45, 17, 1, 0, 20, 1024, 45, 44},
      {ST_DTYPE_BFLOAT16, 16, 6, 0, 0, 2, 128, 16, 15},
      {ST_DTYPE_FLOAT8_E4M3FN, 4, 1, 0, 0, 0, 8, 4, 3},
      {ST_DTYPE_FLOAT8_E5M2, 2, 1, 0, 0, 0, 4, 2, 2},
  };
  (void)state;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const st_dtype dt = rows[i].dt;
    range_is("matmul", 1, dt, dt, rows[i].k1);
    range_is("matmul", 7, dt, dt, rows[i].k7);
    range_is("matmul", 1024, dt, dt, rows[i].k1024);
    range_is("matmul", 4096, dt, dt, rows[i].k4096);
    range_is("reduce_sum", 100, dt, dt, rows[i].sum100);
    range_is("add", 0, dt, dt, rows[i].add);
    range_is("mul", 0, dt, dt, rows[i].mul);
    range_is("axpy", 0, dt, dt, rows[i].axpy);
  }
  /* float64: K = 1 floor(sqrt(2^53)), K = 7 floor(sqrt(floor(2^53 / 7))),
   * reduce_sum of 2^20 elements 2^33. */
  range_is("matmul", 1, ST_DTYPE_FLOAT64, ST_DTYPE_FLOAT64,
           94906265); /* floor(sqrt(2^53)) */
  range_is("matmul", 7, ST_DTYPE_FLOAT64, ST_DTYPE_FLOAT64,
           35871196); /* floor(sqrt(floor(2^53 / 7))) */
  range_is("reduce_sum", 1u << 20, ST_DTYPE_FLOAT64, ST_DTYPE_FLOAT64,
           1ull << 33);
  /* Mixed: bfloat16 in, float32 out: K = 1024 gives 128, within
   * bfloat16's 256; K = 1: 4096 capped at 256. */
  range_is("matmul", 1024, ST_DTYPE_BFLOAT16, ST_DTYPE_FLOAT32, 128);
  range_is("matmul", 1, ST_DTYPE_BFLOAT16, ST_DTYPE_FLOAT32, 256);
  /* The largest float32 K for R = 8: 2^18 (2^18 * 64 = 2^24); one more
   * and R is 7. */
  range_is("matmul", 1u << 18, ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT32, 8);
  range_is("matmul", (1u << 18) + 1, ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT32, 7);
  {
    uint64_t r;
    assert_false(st__bound_exact_range("softmax", 1, ST_DTYPE_FLOAT32,
                                       ST_DTYPE_FLOAT32, &r));
  }
}

/* The plan: randint's [-R, R + 1) on every exact input, and the output's
 * default tolerance 0 when all are exact (an rtol given stays). */
static void plan_exact__range_and_default_tolerance(void **state) {
  loaded l;
  st__plan p;
  (void)state;
  load(&l, "scene: mm\nkernel: matmul\nargs:\n"
           "  - {tensor: a, dtype: float16, shape: [2, K], init: exact}\n"
           "  - {tensor: b, dtype: float16, shape: [K, 3], init: exact}\n"
           "  - {tensor: c, dtype: float16, shape: [2, 3], role: output}\n"
           "cases:\n  - {name: k7, params: {K: 7}}\n"
           "  - {name: given, params: {K: 1024}, rtol: 0.5}\n"
           "---\n"
           "scene: half\nkernel: matmul\nargs:\n"
           "  - {tensor: a, dtype: float16, shape: [2, 7], init: exact}\n"
           "  - {tensor: b, dtype: float16, shape: [7, 3], init: ones}\n"
           "  - {tensor: c, dtype: float16, shape: [2, 3], role: output}\n"
           "cases:\n  - {name: ones}\n");
  assert_int_equal(l.rc, ST_OK);
  const st__rarg *a = plan_arg(&l, &p, 0, "a");
  assert_true(a->init == ST__INIT_EXACT);
  assert_true(a->a.is_int && a->a.i == -17 && a->b.is_int && a->b.i == 18);
  st__plan_free(&p);
  const st__rarg *c = plan_arg(&l, &p, 0, "c");
  assert_true(c->rtol == 0 && c->atol == 0);
  st__plan_free(&p);
  /* K = 1024 in float16: R = 1; the given rtol stays, atol becomes 0. */
  a = plan_arg(&l, &p, 1, "a");
  assert_true(a->a.i == -1 && a->b.i == 2);
  st__plan_free(&p);
  c = plan_arg(&l, &p, 1, "c");
  assert_true(c->rtol == 0.5 && c->atol == 0);
  st__plan_free(&p);
  /* One input not exact: the dtype's defaults (float16 1e-3, 1e-5). */
  {
    const st_scene *s = st_scene_set_get(l.set, 1);
    assert_int_equal(st__plan_resolve(s, 0, UINT64_MAX, &p, NULL), ST_OK);
    assert_true(p.args[2].rtol == 1e-3 && p.args[2].atol == 1e-5);
    st__plan_free(&p);
  }
  unload(&l);
}

/* The element rule of a bound output (case/bound_compare.c): the bound
 * by hand, equality always close, softmax's n per element, and nothing
 * but equality where that n is NaN or n*u >= 1. */
static void bound_close__element_rule(void **state) {
  st__rarg r;
  st_tensor a = mk(ST_DTYPE_FLOAT64, ST_ROLE_OUTPUT, 1, 3, 0);
  st_tensor e = mk(ST_DTYPE_FLOAT64, ST_ROLE_OUTPUT, 1, 3, 0);
  const double ms[3] = {7.5, 7.5, 7.5};
  double nt[3] = {4, NAN, 2048};
  (void)state;
  memset(&r, 0, sizeof r);
  r.name = "c";
  r.bound = 1;
  r.bound_n = 4;
  r.bound_gamma = 4.0 / 2044.0;
  r.bound_uc = r.bound_uo = 0x1p-11;
  r.bound_factor = 1;
  /* The worked example of docs/scene-format.md: 0.01614 at 1.5. */
  assert_near(st__bound_at(&r, ms, NULL, 0, 1.5, 1.5),
              4.0 / 2044.0 * 7.5 + 3.0 / 2048.0);
  st_tensor_set_f64(&e, 0, 1.5);
  st_tensor_set_f64(&a, 0, 1.5 + 0.016);
  assert_true(st__bound_close(&r, &a, &e, ms, NULL, 0));
  st_tensor_set_f64(&a, 0, 1.5 + 0.0165);
  assert_false(st__bound_close(&r, &a, &e, ms, NULL, 0));
  /* softmax: n per element; n = 4 as above; NaN and 2048 (n*u = 1)
   * leave only equality. */
  r.bound_softmax = 1;
  r.bound_gamma = 0;
  st_tensor_set_f64(&a, 0, 1.5 + 0.016);
  assert_true(st__bound_close(&r, &a, &e, ms, nt, 0));
  assert_true(isnan(st__bound_at(&r, ms, nt, 1, 1.5, 1.5)));
  assert_true(isnan(st__bound_at(&r, ms, nt, 2, 1.5, 1.5)));
  st_tensor_set_f64(&a, 1, 1.0);
  st_tensor_set_f64(&e, 1, 1.0);
  assert_true(st__bound_close(&r, &a, &e, ms, nt, 1));
  st_tensor_set_f64(&a, 2, 1.0);
  st_tensor_set_f64(&e, 2, 1.0 + 0x1p-40);
  assert_false(st__bound_close(&r, &a, &e, ms, nt, 2));
  /* A magsum that is missing is refused, not read. */
  char msg[256];
  assert_int_equal(st__bound_compare(&r, &a, &e, NULL, NULL, msg, sizeof msg),
                   ST_EINVAL);
  assert_non_null(strstr(msg, "without golden's magnitude sums"));
  free(a.data);
  free(e.data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ref_bound__same_bytes_as_the_reference),
      cmocka_unit_test(ref_bound__magnitude_sums_by_hand),
      cmocka_unit_test(plan_bound__matmul_every_dtype),
      cmocka_unit_test(plan_bound__reduce_sum_and_axpy),
      cmocka_unit_test(exact_range__every_float_dtype),
      cmocka_unit_test(plan_exact__range_and_default_tolerance),
      cmocka_unit_test(bound_close__element_rule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
