/* SPDX-License-Identifier: MIT */
/* Shared by the tests that run one case through a test kernel
 * (test_poison, test_guard, test_golden_program): text loaded as a
 * scene, its case 0 run in this process, on a registry of the caller's or
 * with op registered for platform cpu under module in a registry of the
 * built-ins; every step asserted. Include after <cmocka.h>. */
#ifndef SCENETEST_TESTS_CASE_TESTING_H
#define SCENETEST_TESTS_CASE_TESTING_H

#include <string.h>

#include <scenetest/scenetest.h>

/* The result of case 0 of text (loaded as file name) run in this process
 * on platform with registry reg, which the caller keeps; the caller frees
 * the result. */
static inline st_case_result *ct_run_text(st_registry *reg /* IN */,
                                          const char *name /* IN */,
                                          const char *text /* IN */,
                                          const char *platform /* IN */) {
  st_scene_set *set = NULL;
  st_error_list errs;
  st_error err;
  st_run_options opts;
  st_case_result *res = NULL;
  st_error_clear(&err);
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(
      st_scene_set_load_string(set, name, text, strlen(text), NULL, &errs),
      ST_OK);
  st_run_options_init(&opts);
  opts.registry = reg;
  opts.platform = platform;
  assert_int_equal(st_run_case(st_scene_set_get(set, 0), 0, &opts, &res, &err),
                   ST_OK);
  st_scene_set_free(set);
  st_error_list_free(&errs);
  return res;
}

/* The result of case 0 of text with fn as op's cpu kernel; the caller
 * frees it. */
static inline st_case_result *ct_run_case(const char *module /* IN */,
                                          const char *op /* IN */, st_op_fn fn,
                                          const char *text /* IN */) {
  st_registry *reg = NULL;
  st_error err;
  st_case_result *res;
  st_error_clear(&err);
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  assert_int_equal(st_registry_register(reg, module, op, "cpu", fn, &err),
                   ST_OK);
  res = ct_run_text(reg, "case.yaml", text, "cpu");
  st_registry_free(reg);
  return res;
}

#endif
