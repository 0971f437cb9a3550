/* SPDX-License-Identifier: MIT */
/* What every scheduler shares (sched.h): what a scheduler may know of a
 * case (its info, its executor's flags, its timeout), and what happens to
 * a finished case: the observers told, the result kept, --fail-fast
 * judged. The list they are picked from is runner.c's, above them all. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "case/exec.h"
#include "case/result.h"
#include "run/interrupt.h"
#include "run/sched.h"
#include "scene/quarantine.h"

void st__sched_info(const st__schedctx *sc, size_t i, st_case_info *info) {
  st__case_info_fill(info, sc->rc, &sc->refs[i], i, sc->n);
}

static unsigned flags_of(const st__schedctx *sc, size_t i) {
  return st__executor_for(sc->refs[i].scene)->flags;
}

int st__sched_forks(const st__schedctx *sc, size_t i) {
  return (flags_of(sc, i) & ST__EXEC_FORKS) != 0;
}

int st__sched_owns_timeout(const st__schedctx *sc, size_t i) {
  return (flags_of(sc, i) & ST__EXEC_OWNS_TIMEOUT) != 0;
}

double st__sched_timeout(const st__schedctx *sc, size_t i) {
  const st_case_ref *ref = &sc->refs[i];
  const st__case *k = &ref->scene->cases[ref->index];
  /* The case's `timeout` overrides --timeout (docs/level3.md). */
  return k->timeout > 0 ? k->timeout : sc->rc->opts->timeout;
}

unsigned st__sched_maxfail(const st__schedctx *sc) {
  const st_run_options *o = sc->rc->opts;
  return o->maxfail > 0 ? o->maxfail : o->fail_fast ? 1u : 0u;
}

int st__sched_stops(st__schedctx *sc, const st_case_result *r) {
  unsigned limit = st__sched_maxfail(sc);
  if (limit == 0)
    return 0;
  if (r == NULL || st_case_result_status(r) == ST_CASE_FAIL ||
      st_case_result_status(r) == ST_CASE_ERROR ||
      st_case_result_status(r) == ST_CASE_XPASS)
    sc->failures++;
  return sc->failures >= limit;
}

st_case_result *st__sched_not_run(const st__schedctx *sc, size_t i) {
  /* The library's fail_fast keeps its own words; the CLI's -x and
   * --fail-fast are --maxfail 1 (docs/cli.md). */
  if (sc->rc->opts->maxfail > 0)
    return st__sched_unrun(sc, i, "not run: --maxfail");
  return st__sched_unrun(sc, i,
                         "not run: --fail-fast stopped the run "
                         "after a failure");
}

st_case_result *st__sched_unrun(const st__schedctx *sc, size_t i,
                                const char *why) {
  st_case_info info;
  st_case_result *r;
  st__sched_info(sc, i, &info);
  r = st__case_result_new(info.scene, info.name, info.file, info.line,
                          info.platform, info.seed);
  if (r != NULL) {
    st__case_result_set_pid(r, (long)getpid());
    st__case_result_set_status(r, ST_CASE_SKIP, "%s", why);
  }
  return r;
}

/* The case's env, for the JSON report and --events (docs/reports.md):
 * from the scene model, here in the process that reports, so that it does
 * not travel with the result from a child. */
static void attach_env(const st__schedctx *sc, size_t i, st_case_result *r) {
  const char **kv = NULL;
  size_t n = 0;
  if (st__case_env(sc->refs[i].scene, sc->refs[i].index, &kv, &n) == ST_OK)
    st__case_result_set_env(r, kv, n);
  free(kv);
  {
    /* The quarantine too (docs/scene-format.md#quarantine). */
    const st__quarantine *q =
        sc->refs[i].scene->cases[sc->refs[i].index].quarantine;
    char today[11];
    if (q != NULL) {
      st__quarantine_today(today);
      st__case_result_set_quarantine(
          r, q, st__quarantine_applies(q, st_case_result_platform(r), today));
    }
  }
  kv = NULL;
  /* And its tags, the same way (docs/scene-format.md#tags). */
  if (st__case_tags(sc->refs[i].scene, sc->refs[i].index, &kv, &n) == ST_OK)
    st__case_result_set_tags(r, kv, n);
  free(kv);
}

void st__sched_finished(const st__schedctx *sc, size_t i, st_case_result *r) {
  st_case_info info;
  if (r == NULL)
    return;
  attach_env(sc, i, r);
  st__sched_info(sc, i, &info);
  st__fanout_case_finish(sc->fo, &info, r);
}

void st__sched_report(st__schedctx *sc, size_t i, st_case_result *r,
                      unsigned how) {
  st_case_info info;
  if (st_run_result_get(sc->run, i) != NULL)
    sc->twice = 1;
  if (r == NULL) {
    /* Out of memory (D15): the reserve given back, the case is still
     * reported, as an error; the run then fails (exit 3) with a complete
     * report. */
    free(sc->reserve);
    sc->reserve = NULL;
    sc->oom = 1;
    st__sched_info(sc, i, &info);
    r = st__case_result_new(info.scene, info.name, info.file, info.line,
                            info.platform, info.seed);
    if (r != NULL)
      st__case_result_set_status(r, ST_CASE_ERROR,
                                 "out of memory: the case left no result");
    how |=
        (how & ST__REPORT_EVENTS ? 0u : ST__REPORT_REPLAY) | ST__REPORT_FINISH;
  }
  if (r != NULL)
    attach_env(sc, i, r);
  st__run_result_set(sc->run, i, r);
  if (r == NULL) {
    /* A case without a result would count as neither passed nor failed:
     * the run as a whole fails (st_run says so). */
    sc->lost = 1;
    return;
  }
  st__sched_info(sc, i, &info);
  if (how & ST__REPORT_REPLAY) {
    st__fanout_case_begin(sc->fo, &info);
    st__fanout_replay(sc->fo, &info, r);
  } else if (how & ST__REPORT_EVENTS) {
    st__fanout_replay(sc->fo, &info, r);
  }
  if (how & ST__REPORT_FINISH)
    st__fanout_case_finish(sc->fo, &info, r);
  st__fanout_case_end(sc->fo, &info, r);
  sc->reported++;
}

void st__sched_interrupted(st_case_result *r) {
  char msg[96];
  int sig = st__intr_signal();
  if (r == NULL || sig == 0)
    return;
  snprintf(msg, sizeof msg, "interrupted (%s, during the case)",
           st__intr_name(sig));
  st__case_result_override(r, ST_CASE_ERROR, msg);
}
