/* SPDX-License-Identifier: MIT */
/* The runner: selects cases, runs each through its phases (args, golden,
 * record, then per round reset/run/compare), records one event per phase
 * with the shared objects that became loaded during it, checks that the
 * autoload record was not made stale, and feeds observers.
 *
 * With -j N the cases run on N threads; observers are still called from
 * the scheduling thread only, and in selection order (each case's events
 * replayed when it is its turn), so reports are identical to -j 1 but for
 * timings. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <scenetest/log.h>
#include <scenetest/record.h>

#include "case/args.h"
#include "case/compare.h"
#include "case/level3/level3.h"
#include "base/loadwatch.h"
#include "base/pool.h"
#include "case/result.h"
#include "case/tbuf.h"
#include "case/runner_internal.h"
#include "scene/scene.h"

void st_run_options_init(st_run_options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->platform = "cpu";
  opts->manual = ST_MANUAL_EXCLUDE;
  opts->jobs = 1;
}

uint64_t st__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void st__phase_begin(casectx *cc, const char *name, int round) {
  size_t i;
  if (!cc->live)
    return;
  for (i = 0; i < cc->run->n_obs; i++)
    if (cc->run->obs[i].phase_begin)
      cc->run->obs[i].phase_begin(cc->run->obs[i].data, &cc->info, name,
                                  round);
}

static void notify_phase_end(casectx *cc, const st_event *ev) {
  size_t i;
  if (!cc->live)
    return;
  for (i = 0; i < cc->run->n_obs; i++)
    if (cc->run->obs[i].phase_end)
      cc->run->obs[i].phase_end(cc->run->obs[i].data, &cc->info, ev);
}

static void add_event(casectx *cc, const st_event *ev) {
  if (st__case_result_add_event(cc->res, ev) != ST_OK)
    cc->oom = 1;
}

static void log_phase(const casectx *cc, const st_event *ev) {
  char round[24];
  if (!st_log_enabled(ST_LOG_TIMING))
    return;
  if (ev->round < 0)
    snprintf(round, sizeof round, "-");
  else
    snprintf(round, sizeof round, "%d", ev->round);
  st_log(ST_LOG_TIMING,
         "phase pid=%ld scene=%s case=%s name=%s round=%s dur_ns=%llu "
         "status=%s",
         (long)getpid(), cc->info.scene, cc->info.name, ev->name, round,
         (unsigned long long)ev->dur_ns, st_phase_status_name(ev->status));
}

void st__phase_end_ex(casectx *cc, const char *name, int round, uint64_t t0,
                      st_phase_status status, int emitted,
                      char *const *extra, size_t n_extra) {
  uint64_t t1 = st__now_ns();
  char **own = NULL;
  const char **all = NULL;
  size_t n_own = 0, i;
  st_event ev;

  if (st__loadwatch_poll(&own, &n_own) != ST_OK)
    cc->oom = 1;
  if (n_own + n_extra > 0) {
    all = calloc(n_own + n_extra, sizeof *all);
    if (all == NULL) {
      cc->oom = 1;
      n_own = n_extra = 0;
    } else {
      for (i = 0; i < n_own; i++)
        all[i] = own[i];
      for (i = 0; i < n_extra; i++)
        all[n_own + i] = extra[i];
    }
  }
  memset(&ev, 0, sizeof ev);
  ev.name = name;
  ev.round = round;
  ev.start_ns = t0;
  ev.dur_ns = t1 - t0;
  ev.status = status;
  ev.loaded = all;
  ev.n_loaded = n_own + n_extra;
  ev.emitted = emitted;
  add_event(cc, &ev);
  log_phase(cc, &ev);
  notify_phase_end(cc, &ev);
  /* A `load` event only for what this process loaded: what workers loaded
   * is not in its address space and cannot make its record stale. */
  for (i = 0; i < n_own; i++) {
    st_event lev;
    memset(&lev, 0, sizeof lev);
    lev.name = "load";
    lev.round = round;
    lev.start_ns = t1;
    lev.status = ST_PHASE_OK;
    lev.object = own[i];
    lev.phase = name;
    add_event(cc, &lev);
    notify_phase_end(cc, &lev);
  }
  free(all);
  st__loadwatch_free(own, n_own);
}

void st__phase_end(casectx *cc, const char *name, int round, uint64_t t0,
                   st_phase_status status, int emitted) {
  st__phase_end_ex(cc, name, round, t0, status, emitted, NULL, 0);
}

