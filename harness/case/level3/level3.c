/* SPDX-License-Identifier: MIT */
/* Level 3: a case's kernel runs on worker processes. This file owns the
 * level-3 phase sequence (args, golden, rehost, record, per round
 * reset/run/compare, release), the process's worker pools (one per run and
 * worker count, kept across cases, replaced when a worker dies or times
 * out) and the reduce_sum combination of per-block partials. The workers
 * themselves are in workers.c, the shared segments in rehost.c.
 *
 * Level-3 cases of a process run one at a time (l3_lock is held for the
 * whole case): a pool serves one case at a time, and forks must not race
 * with each other. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "case/level3/level3.h"
#include "base/loadwatch.h"
#include "ops/ops_impl.h"
#include "base/pool.h"
#include "case/level3/rehost.h"
#include "case/result.h"
#include "case/runner_internal.h"
#include "case/level3/workers.h"

typedef struct l3pool {
  unsigned long run;
  unsigned workers;
  st__wpool *wp;
  struct l3pool *next;
} l3pool;

static pthread_mutex_t l3_lock = PTHREAD_MUTEX_INITIALIZER;
static l3pool *pools;            /* guarded by: l3_lock */
static unsigned long next_run = 1; /* guarded by: l3_lock */

/* Stops and frees the pools for which pred holds. Caller holds l3_lock. */
static void stop_pools(int (*pred)(const l3pool *, unsigned long),
                       unsigned long run) {
  l3pool **pp = &pools;
  while (*pp != NULL) {
    l3pool *p = *pp;
    if (!pred(p, run)) {
      pp = &p->next;
      continue;
    }
    *pp = p->next;
    st__wpool_stop(p->wp);
    free(p);
  }
}

static int of_run(const l3pool *p, unsigned long run) { return p->run == run; }
static int not_of_run(const l3pool *p, unsigned long run) {
  return p->run != run;
}
static int any_pool(const l3pool *p, unsigned long run) {
  (void)p;
  (void)run;
  return 1;
}

void st__level3_teardown(runctx *rc) {
  if (rc == NULL || rc->l3_run == 0)
    return;
  pthread_mutex_lock(&l3_lock);
  stop_pools(of_run, rc->l3_run);
  pthread_mutex_unlock(&l3_lock);
  rc->l3_run = 0;
  st__seg_pool_drain();
}

void st__level3_shutdown(void) {
  pthread_mutex_lock(&l3_lock);
  stop_pools(any_pool, 0);
  pthread_mutex_unlock(&l3_lock);
  st__seg_pool_drain();
}

void st__level3_forget_after_fork(void) {
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  l3pool *p = pools;
  /* Written only if it differs: a page the child writes is a
   * copy-on-write fault (an isolated case's dearest cost). */
  if (memcmp(&l3_lock, &fresh, sizeof fresh) != 0)
    l3_lock = fresh;
  while (p != NULL) {
    l3pool *next = p->next;
    st__wpool_forget(p->wp);
    free(p);
    p = next;
  }
  if (pools != NULL)
    pools = NULL;
  st__seg_pool_forget_after_fork();
}

/* The pool of n workers for rc's run: the kept one if its workers are all
 * alive, else a new one. Pools of other runs are stopped first: their
 * workers hold another registry (and a run whose end was not signalled
 * must not leave them behind). Caller holds l3_lock. */
static st__wpool *get_pool(runctx *rc, unsigned n, st_error *err) {
  l3pool *p, **pp;
  if (rc->l3_run == 0)
    rc->l3_run = next_run++;
  stop_pools(not_of_run, rc->l3_run);
  for (pp = &pools; (p = *pp) != NULL; pp = &p->next) {
    if (p->workers != n)
      continue;
    if (!st__wpool_broken(p->wp))
      return p->wp;
    *pp = p->next;
    st__wpool_stop(p->wp);
    free(p);
    break;
  }
  p = calloc(1, sizeof *p);
  if (p == NULL) {
    st_error_set(err, ST_ENOMEM, "out of memory");
    return NULL;
  }
  if (st__wpool_start(n, rc->reg, &p->wp, err) != ST_OK) {
    free(p);
    return NULL;
  }
  p->run = rc->l3_run;
  p->workers = n;
  p->next = pools;
  pools = p;
  return p->wp;
}

