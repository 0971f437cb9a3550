/* SPDX-License-Identifier: MIT */
/* The example plugin: module `example_plugin`, providing the platform
 * `example`, which implements `add` and `example_axpy_tiled`, a fused
 * kernel whose signature its golden does not share (a workspace and a
 * config tensor; scenes/example_axpy_tiled.yaml beside this file tests it
 * against the built-in axpy through golden_args).
 * It is the template to copy: a descriptor named `scenetest_module`, an
 * init that registers implementations, and an ELF note declaring the
 * platforms so that `--plugin lazy:PATH` can find them without loading the
 * plugin. Every other op falls back to its `common` implementation (copy
 * has one) or fails with BackendImplementationMissing.
 *
 * Build out of tree:
 *   cc -shared -fPIC $(pkg-config --cflags scenetest) -o example.so example.c
 * (no -lscenetest: the plugin calls into the scenetest process that loads
 * it). */
#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("example");

/* Its own code for add: one loop over the shard's elements through the
 * element accessors, so every dtype st_op_check admits works. Integer
 * dtypes are added exactly in 64-bit unsigned arithmetic (wrapping as the
 * harness requires), floats in double and rounded once on store. */
static st_status example_add(st_op_call *call) {
  const st_tensor *a = &call->tensors[0];
  const st_tensor *b = &call->tensors[1];
  st_tensor *out = &call->tensors[2];
  size_t i, begin, end;

  st_shard_range(out->numel, call->shard_index, call->shard_count, &begin,
                 &end);
  if (st_dtype_is_float(out->dtype)) {
    for (i = begin; i < end; i++)
      st_tensor_set_f64(out, i,
                        st_tensor_get_f64(a, i) + st_tensor_get_f64(b, i));
  } else {
    for (i = begin; i < end; i++)
      st_tensor_set_i64(out, i,
                        (int64_t)((uint64_t)st_tensor_get_i64(a, i) +
                                  (uint64_t)st_tensor_get_i64(b, i)));
  }
  return ST_OK;
}

/* y = alpha * x + y, tile by tile: a tile of alpha * x goes through the
 * workspace `work` (role scratch: nobody checks it, the golden never sees
 * it) before it is added, as a device kernel stages data in its local
 * memory. The tile size comes from the config tensor `cfg` (int32, one
 * element), as a kernel reads its tiling from device memory; the golden,
 * the built-in axpy, reads neither. Arguments: x, y (inout), cfg, work;
 * scalar alpha. */
static st_status example_axpy_tiled(st_op_call *call) {
  const st_tensor *x = &call->tensors[0];
  st_tensor *y = &call->tensors[1], *work = &call->tensors[3];
  double alpha;
  int64_t tile;
  size_t i, j, begin, end;

  if (call->n_tensors != 4 || call->n_scalars != 1 ||
      call->tensors[2].dtype != ST_DTYPE_INT32 || call->tensors[2].numel != 1 ||
      work->numel < y->numel)
    return st_op_call_fail(call, ST_EBIND,
                           "example_axpy_tiled takes x, y, cfg (int32, one "
                           "element), work (y's size) and scalar alpha");
  tile = st_tensor_get_i64(&call->tensors[2], 0);
  if (tile < 1)
    return st_op_call_fail(call, ST_EKERNEL,
                           "cfg: tile must be positive, got %lld",
                           (long long)tile);
  alpha = call->scalars[0].f;
  st_shard_range(y->numel, call->shard_index, call->shard_count, &begin, &end);
  for (i = begin; i < end; i += (size_t)tile) {
    size_t stop = end - i > (size_t)tile ? i + (size_t)tile : end;
    for (j = i; j < stop; j++)
      st_tensor_set_f64(work, j, alpha * st_tensor_get_f64(x, j));
    for (j = i; j < stop; j++)
      st_tensor_set_f64(y, j,
                        st_tensor_get_f64(y, j) + st_tensor_get_f64(work, j));
  }
  return ST_OK;
}

static const char *const platforms[] = {"example", NULL};

static st_status example_init(st_registry *reg, st_error *err) {
  /* module (the descriptor's name), op, backend (the platform) */
  st_status rc = st_registry_register(reg, "example_plugin", "add", "example",
                                      example_add, err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "example_plugin", "example_axpy_tiled",
                              "example", example_axpy_tiled, err);
  return rc;
}

/* The one symbol scenetest looks for (plugin ABI 2, docs/plugins.md).
 * abi_version and size come first; hooks (a platform's prepare/release,
 * for device context, allocation and upload) are optional. From C++,
 * declare it `extern "C"`. */
__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "example_plugin",
    .platforms = platforms,
    .init = example_init,
    .hooks = NULL,
    .n_hooks = 0,
};
