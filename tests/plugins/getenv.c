/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernel reads the environment: platform `getenv`, op
 * `env_is`, with an integer scalar `want` and one output tensor. It passes
 * (writing 1 into every element of the output) when the variable
 * ST_TEST_ENV holds the decimal number want, or when want is -1 and the
 * variable is unset; else it fails naming what it saw. A number, not a
 * string scalar: level-3 workers get numeric scalars only.
 * tests/cli/test_env.py runs it to see a case's `env`
 * (docs/scene-format.md) where the kernel runs: in a supervised child, an
 * isolated child and level-3 workers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("getenv");

static st_status env_is(st_op_call *call) {
  const char *got = getenv("ST_TEST_ENV");
  char want[32];
  if (call->n_scalars != 1 || strcmp(call->scalars[0].name, "want") != 0 ||
      call->n_tensors != 1)
    return st_op_call_fail(call, ST_EBIND,
                           "env_is takes one scalar 'want' and one output "
                           "tensor");
  snprintf(want, sizeof want, "%lld", (long long)call->scalars[0].i);
  if (call->scalars[0].i == -1 ? got != NULL
                               : got == NULL || strcmp(got, want) != 0)
    return st_op_call_fail(
        call, ST_EKERNEL, "shard %u: ST_TEST_ENV is %s%s%s, expected %s",
        call->shard_index, got ? "'" : "", got ? got : "unset", got ? "'" : "",
        call->scalars[0].i == -1 ? "unset" : want);
  for (size_t i = 0; i < call->tensors[0].numel; i++)
    st_tensor_set_i64(&call->tensors[0], i, 1);
  return ST_OK;
}

static const char *const platforms[] = {"getenv", NULL};

static st_status getenv_init(st_registry *reg, st_error *err) {
  return st_registry_register(reg, "getenv", "env_is", "getenv", env_is, err);
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "getenv",
    .platforms = platforms,
    .init = getenv_init,
};
