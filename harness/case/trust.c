/* SPDX-License-Identifier: MIT */
/* Mistrust and determinism (docs/cli.md#mistrust,
 * docs/cli.md#determinism). The 30% threshold is benchdnn's: it marks a
 * check MISTRUSTED when over 30% of the outputs are zero, since a kernel
 * that writes nothing, or only zeros, would pass it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case/case.h"
#include "case/compare.h"
#include "case/result.h"
#include "case/trust.h"

int st__mistrust_reason(const st_tensor *t, char *buf, size_t size) {
  size_t zeros = 0, i;
  int all_equal = 1;
  double first;
  char v[64];
  if (t == NULL || !st_dtype_is_float(t->dtype) || t->numel < 2)
    return 0;
  first = st_tensor_get_f64(t, 0);
  for (i = 0; i < t->numel; i++) {
    double x = st_tensor_get_f64(t, i);
    zeros += x == 0.0;
    if (x != first) /* NaN is equal to nothing, itself included */
      all_equal = 0;
  }
  /* More than 30%, in integers: zeros / numel > 3 / 10. */
  if (zeros * 10 > t->numel * 3) {
    snprintf(buf, size,
             "tensor '%s': %zu of golden's %zu elements are zero (over 30%%)",
             t->name, zeros, t->numel);
    return 1;
  }
  if (all_equal) {
    st__compare_value_str(t, 0, v, sizeof v);
    snprintf(buf, size, "tensor '%s': golden's %zu elements are all equal (%s)",
             t->name, t->numel, v);
    return 1;
  }
  return 0;
}

int st__determinism_diff(const st_tensor *a, unsigned run_a, const st_tensor *b,
                         unsigned run_b, char *buf, size_t size) {
  size_t esize, i;
  char idx[ST__INDEX_CHARS], va[ST__VALUE_CHARS], vb[ST__VALUE_CHARS];
  if (a->numel == 0 || a->nbytes != b->nbytes ||
      memcmp(a->data, b->data, a->nbytes) == 0)
    return 0;
  esize = a->nbytes / a->numel;
  for (i = 0; i < a->numel; i++)
    if (esize == 0 || memcmp((const char *)a->data + i * esize,
                             (const char *)b->data + i * esize, esize) != 0)
      break;
  if (i == a->numel)
    i = 0; /* sub-byte dtypes: the bytes differ, name the tensor */
  st__element_strs(a, b, i, 0, idx, va, vb);
  snprintf(buf, size,
           "not deterministic: tensor '%s' differs at %s: %s in run %u, %s "
           "in run %u",
           a->name, idx, va, run_a, vb, run_b);
  return 1;
}

/* Output and inout tensors: what the kernel writes. */
static int written(const st_tensor *t) {
  return t->role == ST_ROLE_OUTPUT || t->role == ST_ROLE_INOUT;
}

void st__case_mistrust(st__casectx *cc, const st__casedata *d) {
  char why[512];
  for (size_t i = 0; i < d->gold.n_tensors && i < d->plan.n_args; i++) {
    const st_tensor *g = &d->gold.tensors[i];
    if (!written(g) || !d->plan.args[i].compare ||
        !st__mistrust_reason(g, why, sizeof why))
      continue;
    st__case_result_set_mistrust(cc->res, why);
    return; /* the first such tensor names the reason */
  }
}

st_phase_status st__case_determinism(st__casectx *cc, st__casedata *d,
                                     unsigned round) {
  char msg[1024];
  if (cc->run->opts->determinism < 2)
    return ST_PHASE_OK;
  if (round == 0) {
    d->det = calloc(d->args.n_tensors ? d->args.n_tensors : 1, sizeof *d->det);
    if (d->det == NULL)
      goto oom;
    d->n_det = d->args.n_tensors;
    for (size_t i = 0; i < d->args.n_tensors; i++) {
      const st_tensor *t = &d->args.tensors[i];
      if (!written(t) || t->nbytes == 0)
        continue;
      if ((d->det[i] = malloc(t->nbytes)) == NULL)
        goto oom;
      memcpy(d->det[i], t->data, t->nbytes);
    }
    return ST_PHASE_OK;
  }
  for (size_t i = 0; i < d->n_det && i < d->args.n_tensors; i++) {
    st_tensor first;
    if (d->det[i] == NULL)
      continue;
    first = d->args.tensors[i];
    first.data = d->det[i];
    if (st__determinism_diff(&first, 1, &d->args.tensors[i], round + 1, msg,
                             sizeof msg)) {
      st__case_result_set_status(cc->res, ST_CASE_FAIL, "%s", msg);
      return ST_PHASE_FAIL;
    }
  }
  return ST_PHASE_OK;
oom:
  st__case_result_set_status(cc->res, ST_CASE_ERROR,
                             "out of memory keeping run 1's outputs for "
                             "--determinism");
  return ST_PHASE_ERROR;
}

void st__case_determinism_free(st__casedata *d) {
  for (size_t i = 0; d->det != NULL && i < d->n_det; i++)
    free(d->det[i]);
  free(d->det);
  d->det = NULL;
  d->n_det = 0;
}
