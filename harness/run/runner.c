/* SPDX-License-Identifier: MIT */
/* The top of a run: st_run sets the run up (registry, platform check,
 * watch list, golden threads), selects the cases, picks the scheduler
 * that fits (run/sched.h: isolated children, -j threads or serial), lets
 * it run them and tears the run down; st_run_case runs one case with no
 * scheduler at all. How one case runs is case/'s; where its kernel runs,
 * its executor's (case/exec.h). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/run.h>

#include "base/loadwatch.h"
#include "base/options.h"
#include "base/pool.h"
#include "base/proc.h"
#include "base/util.h"
#include "case/case.h"
#include "case/exec.h"
#include "case/guard.h"
#include "case/result.h"
#include "case/tbuf.h"
#include "run/fanout.h"
#include "run/order.h"
#include "run/sched.h"

/* In order of preference: the first that fits is taken. Here, not in
 * sched.c, whose helpers every scheduler calls: the table that names the
 * schedulers sits above them (tests/lint/cycles_check.py). */
static const st__scheduler *const schedulers[] = {
    &st__sched_supervise,
    &st__sched_isolate,
    &st__sched_threads,
    &st__sched_serial,
};

const st__scheduler *st__sched_pick(const st__schedctx *sc) {
  size_t i;
  for (i = 0; i < ST__ARRAY_SIZE(schedulers); i++)
    if (schedulers[i]->fits(sc))
      return schedulers[i];
  return &st__sched_serial; /* it fits every run: not reached */
}

static st_status run_setup(st__runctx *rc, const st_run_options *opts,
                           st_registry **owned, st_error *err) {
  size_t i;
  char names[1024];
  memset(rc, 0, sizeof *rc);
  rc->opts = opts;
  *owned = NULL;
  /* Tensor buffers freed by one case serve the next; run_teardown, which
   * follows every run_setup, ends the scope and frees them. */
  st__tbuf_run_begin();
  /* --guard-pages: the buffers of this run end at PROT_NONE pages and a
   * fault there is described (case/guard.h) in this process and in every
   * child forked from it; run_teardown puts both back. */
  if (opts->guard_pages) {
    st__tbuf_set_guard_pages(1);
    st__guard_install();
  }
  if (opts->registry == NULL) {
    st_status s = st_registry_new_builtin(owned);
    if (s != ST_OK)
      return st_error_set(err, s == ST_ENOMEM ? ST_ENOMEM : ST_EINTERNAL,
                          "cannot create the built-in registry: %s",
                          st_status_str(s));
    rc->reg = *owned;
  } else {
    rc->reg = opts->registry;
  }
  if (!st_registry_has_platform(rc->reg, opts->platform)) {
    st_registry_platforms(rc->reg, names, sizeof names);
    return st_error_set(err, ST_EUSAGE, "unknown platform '%s'; platforms: %s",
                        opts->platform, names);
  }
  for (i = 0; i < opts->n_watch; i++) {
    st_status s = st_watch_parse(opts->watch[i], &rc->watch, &rc->n_watch, err);
    if (s != ST_OK)
      return s;
  }
  /* Cache the pid (and register its fork handler) here, in the process
   * that forks isolated children, not once in each child. */
  (void)st__proc_pid();
  rc->golden_threads = opts->golden_threads;
  if (rc->golden_threads == 0)
    rc->golden_threads = st__golden_threads_default(st__ncores(), opts->jobs);
  return ST_OK;
}

static void run_teardown(st__runctx *rc, st_registry *owned) {
  /* What the executors kept for the run (level 3: its worker pools) ends
   * with it. */
  st__executors_run_end(rc);
  st_watch_list_free(rc->watch, rc->n_watch);
  st_registry_free(owned);
  st__tbuf_run_end();
  if (rc->opts->guard_pages) {
    st__guard_uninstall();
    st__tbuf_set_guard_pages(0);
  }
}

st_status st_run_case(const st_scene *scene, size_t case_index,
                      const st_run_options *opts_in, st_case_result **out,
                      st_error *err) {
  st__runctx rc;
  st_registry *owned = NULL;
  st_case_ref ref;
  st_run_options o;
  const st_run_options *opts = &o;
  st_status s;

  *out = NULL;
  /* The caller's options are read by their size into a copy at this
   * layout (base/options.h); nothing below sees the caller's struct. */
  if ((s = st__run_options_take(opts_in, &o, err)) != ST_OK)
    return s;
  if (case_index >= scene->n_cases)
    return st_error_set(err, ST_EINVAL, "scene '%s' has no case %zu",
                        scene->name, case_index);
  s = run_setup(&rc, opts, &owned, err);
  if (s == ST_OK) {
    ref.scene = scene;
    ref.index = case_index;
    *out = st__case_run(&rc, &ref, 0, 1, NULL);
    if (*out == NULL)
      s = st_error_set(err, ST_ENOMEM, "out of memory");
  }
  run_teardown(&rc, owned);
  return s;
}

