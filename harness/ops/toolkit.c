/* SPDX-License-Identifier: MIT */
/* The backend toolkit of toolkit.h: op tables and their registration, the
 * scalar and shard helpers, reduce_sum's block arithmetic and the combining
 * of its partials, the element-wise, row and reduce_sum drivers over the
 * thread pool, and transpose by element size. It holds no op of its own:
 * the `common` module is backend_common.c. */
#include <stdlib.h>
#include <string.h>

#include "ops/toolkit.h"

double st__scalar_f64(const st_op_call *call) { return call->scalars[0].f; }

uint64_t st__scalar_u64(const st_op_call *call) {
  const st_scalar *s = &call->scalars[0];
  if (s->is_int)
    return (uint64_t)s->i;
  /* st_op_check rejected values outside the int64 range. */
  return (uint64_t)(int64_t)s->f;
}

st_status st__reduce_shard_blocks(st_op_call *call, size_t *kb0, size_t *kb1) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t n = call->tensors[0].numel;
  size_t blocks = n / ST__REDUCE_BLOCK + (n % ST__REDUCE_BLOCK != 0);
  st_shard_range(blocks, call->shard_index, call->shard_count, kb0, kb1);
  return ST_OK;
}

void st__reduce_block_range(const st_tensor *x, size_t k, size_t *begin,
                            size_t *end) {
  *begin = k * ST__REDUCE_BLOCK;
  *end = *begin + ST__REDUCE_BLOCK;
  if (*end > x->numel)
    *end = x->numel;
}

st_status st__shard_rows(st_op_call *call, size_t out, size_t *r0, size_t *r1) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  size_t rows = (size_t)call->tensors[out].shape[0];
  st_shard_range(rows, call->shard_index, call->shard_count, r0, r1);
  return ST_OK;
}

/* Items per element-wise chunk: large enough that a chunk costs far more
 * than claiming it, small enough to balance over a few cores. */
#define EW_GRAIN ((size_t)1 << 15)

typedef struct st__ew_ctx {
  st_op_call *call;
  st__ew kind;
  st__ew_fn ew;
  size_t offset; /* first element of the shard */
} st__ew_ctx;

static void ew_chunk(void *ctx, size_t b, size_t e) {
  st__ew_ctx *c = ctx;
  c->ew(c->kind, c->call, c->offset + b, c->offset + e);
}

st_status st__ew_shard(st_op_call *call, size_t *begin, size_t *end) {
  st_status rc = st_op_check(call);
  if (rc != ST_OK)
    return rc;
  st_shard_range(call->tensors[0].numel, call->shard_index, call->shard_count,
                 begin, end);
  return ST_OK;
}

st_status st__ew_pool(st_op_call *call, st__ew kind, st__ew_fn ew) {
  size_t b, e;
  st_status rc = st__ew_shard(call, &b, &e);
  if (rc != ST_OK)
    return rc;
  st__ew_ctx c = {call, kind, ew, b};
  st__parallel_for(e - b, EW_GRAIN, call->max_threads, ew_chunk, &c);
  return ST_OK;
}

typedef struct st__rows_ctx {
  st_op_call *call;
  st__rows_fn rows;
  size_t offset; /* first row of the shard */
} st__rows_ctx;

static void rows_chunk(void *ctx, size_t b, size_t e) {
  st__rows_ctx *c = ctx;
  c->rows(c->call, c->offset + b, c->offset + e);
}

void st__rows_pool(st_op_call *call, size_t r0, size_t r1, size_t grain,
                   st__rows_fn rows) {
  st__rows_ctx c = {call, rows, r0};
  st__parallel_for(r1 - r0, grain, call->max_threads, rows_chunk, &c);
}

