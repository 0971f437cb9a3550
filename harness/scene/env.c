/* SPDX-License-Identifier: MIT */
/* A case's environment as the model holds it (docs/scene-format.md,
 * `env`): the scene's pairs and the case's, merged with the case's
 * entries winning. Setting it in a process is base/env.c's. */
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"

static const char *lookup(const st__env *env, const char *name) {
  for (size_t i = 0; i < env->n; i++)
    if (strcmp(env->kv[2 * i], name) == 0)
      return env->kv[2 * i + 1];
  return NULL;
}

st_status st__case_env(const st_scene *scene, size_t ci, const char ***kv,
                       size_t *n) {
  const st__env *se = &scene->env, *ce = &scene->cases[ci].env;
  const char **out;
  size_t k = 0;

  *kv = NULL;
  *n = 0;
  if (se->n + ce->n == 0)
    return ST_OK;
  out = malloc(2 * (se->n + ce->n) * sizeof *out);
  if (out == NULL)
    return ST_ENOMEM;
  for (size_t i = 0; i < se->n; i++) {
    const char *mine = lookup(ce, se->kv[2 * i]);
    out[2 * k] = se->kv[2 * i];
    out[2 * k + 1] = mine ? mine : se->kv[2 * i + 1];
    k++;
  }
  for (size_t i = 0; i < ce->n; i++) {
    if (lookup(se, ce->kv[2 * i]) != NULL)
      continue;
    out[2 * k] = ce->kv[2 * i];
    out[2 * k + 1] = ce->kv[2 * i + 1];
    k++;
  }
  *kv = out;
  *n = k;
  return ST_OK;
}

int st__scene_has_env(const st_scene *scene) {
  if (scene->env.n > 0)
    return 1;
  for (size_t i = 0; i < scene->n_cases; i++)
    if (scene->cases[i].env.n > 0)
      return 1;
  return 0;
}

void st__env_free(st__env *env) {
  for (size_t i = 0; env->kv != NULL && i < 2 * env->n; i++)
    free(env->kv[i]);
  free(env->kv);
  memset(env, 0, sizeof *env);
}
