/* SPDX-License-Identifier: MIT */
/* Tests of the scene model (harness/scene/scene.c): the set and enumeration
 * API, default tolerances, and st__plan_resolve: params substituted into
 * dtypes, shapes and init parameters, byte counts, tolerance precedence,
 * the byte cap, and the "fits its dtype exactly" rules at their edges. */
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

#include "scene/scene.h"
#include "scene/suggest.h"

static int to_source_root(void **state) {
  (void)state;
  return chdir(ST_SOURCE_ROOT);
}

static st_scene_set *load_good(void) {
  st_scene_set *set;
  st_error_list errs;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(
      st_scene_set_load_path(set, "tests/scenes/good/multi.yaml", NULL, &errs),
      ST_OK);
  st_error_list_free(&errs);
  return set;
}

/* ------------------------------------------------------------------ */
/* Set, options, enumeration                                           */

static void load_options_init__defaults(void **state) {
  (void)state;
  st_load_options o;
  memset(&o, 0xff, sizeof o);
  st_load_options_init(&o);
  assert_int_equal(o.max_arg_bytes, UINT64_C(2) << 30);
  assert_int_equal(o.max_nodes, 1000000);
}

/* Every free accepts NULL (STYLE.md); st__plan_free leaves a resolved
 * plan empty, so a second free (and a free of a zeroed plan) is a no-op,
 * not a double free (ASan would report one). */
static void scene_set_free__accepts_null(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  st__plan plan;
  st_scene_set_free(NULL);
  st__scene_free(NULL);
  st__plan_free(NULL);
  assert_int_equal(
      st__plan_resolve(st_scene_set_get(set, 0), 0, UINT64_MAX, &plan, NULL),
      ST_OK);
  assert_non_null(plan.args);
  assert_true(plan.n_args > 0);
  st__plan_free(&plan);
  assert_null(plan.args);
  assert_int_equal(plan.n_args, 0);
  assert_int_equal(plan.n_tensors, 0);
  assert_null(plan.scene);
  st__plan_free(&plan);
  assert_null(plan.args);
  st_scene_set_free(set);
}

static void scene_set__empty(void **state) {
  (void)state;
  st_scene_set *set;
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_count(set), 0);
  assert_null(st_scene_set_get(set, 0));
  st_scene_set_free(set);
}

static void scene_set_get__out_of_range(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  assert_int_equal(st_scene_set_count(set), 2);
  assert_non_null(st_scene_set_get(set, 1));
  assert_null(st_scene_set_get(set, 2));
  const st_scene *s = st_scene_set_get(set, 0);
  assert_null(st_scene_case_name(s, 2));
  assert_int_equal(st_scene_case_line(s, 2), 0);
  assert_int_equal(st_scene_case_is_manual(s, 2, "cpu"), 0);
  assert_int_equal(st_scene_case_runs_on(s, 2, "cpu"), 0);
  st_scene_set_free(set);
}

static void scene_case_is_manual__forms(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  const st_scene *s = st_scene_set_get(set, 0), *l3 = st_scene_set_get(set, 1);
  /* small: not manual; half: manual on threads only; level3: manual
   * everywhere. */
  assert_int_equal(st_scene_case_is_manual(s, 0, "cpu"), 0);
  assert_int_equal(st_scene_case_is_manual(s, 0, "threads"), 0);
  assert_int_equal(st_scene_case_is_manual(s, 1, "threads"), 1);
  assert_int_equal(st_scene_case_is_manual(s, 1, "cpu"), 0);
  assert_int_equal(st_scene_case_is_manual(l3, 0, "cpu"), 1);
  assert_int_equal(st_scene_case_is_manual(l3, 0, "anything"), 1);
  st_scene_set_free(set);
}

