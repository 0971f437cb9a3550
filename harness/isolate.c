/* SPDX-License-Identifier: MIT */
/* Isolation: not built yet. */
#include "runner_internal.h"

int st__isolation_wanted(const runctx *rc, const st_case_ref *refs,
                         size_t n) {
  (void)refs;
  (void)n;
  return rc->opts->isolate || rc->opts->timeout > 0;
}

st_status st__isolate_run_all(runctx *rc, const st_case_ref *refs, size_t n,
                              st_run_result *run, st_error *err) {
  (void)rc;
  (void)refs;
  (void)n;
  (void)run;
  return st_error_set(err, ST_EUSAGE,
                      "--isolate and --timeout are not supported by this "
                      "build yet");
}
