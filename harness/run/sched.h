/* SPDX-License-Identifier: MIT */
/* Schedulers: where a run's cases run. One table of hooks each:
 *
 *   supervise (run/supervise.c)  -j N supervised children, each running
 *                            cases one after another (the CLI's default;
 *                            st_run_options.supervise)
 *   isolate (run/isolate.c)  a forked child per case, at most -j at a time
 *                            (--isolate; a timeout on a case whose
 *                            executor does not own it)
 *   threads (run/threads.c)  -j N threads of this process
 *   serial  (run/serial.c)   one case after another on this thread
 *
 * st_run takes the first that fits (st__sched_pick). A scheduler knows of
 * a case's executor only its flags (case/exec.h): which cases fork, which
 * enforce their timeout themselves. What every scheduler does with a
 * finished case (tell the observers, keep the result, --fail-fast) is
 * here, once. A new way to run cases is one more table in the list. */
#ifndef SCENETEST_HARNESS_SCHED_H
#define SCENETEST_HARNESS_SCHED_H

#include <scenetest/run.h>

#include "case/case.h"
#include "run/fanout.h"

/* A run's cases as a scheduler sees them. */
typedef struct st__schedctx {
  st__runctx *rc;          /* borrowed; exec_state is the executors' */
  const st__fanout *fo;    /* borrowed */
  const st_case_ref *refs; /* the n selected cases, borrowed */
  size_t n;
  st_run_result *run; /* where each case's result goes, borrowed */
  /* A case ran but left no result (out of memory): the run fails. */
  int lost;
  /* The scheduler ran out of memory but reported every case (each
   * without a result of its own is an error): the run is reported, then
   * fails (ST_ENOMEM, exit 3). */
  int oom;
  /* case_end calls made, and results kept twice (a harness bug): checked
   * against the selection when the run ends. */
  size_t reported;
  int twice;
  /* Given back when a case's result cannot be made, so that it can be
   * made smaller (the run's, malloc'd; NULL once used). */
  void *reserve;
  /* Cases that failed, errored or passed unexpectedly so far (against
   * --maxfail); guarded by the scheduler's own lock where it has one. */
  size_t failures;
} st__schedctx;

typedef struct st__scheduler {
  const char *name;
  /* 1 if it is the one for sc's run. */
  int (*fits)(const st__schedctx *sc /* IN */);
  /* Runs every case of sc and reports each (st__sched_report, in
   * selection order; st__sched_finished in finish order); honours
   * --fail-fast. run_begin and run_end are the caller's. An error is the
   * run's, not a case's (a case's trouble is in its result). Runs on the
   * scheduling thread. */
  st_status (*run_all)(st__schedctx *sc /* IN/OUT */,
                       st_error *err /* OUT */) ST_WUR;
} st__scheduler;

extern const st__scheduler st__sched_supervise;
extern const st__scheduler st__sched_isolate;
/* How many children the last run of st__sched_isolate took from its fork
 * server (run/zygote.h); for tests. Thread-safety: after the run. */
size_t st__isolate_spares_used(void);
/* Sets the memory (bytes not backed by files) past which the isolate
 * scheduler starts its fork server (default 8 MiB; 0: from the first
 * child). For tests and benchmarks. Thread-safety: between runs. */
size_t st__isolate_set_zygote_min(size_t bytes); /* returns the old value */
extern const st__scheduler st__sched_threads;
extern const st__scheduler st__sched_serial;

/* The first scheduler that fits sc's run (serial fits every run). The
 * table is run/runner.c's: the schedulers use this file's helpers, so the
 * list that names them sits above them. */
const st__scheduler *st__sched_pick(const st__schedctx *sc /* IN */);

/* Case i's info. */
void st__sched_info(const st__schedctx *sc /* IN */, size_t i,
                    st_case_info *info /* OUT */);
/* 1 if case i's executor forks (ST__EXEC_FORKS): it runs on the
 * scheduling thread, with no other case running. */
int st__sched_forks(const st__schedctx *sc /* IN */, size_t i);
/* Case i's timeout in seconds (the case's `timeout`, else --timeout; 0:
 * none), and whether its executor enforces it itself. */
double st__sched_timeout(const st__schedctx *sc /* IN */, size_t i);
int st__sched_owns_timeout(const st__schedctx *sc /* IN */, size_t i);
/* The run's failure limit: --maxfail, 1 under --fail-fast, 0 none. */
unsigned st__sched_maxfail(const st__schedctx *sc /* IN */);
/* Counts r when it failed, errored, passed unexpectedly or is missing
 * (NULL); 1 once the count reaches the run's limit (docs/cli.md: the
 * cases not started then are skipped). Call once per finished case. */
int st__sched_stops(st__schedctx *sc /* IN/OUT */,
                    const st_case_result *r /* IN, or NULL */);
/* The result of case i when --fail-fast left it unrun (status skip), or
 * NULL when out of memory. */
st_case_result *st__sched_not_run(const st__schedctx *sc /* IN */, size_t i);
/* The same with another reason (an interrupt's). */
st_case_result *st__sched_unrun(const st__schedctx *sc /* IN */, size_t i,
                                const char *why /* IN */);

/* In-process: a case that was running when SIGINT or SIGTERM came
 * (run/interrupt.h) is an error, "interrupted"; r unchanged otherwise. */
void st__sched_interrupted(st_case_result *r /* IN/OUT, or NULL */);

/* Case i finished: case_finish to the observers now (finish order), its
 * env attached first (docs/reports.md). No call for NULL. */
void st__sched_finished(const st__schedctx *sc /* IN */, size_t i,
                        st_case_result *r /* IN/OUT, or NULL */);

/* How st__sched_report tells the observers a case's begin and events. */
enum {
  /* They went to the observers as they happened (the case ran live). */
  ST__REPORT_LIVE = 0,
  /* Now: case_begin, then the recorded events. */
  ST__REPORT_REPLAY = 1 << 0,
  /* case_finish too, between the events and case_end (a case whose
   * finish was not told when it finished). */
  ST__REPORT_FINISH = 1 << 1,
  /* Now: the recorded events only (case_begin was told as it began). */
  ST__REPORT_EVENTS = 1 << 2,
};

/* Case i's turn in selection order: begin and events as how says, the
 * result kept in the run's (ownership passes: r is the run's after), then
 * case_end. r NULL: the case left no result; the run is lost (sc->lost)
 * and the observers hear nothing of it. */
void st__sched_report(st__schedctx *sc /* IN/OUT */, size_t i,
                      st_case_result *r /* IN: taken */, unsigned how);

#endif