static void scene_case_runs_on__platform_list(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  const st_scene *s = st_scene_set_get(set, 0);
  assert_int_equal(st_scene_case_runs_on(s, 0, "cpu"), 1);
  assert_int_equal(st_scene_case_runs_on(s, 0, "threads"), 1);
  assert_int_equal(st_scene_case_runs_on(s, 0, "npu"), 0);
  assert_int_equal(st_scene_case_runs_on(s, 1, "npu"), 1); /* no list */
  st_scene_set_free(set);
}

/* ------------------------------------------------------------------ */
/* Tolerances                                                          */

static void default_tolerance__torch_values(void **state) {
  (void)state;
  static const struct {
    st_dtype dt;
    double rtol, atol;
  } want[] = {
      {ST_DTYPE_FLOAT16, 1e-3, 1e-5},
      {ST_DTYPE_BFLOAT16, 1.6e-2, 1e-5},
      {ST_DTYPE_FLOAT32, 1.3e-6, 1e-5},
      {ST_DTYPE_FLOAT64, 1e-7, 1e-7},
      {ST_DTYPE_INT8, 0, 0},
      {ST_DTYPE_INT16, 0, 0},
      {ST_DTYPE_INT32, 0, 0},
      {ST_DTYPE_INT64, 0, 0},
      {ST_DTYPE_UINT8, 0, 0},
      {ST_DTYPE_BOOL, 0, 0},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    double r = -1, a = -1;
    st__default_tolerance(want[i].dt, &r, &a);
    assert_true(r == want[i].rtol);
    assert_true(a == want[i].atol);
  }
}

/* ------------------------------------------------------------------ */
/* Plans of the good scene                                             */

static const st__rarg *rarg(const st__plan *p, const char *name) {
  for (size_t i = 0; i < p->n_args; i++)
    if (strcmp(p->args[i].name, name) == 0)
      return &p->args[i];
  fail_msg("no arg %s", name);
  return NULL;
}

