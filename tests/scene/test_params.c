/* SPDX-License-Identifier: MIT */
/* Params as the loader and the plan read them
 * (docs/scene-format.md#params-expressions-and-lists): the good scenes of
 * tests/scenes/params/ load, and each case's plan holds the values its
 * derived params, expressions, list params and YAML special floats stand
 * for; every param a field reaches is marked used (what the unused-param
 * warning reads). The bad forms are fixtures in tests/scenes/bad/
 * (test_loader). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scene/params.h"
#include "scene/scene.h"

static int to_source_root(void **state) {
  (void)state;
  return chdir(ST_SOURCE_ROOT);
}

static st_scene_set *load_ok(const char *path) {
  st_scene_set *set;
  st_error_list errs;
  char buf[2200];
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_status rc = st_scene_set_load_path(set, path, NULL, &errs);
  for (size_t i = 0; i < errs.count; i++)
    print_message("%s\n", st_error_format(&errs.items[i], buf, sizeof buf));
  assert_int_equal(rc, ST_OK);
  st_error_list_free(&errs);
  return set;
}

static const st__rarg *rarg(const st__plan *p, const char *name) {
  for (size_t i = 0; i < p->n_args; i++)
    if (strcmp(p->args[i].name, name) == 0)
      return &p->args[i];
  fail_msg("no arg %s", name);
  return NULL;
}

static void plan_of(const st_scene *s, size_t c, st__plan *p) {
  assert_int_equal(st__plan_resolve(s, c, UINT64_MAX, p, NULL), ST_OK);
}

static double f(const st__num *n) { return n->is_int ? (double)n->i : n->f; }

static void assert_shape(const st__rarg *r, int ndim, int64_t d0, int64_t d1) {
  assert_int_equal(r->ndim, ndim);
  if (ndim > 0)
    assert_int_equal(r->shape[0], d0);
  if (ndim > 1)
    assert_int_equal(r->shape[1], d1);
}

static void assert_all_used(const st_scene *s) {
  for (size_t c = 0; c < s->n_cases; c++)
    for (size_t i = 0; i < s->cases[c].n_params; i++)
      if (!s->cases[c].params[i].used)
        fail_msg("param %s of case %s not marked used",
                 s->cases[c].params[i].name, s->cases[c].name);
}

/* Case c: S 128, HALF S / 2, Q ceil_div(S + 1, 64), TOL 1e-5. */
static void params__derived_in_every_field(void **state) {
  (void)state;
  st_scene_set *set = load_ok("tests/scenes/params/derived.yaml");
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  plan_of(s, 0, &p);
  const st__rarg *x = rarg(&p, "x"), *y = rarg(&p, "y"), *fa = rarg(&p, "f");
  assert_shape(x, 2, 64, 3);
  assert_true(x->a.is_int && x->a.i == -64); /* range start -HALF */
  assert_true(x->b.is_int && x->b.i == 2);   /* step S / 64 */
  assert_shape(y, 2, 64, 3);
  assert_true(y->a.is_int && y->a.i == 28); /* max(S, 7) % 100 */
  assert_true(f(&fa->a) == -1.0 / 128 && f(&fa->b) == 0.5);
  assert_true(fa->atol == 1e-6 * 128);
  assert_true(x->rtol == 2e-5); /* the scene's TOL * 2 */
  const st__rarg *r = rarg(&p, "r");
  assert_true(r->a.i == -3 && r->b.i == 256);
  const st__rarg *v = rarg(&p, "v");
  assert_int_equal(v->n_values, 3);
  assert_true(f(&v->values[0]) == 1.5 && f(&v->values[1]) == 0.5 &&
              f(&v->values[2]) == -2e-3);
  const st__rarg *w = rarg(&p, "w");
  assert_true(w->values[0].i == 127 && w->values[1].i == -2);
  const st__rarg *n = rarg(&p, "n");
  assert_true(f(&n->a) == 1e-5 && f(&n->b) == 0.25);
  assert_true(rarg(&p, "k")->value.i == 4096);
  assert_true(f(&rarg(&p, "g")->value) == 128.0 / 3);
  const st__rarg *dims = rarg(&p, "dims");
  assert_int_equal(dims->n_ints, 3);
  assert_true(dims->ints[0] == 64 && dims->ints[1] == 2 && dims->ints[2] == 7);
  assert_int_equal(s->cases[0].rounds, 2);
  assert_true(s->cases[0].timeout == 2.0);
  st__plan_free(&p);

  /* Case d: the same expressions over S 64 and TOL 0.5. */
  plan_of(s, 1, &p);
  x = rarg(&p, "x");
  assert_shape(x, 2, 32, 2);
  assert_true(x->b.i == 1);
  assert_true(rarg(&p, "y")->a.i == 64);
  assert_true(x->rtol == 1.0);
  assert_true(s->cases[1].has_atol && s->cases[1].atol == 0.125);
  assert_true(f(&rarg(&p, "g")->value) == 64.0 / 3);
  st__plan_free(&p);
  assert_all_used(s);
  st_scene_set_free(set);
}

