/* SPDX-License-Identifier: MIT */
/* The work model (work.h): one table, the op list's own columns. */
#include <string.h>

#include "base/op_list.h"
#include "ops/work.h"

enum { PER_OUT, PER_IN, PER_MNK };

typedef struct work_row {
  const char *name;
  const char *tensors[3];
  unsigned written;
  double flops;
  int per;
} work_row;

static const work_row rows[] = {
#define XX(name, n, t0, t1, t2, scalar, dtypes, shapes, written, read, widen,  \
           flops, per, ...)                                                    \
  {#name, {t0, t1, t2}, written, flops, PER_##per},
    ST__BUILTIN_OP_MAP(XX)
#undef XX
};

/* The op's tensor `name`, else the plan's tensor at its position. */
static const st__rarg *tensor_named(const st__plan *plan, const char *name,
                                    size_t pos) {
  size_t i;
  if (name == NULL)
    return NULL;
  for (i = 0; i < plan->n_tensors; i++)
    if (plan->args[i].is_tensor && strcmp(plan->args[i].name, name) == 0)
      return &plan->args[i];
  return pos < plan->n_tensors ? &plan->args[pos] : NULL;
}

double st__work_bytes(const st__plan *plan) {
  double bytes = 0;
  size_t i;
  for (i = 0; i < plan->n_args; i++) {
    const st__rarg *a = &plan->args[i];
    if (!a->is_tensor)
      continue;
    if (a->role == ST_ROLE_INPUT || a->role == ST_ROLE_INOUT)
      bytes += (double)a->nbytes;
    if (a->role == ST_ROLE_OUTPUT || a->role == ST_ROLE_INOUT)
      bytes += (double)a->nbytes;
  }
  return bytes;
}

int st__work_flops(const char *op, const st__plan *plan, double *flops) {
  size_t i, t;
  for (i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const work_row *w = &rows[i];
    const st__rarg *a;
    if (strcmp(w->name, op) != 0)
      continue;
    if (w->per == PER_MNK) {
      const st__rarg *b = tensor_named(plan, w->tensors[1], 1);
      a = tensor_named(plan, w->tensors[0], 0);
      if (a == NULL || b == NULL || a->ndim != 2 || b->ndim != 2)
        return 0;
      *flops = w->flops * (double)a->shape[0] * (double)a->shape[1] *
               (double)b->shape[1];
      return 1;
    }
    for (t = 0; t < 3; t++)
      if (w->per == PER_IN ? t == 0 : (w->written >> t) & 1u)
        break;
    if (t == 3 || (a = tensor_named(plan, w->tensors[t], t)) == NULL)
      return 0;
    *flops = w->flops * (double)a->numel;
    return 1;
  }
  return 0;
}
