/* SPDX-License-Identifier: MIT */
/* The cost of --isolate (issue 14): per case, a bare fork + wait whose
 * child writes a small result (256 bytes) into a memfd that the parent
 * reads back (the floor any fork-per-case design pays), against a
 * 2,000-case suite of 64x64 float32 adds run isolated and run plainly at
 * level 2 in this process, alternated, best of several repetitions. It
 * prints per-case microseconds and the ratios isolate / bare fork (target
 * <= 1.5) and isolate / plain (target <= 2), and checks that every case
 * passed. Wall-clock on a shared machine moves with its load; the CPU
 * ratio (this process and its children) is printed beside it. */
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

#define N_CASES 2000
#define REPS 5

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(void) {
  struct rusage a, b;
  getrusage(RUSAGE_SELF, &a);
  getrusage(RUSAGE_CHILDREN, &b);
  return (double)(a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec +
                  b.ru_stime.tv_sec) +
         (double)(a.ru_utime.tv_usec + a.ru_stime.tv_usec +
                  b.ru_utime.tv_usec + b.ru_stime.tv_usec) *
             1e-6;
}

/* N_CASES bare fork+wait, each child writing 256 bytes into a memfd. */
static double bare_forks(double *cpu) {
  char msg[256], back[256];
  memset(msg, 'r', sizeof msg);
  *cpu = cpu_s();
  double t0 = now_s();
  for (int i = 0; i < N_CASES; i++) {
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
  *cpu = cpu_s() - *cpu;
  return now_s() - t0;
}

static double run_once(const st_scene_set *set, int isolate, double *cpu) {
  st_run_options opts;
  st_run_result *res = NULL;
  st_error err;
  st_run_options_init(&opts);
  opts.isolate = isolate;
  st_error_clear(&err);
  *cpu = cpu_s();
  double t0 = now_s();
  if (st_run(set, &opts, NULL, 0, &res, &err) != ST_OK) {
    fprintf(stderr, "bench_isolate: run failed: %s\n", err.message);
    exit(3);
  }
  t0 = now_s() - t0;
  *cpu = cpu_s() - *cpu;
  if (st_run_result_exit_code(res) != 0 ||
      st_run_result_count(res) != N_CASES) {
    fprintf(stderr, "bench_isolate: a case did not pass\n");
    exit(3);
  }
  st_run_result_free(res);
  return t0;
}

int main(void) {
  size_t cap = 128 + (size_t)N_CASES * 48, used = 0, i;
  char *text = malloc(cap);
  st_scene_set *set = NULL;
  st_error_list errs;
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);

  if (text == NULL || devnull < 0)
    return 3;
  /* As the CLI does (harness/args.h); log lines go nowhere. */
  st__args_tune_allocator();
  st_log_set_fd(devnull);
  st_log_set_level(ST_LOG_WARNING);
  used += (size_t)snprintf(
      text + used, cap - used,
      "scene: iso_add\nkernel: add\nargs:\n"
      "  - {tensor: a, dtype: float32, shape: [64, 64], init: {uniform: "
      "[-1, 1]}}\n"
      "  - {tensor: b, dtype: float32, shape: [64, 64], init: {uniform: "
      "[-1, 1]}}\n"
      "  - {tensor: c, dtype: float32, shape: [64, 64], role: output}\n"
      "cases:\n");
  for (i = 0; i < N_CASES; i++)
    used += (size_t)snprintf(text + used, cap - used, "  - {name: c%zu}\n",
                             i);
  st_error_list_init(&errs);
  if (st_scene_set_new(&set) != ST_OK ||
      st_scene_set_load_string(set, "isolate.yaml", text, used, NULL,
                               &errs) != ST_OK) {
    fprintf(stderr, "bench_isolate: scene did not load\n");
    return 3;
  }
  st_error_list_free(&errs);
  double tb = 1e30, ti = 1e30, tp = 1e30, cb = 1e30, ci = 1e30, cp = 1e30;
  for (i = 0; i < REPS; i++) {
    double c1, c2, c3;
    double b = bare_forks(&c1);
    double s = run_once(set, 1, &c2);
    double p = run_once(set, 0, &c3);
    tb = b < tb ? b : tb;
    ti = s < ti ? s : ti;
    tp = p < tp ? p : tp;
    cb = c1 < cb ? c1 : cb;
    ci = c2 < ci ? c2 : ci;
    cp = c3 < cp ? c3 : cp;
  }
  const double us = 1e6 / N_CASES;
  printf("suite: %d float32 add cases 64x64 on cpu, -j 1, log level "
         "warning, best of %d, alternated\n",
         N_CASES, REPS);
  printf("bare fork+wait+memfd  %8.1f us/case (CPU %8.1f)\n", tb * us,
         cb * us);
  printf("--isolate             %8.1f us/case (CPU %8.1f)\n", ti * us,
         ci * us);
  printf("plain level 2         %8.1f us/case (CPU %8.1f)\n", tp * us,
         cp * us);
  printf("ratio isolate/bare-fork  %6.2fx wall, %6.2fx CPU (target <= 1.5)\n",
         ti / tb, ci / cb);
  printf("ratio isolate/plain      %6.2fx wall, %6.2fx CPU (target <= 2)\n",
         ti / tp, ci / cp);
  st_scene_set_free(set);
  free(text);
  close(devnull);
  return 0;
}
