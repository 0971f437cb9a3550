/* SPDX-License-Identifier: MIT */
/* The load-time validation pass above the scene model and the registry
 * (docs/scene-format.md#load-errors; harness/ops/validate.c). */
#ifndef SCENETEST_HARNESS_VALIDATE_H
#define SCENETEST_HARNESS_VALIDATE_H

#include <scenetest/registry.h>

#include "scene/scene.h"

typedef struct st__validate {
  st_registry *registry; /* borrowed */
  int have_plugins;      /* --plugin given: an unknown op is a warning */
  int strict_platforms;  /* `check`, --strict-platforms: an unknown
                            platform is an error, not a warning */
  /* Cases whose golden backend the run lacks (ops/avail.h; docs/cli.md):
   * an error each under strict_needs (--strict-platforms), else counted
   * per backend for `check` to name once. Set by the caller after init. */
  int strict_needs;
  const char *cli_golden; /* --golden-platform, or NULL; borrowed */
  int skip_golden;        /* --skip-golden: no case needs a golden */
  struct st__missing {
    char backend[64];
    size_t cases;
  } missing[8]; /* the first 8 backends missing */
  size_t n_missing;
  char *platform_text;    /* owned: the registry's platform list */
  const char **platforms; /* owned array into platform_text */
  size_t n_platforms;
  /* `check` (docs/torch.md): compile every golden program with the torch
   * plugin when the run has it; uncompiled counts those it could not. */
  int compile_programs;
  size_t uncompiled;
} st__validate;

/* Compiles (TorchScript) or binds (steps) s's golden program with the
 * torch plugin, without running it; an error is a load error at the line
 * it comes from. Without the plugin, counts it in v->uncompiled
 * (ops/validate_program.c). Thread-safety: one thread per v. */
void st__validate_program(st__validate *v /* IN/OUT */,
                          const st_scene *s /* IN */, st__diag *d /* IN */);

/* Reads the registry's platforms (so load plugins first) and fills hooks
 * for st__load_ext.check. v must outlive the loads; free it with
 * st__validate_free. Thread-safety: one thread per v. */
st_status st__validate_init(st__validate *v /* OUT */,
                            st_registry *registry /* IN */, int have_plugins,
                            int strict_platforms,
                            st__scene_check *hooks /* OUT */) ST_WUR;
/* Accepts a zeroed v. */
void st__validate_free(st__validate *v /* IN/OUT */);

#endif
