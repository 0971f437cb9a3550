/* SPDX-License-Identifier: MIT */
/* The example project's plugin: platform `mydev`, registered by the module
 * `mykernels`, with its own add. Built by CMakeLists.txt; see
 * docs/plugins.md for the descriptor. */
#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("mydev");

/* out = a + b over this call's shard through the accessors. The device
 * has no bfloat16: it declines such a case, which is then skipped (and
 * its CTest test too), never passed. */
static st_status mydev_add(st_op_call *call) {
  const st_tensor *a = &call->tensors[0];
  const st_tensor *b = &call->tensors[1];
  st_tensor *out = &call->tensors[2];
  size_t i, begin, end;

  if (out->dtype == ST_DTYPE_BFLOAT16)
    return st_op_call_fail(call, ST_ESKIP, "mydev has no bfloat16");
  st_shard_range(out->numel, call->shard_index, call->shard_count, &begin,
                 &end);
  for (i = begin; i < end; i++)
    st_tensor_set_f64(out, i,
                      st_tensor_get_f64(a, i) + st_tensor_get_f64(b, i));
  return ST_OK;
}

static const char *const platforms[] = {"mydev", NULL};

static st_status mykernels_init(st_registry *reg, st_error *err) {
  /* module, op, backend (the platform), function */
  return st_registry_register(reg, "mykernels", "add", "mydev", mydev_add, err);
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "mykernels",
    .platforms = platforms,
    .init = mykernels_init,
    .hooks = NULL,
    .n_hooks = 0,
};