void st__call_init(st_op_call *call, const char *op, const char *backend,
                      st__argset *set, unsigned max_threads) {
  memset(call, 0, sizeof *call);
  call->op = op;
  call->backend = backend;
  call->tensors = set->tensors;
  call->n_tensors = set->n_tensors;
  call->scalars = set->scalars;
  call->n_scalars = set->n_scalars;
  call->shard_index = 0;
  call->shard_count = 1;
  call->max_threads = max_threads;
}

/* Validates and calls fn; maps the outcome to a phase status and, on
 * failure, the case's status and message (prefixed with what). */
st_phase_status st__dispatch(casectx *cc, st_op_fn fn, st_op_call *call,
                                const char *what) {
  st_status rc = st_op_check(call);
  if (rc == ST_OK)
    rc = fn(call);
  if (rc == ST_OK)
    return ST_PHASE_OK;
  if (rc == ST_ESKIP) {
    st__case_result_set_status(cc->res, ST_CASE_SKIP, "%s",
                               call->message[0] ? call->message
                                                : "kernel declined the case");
    return ST_PHASE_SKIP;
  }
  st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s: %s", what,
                             call->message[0] ? call->message
                                              : st_status_str(rc));
  return ST_PHASE_ERROR;
}

st_phase_status st__compare_all(casectx *cc, const st__plan *plan,
                                   const st__argset *args,
                                   const st__argset *gold,
                                   const st__argset *init) {
  char msg[1024];
  size_t i, mismatches = 0;
  for (i = 0; i < args->n_tensors; i++) {
    const st__rarg *ra = &plan->args[i];
    st_status rc;
    if (args->tensors[i].role == ST_ROLE_INPUT)
      rc = st__compare_exact(&args->tensors[i], &init->tensors[i], msg,
                             sizeof msg);
    else if (ra->compare)
      rc = st__compare_close(&args->tensors[i], &gold->tensors[i], ra->rtol,
                             ra->atol, msg, sizeof msg);
    else
      continue;
    if (rc != ST_OK) {
      /* The first mismatch is the message; the status says there were
       * more. */
      st__case_result_set_status(cc->res, ST_CASE_FAIL, "%s", msg);
      mismatches++;
    }
  }
  return mismatches ? ST_PHASE_FAIL : ST_PHASE_OK;
}

/* After the case: a watched module loaded after the record makes it
 * stale. */
static void check_record(casectx *cc) {
  size_t i, n = st_case_result_event_count(cc->res);
  int after = 0;
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(cc->res, i);
    const char *module = NULL;
    char msg[1536];
    if (strcmp(ev->name, "record") == 0) {
      after = 1;
      continue;
    }
    if (!after || strcmp(ev->name, "load") != 0 ||
        !st_watch_match(cc->run->watch, cc->run->n_watch, ev->object,
                        &module))
      continue;
    snprintf(msg, sizeof msg,
             "autoload record is stale: watched module '%s' (%s) was loaded "
             "during phase '%s' after the record",
             module, ev->object, ev->phase);
    st_log(ST_LOG_WARNING, "%s::%s: %s", cc->info.scene, cc->info.name, msg);
    if (!st_case_result_record_stale(cc->res)) {
      st__case_result_set_record_stale(cc->res, 1);
      if (cc->run->opts->strict_record &&
          st_case_result_status(cc->res) != ST_CASE_ERROR)
        st__case_result_override(cc->res, ST_CASE_ERROR, msg);
    }
  }
}

void st__casedata_free(st__casedata *d) {
  st__argset_free(&d->gold);
  st__argset_free(&d->init);
  st__argset_free(&d->args);
  st__plan_free(&d->plan);
}

