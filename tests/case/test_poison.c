/* SPDX-License-Identifier: MIT */
/* Output poisoning, end to end
 * (docs/reliability.md#guard-zones-guard-pages-and-poisoning, issue 13): an
 * output with no explicit init starts every run as the poison, so a kernel that
 * leaves an element unwritten fails compare with a message saying so, for
 * float, integer and bool outputs, and with equal_nan on (the float poison is a
 * NaN that equal_nan must not excuse); a kernel that writes everything
 * passes, and an output with an explicit init is not poisoned. Kernels
 * are registered for `cpu` on the test's own registry. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

#include "case_testing.h"

#include "case/poison.h"

/* copy(x) -> y except y's last element. */
static st_status skip_last(st_op_call *call) {
  const size_t es = st_dtype_size(call->tensors[1].dtype);
  memcpy(call->tensors[1].data, call->tensors[0].data,
         (call->tensors[1].numel - 1) * es);
  return ST_OK;
}

static st_status copy_all(st_op_call *call) {
  memcpy(call->tensors[1].data, call->tensors[0].data, call->tensors[1].nbytes);
  return ST_OK;
}

/* Writes everything in its first call, skips the last element after:
 * the poison must be back in the second round. */
static int calls;
static st_status skip_last_second(st_op_call *call) {
  return calls++ == 0 ? copy_all(call) : skip_last(call);
}

static st_case_result *run(const char *op, st_op_fn fn, const char *text) {
  return ct_run_case("poisontest", op, fn, text);
}

/* A scene: x of dtype with x_init, y of dtype with y_extra (e.g. an
 * init), scene-level extra lines. */
static st_case_result *run_scene(const char *op, st_op_fn fn, const char *dtype,
                                 const char *x_init, const char *y_extra,
                                 const char *extra, unsigned rounds) {
  char text[1024];
  snprintf(text, sizeof text,
           "scene: p\nkernel: %s\ngolden: copy\n%s"
           "args:\n"
           "  - {tensor: x, dtype: %s, shape: [2, 3], init: %s}\n"
           "  - {tensor: y, dtype: %s, shape: [2, 3], role: output%s}\n"
           "cases:\n  - {name: c, rounds: %u}\n",
           op, extra, dtype, x_init, dtype, y_extra, rounds);
  return run(op, fn, text);
}

static void expect_unwritten(st_case_result *r, const char *dtype) {
  char want[256];
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  snprintf(want, sizeof want,
           "output 'y' (%s): 1 of 6 elements never written by the kernel "
           "(still the poison); first at index [1, 2]\n",
           dtype);
  assert_non_null(st_case_result_message(r));
  assert_true(strncmp(st_case_result_message(r), want, strlen(want)) == 0);
  st_assert_phases(r, "args", "golden", "record", "run", "compare");
  assert_int_equal(st_case_result_event(r, 4)->status, ST_PHASE_FAIL);
  st_case_result_free(r);
}

static void poison__float_output_skipped_element_fails(void **state) {
  (void)state;
  expect_unwritten(run_scene("skip_last", skip_last, "float32",
                             "{range: {start: 1, step: 1}}", "", "", 1),
                   "float32");
}

static void
poison__float64_and_half_outputs_skipped_element_fail(void **state) {
  (void)state;
  expect_unwritten(run_scene("skip_last", skip_last, "float64",
                             "{range: {start: 1, step: 1}}", "", "", 1),
                   "float64");
  expect_unwritten(
      run_scene("skip_last", skip_last, "float16", "ones", "", "", 1),
      "float16");
  expect_unwritten(
      run_scene("skip_last", skip_last, "bfloat16", "ones", "", "", 1),
      "bfloat16");
}

static void poison__int_output_skipped_element_fails(void **state) {
  (void)state;
  expect_unwritten(run_scene("skip_last", skip_last, "int32",
                             "{range: {start: 1, step: 1}}", "", "", 1),
                   "int32");
  expect_unwritten(run_scene("skip_last", skip_last, "int8", "ones", "", "", 1),
                   "int8");
}

static void poison__bool_output_skipped_element_fails(void **state) {
  (void)state;
  expect_unwritten(run_scene("skip_last", skip_last, "bool", "ones", "", "", 1),
                   "bool");
}

/* Golden is NaN everywhere and equal_nan is on: without the poison rule
 * the unwritten (NaN) element would pass. */
static void poison__equal_nan_does_not_excuse_unwritten(void **state) {
  (void)state;
  expect_unwritten(run_scene("skip_last", skip_last, "float32", "{fill: nan}",
                             "", "equal_nan: true\n", 1),
                   "float32");
}

static void poison__equal_nan_kernel_writing_all_passes(void **state) {
  (void)state;
  st_case_result *r = run_scene("copy_all", copy_all, "float32", "{fill: nan}",
                                "", "equal_nan: true\n", 2);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_case_result_free(r);
}

