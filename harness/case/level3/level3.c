/* SPDX-License-Identifier: MIT */
/* Level 3: a case's kernel runs on worker processes. This file is the
 * level-3 executor (case/exec.h) and owns the level-3 phase sequence (args,
 * golden, rehost, record, per round reset/run/compare, release), the process's
 * worker pools (one per run and worker count, kept across cases, replaced when
 * a worker dies or times out) and the reduce_sum combination of per-block
 * partials. The workers themselves are in workers.c, the shared segments in
 * rehost.c.
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

#include "base/loadwatch.h"
#include "base/pool.h"
#include "case/case.h"
#include "case/exec.h"
#include "case/phase.h"
#include "case/result.h"
#include "case/level3/level3.h"
#include "case/level3/rehost.h"
#include "case/level3/workers.h"
#include "ops/ops_impl.h"

typedef struct l3pool {
  unsigned long run;
  unsigned workers;
  st__wpool *wp;
  struct l3pool *next;
} l3pool;

/* This executor's word of st__runctx.exec_state: which pools are the
 * run's (a number from next_run; 0 until the run's first level-3 case). */
#define L3_SLOT 1
#define RUN_OF(rc) ((rc)->exec_state[L3_SLOT])

static pthread_mutex_t l3_lock = PTHREAD_MUTEX_INITIALIZER;
static l3pool *pools;              /* guarded by: l3_lock */
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

/* The run_end hook: ends the worker pools of rc's run, reaping every
 * worker, and gives back the idle segments. */
static void level3_run_end(st__runctx *rc) {
  if (rc == NULL || RUN_OF(rc) == 0)
    return;
  pthread_mutex_lock(&l3_lock);
  stop_pools(of_run, RUN_OF(rc));
  pthread_mutex_unlock(&l3_lock);
  RUN_OF(rc) = 0;
  st__seg_pool_drain();
}

void st__level3_shutdown(void) {
  pthread_mutex_lock(&l3_lock);
  stop_pools(any_pool, 0);
  pthread_mutex_unlock(&l3_lock);
  st__seg_pool_drain();
}

/* The after_fork hook: the parent's pools and segments are its children
 * and memory, not ours; forgets them without signalling or waiting. */
static void level3_after_fork(st__runctx *rc) {
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
  /* The child's own pools, if it makes any, are of a run of its own. */
  if (RUN_OF(rc) != 0)
    RUN_OF(rc) = 0;
}

/* The pool of n workers for rc's run: the kept one if its workers are all
 * alive, else a new one. Pools of other runs are stopped first: their
 * workers hold another registry (and a run whose end was not signalled
 * must not leave them behind). Caller holds l3_lock. */
static st__wpool *get_pool(st__runctx *rc, unsigned n, st_error *err) {
  l3pool *p, **pp;
  if (RUN_OF(rc) == 0)
    RUN_OF(rc) = next_run++;
  stop_pools(not_of_run, RUN_OF(rc));
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
  p->run = RUN_OF(rc);
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
 * ("worker N: PATH", docs/scene-format.md#phases). */
static void phase_end_workers(st__casectx *cc, const char *name, int round,
                              uint64_t t0, st_phase_status status, char **extra,
                              size_t n_extra) {
  st__phase_end_ex(cc, name, round, t0, status, 0, extra, n_extra);
}

/* reduce_sum's block partials, added in block order as level 2 adds its
 * blocks (harness/ops/backend_cpu.c cpu_reduce_sum), into out[0]. */
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
    st_tensor_set_i64(out, 0, (int64_t)total);
  } else {
    double total = 0.0, v;
    for (k = 0; k < n_blocks; k++) {
      memcpy(&v, p + 8 * k, 8);
      total += v;
    }
    st_tensor_set_f64(out, 0, total);
  }
}

/* 1 when the case is a built-in-shaped reduce_sum (x, one-element out of
 * the same numeric dtype, or of any float dtype for a float x): the
 * harness then combines block partials. */
static int is_reduce(const char *op, const st__argset *a) {
  return strcmp(op, "reduce_sum") == 0 && a->n_tensors == 2 &&
         a->tensors[1].numel == 1 &&
         (a->tensors[0].dtype == a->tensors[1].dtype ||
          (st_dtype_is_float(a->tensors[0].dtype) &&
           st_dtype_is_float(a->tensors[1].dtype))) &&
         (unsigned)a->tensors[0].dtype < (unsigned)ST_DTYPE_COUNT &&
         a->tensors[0].dtype != ST_DTYPE_BOOL;
}

