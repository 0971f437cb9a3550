/* SPDX-License-Identifier: MIT */
/* The level-3 executor (case/exec.h): a case's kernel on worker
 * processes. Its run_end hook ends the run's worker pools; its after_fork
 * hook, in a forked child that is not a worker, forgets the parent's. See
 * docs/level3.md. */
#ifndef SCENETEST_HARNESS_LEVEL3_H
#define SCENETEST_HARNESS_LEVEL3_H

#include "case/exec.h"

/* Flags ST__EXEC_FORKS | ST__EXEC_OWNS_TIMEOUT. */
extern const st__executor st__exec_level3;

/* Ends every worker pool of the process (tests, benchmarks).
 * Thread-safety: the scheduling thread, with no case running. */
void st__level3_shutdown(void);

#endif