static void poison__kernel_writing_all_passes_every_dtype(void **state) {
  (void)state;
  static const char *const dtypes[] = {
      "float32", "float64", "float16", "bfloat16", "int8",
      "int16",   "int32",   "int64",   "uint8",    "bool"};
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
    st_case_result *r =
        run_scene("copy_all", copy_all, dtypes[i], "ones", "", "", 2);
    assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
    st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                     "run", "compare");
    st_case_result_free(r);
  }
}

/* -91 is int8's poison byte 0xA5: written correctly, it is indistinguishable
 * from the poison, so golden having the same bits leaves it to compare. */
static void poison__int8_result_equal_to_poison_passes(void **state) {
  (void)state;
  st_case_result *r =
      run_scene("copy_all", copy_all, "int8", "{fill: -91}", "", "", 1);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_case_result_free(r);
}

/* x and y zeros: a kernel skipping y's last element leaves the declared
 * zero, which golden agrees with; poisoned, it would fail. */
static void poison__explicit_init_is_not_poisoned(void **state) {
  (void)state;
  st_case_result *r = run_scene("skip_last", skip_last, "float32", "zeros",
                                ", init: zeros", "", 2);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_case_result_free(r);
  r = run_scene("skip_last", skip_last, "int32", "zeros", ", init: zeros", "",
                1);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_case_result_free(r);
  /* The same scene without the init is poisoned. */
  expect_unwritten(
      run_scene("skip_last", skip_last, "float32", "zeros", "", "", 1),
      "float32");
}

static void poison__every_round_starts_poisoned(void **state) {
  (void)state;
  calls = 0;
  st_case_result *r = run_scene("skip_last_second", skip_last_second, "float32",
                                "{range: {start: 1, step: 1}}", "", "", 2);
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  assert_non_null(
      strstr(st_case_result_message(r), "never written by the kernel"));
  assert_non_null(strstr(st_case_result_message(r), "round 2 of 2"));
  st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                   "run", "compare");
  st_case_result_free(r);
}

/* st__poison_find directly, for every element width, on tensors longer
 * than any vector (so both a vectorized body and its tail run): the count
 * of elements still the poison, the first of them, the elements whose
 * expected value is itself the poison's bits left out, and no poison
 * at all giving count 0 and index (size_t)-1. */
static void poison__find_counts_and_first_every_width(void **state) {
  static const st_dtype dts[] = {ST_DTYPE_UINT8, ST_DTYPE_FLOAT16,
                                 ST_DTYPE_FLOAT32, ST_DTYPE_FLOAT64};
  enum { N = 1003 };
  static unsigned char out[N * 8], exp_[N * 8];
  (void)state;
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    st_tensor t, e;
    unsigned char pat[8];
    size_t count = 99, first;
    const size_t es = st__poison_bytes(dts[k], pat);
    memset(&t, 0, sizeof t);
    t.dtype = dts[k];
    t.ndim = 1;
    t.shape[0] = N;
    t.numel = N;
    t.nbytes = N * es;
    t.data = out;
    e = t;
    e.data = exp_;
    memset(out, 0, sizeof out);
    memset(exp_, 0, sizeof exp_);
    first = st__poison_find(&t, &e, &count);
    assert_int_equal(count, 0);
    assert_true(first == (size_t)-1);
    /* Poison at 998, 1000 and 1002 (the tail); expected's own poison at
     * 1000, which is then not counted. */
    memcpy(out + 998 * es, pat, es);
    memcpy(out + 1000 * es, pat, es);
    memcpy(out + 1002 * es, pat, es);
    memcpy(exp_ + 1000 * es, pat, es);
    first = st__poison_find(&t, &e, &count);
    assert_int_equal(count, 2);
    assert_int_equal(first, 998);
    first = st__poison_find(&t, NULL, &count);
    assert_int_equal(count, 3);
    assert_int_equal(first, 998);
    /* One poison early: the first index found is it. */
    memcpy(out + 3 * es, pat, es);
    first = st__poison_find(&t, &e, &count);
    assert_int_equal(count, 3);
    assert_int_equal(first, 3);
    /* A value differing from the poison in its last byte only is not it. */
    memset(out, 0, sizeof out);
    memcpy(out + 5 * es, pat, es);
    out[5 * es + es - 1] ^= 1;
    first = st__poison_find(&t, NULL, &count);
    assert_int_equal(count, 0);
    assert_true(first == (size_t)-1);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(poison__float_output_skipped_element_fails),
      cmocka_unit_test(poison__float64_and_half_outputs_skipped_element_fail),
      cmocka_unit_test(poison__int_output_skipped_element_fails),
      cmocka_unit_test(poison__bool_output_skipped_element_fails),
      cmocka_unit_test(poison__equal_nan_does_not_excuse_unwritten),
      cmocka_unit_test(poison__equal_nan_kernel_writing_all_passes),
      cmocka_unit_test(poison__kernel_writing_all_passes_every_dtype),
      cmocka_unit_test(poison__int8_result_equal_to_poison_passes),
      cmocka_unit_test(poison__explicit_init_is_not_poisoned),
      cmocka_unit_test(poison__every_round_starts_poisoned),
      cmocka_unit_test(poison__find_counts_and_first_every_width),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
