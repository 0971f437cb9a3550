/* SPDX-License-Identifier: MIT */
/* What a case's golden sees (docs/scene-format.md, golden_args, expected,
 * expect): the args an op golden binds to, and whether a golden runs at
 * all. The loader checks the names; the golden phase (case/case.c) and
 * the load-time binding check (ops/validate.c) read the view from here,
 * so both see the same args. */
#ifndef SCENETEST_HARNESS_GOLDEN_VIEW_H
#define SCENETEST_HARNESS_GOLDEN_VIEW_H

#include <stddef.h>

#include "scene/scene.h"

/* The args golden binds to, as indices into scene->args (the plan's
 * order too), in the order golden sees them: the case's golden_args,
 * else the scene's, else every arg but scratch. Writes at most
 * scene->n_args indices to out and returns how many. Thread-safety: any
 * thread. */
size_t st__golden_view(const st_scene *scene /* IN */,
                       const st__case *kase /* IN */,
                       size_t *out /* OUT: scene->n_args entries */);

/* 1 when the view is every arg in the scene's order (no golden_args, no
 * scratch arg): the golden takes the argset as it is. */
int st__golden_view_is_all(const st_scene *scene /* IN */,
                           const st__case *kase /* IN */);

/* 0 when no golden runs for the case: it expects an error (`expect:
 * error`), or it has an `expected:` value and every output compare reads
 * (outputs with compare, inouts) has one. Thread-safety: any thread. */
int st__golden_needed(const st_scene *scene /* IN */,
                      const st__case *kase /* IN */);

/* 1 when cases x and y of scene have the same view and the same need of
 * a golden (part of st__plan_same_inputs). */
int st__golden_view_same(const st_scene *scene /* IN */,
                         const st__case *x /* IN */,
                         const st__case *y /* IN */);

#endif