static void plan_resolve__small_case(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  st_error_list errs;
  st_error_list_init(&errs);
  assert_int_equal(st__plan_resolve(s, 0, UINT64_MAX, &p, &errs), ST_OK);
  assert_int_equal(errs.count, 0);
  assert_ptr_equal(p.scene, s);
  assert_ptr_equal(p.kase, &s->cases[0]);
  assert_int_equal(p.n_args, 14);
  assert_int_equal(p.n_tensors, 12);

  /* T = float32, N = 8, M = 3. */
  const st__rarg *z = rarg(&p, "z");
  assert_int_equal(z->dtype, ST_DTYPE_FLOAT32);
  assert_int_equal(z->ndim, 1);
  assert_int_equal(z->shape[0], 8);
  assert_int_equal(z->numel, 8);
  assert_int_equal(z->nbytes, 32);
  assert_int_equal(z->init, ST__INIT_ZEROS);
  assert_int_equal(z->role, ST_ROLE_INPUT);
  /* Scene rtol 1e-3 over the float32 default; atol from the dtype. */
  assert_true(z->rtol == 1e-3 && z->atol == 1e-5);

  const st__rarg *f = rarg(&p, "f");
  assert_int_equal(f->init, ST__INIT_FILL);
  assert_true(f->a.f == 3.0 && !f->a.is_int);

  const st__rarg *r = rarg(&p, "r");
  assert_int_equal(r->dtype, ST_DTYPE_INT8);
  assert_int_equal(r->ndim, 2);
  assert_int_equal(r->shape[0], 2);
  assert_int_equal(r->shape[1], 3);
  assert_int_equal(r->numel, 6);
  assert_int_equal(r->nbytes, 6);
  assert_true(r->a.is_int && r->a.i == -4);
  assert_true(r->b.is_int && r->b.i == 2);
  assert_true(r->rtol == 1e-3 && r->atol == 0);

  const st__rarg *u = rarg(&p, "u");
  assert_true(u->a.i == -1 && u->b.i == 1);
  assert_true(u->rtol == 0.5); /* the tensor's own */

  const st__rarg *n = rarg(&p, "n");
  assert_int_equal(n->dtype, ST_DTYPE_FLOAT64);
  assert_true(n->b.f == 1.5);
  assert_true(n->rtol == 1e-3 && n->atol == 0.25);

  const st__rarg *i = rarg(&p, "i");
  assert_int_equal(i->init, ST__INIT_RANDINT);
  assert_true(i->a.i == 0 && i->b.i == 256); /* HI exclusive, kept as is */

  const st__rarg *v = rarg(&p, "v");
  assert_int_equal(v->dtype, ST_DTYPE_BOOL);
  assert_int_equal(v->n_values, 4);
  assert_true(v->values[0].i == 1 && v->values[1].i == 0 &&
              v->values[2].i == 1 && v->values[3].i == 0);

  const st__rarg *b = rarg(&p, "b");
  assert_int_equal(b->init, ST__INIT_FILE);
  assert_non_null(b->path);
  assert_non_null(strstr(b->path, "/tests/scenes/good/data/four_floats.bin"));
  assert_int_equal(b->nbytes, 16);

  const st__rarg *out = rarg(&p, "out");
  assert_int_equal(out->role, ST_ROLE_OUTPUT);
  assert_int_equal(out->ndim, 2);
  assert_int_equal(out->shape[1], 1);
  assert_int_equal(out->compare, 1);

  const st__rarg *dbg = rarg(&p, "dbg");
  assert_int_equal(dbg->ndim, 0);
  assert_int_equal(dbg->numel, 1); /* a 0-d tensor has one element */
  assert_int_equal(dbg->nbytes, 8);
  assert_int_equal(dbg->compare, 0);

  const st__rarg *io = rarg(&p, "io");
  assert_int_equal(io->dtype, ST_DTYPE_BFLOAT16);
  assert_int_equal(io->numel, 0); /* a zero dimension: empty */
  assert_int_equal(io->nbytes, 0);
  assert_int_equal(io->role, ST_ROLE_INOUT);

  const st__rarg *alpha = rarg(&p, "alpha");
  assert_false(alpha->is_tensor);
  assert_int_equal(alpha->dtype, ST_DTYPE_FLOAT32);
  assert_true(!alpha->value.is_int && alpha->value.f == 0.5);
  const st__rarg *beta = rarg(&p, "beta");
  assert_true(beta->value.is_int && beta->value.i == -7);

  /* Tensors first, in declaration order; the total of their bytes. */
  for (size_t k = 0; k < p.n_tensors; k++)
    assert_true(p.args[k].is_tensor);
  assert_int_equal(p.total_bytes, 32 * 5 + 6 + 64 + 8 + 4 + 16 + 8 + 0);
  st__plan_free(&p);
  st_scene_set_free(set);
}

/* The second case: T = float16 (a quoted param), case tolerances over
 * the scene's, the tensor's own over the case's. */
static void plan_resolve__tolerance_precedence(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  assert_int_equal(st__plan_resolve(s, 1, UINT64_MAX, &p, NULL), ST_OK);
  const st__rarg *z = rarg(&p, "z");
  assert_int_equal(z->dtype, ST_DTYPE_FLOAT16);
  assert_int_equal(z->nbytes, 32);
  assert_true(z->rtol == 1e-2 && z->atol == 0); /* case > scene */
  const st__rarg *u = rarg(&p, "u");
  assert_true(u->rtol == 0.5 && u->atol == 0); /* tensor > case */
  const st__rarg *n = rarg(&p, "n");
  assert_true(n->rtol == 1e-2 && n->atol == 0.25);
  const st__rarg *alpha = rarg(&p, "alpha");
  assert_true(alpha->value.is_int && alpha->value.i == 2);
  st__plan_free(&p);

  /* No scene or case tolerance: the dtype's default. */
  const st_scene *l3 = st_scene_set_get(set, 1);
  assert_int_equal(st__plan_resolve(l3, 0, UINT64_MAX, &p, NULL), ST_OK);
  assert_true(p.args[0].rtol == 0 && p.args[0].atol == 1e-5); /* scene atol */
  assert_int_equal(p.args[0].nbytes, 96);
  assert_int_equal(p.total_bytes, 192);
  st__plan_free(&p);
  st_scene_set_free(set);
}