int st__case_prepare(casectx *cc, const st_scene *scene, size_t ci,
                     st__casedata *d) {
  const st_run_options *opts = cc->run->opts;
  const st__case *k = &scene->cases[ci];
  st_error err;
  st_op_call call;
  st_op_fn golden = NULL;
  st_phase_status ps = ST_PHASE_OK;
  st_status rs;
  uint64_t t0;

  memset(d, 0, sizeof *d);
  st_error_clear(&err);
  /* --skip-golden > the case's skip_golden > the scene's. */
  d->skip_golden = opts->skip_golden      ? 1
                   : k->skip_golden >= 0 ? k->skip_golden
                                         : scene->skip_golden;
  d->rounds = opts->rounds ? opts->rounds : (k->rounds ? k->rounds : 1);

  /* args: the load already enforced the byte cap for every case. */
  st__phase_begin(cc, "args", -1);
  t0 = st__now_ns();
  st_error_list perr;
  st_error_list_init(&perr);
  rs = st__plan_resolve(scene, ci, UINT64_MAX, &d->plan, &perr);
  if (rs != ST_OK && rs != ST_ENOMEM && perr.count > 0)
    st_error_set(&err, ST_ELOAD, "%s", perr.items[0].message);
  st_error_list_free(&perr);
  if (rs != ST_OK) {
    /* The files of `file:` inits are checked again here: what the
     * resolution says (the file changed, is no longer a regular file) is
     * the message. */
    if (rs == ST_ENOMEM)
      st_error_set(&err, ST_ENOMEM, "out of memory resolving the case");
    else if (err.code == ST_OK)
      st_error_set(&err, ST_ELOAD, "cannot resolve the case's arguments");
    ps = ST_PHASE_ERROR;
  } else if (st__args_build(&d->plan, opts->seed, &d->args, &err) != ST_OK ||
             st__argset_clone(&d->args, &d->init) != ST_OK) {
    if (err.code == ST_OK)
      st_error_set(&err, ST_ENOMEM, "out of memory building arguments");
    ps = ST_PHASE_ERROR;
  }
  if (ps != ST_PHASE_OK)
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "args: %s",
                               err.message);
  st__phase_end(cc, "args", -1, t0, ps, 0);
  if (ps != ST_PHASE_OK)
    return 0;
  if (d->skip_golden)
    return 1;

  /* golden: on the reference backend, on a copy of the initial args. The
   * record comes after it because golden may load libraries lazily. */
  st__phase_begin(cc, "golden", -1);
  t0 = st__now_ns();
  st_error_clear(&err);
  if (st_registry_lookup(cc->run->reg, scene->golden, ST_BACKEND_REFERENCE,
                         ST_LOOKUP_GOLDEN, &golden, &err) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s", err.message);
    ps = ST_PHASE_ERROR;
  } else if (st__argset_clone(&d->init, &d->gold) != ST_OK) {
    st__case_result_set_status(cc->res, ST_CASE_ERROR,
                               "golden: out of memory");
    ps = ST_PHASE_ERROR;
  } else {
    st__call_init(&call, scene->golden, ST_BACKEND_REFERENCE, &d->gold,
                  cc->run->golden_threads);
    ps = st__dispatch(cc, golden, &call, "golden");
    if (ps == ST_PHASE_SKIP) {
      /* The reference backend cannot decline: that is an error. */
      st__case_result_override(cc->res, ST_CASE_ERROR,
                               "golden declined the case");
      ps = ST_PHASE_ERROR;
    }
  }
  st__phase_end(cc, "golden", -1, t0, ps, 0);
  return ps == ST_PHASE_OK;
}

void st__case_record(casectx *cc) {
  uint64_t t0;
  int emitted;
  /* After the last phase that may load a watched module (golden, rehost),
   * before the first run. */
  st__phase_begin(cc, "record", -1);
  t0 = st__now_ns();
  emitted = st_record_emit(cc->run->watch, cc->run->n_watch);
  st__phase_end(cc, "record", -1, t0, ST_PHASE_OK, emitted);
}

static void case_reset(casectx *cc, st__casedata *d, unsigned round) {
  uint64_t t0;
  /* Later rounds start from the initial outputs again. */
  st__phase_begin(cc, "reset", (int)round);
  t0 = st__now_ns();
  st__argset_copy_data(&d->args, &d->init, 1);
  st__phase_end(cc, "reset", (int)round, t0, ST_PHASE_OK, 0);
}

uint64_t st__case_run_begin(casectx *cc, st__casedata *d, unsigned round) {
  if (round > 0)
    case_reset(cc, d, round);
  st__phase_begin(cc, "run", (int)round);
  return st__now_ns();
}

int st__case_compare(casectx *cc, st__casedata *d, unsigned round) {
  uint64_t t0;
  st_phase_status ps;
  if (d->skip_golden)
    return 1;
  st__phase_begin(cc, "compare", (int)round);
  t0 = st__now_ns();
  ps = st__compare_all(cc, &d->plan, &d->args, &d->gold, &d->init);
  st__phase_end(cc, "compare", (int)round, t0, ps, 0);
  return ps == ST_PHASE_OK;
}

