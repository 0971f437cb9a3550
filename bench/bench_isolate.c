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
  if (st_run_result_exit_code(res) != 0 || st_run_result_count(res) != n) {
    fprintf(stderr, "bench_isolate: a case did not pass\n");
    exit(3);
  }
  st_run_result_free(res);
  return t0;
}

/* The best wall and CPU seconds of a few runs of one thing. */
typedef struct best {
  double wall, cpu;
} best;

static void keep(best *b, double wall, double cpu) {
  bench_keep_min(&b->wall, wall);
  bench_keep_min(&b->cpu, cpu);
}

static void print_best(const char *what, const best *b, int n) {
  printf("%-21s %8.1f us/case (CPU %8.1f)\n", what, b->wall * 1e6 / n,
         b->cpu * 1e6 / n);
}

static void print_ratio(const char *what, const best *a, const best *b,
                        const char *note) {
  printf("ratio %-18s %6.2fx wall, %6.2fx CPU%s\n", what, a->wall / b->wall,
         a->cpu / b->cpu, note);
}

/* An isolated run with the zygote's threshold at min (put back after);
 * *used: the children it took from the zygote. */
static double run_zygote(const st_scene_set *set, size_t n, size_t min,
                         double *cpu, size_t *used) {
  size_t was = st__isolate_set_zygote_min(min);
  double t = run_once(set, n, 1, cpu);
  st__isolate_set_zygote_min(was);
  *used = st__isolate_spares_used();
  return t;
}

static void need_spares(size_t used) {
  if (used == 0) {
    fprintf(stderr, "bench_isolate: the fork server was not used\n");
    exit(3);
  }
}

int main(void) {
  size_t i, used;
  st_scene_set *set;
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  const best none = {1e30, 1e30};
  best bare = none, iso = none, plain = none, zyg = none;

  if (devnull < 0)
    return 3;
  /* As the CLI does (harness/case/args.h); log lines go nowhere. */
  st__args_tune_allocator();
  st_log_set_fd(devnull);
  st_log_set_level(ST_LOG_WARNING);
  set = bench_add_suite("bench_isolate", "iso_add", "{uniform: [-1, 1]}",
                        N_CASES);
  for (i = 0; i < REPS; i++) {
    double c1, c2, c3, c4;
    double b = bare_forks(N_CASES, &c1);
    double s = run_once(set, N_CASES, 1, &c2);
    double p = run_once(set, N_CASES, 0, &c3);
    double z = run_zygote(set, N_CASES, 0, &c4, &used);
    need_spares(used);
    keep(&bare, b, c1);
    keep(&iso, s, c2);
    keep(&plain, p, c3);
    keep(&zyg, z, c4);
  }
  printf("suite: %d float32 add cases 64x64 on cpu, -j 1, log level "
         "warning, best of %d, alternated\n",
         N_CASES, REPS);
  print_best("bare fork+wait+memfd", &bare, N_CASES);
  print_best("--isolate", &iso, N_CASES);
  print_best("--isolate, zygote", &zyg, N_CASES);
  print_best("plain level 2", &plain, N_CASES);
  print_ratio("isolate/bare-fork", &iso, &bare, " (target <= 1.5)");
  print_ratio("isolate/plain", &iso, &plain, " (target <= 2)");
  print_ratio("zygote/default", &zyg, &iso,
              " (a small harness: the default forks itself)");

  /* A big harness: the ballast is written, so it is resident and private,
   * as results or libtorch's heap are. */
  char *ballast = malloc(BALLAST);
  if (ballast == NULL)
    return 3;
  memset(ballast, 1, BALLAST);
  st_scene_set *big = bench_add_suite("bench_isolate", "iso_big",
                                      "{uniform: [-1, 1]}", BIG_CASES);
  bare = iso = zyg = none;
  for (i = 0; i < BIG_REPS; i++) {
    double c1, c2, c3;
    size_t none_used;
    double b = bare_forks(BIG_CASES, &c1);
    /* The default threshold (8 MiB), then none. */
    double z = run_zygote(big, BIG_CASES, (size_t)8 << 20, &c2, &used);
    double d = run_zygote(big, BIG_CASES, SIZE_MAX, &c3, &none_used);
    if (none_used != 0) {
      fprintf(stderr, "bench_isolate: the fork server was used\n");
      exit(3);
    }
    need_spares(used);
    keep(&bare, b, c1);
    keep(&zyg, z, c2);
    keep(&iso, d, c3);
  }
  printf("with %zu MiB more in this process: %d cases, best of %d, "
         "alternated\n",
         BALLAST >> 20, BIG_CASES, BIG_REPS);
  print_best("bare fork+wait+memfd", &bare, BIG_CASES);
  print_best("--isolate, zygote", &zyg, BIG_CASES);
  print_best("--isolate, no zygote", &iso, BIG_CASES);
  printf("children from the zygote: %zu of %d in the last run\n", used,
         BIG_CASES);
  print_ratio("zygote/no-zygote", &zyg, &iso, "");
  print_ratio("zygote/bare-fork", &zyg, &bare, "");
  st_scene_set_free(big);
  free(ballast);
  st_scene_set_free(set);
  close(devnull);
  return 0;
}