static void fail_from(st__casectx *cc, const st__wresult *wr,
                      const char *what) {
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

/* A level-3 case between its phases. */
typedef struct l3case {
  st__casedata d;
  st__rehost rh;
  st__wcase wc;
  st__wpool *wp;
  st__seg *scratch;  /* reduce_sum's block partials, or NULL */
  uint64_t deadline; /* 0: none */
  double timeout;
  unsigned workers;
  int reduce;
} l3case;

/* rehost: the tensors into shared segments, and the case onto the workers
 * (they map the segments). Returns 1 when rehosted; a failed rehost rolls
 * back what it made itself, LIFO, and release does not run for it. */
static int rehost_phase(st__casectx *cc, const st_scene *scene, l3case *c) {
  const st_run_options *opts = cc->run->opts;
  st__wresult wr;
  st_error err;
  st_phase_status ps = ST_PHASE_OK;
  uint64_t t0;
  unsigned cores;

  memset(&wr, 0, sizeof wr);
  st_error_clear(&err);
  st__phase_begin(cc, "rehost", -1);
  t0 = st__now_ns();
  c->reduce = is_reduce(scene->kernel, &c->d.args);
  memset(&c->wc, 0, sizeof c->wc);
  c->wc.op = scene->kernel;
  c->wc.backend = opts->platform;
  c->wc.args = &c->d.args;
  c->wc.rh = &c->rh;
  c->wc.env = (const char *const *)cc->env;
  c->wc.n_env = cc->n_env;
  cores = st__ncores();
  c->wc.max_threads = cores / c->workers ? cores / c->workers : 1;
  if (st__rehost_args(&c->d.args, &c->rh, &err) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
    ps = ST_PHASE_ERROR;
  }
  if (ps == ST_PHASE_OK && c->reduce) {
    size_t numel = c->d.args.tensors[0].numel;
    c->wc.reduce = 1;
    c->wc.n_blocks = numel / ST__REDUCE_BLOCK + (numel % ST__REDUCE_BLOCK != 0);
    if (c->wc.n_blocks > 0 &&
        st__seg_acquire(c->wc.n_blocks * 8, &c->scratch, &err) != ST_OK) {
      st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
      ps = ST_PHASE_ERROR;
    }
    c->wc.scratch = c->scratch;
  }
  if (ps == ST_PHASE_OK) {
    /* The workers resolve and bind the kernel and run the platform's
     * prepare hook as they take the map
     * (docs/plugins.md#platform-hooks-prepare-and-release). */
    st__wpool_map(c->wp, &c->wc, c->deadline, c->timeout, &wr);
    if (wr.status != ST_OK) {
      /* A worker's platform may decline the case in its prepare. */
      fail_from(cc, &wr, "rehost");
      ps = wr.status == ST_ESKIP ? ST_PHASE_SKIP : ST_PHASE_ERROR;
      if (!wr.broken) {
        /* The workers whose prepare succeeded release what it made. */
        st__wresult back;
        st__wpool_release(c->wp, c->deadline, c->timeout, &back);
        st__wresult_free(&back);
      }
    }
  }
  if (ps == ST_PHASE_OK) {
    st__rehost_commit(&c->rh, &c->d.args);
  } else {
    st__seg_release(c->scratch);
    c->scratch = NULL;
    st__rehost_release(&c->rh, &c->d.args);
  }
  phase_end_workers(cc, "rehost", -1, t0, ps, wr.loaded, wr.n_loaded);
  st__wresult_free(&wr);
  return ps == ST_PHASE_OK;
}

/* The guard zones of every tensor in its segment (rehost.h), after the
 * workers ran: a write before a tensor's start or past its end is the
 * case's error, as at level 2. Returns ST_PHASE_ERROR then, else ps. */
static st_phase_status check_zones(st__casectx *cc, l3case *c,
                                   st_phase_status ps) {
  size_t k;
  for (k = 0; k < c->rh.n; k++) {
    const st_tensor *t = &c->d.args.tensors[c->rh.tensor[k]];
    st__tbuf_damage dmg;
    if (!st__rehost_check(&c->rh, k, t->nbytes, &dmg))
      continue;
    st__case_guard_error(cc, t->name, t->nbytes, &dmg,
                         "; level-3 shared segment");
    ps = ST_PHASE_ERROR;
  }
  return ps;
}

/* The rounds: reset (from the second on), run on the workers, compare. */
static void run_rounds(st__casectx *cc, l3case *c) {
  st__wresult wr;
  st_phase_status ps;
  uint64_t t0;
  unsigned r;

  memset(&wr, 0, sizeof wr);
  for (r = 0; r < c->d.rounds; r++) {
    t0 = st__case_run_begin(cc, &c->d, r);
    ps = ST_PHASE_OK;
    st__wpool_run(c->wp, r, c->deadline, c->timeout, &wr);
    if (wr.status != ST_OK) {
      fail_from(cc, &wr, "kernel");
      ps = wr.status == ST_ESKIP ? ST_PHASE_SKIP : ST_PHASE_ERROR;
      /* A worker that died or timed out is no report of the kernel's. */
      if (ps == ST_PHASE_ERROR && !wr.broken && !wr.is_lookup)
        st__case_kernel_failed(cc, wr.message);
    }
    /* Whatever the workers answered: a decline after a write past an
     * output is that write's error. The segments are the harness's own
     * mappings, there whether the workers live or not. */
    ps = check_zones(cc, c, ps);
    if (ps == ST_PHASE_OK && c->reduce)
      combine_partials(&c->d.args.tensors[1],
                       c->scratch ? c->scratch->map : NULL, c->wc.n_blocks);
    st__phase_end_dev(cc, "run", (int)r, t0, ps, 0, wr.loaded, wr.n_loaded,
                      wr.device_ns, wr.copy_ns);
    st__wresult_free(&wr);
    if (ps != ST_PHASE_OK || !st__case_compare(cc, &c->d, r))
      break;
  }
}

/* release: after every case whose rehost succeeded, whatever happened
 * since; the last made goes first. */
static void release_phase(st__casectx *cc, l3case *c) {
  st__wresult wr;
  st_phase_status ps = ST_PHASE_OK;
  uint64_t t0;
  st__phase_begin(cc, "release", -1);
  t0 = st__now_ns();
  /* The workers' device state first (their platform's release hook): it
   * may refer to the segments. */
  st__wpool_release(c->wp, c->deadline, c->timeout, &wr);
  if (wr.status != ST_OK) {
    fail_from(cc, &wr, "release");
    ps = ST_PHASE_ERROR;
  }
  st__wresult_free(&wr);
  st__seg_release(c->scratch);
  c->scratch = NULL;
  st__rehost_release(&c->rh, &c->d.args);
  st__phase_end(cc, "release", -1, t0, ps, 0);
}

/* The run_begin hook: the pools this run's level-3 cases will use, forked
 * now, before this process dispatches any case (exec.h). */
static void level3_run_begin(st__runctx *rc, const st_case_ref *refs,
                             size_t n) {
  size_t i, j;
  st_error err;
  pthread_mutex_lock(&l3_lock);
  for (i = 0; i < n; i++) {
    const st_scene *scene = refs[i].scene;
    unsigned w = scene->workers ? scene->workers : 2;
    int seen = 0;
    if (scene->level != 3)
      continue;
    for (j = 0; j < i && !seen; j++)
      seen = refs[j].scene->level == 3 &&
             (refs[j].scene->workers ? refs[j].scene->workers : 2) == w;
    /* A failure here is the case's to report, when it asks again. */
    if (!seen)
      (void)get_pool(rc, w, &err);
  }
  pthread_mutex_unlock(&l3_lock);
}

/* The run hook: args, golden, rehost, record, rounds of reset/run/compare
 * with the kernel on the workers, release. */
static void level3_run(st__casectx *cc, const st_scene *scene, size_t ci) {
  const st__case *k = &scene->cases[ci];
  l3case c;
  st_error err;
  char *text = NULL;
  size_t len = 0;

  memset(&c, 0, sizeof c);
  st_error_clear(&err);
  c.timeout = k->timeout > 0 ? k->timeout : cc->run->opts->timeout;
  c.workers = scene->workers ? scene->workers : 2;
  if (c.timeout > 0)
    c.deadline = st__now_ns() + (uint64_t)(c.timeout * 1e9);

  pthread_mutex_lock(&l3_lock);
  /* Eagerly, before args: the field's pool starts its processes before a
   * case's arguments exist, which is why they must be rehosted. */
  c.wp = get_pool(cc->run, c.workers, &err);
  if (c.wp == NULL) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR,
                               "cannot start %u level-3 workers: %s", c.workers,
                               err.message);
    goto out;
  }
  /* The workers resolve the kernel, during rehost
   * (docs/plugins.md#platform-hooks-prepare-and-release). */
  if (!st__case_prepare(cc, scene, ci, &c.d))
    goto out;
  if (!rehost_phase(cc, scene, &c))
    goto out;
  st__case_record(cc);
  run_rounds(cc, &c);
  release_phase(cc, &c);

out:
  if (c.wp != NULL) {
    st__wpool_take_output(c.wp, &text, &len);
    if (text != NULL)
      st__case_result_set_output(cc->res, text, len);
    free(text);
    /* A dead or killed pool is reaped now, so no zombie outlives the
     * case; the next case starts a new one. */
    if (st__wpool_broken(c.wp))
      drop_pool(c.wp);
  }
  pthread_mutex_unlock(&l3_lock);
  st__casedata_free(&c.d);
}

const st__executor st__exec_level3 = {
    .name = "level3",
    /* Forks its workers; kills them at the case's deadline. */
    .flags = ST__EXEC_FORKS | ST__EXEC_OWNS_TIMEOUT | ST__EXEC_OWN_KERNEL,
    .slot = L3_SLOT,
    .run = level3_run,
    .run_begin = level3_run_begin,
    .run_end = level3_run_end,
    .after_fork = level3_after_fork,
};
