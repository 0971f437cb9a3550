/* SPDX-License-Identifier: MIT */
/* What the built-in backends share: element access for every dtype, the
 * scalar and shard helpers, the element-wise and reduce_sum drivers over
 * the thread pool, registering an op table, and the `common` module, whose
 * `copy` is the fallback any platform gets (a plugin platform that does
 * not implement copy still runs copy scenes). */
#include <stdlib.h>
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

int st__dtype_is_int(st_dtype dtype) {
  switch (dtype) {
  case ST_DTYPE_INT8:
  case ST_DTYPE_INT16:
  case ST_DTYPE_INT32:
  case ST_DTYPE_INT64:
  case ST_DTYPE_UINT8:
    return 1;
  default:
    return 0;
  }
}

size_t st__elem_size(const st_tensor *t) {
  static const size_t sizes[] = {
#define XX(name, str, size) size,
      ST_DTYPE_MAP(XX)
#undef XX
  };
  if ((unsigned)t->dtype >= (unsigned)ST_DTYPE_COUNT)
    return 0;
  return sizes[t->dtype];
}

/* Loads go through memcpy-free typed pointers: tensor buffers are
 * allocated for their dtype, so they are suitably aligned. */
double st__elem_get_f64(const st_tensor *t, size_t i) {
  const void *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_FLOAT32:
    return ((const float *)p)[i];
  case ST_DTYPE_FLOAT64:
    return ((const double *)p)[i];
  case ST_DTYPE_FLOAT16:
    return st_f16_to_f32(((const uint16_t *)p)[i]);
  case ST_DTYPE_BFLOAT16:
    return st_bf16_to_f32(((const uint16_t *)p)[i]);
  case ST_DTYPE_INT8:
    return ((const int8_t *)p)[i];
  case ST_DTYPE_INT16:
    return ((const int16_t *)p)[i];
  case ST_DTYPE_INT32:
    return ((const int32_t *)p)[i];
  case ST_DTYPE_INT64:
    return (double)((const int64_t *)p)[i];
  case ST_DTYPE_UINT8:
  case ST_DTYPE_BOOL:
    return ((const uint8_t *)p)[i];
  default:
    return 0.0;
  }
}

void st__elem_set_f64(st_tensor *t, size_t i, double v) {
  void *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_FLOAT32:
    ((float *)p)[i] = (float)v;
    return;
  case ST_DTYPE_FLOAT64:
    ((double *)p)[i] = v;
    return;
  case ST_DTYPE_FLOAT16:
    ((uint16_t *)p)[i] = st_f64_to_f16(v);
    return;
  case ST_DTYPE_BFLOAT16:
    ((uint16_t *)p)[i] = st_f64_to_bf16(v);
    return;
  default:
    break;
  }
  /* Integers: only values that fit int64 convert without undefined
   * behaviour; the float ops never store into integer tensors, so this is
   * a guard, not a path. */
  int64_t iv = 0;
  if (v >= -9223372036854775808.0 && v < 9223372036854775808.0)
    iv = (int64_t)v;
  st__elem_set_u64(t, i, (uint64_t)iv);
}

uint64_t st__elem_get_u64(const st_tensor *t, size_t i) {
  const void *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_INT8:
    return (uint64_t)(int64_t)((const int8_t *)p)[i];
  case ST_DTYPE_INT16:
    return (uint64_t)(int64_t)((const int16_t *)p)[i];
  case ST_DTYPE_INT32:
    return (uint64_t)(int64_t)((const int32_t *)p)[i];
  case ST_DTYPE_INT64:
    return (uint64_t)((const int64_t *)p)[i];
  case ST_DTYPE_UINT8:
  case ST_DTYPE_BOOL:
    return ((const uint8_t *)p)[i];
  default:
    return 0;
  }
}

/* Narrowing an unsigned value to a signed type keeps the low bits (GCC and
 * Clang define the out-of-range conversion as modulo 2^N), which is the
 * two's complement wrap-around the SPEC asks for. */
