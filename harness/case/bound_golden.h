/* SPDX-License-Identifier: MIT */
/* The golden phase under `tolerance: bound`
 * (docs/scene-format.md#the-error-bound): the reference op computes its
 * results and, in the same pass, the magnitude sums the compare needs
 * (ops/ref_bound.h), kept in the gold set. */
#ifndef SCENETEST_HARNESS_CASE_BOUND_GOLDEN_H
#define SCENETEST_HARNESS_CASE_BOUND_GOLDEN_H

#include "case/case.h"

/* 1 when some tensor of plan is under tolerance: bound. */
int st__bound_in_plan(const st__plan *plan /* IN */);

/* In place of the golden op's dispatch: st__ref_bound over call (the
 * golden's view of d->gold), the magnitude sums into d->gold.magsum (and
 * softmax's n into d->gold.nterm) at each bound tensor's index. A golden
 * backend other than the reference (--golden-platform) is the case's
 * error. Returns the phase's status; the case's message says why it is
 * not ST_PHASE_OK. Thread-safety: one thread per case. */
st_phase_status st__bound_golden(st__casectx *cc /* IN/OUT */,
                                 st__casedata *d /* IN/OUT */,
                                 st__call *call /* IN/OUT */);

#endif
