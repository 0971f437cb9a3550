/* SPDX-License-Identifier: MIT */
/* The work model of the built-in ops (docs/bench.md#the-work-model): the
 * FLOPs and bytes one run of a case's kernel does, from the op list's
 * `flops, per` columns and the resolved plan. */
#ifndef SCENETEST_HARNESS_OPS_WORK_H
#define SCENETEST_HARNESS_OPS_WORK_H

#include "scene/scene.h"

/* Bytes every run moves: each input read once, each output written once,
 * an inout counting as both (scratch tensors are not counted). */
double st__work_bytes(const st__plan *plan /* IN */);

/* The FLOPs of one run of built-in op `op` on plan: 1 with *flops set,
 * 0 when op is not a built-in op or the plan lacks its tensors. */
int st__work_flops(const char *op /* IN */, const st__plan *plan /* IN */,
                   double *flops /* OUT */);

#endif