static void plan_resolve__case_index_out_of_range(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  st__plan p;
  assert_int_equal(
      st__plan_resolve(st_scene_set_get(set, 0), 2, UINT64_MAX, &p, NULL),
      ST_EINVAL);
  st__plan_free(&p);
  st_scene_set_free(set);
}

/* The cap counts the sum of the case's tensors, and is inclusive. */
static void plan_resolve__max_arg_bytes(void **state) {
  (void)state;
  st_scene_set *set = load_good();
  const st_scene *l3 = st_scene_set_get(set, 1);
  st__plan p;
  st_error_list errs;
  st_error_list_init(&errs);
  assert_int_equal(st__plan_resolve(l3, 0, 192, &p, &errs), ST_OK);
  st__plan_free(&p);
  assert_int_equal(st__plan_resolve(l3, 0, 191, &p, &errs), ST_ELOAD);
  assert_int_equal(errs.count, 1);
  assert_string_equal(errs.items[0].message,
                      "case 'only' declares 192 bytes of tensors, over the "
                      "limit of 191 bytes; raise the limit with "
                      "--max-arg-bytes");
  assert_string_equal(errs.items[0].file, "tests/scenes/good/multi.yaml");
  assert_int_equal(errs.items[0].line, 44);
  assert_null(p.args); /* freed on failure */
  st_error_list_free(&errs);
  st_scene_set_free(set);
}

/* ------------------------------------------------------------------ */
/* Fits: one tensor, one case, loaded from a string                    */

/* Loads a one-tensor scene `dtype`, `shape`, `init`; returns the status
 * and the first error's message in msg. */
static st_status one(const char *dtype, const char *shape, const char *init,
                     char *msg, size_t size) {
  char text[1024];
  st_scene_set *set;
  st_error_list errs;
  snprintf(text, sizeof text,
           "scene: s\nkernel: copy\nargs:\n  - {tensor: a, dtype: %s, "
           "shape: %s, init: %s}\ncases:\n  - name: c\n",
           dtype, shape, init);
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_status rc =
      st_scene_set_load_string(set, "x.yaml", text, strlen(text), NULL, &errs);
  snprintf(msg, size, "%s", errs.count ? errs.items[0].message : "");
  st_scene_set_free(set);
  st_error_list_free(&errs);
  return rc;
}

#define FITS(dt, init)                                                         \
  do {                                                                         \
    char m_[1024];                                                             \
    if (one(dt, "[4]", init, m_, sizeof m_) != ST_OK)                          \
      fail_msg("%s %s: unexpected error: %s", dt, init, m_);                   \
  } while (0)
#define NO_FIT(dt, init, needle)                                               \
  do {                                                                         \
    char m_[1024];                                                             \
    if (one(dt, "[4]", init, m_, sizeof m_) != ST_ELOAD ||                     \
        strstr(m_, needle) == NULL)                                            \
      fail_msg("%s %s: expected an error with '%s', got '%s'", dt, init,       \
               needle, m_);                                                    \
  } while (0)

