/* SPDX-License-Identifier: MIT */
/* `expected:` on an output against a golden program
 * (docs/scene-format.md, expected;
 * docs/torch.md#golden-programs-torchscript-and-aten-steps), without libtorch:
 * the op a program is called as (ST_PROGRAM_OP on ST_PROGRAM_BACKEND) is a fake
 * registered on the test's own registry, and the kernel `two` writes lo = a + 1
 * and hi = a - 1. hi has no expected, so the program runs; lo's expected is
 * taken over whatever the program did with lo: computed it wrong, computed it
 * right, or left it out. tests/cli/test_torch_program.py does the same with the
 * real plugin. And the case error when expected's `file:` is gone by the
 * time its values are read, in each of the three places that read them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/program.h>
#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

#include "case_testing.h"

/* What the fake program writes into lo (tensor 1): a + 1 plus lo_offset,
 * or nothing when lo_left_out (a dict without lo). hi (tensor 2) is
 * always right. */
static float lo_offset;
static int lo_left_out;
static int program_calls;

static void write_f32(st_tensor *t, const st_tensor *a, float add) {
  for (size_t i = 0; i < t->numel; i++)
    ((float *)t->data)[i] = ((const float *)a->data)[i] + add;
}

static st_status two(st_op_call *call) {
  write_f32(&call->tensors[1], &call->tensors[0], 1.0f);
  write_f32(&call->tensors[2], &call->tensors[0], -1.0f);
  return ST_OK;
}

static st_status program(st_op_call *call) {
  assert_non_null(call->program);
  assert_non_null(call->written);
  program_calls++;
  if (!lo_left_out) {
    write_f32(&call->tensors[1], &call->tensors[0], 1.0f + lo_offset);
    call->written[1] = 1;
  }
  write_f32(&call->tensors[2], &call->tensors[0], -1.0f);
  call->written[2] = 1;
  return ST_OK;
}

/* The file platform `vanish`'s prepare hook removes: it runs at the end
 * of `args`, after the case's `file:` inits were found and before the
 * values of `expected:` are read. */
static const char *vanish_path;

static st_status vanish_prepare(st_op_call *call, void **state) {
  (void)call;
  *state = NULL;
  assert_int_equal(unlink(vanish_path), 0);
  return ST_OK;
}

static const st_platform_hooks hooks[] = {{sizeof(st_platform_hooks), "vanish",
                                           vanish_prepare, NULL, NULL, NULL,
                                           NULL}};

/* A module that provides platform torch, as the torch plugin does, with
 * the fake program as its ST_PROGRAM_OP and `two` as a cpu kernel, and
 * `two` on platform vanish. */
static st_status init(st_registry *reg, st_error *err) {
  st_status rc = st_registry_register(reg, "gptest", "two", "cpu", two, err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "gptest", "two", "vanish", two, err);
  if (rc != ST_OK)
    return rc;
  return st_registry_register(reg, "gptest", ST_PROGRAM_OP, ST_PROGRAM_BACKEND,
                              program, err);
}

static const char *const platforms[] = {ST_PROGRAM_BACKEND, "vanish", NULL};
static const st_module module = {
    ST_ABI_VERSION, sizeof(st_module), "gptest", platforms, init, hooks, 1};

/* Case 0 of text (loaded as file name) run in this process on platform,
 * with the module added to the built-ins; program_calls counts from 0. */
static st_case_result *run_text(const char *name, const char *text,
                                const char *platform) {
  st_registry *reg = NULL;
  st_error err;
  st_case_result *res;
  st_error_clear(&err);
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  assert_int_equal(st_registry_add_module(reg, &module, &err), ST_OK);
  program_calls = 0;
  res = ct_run_text(reg, name, text, platform);
  st_registry_free(reg);
  return res;
}

/* Case 0 of the scene with lo's expected `lo`, run in this process. */
static st_case_result *run(const char *lo) {
  char text[1024];
  st_case_result *res;
  snprintf(text, sizeof text,
           "scene: p\n"
           "kernel: two\n"
           "golden:\n"
           "  torchscript: |\n"
           "    def golden(a: Tensor) -> Tuple[Tensor, Tensor]:\n"
           "        return a + 1, a - 1\n"
           "args:\n"
           "  - {tensor: a, dtype: float32, shape: [3], "
           "init: {values: [1, 2, 3]}}\n"
           "  - {tensor: lo, dtype: float32, shape: [3], role: output, "
           "expected: {values: %s}}\n"
           "  - {tensor: hi, dtype: float32, shape: [3], role: output}\n"
           "cases:\n"
           "  - {name: c}\n",
           lo);
  res = run_text("p.yaml", text, "cpu");
  assert_int_equal(program_calls, 1);
  st_assert_phases(res, "args", "golden", "record", "run", "compare");
  return res;
}

