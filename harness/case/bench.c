/* SPDX-License-Identifier: MIT */
/* The bench executor (bench.h; docs/bench.md): for a level-2 case, the
 * shared steps of case.h (args, golden, record), one checked round (run,
 * compare), warm-up rounds for a time, then timed rounds within the
 * config's bounds; each timed round's reset and cache flush happen before
 * its clock starts. What it measured goes on the case's result, which
 * carries it to the process that prints the table (a supervised child's
 * result crosses the wire with it, case/wire.c). */
#include <stdlib.h>
#include <string.h>

#include "base/llc.h"
#include "base/util.h"
#include "case/bench.h"
#include "case/case.h"
#include "case/exec.h"
#include "case/phase.h"
#include "case/result.h"
#include "ops/ceiling.h"
#include "ops/work.h"

/* Set before st_run and only read after: a forked child reads its copy. */
static struct {
  int active;
  st__bench_config cfg;
  unsigned char *flush; /* --cold-cache: written before each timed round */
  size_t flush_bytes;
} bench;

int st__bench_more(const st__bench_config *cfg, uint64_t rounds,
                   uint64_t elapsed_ns) {
  if (rounds >= cfg->max_rounds || elapsed_ns >= cfg->max_time_ns)
    return 0;
  return rounds < cfg->min_rounds || elapsed_ns < cfg->min_time_ns;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double percentile(const double *s, size_t n, double p) {
  double pos = p * (double)(n - 1);
  size_t lo = (size_t)pos;
  double frac = pos - (double)lo;
  if (lo + 1 >= n)
    return s[n - 1];
  return s[lo] + (s[lo + 1] - s[lo]) * frac;
}

void st__bench_stats_of(double *samples, size_t n, st__bench_stats *out) {
  memset(out, 0, sizeof *out);
  out->rounds = n;
  if (n == 0)
    return;
  qsort(samples, n, sizeof *samples, cmp_double);
  out->min = samples[0];
  out->median = percentile(samples, n, 0.5);
  out->p10 = percentile(samples, n, 0.1);
  out->p90 = percentile(samples, n, 0.9);
}

st_status st__bench_begin(const st__bench_config *cfg) {
  memset(&bench, 0, sizeof bench);
  bench.cfg = *cfg;
  if (cfg->cold_cache) {
    uint64_t llc = st__llc_bytes();
    bench.flush_bytes = (size_t)(llc != 0 ? 2 * llc : (uint64_t)64 << 20);
    if ((bench.flush = malloc(bench.flush_bytes)) == NULL)
      return ST_ENOMEM;
  }
  bench.active = 1;
  return ST_OK;
}

static int has_row(const st_case_result *r) {
  st_case_status s = st_case_result_status(r);
  return st__case_result_bench(r) != NULL || s == ST_CASE_FAIL ||
         s == ST_CASE_ERROR || s == ST_CASE_XPASS;
}

st__bench_case *st__bench_rows(const st_run_result *res, size_t *n, int *oom) {
  size_t count = st_run_result_count(res), i, k = 0;
  st__bench_case *rows;
  *n = 0;
  *oom = 0;
  for (i = 0; i < count; i++)
    k +=
        st_run_result_get(res, i) != NULL && has_row(st_run_result_get(res, i));
  if (k == 0)
    return NULL;
  if ((rows = calloc(k, sizeof *rows)) == NULL) {
    *oom = 1;
    return NULL;
  }
  for (i = 0; i < count; i++) {
    const st_case_result *r = st_run_result_get(res, i);
    const st__bench_measured *m;
    st__bench_case *row = &rows[*n];
    if (r == NULL || !has_row(r))
      continue;
    row->scene = st_case_result_scene(r);
    row->kase = st_case_result_case(r);
    row->platform = st_case_result_platform(r);
    row->status = st_case_result_status(r);
    row->message = st_case_result_message(r);
    if ((m = st__case_result_bench(r)) != NULL)
      row->m = *m;
    ++*n;
  }
  return rows;
}

void st__bench_end(void) {
  free(bench.flush);
  memset(&bench, 0, sizeof bench);
}

int st__bench_active(void) { return bench.active; }

/* Written twice over, so that no line of the kernel's data stays in the
 * cache (the value changes each time: the writes cannot be elided). */
static void flush_cache(void) {
  static unsigned char v;
  volatile unsigned char *p = bench.flush;
  v++;
  memset(bench.flush, v, bench.flush_bytes);
  (void)p[bench.flush_bytes / 2];
}

/* One round of the kernel: *ns its time (device time when the platform
 * reported it), 0 if it failed (the case's status then says why). */
static int one_round(st__casectx *cc, const st_scene *scene, st__casedata *d,
                     unsigned r, int flush, uint64_t *ns, int *device) {
  const st_run_options *opts = cc->run->opts;
  st__call call;
  st_phase_status ps;
  uint64_t t0, t1, dev, copy;

  t0 = st__case_run_begin(cc, d, r);
  if (st__call_init(&call, scene->kernel, opts->platform, &d->args, 0) !=
      ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "run: out of memory");
    st__phase_end(cc, "run", (int)r, t0, ST_PHASE_ERROR, 0);
    return 0;
  }
  call.op.platform_state = d->platform_state;
  if (flush) {
    flush_cache();
    if (d->hooks != NULL && d->hooks->flush != NULL)
      (void)d->hooks->flush();
  }
  t0 = st__now_ns();
  ps = st__dispatch(cc, d->kernel, &call, "kernel");
  t1 = st__now_ns();
  if (ps == ST_PHASE_ERROR)
    st__case_kernel_failed(cc, call.message);
  dev = call.op.device_ns;
  copy = call.op.copy_ns;
  st__call_free(&call);
  ps = st__case_guard_check(cc, &d->args, ps);
  st__phase_end_dev(cc, "run", (int)r, t0, ps, 0, NULL, 0, dev, copy);
  *device = dev != ST_NS_NONE;
  *ns = *device ? dev : t1 - t0;
  return ps == ST_PHASE_OK;
}

