/* SPDX-License-Identifier: MIT */
/* The level-3 and isolation benchmark:
 *   - per-round dispatch latency per worker count: one RUN command to every
 *     worker and every reply back, for a tiny add (so it is the protocol's
 *     cost, not the kernel's), median of many rounds;
 *   - pooled rehost bandwidth as a ratio to memcpy into a reused buffer
 *     (steady state: segments come from the pool, already faulted in), and
 *     the cold rate into fresh segments for contrast;
 *   - the cost --isolate adds per case (isolated minus in-process time per
 *     case) as a ratio to a bare fork + _exit + waitpid, the three measured
 *     in turn in each repetition (the same process state, the same load on
 *     the machine), with the page faults per case of each (getrusage: this
 *     process and its children), since faults are most of the cost.
 * Best or median of repetitions, as each row says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/scenetest.h>

#include "case/tbuf.h"
#include "case/level3/level3.h"
#include "case/level3/rehost.h"
#include "case/level3/workers.h"

#include "bench_util.h"

#define REHOST_BYTES ((size_t)64 << 20)
#define REPS 9
#define ROUNDS 2000
#define ISO_CASES 200
#define ISO_REPS 9

static void clobber(void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noreturn)) static void die(const char *what) {
  fprintf(stderr, "bench_level3: %s\n", what);
  exit(3);
}

/* A float32 add of n elements as an argset (a, b, out). */
static void make_add(st__argset *a, size_t n) {
  static const char *const names[] = {"a", "b", "out"};
  size_t i;
  memset(a, 0, sizeof *a);
  a->tensors = calloc(3, sizeof *a->tensors);
  if (a->tensors == NULL)
    die("out of memory");
  a->n_tensors = 3;
  for (i = 0; i < 3; i++) {
    st_tensor *t = &a->tensors[i];
    t->name = names[i];
    t->dtype = ST_DTYPE_FLOAT32;
    t->role = i == 2 ? ST_ROLE_OUTPUT : ST_ROLE_INPUT;
    t->ndim = 1;
    t->shape[0] = (int64_t)n;
    t->numel = n;
    t->nbytes = n * 4;
    /* From the tensor allocator: st__argset_free gives it back there. */
    t->data = st__tbuf_alloc(n * 4);
    if (t->data == NULL)
      die("out of memory");
    memset(t->data, 0, n * 4);
  }
}

static void dispatch_latency(st_registry *reg) {
  static const unsigned counts[] = {1, 2, 4, 8};
  size_t c;
  printf("# per-round dispatch latency (tiny add; median of %d rounds)\n",
         ROUNDS);
  for (c = 0; c < sizeof counts / sizeof counts[0]; c++) {
    st__wpool *wp = NULL;
    st__argset a;
    st__rehost rh;
    st__wcase wc;
    st__wresult wr;
    st_error err;
    double *t = malloc(ROUNDS * sizeof *t);
    unsigned r;
    st_error_clear(&err);
    if (t == NULL)
      die("out of memory");
    make_add(&a, 64);
    if (st__wpool_start(counts[c], reg, &wp, &err) != ST_OK)
      die(err.message);
    if (st__rehost_args(&a, &rh, &err) != ST_OK)
      die(err.message);
    memset(&wc, 0, sizeof wc);
    wc.op = "add";
    wc.backend = "cpu";
    wc.args = &a;
    wc.rh = &rh;
    wc.max_threads = 1;
    st__wpool_map(wp, &wc, 0, 0, &wr);
    if (wr.status != ST_OK)
      die(wr.message);
    st__wresult_free(&wr);
    for (r = 0; r < ROUNDS; r++) {
      double t0 = now_s();
      st__wpool_run(wp, r, 0, 0, &wr);
      t[r] = now_s() - t0;
      if (wr.status != ST_OK)
        die(wr.message);
      st__wresult_free(&wr);
    }
    qsort(t, ROUNDS, sizeof *t, bench_cmp_double);
    printf("dispatch workers=%u median_us=%.1f p90_us=%.1f\n", counts[c],
           t[ROUNDS / 2] * 1e6, t[ROUNDS * 9 / 10] * 1e6);
    st__wpool_stop(wp);
    st__rehost_release(&rh, &a);
    st__argset_free(&a);
    free(t);
  }
}

static void rehost_bandwidth(void) {
  st__argset a;
  st__rehost rh;
  st_error err;
  unsigned char *dst = aligned_alloc(4096, REHOST_BYTES);
  double best_copy = 1e9, best_pooled = 1e9, best_cold = 1e9;
  int i;
  if (dst == NULL)
    die("out of memory");
  memset(dst, 0x5a, REHOST_BYTES);
  make_add(&a, REHOST_BYTES / 4);
  /* One tensor of REHOST_BYTES: keep a, drop b and out. */
  a.n_tensors = 1;
  memset(a.tensors[0].data, 0x33, REHOST_BYTES);
  for (i = 0; i < REPS; i++) {
    double t0 = now_s();
    memcpy(dst, a.tensors[0].data, REHOST_BYTES);
    clobber(dst);
    t0 = now_s() - t0;
    if (t0 < best_copy)
      best_copy = t0;
  }
  st_error_clear(&err);
  for (i = 0; i < REPS + 1; i++) {
    double t0 = now_s();
    if (st__rehost_args(&a, &rh, &err) != ST_OK)
      die(err.message);
    t0 = now_s() - t0;
    st__rehost_release(&rh, &a);   /* before commit: a rollback */
    if (i > 0 && t0 < best_pooled) /* the first pass creates the segment */
      best_pooled = t0;
  }
  for (i = 0; i < 3; i++) {
    double t0;
    st__seg_pool_drain();
    t0 = now_s();
    if (st__rehost_args(&a, &rh, &err) != ST_OK)
      die(err.message);
    t0 = now_s() - t0;
    st__rehost_release(&rh, &a);
    if (t0 < best_cold)
      best_cold = t0;
  }
  st__seg_pool_drain();
  printf("# rehost of one %zu MiB tensor (best of %d)\n", REHOST_BYTES >> 20,
         REPS);
  printf("memcpy GB/s=%.2f\n", REHOST_BYTES / best_copy * 1e-9);
  printf("rehost_pooled GB/s=%.2f ratio_to_memcpy=%.2f (target >= 0.7)\n",
         REHOST_BYTES / best_pooled * 1e-9, best_copy / best_pooled);
  printf("rehost_cold GB/s=%.2f ratio_to_memcpy=%.2f (fresh segments)\n",
         REHOST_BYTES / best_cold * 1e-9, best_copy / best_cold);
  a.n_tensors = 3;
  st__argset_free(&a);
  free(dst);
}

