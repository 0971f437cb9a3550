/* SPDX-License-Identifier: MIT */
/* Guard zones around tensor buffers, end to end (issue 13): a kernel that
 * writes past the end of its output, or before the start of an input,
 * fails its case with an error naming the tensor, the side and the bytes
 * it reached, in the `run` phase; a kernel that stays inside passes. The
 * kernels are registered for platform `cpu` on a registry of the test's
 * own, so no plugin is needed. Whole phase sequences, golden included. */
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

/* copy(x) -> y, then three elements more past y's end. */
static st_status past_end(st_op_call *call) {
  const float *x = call->tensors[0].data;
  float *y = call->tensors[1].data;
  for (size_t i = 0; i < call->tensors[1].numel + 3; i++)
    y[i] = i < call->tensors[0].numel ? x[i] : 7.0f;
  return ST_OK;
}

/* copy, and one element before y's start. */
static st_status before_start(st_op_call *call) {
  const float *x = call->tensors[0].data;
  float *y = call->tensors[1].data;
  memcpy(y, x, call->tensors[1].nbytes);
  y[-1] = 0.0f;
  return ST_OK;
}

static st_status inside(st_op_call *call) {
  memcpy(call->tensors[1].data, call->tensors[0].data, call->tensors[1].nbytes);
  return ST_OK;
}

static const char scene_fmt[] =
    "scene: g\n"
    "kernel: %s\n"
    "golden: copy\n"
    "args:\n"
    "  - {tensor: x, dtype: float32, shape: [10], init: {range: {start: 0, "
    "step: 1}}}\n"
    "  - {tensor: y, dtype: float32, shape: [10], role: output}\n"
    "cases:\n"
    "  - {name: c, rounds: 2}\n";

static st_case_result *run(const char *op, st_op_fn fn) {
  char text[512];
  snprintf(text, sizeof text, scene_fmt, op);
  return ct_run_case("guardtest", op, fn, text);
}

static void guard__write_past_end_is_error_naming_tensor(void **state) {
  (void)state;
  st_case_result *r = run("past_end", past_end);
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(r),
                      "run: kernel wrote out of bounds of tensor 'y': 12 "
                      "bytes past its end (40 bytes long; guard zone)");
  st_assert_phases(r, "args", "golden", "record", "run");
  assert_int_equal(st_case_result_event(r, 3)->status, ST_PHASE_ERROR);
  st_case_result_free(r);
}

static void guard__write_before_start_is_error(void **state) {
  (void)state;
  st_case_result *r = run("before_start", before_start);
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(r),
                      "run: kernel wrote out of bounds of tensor 'y': 4 bytes "
                      "before its start (guard zone)");
  st_assert_phases(r, "args", "golden", "record", "run");
  st_case_result_free(r);
}

static void guard__kernel_inside_bounds_passes_every_round(void **state) {
  (void)state;
  st_case_result *r = run("inside", inside);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                   "run", "compare");
  st_case_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(guard__write_past_end_is_error_naming_tensor),
      cmocka_unit_test(guard__write_before_start_is_error),
      cmocka_unit_test(guard__kernel_inside_bounds_passes_every_round),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
