/* SPDX-License-Identifier: MIT */
/* A case's env (docs/scene-format.md): setting and putting back variables
 * (base/env.c), the scene's and the case's merged (scene/env.c), and the
 * record's one line per process per distinct environment
 * (case/record.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing_hooks.h>

#include "base/env.h"
#include "case/record.h"
#include "scene/scene.h"

static void env_apply__sets_and_restores(void **state) {
  st__env_saved saved = {0};
  const char *kv[] = {"ST_T_SET", "new", "ST_T_UNSET", "x", "ST_T_SET", "2"};
  (void)state;
  assert_int_equal(setenv("ST_T_SET", "old", 1), 0);
  unsetenv("ST_T_UNSET");
  /* A name given twice: the last value holds, and restore still puts the
   * first one back. */
  assert_int_equal(st__env_apply(&saved, kv, 3, NULL), ST_OK);
  assert_string_equal(getenv("ST_T_SET"), "2");
  assert_string_equal(getenv("ST_T_UNSET"), "x");
  st__env_restore(&saved);
  assert_string_equal(getenv("ST_T_SET"), "old");
  assert_null(getenv("ST_T_UNSET"));
  assert_int_equal(saved.n, 0);
  unsetenv("ST_T_SET");
}

static void env_apply__again_restores_the_last_first(void **state) {
  st__env_saved saved = {0};
  const char *a[] = {"ST_T_A", "1"}, *b[] = {"ST_T_B", "2"};
  (void)state;
  unsetenv("ST_T_A");
  unsetenv("ST_T_B");
  assert_int_equal(st__env_apply(&saved, a, 1, NULL), ST_OK);
  assert_int_equal(st__env_apply(&saved, b, 1, NULL), ST_OK);
  assert_null(getenv("ST_T_A"));
  assert_string_equal(getenv("ST_T_B"), "2");
  /* No pairs: only the restore. */
  assert_int_equal(st__env_apply(&saved, NULL, 0, NULL), ST_OK);
  assert_null(getenv("ST_T_B"));
  st__env_restore(&saved); /* a second restore is a no-op */
}

static void env_apply__refused_name_sets_nothing(void **state) {
  st__env_saved saved = {0};
  const char *kv[] = {"ST_T_OK", "1", "BAD=NAME", "2"};
  st_error err;
  (void)state;
  unsetenv("ST_T_OK");
  st_error_clear(&err);
  assert_int_equal(st__env_apply(&saved, kv, 2, &err), ST_EINVAL);
  assert_string_equal(err.message, "env: cannot set 'BAD=NAME': Invalid "
                                   "argument");
  /* What was set before the refusal is put back. */
  assert_null(getenv("ST_T_OK"));
  assert_int_equal(saved.n, 0);
}

static const char scene_text[] =
    "scene: s\n"
    "kernel: add\n"
    "env: {A: 1, B: two}\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [2]}\n"
    "  - {tensor: b, dtype: float32, shape: [2]}\n"
    "  - {tensor: c, dtype: float32, shape: [2], role: output}\n"
    "cases:\n"
    "  - {name: plain}\n"
    "  - {name: over, env: {C: \"\", B: 3}}\n"
    "  - name: grid\n"
    "    matrix: {N: [1, 2]}\n"
    "    env: {D: true}\n";

static void case_env__case_wins_in_scene_order(void **state) {
  st_scene_set *set;
  st_error_list errs;
  const st_scene *s;
  const char **kv;
  size_t n;
  (void)state;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "s.yaml", scene_text,
                                            strlen(scene_text), NULL, &errs),
                   ST_OK);
  s = st_scene_set_get(set, 0);
  assert_true(st__scene_has_env(s));
  assert_int_equal(st__case_env(s, 0, &kv, &n), ST_OK);
  assert_int_equal(n, 2);
  assert_string_equal(kv[0], "A");
  assert_string_equal(kv[1], "1");
  assert_string_equal(kv[2], "B");
  assert_string_equal(kv[3], "two");
  free(kv);
  /* The scene's names in its order, the case's values over them, then the
   * case's own names. */
  assert_int_equal(st__case_env(s, 1, &kv, &n), ST_OK);
  assert_int_equal(n, 3);
  assert_string_equal(kv[2], "B");
  assert_string_equal(kv[3], "3");
  assert_string_equal(kv[4], "C");
  assert_string_equal(kv[5], "");
  free(kv);
  /* Matrix combinations carry their template's env. */
  assert_int_equal(st_scene_case_count(s), 4);
  for (size_t ci = 2; ci < 4; ci++) {
    assert_int_equal(st__case_env(s, ci, &kv, &n), ST_OK);
    assert_int_equal(n, 3);
    assert_string_equal(kv[4], "D");
    assert_string_equal(kv[5], "true");
    free(kv);
  }
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

/* The record's emissions in one process, as a case sequence would make
 * them: the base environment, then cases with and without env. */
static void record_emit_env__one_line_per_environment(void **state) {
  static const struct {
    const char *autoload; /* NULL: unset */
    const char *key;      /* the case's env key, NULL: none */
    int emitted;
  } seq[] = {
      {NULL, NULL, 1},
      {NULL, NULL, 0},
      {"0", "TORCH_DEVICE_BACKEND_AUTOLOAD=0\n", 1},
      {"0", "TORCH_DEVICE_BACKEND_AUTOLOAD=0\n", 0},
      {NULL, "OTHER=1\n", 1},
      {NULL, NULL, 0},
      {NULL, "OTHER=2\n", 0},
  };
  char line[1024];
  (void)state;
  st_record_reset();
  for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
    if (seq[i].autoload)
      setenv(ST_AUTOLOAD_ENV, seq[i].autoload, 1);
    else
      unsetenv(ST_AUTOLOAD_ENV);
    int e = st__record_emit_env(NULL, 0, 1, seq[i].key, line, sizeof line);
    if (e != seq[i].emitted)
      fail_msg("case %zu: emitted %d, expected %d", i, e, seq[i].emitted);
    if (e)
      assert_non_null(
          strstr(line, seq[i].autoload ? "setting=0 " : "setting=unset "));
    else
      assert_string_equal(line, "");
  }
  /* Without tracking (a run with no env), once per process whatever the
   * environment does. */
  st_record_reset();
  unsetenv(ST_AUTOLOAD_ENV);
  assert_int_equal(st__record_emit_env(NULL, 0, 0, NULL, NULL, 0), 1);
  setenv(ST_AUTOLOAD_ENV, "0", 1);
  assert_int_equal(st__record_emit_env(NULL, 0, 0, "X=1\n", NULL, 0), 0);
  unsetenv(ST_AUTOLOAD_ENV);
  st_record_reset();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(env_apply__sets_and_restores),
      cmocka_unit_test(env_apply__again_restores_the_last_first),
      cmocka_unit_test(env_apply__refused_name_sets_nothing),
      cmocka_unit_test(case_env__case_wins_in_scene_order),
      cmocka_unit_test(record_emit_env__one_line_per_environment),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
