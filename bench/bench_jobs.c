/* SPDX-License-Identifier: MIT */
/* The -j benchmark: one CPU-bound suite (float32 matmul cases on the cpu
 * platform, golden capped at one thread so that only case-level
 * parallelism is measured) run with -j 1 and with -j 2 in the same
 * process, best of several repetitions each. It prints both times and the
 * speed-up -j1 / -j2 (target >= 1.8 on 2 cores), and checks that both runs
 * passed with identical event sequences. A second suite is the same
 * matmul cases with `skip_golden: true` (a kernel-only suite: args and
 * run, no golden, no compare; docs/api.md#results-and-events), whose cost is
 * the single-threaded kernel, run with the CLI's default options: there nothing
 * of a -j 1 run is parallel already, which is what a -j 2 speed-up needs to
 * reach 2x (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <scenetest/scenetest.h>

#include "case/args.h"

#include "bench_util.h"

#define N_CASES 16
#define REPS 15

static double run_once(const st_scene_set *set, unsigned jobs,
                       unsigned golden_threads, int supervise,
                       st_run_result **keep) {
  st_run_options opts;
  st_run_result *res = NULL;
  st_error err;
  double t0;
  st_run_options_init(&opts);
  opts.jobs = jobs;
  opts.golden_threads = golden_threads;
  opts.supervise = supervise;
  st_error_clear(&err);
  t0 = bench_now_s();
  if (st_run(set, &opts, NULL, 0, &res, &err) != ST_OK) {
    fprintf(stderr, "bench_jobs: run failed: %s\n", err.message);
    exit(3);
  }
  t0 = bench_now_s() - t0;
  if (st_run_result_exit_code(res) != 0) {
    fprintf(stderr, "bench_jobs: a case did not pass\n");
    exit(3);
  }
  st_run_result_free(*keep);
  *keep = res;
  return t0;
}

static int same_events(const st_run_result *a, const st_run_result *b) {
  size_t i, j;
  if (st_run_result_count(a) != st_run_result_count(b))
    return 0;
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

static st_scene_set *load_suite(const char *name, int skip_golden) {
  char text[8192];
  size_t used = 0, i;
  st_scene_set *set;
  used += (size_t)snprintf(
      text + used, sizeof text - used,
      "scene: %s\nkernel: matmul\nrtol: 1.0e-4\natol: 1.0e-4\n%s"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [M, K], init: {uniform: [-1, "
      "1]}}\n"
      "  - {tensor: b, dtype: float32, shape: [K, N], init: {uniform: [-1, "
      "1]}}\n"
      "  - {tensor: c, dtype: float32, shape: [M, N], role: output}\n"
      "cases:\n",
      name, skip_golden ? "skip_golden: true\n" : "");
  for (i = 0; i < N_CASES; i++)
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "  - {name: c%zu, params: {M: 256, K: 256, N: "
                             "256}}\n",
                             i);
  set = bench_load("bench_jobs", "jobs.yaml", text, used);
  return set;
}

int main(void) {
  size_t i;
  st_run_result *r1 = NULL, *r2 = NULL, *k1 = NULL, *k2 = NULL;
  double t1, t2;

  /* As the CLI does (harness/case/args.h). */
  st__args_tune_allocator();
  st_log_set_level(ST_LOG_WARNING);
  st_scene_set *set = load_suite("jobs_matmul", 0);
  st_scene_set *kset = load_suite("jobs_kernel", 1);
  /* Alternated, best of REPS each, so that drift in what the shared
   * machine gives us hits both alike. */
  double d1 = 1e30, d2 = 1e30, s1 = 1e30, s2 = 1e30, g1 = 1e30, g2 = 1e30;
  t1 = t2 = 1e30;
  for (i = 0; i < REPS; i++) {
    double a = run_once(set, 1, 1, 0, &r1);
    double b = run_once(set, 2, 1, 0, &r2);
    /* The CLI's default options: supervised (-j N is N supervised
     * children), --golden-threads unset, so the golden gets
     * max(1, min(8, cores / jobs)) threads (docs/cli.md#options). */
    double c = run_once(set, 1, 0, 1, &r1);
    double d = run_once(set, 2, 0, 1, &r2);
    /* Supervised with the golden at one thread: what supervision costs
     * the speed-up, apart from the golden's threads. */
    double e = run_once(set, 1, 1, 1, &r1);
    double f = run_once(set, 2, 1, 1, &r2);
    /* The kernel-only suite, default options. */
    double g = run_once(kset, 1, 0, 1, &k1);
    double h = run_once(kset, 2, 0, 1, &k2);
    if (e < s1)
      s1 = e;
    if (f < s2)
      s2 = f;
    if (a < t1)
      t1 = a;
    if (b < t2)
      t2 = b;
    if (c < d1)
      d1 = c;
    if (d < d2)
      d2 = d;
    if (g < g1)
      g1 = g;
    if (h < g2)
      g2 = h;
  }
  printf("suite: %d float32 matmul cases 256x256x256 on cpu, golden 1 "
         "thread, in process (-j 2: threads), best of %d\n",
         N_CASES, REPS);
  printf("-j 1: %.3f s\n-j 2: %.3f s\n", t1, t2);
  printf("speed-up -j1/-j2: %.2fx (target >= 1.8x on 2 cores)\n", t1 / t2);
  printf("default options (supervised: -j 2 is two supervised children; "
         "golden threads max(1, min(8, cores / jobs))):\n"
         "-j 1: %.3f s\n-j 2: %.3f s\n",
         d1, d2);
  printf("speed-up -j1/-j2 default options: %.2fx (target >= 1.8x on 2 "
         "cores)\n",
         d1 / d2);
  printf("supervised, golden 1 thread:\n-j 1: %.3f s\n-j 2: %.3f s\n"
         "speed-up -j1/-j2 supervised, golden 1 thread: %.2fx\n",
         s1, s2, s1 / s2);
  printf("kernel-only suite (the same cases, skip_golden: true), default "
         "options:\n-j 1: %.3f s\n-j 2: %.3f s\n"
         "speed-up -j1/-j2 kernel-only, default options: %.2fx (target >= "
         "1.8x on 2 cores)\n",
         g1, g2, g1 / g2);
  const int same = same_events(r1, r2) && same_events(k1, k2);
  printf("events identical: %s\n", same ? "yes" : "NO");
  st_run_result_free(r1);
  st_run_result_free(r2);
  st_run_result_free(k1);
  st_run_result_free(k2);
  st_scene_set_free(set);
  st_scene_set_free(kset);
  return same ? 0 : 1;
}
