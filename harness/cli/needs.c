/* SPDX-License-Identifier: MIT */
/* What the program says about cases that need what the run lacks
 * (docs/cli.md): `check` names each missing golden backend once, and a
 * run ends with one summary warning counting the cases it skipped for
 * that reason. */
#include <stdio.h>
#include <string.h>

#include <scenetest/log.h>

#include "case/result.h"
#include "cli/cli_internal.h"
#include "ops/avail.h"
#include "ops/validate.h"

void st__cli_warn_needs(const st__validate *v) {
  char why[512];
  for (size_t i = 0; i < v->n_missing; i++) {
    int one = v->missing[i].cases == 1;
    st__backend_missing(v->missing[i].backend, why, sizeof why);
    st_log(ST_LOG_WARNING,
           "%zu case%s need%s golden backend '%s', which is %s; a run "
           "skips %s (--strict-platforms makes %s)",
           v->missing[i].cases, one ? "" : "s", one ? "s" : "",
           v->missing[i].backend, why, one ? "it" : "them",
           one ? "it an error" : "them errors");
  }
}

/* The short reason of a skip for a missing backend: the text after
 * ST__UNAVAILABLE_PREFIX up to the first ';'. */
static size_t reason_len(const char *reason) {
  const char *semi = strchr(reason, ';');
  return semi ? (size_t)(semi - reason) : strlen(reason);
}

void st__cli_warn_skipped(const st_run_result *run) {
  enum { MAX_REASONS = 8 };
  const char *reasons[MAX_REASONS];
  size_t counts[MAX_REASONS], n_reasons = 0, total = 0, i, k;
  const size_t plen = strlen(ST__UNAVAILABLE_PREFIX);
  char line[1024];
  size_t used = 0;

  for (i = 0; i < st_run_result_count(run); i++) {
    const st_case_result *r = st_run_result_get(run, i);
    const char *m = r ? st_case_result_message(r) : NULL;
    if (r == NULL || st_case_result_status(r) != ST_CASE_SKIP || m == NULL ||
        strncmp(m, ST__UNAVAILABLE_PREFIX, plen) != 0)
      continue;
    m += plen;
    total++;
    for (k = 0; k < n_reasons; k++)
      if (reason_len(reasons[k]) == reason_len(m) &&
          strncmp(reasons[k], m, reason_len(m)) == 0)
        break;
    if (k == n_reasons && n_reasons < MAX_REASONS) {
      reasons[n_reasons] = m;
      counts[n_reasons++] = 0;
    }
    if (k < n_reasons)
      counts[k]++;
  }
  if (total == 0)
    return;
  line[0] = '\0';
  for (k = 0; k < n_reasons && used < sizeof line; k++) {
    int w = n_reasons == 1
                ? snprintf(line + used, sizeof line - used, "%.*s",
                           (int)reason_len(reasons[k]), reasons[k])
                : snprintf(line + used, sizeof line - used, "%s%.*s (%zu)",
                           k > 0 ? ", " : "", (int)reason_len(reasons[k]),
                           reasons[k], counts[k]);
    used += w > 0 ? (size_t)w : 0;
  }
  st_log(ST_LOG_WARNING,
         "%zu case%s skipped: %s (each case's skip message says how to get "
         "it)",
         total, total == 1 ? "" : "s", line);
}