static void run_level2(casectx *cc, const st_scene *scene, size_t ci) {
  const st_run_options *opts = cc->run->opts;
  st__casedata d;
  st_error err;
  st_op_call call;
  st_op_fn kernel = NULL;
  st_phase_status ps;
  uint64_t t0;
  unsigned r;

  if (!st__case_prepare(cc, scene, ci, &d))
    goto out;
  st__case_record(cc);
  for (r = 0; r < d.rounds; r++) {
    t0 = st__case_run_begin(cc, &d, r);
    ps = ST_PHASE_OK;
    if (kernel == NULL) {
      st_error_clear(&err);
      if (st_registry_lookup(cc->run->reg, scene->kernel, opts->platform,
                             ST_LOOKUP_KERNEL, &kernel, &err) != ST_OK) {
        st__case_result_set_status(cc->res, ST_CASE_ERROR, "%s",
                                   err.message);
        ps = ST_PHASE_ERROR;
      }
    }
    if (ps == ST_PHASE_OK) {
      st__call_init(&call, scene->kernel, opts->platform, &d.args, 0);
      ps = st__dispatch(cc, kernel, &call, "kernel");
    }
    st__phase_end(cc, "run", (int)r, t0, ps, 0);
    if (ps != ST_PHASE_OK || !st__case_compare(cc, &d, r))
      goto out;
  }
out:
  st__casedata_free(&d);
}

st_case_result *st__run_one(runctx *rc, const st_case_ref *ref,
                               size_t index, size_t total, int live) {
  const st_scene *scene = ref->scene;
  casectx cc;
  uint64_t t0 = st__now_ns();
  size_t i;

  memset(&cc, 0, sizeof cc);
  cc.run = rc;
  cc.live = live;
  cc.info.scene = scene->name;
  cc.info.name = scene->cases[ref->index].name;
  cc.info.file = scene->file;
  cc.info.line = scene->cases[ref->index].line;
  cc.info.platform = rc->opts->platform;
  cc.info.seed = rc->opts->seed;
  cc.info.index = index;
  cc.info.total = total;
  cc.res = st__case_result_new(cc.info.scene, cc.info.name, cc.info.file,
                               cc.info.line, cc.info.platform,
                               cc.info.seed);
  if (cc.res == NULL)
    return NULL;
  st__case_result_set_pid(cc.res, (long)getpid());
  if (live)
    for (i = 0; i < rc->n_obs; i++)
      if (rc->obs[i].case_begin)
        rc->obs[i].case_begin(rc->obs[i].data, &cc.info);
  if (scene->level == 3)
    st__run_level3(&cc, scene, ref->index);
  else
    run_level2(&cc, scene, ref->index);
  check_record(&cc);
  if (cc.oom)
    st__case_result_set_status(cc.res, ST_CASE_ERROR,
                               "out of memory recording events");
  st__case_result_set_duration(cc.res, st__now_ns() - t0);
  return cc.res;
}

static int run_setup(runctx *rc, const st_run_options *opts,
                     st_registry **owned, st_error *err) {
  size_t i;
  char names[1024];
  memset(rc, 0, sizeof *rc);
  rc->opts = opts;
  *owned = NULL;
  /* Tensor buffers freed by one case serve the next; run_teardown, which
   * follows every run_setup, ends the scope and frees them. */
  st__tbuf_run_begin();
  if (opts->registry == NULL) {
    st_status s = st_registry_new_builtin(owned);
    if (s != ST_OK)
      return st_error_set(err, s == ST_ENOMEM ? ST_ENOMEM : ST_EINTERNAL,
                          "cannot create the built-in registry: %s",
                          st_status_str(s));
    rc->reg = *owned;
  } else {
    rc->reg = opts->registry;
  }
  if (!st_registry_has_platform(rc->reg, opts->platform)) {
    st_registry_platforms(rc->reg, names, sizeof names);
    return st_error_set(err, ST_EUSAGE, "unknown platform '%s'; platforms: %s",
                        opts->platform, names);
  }
  for (i = 0; i < opts->n_watch; i++) {
    st_status s = st_watch_parse(opts->watch[i], &rc->watch, &rc->n_watch,
                                 err);
    if (s != ST_OK)
      return s;
  }
  rc->golden_threads = opts->golden_threads;
  if (rc->golden_threads == 0) {
    unsigned cores = st__ncores();
    rc->golden_threads = cores < 8 ? cores : 8;
  }
  return ST_OK;
}