static void plan_resolve__integer_fits(void **state) {
  (void)state;
  FITS("uint8", "{fill: 255}");
  FITS("uint8", "{fill: 0}");
  FITS("uint8", "{fill: 3.0}"); /* integral float */
  NO_FIT("uint8", "{fill: 256}", "does not fit uint8");
  NO_FIT("uint8", "{fill: -1}", "does not fit uint8");
  NO_FIT("uint8", "{fill: 3.7}", "fill value 3.7 of 'a' does not fit uint8");
  FITS("int8", "{fill: -128}");
  NO_FIT("int8", "{fill: 128}", "[-128, 127]");
  FITS("int16", "{fill: -32768}");
  NO_FIT("int16", "{fill: 32768}", "does not fit int16");
  FITS("int32", "{fill: 2147483647}");
  NO_FIT("int32", "{fill: 2147483648}", "does not fit int32");
  FITS("int64", "{fill: -9223372036854775808}");
  FITS("int64", "{fill: 9223372036854775807}");
  /* 2^63 as a float is one past int64's range. */
  NO_FIT("int64", "{fill: 9.223372036854775808e18}", "does not fit int64");
  NO_FIT("int32", "{fill: nan}", "does not fit int32");
  NO_FIT("int32", "{fill: inf}", "does not fit int32");
}

static void plan_resolve__bool_fits(void **state) {
  (void)state;
  FITS("bool", "{fill: true}");
  FITS("bool", "{fill: false}");
  FITS("bool", "{fill: 1}");
  FITS("bool", "{fill: 0.0}");
  FITS("bool", "{values: [0, 1, true, false]}");
  FITS("bool", "{randint: [0, 2]}");
  NO_FIT("bool", "{fill: 2}", "expected 0, 1, true or false");
  NO_FIT("bool", "{fill: -1}", "does not fit bool");
  NO_FIT("bool", "{fill: 0.5}", "does not fit bool");
  NO_FIT("bool", "{randint: [0, 3]}", "values reach 2");
}

static void plan_resolve__float_fits(void **state) {
  (void)state;
  FITS("float16", "{fill: 65504}");
  FITS("float16", "{fill: -65504}");
  NO_FIT("float16", "{fill: 65505}", "magnitude at most 65504");
  FITS("float16", "{fill: inf}"); /* non-finite on purpose */
  FITS("float16", "{fill: nan}");
  FITS("bfloat16", "{fill: 3.0e38}");
  NO_FIT("bfloat16", "{fill: 3.4e38}", "does not fit bfloat16");
  FITS("float32", "{fill: 3.0e38}");
  NO_FIT("float32", "{fill: 1e39}", "does not fit float32");
  FITS("float64", "{fill: 1e308}");
  FITS("float32", "{fill: 0.1}"); /* rounding is not "not fitting" */
  NO_FIT("float16", "{values: [1, 2, 70000, 4]}", "values[2] of 'a' is 70000");
  NO_FIT("float16", "{uniform: [0, 1e5]}",
         "uniform high 1e+05 of 'a' does not fit float16");
}

static void plan_resolve__range(void **state) {
  (void)state;
  FITS("int8", "{range: {start: 124, step: 1}}"); /* 124..127 */
  NO_FIT("int8", "{range: {start: 125, step: 1}}", "ends at 128");
  FITS("int8", "{range: {start: -125, step: -1}}"); /* ..-128 */
  NO_FIT("int8", "{range: {start: 0, step: 0.5}}", "is not an integer");
  NO_FIT("int64",
         "{range: {start: 9223372036854775800, step: 9223372036854775800}}",
         "overflows before its last element");
  FITS("float16", "{range: {start: 0, step: 21834}}"); /* 65502 */
  NO_FIT("float16", "{range: {start: 0, step: 21835}}", "ends at 65505");
  FITS("float32", "{range: {start: 0.5, step: -0.25}}");
  char m[1024];
  /* One element: only the start has to fit. */
  assert_int_equal(
      one("int8", "[1]", "{range: {start: 127, step: 100}}", m, sizeof m),
      ST_OK);
  assert_int_equal(
      one("int8", "[0]", "{range: {start: 127, step: 100}}", m, sizeof m),
      ST_OK);
  assert_int_equal(
      one("int8", "[0]", "{range: {start: 300, step: 1}}", m, sizeof m),
      ST_ELOAD);
}

