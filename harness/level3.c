/* SPDX-License-Identifier: MIT */
/* Level 3: worker processes. Not built yet: a level-3 case is an error
 * that says so. */
#include "result.h"
#include "runner_internal.h"

void st__run_level3(casectx *cc, const st_scene *scene, size_t ci) {
  (void)ci;
  st__case_result_set_status(cc->res, ST_CASE_ERROR,
                             "level %d scenes (worker processes) are not "
                             "supported by this build yet",
                             scene->level);
}
