/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernel loads a library while it runs: platform
 * `late`, op `add`, which dlopens the path in ST_LATE_LOAD (the torch
 * plugin, bringing real libtorch) during `run` before adding. That is the
 * one way a record can go stale once the kernel is resolved in `args`
 * (docs/measuring.md#the-staleness-check, docs/plugins.md#the-lookup-order):
 * tests/cli/test_torch.py checks the warning and
 * --strict-record. */
#include <dlfcn.h>
#include <stdlib.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("late");

static st_status late_add(st_op_call *call) {
  const char *path = getenv("ST_LATE_LOAD");
  size_t i;
  if (path != NULL && dlopen(path, RTLD_NOW | RTLD_GLOBAL) == NULL)
    return st_op_call_fail(call, ST_EKERNEL, "dlopen %s: %s", path, dlerror());
  for (i = 0; i < call->tensors[2].numel; i++)
    st_tensor_set_f64(&call->tensors[2], i,
                      st_tensor_get_f64(&call->tensors[0], i) +
                          st_tensor_get_f64(&call->tensors[1], i));
  return ST_OK;
}

static const char *const platforms[] = {"late", NULL};

static st_status late_init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "late", "add", "late", late_add, err);
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "late",
    .platforms = platforms,
    .init = late_init,
    .hooks = NULL,
    .n_hooks = 0,
};