static void plan_resolve__random_inits(void **state) {
  (void)state;
  FITS("uint8", "{randint: [0, 256]}"); /* HI exclusive */
  NO_FIT("uint8", "{randint: [0, 257]}", "values reach 256");
  NO_FIT("uint8", "{randint: [-1, 10]}", "randint low -1 of 'a'");
  NO_FIT("int32", "{randint: [3, 2]}", "expected LO < HI");
  NO_FIT("int32", "{randint: [0.5, 2]}", "must be integers");
  FITS("float32", "{randint: [-100, 100]}"); /* torch.randint on floats */
  FITS("float32", "{uniform: [-1, 1]}");
  NO_FIT("float32", "{uniform: [1, 1]}", "LO < HI");
  NO_FIT("float32", "{uniform: [-inf, 1]}", "must be finite");
  NO_FIT("int8", "{uniform: [0, 1]}", "needs a float dtype, got int8");
  FITS("float64", "{normal: [0, 0]}"); /* STD 0 is a constant */
  NO_FIT("float64", "{normal: [0, -0.5]}", "has std -0.5");
  NO_FIT("uint8", "{normal: [0, 1]}", "needs a float dtype");
  NO_FIT("float64", "{normal: [nan, 1]}", "finite mean");
}

static void plan_resolve__values_count(void **state) {
  (void)state;
  char m[1024];
  assert_int_equal(
      one("int32", "[2, 2]", "{values: [1, 2, 3, 4]}", m, sizeof m), ST_OK);
  assert_int_equal(one("int32", "[2, 2]", "{values: [1, 2, 3]}", m, sizeof m),
                   ST_ELOAD);
  assert_string_equal(m, "values of 'a' has 3 entries; expected 4 (the "
                         "element count of its shape)");
  assert_int_equal(one("int32", "[0]", "{values: []}", m, sizeof m), ST_OK);
}

static void plan_resolve__shape_overflow(void **state) {
  (void)state;
  char m[1024];
  /* 2^62 elements: the count fits uint64, the bytes do not. */
  assert_int_equal(
      one("float32", "[4611686018427387904]", "zeros", m, sizeof m), ST_ELOAD);
  assert_non_null(strstr(m, "the product of its dimensions overflows"));
  /* A zero dimension makes the tensor empty wherever it is. */
  assert_int_equal(
      one("uint8", "[65536, 65536, 65536, 65536, 0]", "zeros", m, sizeof m),
      ST_OK);
  assert_int_equal(
      one("uint8", "[0, 65536, 65536, 65536, 65536]", "zeros", m, sizeof m),
      ST_OK); /* zero first: the product never overflows */
  assert_int_equal(one("uint8", "[2147483648]", "zeros", m, sizeof m),
                   ST_OK); /* exactly the 2 GiB default cap */
  assert_int_equal(one("uint8", "[2147483649]", "zeros", m, sizeof m),
                   ST_ELOAD);
  assert_non_null(strstr(m, "--max-arg-bytes"));
}

/* Params: a dtype param, a shape param, a value param, and what happens
 * when each has the wrong kind. */
