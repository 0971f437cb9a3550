/* SPDX-License-Identifier: MIT */
/* A level-3 worker's side (case/level3/worker_loop.c): what a process of
 * the pool (case/level3/workers.c) does once forked. Thread-safety: the
 * worker's only thread. */
#ifndef SCENETEST_HARNESS_WORKER_LOOP_H
#define SCENETEST_HARNESS_WORKER_LOOP_H

#include <sys/types.h>

#include <scenetest/registry.h>

/* In the new worker index (forked by parent): stdout and stderr onto
 * out_w, the socket sock moved to its fixed descriptor, every other
 * inherited descriptor closed; then the worker's loop, taking MAP, RUN
 * and RELEASE (wire/msg.h) until the pool closes its end. Never returns. */
_Noreturn void st__worker_child(unsigned index, int sock, int out_w,
                                st_registry *reg /* IN */, pid_t parent);

#endif