void st__elem_set_u64(st_tensor *t, size_t i, uint64_t v) {
  void *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_INT8:
    ((int8_t *)p)[i] = (int8_t)(uint8_t)v;
    return;
  case ST_DTYPE_INT16:
    ((int16_t *)p)[i] = (int16_t)(uint16_t)v;
    return;
  case ST_DTYPE_INT32:
    ((int32_t *)p)[i] = (int32_t)(uint32_t)v;
    return;
  case ST_DTYPE_INT64:
    ((int64_t *)p)[i] = (int64_t)v;
    return;
  case ST_DTYPE_UINT8:
    ((uint8_t *)p)[i] = (uint8_t)v;
    return;
  case ST_DTYPE_BOOL:
    ((uint8_t *)p)[i] = v != 0;
    return;
  default:
    return;
  }
}

double st__scalar_f64(const st_op_call *call) { return call->scalars[0].f; }

uint64_t st__scalar_u64(const st_op_call *call) {
  const st_scalar *s = &call->scalars[0];
  if (s->is_int)
    return (uint64_t)s->i;
  /* st_op_check rejected values outside the int64 range. */
  return (uint64_t)(int64_t)s->f;
}

void st__reduce_shard_blocks(const st_op_call *call, size_t *kb0, size_t *kb1) {
  size_t n = call->tensors[0].numel;
  size_t blocks = n / ST__REDUCE_BLOCK + (n % ST__REDUCE_BLOCK != 0);
  st_shard_range(blocks, call->shard_index, call->shard_count, kb0, kb1);
}

void st__reduce_block_range(const st_tensor *x, size_t k, size_t *begin,
                            size_t *end) {
  *begin = k * ST__REDUCE_BLOCK;
  *end = *begin + ST__REDUCE_BLOCK;
  if (*end > x->numel)
    *end = x->numel;
}

void st__shard_rows(const st_op_call *call, size_t out, size_t *r0,
                    size_t *r1) {
  size_t rows = (size_t)call->tensors[out].shape[0];
  st_shard_range(rows, call->shard_index, call->shard_count, r0, r1);
}

/* Items per element-wise chunk: large enough that a chunk costs far more
 * than claiming it, small enough to balance over a few cores. */
#define EW_GRAIN ((size_t)1 << 15)

typedef struct ew_ctx {
  st_op_call *call;
  st__ew kind;
  st__ew_fn ew;
  size_t offset; /* first element of the shard */
} ew_ctx;

static void ew_chunk(void *ctx, size_t b, size_t e) {
  ew_ctx *c = ctx;
  c->ew(c->kind, c->call, c->offset + b, c->offset + e);
}

st_status st__ew_pool(st_op_call *call, st__ew kind, st__ew_fn ew) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t b, e;
  st_shard_range(call->tensors[0].numel, call->shard_index, call->shard_count,
                 &b, &e);
  ew_ctx c = {call, kind, ew, b};
  st__parallel_for(e - b, EW_GRAIN, call->max_threads, ew_chunk, &c);
  return ST_OK;
}

typedef struct rows_ctx {
  st_op_call *call;
  st__rows_fn rows;
  size_t offset; /* first row of the shard */
} rows_ctx;

static void rows_chunk(void *ctx, size_t b, size_t e) {
  rows_ctx *c = ctx;
  c->rows(c->call, c->offset + b, c->offset + e);
}

void st__rows_pool(st_op_call *call, size_t r0, size_t r1, size_t grain,
                   st__rows_fn rows) {
  rows_ctx c = {call, rows, r0};
  st__parallel_for(r1 - r0, grain, call->max_threads, rows_chunk, &c);
}

typedef struct reduce_ctx {
  st_op_call *call;
  size_t offset; /* first block of the shard */
  st__sum_f64_fn sum_f;
  st__sum_u64_fn sum_u;
  double *partial_f; /* one of the two, by dtype */
  uint64_t *partial_u;
} reduce_ctx;