static void run_teardown(runctx *rc, st_registry *owned) {
  /* The run's level-3 worker pools end with it. */
  st__level3_teardown(rc);
  st_watch_list_free(rc->watch, rc->n_watch);
  st_registry_free(owned);
  st__tbuf_run_end();
}

st_status st_run_case(const st_scene *scene, size_t case_index,
                      const st_run_options *opts, st_case_result **out,
                      st_error *err) {
  runctx rc;
  st_registry *owned = NULL;
  st_case_ref ref;
  st_status s;

  *out = NULL;
  if (case_index >= scene->n_cases)
    return st_error_set(err, ST_EINVAL, "scene '%s' has no case %zu",
                        scene->name, case_index);
  s = run_setup(&rc, opts, &owned, err);
  if (s == ST_OK) {
    ref.scene = scene;
    ref.index = case_index;
    *out = st__run_one(&rc, &ref, 0, 1, 0);
    if (*out == NULL)
      s = st_error_set(err, ST_ENOMEM, "out of memory");
  }
  run_teardown(&rc, owned);
  return s;
}

/* Scheduling state for -j: workers take the next index; the scheduling
 * thread reports results in selection order. */
typedef struct sched {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  runctx *rc;
  const st_case_ref *refs;
  size_t n;
  size_t next;            /* guarded by: lock */
  int stop;               /* guarded by: lock */
  int paused;             /* guarded by: lock; no new case may start */
  size_t *finished;       /* guarded by: lock; indexes in finish order */
  size_t n_finished;      /* guarded by: lock */
  size_t n_notified;      /* guarded by: lock; finished ones told */
  size_t busy;            /* guarded by: lock; cases running on workers */
  st_case_result **done;  /* guarded by: lock */
} sched;

/* Level-3 cases fork worker processes, which is only safe from the
 * scheduling thread while no other case (and so no thread pool) is
 * running (SPEC §9): the runner threads leave them to it. */
static int forks(const st_case_ref *ref) { return ref->scene->level == 3; }

static int is_failure(const st_case_result *r) {
  return r == NULL || st_case_result_status(r) == ST_CASE_FAIL ||
         st_case_result_status(r) == ST_CASE_ERROR;
}

void st__notify_finish(runctx *rc, const st_case_info *info,
                       const st_case_result *r) {
  size_t j;
  for (j = 0; j < rc->n_obs; j++)
    if (rc->obs[j].case_finish)
      rc->obs[j].case_finish(rc->obs[j].data, info, r);
}

/* Tells the observers about every case that finished since the last call,
 * in finish order. Needs s->lock; releases it around the callbacks. Only
 * the scheduling thread calls it, and only it clears done[]. */
static void drain_finished(sched *s) {
  while (s->n_notified < s->n_finished) {
    size_t k = s->finished[s->n_notified++];
    st_case_result *r = s->done[k];
    st_case_info info;
    if (r == NULL || r == (st_case_result *)-1)
      continue;
    pthread_mutex_unlock(&s->lock);
    st__fill_info(&info, s->rc, &s->refs[k], k, s->n);
    st__notify_finish(s->rc, &info, r);
    pthread_mutex_lock(&s->lock);
  }
}

static void *worker_main(void *arg) {
  sched *s = arg;
  for (;;) {
    size_t i;
    st_case_result *r;
    pthread_mutex_lock(&s->lock);
    for (;;) {
      if (s->stop || s->next >= s->n) {
        pthread_mutex_unlock(&s->lock);
        return NULL;
      }
      if (s->paused) {
        pthread_cond_wait(&s->cond, &s->lock);
        continue;
      }
      i = s->next++;
      if (!forks(&s->refs[i]))
        break;
    }
    s->busy++;
    pthread_mutex_unlock(&s->lock);
    r = st__run_one(s->rc, &s->refs[i], i, s->n, 0);
    pthread_mutex_lock(&s->lock);
    s->busy--;
    s->done[i] = r ? r : (st_case_result *)-1;
    s->finished[s->n_finished++] = i;
    if (s->rc->opts->fail_fast && is_failure(r))
      s->stop = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
  }
}

