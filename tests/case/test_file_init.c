/* SPDX-License-Identifier: MIT */
/* `file:` inits at run time (issue 13, D7): the loader confines the path
 * to the scene's directory, and the `args` phase opens it again without
 * following a symlink that was swapped in after the load, and without
 * blocking on a FIFO put in its place. Each case's whole phase sequence
 * is checked: the failure is an `args` error and nothing runs after it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

static char dir[64];
static char scene_path[128];
static char data_path[128];
static char outside_path[128];

static const char scene_text[] =
    "scene: from_file\n"
    "kernel: copy\n"
    "args:\n"
    "  - {tensor: x, dtype: float32, shape: [4], init: {file: sub/x.bin}}\n"
    "  - {tensor: y, dtype: float32, shape: [4], role: output}\n"
    "cases:\n"
    "  - name: c\n";

static void write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(p, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
  const float v[4] = {1, 2, 3, 4};
  char sub[96];
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/st_file_init.XXXXXX");
  if (mkdtemp(dir) == NULL)
    return -1;
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(scene_path, sizeof scene_path, "%s/s.yaml", dir);
  snprintf(data_path, sizeof data_path, "%s/sub/x.bin", dir);
  snprintf(outside_path, sizeof outside_path, "%s.outside", dir);
  if (mkdir(sub, 0755) != 0)
    return -1;
  write_file(scene_path, scene_text, sizeof scene_text - 1);
  write_file(data_path, v, sizeof v);
  write_file(outside_path, v, sizeof v);
  return 0;
}

static int teardown(void **state) {
  char sub[96];
  (void)state;
  snprintf(sub, sizeof sub, "%s/sub", dir);
  unlink(data_path);
  unlink(scene_path);
  unlink(outside_path);
  rmdir(sub);
  rmdir(dir);
  return 0;
}

/* Loads the scene, lets swap() change the file system, runs the case. */
static st_case_result *load_swap_run(void (*swap)(void)) {
  st_scene_set *set = NULL;
  st_error_list errs;
  st_run_options opts;
  st_case_result *res = NULL;
  st_error err;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_path(set, scene_path, NULL, &errs), ST_OK);
  if (swap != NULL)
    swap();
  st_run_options_init(&opts);
  st_error_clear(&err);
  assert_int_equal(st_run_case(st_scene_set_get(set, 0), 0, &opts, &res, &err),
                   ST_OK);
  st_scene_set_free(set);
  st_error_list_free(&errs);
  return res;
}

static void restore(void) {
  const float v[4] = {1, 2, 3, 4};
  unlink(data_path);
  write_file(data_path, v, sizeof v);
}

static void to_symlink_outside(void) {
  unlink(data_path);
  assert_int_equal(symlink(outside_path, data_path), 0);
}

static void dir_to_symlink(void) {
  char sub[96], moved[112];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(moved, sizeof moved, "%s/moved", dir);
  assert_int_equal(rename(sub, moved), 0);
  assert_int_equal(symlink(moved, sub), 0);
}

static void dir_back(void) {
  char sub[96], moved[112];
  snprintf(sub, sizeof sub, "%s/sub", dir);
  snprintf(moved, sizeof moved, "%s/moved", dir);
  unlink(sub);
  assert_int_equal(rename(moved, sub), 0);
}

static void to_fifo(void) {
  unlink(data_path);
  assert_int_equal(mkfifo(data_path, 0644), 0);
}

static void args_file__unchanged_passes(void **state) {
  (void)state;
  st_case_result *r = load_swap_run(NULL);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_assert_phases(r, "args", "golden", "record", "run", "compare");
  st_case_result_free(r);
}

static void args_file__symlink_swapped_in_refused(void **state) {
  (void)state;
  st_case_result *r = load_swap_run(to_symlink_outside);
  restore();
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(r), "sub/x.bin"));
  assert_non_null(strstr(st_case_result_message(r), "symlink"));
  st_assert_phases(r, "args");
  st_case_result_free(r);
}

static void args_file__directory_swapped_for_symlink_refused(void **state) {
  (void)state;
  st_case_result *r = load_swap_run(dir_to_symlink);
  dir_back();
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(r), "symlink"));
  st_assert_phases(r, "args");
  st_case_result_free(r);
}

/* A FIFO in the file's place: refused at once (non-blocking open), where
 * a plain open would wait for a writer forever. */
static void args_file__fifo_swapped_in_refused_without_blocking(void **state) {
  (void)state;
  st_case_result *r = load_swap_run(to_fifo);
  restore();
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  if (strstr(st_case_result_message(r), "not a regular file") == NULL)
    fail_msg("message: %s", st_case_result_message(r));
  st_assert_phases(r, "args");
  st_case_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(args_file__unchanged_passes),
      cmocka_unit_test(args_file__symlink_swapped_in_refused),
      cmocka_unit_test(args_file__directory_swapped_for_symlink_refused),
      cmocka_unit_test(args_file__fifo_swapped_in_refused_without_blocking),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
