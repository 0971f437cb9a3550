/* SPDX-License-Identifier: MIT */
/* How far a case's verdict can be trusted (docs/cli.md#mistrust,
 * docs/cli.md#determinism): a golden output too degenerate to tell a
 * right kernel from a wrong one, and outputs that change from run to run
 * on the same inputs. */
#ifndef SCENETEST_HARNESS_CASE_TRUST_H
#define SCENETEST_HARNESS_CASE_TRUST_H

#include <stddef.h>

#include <scenetest/run.h>
#include <scenetest/tensor.h>

/* Why golden's tensor t makes a weak check, into buf: a float tensor of
 * at least 2 elements of which more than 30% are zero, or all equal.
 * Returns 1 with the reason ("tensor 'out': 31 of golden's 100 elements
 * are zero (over 30%)", "tensor 'out': golden's 100 elements are all
 * equal (2.5)"), else 0. Thread-safety: any thread. */
int st__mistrust_reason(const st_tensor *t /* IN */, char *buf /* OUT */,
                        size_t size);

/* The first element where the outputs of two runs differ in their bits:
 * 1 with "not deterministic: tensor 'out' differs at [i, j]: A in run RA,
 * B in run RB" in buf, else 0. a and b have the same dtype and shape.
 * Thread-safety: any thread. */
int st__determinism_diff(const st_tensor *a /* IN */, unsigned run_a,
                         const st_tensor *b /* IN */, unsigned run_b,
                         char *buf /* OUT */, size_t size);

struct st__casectx;
struct st__casedata;

/* Marks the case mistrusted (st__case_result_set_mistrust) when golden's
 * first compared output or inout that st__mistrust_reason finds weak.
 * Thread-safety: one thread per case. */
void st__case_mistrust(struct st__casectx *cc /* IN/OUT */,
                       const struct st__casedata *d /* IN */);
/* --determinism N: round 0 keeps the bytes of every output and inout
 * (d->det); each later round's must equal them, else the case fails
 * naming the first differing element and the two runs (1-based). An
 * ST_PHASE_* for the compare phase. */
st_phase_status st__case_determinism(struct st__casectx *cc /* IN/OUT */,
                                     struct st__casedata *d /* IN/OUT */,
                                     unsigned round);
/* Frees what st__case_determinism kept. */
void st__case_determinism_free(struct st__casedata *d /* IN/OUT */);

#endif
