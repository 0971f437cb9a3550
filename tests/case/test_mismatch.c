/* SPDX-License-Identifier: MIT */
/* Tests of the compare phase's failure report (harness/case/mismatch.c)
 * and the .npy writer (harness/case/npy.c): the full text of a failure
 * with several failing tensors in a later round, pinned; a passing round
 * reports nothing; the .npy files of every dtype are checked by numpy
 * itself in tests/cli/test_npy.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/args.h"
#include "case/mismatch.h"
#include "scene/scene.h"

typedef struct fixture {
  st_scene_set *set;
  st__plan plan;
  st__argset args, gold, init;
} fixture;

/* A scene of four tensors: an input, an output, an inout and a diagnostic
 * output (compare: false), built and copied as the runner does. */
static void fixture_load(fixture *f) {
  static const char text[] =
      "scene: rep\n"
      "kernel: copy\n"
      "args:\n"
      "  - {tensor: x, dtype: int32, shape: [2, 3], init: {range: {start: 0, "
      "step: 1}}}\n"
      "  - {tensor: y, dtype: float32, shape: [2, 3], role: output, atol: "
      "0.01, rtol: 0}\n"
      "  - {tensor: acc, dtype: float64, shape: [3], init: {fill: 1}, role: "
      "inout}\n"
      "  - {tensor: t, dtype: float32, shape: [1], role: output, compare: "
      "false}\n"
      "cases:\n"
      "  - name: c\n";
  st_error_list errs;
  st_error err;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  assert_int_equal(st_scene_set_load_string(f->set, "rep.yaml", text,
                                            strlen(text), NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  assert_int_equal(st__plan_resolve(st_scene_set_get(f->set, 0), 0, UINT64_MAX,
                                    &f->plan, NULL),
                   ST_OK);
  assert_int_equal(st__args_build(&f->plan, 0, &f->args, &err), ST_OK);
  assert_int_equal(st__argset_clone(&f->args, &f->gold), ST_OK);
  assert_int_equal(st__argset_clone(&f->args, &f->init), ST_OK);
}

static void fixture_free(fixture *f) {
  st__argset_free(&f->args);
  st__argset_free(&f->gold);
  st__argset_free(&f->init);
  st__plan_free(&f->plan);
  st_scene_set_free(f->set);
}

static void mismatch_report__passing_round_says_nothing(void **state) {
  (void)state;
  fixture f;
  char *text = (char *)1;
  fixture_load(&f);
  assert_int_equal(st__mismatch_report(&f.plan, &f.args, &f.gold, &f.init, 0, 1,
                                       NULL, &text),
                   0);
  assert_null(text);
  fixture_free(&f);
}

/* Round 2 of 3: the input modified, the output off in three places (one
 * a NaN; a fourth element within atol), the inout off in one, the
 * diagnostic output ignored. The whole text, as text and TAP show it. */
static void mismatch_report__full_text(void **state) {
  (void)state;
  fixture f;
  char *text = NULL;
  fixture_load(&f);
  st_tensor *x = &f.args.tensors[0], *y = &f.args.tensors[1];
  st_tensor *acc = &f.args.tensors[2], *t = &f.args.tensors[3];
  for (size_t i = 0; i < 6; i++) {
    st_tensor_set_f64(&f.gold.tensors[1], i, (double)i / 4);
    st_tensor_set_f64(y, i, (double)i / 4);
  }
  st_tensor_set_f64(y, 1, 0.5);   /* off by 0.25 */
  st_tensor_set_f64(y, 4, 1.005); /* within atol 0.01 */
  st_tensor_set_f64(y, 5, NAN);
  st_tensor_set_f64(y, 3, 0.0); /* off by 0.75 */
  st_tensor_set_f64(acc, 2, 1.5);
  st_tensor_set_i64(x, 4, 40);
  st_tensor_set_f64(t, 0, 123.0);
  assert_int_equal(st__mismatch_report(&f.plan, &f.args, &f.gold, &f.init, 1, 3,
                                       NULL, &text),
                   3);
  assert_string_equal(
      text,
      "input 'x' was modified by the kernel: 1 of 24 bytes differ; first at "
      "element [1, 1]\n"
      "round 2 of 3: 3 of 3 checked tensors differ\n"
      "input 'x' (int32): 1 of 6 elements changed; first at index (1, 1): "
      "before 4, after 40\n"
      "tensor 'y' (float32, shape [2, 3], rtol 0, atol 0.01):\n"
      "  Mismatched elements: 3 / 6 (50.0%)\n"
      "  First mismatch at index (0, 1): actual 0.5, expected 0.25\n"
      "  Greatest absolute difference: nan at index (1, 2) (up to 0.01 "
      "allowed): actual nan, expected 1.25\n"
      "  Greatest relative difference: nan at index (1, 2) (up to 0 "
      "allowed)\n"
      "  index          actual           expected         abs diff     rel "
      "diff\n"
      "  (0, 1)         0.5              0.25             0.25         1\n"
      "  (1, 0)         0                0.75             0.75         1\n"
      "  (1, 2)         nan              1.25             nan          nan\n"
      "tensor 'acc' (float64, shape [3], rtol 1e-07, atol 1e-07):\n"
      "  Mismatched elements: 1 / 3 (33.3%)\n"
      "  First mismatch at index 2: actual 1.5, expected 1\n"
      "  Greatest absolute difference: 0.5 at index 2 (up to 1e-07 "
      "allowed): actual 1.5, expected 1\n"
      "  Greatest relative difference: 0.5 at index 2 (up to 1e-07 "
      "allowed)\n"
      "  index          actual           expected         abs diff     rel "
      "diff\n"
      "  2              1.5              1                0.5          0.5");
  free(text);
  fixture_free(&f);
}

/* More than 8 mismatching elements: the table stops at 8 and says how
 * many more; the greatest difference is found past the table. */
static void mismatch_report__table_cut_at_eight(void **state) {
  (void)state;
  fixture f;
  char *text = NULL;
  fixture_load(&f);
  for (size_t i = 0; i < 3; i++)
    st_tensor_set_f64(&f.args.tensors[2], i, 1.0 + (double)(i + 1));
  assert_int_equal(st__mismatch_report(&f.plan, &f.args, &f.gold, &f.init, 0, 1,
                                       NULL, &text),
                   1);
  assert_non_null(strstr(text, "Greatest absolute difference: 3 at index 2 "));
  assert_null(strstr(text, "more"));
  free(text);
  fixture_free(&f);

  /* 100 elements of float16, all off. */
  static const char big[] =
      "scene: big\nkernel: copy\nargs:\n"
      "  - {tensor: a, dtype: float16, shape: [100]}\n"
      "  - {tensor: b, dtype: float16, shape: [100], role: output}\n"
      "cases: [{name: c}]\n";
  st_scene_set *set;
  st__plan plan;
  st__argset args, gold, init;
  st_error err;
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(
      st_scene_set_load_string(set, "b.yaml", big, strlen(big), NULL, NULL),
      ST_OK);
  assert_int_equal(
      st__plan_resolve(st_scene_set_get(set, 0), 0, UINT64_MAX, &plan, NULL),
      ST_OK);
  assert_int_equal(st__args_build(&plan, 0, &args, &err), ST_OK);
  assert_int_equal(st__argset_clone(&args, &gold), ST_OK);
  assert_int_equal(st__argset_clone(&args, &init), ST_OK);
  for (size_t i = 0; i < 100; i++)
    st_tensor_set_f64(&args.tensors[1], i, i == 50 ? 64.0 : 1.0);
  assert_int_equal(
      st__mismatch_report(&plan, &args, &gold, &init, 0, 1, NULL, &text), 1);
  assert_non_null(strstr(text, "Mismatched elements: 100 / 100 (100.0%)"));
  assert_non_null(strstr(text, "Greatest absolute difference: 64 at index 50 "
                               "(up to 1e-05 allowed): actual 64, expected "
                               "0"));
  assert_non_null(strstr(text, "\n  7              1 "));
  assert_null(strstr(text, "\n  8              1 "));
  assert_non_null(strstr(text, "\n  ... 92 more"));
  free(text);
  st__argset_free(&args);
  st__argset_free(&gold);
  st__argset_free(&init);
  st__plan_free(&plan);
  st_scene_set_free(set);
}

/* Splits the table line at `line` (up to its newline) at runs of two or
 * more spaces, as the HTML report does; returns the number of cells and
 * each cell's column in start[]. */
static int table_cells(const char *line, size_t start[8]) {
  int n = 0;
  size_t i = 0;
  while (line[i] == ' ')
    i++;
  while (line[i] != '\0' && line[i] != '\n' && n < 8) {
    start[n++] = i;
    while (line[i] != '\0' && line[i] != '\n' &&
           !(line[i] == ' ' && line[i + 1] == ' '))
      i++;
    while (line[i] == ' ')
      i++;
  }
  return n;
}

/* float64 values print with 17 significant digits, wider than the
 * columns of 16: the columns widen, stay aligned with the header and two
 * spaces apart, so each line is five cells (it was three, merged). */
static void mismatch_report__float64_table_aligned(void **state) {
  (void)state;
  fixture f;
  char *text = NULL;
  fixture_load(&f);
  st_tensor *acc = &f.args.tensors[2];
  st_tensor_set_f64(acc, 0, 1.0 / 3.0);
  st_tensor_set_f64(acc, 1, -2.0 / 3.0);
  assert_int_equal(st__mismatch_report(&f.plan, &f.args, &f.gold, &f.init, 0, 1,
                                       NULL, &text),
                   1);
  const char *head = strstr(text, "\n  index ");
  assert_non_null(head);
  size_t hs[8], rs[8];
  assert_int_equal(table_cells(head + 1, hs), 5);
  const char *row = strchr(head + 1, '\n');
  for (int r = 0; r < 2; r++) {
    assert_non_null(row);
    row++;
    assert_int_equal(table_cells(row, rs), 5);
    for (int c = 0; c < 5; c++)
      assert_int_equal(rs[c], hs[c]);
    row = strchr(row, '\n');
  }
  assert_null(row);
  assert_non_null(strstr(text, "\n  0              0.33333333333333331   1  "));
  free(text);
  fixture_free(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mismatch_report__passing_round_says_nothing),
      cmocka_unit_test(mismatch_report__full_text),
      cmocka_unit_test(mismatch_report__table_cut_at_eight),
      cmocka_unit_test(mismatch_report__float64_table_aligned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
