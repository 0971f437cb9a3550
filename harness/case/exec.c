/* SPDX-License-Identifier: MIT */
/* The executor table (exec.h): which executor runs a scene's cases, and
 * the run-wide hooks called on all of them. The only file of case/ that
 * names level 3 (it includes case/level3/level3.h for its table). */
#include <stddef.h>

#include "case/bench.h"
#include "case/exec.h"
#include "case/level3/level3.h"

static const st__executor *const executors[] = {
    &st__exec_inproc,
    &st__exec_level3,
    &st__exec_bench,
};

#define N_EXECUTORS (sizeof executors / sizeof executors[0])

const st__executor *st__executor_for(const st_scene *scene) {
  /* The scene's level is what says where its kernels run (SPEC §1:
   * 2 = in-process, 3 = worker processes). */
  if (scene->level == 3)
    return &st__exec_level3;
  /* `scenetest bench` (docs/bench.md): level-2 cases are timed. */
  return st__bench_active() ? &st__exec_bench : &st__exec_inproc;
}

void st__executors_run_begin(st__runctx *rc, const st_case_ref *refs,
                             size_t n) {
  size_t i;
  for (i = 0; i < N_EXECUTORS; i++)
    if (executors[i]->run_begin != NULL)
      executors[i]->run_begin(rc, refs, n);
}

void st__executors_run_end(st__runctx *rc) {
  size_t i;
  for (i = 0; i < N_EXECUTORS; i++)
    if (executors[i]->run_end != NULL)
      executors[i]->run_end(rc);
}

void st__executors_after_fork(st__runctx *rc) {
  size_t i;
  for (i = 0; i < N_EXECUTORS; i++)
    if (executors[i]->after_fork != NULL)
      executors[i]->after_fork(rc);
}
