/* SPDX-License-Identifier: MIT */
/* The values of `expected:` put over golden's (case/expected.h). */
#include "case/args.h"
#include "case/expected.h"
#include "case/result.h"

st_phase_status st__case_fill_expected(st__casectx *cc, st__casedata *d,
                                       const char *phase) {
  st_error err;
  st_error_clear(&err);
  if (st__argset_fill_expected(&d->plan, cc->run->opts->seed, &d->gold, &err) ==
      ST_OK)
    return ST_PHASE_OK;
  st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s: expected: %s", phase,
                             err.message);
  return ST_PHASE_ERROR;
}
