/* SPDX-License-Identifier: MIT */
/* A case's tags (docs/scene-format.md#tags): its scene's, then its own
 * that the scene does not already have. What --tag selects on and what
 * the reports show. */
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"

static int has(const char **v, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], name) == 0)
      return 1;
  return 0;
}

st_status st__case_tags(const st_scene *scene, size_t case_index,
                        const char ***out, size_t *n) {
  const st__case *c = &scene->cases[case_index];
  const char **v;
  size_t k = 0;

  *out = NULL;
  *n = 0;
  if (scene->n_tags + c->n_tags == 0)
    return ST_OK;
  if ((v = malloc((scene->n_tags + c->n_tags) * sizeof *v)) == NULL)
    return ST_ENOMEM;
  for (size_t i = 0; i < scene->n_tags; i++)
    if (!has(v, k, scene->tags[i]))
      v[k++] = scene->tags[i];
  for (size_t i = 0; i < c->n_tags; i++)
    if (!has(v, k, c->tags[i]))
      v[k++] = c->tags[i];
  *out = v;
  *n = k;
  return ST_OK;
}
