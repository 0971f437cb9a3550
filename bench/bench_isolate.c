/* SPDX-License-Identifier: MIT */
/* The cost of --isolate (issue 14): per case, a bare fork + wait whose
 * child writes a small result (256 bytes) into a memfd that the parent
 * reads back (the floor any fork-per-case design pays), against a
 * 2,000-case suite of 64x64 float32 adds run isolated and run plainly at
 * level 2 in this process, alternated, best of several repetitions. It
 * prints per-case microseconds and the ratios isolate / bare fork (target
 * <= 1.5) and isolate / plain (target <= 2), and checks that every case
 * passed. Wall-clock on a shared machine moves with its load; the CPU
 * ratio (this process and its children) is printed beside it.
 *
 * Then the fork server (run/zygote.h): the same suite with it forced from
 * the first case, against the default (which starts it only past 8 MiB);
 * and with a 96 MiB ballast in this process, as a harness that has
 * gathered many results or loaded libtorch holds, --isolate with the
 * server (the default there) against without, and a bare fork of that
 * process, as ratios. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "case/args.h"
#include "run/sched.h"

#include "bench_util.h"

#define N_CASES 2000
#define REPS 5
#define BIG_CASES 1200
#define BIG_REPS 3
#define BALLAST ((size_t)96 << 20)


/* n bare fork+wait, each child writing 256 bytes into a memfd. */
static double bare_forks(int n, double *cpu) {
  char msg[256], back[256];
  memset(msg, 'r', sizeof msg);
  *cpu = bench_cpu_s();
  double t0 = bench_now_s();
  for (int i = 0; i < n; i++) {
    int fd = memfd_create("bench-result", MFD_CLOEXEC);
    if (fd < 0)
      exit(3);
    pid_t pid = fork();
    if (pid < 0)
      exit(3);
    if (pid == 0) {
      ssize_t w = pwrite(fd, msg, sizeof msg, 0);
      _exit(w == (ssize_t)sizeof msg ? 0 : 1);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0 ||
        pread(fd, back, sizeof back, 0) != (ssize_t)sizeof back)
      exit(3);
    close(fd);
  }
  *cpu = bench_cpu_s() - *cpu;
  return bench_now_s() - t0;
}

static double run_once(const st_scene_set *set, size_t n, int isolate,
                       double *cpu) {
  st_run_options opts;
  st_run_result *res = NULL;
  st_error err;
  st_run_options_init(&opts);
  opts.isolate = isolate;
  st_error_clear(&err);
  *cpu = bench_cpu_s();
  double t0 = bench_now_s();
  if (st_run(set, &opts, NULL, 0, &res, &err) != ST_OK) {
    fprintf(stderr, "bench_isolate: run failed: %s\n", err.message);
    exit(3);
  }
  t0 = bench_now_s() - t0;
  *cpu = bench_cpu_s() - *cpu;
  if (st_run_result_exit_code(res) != 0 ||
      st_run_result_count(res) != n) {
    fprintf(stderr, "bench_isolate: a case did not pass\n");
    exit(3);
  }
  st_run_result_free(res);
  return t0;
}

