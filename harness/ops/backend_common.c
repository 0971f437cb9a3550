/* SPDX-License-Identifier: MIT */
/* The `common` module: op implementations for any backend, which a lookup
 * falls back to after a repair. Its `copy` is the fallback any platform
 * gets (a plugin platform that does not implement copy still runs copy
 * scenes). */
#include <string.h>

#include "ops/backends.h"
#include "ops/ops_impl.h"

/* copy for any platform: the shard's bytes, one memcpy. */
static ST_WUR st_status common_copy(st_op_call *call) {
  size_t b, e;
  st_status rc = st__ew_shard(call, &b, &e);
  if (rc != ST_OK)
    return rc;
  const st_tensor *x = &call->tensors[0];
  st_tensor *y = &call->tensors[1];
  size_t size = st_dtype_size(x->dtype);
  if (y->dtype != x->dtype) {
    /* Float to another float dtype (st_op_check allows no other): one
     * rounding through double. */
    for (size_t i = b; i < e; i++)
      st_tensor_set_f64(y, i, st_tensor_get_f64(x, i));
    return ST_OK;
  }
  if (e > b)
    memcpy((char *)y->data + b * size, (const char *)x->data + b * size,
           (e - b) * size);
  return ST_OK;
}

const st__op_entry st__common_ops[] = {
    {"copy", common_copy},
    {NULL, NULL},
};

const char *const st__no_platforms[] = {NULL};

ST__BUILTIN_MODULE(common, ST_BACKEND_COMMON, st__no_platforms)