void st__replay(runctx *rc, const st_case_info *info,
                   const st_case_result *r) {
  size_t i, j, n = st_case_result_event_count(r);
  for (j = 0; j < rc->n_obs; j++)
    if (rc->obs[j].case_begin)
      rc->obs[j].case_begin(rc->obs[j].data, info);
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    for (j = 0; j < rc->n_obs; j++) {
      if (strcmp(ev->name, "load") != 0 && rc->obs[j].phase_begin)
        rc->obs[j].phase_begin(rc->obs[j].data, info, ev->name, ev->round);
      if (rc->obs[j].phase_end)
        rc->obs[j].phase_end(rc->obs[j].data, info, ev);
    }
  }
}

void st__fill_info(st_case_info *info, const runctx *rc,
                      const st_case_ref *ref, size_t i, size_t n) {
  memset(info, 0, sizeof *info);
  info->scene = ref->scene->name;
  info->name = ref->scene->cases[ref->index].name;
  info->file = ref->scene->file;
  info->line = ref->scene->cases[ref->index].line;
  info->platform = rc->opts->platform;
  info->seed = rc->opts->seed;
  info->index = i;
  info->total = n;
}

st_case_result *st__not_run(const runctx *rc, const st_case_info *info) {
  st_case_result *r = st__case_result_new(info->scene, info->name,
                                          info->file, info->line,
                                          info->platform, info->seed);
  (void)rc;
  if (r != NULL) {
    st__case_result_set_pid(r, (long)getpid());
    st__case_result_set_status(r, ST_CASE_SKIP,
                               "not run: --fail-fast stopped the run after "
                               "a failure");
  }
  return r;
}

