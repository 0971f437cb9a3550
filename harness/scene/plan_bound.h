/* SPDX-License-Identifier: MIT */
/* The part of a case's plan that depends on its golden op's arithmetic
 * (docs/scene-format.md#the-error-bound, #exact-inputs): `tolerance:
 * bound` (the accumulation length n, gamma(n), the unit roundoffs,
 * bound_factor) and `init: exact` (the range [-R, R] and the exact
 * default tolerance). */
#ifndef SCENETEST_HARNESS_SCENE_PLAN_BOUND_H
#define SCENETEST_HARNESS_SCENE_PLAN_BOUND_H

#include "scene/scene.h"

/* Where a plan's resolution (scene/plan.c, scene/plan_bound.c) reports:
 * each problem is counted, and appended to errors when that is not NULL,
 * as one positioned ST_ELOAD error in file. */
typedef struct st__plan_errs {
  const char *file;      /* IN: the scene's file */
  st_error_list *errors; /* OUT: may be NULL (count only) */
  int n_errors;          /* the problems so far */
  int oom;               /* 1 once an append ran out of memory */
  int one_line;          /* 1: line breaks in a message become spaces */
} st__plan_errs;

/* Counts one problem at line:column and appends it (see st__plan_errs).
 * Thread-safety: one thread per st__plan_errs. */
void st__plan_err(st__plan_errs *c /* IN/OUT */, int line, int column,
                  const char *fmt /* IN: printf format */, ...) ST_PRINTF(4, 5);

/* Completes plan (every arg resolved without errors) for case kase of
 * scene: sets the bound fields of each output under `tolerance: bound`
 * (rtol 0, atol the given one or 0), the range of each `init: exact`
 * input (a and b as randint's [-R, R + 1)), and the exact default
 * tolerance when every input of the op is exact. Each problem is one
 * positioned error appended to errors (may be NULL). Returns the number
 * of errors, or -1 when out of memory. Thread-safety: any thread. */
int st__plan_bound(const st_scene *scene /* IN */,
                   const st__case *kase /* IN */, st__plan *plan /* IN/OUT */,
                   st_error_list *errors /* OUT */);

/* 1 when cases x and y write the same tolerance, bound_factor and
 * compute_dtype (part of st__plan_same_inputs). */
int st__tolspec_same(const st__tolspec *x /* IN */,
                     const st__tolspec *y /* IN */);

#endif
