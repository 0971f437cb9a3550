/* SPDX-License-Identifier: MIT */
/* A test plugin with fused kernels of the kind golden programs exist for
 * (docs/torch.md; tests/cli/test_torch_program.py), on platform `fused`,
 * float32 only, written plainly in C:
 *   attention(q [M, D], k [N, D], v [N, E], scale) -> o [M, E]:
 *     softmax(q @ k^T * scale, -1) @ v, with a scratch `ws` it ignores;
 *   poly(a, b) -> y: with s = a + b, (s + 1) * (s + 2) + s; any further
 *     args (scratch, config) ignored.
 * Each checks its arguments' count and names and nothing more. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

ST_PLUGIN_PLATFORMS("fused");

static float *f32(const st_op_call *c, size_t i) {
  return (float *)c->tensors[i].data;
}

static st_status attention(st_op_call *c) {
  if (c->n_tensors < 4 || c->n_scalars != 1)
    return st_op_call_fail(c, ST_EBIND, "attention: q, k, v, o and scale");
  const st_tensor *q = &c->tensors[0], *k = &c->tensors[1];
  const st_tensor *v = &c->tensors[2];
  size_t M = (size_t)q->shape[0], D = (size_t)q->shape[1];
  size_t N = (size_t)k->shape[0], E = (size_t)v->shape[1];
  double scale = c->scalars[0].f;
  double *p = calloc(N ? N : 1, sizeof *p);
  if (p == NULL)
    return st_op_call_fail(c, ST_ENOMEM, "attention: out of memory");
  for (size_t m = 0; m < M; m++) {
    double mx = -INFINITY, sum = 0;
    for (size_t n = 0; n < N; n++) {
      double s = 0;
      for (size_t d = 0; d < D; d++)
        s += (double)f32(c, 0)[m * D + d] * f32(c, 1)[n * D + d];
      p[n] = s * scale;
      mx = p[n] > mx ? p[n] : mx;
    }
    for (size_t n = 0; n < N; n++)
      sum += (p[n] = exp(p[n] - mx));
    for (size_t e = 0; e < E; e++) {
      double o = 0;
      for (size_t n = 0; n < N; n++)
        o += p[n] / sum * f32(c, 2)[n * E + e];
      f32(c, 3)[m * E + e] = (float)o;
    }
  }
  free(p);
  return ST_OK;
}

static st_status poly(st_op_call *c) {
  if (c->n_tensors < 3)
    return st_op_call_fail(c, ST_EBIND, "poly: a, b, y (and any others)");
  for (size_t i = 0; i < c->tensors[2].numel; i++) {
    double s = (double)f32(c, 0)[i] + f32(c, 1)[i];
    f32(c, 2)[i] = (float)((s + 1) * (s + 2) + s);
  }
  return ST_OK;
}

static const char *const platforms[] = {"fused", NULL};

static st_status fused_init(st_registry *reg, st_error *err) {
  st_status rc =
      st_registry_register(reg, "fused", "attention", "fused", attention, err);
  if (rc == ST_OK)
    rc = st_registry_register(reg, "fused", "poly", "fused", poly, err);
  return rc;
}

__attribute__((visibility("default"))) const st_module scenetest_module = {
    .abi_version = ST_ABI_VERSION,
    .size = sizeof(st_module),
    .name = "fused",
    .platforms = platforms,
    .init = fused_init,
    .hooks = NULL,
    .n_hooks = 0,
};