/* Primes the loader watch, so objects loaded before the first phase are
 * attributed to no phase. */
static void prime_loadwatch(void) {
  char **l;
  size_t nl;
  if (st__loadwatch_poll(&l, &nl) == ST_OK)
    st__loadwatch_free(l, nl);
}

/* With redirect_stdout, whatever a kernel prints goes to stderr:
 * reporters write to the original stdout, which the caller duplicated
 * before the run. Returns the saved fd 1 for stdout_restore, or -1. */
static int stdout_to_stderr(const st_run_options *opts) {
  int saved;
  if (!opts->redirect_stdout)
    return -1;
  fflush(stdout);
  saved = fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (saved >= 0)
    dup2(2, 1);
  st__proc_parent_only(saved);
  return saved;
}

static void stdout_restore(int saved) {
  if (saved < 0)
    return;
  fflush(stdout);
  dup2(saved, 1);
  st__proc_parent_only_end(saved);
  close(saved);
}

/* Selects the cases and lays out the run's order
 * (docs/cli.md#repeat-and-shuffle: --repeat iterations, each --shuffle'd):
 * *refs and *iters have *n entries, the caller's to free. */
static st_status select_order(const st_scene_set *set,
                              const st_run_options *opts,
                              st_case_ref **refs /* OUT */,
                              unsigned **iters /* OUT */, size_t *n /* OUT */,
                              st_error *err /* OUT */) {
  st_case_ref *sel = NULL;
  size_t n_sel = 0;
  st_status s = st_select_cases(set, opts, &sel, &n_sel, err);

  *refs = NULL;
  *iters = NULL;
  *n = 0;
  if (s != ST_OK)
    return s;
  s = st__order_build(sel, n_sel, opts->repeat, opts->shuffle,
                      opts->shuffle_seed, refs, iters, n, err);
  free(sel);
  return s;
}

/* Every result learns its iteration once the cases ran (the observers
 * had it from st_case_info as they went). */
static void set_iterations(st_run_result *run, const unsigned *iters,
                           size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    st__case_result_set_iteration(st__run_result_at(run, i), iters[i]);
}

/* The selected cases through the scheduler that fits, between the
 * observers' run_begin and run_end. */
static st_status run_through(st__runctx *rc, const st_case_ref *refs, size_t n,
                             st__fanout *fop, st_run_result *run,
                             st_error *err) {
  st__fanout fo = *fop; /* a copy: its live observer and counts are fop's */
  st__schedctx sc;
  const st__scheduler *sched;
  st_run_info rinfo;
  st_status s;

  memset(&sc, 0, sizeof sc);
  sc.rc = rc;
  sc.fo = &fo;
  sc.refs = refs;
  sc.n = n;
  sc.run = run;
  memset(&rinfo, 0, sizeof rinfo);
  rinfo.platform = rc->opts->platform;
  rinfo.seed = rc->opts->seed;
  rinfo.total = n;
  rinfo.repeat = rc->repeat;
  if (rc->opts->shard_total > 1) {
    rinfo.shard_index = rc->opts->shard_index;
    rinfo.shard_total = rc->opts->shard_total;
  }
  rinfo.shuffle = rc->opts->shuffle != 0;
  rinfo.shuffle_seed = rc->opts->shuffle_seed;
  /* What is given back when memory runs out, so that the report can
   * still be finished. */
  sc.reserve = malloc((size_t)4 << 20);
  st__fanout_run_begin(&fo, &rinfo);
  sched = st__sched_pick(&sc);
  /* What executors start before any case is dispatched here (level 3's
   * worker pools: forked before a device context or a runtime's threads
   * exist in this process). Isolated cases each run in a fresh child,
   * which starts its own; so do supervised level-3 cases (each in a
   * fresh child of the supervisor, which dispatches nothing). */
  if (sched != &st__sched_isolate && sched != &st__sched_supervise)
    st__executors_run_begin(rc, refs, n);
  s = sched->run_all(&sc, err);
  free(sc.reserve);
  if (s != ST_OK)
    return s;
  if (sc.lost)
    return st_error_set(err, ST_ENOMEM,
                        "out of memory recording a case's "
                        "result");
  set_iterations(run, rc->iters, n);
  st__fanout_run_end(&fo, run);
  /* The final check: every selected case has exactly one result, and
   * every observer was told of each (docs/cli.md#exit-status: no path exits 0
   * unless every selected case passed or was skipped). */
  if (sc.reported != n || sc.twice)
    return st_error_set(err, ST_EINTERNAL,
                        "the report has %zu results for %zu selected "
                        "cases%s",
                        sc.reported, n, sc.twice ? " (one twice)" : "");
  if (sc.oom)
    return st_error_set(err, ST_ENOMEM,
                        "out of memory during the run (the "
                        "report is complete; cases without a result of "
                        "their own are errors)");
  return ST_OK;
}

