/* SPDX-License-Identifier: MIT */
/* The values of `expected:` put over golden's (docs/scene-format.md,
 * expected): one step for the three places that take them. */
#ifndef SCENETEST_HARNESS_CASE_EXPECTED_H
#define SCENETEST_HARNESS_CASE_EXPECTED_H

#include "case/case.h"

/* Puts the values of the outputs that have `expected:` over the gold
 * set's (docs/scene-format.md, expected), after golden or, with no golden,
 * at the end of `args`; a failure (a `file:` that changed since load, out
 * of memory) is a case error "PHASE: expected: ...". */
st_phase_status st__case_fill_expected(st__casectx *cc /* IN/OUT */,
                                       st__casedata *d /* IN/OUT */,
                                       const char *phase /* IN */);

#endif