static void params__lists_for_whole_fields(void **state) {
  (void)state;
  st_scene_set *set = load_ok("tests/scenes/params/lists.yaml");
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  plan_of(s, 0, &p);
  const st__rarg *x = rarg(&p, "x"), *l = rarg(&p, "L");
  assert_shape(x, 2, 1, 3);
  assert_int_equal(x->n_values, 3);
  assert_true(x->values[0].i == 33 && x->values[1].i == 17 &&
              x->values[2].i == 128);
  assert_int_equal(l->n_ints, 3);
  assert_true(l->ints[0] == 33 && l->ints[1] == 17 && l->ints[2] == 128);
  st__plan_free(&p);
  /* DIMS: [] is a 0-dimensional tensor of one element. */
  plan_of(s, 1, &p);
  x = rarg(&p, "x");
  assert_int_equal(x->ndim, 0);
  assert_int_equal(x->numel, 1);
  assert_true(x->values[0].i == -4);
  assert_true(rarg(&p, "L")->ints[0] == -4);
  st__plan_free(&p);
  assert_all_used(s);
  st_scene_set_free(set);
}

static void params__matrix_expressions_and_names(void **state) {
  (void)state;
  static const char *const names[] = {
      "grid[COLS=8,DT=float32]", "grid[COLS=2 * 64,DT=float32]",
      "grid[COLS=ROWS * 3,DT=float32]", "grid[COLS=max(ROWS, 5),DT=float32]"};
  static const int64_t cols[] = {8, 128, 6, 5};
  st_scene_set *set = load_ok("tests/scenes/params/matrix.yaml");
  const st_scene *s = st_scene_set_get(set, 0);
  assert_int_equal(st_scene_case_count(s), 4);
  for (size_t c = 0; c < 4; c++) {
    st__plan p;
    assert_string_equal(st_scene_case_name(s, c), names[c]);
    plan_of(s, c, &p);
    const st__rarg *x = rarg(&p, "x");
    assert_shape(x, 2, 2, cols[c]);
    assert_true(f(&x->a) == (double)cols[c] / 4); /* float32: in double */
    st__plan_free(&p);
  }
  assert_all_used(s);
  st_scene_set_free(set);
}

static void params__yaml_special_floats(void **state) {
  (void)state;
  st_scene_set *set = load_ok("tests/scenes/params/special_floats.yaml");
  const st_scene *s = st_scene_set_get(set, 0);
  st__plan p;
  plan_of(s, 0, &p);
  const st__rarg *x = rarg(&p, "x");
  /* .nan .NaN .NAN .inf .Inf .INF +.inf -.inf -.Inf +.INF nan inf -inf */
  static const int want[] = {0, 0, 0, 1, 1, 1, 1, -1, -1, 1, 0, 1, -1};
  assert_int_equal(x->n_values, 13);
  for (size_t i = 0; i < 13; i++) {
    double d = f(&x->values[i]);
    if (want[i] == 0 ? !isnan(d) : d != want[i] * INFINITY)
      fail_msg("values[%zu] is %g", i, d);
  }
  assert_true(f(&rarg(&p, "y")->a) == -INFINITY);
  assert_true(isnan(f(&rarg(&p, "s")->value)));
  assert_true(f(&rarg(&p, "t")->value) == INFINITY);
  st__plan_free(&p);
  plan_of(s, 1, &p);
  assert_true(f(&rarg(&p, "t")->value) == -INFINITY);
  st__plan_free(&p);
  st_scene_set_free(set);
}

/* A derived param's expression is evaluated in the domain of the field
 * that reads it: S / 2 is exact in a shape and 3.5 in a float value. */
static void params__domain_is_the_fields(void **state) {
  (void)state;
  st__param ps[2];
  st__case k;
  st__val v;
  st__val_error e;
  st__num out;
  int dep = 0;
  memset(ps, 0, sizeof ps);
  memset(&k, 0, sizeof k);
  memset(&v, 0, sizeof v);
  ps[0].name = "S";
  ps[0].num.is_int = 1, ps[0].num.i = 7, ps[0].num.f = 7;
  ps[1].name = "HALF";
  ps[1].expr.kind = ST__VAL_NAME;
  ps[1].expr.name = "S / 2";
  ps[1].expr.line = 3;
  ps[1].expr.column = 20;
  ps[1].expr.text_column = 21;
  k.name = "c";
  k.params = ps;
  k.n_params = 2;
  v.kind = ST__VAL_NAME;
  v.name = "HALF";
  v.line = 9;
  v.column = 5;
  v.text_column = 5;
  assert_int_equal(
      st__val_eval(&k, &v, ST__EXPR_FLOAT, "value", &out, &dep, &e), 0);
  assert_true(!out.is_int && out.f == 3.5);
  assert_int_equal(dep, 1);
  assert_int_not_equal(
      st__val_eval(&k, &v, ST__EXPR_INT, "shape", &out, &dep, &e), 0);
  /* At the '/' of HALF's own expression, naming the param. */
  assert_int_equal(e.line, 3);
  assert_int_equal(e.column, 23);
  assert_string_equal(e.message,
                      "shape: param 'HALF' of case 'c': expression 'S / 2': "
                      "7 / 2 leaves a remainder of 1; expected an exact "
                      "division in an integer field (ceil_div(a, b) rounds "
                      "up)");
  /* Without a text column (escapes, folded lines): the value's own. */
  ps[1].expr.text_column = 0;
  assert_int_not_equal(
      st__val_eval(&k, &v, ST__EXPR_INT, "shape", &out, &dep, &e), 0);
  assert_int_equal(e.column, 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(params__derived_in_every_field),
      cmocka_unit_test(params__lists_for_whole_fields),
      cmocka_unit_test(params__matrix_expressions_and_names),
      cmocka_unit_test(params__yaml_special_floats),
      cmocka_unit_test(params__domain_is_the_fields),
  };
  return cmocka_run_group_tests(tests, to_source_root, NULL);
}