/* Drops a broken pool right away, so its workers are reaped before the
 * case reports. Caller holds l3_lock. */
static void drop_pool(st__wpool *wp) {
  l3pool **pp;
  for (pp = &pools; *pp != NULL; pp = &(*pp)->next)
    if ((*pp)->wp == wp) {
      l3pool *p = *pp;
      *pp = p->next;
      st__wpool_stop(p->wp);
      free(p);
      return;
    }
}

/* The `loaded` list of a worker phase also names what the workers loaded
 * ("worker N: PATH", SPEC §3). */
static void phase_end_workers(casectx *cc, const char *name, int round,
                              uint64_t t0, st_phase_status status,
                              char **extra, size_t n_extra) {
  st__phase_end_ex(cc, name, round, t0, status, 0, extra, n_extra);
}

/* reduce_sum's block partials, added in block order as level 2 adds its
 * blocks (harness/backend_cpu.c cpu_reduce_sum), into out[0]. */
static void combine_partials(st_tensor *out, const void *scratch,
                             size_t n_blocks) {
  const unsigned char *p = scratch;
  size_t k;
  if (st__dtype_is_int(out->dtype)) {
    uint64_t total = 0, v;
    for (k = 0; k < n_blocks; k++) {
      memcpy(&v, p + 8 * k, 8);
      total += v;
    }
    st__elem_set_u64(out, 0, total);
  } else {
    double total = 0.0, v;
    for (k = 0; k < n_blocks; k++) {
      memcpy(&v, p + 8 * k, 8);
      total += v;
    }
    st__elem_set_f64(out, 0, total);
  }
}

/* 1 when the case is a built-in-shaped reduce_sum (x, one-element out of
 * the same numeric dtype): the harness then combines block partials. */
static int is_reduce(const char *op, const st__argset *a) {
  return strcmp(op, "reduce_sum") == 0 && a->n_tensors == 2 &&
         a->tensors[1].numel == 1 &&
         a->tensors[0].dtype == a->tensors[1].dtype &&
         (unsigned)a->tensors[0].dtype < (unsigned)ST_DTYPE_COUNT &&
         a->tensors[0].dtype != ST_DTYPE_BOOL;
}

static void fail_from(casectx *cc, const st__wresult *wr, const char *what) {
  if (wr->status == ST_ESKIP)
    st__case_result_set_status(cc->res, ST_CASE_SKIP, "%s",
                               wr->message[0] ? wr->message
                                              : "kernel declined the case");
  else if (wr->broken || wr->is_lookup)
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", wr->message);
  else
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s: %s", what,
                               wr->message);
}