int main(void) {
  size_t i;
  st_scene_set *set;
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

  if (devnull < 0)
    return 3;
  /* As the CLI does (harness/args.h); log lines go nowhere. */
  st__args_tune_allocator();
  st_log_set_fd(devnull);
  st_log_set_level(ST_LOG_WARNING);
  set = bench_add_suite("bench_isolate", "iso_add", "{uniform: [-1, 1]}",
                        N_CASES);
  double tb = 1e30, ti = 1e30, tp = 1e30, tz = 1e30, cb = 1e30, ci = 1e30,
         cp = 1e30, cz = 1e30;
  for (i = 0; i < REPS; i++) {
    double c1, c2, c3, c4;
    double b = bare_forks(N_CASES, &c1);
    double s = run_once(set, N_CASES, 1, &c2);
    double p = run_once(set, N_CASES, 0, &c3);
    double z;
    size_t was = st__isolate_set_zygote_min(0);
    z = run_once(set, N_CASES, 1, &c4);
    if (st__isolate_spares_used() == 0) {
      fprintf(stderr, "bench_isolate: the fork server was not used\n");
      exit(3);
    }
    st__isolate_set_zygote_min(was);
    bench_keep_min(&tb, b);
    bench_keep_min(&ti, s);
    bench_keep_min(&tp, p);
    bench_keep_min(&tz, z);
    bench_keep_min(&cb, c1);
    bench_keep_min(&ci, c2);
    bench_keep_min(&cp, c3);
    bench_keep_min(&cz, c4);
  }
  const double us = 1e6 / N_CASES;
  printf("suite: %d float32 add cases 64x64 on cpu, -j 1, log level "
         "warning, best of %d, alternated\n",
         N_CASES, REPS);
  printf("bare fork+wait+memfd  %8.1f us/case (CPU %8.1f)\n", tb * us,
         cb * us);
  printf("--isolate             %8.1f us/case (CPU %8.1f)\n", ti * us,
         ci * us);
  printf("--isolate, zygote     %8.1f us/case (CPU %8.1f)\n", tz * us,
         cz * us);
  printf("plain level 2         %8.1f us/case (CPU %8.1f)\n", tp * us,
         cp * us);
  printf("ratio isolate/bare-fork  %6.2fx wall, %6.2fx CPU (target <= 1.5)\n",
         ti / tb, ci / cb);
  printf("ratio isolate/plain      %6.2fx wall, %6.2fx CPU (target <= 2)\n",
         ti / tp, ci / cp);
  printf("ratio zygote/default     %6.2fx wall, %6.2fx CPU (a small "
         "harness: the default forks itself)\n",
         tz / ti, cz / ci);

  /* A big harness: the ballast is written, so it is resident and private,
   * as results or libtorch's heap are. */
  char *ballast = malloc(BALLAST);
  if (ballast == NULL)
    return 3;
  memset(ballast, 1, BALLAST);
  st_scene_set *big = bench_add_suite("bench_isolate", "iso_big",
                                      "{uniform: [-1, 1]}", BIG_CASES);
  size_t big_used = 0;
  tb = tz = ti = cb = cz = ci = 1e30;
  for (i = 0; i < BIG_REPS; i++) {
    double c1, c2, c3;
    double b = bare_forks(BIG_CASES, &c1);
    double z = run_once(big, BIG_CASES, 1, &c2);
    size_t used = st__isolate_spares_used();
    big_used = used;
    double d;
    size_t was = st__isolate_set_zygote_min(SIZE_MAX);
    d = run_once(big, BIG_CASES, 1, &c3);
    st__isolate_set_zygote_min(was);
    if (used == 0) {
      fprintf(stderr, "bench_isolate: the fork server was not used\n");
      exit(3);
    }
    bench_keep_min(&tb, b);
    bench_keep_min(&tz, z);
    bench_keep_min(&ti, d);
    bench_keep_min(&cb, c1);
    bench_keep_min(&cz, c2);
    bench_keep_min(&ci, c3);
  }
  const double bus = 1e6 / BIG_CASES;
  printf("with %zu MiB more in this process: %d cases, best of %d, "
         "alternated\n",
         BALLAST >> 20, BIG_CASES, BIG_REPS);
  printf("bare fork+wait+memfd  %8.1f us/case (CPU %8.1f)\n", tb * bus,
         cb * bus);
  printf("--isolate, zygote     %8.1f us/case (CPU %8.1f)\n", tz * bus,
         cz * bus);
  printf("--isolate, no zygote  %8.1f us/case (CPU %8.1f)\n", ti * bus,
         ci * bus);
  printf("children from the zygote: %zu of %d in the last run\n",
         big_used, BIG_CASES);
  printf("ratio zygote/no-zygote   %6.2fx wall, %6.2fx CPU\n", tz / ti,
         cz / ci);
  printf("ratio zygote/bare-fork   %6.2fx wall, %6.2fx CPU\n", tz / tb,
         cz / cb);
  st_scene_set_free(big);
  free(ballast);
  st_scene_set_free(set);
  close(devnull);
  return 0;
}
