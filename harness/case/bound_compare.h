/* SPDX-License-Identifier: MIT */
/* Comparing an output under `tolerance: bound`
 * (docs/scene-format.md#the-error-bound): element i is close when
 *
 *   |actual - expected| <= bound_factor * (gamma(n_i) * magsum_i
 *                          + u_o * (|actual| + |expected|)) + atol
 *
 * (equal values, equal infinities and, with equal_nan, two NaNs are
 * close, as in compare.h), with magsum and softmax's n_i from the
 * reference golden (case/bound_golden.h). */
#ifndef SCENETEST_HARNESS_CASE_BOUND_COMPARE_H
#define SCENETEST_HARNESS_CASE_BOUND_COMPARE_H

#include <stdio.h>

#include <scenetest/tensor.h>

#include "scene/scene.h"

/* The allowed difference at element i (NaN when softmax's n_i*u >= 1:
 * nothing but equality is close there). */
double st__bound_at(const st__rarg *ra /* IN */, const double *magsum /* IN */,
                    const double *nterm /* IN: softmax, else NULL */, size_t i,
                    double actual, double expected);

/* The verdict on element i. */
int st__bound_close(const st__rarg *ra /* IN */, const st_tensor *a /* IN */,
                    const st_tensor *e /* IN */, const double *magsum /* IN */,
                    const double *nterm /* IN */, size_t i);

/* compare.h's st__compare_close_nan for a bound output: ST_OK, or
 * ST_EMISMATCH with msg naming the tensor, the count, the first
 * mismatch with both values and its bound, the max abs diff and the
 * bound's parameters; ST_EINVAL when the layouts differ or magsum is
 * NULL. Thread-safety: any thread. */
st_status st__bound_compare(const st__rarg *ra /* IN */,
                            const st_tensor *a /* IN */,
                            const st_tensor *e /* IN */,
                            const double *magsum /* IN */,
                            const double *nterm /* IN */, char *msg /* OUT */,
                            size_t size);

/* The failure report's block of a bound output (mismatch.c's wording):
 * the bound's parameters, the count, the first mismatch, the greatest
 * absolute difference and the greatest fraction of the bound with their
 * indexes, and a table of up to 8 mismatching elements with each one's
 * bound. */
void st__bound_detail(FILE *out, const st__rarg *ra /* IN */,
                      const st_tensor *a /* IN */, const st_tensor *e /* IN */,
                      const double *magsum /* IN */,
                      const double *nterm /* IN */);

/* The per-element bound of a as a float64 tensor (for --dump-on-fail),
 * its data malloc'd into *data (the caller frees); ST_ENOMEM. */
st_status
st__bound_tensor(const st__rarg *ra /* IN */, const st_tensor *a /* IN */,
                 const st_tensor *e /* IN */, const double *magsum /* IN */,
                 const double *nterm /* IN */, st_tensor *out /* OUT */);

#endif
