/* SPDX-License-Identifier: MIT */
/* The built-in modules' table (backends.h) and the registry made of them
 * (st_registry_new_builtin). A file of its own, above the registry: the
 * backends register through the toolkit into the registry, so the list
 * that names them cannot live in registry.c without a link cycle
 * (tests/lint/cycles_check.py); curl's vtls.c lists its backends the same way,
 * apart from the code they call. */
#include <stddef.h>

#include <scenetest/log.h>
#include <scenetest/registry.h>

#include "base/util.h"
#include "ops/backends.h"
#include "ops/registry_internal.h"

/* In the order they are added: `common`'s fallbacks first. */
static const st_module *const builtin[] = {
    &st__module_common, &st__module_reference, &st__module_cpu,
    &st__module_threads};

st_status st_registry_new_builtin(st_registry **out) {
  st_registry *reg = NULL;
  st_status rc;
  size_t i;
  st_error err;

  *out = NULL;
  rc = st_registry_new(&reg);
  if (rc != ST_OK)
    return rc;
  for (i = 0; i < ST__ARRAY_SIZE(builtin); i++) {
    st_error_clear(&err);
    rc = st__registry_add_builtin(reg, builtin[i], &err);
    if (rc != ST_OK) {
      st_log(ST_LOG_ERROR, "built-in module '%s': %s", builtin[i]->name,
             err.message);
      st_registry_free(reg);
      return rc;
    }
  }
  *out = reg;
  return ST_OK;
}