static void timed_rounds(st__casectx *cc, const st_scene *scene,
                         st__casedata *d, st__bench_measured *b) {
  const st__bench_config *cfg = &bench.cfg;
  double *samples = NULL;
  size_t n = 0, cap = 0;
  unsigned r = 1;
  uint64_t start, ns;
  int device = 0, ok = 1;

  /* Warm-up: rounds until warmup_ns has passed. */
  cc->log_tag = " warmup=1";
  start = st__now_ns();
  while (ok && st__now_ns() - start < cfg->warmup_ns)
    ok = one_round(cc, scene, d, r++, 0, &ns, &device);
  cc->log_tag = NULL;
  start = st__now_ns();
  /* At least one timed round, however long the process waited. */
  while (ok && (n == 0 || st__bench_more(cfg, n, st__now_ns() - start))) {
    double *p = st__array_grow(samples, &cap, n, sizeof *p, 64);
    if (p == NULL) {
      st__case_result_set_status(cc->res, ST_CASE_ERROR,
                                 "bench: out of memory");
      break;
    }
    samples = p;
    if (!(ok = one_round(cc, scene, d, r++, cfg->cold_cache, &ns, &device)))
      break;
    samples[n++] = (double)ns;
    b->device_time = device;
  }
  if (ok)
    st__bench_stats_of(samples, n, &b->stats);
  free(samples);
}

static void bench_run(st__casectx *cc, const st_scene *scene, size_t ci) {
  st__casedata d;
  st__bench_measured m, *b = &m;
  uint64_t ns;
  int device;

  memset(&m, 0, sizeof m);
  if (!st__case_prepare(cc, scene, ci, &d))
    goto out;
  /* The work model of a built-in op (ops/work.h); another op: times
   * only. */
  b->has_flops = st__work_flops(scene->kernel, &d.plan, &b->flops);
  b->has_bytes = b->has_flops;
  b->bytes = b->has_bytes ? st__work_bytes(&d.plan) : 0;
  /* `flops:` and `bytes:` (the case's or the scene's) give or override
   * them (docs/bench.md#the-work-model). */
  if (scene->cases[ci].has_work[0])
    b->has_flops = 1, b->flops = scene->cases[ci].work[0];
  if (scene->cases[ci].has_work[1])
    b->has_bytes = 1, b->bytes = scene->cases[ci].work[1];
  b->dclass = (int)(d.plan.n_tensors > 0 ? st__dclass_of(d.plan.args[0].dtype)
                                         : ST__DCLASS_FLOAT32);
  st__case_record(cc);
  /* The checked round: a case that fails it is not timed. */
  cc->log_tag = " check=1";
  if (one_round(cc, scene, &d, 0, 0, &ns, &device) &&
      st__case_compare(cc, &d, 0)) {
    cc->log_tag = NULL;
    timed_rounds(cc, scene, &d, b);
  }
  cc->log_tag = NULL;
out:
  st__case_release(cc, &d);
  st__casedata_free(&d);
  if (st__case_result_set_bench(cc->res, &m) != ST_OK)
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "bench: out of memory");
}

const st__executor st__exec_bench = {
    .name = "bench",
    /* Its timed loop is bounded by --max-time-ms and --max-rounds; a
     * case's timeout (a kernel that hangs) is the scheduler's to enforce,
     * as for `run`'s in-process cases: the supervisor kills the child. */
    .flags = 0,
    .slot = 1,
    .run = bench_run,
    .run_begin = NULL,
    .run_end = NULL,
    .after_fork = NULL,
};
