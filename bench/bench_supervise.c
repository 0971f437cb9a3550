/* SPDX-License-Identifier: MIT */
/* The cost of supervision (issue 9): a 2,000-case suite of 64x64 float32
 * adds run supervised (one supervised child, -j 1) and in this process
 * (--no-supervise), alternated, best of several repetitions each, at the
 * CLI's default log level (TIMING: six phase lines a case, written to
 * /dev/null; supervised, they travel over the wire) and at WARNING (the
 * scheduling alone). It prints the times and the ratios supervised /
 * in-process (target <= 1.05) and checks that every case passed both
 * ways with the same event sequence. Wall-clock time on a shared machine
 * moves with its load, so it also prints the ratio of CPU time (user +
 * system, of this process and its children), which does not. */
#include <fcntl.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "case/args.h"

#include "bench_util.h"

#define N_CASES 2000
#define REPS 5

static double run_once(const st_scene_set *set, int supervise,
                       st_run_result **keep, double *cpu, double *self) {
  st_run_options opts;
  st_run_result *res = NULL;
  st_error err;
  double t0, c0;
  st_run_options_init(&opts);
  opts.supervise = supervise;
  st_error_clear(&err);
  *self = bench_self_s();
  c0 = bench_children_s();
  t0 = bench_now_s();
  if (st_run(set, &opts, NULL, 0, &res, &err) != ST_OK) {
    fprintf(stderr, "bench_supervise: run failed: %s\n", err.message);
    exit(3);
  }
  t0 = bench_now_s() - t0;
  *self = bench_self_s() - *self;
  *cpu = *self + bench_children_s() - c0;
  if (st_run_result_exit_code(res) != 0 ||
      st_run_result_count(res) != N_CASES) {
    fprintf(stderr, "bench_supervise: a case did not pass\n");
    exit(3);
  }
  st_run_result_free(*keep);
  *keep = res;
  return t0;
}

static int same_events(const st_run_result *a, const st_run_result *b) {
  size_t i, j;
  for (i = 0; i < st_run_result_count(a); i++) {
    const st_case_result *x = st_run_result_get(a, i);
    const st_case_result *y = st_run_result_get(b, i);
    if (st_case_result_event_count(x) != st_case_result_event_count(y))
      return 0;
    for (j = 0; j < st_case_result_event_count(x); j++)
      if (strcmp(st_case_result_event(x, j)->name,
                 st_case_result_event(y, j)->name) != 0)
        return 0;
  }
  return 1;
}

/* Best of REPS, alternated, so that drift in what the shared machine
 * gives us hits both alike. */
static void measure(const st_scene_set *set, const char *level, int lv) {
  st_run_result *rs = NULL, *ri = NULL;
  double ts = 1e30, ti = 1e30, cs = 1e30, ci = 1e30, sup = 1e30;
  size_t i;
  st_log_set_level(lv);
  for (i = 0; i < REPS; i++) {
    double ca, cb, sa, sb;
    double a = run_once(set, 0, &ri, &ca, &sa);
    double b = run_once(set, 1, &rs, &cb, &sb);
    bench_keep_min(&sup, sb);
    bench_keep_min(&ti, a);
    bench_keep_min(&ts, b);
    bench_keep_min(&ci, ca);
    bench_keep_min(&cs, cb);
  }
  printf("log level %s: wall in-process %.3f s, supervised %.3f s, ratio "
         "%.3f (target <= 1.05); CPU %.3f s vs %.3f s (the supervisor's "
         "own %.3f s), ratio %.3f; events identical: %s\n",
         level, ti, ts, ts / ti, ci, cs, sup, cs / ci,
         same_events(ri, rs) ? "yes" : "NO");
  st_run_result_free(ri);
  st_run_result_free(rs);
}

int main(void) {
  st_scene_set *set;
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

  if (devnull < 0)
    return 3;
  /* As the CLI does (harness/args.h); the log lines go nowhere. */
  st__args_tune_allocator();
  st_log_set_fd(devnull);
  set = bench_add_suite("bench_supervise", "sv_add", "{uniform: [-1, 1]}",
                        N_CASES);
  printf("suite: %d float32 add cases 64x64 on cpu, -j 1, best of %d, "
         "alternated\n",
         N_CASES, REPS);
  measure(set, "timing", ST_LOG_TIMING);
  measure(set, "warning", ST_LOG_WARNING);
  st_scene_set_free(set);
  close(devnull);
  return 0;
}
