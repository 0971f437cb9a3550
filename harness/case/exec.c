/* SPDX-License-Identifier: MIT */
/* The executor table (exec.h): which executor runs a scene's cases, the
 * run-wide hooks called on all of them, and running one case from its
 * first phase to its result through its executor, with the check that
 * its autoload record did not become stale. The only file of case/ that
 * names level 3 (it includes case/level3/level3.h for its table). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <scenetest/log.h>
#include <scenetest/record.h>

#include "base/log_sink.h"
#include "base/proc.h"
#include "base/util.h"
#include "case/bench.h"
#include "case/case_env.h"
#include "case/exec.h"
#include "case/level3/level3.h"
#include "case/result.h"
#include "scene/quarantine.h"

static const st__executor *const executors[] = {
    &st__exec_inproc,
    &st__exec_level3,
    &st__exec_bench,
};

#define N_EXECUTORS ST__ARRAY_SIZE(executors)

const st__executor *st__executor_for(const st_scene *scene) {
  /* The scene's level is what says where its kernels run
   * (docs/scene-format.md#scene-keys: 2 = in-process, 3 = worker processes). */
  if (scene->level == 3)
    return &st__exec_level3;
  /* `scenetest bench` (docs/bench.md): level-2 cases are timed. */
  return st__bench_active() ? &st__exec_bench : &st__exec_inproc;
}

void st__executors_run_begin(st__runctx *rc, const st_case_ref *refs,
                             size_t n) {
  size_t i;
  for (i = 0; i < N_EXECUTORS; i++)
    if (executors[i]->run_begin != NULL)
      executors[i]->run_begin(rc, refs, n);
}

void st__executors_run_end(st__runctx *rc) {
  size_t i;
  for (i = 0; i < N_EXECUTORS; i++)
    if (executors[i]->run_end != NULL)
      executors[i]->run_end(rc);
}

void st__executors_after_fork(st__runctx *rc) {
  size_t i;
  for (i = 0; i < N_EXECUTORS; i++)
    if (executors[i]->after_fork != NULL)
      executors[i]->after_fork(rc);
}

/* After the case: a watched module loaded after the record makes it
 * stale. */
static void check_record(st__casectx *cc) {
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
        !st_watch_match(cc->run->watch, cc->run->n_watch, ev->object, &module))
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

st_case_result *st__case_run(st__runctx *rc, const st_case_ref *ref,
                             size_t index, size_t total,
                             const st_observer *live) {
  const st_scene *scene = ref->scene;
  const st__executor *exec = st__executor_for(scene);
  st__casectx cc;
  uint64_t t0 = st__now_ns();

  memset(&cc, 0, sizeof cc);
  cc.run = rc;
  cc.live = live;
  cc.exec_flags = exec->flags;
  st__case_info_fill(&cc.info, rc, ref, index, total);
  cc.res = st__case_result_new(cc.info.scene, cc.info.name, cc.info.file,
                               cc.info.line, cc.info.platform, cc.info.seed);
  if (cc.res == NULL)
    return NULL;
  st__case_result_set_pid(cc.res, (long)st__proc_pid());
  if (live != NULL && live->case_begin != NULL)
    live->case_begin(live->data, &cc.info);
  {
    st__env_saved saved = {0};
    if (st__case_env_set(&cc, scene, ref->index, &saved) &&
        st__case_needs_ok(&cc, scene, ref->index))
      exec->run(&cc, scene, ref->index);
    st__case_env_unset(&cc, &saved);
  }
  if (scene->cases[ref->index].expect_error) {
    const st__case *k = &scene->cases[ref->index];
    st__case_result_apply_expect_error(
        cc.res, cc.kernel_failed ? cc.kernel_message : NULL,
        k->expect_message ? k->expect_message : scene->expect_message);
  }
  check_record(&cc);
  if (cc.oom)
    st__case_result_set_status(cc.res, ST_CASE_ERROR,
                               "out of memory recording events");
  if (scene->cases[ref->index].expect_fail)
    st__case_result_apply_expect(cc.res);
  if (scene->cases[ref->index].quarantine != NULL) {
    const st__quarantine *q = scene->cases[ref->index].quarantine;
    char today[11];
    st__quarantine_today(today);
    st__case_result_apply_quarantine(
        cc.res, q, st__quarantine_applies(q, cc.info.platform, today),
        /* expired here: it would apply on its last day */
        st__quarantine_expired(q, today) &&
            st__quarantine_applies(q, cc.info.platform, q->until));
  }
  if (rc->opts->strict_mistrust && st__case_result_mistrust(cc.res) &&
      st_case_result_status(cc.res) == ST_CASE_PASS) {
    char msg[1024];
    snprintf(msg, sizeof msg, "mistrusted (--strict-mistrust): %s",
             st__case_result_mistrust(cc.res));
    st__case_result_override(cc.res, ST_CASE_FAIL, msg);
  }
  st__case_result_set_duration(cc.res, st__now_ns() - t0);
  /* The case's --log-file lines in one write (the logger buffers them). */
  st__log_flush();
  return cc.res;
}
