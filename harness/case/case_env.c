/* SPDX-License-Identifier: MIT */
/* What a case needs around its phases: its `env` set and put back
 * (docs/scene-format.md), and the golden backend the run must have
 * (docs/cli.md, "Cases that need what the run lacks"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/case_env.h"
#include "case/result.h"
#include "ops/avail.h"

/* "NAME=VALUE\n" per variable: the record's key of the environment. */
static char *env_key(const char **kv, size_t n) {
  size_t len = 1;
  for (size_t i = 0; i < n; i++)
    len += strlen(kv[2 * i]) + strlen(kv[2 * i + 1]) + 2;
  char *key = malloc(len), *p = key;
  if (key == NULL)
    return NULL;
  for (size_t i = 0; i < n; i++)
    p += sprintf(p, "%s=%s\n", kv[2 * i], kv[2 * i + 1]);
  *p = '\0';
  return key;
}

int st__case_env_set(st__casectx *cc, const st_scene *scene, size_t ci,
                     st__env_saved *saved) {
  st_error err;
  cc->env = NULL;
  cc->n_env = 0;
  cc->env_key = NULL;
  if (scene->env.n == 0 && scene->cases[ci].env.n == 0)
    return 1;
  st_error_clear(&err);
  if (st__case_env(scene, ci, &cc->env, &cc->n_env) != ST_OK ||
      (cc->env_key = env_key(cc->env, cc->n_env)) == NULL) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR,
                               "out of memory setting the case's env");
    return 0;
  }
  if (st__env_apply(saved, (const char *const *)cc->env, cc->n_env, &err) !=
      ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
    return 0;
  }
  return 1;
}

void st__case_env_unset(st__casectx *cc, st__env_saved *saved) {
  st__env_restore(saved);
  free(cc->env);
  free(cc->env_key);
  cc->env = NULL;
  cc->n_env = 0;
  cc->env_key = NULL;
}

int st__case_needs_ok(st__casectx *cc, const st_scene *scene, size_t ci) {
  const st_run_options *opts = cc->run->opts;
  const st__case *k = &scene->cases[ci];
  const char *backend;
  char why[512];
  int skip_golden = opts->skip_golden     ? 1
                    : k->skip_golden >= 0 ? k->skip_golden
                                          : scene->skip_golden;
  if (skip_golden)
    return 1;
  backend = st__golden_backend(opts->golden_platform, scene, ci);
  if (st__backend_available(cc->run->reg, backend))
    return 1;
  st__backend_missing(backend, why, sizeof why);
  /* --strict-platforms refused the case at load time already
   * (ops/validate.c): here it is a skip. */
  st__case_result_set_status(cc->res, ST_CASE_SKIP, "%s", why);
  return 0;
}