st_status st_run(const st_scene_set *set, const st_run_options *opts,
                 const st_observer *observers, size_t n_observers,
                 st_run_result **out, st_error *err) {
  runctx rc;
  st_registry *owned = NULL;
  st_case_ref *refs = NULL;
  size_t n = 0, i, j;
  st_run_result *run = NULL;
  st_run_info rinfo;
  st_status s;
  int saved_stdout = -1, stop = 0, lost = 0;
  unsigned jobs = opts->jobs ? opts->jobs : 1;
  sched sc;
  pthread_t *threads = NULL;
  size_t n_threads = 0;

  *out = NULL;
  s = run_setup(&rc, opts, &owned, err);
  if (s != ST_OK)
    goto out;
  rc.obs = observers;
  rc.n_obs = n_observers;
  s = st_select_cases(set, opts, &refs, &n, err);
  if (s != ST_OK)
    goto out;
  run = st__run_result_new(n);
  if (run == NULL) {
    s = st_error_set(err, ST_ENOMEM, "out of memory");
    goto out;
  }
  /* Prime the loader watch so objects loaded before the first phase are
   * attributed to no phase. */
  {
    char **l;
    size_t nl;
    if (st__loadwatch_poll(&l, &nl) == ST_OK)
      st__loadwatch_free(l, nl);
  }
  if (opts->redirect_stdout) {
    /* Whatever a kernel prints goes to stderr: reporters write to the
     * original stdout, which the caller duplicated before the run. */
    fflush(stdout);
    saved_stdout = dup(1);
    if (saved_stdout >= 0)
      dup2(2, 1);
  }
  rinfo.platform = opts->platform;
  rinfo.seed = opts->seed;
  rinfo.total = n;
  for (j = 0; j < n_observers; j++)
    if (observers[j].run_begin)
      observers[j].run_begin(observers[j].data, &rinfo);

  if (st__isolation_wanted(&rc, refs, n)) {
    /* Forked children, scheduled from this thread (SPEC §9). */
    s = st__isolate_run_all(&rc, refs, n, run, err);
    if (s != ST_OK)
      goto restore;
  } else if (jobs > 1 && n > 1) {
    memset(&sc, 0, sizeof sc);
    pthread_mutex_init(&sc.lock, NULL);
    pthread_cond_init(&sc.cond, NULL);
    sc.rc = &rc;
    sc.refs = refs;
    sc.n = n;
    sc.done = calloc(n, sizeof *sc.done);
    sc.finished = calloc(n, sizeof *sc.finished);
    threads = calloc(jobs, sizeof *threads);
    if (sc.done == NULL || sc.finished == NULL || threads == NULL) {
      free(sc.done);
      free(sc.finished);
      s = st_error_set(err, ST_ENOMEM, "out of memory");
      goto restore;
    }
    for (i = 0; i < jobs && i < n; i++)
      if (pthread_create(&threads[n_threads], NULL, worker_main, &sc) == 0)
        n_threads++;
    if (n_threads == 0)
      worker_main(&sc); /* no threads to be had: run them here */
    for (i = 0; i < n; i++) {
      st_case_info info;
      st_case_result *r;
      int unrun = 0;
      st__fill_info(&info, &rc, &refs[i], i, n);
      pthread_mutex_lock(&sc.lock);
      if (forks(&refs[i]) && !sc.stop) {
        /* Its turn: stop the runner threads from starting cases, wait for
         * the running ones, run it here, then let them go on. */
        sc.paused = 1;
        while (sc.busy > 0)
          pthread_cond_wait(&sc.cond, &sc.lock);
        pthread_mutex_unlock(&sc.lock);
        r = st__run_one(&rc, &refs[i], i, n, 0);
        pthread_mutex_lock(&sc.lock);
        sc.done[i] = r ? r : (st_case_result *)-1;
        sc.finished[sc.n_finished++] = i;
        if (opts->fail_fast && is_failure(r))
          sc.stop = 1;
        sc.paused = 0;
        pthread_cond_broadcast(&sc.cond);
      }
      for (;;) {
        drain_finished(&sc);
        if (sc.done[i] != NULL ||
            (sc.stop && (i >= sc.next || forks(&refs[i]))))
          break;
        pthread_cond_wait(&sc.cond, &sc.lock);
      }
      r = sc.done[i];
      sc.done[i] = NULL;
      pthread_mutex_unlock(&sc.lock);
      if (r == (st_case_result *)-1) {
        /* It ran, but out of memory left no result: not a skip. */
        r = NULL;
        lost = 1;
      } else if (r != NULL) {
        st__replay(&rc, &info, r);
      } else {
        r = st__not_run(&rc, &info);
        unrun = 1;
        for (j = 0; j < n_observers; j++)
          if (observers[j].case_begin)
            observers[j].case_begin(observers[j].data, &info);
      }
      st__run_result_set(run, i, r);
      if (r == NULL)
        lost = 1;
      if (r != NULL && unrun)
        st__notify_finish(&rc, &info, r);
      for (j = 0; r != NULL && j < n_observers; j++)
        if (observers[j].case_end)
          observers[j].case_end(observers[j].data, &info, r);
    }
    for (i = 0; i < n_threads; i++)
      pthread_join(threads[i], NULL);
    free(sc.done);
    free(sc.finished);
    pthread_cond_destroy(&sc.cond);
    pthread_mutex_destroy(&sc.lock);
  } else {
    for (i = 0; i < n; i++) {
      st_case_info info;
      st_case_result *r;
      st__fill_info(&info, &rc, &refs[i], i, n);
      if (stop) {
        r = st__not_run(&rc, &info);
        for (j = 0; j < n_observers; j++)
          if (observers[j].case_begin)
            observers[j].case_begin(observers[j].data, &info);
      } else {
        r = st__run_one(&rc, &refs[i], i, n, 1);
      }
      st__run_result_set(run, i, r);
      if (r == NULL)
        lost = 1;
      if (r != NULL)
        st__notify_finish(&rc, &info, r);
      for (j = 0; r != NULL && j < n_observers; j++)
        if (observers[j].case_end)
          observers[j].case_end(observers[j].data, &info, r);
      if (opts->fail_fast && is_failure(r))
        stop = 1;
    }
  }
  if (lost) {
    /* A case without a result would count as neither passed nor failed:
     * the run as a whole has failed. */
    s = st_error_set(err, ST_ENOMEM, "out of memory recording a case's "
                     "result");
    goto restore;
  }
  for (j = 0; j < n_observers; j++)
    if (observers[j].run_end)
      observers[j].run_end(observers[j].data, run);
restore:
  if (saved_stdout >= 0) {
    fflush(stdout);
    dup2(saved_stdout, 1);
    close(saved_stdout);
  }
out:
  free(threads);
  free(refs);
  run_teardown(&rc, owned);
  if (s != ST_OK) {
    st_run_result_free(run);
    return s;
  }
  *out = run;
  return ST_OK;
}
