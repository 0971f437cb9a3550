/* SPDX-License-Identifier: MIT */
/* What a case's golden sees (golden_view.h): golden_args (the case's,
 * else the scene's, else every arg but scratch) and whether a golden runs
 * (docs/scene-format.md: golden_args, expected, expect). */
#include <string.h>

#include "scene/golden_view.h"

static const size_t *given_args(const st_scene *s, const st__case *k,
                                size_t *n) {
  if (k != NULL && k->golden_args != NULL) {
    *n = k->n_golden_args;
    return k->golden_args;
  }
  *n = s->n_golden_args;
  return s->golden_args;
}

static int is_scratch(const st__arg *a) {
  return a->is_tensor && a->role == ST_ROLE_SCRATCH;
}

size_t st__golden_view(const st_scene *scene, const st__case *kase,
                       size_t *out) {
  size_t n, m = 0;
  const size_t *given = given_args(scene, kase, &n);
  if (given != NULL) {
    memcpy(out, given, n * sizeof *out);
    return n;
  }
  for (size_t i = 0; i < scene->n_args; i++)
    if (!is_scratch(&scene->args[i]))
      out[m++] = i;
  return m;
}

int st__golden_view_is_all(const st_scene *scene, const st__case *kase) {
  size_t n;
  const size_t *given = given_args(scene, kase, &n);
  if (given != NULL) {
    if (n != scene->n_args)
      return 0;
    for (size_t i = 0; i < n; i++)
      if (given[i] != i)
        return 0;
    return 1;
  }
  for (size_t i = 0; i < scene->n_args; i++)
    if (is_scratch(&scene->args[i]))
      return 0;
  return 1;
}

int st__golden_needed(const st_scene *scene, const st__case *kase) {
  int any = 0;
  if (kase->expect_error)
    return 0;
  for (size_t i = 0; i < scene->n_args; i++) {
    const st__arg *a = &scene->args[i];
    if (!a->is_tensor || a->role == ST_ROLE_INPUT || a->role == ST_ROLE_SCRATCH)
      continue;
    if (a->has_expected)
      any = 1;
    else if (a->role == ST_ROLE_INOUT || a->compare)
      return 1;
  }
  /* No output compared at all: golden runs as it always did. */
  return !any;
}

int st__golden_view_same(const st_scene *scene, const st__case *x,
                         const st__case *y) {
  size_t nx, ny;
  const size_t *gx = given_args(scene, x, &nx);
  const size_t *gy = given_args(scene, y, &ny);
  if (x->expect_error != y->expect_error || nx != ny ||
      (gx == NULL) != (gy == NULL))
    return 0;
  return gx == NULL || gx == gy || memcmp(gx, gy, nx * sizeof *gx) == 0;
}