st_status st__rows_op(st_op_call *call, size_t out, size_t work, int k_terms,
                      size_t tile, st__rows_fn rows) {
  size_t r0, r1;
  st_status rc = st__shard_rows(call, out, &r0, &r1);
  if (rc != ST_OK)
    return rc;
  size_t per_row = (size_t)call->tensors[out].shape[1];
  if (k_terms)
    per_row *= (size_t)call->tensors[0].shape[1];
  size_t grain = per_row >= work ? 1 : work / (per_row ? per_row : 1);
  grain = (grain + tile - 1) / tile * tile;
  st__rows_pool(call, r0, r1, grain, rows);
  return ST_OK;
}

typedef struct st__reduce_ctx {
  st_op_call *call;
  size_t offset; /* first block of the shard */
  st__sum_f64_fn sum_f;
  st__sum_u64_fn sum_u;
  int is_int;
  st__partial *partials; /* one per block of the shard */
} st__reduce_ctx;

static void reduce_chunk(void *ctx, size_t b, size_t e) {
  st__reduce_ctx *c = ctx;
  const st_tensor *x = &c->call->tensors[0];
  for (size_t k = b; k < e; k++) {
    size_t lo, hi;
    st__reduce_block_range(x, c->offset + k, &lo, &hi);
    if (c->is_int)
      c->partials[k].u = c->sum_u(x, lo, hi);
    else
      c->partials[k].f = c->sum_f(x, lo, hi);
  }
}

void st__reduce_combine(st_tensor *out, const st__partial *partials, size_t n) {
  if (st__dtype_is_int(out->dtype)) {
    uint64_t total = 0;
    for (size_t k = 0; k < n; k++)
      total += partials[k].u;
    st_tensor_set_i64(out, 0, (int64_t)total);
  } else {
    double total = 0.0;
    for (size_t k = 0; k < n; k++)
      total += partials[k].f;
    st_tensor_set_f64(out, 0, total);
  }
}

st_status st__reduce_sum_pool(st_op_call *call, st__sum_f64_fn sum_f,
                              st__sum_u64_fn sum_u) {
  size_t kb0, kb1;
  st_status rc = st__reduce_shard_blocks(call, &kb0, &kb1);
  if (rc != ST_OK)
    return rc;
  size_t nb = kb1 - kb0;
  st__reduce_ctx c = {
      call, kb0, sum_f, sum_u, st__dtype_is_int(call->tensors[0].dtype), NULL};
  if (nb > 0) {
    c.partials = malloc(nb * sizeof *c.partials);
    if (c.partials == NULL)
      return st_op_call_fail(call, ST_ENOMEM,
                             "op 'reduce_sum': out of memory for %zu block "
                             "partials",
                             nb);
    st__parallel_for(nb, 1, call->max_threads, reduce_chunk, &c);
  }
  st__reduce_combine(&call->tensors[1], c.partials, nb);
  free(c.partials);
  return ST_OK;
}

void st__transpose_by_size(st_op_call *call, size_t r0, size_t r1,
                           const st__transpose_fn kernels[4]) {
  const st_tensor *x = &call->tensors[0];
  st_tensor *yt = &call->tensors[1];
  void *y = yt->data;
  size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
  if (yt->dtype != x->dtype) {
    /* Mixed precision: float to another float dtype, one rounding. */
    for (size_t r = r0; r < r1 && r < cols; r++)
      for (size_t j = 0; j < rows; j++)
        st_tensor_set_f64(yt, r * rows + j, st_tensor_get_f64(x, j * cols + r));
    return;
  }
  switch (st_dtype_size(x->dtype)) {
  case 1:
    kernels[0](x->data, y, rows, cols, r0, r1);
    break;
  case 2:
    kernels[1](x->data, y, rows, cols, r0, r1);
    break;
  case 4:
    kernels[2](x->data, y, rows, cols, r0, r1);
    break;
  default:
    /* 8: st_op_check has made sure the dtype is valid, and every dtype is
     * 1, 2, 4 or 8 bytes (test_dtype pins the sizes). */
    kernels[3](x->data, y, rows, cols, r0, r1);
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
