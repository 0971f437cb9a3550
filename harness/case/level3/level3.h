/* SPDX-License-Identifier: MIT */
/* Level 3's process-wide state: the worker pools of the runs in this
 * process, and their ends. The runner calls st__level3_teardown at the end
 * of every run; a forked child that is not a worker calls
 * st__level3_forget_after_fork. See docs/level3.md. */
#ifndef SCENETEST_HARNESS_LEVEL3_H
#define SCENETEST_HARNESS_LEVEL3_H

#include "case/runner_internal.h"

/* Ends the worker pools of rc's run, reaping every worker, and gives back
 * the idle segments. Accepts a run that had no level-3 case.
 * Thread-safety: the scheduling thread, after every case finished. */
void st__level3_teardown(runctx *rc /* IN/OUT */);
/* Ends every worker pool of the process (tests, benchmarks, an isolated
 * child before it exits). Thread-safety: as st__level3_teardown. */
void st__level3_shutdown(void);
/* In a forked child: forgets the parent's pools and segments without
 * signalling or waiting (they are the parent's children and memory). */
void st__level3_forget_after_fork(void);

#endif
