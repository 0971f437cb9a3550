/* SPDX-License-Identifier: MIT */
/* The golden phase's call of a golden program (docs/torch.md). */
#ifndef SCENETEST_HARNESS_GOLDEN_PROGRAM_H
#define SCENETEST_HARNESS_GOLDEN_PROGRAM_H

#include "case/case.h"

/* Calls fn (the torch plugin's ST_PROGRAM_OP) with case ci's golden
 * program on d->gold, on the case's golden_device, then checks what the
 * program did: an input it wrote is an error; outputs it did not compute
 * are not compared, unless they have `expected:`, whose values replace
 * the program's. A failure inside the program is a case error whose
 * message carries FILE:LINE:COL of the script line or the step; a decline
 * (no CUDA for golden_device: cuda) a skip. Thread-safety: one thread per
 * case. */
st_phase_status st__golden_program_run(st__casectx *cc /* IN/OUT */,
                                       const st_scene *scene /* IN */,
                                       size_t ci, st__casedata *d /* IN/OUT */,
                                       st_op_fn fn);

#endif
