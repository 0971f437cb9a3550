/* SPDX-License-Identifier: MIT */
/* The runner's internals shared by the level-2 runner (runner.c), level 3
 * (worker processes) and isolation (forked children): the per-run and
 * per-case contexts and the phase bookkeeping. */
#ifndef SCENETEST_HARNESS_RUNNER_INTERNAL_H
#define SCENETEST_HARNESS_RUNNER_INTERNAL_H

#include <scenetest/record.h>
#include <scenetest/run.h>

#include "case/args.h"
#include "scene/scene.h"

typedef struct runctx {
  const st_run_options *opts;
  st_registry *reg;
  st_watch *watch;
  size_t n_watch;
  unsigned golden_threads;
  const st_observer *obs;
  size_t n_obs;
  /* Level 3 (harness/level3.c): which worker pools belong to this run;
   * 0 until its first level-3 case (run_setup's memset zeroes it). */
  unsigned long l3_run;
} runctx;

typedef struct casectx {
  runctx *run;
  st_case_info info;
  st_case_result *res;
  int live; /* call observers as phases happen */
  int oom;
} casectx;

/* CLOCK_MONOTONIC in ns. */
uint64_t st__now_ns(void);
/* Tells live observers that a phase begins. */
void st__phase_begin(casectx *cc, const char *name, int round);
/* Ends a phase begun at t0: polls the loader for objects that became
 * loaded, records the phase event (and one `load` event per object), logs
 * the TIMING phase line, tells live observers. emitted is for `record`. */
void st__phase_end(casectx *cc, const char *name, int round, uint64_t t0,
                   st_phase_status status, int emitted);
/* st__phase_end whose event's `loaded` also lists extra (n_extra strings,
 * borrowed), such as what level-3 workers loaded ("worker N: PATH"):
 * those get no `load` event. */
void st__phase_end_ex(casectx *cc, const char *name, int round, uint64_t t0,
                      st_phase_status status, int emitted,
                      char *const *extra, size_t n_extra);
/* Prepares an op call over set (shard 0 of 1). */
void st__call_init(st_op_call *call, const char *op, const char *backend,
                   st__argset *set, unsigned max_threads);
/* Validates (st_op_check) and calls fn; maps the outcome to a phase status
 * and, on failure, sets the case's status and message (prefixed with
 * what). */
st_phase_status st__dispatch(casectx *cc, st_op_fn fn, st_op_call *call,
                             const char *what);
/* Compares outputs with golden (allclose, per-tensor tolerances) and inputs
 * with their initial bytes; on mismatch sets the case to fail. */
st_phase_status st__compare_all(casectx *cc, const st__plan *plan,
                                const st__argset *args,
                                const st__argset *gold,
                                const st__argset *init);

/* What a case holds between its phases. */
typedef struct st__casedata {
  st__plan plan;
  st__argset args; /* what the kernel runs on */
  st__argset init; /* the initial bytes: reset and inputs-unchanged */
  st__argset gold; /* golden's results (empty under skip_golden) */
  int skip_golden;
  unsigned rounds;
} st__casedata;

/* Runs the `args` and (unless skipped) `golden` phases into *d. Returns 1
 * if the case may go on; else the case's status is set. Either way free d
 * with st__casedata_free. */
int st__case_prepare(casectx *cc, const st_scene *scene, size_t ci,
                     st__casedata *d);
void st__casedata_free(st__casedata *d);
/* The `record` phase. */
void st__case_record(casectx *cc);
/* Begins round's `run` phase; from round 1 on, after a `reset` phase that
 * puts the outputs back to their initial bytes. Returns the run phase's
 * start time, for st__phase_end. */
uint64_t st__case_run_begin(casectx *cc, st__casedata *d, unsigned round);
/* The `compare` phase of round (nothing under skip_golden). Returns 1 if
 * the case may go on. */
int st__case_compare(casectx *cc, st__casedata *d, unsigned round);

/* Runs one case in this process (live: call observers as it goes). */
st_case_result *st__run_one(runctx *rc, const st_case_ref *ref, size_t index,
                            size_t total, int live);

/* Fills the info of case i of n. */
void st__fill_info(st_case_info *info, const runctx *rc,
                   const st_case_ref *ref, size_t i, size_t n);
/* Feeds a finished case's begin and events to the observers (not its
 * end). */
void st__replay(runctx *rc, const st_case_info *info,
                const st_case_result *r);
/* Calls every observer's case_finish. */
void st__notify_finish(runctx *rc, const st_case_info *info,
                       const st_case_result *r);
/* The result of a case that --fail-fast left unrun (status skip). */
st_case_result *st__not_run(const runctx *rc, const st_case_info *info);

/* Isolation (harness/isolate.c). 1 if any of the n cases must run in a
 * forked child (--isolate, or a timeout on a level-2 case). */
int st__isolation_wanted(const runctx *rc, const st_case_ref *refs,
                         size_t n);
/* Runs the n cases (children at most opts->jobs at a time, forked from
 * this thread), stores each result in run at its index, and feeds the
 * observers in selection order: case_begin, events, case_end; run_begin
 * and run_end are the caller's. Honours --fail-fast. */
st_status st__isolate_run_all(runctx *rc, const st_case_ref *refs, size_t n,
                              st_run_result *run, st_error *err);

/* Level 3 (harness/level3.c): args, golden, rehost, record, rounds of
 * reset/run/compare with the kernel on worker processes, release. */
void st__run_level3(casectx *cc, const st_scene *scene, size_t ci);

#endif
