/* SPDX-License-Identifier: MIT */
/* The two axes' tables: which executor a case gets (and its flags), and
 * which scheduler a run gets (st__sched_pick), for every rule that decides
 * it: --isolate, a timeout (the option's or the case's) on a case whose
 * executor does not own it, -j with more than one case, else serial. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

#include "case/exec.h"
#include "run/fanout.h"
#include "run/sched.h"

/* A level-2 scene of two cases (the second with its own timeout) and a
 * level-3 scene of two cases. */
static const char scenes_yaml[] =
    "scene: two\nkernel: add\ngolden: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
    "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
    "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
    "cases:\n  - {name: plain}\n  - {name: timed, timeout: 5}\n"
    "---\n"
    "scene: three\nlevel: 3\nworkers: 2\nkernel: add\ngolden: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
    "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
    "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
    "cases:\n  - {name: x}\n  - {name: y}\n";

typedef struct fixture {
  st_scene_set *set;
  st_run_options opts;
  st__runctx rc;
  st__fanout fo;
  st__schedctx sc;
  st_case_ref refs[4];
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  st_error_list errors;
  size_t i;
  assert_non_null(f);
  st_error_list_init(&errors);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  assert_int_equal(st_scene_set_load_string(f->set, "sched.yaml", scenes_yaml,
                                            strlen(scenes_yaml), NULL, &errors),
                   ST_OK);
  st_error_list_free(&errors);
  assert_int_equal(st_scene_set_count(f->set), 2);
  for (i = 0; i < 4; i++) {
    f->refs[i].scene = st_scene_set_get(f->set, i / 2);
    f->refs[i].index = i % 2;
  }
  st_run_options_init(&f->opts);
  f->rc.opts = &f->opts;
  st__fanout_init(&f->fo, NULL, 0);
  f->sc.rc = &f->rc;
  f->sc.fo = &f->fo;
  f->sc.refs = f->refs;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st__fanout_free(&f->fo);
  st_scene_set_free(f->set);
  free(f);
  return 0;
}

/* The cases [first, first + n) of refs: 0 plain, 1 timed (level 2), 2 and
 * 3 level 3. */
static const st__scheduler *pick(fixture *f, size_t first, size_t n) {
  f->sc.refs = f->refs + first;
  f->sc.n = n;
  return st__sched_pick(&f->sc);
}

static void executor_for__level2_runs_in_process(void **state) {
  fixture *f = *state;
  const st__executor *e = st__executor_for(f->refs[0].scene);
  assert_ptr_equal(e, &st__exec_inproc);
  assert_int_equal(e->flags, 0);
  assert_non_null(e->run);
}

static void executor_for__level3_forks_and_owns_its_timeout(void **state) {
  fixture *f = *state;
  const st__executor *e = st__executor_for(f->refs[2].scene);
  assert_string_equal(e->name, "level3");
  /* It also resolves the kernel and runs the platform's hooks on its
   * workers (docs/plugins.md#platform-hooks-prepare-and-release), and forks its
   * pools before any case runs. */
  assert_int_equal(e->flags, ST__EXEC_FORKS | ST__EXEC_OWNS_TIMEOUT |
                                 ST__EXEC_OWN_KERNEL);
  assert_non_null(e->run_begin);
  assert_true(e->slot < ST__EXEC_SLOTS);
  assert_true(e->slot != st__exec_inproc.slot);
  /* Its pools end with the run and are forgotten in a child. */
  assert_non_null(e->run_end);
  assert_non_null(e->after_fork);
}

static void sched_pick__serial_at_one_job(void **state) {
  fixture *f = *state;
  assert_ptr_equal(pick(f, 2, 2), &st__sched_serial);
  assert_ptr_equal(pick(f, 0, 1), &st__sched_serial);
}

static void sched_pick__serial_for_a_single_case_at_jobs(void **state) {
  fixture *f = *state;
  f->opts.jobs = 4;
  assert_ptr_equal(pick(f, 0, 1), &st__sched_serial);
}

static void sched_pick__threads_at_jobs(void **state) {
  fixture *f = *state;
  f->opts.jobs = 2;
  assert_ptr_equal(pick(f, 2, 2), &st__sched_threads);
}

static void sched_pick__isolate_under_isolate(void **state) {
  fixture *f = *state;
  f->opts.isolate = 1;
  assert_ptr_equal(pick(f, 0, 1), &st__sched_isolate);
  assert_ptr_equal(pick(f, 2, 2), &st__sched_isolate);
}

static void sched_pick__isolate_for_option_timeout_at_level2(void **state) {
  fixture *f = *state;
  f->opts.timeout = 1.0;
  f->opts.jobs = 2;
  assert_ptr_equal(pick(f, 0, 1), &st__sched_isolate);
}

static void sched_pick__isolate_for_a_case_timeout(void **state) {
  fixture *f = *state;
  /* Only the second case has a timeout: it takes the whole run. */
  assert_ptr_equal(pick(f, 0, 1), &st__sched_serial);
  assert_ptr_equal(pick(f, 1, 1), &st__sched_isolate);
  assert_ptr_equal(pick(f, 0, 2), &st__sched_isolate);
  assert_true(st__sched_timeout(&f->sc, 1) == 5.0);
  assert_false(st__sched_owns_timeout(&f->sc, 1));
}

static void sched_pick__level3_timeout_does_not_isolate(void **state) {
  fixture *f = *state;
  f->opts.timeout = 1.0;
  f->opts.jobs = 2;
  /* Level 3 kills its own workers at the deadline. */
  assert_ptr_equal(pick(f, 2, 2), &st__sched_threads);
  assert_true(st__sched_owns_timeout(&f->sc, 0));
  assert_true(st__sched_forks(&f->sc, 0));
  assert_true(st__sched_timeout(&f->sc, 0) == 1.0);
}

static void sched_pick__supervise_when_asked(void **state) {
  fixture *f = *state;
  f->opts.supervise = 1;
  /* Every run, whatever its jobs, timeouts or levels: the supervised
   * children run them. */
  assert_ptr_equal(pick(f, 0, 1), &st__sched_supervise);
  assert_ptr_equal(pick(f, 1, 1), &st__sched_supervise);
  f->opts.jobs = 2;
  f->opts.timeout = 1.0;
  assert_ptr_equal(pick(f, 0, 2), &st__sched_supervise);
  assert_ptr_equal(pick(f, 2, 2), &st__sched_supervise);
}

static void sched_pick__isolate_wins_over_supervise(void **state) {
  fixture *f = *state;
  f->opts.supervise = 1;
  f->opts.isolate = 1;
  assert_ptr_equal(pick(f, 0, 1), &st__sched_isolate);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(executor_for__level2_runs_in_process),
      T(executor_for__level3_forks_and_owns_its_timeout),
      T(sched_pick__serial_at_one_job),
      T(sched_pick__serial_for_a_single_case_at_jobs),
      T(sched_pick__threads_at_jobs),
      T(sched_pick__isolate_under_isolate),
      T(sched_pick__isolate_for_option_timeout_at_level2),
      T(sched_pick__isolate_for_a_case_timeout),
      T(sched_pick__level3_timeout_does_not_isolate),
      T(sched_pick__supervise_when_asked),
      T(sched_pick__isolate_wins_over_supervise),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
