/* SPDX-License-Identifier: MIT */
/* A cmocka test as a user of the installed library writes it: only the
 * public headers (<scenetest/scenetest.h>, <scenetest/testing.h>) and
 * libscenetest. It runs real cases and checks their whole phase sequences
 * (golden included), the order of record and run, and that nothing was
 * loaded after the record; docs/api.md shows it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

static const char scene_yaml[] =
    "scene: embed_scale\n"
    "kernel: scale\n"
    "args:\n"
    "  - {tensor: x, dtype: float64, shape: [N], init: {range: {start: 0, "
    "step: 1}}}\n"
    "  - {tensor: y, dtype: float64, shape: [N], role: output}\n"
    "  - {scalar: s, dtype: float64, value: 0.5}\n"
    "cases:\n"
    "  - name: one_round\n"
    "    params: {N: 100}\n"
    "  - name: three_rounds\n"
    "    params: {N: 100}\n"
    "    rounds: 3\n"
    "  - name: no_golden\n"
    "    params: {N: 100}\n"
    "    skip_golden: true\n";

/* One loaded set per test, torn down after it. */
typedef struct fixture {
  st_scene_set *set;
  const st_scene *scene;
  st_case_result *res;
} fixture;

static int setup(void **state) {
  fixture *f = test_calloc(1, sizeof *f);
  st_error_list errors;
  st_status s;
  st_error_list_init(&errors);
  if (f == NULL || st_scene_set_new(&f->set) != ST_OK)
    return -1;
  s = st_scene_set_load_string(f->set, "embed.yaml", scene_yaml,
                               strlen(scene_yaml), NULL, &errors);
  st_error_list_free(&errors);
  if (s != ST_OK || st_scene_set_count(f->set) != 1)
    return -1;
  f->scene = st_scene_set_get(f->set, 0);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st_case_result_free(f->res);
  st_scene_set_free(f->set);
  test_free(f);
  return 0;
}

/* Runs the case named name of the fixture's scene with opts. */
static void run_named(fixture *f, const char *name,
                      const st_run_options *opts) {
  size_t i, n = st_scene_case_count(f->scene);
  st_error err;
  st_error_clear(&err);
  for (i = 0; i < n; i++)
    if (strcmp(st_scene_case_name(f->scene, i), name) == 0)
      break;
  assert_true(i < n);
  assert_int_equal(st_run_case(f->scene, i, opts, &f->res, &err), ST_OK);
  assert_non_null(f->res);
}

static void run_case__one_round_phases(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_options_init(&opts);
  run_named(f, "one_round", &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
  st_assert_phase_before(f->res, "golden", "record");
  st_assert_phase_before(f->res, "record", "run");
  st_assert_record_after_last_load(f->res);
}

static void run_case__rounds_reset_outputs(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_options_init(&opts);
  opts.platform = "threads";
  run_named(f, "three_rounds", &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare",
                   "reset", "run", "compare", "reset", "run", "compare");
  st_assert_phase_before(f->res, "record", "run");
  st_assert_record_after_last_load(f->res);
  assert_string_equal(st_case_result_platform(f->res), "threads");
}

static void run_case__skip_golden_drops_golden_and_compare(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_options_init(&opts);
  run_named(f, "no_golden", &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "record", "run");
  st_assert_record_after_last_load(f->res);
}

/* st_record_reset() forgets this process's emission, so the next case's
 * record event is the one that emitted; the one after it is not. */
static void run_case__record_emitted_once_after_reset(void **state) {
  fixture *f = *state;
  st_run_options opts;
  size_t i;
  int emitted[2] = {-1, -1};
  int k;
  st_run_options_init(&opts);
  st_log_set_level(ST_LOG_WARNING);
  st_record_reset();
  for (k = 0; k < 2; k++) {
    st_case_result_free(f->res);
    f->res = NULL;
    run_named(f, "one_round", &opts);
    for (i = 0; i < st_case_result_event_count(f->res); i++) {
      const st_event *ev = st_case_result_event(f->res, i);
      if (strcmp(ev->name, "record") == 0)
        emitted[k] = ev->emitted;
    }
  }
  st_log_set_level(ST_LOG_TIMING);
  assert_int_equal(emitted[0], 1);
  assert_int_equal(emitted[1], 0);
}

/* An unknown platform is refused before anything runs. */
static void run_case__unknown_platform(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_error err;
  st_run_options_init(&opts);
  opts.platform = "no_such_platform";
  st_error_clear(&err);
  assert_int_equal(st_run_case(f->scene, 0, &opts, &f->res, &err), ST_EUSAGE);
  assert_null(f->res);
  assert_non_null(strstr(err.message, "no_such_platform"));
}

/* Load errors carry the name given to st_scene_set_load_string, and a
 * 1-based line and column. */
static void scene_set_load_string__error_has_location(void **state) {
  static const char bad[] = "scene: broken\n"
                            "kernel: add\n"
                            "colour: blue\n";
  st_scene_set *set = NULL;
  st_error_list errors;
  size_t i;
  (void)state;
  st_error_list_init(&errors);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "inline.yaml", bad,
                                            strlen(bad), NULL, &errors),
                   ST_ELOAD);
  /* Every problem of the text is listed (here also the missing args and
   * cases); find the one about the unknown key. */
  for (i = 0; i < errors.count; i++)
    if (strstr(errors.items[i].message, "unknown key 'colour'") != NULL)
      break;
  assert_true(i < errors.count);
  assert_int_equal(errors.items[i].code, ST_ELOAD);
  assert_string_equal(errors.items[i].file, "inline.yaml");
  assert_int_equal(errors.items[i].line, 3);
  assert_int_equal(errors.items[i].column, 1);
  assert_int_equal(st_scene_set_count(set), 0);
  st_error_list_free(&errors);
  st_scene_set_free(set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(run_case__one_round_phases, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(run_case__rounds_reset_outputs, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(
          run_case__skip_golden_drops_golden_and_compare, setup, teardown),
      cmocka_unit_test_setup_teardown(run_case__record_emitted_once_after_reset,
                                      setup, teardown),
      cmocka_unit_test_setup_teardown(run_case__unknown_platform, setup,
                                      teardown),
      cmocka_unit_test(scene_set_load_string__error_has_location),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
