/* SPDX-License-Identifier: MIT */
/* Executors: where a case's kernel runs, one table of hooks each (as
 * libuv hands work across a layer in struct uv__work and curl puts each
 * TLS backend behind struct Curl_ssl). The case picks its executor
 * (st__executor_for); a scheduler (run/) asks only the flags and the
 * run-wide hooks, so no scheduler names a level.
 *
 *   inproc (case/inproc.c)         level 2: the kernel is called in
 *                                  this thread
 *   level3 (case/level3/level3.c)  level 3: the kernel runs on worker
 *                                  processes, on rehosted tensors
 *
 * The table itself is case/exec.c, the one case/ file that includes
 * case/level3/ (tests/lint/layers_check.py holds it to that). */
#ifndef SCENETEST_HARNESS_EXEC_H
#define SCENETEST_HARNESS_EXEC_H

#include "case/case.h"

enum {
  /* Its `run` forks processes: only from the scheduling thread, and only
   * while no other case (and so no thread pool) runs
   * (docs/reliability.md#the-process-model). */
  ST__EXEC_FORKS = 1u << 0,
  /* Its `run` enforces the case's timeout itself (its kernel runs where
   * it can be killed), so no scheduler needs to isolate the case for its
   * timeout's sake. */
  ST__EXEC_OWNS_TIMEOUT = 1u << 1,
  /* It resolves and binds the kernel, and runs the platform's prepare and
   * release hooks, itself (level 3: in each worker, during rehost), so
   * `args` does not (docs/plugins.md#the-lookup-order). */
  ST__EXEC_OWN_KERNEL = 1u << 2,
};

typedef struct st__executor {
  const char *name;
  unsigned flags; /* ST__EXEC_* */
  /* Its word of st__runctx.exec_state, < ST__EXEC_SLOTS. */
  unsigned slot;
  /* Runs the case's phases, args to the last, into cc->res (status,
   * events); the caller made the result and judges the record after.
   * Thread-safety: as st__case_run. */
  void (*run)(st__casectx *cc /* IN/OUT */, const st_scene *scene /* IN */,
              size_t ci);
  /* Before any case of the run is dispatched in this process, with the
   * selection (refs[0..n)): starts what must exist before then (level 3
   * forks its worker pools, so that no device context or runtime thread
   * a level-2 kernel makes here ever meets fork). Not called for a run
   * whose cases each run in a forked child. May be NULL. Thread-safety:
   * the scheduling thread, before any case runs. */
  void (*run_begin)(st__runctx *rc /* IN/OUT */,
                    const st_case_ref *refs /* IN */, size_t n);
  /* The run is over (or a forked child that ran one case is about to
   * exit): ends what the executor kept for rc's run. Accepts a run that
   * had none of its cases. May be NULL. Thread-safety: the scheduling
   * thread, after every case finished. */
  void (*run_end)(st__runctx *rc /* IN/OUT */);
  /* In a child forked from the scheduling thread to run cases itself:
   * forgets what the parent kept (its processes, its memory), without
   * signalling or waiting for any of it. May be NULL. */
  void (*after_fork)(st__runctx *rc /* IN/OUT */);
} st__executor;

/* The in-process executor (case/inproc.c). */
extern const st__executor st__exec_inproc;
/* The bench executor (case/bench.c; docs/bench.md). */
extern const st__executor st__exec_bench;

/* The executor of the scene's cases. Thread-safety: any thread. */
const st__executor *st__executor_for(const st_scene *scene /* IN */);
/* Every executor's run_begin, for rc's run of the n cases of refs. */
void st__executors_run_begin(st__runctx *rc /* IN/OUT */,
                             const st_case_ref *refs /* IN */, size_t n);
/* Every executor's run_end, for rc's run. */
void st__executors_run_end(st__runctx *rc /* IN/OUT */);
/* Every executor's after_fork, in a forked child. */
void st__executors_after_fork(st__runctx *rc /* IN/OUT */);

/* Runs one case in this thread, its kernel where its executor runs it:
 * the result with its status, events and duration, or NULL when out of
 * memory (the caller's, st_case_result_free). live: see st__casectx.
 * Here, above the executors it picks from, so that the case's own steps
 * (case.c) never call up into the table that names them. Thread-safety:
 * any thread for a case whose executor does not fork (ST__EXEC_FORKS);
 * else the scheduling thread, with no other case running. */
st_case_result *st__case_run(st__runctx *rc /* IN/OUT: exec_state */,
                             const st_case_ref *ref /* IN */, size_t index,
                             size_t total,
                             const st_observer *live /* IN, or NULL */);

#endif