static void expect_status(st_case_result *r, st_case_status status,
                          const char *message) {
  assert_int_equal(st_case_result_status(r), status);
  if (message != NULL) {
    assert_non_null(st_case_result_message(r));
    assert_true(strncmp(st_case_result_message(r), message, strlen(message)) ==
                0);
  }
  st_case_result_free(r);
}

/* The program's lo is off by 10; expected is the kernel's: pass. */
static void test_expected_over_a_wrong_program(void **state) {
  (void)state;
  lo_offset = 10.0f;
  lo_left_out = 0;
  expect_status(run("[2, 3, 4]"), ST_CASE_PASS, NULL);
}

/* The program's lo is the kernel's; expected is not: fail on lo. */
static void test_wrong_expected_over_a_right_program(void **state) {
  (void)state;
  lo_offset = 0.0f;
  lo_left_out = 0;
  expect_status(run("[2, 3, 9]"), ST_CASE_FAIL,
                "tensor 'lo': 1 of 3 elements differ; first at [2]: "
                "actual 4, expected 9");
}

/* The program leaves lo out: lo is still compared, against expected. */
static void test_left_out_output_compared_with_expected(void **state) {
  (void)state;
  lo_offset = 0.0f;
  lo_left_out = 1;
  expect_status(run("[2, 3, 4]"), ST_CASE_PASS, NULL);
  expect_status(run("[7, 3, 4]"), ST_CASE_FAIL,
                "tensor 'lo': 1 of 3 elements differ; first at [0]: "
                "actual 2, expected 7");
}

/* `expected: {file: lo.bin}` whose file is gone when its values are read
 * (platform vanish's prepare hook removes it): the case is an error in the
 * phase that reads them, for each place that does: after a golden
 * program, after an op golden, and at the end of `args` when no golden
 * runs. */
static st_case_result *run_file_gone(const char *golden, int *program_ran) {
  char dir[] = "/tmp/st-gp-XXXXXX", yaml[64], bin[64], text[1024];
  const float lo[3] = {2, 3, 4};
  st_case_result *res;
  FILE *f;
  assert_non_null(mkdtemp(dir));
  snprintf(yaml, sizeof yaml, "%s/p.yaml", dir);
  snprintf(bin, sizeof bin, "%s/lo.bin", dir);
  f = fopen(bin, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(lo, sizeof lo, 1, f), 1);
  assert_int_equal(fclose(f), 0);
  snprintf(text, sizeof text,
           "scene: p\n"
           "kernel: two\n"
           "%s"
           "args:\n"
           "  - {tensor: a, dtype: float32, shape: [3], "
           "init: {values: [1, 2, 3]}}\n"
           "  - {tensor: lo, dtype: float32, shape: [3], role: output, "
           "expected: {file: lo.bin}}\n"
           "  - {tensor: hi, dtype: float32, shape: [3], role: output%s}\n"
           "cases:\n"
           "  - {name: c}\n",
           golden, golden[0] ? "" : ", expected: {values: [0, 1, 2]}");
  vanish_path = bin;
  lo_offset = 0.0f;
  lo_left_out = 0;
  res = run_text(yaml, text, "vanish");
  *program_ran = program_calls;
  assert_int_equal(rmdir(dir), 0);
  return res;
}

/* The case of run_file_gone(golden) is an error in phase, after which
 * nothing ran; the program was called program_ran times. */
static void expect_file_gone(const char *golden, int program_ran,
                             const char *phase) {
  int ran;
  st_case_result *r = run_file_gone(golden, &ran);
  const char *msg = st_case_result_message(r);
  char want[64];
  assert_int_equal(ran, program_ran);
  if (strcmp(phase, "golden") == 0)
    st_assert_phases(r, "args", "golden");
  else
    st_assert_phases(r, "args");
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_non_null(msg);
  snprintf(want, sizeof want, "%s: expected: ", phase);
  assert_true(strncmp(msg, want, strlen(want)) == 0);
  assert_non_null(strstr(msg, "lo.bin"));
  st_case_result_free(r);
}

static void test_expected_file_gone_after_a_program(void **state) {
  (void)state;
  expect_file_gone("golden:\n"
                   "  torchscript: |\n"
                   "    def golden(a: Tensor) -> Tuple[Tensor, Tensor]:\n"
                   "        return a + 1, a - 1\n",
                   1, "golden");
}

static void test_expected_file_gone_after_an_op_golden(void **state) {
  (void)state;
  expect_file_gone("golden_platform: cpu\n", 0, "golden");
}

static void test_expected_file_gone_without_golden(void **state) {
  (void)state;
  expect_file_gone("", 0, "args");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expected_over_a_wrong_program),
      cmocka_unit_test(test_wrong_expected_over_a_right_program),
      cmocka_unit_test(test_left_out_output_compared_with_expected),
      cmocka_unit_test(test_expected_file_gone_after_a_program),
      cmocka_unit_test(test_expected_file_gone_after_an_op_golden),
      cmocka_unit_test(test_expected_file_gone_without_golden),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
