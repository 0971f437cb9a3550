/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the scene loader: any bytes must give OK or a
 * load error with positions, never a crash, hang or leak. Built only with
 * clang (see tests/meson.build); not a registered test. Run:
 *   build/tests/fuzz/fuzz_loader -max_total_time=300 tests/scenes/good */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  st_scene_set *set;
  st_error_list errs;
  st_load_options opts;
  st_load_options_init(&opts);
  /* A small budget keeps each input fast; the limits are what is
   * exercised, not the machine's memory. */
  opts.max_nodes = 20000;
  opts.max_arg_bytes = 1 << 20;
  st_error_list_init(&errs);
  if (st_scene_set_new(&set) != ST_OK)
    return 0;
  /* The name puts file: inits next to the good fixtures. */
  st_status rc =
      st_scene_set_load_string(set, "tests/scenes/good/fuzz.yaml",
                               (const char *)data, size, &opts, &errs);
  if (rc == ST_OK && errs.count != 0)
    abort();
  if (rc == ST_ELOAD && (errs.count == 0 || st_scene_set_count(set) != 0))
    abort();
  for (size_t i = 0; i < errs.count; i++)
    if (errs.items[i].line < 1 || errs.items[i].column < 1)
      abort();
  st_scene_set_free(set);
  st_error_list_free(&errs);
  return 0;
}
