/* SPDX-License-Identifier: MIT */
/* The loader watch's cost per case (issue 14: with libtorch's ~287
 * objects loaded, observation <= 1 us a case). It times
 * st__loadwatch_poll (the look after every phase) with what this process
 * loads on its own, then again with 300 more objects loaded (copies of a
 * test fixture, as tests/base/test_loadwatch.c does), and counts the looks a
 * case takes by running a 200-case suite of 64x64 float32 adds in this
 * process. It prints ns per look at both sizes, their ratio (the cost
 * should not depend on what is loaded), and the per-case cost with 300
 * objects loaded against the 1 us target. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "base/loadwatch.h"

#include "bench_util.h"

#define N_DUMMIES 300
#define N_LOOKS 1000000
#define N_CASES 200
#define REPS 5

/* Best of REPS: ns per look that finds nothing new. */
static double ns_per_look(void) {
  double best = 1e30;
  for (int r = 0; r < REPS; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < N_LOOKS; i++) {
      char **list = NULL;
      size_t n = 0;
      if (st__loadwatch_poll(&list, &n) != ST_OK || n != 0) {
        fprintf(stderr, "bench_loadwatch: a look found something\n");
        exit(3);
      }
    }
    bench_keep_min(&best, (bench_now_s() - t0) * 1e9 / N_LOOKS);
  }
  return best;
}

static int copy_file(const char *from /* IN */, const char *to /* IN */) {
  int in = open(from, O_RDONLY | O_CLOEXEC);
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  char buf[65536];
  ssize_t k;
  int ok = in >= 0 && out >= 0;
  while (ok && (k = read(in, buf, sizeof buf)) > 0)
    ok = write(out, buf, (size_t)k) == k;
  if (in >= 0)
    close(in);
  if (out >= 0)
    close(out);
  return ok;
}

/* Looks per case: what a 200-case in-process run asks of the watch. */
static double looks_per_case(void) {
  st_scene_set *set =
      bench_add_suite("bench_loadwatch", "lw_add", "ones", N_CASES);
  st_run_options opts;
  st_run_result *res = NULL;
  st_error err;
  st__loadwatch_stats a, b;
  st_run_options_init(&opts);
  opts.supervise = 0;
  st_error_clear(&err);
  st__loadwatch_get_stats(&a);
  if (st_run(set, &opts, NULL, 0, &res, &err) != ST_OK ||
      st_run_result_exit_code(res) != 0) {
    fprintf(stderr, "bench_loadwatch: run failed\n");
    exit(3);
  }
  st__loadwatch_get_stats(&b);
  st_run_result_free(res);
  st_scene_set_free(set);
  return (double)(b.polls - a.polls) / N_CASES;
}

int main(void) {
  char dir[64], path[128];
  void *handles[N_DUMMIES];
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  char **list = NULL;
  size_t n = 0;
  double base, many, per_case;

  if (devnull >= 0)
    st_log_set_fd(devnull);
  st_log_set_level(ST_LOG_WARNING);
  snprintf(dir, sizeof dir, "/tmp/st_bench_lw.XXXXXX");
  if (mkdtemp(dir) == NULL)
    return 3;
  if (st__loadwatch_poll(&list, &n) != ST_OK) /* primes the watch */
    return 3;
  st__loadwatch_free(list, n);
  per_case = looks_per_case();
  base = ns_per_look();
  for (int i = 0; i < N_DUMMIES; i++) {
    snprintf(path, sizeof path, "%s/dummy%03d.so", dir, i);
    if (!copy_file(ST_FIXTURE_GOLDEN, path) ||
        (handles[i] = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
      fprintf(stderr, "bench_loadwatch: cannot load %s\n", path);
      return 3;
    }
    unlink(path);
  }
  if (st__loadwatch_poll(&list, &n) != ST_OK || n != N_DUMMIES) {
    fprintf(stderr, "bench_loadwatch: %zu new objects, want %d\n", n,
            N_DUMMIES);
    return 3;
  }
  st__loadwatch_free(list, n);
  many = ns_per_look();
  printf("looks per case (64x64 add, in process): %.1f\n", per_case);
  printf("look, own objects only      %8.1f ns\n", base);
  printf("look, %d more loaded       %8.1f ns\n", N_DUMMIES, many);
  printf("ratio %d-loaded/own          %6.2fx (the cost should not grow)\n",
         N_DUMMIES, many / base);
  printf("per case, %d more loaded   %8.3f us (target <= 1 us)\n", N_DUMMIES,
         many * per_case / 1000.0);
  for (int i = 0; i < N_DUMMIES; i++)
    dlclose(handles[i]);
  rmdir(dir);
  if (devnull >= 0)
    close(devnull);
  return 0;
}
