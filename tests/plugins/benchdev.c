/* SPDX-License-Identifier: MIT */
/* benchdev: a platform for the tests of `scenetest bench`
 * (tests/cli/test_bench.py) whose kernel reports what the bench loop did,
 * not a time: its `add` (float32) reports device_ns = 1000 x the number of
 * its call in the case (1 for the checked round) + 1 when the `flush` hook
 * ran since the previous call. The rounds, the order statistics and the
 * cold-cache flushes are then known numbers, whatever the machine's speed.
 * BENCHDEV_CEILING=tiny: its `ceilings` hook reports 1 byte/s and
 * 1 FLOP/s for float32 (every figure is then suspicious); unset: the hook
 * fails (no ceilings). BENCHDEV_DESCRIBE_CALLS=1: its `describe` adds
 * calls="N", N its calls in this process (which process described, and
 * when). The same kernel as `bd_add`: an op with no work model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("benchdev");

static unsigned calls;
static int flushed;

static st_status bd_prepare(st_op_call *call, void **state) {
  (void)call;
  calls = 0;
  flushed = 0;
  *state = NULL;
  return ST_OK;
}

static void bd_release(st_op_call *call, void *state) {
  (void)call;
  (void)state;
}

static st_status bd_ceilings(st_platform_ceilings *out) {
  const char *v = getenv("BENCHDEV_CEILING");
  if (v == NULL || strcmp(v, "tiny") != 0)
    return ST_EINVAL;
  out->bytes_per_s = 1;
  out->flops_per_s[1] = 1;
  return ST_OK;
}

static st_status bd_flush(void) {
  flushed = 1;
  return ST_OK;
}

static st_status bd_describe(char *buf, size_t size) {
  static unsigned described;
  static pid_t pid; /* whose count: a forked child starts its own, as the
                       cuda plugin's clocks at start do */
  const char *count = getenv("BENCHDEV_DESCRIBE_CALLS");
  if (pid != getpid())
    pid = getpid(), described = 0;
  described++;
  if (count != NULL && strcmp(count, "1") == 0)
    snprintf(buf, size, "device=\"bench \\\"dev\\\"\" calls=\"%u\"", described);
  else
    snprintf(buf, size, "device=\"bench \\\"dev\\\"\"");
  return ST_OK;
}

static st_status bd_add(st_op_call *c) {
  const float *a, *b;
  float *out;
  size_t i;
  if (c->n_tensors != 3 || c->tensors[0].dtype != ST_DTYPE_FLOAT32)
    return st_op_call_fail(c, ST_ESKIP, "benchdev: float32 add only");
  a = c->tensors[0].data;
  b = c->tensors[1].data;
  out = c->tensors[2].data;
  for (i = 0; i < c->tensors[2].numel; i++)
    out[i] = a[i] + b[i];
  calls++;
  c->device_ns = 1000u * calls + (flushed ? 1u : 0u);
  flushed = 0;
  return ST_OK;
}

/* The same kernel under a name no built-in op has: no work model. */
static st_status bd_init(st_registry *reg, st_error *err) {
  st_status rc =
      st_registry_register(reg, "benchdev", "add", "benchdev", bd_add, err);
  if (rc != ST_OK)
    return rc;
  return st_registry_register(reg, "benchdev", "bd_add", "benchdev", bd_add,
                              err);
}

static const char *const platforms[] = {"benchdev", NULL};

static const st_platform_hooks hooks[] = {
    {.size = sizeof(st_platform_hooks),
     .platform = "benchdev",
     .prepare = bd_prepare,
     .release = bd_release,
     .ceilings = bd_ceilings,
     .flush = bd_flush,
     .describe = bd_describe},
};

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "benchdev",
    .platforms = platforms,
    .init = bd_init,
    .hooks = hooks,
    .n_hooks = 1,
};
