/* SPDX-License-Identifier: MIT */
/* A cmocka test built against an installed scenetest (pkg-config): the
 * phase sequence of one case, with scenetest/testing.h's assertions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

static const char scene_yaml[] =
    "scene: phases\n"
    "kernel: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [8], init: ones}\n"
    "  - {tensor: b, dtype: float32, shape: [8], init: ones}\n"
    "  - {tensor: out, dtype: float32, shape: [8], role: output}\n"
    "cases:\n"
    "  - name: two_rounds\n"
    "    rounds: 2\n";

static void run_case__two_rounds_phases(void **state) {
  st_scene_set *set = NULL;
  st_case_result *res = NULL;
  st_run_options opts;
  st_error err;

  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "inline.yaml", scene_yaml,
                                            sizeof scene_yaml - 1, NULL, NULL),
                   ST_OK);
  st_run_options_init(&opts);
  assert_int_equal(st_run_case(st_scene_set_get(set, 0), 0, &opts, &res, &err),
                   ST_OK);
  assert_int_equal(st_case_result_status(res), ST_CASE_PASS);
  st_assert_phases(res, "args", "golden", "record", "run", "compare", "reset",
                   "run", "compare");
  st_assert_record_after_last_load(res);
  st_case_result_free(res);
  st_scene_set_free(set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(run_case__two_rounds_phases),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