static void reduce_chunk(void *ctx, size_t b, size_t e) {
  reduce_ctx *c = ctx;
  const st_tensor *x = &c->call->tensors[0];
  for (size_t k = b; k < e; k++) {
    size_t lo, hi;
    st__reduce_block_range(x, c->offset + k, &lo, &hi);
    if (c->partial_f)
      c->partial_f[k] = c->sum_f(x, lo, hi);
    else
      c->partial_u[k] = c->sum_u(x, lo, hi);
  }
}

st_status st__reduce_sum_pool(st_op_call *call, st__sum_f64_fn sum_f,
                              st__sum_u64_fn sum_u) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  const st_tensor *x = &call->tensors[0];
  st_tensor *out = &call->tensors[1];
  int is_int = st__dtype_is_int(x->dtype);
  size_t kb0, kb1;
  st__reduce_shard_blocks(call, &kb0, &kb1);
  size_t nb = kb1 - kb0;
  reduce_ctx c = {call, kb0, sum_f, sum_u, NULL, NULL};
  if (nb > 0) {
    if (is_int)
      c.partial_u = malloc(nb * sizeof *c.partial_u);
    else
      c.partial_f = malloc(nb * sizeof *c.partial_f);
    if (c.partial_u == NULL && c.partial_f == NULL)
      return st_op_call_fail(call, ST_ENOMEM,
                             "op 'reduce_sum': out of memory for %zu block "
                             "partials",
                             nb);
    st__parallel_for(nb, 1, call->max_threads, reduce_chunk, &c);
  }
  if (is_int) {
    uint64_t total = 0;
    for (size_t k = 0; k < nb; k++)
      total += c.partial_u[k];
    st__elem_set_u64(out, 0, total);
  } else {
    double total = 0.0;
    for (size_t k = 0; k < nb; k++)
      total += c.partial_f[k];
    st__elem_set_f64(out, 0, total);
  }
  free(c.partial_u);
  free(c.partial_f);
  return ST_OK;
}

void st__transpose_by_size(st_op_call *call, size_t r0, size_t r1,
                           const st__transpose_fn kernels[4]) {
  const st_tensor *x = &call->tensors[0];
  void *y = call->tensors[1].data;
  size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
  switch (st__elem_size(x)) {
  case 1:
    kernels[0](x->data, y, rows, cols, r0, r1);
    break;
  case 2:
    kernels[1](x->data, y, rows, cols, r0, r1);
    break;
  case 4:
    kernels[2](x->data, y, rows, cols, r0, r1);
    break;
  case 8:
    kernels[3](x->data, y, rows, cols, r0, r1);
    break;
  default:
    st__ref_transpose_rows(call, r0, r1);
    break;
  }
}

st_status st__ops_register(st_registry *reg, const char *module,
                           const char *backend, const st__op_entry *ops,
                           st_error *err) {
  for (const st__op_entry *e = ops; e->op != NULL; e++) {
    st_status rc =
        st_registry_register(reg, module, e->op, backend, e->fn, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

st_op_fn st__ops_find(const st__op_entry *ops, const char *op) {
  for (const st__op_entry *e = ops; e->op != NULL; e++)
    if (strcmp(e->op, op) == 0)
      return e->fn;
  return NULL;
}

/* copy for any platform: the shard's bytes, one memcpy. */
static st_status common_copy(st_op_call *call) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  const st_tensor *x = &call->tensors[0];
  st_tensor *y = &call->tensors[1];
  size_t b, e, size = st__elem_size(x);
  st_shard_range(x->numel, call->shard_index, call->shard_count, &b, &e);
  if (e > b)
    memcpy((char *)y->data + b * size, (const char *)x->data + b * size,
           (e - b) * size);
  return ST_OK;
}

const st__op_entry st__common_ops[] = {
    {"copy", common_copy},
    {NULL, NULL},
};

static st_status common_init(st_registry *reg, st_error *err) {
  return st__ops_register(reg, "common", ST_BACKEND_COMMON, st__common_ops,
                          err);
}

static const char *const no_platforms[] = {NULL};

const st_module st__module_common = {
    ST_ABI_VERSION,
    sizeof(st_module),
    "common",
    no_platforms,
    common_init,
};