void st__run_level3(casectx *cc, const st_scene *scene, size_t ci) {
  const st_run_options *opts = cc->run->opts;
  const st__case *k = &scene->cases[ci];
  st__casedata d;
  st__rehost rh;
  st__wcase wc;
  st__wresult wr;
  st__wpool *wp;
  st__seg *scratch = NULL;
  st_error err;
  st_phase_status ps;
  uint64_t t0, deadline = 0;
  double timeout = k->timeout > 0 ? k->timeout : opts->timeout;
  unsigned n = scene->workers ? scene->workers : 2, r, cores;
  int rehosted = 0, reduce = 0;
  char *text = NULL;
  size_t len = 0;

  memset(&d, 0, sizeof d);
  memset(&rh, 0, sizeof rh);
  memset(&wr, 0, sizeof wr);
  st_error_clear(&err);
  if (timeout > 0)
    deadline = st__now_ns() + (uint64_t)(timeout * 1e9);

  pthread_mutex_lock(&l3_lock);
  /* Eagerly, before args: the field's pool starts its processes before a
   * case's arguments exist, which is why they must be rehosted. */
  wp = get_pool(cc->run, n, &err);
  if (wp == NULL) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR,
                               "cannot start %u level-3 workers: %s", n,
                               err.message);
    goto out;
  }
  if (!st__case_prepare(cc, scene, ci, &d))
    goto out;

  /* rehost: the tensors into shared segments, and the case onto the
   * workers (they map the segments). */
  st__phase_begin(cc, "rehost", -1);
  t0 = st__now_ns();
  ps = ST_PHASE_OK;
  reduce = is_reduce(scene->kernel, &d.args);
  memset(&wc, 0, sizeof wc);
  wc.op = scene->kernel;
  wc.backend = opts->platform;
  wc.args = &d.args;
  wc.rh = &rh;
  cores = st__ncores();
  wc.max_threads = cores / n ? cores / n : 1;
  if (st__rehost_args(&d.args, &rh, &err) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
    ps = ST_PHASE_ERROR;
  }
  if (ps == ST_PHASE_OK && reduce) {
    size_t numel = d.args.tensors[0].numel;
    wc.reduce = 1;
    wc.n_blocks = numel / ST__REDUCE_BLOCK + (numel % ST__REDUCE_BLOCK != 0);
    if (wc.n_blocks > 0 &&
        st__seg_acquire(wc.n_blocks * 8, &scratch, &err) != ST_OK) {
      st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
      ps = ST_PHASE_ERROR;
    }
    wc.scratch = scratch;
  }
  if (ps == ST_PHASE_OK) {
    st__wpool_map(wp, &wc, deadline, timeout, &wr);
    if (wr.status != ST_OK) {
      fail_from(cc, &wr, "rehost");
      ps = ST_PHASE_ERROR;
    }
  }
  if (ps == ST_PHASE_OK) {
    st__rehost_commit(&rh, &d.args);
    rehosted = 1;
  } else {
    /* A failed rehost rolls back what it made itself, LIFO; release does
     * not run for it. */
    st__seg_release(scratch);
    scratch = NULL;
    st__rehost_release(&rh, &d.args);
  }
  phase_end_workers(cc, "rehost", -1, t0, ps, wr.loaded, wr.n_loaded);
  st__wresult_free(&wr);
  if (!rehosted)
    goto out;

  st__case_record(cc);
  for (r = 0; r < d.rounds; r++) {
    t0 = st__case_run_begin(cc, &d, r);
    ps = ST_PHASE_OK;
    st__wpool_run(wp, r, deadline, timeout, &wr);
    if (wr.status == ST_OK) {
      if (reduce)
        combine_partials(&d.args.tensors[1], scratch ? scratch->map : NULL,
                         wc.n_blocks);
    } else {
      fail_from(cc, &wr, "kernel");
      ps = wr.status == ST_ESKIP ? ST_PHASE_SKIP : ST_PHASE_ERROR;
    }
    phase_end_workers(cc, "run", (int)r, t0, ps, wr.loaded, wr.n_loaded);
    st__wresult_free(&wr);
    if (ps != ST_PHASE_OK || !st__case_compare(cc, &d, r))
      break;
  }

  /* release: after every case whose rehost succeeded, whatever happened
   * since; the last made goes first. */
  st__phase_begin(cc, "release", -1);
  t0 = st__now_ns();
  st__seg_release(scratch);
  scratch = NULL;
  st__rehost_release(&rh, &d.args);
  st__phase_end(cc, "release", -1, t0, ST_PHASE_OK, 0);

out:
  if (wp != NULL) {
    st__wpool_take_output(wp, &text, &len);
    if (text != NULL)
      st__case_result_set_output(cc->res, text, len);
    free(text);
    /* A dead or killed pool is reaped now, so no zombie outlives the
     * case; the next case starts a new one. */
    if (st__wpool_broken(wp))
      drop_pool(wp);
  }
  pthread_mutex_unlock(&l3_lock);
  st__casedata_free(&d);
}
