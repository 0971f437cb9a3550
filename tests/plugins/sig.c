/* SPDX-License-Identifier: MIT */
/* A test plugin whose kernels have signatures their golden does not share
 * (docs/scene-format.md: role scratch, golden_args, expected, expect):
 * platform `sig`, three kernels over tensors a, b (inputs), cfg (an int32
 * config tensor: cfg[0] is the tile size), out (output), work (scratch,
 * out's shape) and the int32 scalar `unroll`:
 *   - sig_add: out = a + b, tile by tile through work (it writes every
 *     element of work); refuses a tile below 1 or an unroll outside 1..8
 *     with a message naming the bad value (a negative test's kernel);
 *   - sig_add_lazy: out = a + b, never touching work (its poison stays);
 *   - sig_add_wrong: out = a + b + 1 (for an `expected:` that must fail).
 * Their golden is the built-in `add` on golden_args [a, b, out]. */
#include <stdint.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("sig");

enum { A, B, CFG, OUT, WORK, N_TENSORS };

static st_status check_args(st_op_call *call, int64_t *tile) {
  const st_scalar *unroll;
  if (call->n_tensors != N_TENSORS || call->n_scalars != 1)
    return st_op_call_fail(call, ST_EBIND,
                           "%s takes tensors a, b, cfg, out, work and scalar "
                           "unroll; got %zu tensors and %zu scalars",
                           call->op, call->n_tensors, call->n_scalars);
  if (call->tensors[WORK].role != ST_ROLE_SCRATCH ||
      call->tensors[CFG].dtype != ST_DTYPE_INT32 ||
      call->tensors[CFG].numel < 1)
    return st_op_call_fail(call, ST_EBIND,
                           "%s wants work with role scratch and an int32 "
                           "cfg of one element or more",
                           call->op);
  *tile = st_tensor_get_i64(&call->tensors[CFG], 0);
  if (*tile < 1)
    return st_op_call_fail(call, ST_EKERNEL, "tile must be positive, got %lld",
                           (long long)*tile);
  unroll = &call->scalars[0];
  if (unroll->i < 1 || unroll->i > 8)
    return st_op_call_fail(call, ST_EKERNEL, "unroll must be 1..8, got %lld",
                           (long long)unroll->i);
  return ST_OK;
}

/* out = a + b + bias over the call's shard, through work when via_work. */
static st_status add_with(st_op_call *call, int via_work, double bias) {
  st_tensor *t = call->tensors;
  size_t begin, end, i, j;
  int64_t tile = 1;
  st_status rc = check_args(call, &tile);
  if (rc != ST_OK)
    return rc;
  st_shard_range(t[OUT].numel, call->shard_index, call->shard_count, &begin,
                 &end);
  for (i = begin; i < end; i += (size_t)tile) {
    size_t stop = i + (size_t)tile < end ? i + (size_t)tile : end;
    for (j = i; j < stop; j++) {
      double s = st_tensor_get_f64(&t[A], j) + st_tensor_get_f64(&t[B], j);
      if (via_work) {
        st_tensor_set_f64(&t[WORK], j, s);
        s = st_tensor_get_f64(&t[WORK], j);
      }
      st_tensor_set_f64(&t[OUT], j, s + bias);
    }
  }
  return ST_OK;
}

static st_status sig_add(st_op_call *call) { return add_with(call, 1, 0.0); }

static st_status sig_add_lazy(st_op_call *call) {
  return add_with(call, 0, 0.0);
}

static st_status sig_add_wrong(st_op_call *call) {
  return add_with(call, 1, 1.0);
}

static const char *const platforms[] = {"sig", NULL};

static st_status sig_init(st_registry *reg, st_error *err) {
  st_status rc =
      st_registry_register(reg, "sig", "sig_add", "sig", sig_add, err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "sig", "sig_add_lazy", "sig", sig_add_lazy,
                              err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "sig", "sig_add_wrong", "sig", sig_add_wrong,
                              err);
  return rc;
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "sig",
    .platforms = platforms,
    .init = sig_init,
    .hooks = NULL,
    .n_hooks = 0,
};