/* Minor page faults so far of this process and its reaped children. */
static long faults_now(void) {
  struct rusage self, kids;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &kids);
  return self.ru_minflt + kids.ru_minflt;
}

static double run_cases(const st_scene_set *set, st_registry *reg,
                        int isolate) {
  st_run_options opts;
  st_run_result *run = NULL;
  st_error err;
  double t0;
  st_run_options_init(&opts);
  opts.registry = reg;
  opts.isolate = isolate;
  st_error_clear(&err);
  t0 = now_s();
  if (st_run(set, &opts, NULL, 0, &run, &err) != ST_OK)
    die(err.message);
  t0 = now_s() - t0;
  if (st_run_result_exit_code(run) != 0)
    die("a benchmark case failed");
  st_run_result_free(run);
  return t0 / ISO_CASES;
}

static void isolate_cost(st_registry *reg) {
  static char text[(size_t)ISO_CASES * 64 + 512];
  size_t used;
  int i;
  st_scene_set *set = NULL;
  st_error_list errs;
  double best_fork = 1e9, best_iso = 1e9, best_in = 1e9;
  double ratio[ISO_REPS];
  long flt_fork = 0, flt_iso = 0, f0;
  used = (size_t)snprintf(text, sizeof text,
                          "scene: iso\nkernel: add\nargs:\n"
                          "  - {tensor: a, dtype: float32, shape: [64], "
                          "init: ones}\n"
                          "  - {tensor: b, dtype: float32, shape: [64], "
                          "init: ones}\n"
                          "  - {tensor: out, dtype: float32, shape: [64], "
                          "role: output}\ncases:\n");
  for (i = 0; i < ISO_CASES; i++)
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "  - {name: c%d}\n", i);
  st_error_list_init(&errs);
  if (st_scene_set_new(&set) != ST_OK ||
      st_scene_set_load_string(set, "iso.yaml", text, used, NULL, &errs) !=
          ST_OK)
    die("cannot load the isolation scene");
  st_error_list_free(&errs);
  (void)run_cases(set, reg, 1); /* warm-up: lazy state, allocator */
  for (i = 0; i < ISO_REPS; i++) {
    double t0, a, b;
    int k;
    f0 = faults_now();
    t0 = now_s();
    for (k = 0; k < ISO_CASES; k++) {
      int status;
      pid_t pid = fork();
      if (pid == 0)
        _exit(0);
      if (pid < 0 || waitpid(pid, &status, 0) != pid)
        die("fork");
    }
    t0 = (now_s() - t0) / ISO_CASES;
    flt_fork += faults_now() - f0;
    a = run_cases(set, reg, 0);
    f0 = faults_now();
    b = run_cases(set, reg, 1);
    flt_iso += faults_now() - f0;
    ratio[i] = (b - a) / t0;
    if (t0 < best_fork)
      best_fork = t0;
    if (a < best_in)
      best_in = a;
    if (b < best_iso)
      best_iso = b;
  }
  qsort(ratio, ISO_REPS, sizeof *ratio, bench_cmp_double);
  printf("# --isolate per case (%d cases of a 64-element add; fork_wait, "
         "in_process and isolated in turn, best of %d)\n",
         ISO_CASES, ISO_REPS);
  printf("fork_wait us=%.1f page_faults=%.1f\n", best_fork * 1e6,
         (double)flt_fork / (ISO_REPS * ISO_CASES));
  printf("in_process us=%.1f\n", best_in * 1e6);
  printf("isolated us=%.1f page_faults=%.1f\n", best_iso * 1e6,
         (double)flt_iso / (ISO_REPS * ISO_CASES));
  printf("isolate_cost us=%.1f ratio_to_fork_wait=%.2f (target <= 1.5) "
         "median_of_rounds=%.2f\n",
         (best_iso - best_in) * 1e6, (best_iso - best_in) / best_fork,
         ratio[ISO_REPS / 2]);
  st_scene_set_free(set);
}

int main(void) {
  st_registry *reg = NULL;
  st_log_set_level(ST_LOG_WARNING);
  if (st_registry_new_builtin(&reg) != ST_OK)
    die("cannot make the registry");
  dispatch_latency(reg);
  rehost_bandwidth();
  isolate_cost(reg);
  st__level3_shutdown();
  st_registry_free(reg);
  return 0;
}
