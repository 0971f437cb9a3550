/* SPDX-License-Identifier: MIT */
/* Order statistics and the two-sided Mann-Whitney U test of `timing` and
 * `compare` (docs/measuring.md#the-statistics). CLI-private (tools layer). */
#ifndef SCENETEST_HARNESS_STATS_H
#define SCENETEST_HARNESS_STATS_H

#include <stddef.h>

#include <scenetest/common.h>

/* Sorts v[0..n) ascending in place. Thread-safety: one thread per v. */
void st__stats_sort(double *v /* IN/OUT */, size_t n);
/* Of a sorted array, n >= 1: the middle value, or for an even n the mean
 * of the two middle values. Thread-safety: any thread. */
double st__stats_median(const double *sorted /* IN */, size_t n);

typedef enum st__mwu_method {
  ST__MWU_EXACT = 0,     /* the exact null distribution of U */
  ST__MWU_ASYMPTOTIC = 1 /* normal approximation, tie and continuity
                            corrections */
} st__mwu_method;

/* The p-value of SciPy 1.10's
 *   mannwhitneyu(x, y, alternative='two-sided', use_continuity=True,
 *                method='auto')
 * with 'auto' as SciPy decides it (scipy/stats/_mannwhitneyu.py,
 * _mwu_choose_method): asymptotic when both n1 > 8 and n2 > 8, or when
 * the pooled sample has a tie; exact otherwise. *u1 gets SciPy's
 * statistic (U of x), *method the path taken (either may be NULL).
 * n1, n2 >= 1. ST_ENOMEM when the exact path cannot get its table,
 * ST_EINVAL for an empty sample. Thread-safety: any thread. */
st_status st__stats_mwu(const double *x /* IN */, size_t n1,
                        const double *y /* IN */, size_t n2,
                        double *p /* OUT */, double *u1 /* OUT */,
                        st__mwu_method *method /* OUT */) ST_WUR;

#endif
