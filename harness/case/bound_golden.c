/* SPDX-License-Identifier: MIT */
/* The golden phase under `tolerance: bound` (case/bound_golden.h). */
#include <stdlib.h>
#include <string.h>

#include <scenetest/registry.h>

#include "case/bound_golden.h"
#include "case/result.h"
#include "ops/ref_bound.h"

int st__bound_in_plan(const st__plan *plan) {
  for (size_t i = 0; i < plan->n_args; i++)
    if (plan->args[i].bound)
      return 1;
  return 0;
}

st_phase_status st__bound_golden(st__casectx *cc, st__casedata *d,
                                 st__call *call) {
  st__argset *g = &d->gold;
  const size_t n = g->n_tensors;
  size_t at = (size_t)-1;
  if (strcmp(d->golden_backend, ST_BACKEND_REFERENCE) != 0) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR,
                               "golden: tolerance: bound needs the reference "
                               "golden; the golden platform is '%s'",
                               d->golden_backend);
    return ST_PHASE_ERROR;
  }
  for (size_t i = 0; i < n && i < d->plan.n_args; i++)
    if (d->plan.args[i].bound)
      at = i; /* the op writes one tensor (scene/plan_bound.c) */
  if (at == (size_t)-1)
    return ST_PHASE_OK; /* st__bound_in_plan said otherwise: not called */
  g->magsum = calloc(n ? n : 1, sizeof *g->magsum);
  g->nterm = calloc(n ? n : 1, sizeof *g->nterm);
  if (g->magsum == NULL || g->nterm == NULL ||
      (g->magsum[at] =
           malloc((g->tensors[at].numel ? g->tensors[at].numel : 1) *
                  sizeof(double))) == NULL ||
      (d->plan.args[at].bound_softmax &&
       (g->nterm[at] =
            malloc((g->tensors[at].numel ? g->tensors[at].numel : 1) *
                   sizeof(double))) == NULL)) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: out of memory");
    return ST_PHASE_ERROR;
  }
  const char *msg;
  st_status rc = st__ref_bound(&call->op, g->magsum[at], g->nterm[at]);
  msg = st__call_returned(call, "golden");
  if (rc == ST_OK)
    return ST_PHASE_OK;
  st__case_result_set_status(cc->res, ST_CASE_ERROR, "golden: %s",
                             msg ? msg : st_status_str(rc));
  return ST_PHASE_ERROR;
}
