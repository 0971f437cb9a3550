/* SPDX-License-Identifier: MIT */
/* Which backend a case's golden needs, whether the run has it, and the
 * reason given when it does not (avail.h). */
#include <stdio.h>
#include <string.h>

#include <scenetest/program.h>

#include "ops/avail.h"
#include "ops/backends.h"

const char *st__golden_backend(const char *cli_golden, const st_scene *scene,
                               size_t ci) {
  const st__case *k = &scene->cases[ci];
  const char *golden = scene->golden != NULL ? scene->golden : scene->kernel;
  /* A golden program is torch's whatever the rest says (the loader
   * refused another golden_platform for it; docs/torch.md). */
  if (scene->program != NULL)
    return ST_PROGRAM_BACKEND;
  /* Only torch computes an aten:: golden: it implies golden_platform
   * torch, and --golden-platform (meant for the built-in ops' goldens)
   * does not move it elsewhere (docs/torch.md). */
  if (golden != NULL && strncmp(golden, "aten::", 6) == 0) {
    if (k->golden_platform != NULL)
      return k->golden_platform;
    return scene->golden_platform != NULL ? scene->golden_platform : "torch";
  }
  if (cli_golden != NULL)
    return cli_golden;
  if (k->golden_platform != NULL)
    return k->golden_platform;
  if (scene->golden_platform != NULL)
    return scene->golden_platform;
  return ST_BACKEND_REFERENCE;
}

int st__backend_available(st_registry *reg, const char *backend) {
  return strcmp(backend, ST_BACKEND_REFERENCE) == 0 ||
         st_registry_has_platform(reg, backend);
}

void st__backend_missing(const char *backend, char *buf, size_t size) {
  /* The project's own plugins: what builds them and what to pass. */
  if (strcmp(backend, "torch") == 0)
    snprintf(buf, size,
             ST__UNAVAILABLE_PREFIX
             "the torch plugin is not loaded; pass "
             "--plugin lazy:PATH/scenetest_torch.so, or build scenetest "
             "with libtorch (meson setup -Dtorch=enabled, or "
             "-Dtorch_dir=PATH for a PyTorch wheel; docs/torch.md)");
  else if (strcmp(backend, "cuda") == 0)
    snprintf(buf, size,
             ST__UNAVAILABLE_PREFIX
             "the cuda plugin is not loaded; pass "
             "--plugin lazy:PATH/scenetest_cuda.so, or build scenetest "
             "with nvcc (meson setup -Dcuda=enabled; "
             "docs/accelerators.md)");
  else
    snprintf(buf, size,
             ST__UNAVAILABLE_PREFIX
             "no plugin provides backend '%s'; pass "
             "--plugin PATH of a plugin that does (docs/plugins.md)",
             backend);
}
