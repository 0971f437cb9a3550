/* SPDX-License-Identifier: MIT */
/* A program linked with scenetest::scenetest: the library it runs with is
 * the one whose headers it was built against (docs/api.md, "Versions and
 * the ABI"), and it can load a scene. Exit 0 when both hold. */
#include <stdio.h>
#include <string.h>

#include <scenetest/scenetest.h>

static const char scene_yaml[] =
    "scene: inline_add\n"
    "kernel: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
    "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
    "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
    "cases:\n"
    "  - name: small\n";

int main(void) {
  st_scene_set *set = NULL;
  int ok;

  if (strcmp(st_version_string(), ST_VERSION_STRING) != 0) {
    fprintf(stderr, "built against %s, running with %s\n", ST_VERSION_STRING,
            st_version_string());
    return 1;
  }
  ok = st_scene_set_new(&set) == ST_OK &&
       st_scene_set_load_string(set, "inline.yaml", scene_yaml,
                                sizeof scene_yaml - 1, NULL, NULL) == ST_OK &&
       st_scene_set_count(set) == 1;
  st_scene_set_free(set);
  printf("scenetest %s: %s\n", st_version_string(),
         ok ? "scene loaded" : "load failed");
  return ok ? 0 : 1;
}