static void plan_resolve__params(void **state) {
  (void)state;
  const char *head = "scene: s\nkernel: scale\nargs:\n"
                     "  - {tensor: x, dtype: T, shape: [R, 3], init: {fill: "
                     "F}}\n"
                     "  - {scalar: k, dtype: T, value: F}\ncases:\n";
  static const struct {
    const char *params;
    const char *error; /* NULL: loads */
  } rows[] = {
      {"{T: int16, R: 2, F: 7}", NULL},
      {"{T: 'bool', R: 0, F: 1}", NULL},
      {"{T: int16, R: 2, F: 70000}", "fill value 70000 of 'x' does not fit "
                                     "int16 in case 'c'"},
      {"{T: int16, R: -2, F: 1}", "dimension 0 of 'x' is -2 in case 'c'"},
      {"{T: int16, R: int8, F: 1}", "shape: param 'R' of case 'c' is the "
                                    "dtype 'int8'; expected a number"},
      {"{T: 16, R: 2, F: 1}", "dtype of 'x': param 'T' of case 'c' is 16"},
      {"{R: 2, F: 1}", "dtype 'T' of 'x' is neither a dtype nor a param of "
                       "case 'c'"},
      {"{T: uint8, R: 2, F: -1}", "value -1 of 'k' does not fit uint8 in "
                                  "case 'c'"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char text[1024];
    st_scene_set *set;
    st_error_list errs;
    snprintf(text, sizeof text, "%s  - name: c\n    params: %s\n", head,
             rows[i].params);
    st_error_list_init(&errs);
    assert_int_equal(st_scene_set_new(&set), ST_OK);
    st_status rc = st_scene_set_load_string(set, "p.yaml", text, strlen(text),
                                            NULL, &errs);
    if (rows[i].error == NULL) {
      if (rc != ST_OK)
        fail_msg("%s: unexpected error %s", rows[i].params,
                 errs.items[0].message);
    } else {
      int found = 0;
      for (size_t e = 0; e < errs.count; e++)
        found |= strstr(errs.items[e].message, rows[i].error) != NULL;
      if (rc != ST_ELOAD || !found)
        fail_msg("%s: expected '%s', got %zu errors, first '%s'",
                 rows[i].params, rows[i].error, errs.count,
                 errs.count ? errs.items[0].message : "(none)");
    }
    st_scene_set_free(set);
    st_error_list_free(&errs);
  }
}

static st_scene_set *load_text(const char *text, st_status want) {
  st_scene_set *set;
  st_error_list errs;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_status rc =
      st_scene_set_load_string(set, "t.yaml", text, strlen(text), NULL, &errs);
  if (rc != want)
    fail_msg("load: %s, first error: %s", st_status_str(rc),
             errs.count ? errs.items[0].message : "(none)");
  st_error_list_free(&errs);
  return set;
}

/* docs/scene-format.md#params-expressions-and-lists: rtol and atol may name a
 * param at the scene, case and tensor levels; the precedence stays tensor >
 * case > scene > dtype. */
static void plan_resolve__tolerance_params(void **state) {
  (void)state;
  st_scene_set *set = load_text(
      "scene: s\nkernel: add\nrtol: SR\natol: SA\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [2], rtol: TR}\n"
      "  - {tensor: b, dtype: float32, shape: [2]}\n"
      "  - {tensor: out, dtype: float32, shape: [2], role: output}\n"
      "cases:\n"
      "  - {name: c, params: {SR: 0.25, SA: 0.5, TR: 2, CT: 8}, atol: CT}\n"
      "  - {name: d, params: {SR: 0, SA: 1e-3, TR: 0.125}}\n",
      ST_OK);
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  assert_int_equal(st__plan_resolve(s, 0, UINT64_MAX, &p, NULL), ST_OK);
  assert_true(p.args[0].rtol == 2 && p.args[0].atol == 8);
  assert_true(p.args[1].rtol == 0.25 && p.args[1].atol == 8);
  st__plan_free(&p);
  assert_int_equal(st__plan_resolve(s, 1, UINT64_MAX, &p, NULL), ST_OK);
  assert_true(p.args[0].rtol == 0.125 && p.args[0].atol == 1e-3);
  assert_true(p.args[2].rtol == 0 && p.args[2].atol == 1e-3);
  st__plan_free(&p);
  st_scene_set_free(set);
  /* A param that is negative is reported at the name. */
  set = load_text("scene: s\nkernel: copy\nrtol: R\nargs:\n"
                  "  - {tensor: x, dtype: float32, shape: [2]}\n"
                  "  - {tensor: y, dtype: float32, shape: [2], role: output}\n"
                  "cases: [{name: c, params: {R: -1}}]\n",
                  ST_ELOAD);
  st_scene_set_free(set);
}

/* equal_nan: tensor > case > scene > false. */
static void plan_resolve__equal_nan_precedence(void **state) {
  (void)state;
  st_scene_set *set = load_text(
      "scene: s\nkernel: add\nequal_nan: true\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [2], equal_nan: false}\n"
      "  - {tensor: b, dtype: float32, shape: [2]}\n"
      "  - {tensor: out, dtype: float32, shape: [2], role: output}\n"
      "cases:\n  - {name: c}\n  - {name: d, equal_nan: false}\n",
      ST_OK);
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  assert_int_equal(st__plan_resolve(s, 0, UINT64_MAX, &p, NULL), ST_OK);
  assert_int_equal(p.args[0].equal_nan, 0);
  assert_int_equal(p.args[2].equal_nan, 1);
  st__plan_free(&p);
  assert_int_equal(st__plan_resolve(s, 1, UINT64_MAX, &p, NULL), ST_OK);
  assert_int_equal(p.args[2].equal_nan, 0);
  st__plan_free(&p);
  st_scene_set_free(set);
  set = load_text("scene: s\nkernel: copy\nargs:\n"
                  "  - {tensor: x, dtype: float32, shape: [2]}\n"
                  "  - {tensor: y, dtype: float32, shape: [2], role: output}\n"
                  "cases: [{name: c}]\n",
                  ST_OK);
  assert_int_equal(
      st__plan_resolve(st_scene_set_get(set, 0), 0, UINT64_MAX, &p, NULL),
      ST_OK);
  assert_int_equal(p.args[1].equal_nan, 0);
  st__plan_free(&p);
  st_scene_set_free(set);
}

/* Did-you-mean: at most two edits, a transposition is one, the first of
 * equally near candidates wins, an exact match is not suggested. */
static void suggest__edit_distance(void **state) {
  (void)state;
  static const char *const c[] = {"shape", "scale", "platforms", "cpu",
                                  "threads"};
  assert_string_equal(st__suggest("shap", c, 5), "shape");
  assert_string_equal(st__suggest("hsape", c, 5), "shape"); /* transposed */
  assert_string_equal(st__suggest("platfrom", c, 5), "platforms");
  assert_string_equal(st__suggest("thread", c, 5), "threads");
  assert_string_equal(st__suggest("sxape", c, 5), "shape"); /* vs scale */
  assert_null(st__suggest("gpuxy", c, 5)); /* three edits from cpu */
  assert_null(st__suggest("cpu", c, 5));
  assert_null(st__suggest("", c, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(load_options_init__defaults),
      cmocka_unit_test(scene_set_free__accepts_null),
      cmocka_unit_test(scene_set__empty),
      cmocka_unit_test(scene_set_get__out_of_range),
      cmocka_unit_test(scene_case_is_manual__forms),
      cmocka_unit_test(scene_case_runs_on__platform_list),
      cmocka_unit_test(default_tolerance__torch_values),
      cmocka_unit_test(plan_resolve__small_case),
      cmocka_unit_test(plan_resolve__tolerance_precedence),
      cmocka_unit_test(plan_resolve__tolerance_params),
      cmocka_unit_test(plan_resolve__equal_nan_precedence),
      cmocka_unit_test(suggest__edit_distance),
      cmocka_unit_test(plan_resolve__case_index_out_of_range),
      cmocka_unit_test(plan_resolve__max_arg_bytes),
      cmocka_unit_test(plan_resolve__integer_fits),
      cmocka_unit_test(plan_resolve__bool_fits),
      cmocka_unit_test(plan_resolve__float_fits),
      cmocka_unit_test(plan_resolve__range),
      cmocka_unit_test(plan_resolve__random_inits),
      cmocka_unit_test(plan_resolve__values_count),
      cmocka_unit_test(plan_resolve__shape_overflow),
      cmocka_unit_test(plan_resolve__params),
  };
  return cmocka_run_group_tests(tests, to_source_root, NULL);
}
