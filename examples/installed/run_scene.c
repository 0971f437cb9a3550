/* SPDX-License-Identifier: MIT */
/* A program built against an installed scenetest (pkg-config): loads a
 * scene from a string, runs it, prints one line per case and exits 0
 * only when every case passed. */
#include <stdio.h>

#include <scenetest/scenetest.h>

static const char scene_yaml[] =
    "scene: installed_add\n"
    "kernel: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [16], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b, dtype: float32, shape: [16], init: ones}\n"
    "  - {tensor: out, dtype: float32, shape: [16], role: output}\n"
    "cases:\n"
    "  - name: small\n";

int main(void) {
  st_scene_set *set = NULL;
  st_run_options opts;
  st_run_result *res = NULL;
  st_error err;
  size_t i;
  int status = 1;

  st_error_clear(&err);
  if (st_scene_set_new(&set) != ST_OK ||
      st_scene_set_load_string(set, "inline.yaml", scene_yaml,
                               sizeof scene_yaml - 1, NULL, NULL) != ST_OK) {
    fprintf(stderr, "the scene does not load\n");
    goto out;
  }
  st_run_options_init(&opts);
  if (st_run(set, &opts, NULL, 0, &res, &err) != ST_OK) {
    fprintf(stderr, "run failed: %s\n", err.message);
    goto out;
  }
  for (i = 0; i < st_run_result_count(res); i++) {
    const st_case_result *c = st_run_result_get(res, i);
    printf("%s::%s %s\n", st_case_result_scene(c), st_case_result_case(c),
           st_case_status_name(st_case_result_status(c)));
  }
  status = st_run_result_exit_code(res);
out:
  st_run_result_free(res);
  st_scene_set_free(set);
  return status;
}
