/* SPDX-License-Identifier: MIT */
/* The cost of supervision (issue 9): a 2,000-case suite of 64x64 float32
 * adds run supervised (one supervised child, -j 1) and in this process
 * (--no-supervise), alternated, REPS pairs, at the CLI's default log
 * level (TIMING: six phase lines a case, written to /dev/null;
 * supervised, they travel over the wire) and at WARNING (the scheduling
 * alone). It prints the best time of each side, the median of the pairs'
 * ratios supervised / in-process (target <= 1.05) and checks that every
 * case passed both ways with the same event sequence. Wall-clock time on
 * a shared machine moves with its load, so it also prints the ratio of
 * CPU time (user + system, of this process and its children).
 *
 * Given the scenetest program (argv[1]), it then measures the same suite
 * end to end as a user runs it: `scenetest run --format tap FILE` against
 * `scenetest run --no-supervise --format tap FILE`, each a fresh process,
 * standard output and error to /dev/null, REPS alternated pairs. */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
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
#define REPS 61

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

/* REPS pairs, alternated (which side goes first alternates too), so that
 * drift in what the shared machine gives us hits both alike: the best of
 * each side, and the median of the pairs' ratios (a pair ran under the
 * same load). */
static void measure(const st_scene_set *set, const char *level, int lv) {
  st_run_result *rs = NULL, *ri = NULL;
  double ts = 1e30, ti = 1e30, cs = 1e30, ci = 1e30, sup = 1e30;
  double wall_r[REPS], cpu_r[REPS];
  size_t i;
  st_log_set_level(lv);
  for (i = 0; i < REPS; i++) {
    double ca, cb, sa, sb, a, b;
    if (i % 2 == 0) {
      a = run_once(set, 0, &ri, &ca, &sa);
      b = run_once(set, 1, &rs, &cb, &sb);
    } else {
      b = run_once(set, 1, &rs, &cb, &sb);
      a = run_once(set, 0, &ri, &ca, &sa);
    }
    wall_r[i] = b / a;
    cpu_r[i] = cb / ca;
    bench_keep_min(&sup, sb);
    bench_keep_min(&ti, a);
    bench_keep_min(&ts, b);
    bench_keep_min(&ci, ca);
    bench_keep_min(&cs, cb);
  }
  printf("log level %s: wall in-process %.4f s, supervised %.4f s (best "
         "of each), ratio %.3f, median of pairs %.3f (target <= 1.05); "
         "CPU %.4f s vs %.4f s (the supervisor's own %.4f s), ratio %.3f, "
         "median of pairs %.3f; events identical: %s\n",
         level, ti, ts, ts / ti, bench_median(wall_r, REPS), ci, cs, sup,
         cs / ci, bench_median(cpu_r, REPS),
         same_events(ri, rs) ? "yes" : "NO");
  st_run_result_free(ri);
  st_run_result_free(rs);
}

extern char **environ;

/* One run of the program, its wall time; exit 3 unless it exited 0. */
static double spawn_once(char *const argv[], int devnull) {
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int status;
  double t0;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, devnull, 1);
  posix_spawn_file_actions_adddup2(&fa, devnull, 2);
  t0 = bench_now_s();
  if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0 ||
      waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fprintf(stderr, "bench_supervise: %s run failed\n", argv[0]);
    exit(3);
  }
  t0 = bench_now_s() - t0;
  posix_spawn_file_actions_destroy(&fa);
  return t0;
}

/* The CLI, end to end: supervised (the default) and --no-supervise. */
static void measure_cli(const char *prog, const char *file, const char *level,
                        int devnull) {
  char *sup[] = {(char *)prog, "run", "--log-level", (char *)level,
                 "--format",   "tap", (char *)file,  NULL};
  char *nos[] = {(char *)prog,  "run",         "--no-supervise",
                 "--log-level", (char *)level, "--format",
                 "tap",         (char *)file,  NULL};
  double ts = 1e30, ti = 1e30, r[REPS];
  size_t i;
  for (i = 0; i < REPS; i++) {
    double a, b;
    if (i % 2 == 0) {
      a = spawn_once(nos, devnull);
      b = spawn_once(sup, devnull);
    } else {
      b = spawn_once(sup, devnull);
      a = spawn_once(nos, devnull);
    }
    r[i] = b / a;
    bench_keep_min(&ti, a);
    bench_keep_min(&ts, b);
  }
  printf("end to end, log level %s: wall --no-supervise %.4f s, supervised "
         "%.4f s (best of each), ratio %.3f, median of pairs %.3f (target "
         "<= 1.05)\n",
         level, ti, ts, ts / ti, bench_median(r, REPS));
}

int main(int argc, char **argv) {
  st_scene_set *set;
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

  if (devnull < 0)
    return 3;
  /* As the CLI does (harness/case/args.h); the log lines go nowhere. */
  st__args_tune_allocator();
  st_log_set_fd(devnull);
  set = bench_add_suite("bench_supervise", "sv_add", "{uniform: [-1, 1]}",
                        N_CASES);
  printf("suite: %d float32 add cases 64x64 on cpu, -j 1, %d pairs, "
         "alternated\n",
         N_CASES, REPS);
  measure(set, "timing", ST_LOG_TIMING);
  measure(set, "warning", ST_LOG_WARNING);
  st_scene_set_free(set);
  if (argc > 1) {
    char file[] = "/tmp/bench_supervise.XXXXXX";
    size_t len;
    char *text = bench_add_text("sv_add", "{uniform: [-1, 1]}", N_CASES, &len);
    int fd = mkstemp(file);
    if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
      fprintf(stderr, "bench_supervise: cannot write %s\n", file);
      return 3;
    }
    close(fd);
    free(text);
    measure_cli(argv[1], file, "timing", devnull);
    measure_cli(argv[1], file, "warning", devnull);
    unlink(file);
  }
  close(devnull);
  return 0;
}
