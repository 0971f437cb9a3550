/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernel is not deterministic: platform `flaky`, op
 * `add` (the built-in signature: a, b, out). It adds correctly, and on
 * every second call in its process it also flips the lowest bit of
 * out[1], one ulp: still within the default float32 tolerance of golden,
 * so only --determinism (docs/cli.md#determinism) tells
 * (tests/cli/test_trust.py). */
#include <stdint.h>
#include <string.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("flaky");

static unsigned long calls; /* this process's calls of the kernel */

static st_status flaky_add(st_op_call *call) {
  st_tensor *a, *b, *out;
  if (call->n_tensors != 3 || call->tensors[2].dtype != ST_DTYPE_FLOAT32 ||
      call->tensors[0].numel != call->tensors[2].numel ||
      call->tensors[1].numel != call->tensors[2].numel)
    return st_op_call_fail(call, ST_EBIND,
                           "flaky add takes float32 a, b and out of one "
                           "shape");
  a = &call->tensors[0];
  b = &call->tensors[1];
  out = &call->tensors[2];
  for (size_t i = 0; i < out->numel; i++)
    ((float *)out->data)[i] =
        ((const float *)a->data)[i] + ((const float *)b->data)[i];
  if (++calls % 2 == 0 && out->numel > 1) {
    uint32_t bits;
    memcpy(&bits, (float *)out->data + 1, 4);
    bits ^= 1u;
    memcpy((float *)out->data + 1, &bits, 4);
  }
  return ST_OK;
}

static const char *const platforms[] = {"flaky", NULL};

static st_status flaky_init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "flaky", "add", "flaky", flaky_add, err);
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "flaky",
    .platforms = platforms,
    .init = flaky_init,
};