/* run_through, then the final check of what each observer was told: a
 * reporter that missed a case would otherwise show a short report under
 * a verdict that counts every case. */
static st_status run_cases(st__runctx *rc, const st_case_ref *refs, size_t n,
                           const st_observer *observers, size_t n_observers,
                           st_run_result *run, st_error *err) {
  st__fanout fo;
  size_t which, got;
  st_status s;
  st__fanout_init(&fo, observers, n_observers);
  s = run_through(rc, refs, n, &fo, run, err);
  if (s == ST_OK && st__fanout_short(&fo, n, &which, &got))
    s = st_error_set(err, ST_EINTERNAL,
                     "observer %zu of %zu (a reporter) was told of %zu of "
                     "the %zu selected cases",
                     which + 1, n_observers, got, n);
  st__fanout_free(&fo);
  return s;
}

/* A case's `env` (docs/scene-format.md) is set with setenv, which is
 * unsafe while other threads run: only a process that runs one case at a
 * time (a supervised or isolated child) may set it, so an in-process run
 * of such a case is a usage error. Marks rc when some case has one. */
static st_status env_check(st__runctx *rc, const st_run_options *opts,
                           const st_case_ref *refs, size_t n, st_error *err) {
  for (size_t i = 0; i < n; i++) {
    const st_scene *s = refs[i].scene;
    const st__case *k = &s->cases[refs[i].index];
    if (s->env.n == 0 && k->env.n == 0)
      continue;
    rc->any_env = 1;
    if (opts->supervise || opts->isolate)
      return ST_OK;
    return st_error_set(
        err, ST_EUSAGE,
        "case '%s::%s' (%s:%d) sets env, which only a supervised or "
        "--isolate run can set (setenv is unsafe in a threaded process); "
        "run it without --no-supervise, or with --isolate",
        s->name, k->name, s->file, k->env.n ? k->env.line : s->env.line);
  }
  return ST_OK;
}

st_status st_run(const st_scene_set *set, const st_run_options *opts_in,
                 const st_observer *observers_in, size_t n_observers,
                 st_run_result **out, st_error *err) {
  st__runctx rc;
  st_registry *owned = NULL;
  st_case_ref *refs = NULL;
  unsigned *iters = NULL;
  size_t n = 0;
  st_run_result *run = NULL;
  st_run_options o;
  const st_run_options *opts = &o;
  st_observer *observers = NULL;
  st_status s;
  int saved_stdout;

  *out = NULL;
  /* The caller's options and observers are read by their sizes into
   * copies at this layout, once, here (observers stepped by their size
   * fields); the run sees only the copies. */
  if ((s = st__run_options_take(opts_in, &o, err)) != ST_OK ||
      (s = st__observers_take(observers_in, n_observers, &observers, err)) !=
          ST_OK)
    return s;
  s = run_setup(&rc, opts, &owned, err);
  if (s == ST_OK)
    s = select_order(set, opts, &refs, &iters, &n, err);
  if (s == ST_OK)
    s = env_check(&rc, opts, refs, n, err);
  rc.iters = iters;
  rc.repeat = opts->repeat > 1 ? opts->repeat : 1;
  if (s == ST_OK && (run = st__run_result_new(n)) == NULL)
    s = st_error_set(err, ST_ENOMEM, "out of memory");
  if (s == ST_OK) {
    prime_loadwatch();
    saved_stdout = stdout_to_stderr(opts);
    s = run_cases(&rc, refs, n, observers, n_observers, run, err);
    stdout_restore(saved_stdout);
  }
  free(refs);
  free(observers);
  free(iters);
  run_teardown(&rc, owned);
  if (s != ST_OK) {
    st_run_result_free(run);
    return s;
  }
  *out = run;
  return ST_OK;
}
