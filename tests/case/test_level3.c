/* SPDX-License-Identifier: MIT */
/* Level 3: whole phase sequences (golden, rounds, skip_golden), results
 * equal to level 2 for every built-in op at 1, 2, 3 and more workers than
 * elements on cpu and threads, worker deaths and hangs contained (the case
 * errors naming the worker, pid and signal, or the timeout; the next case
 * passes; no zombie; nothing in /dev/shm), worker output attached, the
 * pool kept across cases and replaced after a death, objects the workers
 * load reported as "worker N: PATH" without making the record stale. Kept
 * out of the ThreadSanitizer build (it forks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <time.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

#include "l3_testing.h"
#include "case/level3/level3.h"

typedef struct fixture {
  st_registry *reg;
  st_scene_set *set;
  st_case_result *res;
  st_run_result *run;
  int shm_before;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->reg = l3t_registry();
  f->shm_before = l3t_shm_entries();
  st_log_set_level(ST_LOG_WARNING);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st__level3_shutdown();
  st_case_result_free(f->res);
  st_run_result_free(f->run);
  st_scene_set_free(f->set);
  st_registry_free(f->reg);
  free(f);
  return 0;
}

static void run_case(fixture *f, const char *platform) {
  st_run_options opts;
  st_error err;
  st_error_clear(&err);
  st_run_options_init(&opts);
  opts.registry = f->reg;
  opts.platform = platform;
  st_case_result_free(f->res);
  f->res = NULL;
  assert_int_equal(
      st_run_case(st_scene_set_get(f->set, 0), 0, &opts, &f->res, &err), ST_OK);
}

static void run_all(fixture *f, st_run_options *opts) {
  st_error err;
  st_error_clear(&err);
  opts->registry = f->reg;
  st_run_result_free(f->run);
  f->run = NULL;
  if (st_run(f->set, opts, NULL, 0, &f->run, &err) != ST_OK)
    fail_msg("st_run: %s", err.message);
}

static const char add_scene[] =
    "scene: l3\n"
    "level: 3\n"
    "workers: %u\n"
    "kernel: %s\n"
    "golden: add\n"
    "%s"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b, dtype: float32, shape: [N], init: {fill: 2.0}}\n"
    "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
    "cases:\n"
    "  - name: c\n"
    "    params: {N: 1000}\n"
    "%s";

static void load_add(fixture *f, unsigned workers, const char *kernel,
                     const char *scene_extra, const char *case_extra) {
  char text[4096];
  snprintf(text, sizeof text, add_scene, workers, kernel, scene_extra,
           case_extra);
  st_scene_set_free(f->set);
  f->set = l3t_load(text);
}

static void st_run_case__level3_sequence_with_golden(void **state) {
  fixture *f = *state;
  load_add(f, 2, "add", "", "");
  run_case(f, "cpu");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "rehost", "record", "run",
                   "compare", "release");
  st_assert_phase_before(f->res, "golden", "rehost");
  st_assert_phase_before(f->res, "rehost", "record");
  st_assert_record_after_last_load(f->res);
}

/* axpy writes y += alpha * x: a round that did not start from the initial
 * y would not match golden. */
static void st_run_case__level3_rounds_reset_outputs(void **state) {
  fixture *f = *state;
  st_scene_set_free(f->set);
  f->set = l3t_load("scene: r\nlevel: 3\nworkers: 3\nkernel: axpy\n"
                    "args:\n"
                    "  - {tensor: x, dtype: float64, shape: [N], init: "
                    "{uniform: [-1, 1]}}\n"
                    "  - {tensor: y, dtype: float64, shape: [N], init: "
                    "{fill: 1.0}, role: inout}\n"
                    "  - {scalar: alpha, dtype: float64, value: 3.0}\n"
                    "cases:\n  - {name: c, params: {N: 100}, rounds: 3}\n");
  run_case(f, "threads");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "rehost", "record", "run",
                   "compare", "reset", "run", "compare", "reset", "run",
                   "compare", "release");
}

static void st_run_case__level3_skip_golden(void **state) {
  fixture *f = *state;
  load_add(f, 2, "add", "skip_golden: true\n", "    rounds: 2\n");
  run_case(f, "cpu");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "rehost", "record", "run", "reset", "run",
                   "release");
}

/* The workers resolve the kernel during rehost
 * (docs/plugins.md#the-lookup-order): a missing one fails rehost, which rolls
 * itself back, so no release follows. (A phase that fails after rehost still
 * gets release: decline_is_skip.) */
static void st_run_case__level3_missing_kernel_fails_rehost(void **state) {
  fixture *f = *state;
  load_add(f, 2, "no_such_op", "", "");
  run_case(f, "cpu");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_non_null(
      strstr(st_case_result_message(f->res), "BackendImplementationMissing"));
  st_assert_phases(f->res, "args", "golden", "rehost");
  assert_int_equal(st_case_result_event(f->res, 2)->status, ST_PHASE_ERROR);
}

static void st_run_case__level3_decline_is_skip(void **state) {
  fixture *f = *state;
  load_add(f, 2, "decline_add", "", "");
  run_case(f, "l3plat");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_SKIP);
  assert_non_null(strstr(st_case_result_message(f->res), "cannot run"));
  st_assert_phases(f->res, "args", "golden", "rehost", "record", "run",
                   "release");
}

/* ---- level 3 equals level 2 ------------------------------------------ */

typedef struct eq_scene {
  const char *op;
  const char *args;  /* the args: block */
  const char *cases; /* the cases: block */
} eq_scene;

#define F_UNI "init: {uniform: [-4, 4]}"
static const eq_scene eq_scenes[] = {
    {"copy",
     "  - {tensor: x, dtype: T, shape: [N], " F_UNI "}\n"
     "  - {tensor: y, dtype: T, shape: [N], role: output}\n",
     NULL},
    {"add", NULL, NULL},
    {"sub", NULL, NULL},
    {"mul", NULL, NULL},
    {"scale",
     "  - {tensor: x, dtype: T, shape: [N], " F_UNI "}\n"
     "  - {tensor: y, dtype: T, shape: [N], role: output}\n"
     "  - {scalar: s, dtype: T, value: 1.5}\n",
     NULL},
    {"axpy",
     "  - {tensor: x, dtype: T, shape: [N], " F_UNI "}\n"
     "  - {tensor: y, dtype: T, shape: [N], " F_UNI ", role: inout}\n"
     "  - {scalar: alpha, dtype: T, value: -0.75}\n",
     NULL},
    {"relu",
     "  - {tensor: x, dtype: T, shape: [N], " F_UNI "}\n"
     "  - {tensor: y, dtype: T, shape: [N], role: output}\n",
     NULL},
    {"matmul",
     "  - {tensor: a, dtype: T, shape: [M, K], " F_UNI "}\n"
     "  - {tensor: b, dtype: T, shape: [K, P], " F_UNI "}\n"
     "  - {tensor: c, dtype: T, shape: [M, P], role: output}\n",
     "  - {name: big, params: {M: 37, K: 19, P: 23, T: float32}}\n"
     "  - {name: few, params: {M: 3, K: 4, P: 2, T: float64}}\n"},
    {"softmax",
     "  - {tensor: x, dtype: T, shape: [R, C], " F_UNI "}\n"
     "  - {tensor: y, dtype: T, shape: [R, C], role: output}\n",
     "  - {name: big, params: {R: 33, C: 17, T: float32}}\n"
     "  - {name: few, params: {R: 2, C: 5, T: float64}}\n"},
    {"transpose",
     "  - {tensor: x, dtype: T, shape: [R, C], " F_UNI "}\n"
     "  - {tensor: y, dtype: T, shape: [C, R], role: output}\n",
     "  - {name: big, params: {R: 31, C: 9, T: float32}}\n"
     "  - {name: few, params: {R: 3, C: 2, T: float64}}\n"},
    /* Block partials are exact in double: float64 matches bit for bit
     * (float32 partials round; see the tolerance test below). */
    {"reduce_sum",
     "  - {tensor: x, dtype: T, shape: [N], " F_UNI "}\n"
     "  - {tensor: out, dtype: T, shape: [1], role: output}\n",
     "  - {name: big, params: {N: 100000, T: float64}}\n"
     "  - {name: few, params: {N: 5, T: float64}}\n"},
};

static const char binary_args[] =
    "  - {tensor: a, dtype: T, shape: [N], " F_UNI "}\n"
    "  - {tensor: b, dtype: T, shape: [N], " F_UNI "}\n"
    "  - {tensor: out, dtype: T, shape: [N], role: output}\n";
static const char vector_cases[] =
    "  - {name: big, params: {N: 10007, T: float32}}\n"
    "  - {name: few, params: {N: 5, T: float64}}\n";

/* Integer element-wise ops and reduce_sum wrap identically whatever the
 * shards. */
static const char int_scenes[] =
    "scene: ints\nlevel: 3\nworkers: %u\nkernel: add\ngolden: l2_add_%s\n"
    "rtol: 0\natol: 0\nargs:\n"
    "  - {tensor: a, dtype: T, shape: [N], init: {randint: [-100, 100]}}\n"
    "  - {tensor: b, dtype: T, shape: [N], init: {randint: [-100, 100]}}\n"
    "  - {tensor: out, dtype: T, shape: [N], role: output}\n"
    "cases:\n  - {name: i8, params: {N: 999, T: int8}}\n"
    "  - {name: i64, params: {N: 3, T: int64}}\n"
    "---\n"
    "scene: isum\nlevel: 3\nworkers: %u\nkernel: reduce_sum\n"
    "golden: l2_reduce_sum_%s\nrtol: 0\natol: 0\nargs:\n"
    "  - {tensor: x, dtype: T, shape: [N], init: {randint: [-100, 100]}}\n"
    "  - {tensor: out, dtype: T, shape: [1], role: output}\n"
    "cases:\n  - {name: i32, params: {N: 50000, T: int32}}\n"
    "  - {name: i16, params: {N: 9000, T: int16}}\n";

static void check_all_pass(const st_run_result *run, const char *what) {
  size_t i;
  assert_true(st_run_result_count(run) > 0);
  for (i = 0; i < st_run_result_count(run); i++) {
    const st_case_result *r = st_run_result_get(run, i);
    if (st_case_result_status(r) != ST_CASE_PASS)
      fail_msg("%s: %s::%s: %s: %s", what, st_case_result_scene(r),
               st_case_result_case(r),
               st_case_status_name(st_case_result_status(r)),
               st_case_result_message(r) ? st_case_result_message(r) : "");
    st_assert_phases(r, "args", "golden", "rehost", "record", "run", "compare",
                     "release");
  }
}

static void equals_level2(fixture *f, const char *platform) {
  static const unsigned workers[] = {1, 2, 3, 8}; /* 8 > 5 elements */
  size_t s, w;
  /* Every built-in op of op_list.h has its scene here (a new op is not
   * left out of the level-3 comparison silently). */
#define XX(name, ...) #name,
  static const char *const ops[] = {ST__BUILTIN_OP_MAP(XX)};
#undef XX
  for (s = 0; s < sizeof ops / sizeof ops[0]; s++) {
    size_t k = 0;
    while (k < sizeof eq_scenes / sizeof eq_scenes[0] &&
           strcmp(eq_scenes[k].op, ops[s]) != 0)
      k++;
    if (k == sizeof eq_scenes / sizeof eq_scenes[0])
      fail_msg("built-in op '%s' has no scene in eq_scenes", ops[s]);
  }
  for (w = 0; w < sizeof workers / sizeof workers[0]; w++) {
    char text[16384];
    size_t used = 0;
    st_run_options opts;
    for (s = 0; s < sizeof eq_scenes / sizeof eq_scenes[0]; s++) {
      const eq_scene *e = &eq_scenes[s];
      used += (size_t)snprintf(
          text + used, sizeof text - used,
          "%sscene: eq_%s\nlevel: 3\nworkers: %u\nkernel: %s\n"
          "golden: l2_%s_%s\nrtol: 0\natol: 0\nargs:\n%scases:\n%s",
          s ? "---\n" : "", e->op, workers[w], e->op, e->op, platform,
          e->args ? e->args : binary_args, e->cases ? e->cases : vector_cases);
      assert_true(used < sizeof text);
    }
    st_scene_set_free(f->set);
    f->set = l3t_load(text);
    st_run_options_init(&opts);
    opts.platform = platform;
    run_all(f, &opts);
    check_all_pass(f->run, platform);

    snprintf(text, sizeof text, int_scenes, workers[w], platform, workers[w],
             platform);
    st_scene_set_free(f->set);
    f->set = l3t_load(text);
    st_run_options_init(&opts);
    opts.platform = platform;
    run_all(f, &opts);
    check_all_pass(f->run, platform);
  }
}

static void st_run__level3_equals_level2_cpu(void **state) {
  equals_level2(*state, "cpu");
}

static void st_run__level3_equals_level2_threads(void **state) {
  equals_level2(*state, "threads");
}

/* float32 block partials are rounded to float32 before the harness adds
 * them, so a float32 reduce_sum matches level 2 within the dtype's
 * tolerance rather than bit for bit (docs/level3.md). */
static void st_run__level3_reduce_sum_float32_within_tolerance(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_scene_set_free(f->set);
  f->set = l3t_load("scene: r32\nlevel: 3\nworkers: 3\nkernel: reduce_sum\n"
                    "golden: l2_reduce_sum_cpu\nrtol: 1.0e-5\natol: 1.0e-4\n"
                    "args:\n"
                    "  - {tensor: x, dtype: float32, shape: [N], " F_UNI "}\n"
                    "  - {tensor: out, dtype: float32, shape: [1], role: "
                    "output}\n"
                    "cases:\n  - {name: c, params: {N: 100000}}\n"
                    "  - {name: empty, params: {N: 0}}\n");
  st_run_options_init(&opts);
  run_all(f, &opts);
  check_all_pass(f->run, "cpu");
}

/* ---- deaths, hangs, output ------------------------------------------- */

static const char two_scenes[] =
    "scene: bad\nlevel: 3\nworkers: 3\nkernel: %s\ngolden: add\n%s"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b, dtype: float32, shape: [N], init: {fill: 2.0}}\n"
    "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
    "cases:\n  - {name: c, params: {N: 300}%s}\n"
    "---\n"
    "scene: good\nlevel: 3\nworkers: 3\nkernel: print_add\ngolden: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, 1]}}\n"
    "  - {tensor: b, dtype: float32, shape: [N], init: {fill: 2.0}}\n"
    "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
    "cases:\n  - {name: c, params: {N: 300}}\n"
    "  - {name: d, params: {N: 30}}\n";

static long pid_of_worker(const char *output, unsigned index) {
  char key[64];
  const char *p;
  snprintf(key, sizeof key, "--- worker %u (pid ", index);
  p = output ? strstr(output, key) : NULL;
  return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void st_run__level3_worker_crash_contained(void **state) {
  fixture *f = *state;
  char text[4096];
  st_run_options opts;
  const st_case_result *bad, *good, *good2;
  const char *msg;
  snprintf(text, sizeof text, two_scenes, "crash_add", "", "");
  f->set = l3t_load(text);
  st_run_options_init(&opts);
  opts.platform = "l3plat";
  run_all(f, &opts);
  bad = st_run_result_get(f->run, 0);
  good = st_run_result_get(f->run, 1);
  good2 = st_run_result_get(f->run, 2);
  assert_int_equal(st_case_result_status(bad), ST_CASE_ERROR);
  msg = st_case_result_message(bad);
  assert_non_null(msg);
  assert_non_null(strstr(msg, "worker 1 (pid "));
  assert_non_null(strstr(msg, "SIGSEGV"));
  /* What the worker printed before it died is attached. */
  assert_non_null(st_case_result_output(bad));
  assert_non_null(
      strstr(st_case_result_output(bad), "about to crash in shard 1"));
  st_assert_phases(bad, "args", "golden", "rehost", "record", "run", "release");
  /* The next cases pass on a new pool, which then serves both. */
  assert_int_equal(st_case_result_status(good), ST_CASE_PASS);
  assert_int_equal(st_case_result_status(good2), ST_CASE_PASS);
  assert_true(pid_of_worker(st_case_result_output(good), 2) > 0);
  assert_int_equal(pid_of_worker(st_case_result_output(good), 2),
                   pid_of_worker(st_case_result_output(good2), 2));
  assert_int_not_equal(pid_of_worker(st_case_result_output(bad), 0),
                       pid_of_worker(st_case_result_output(good), 0));
  assert_int_equal(l3t_zombies(), 0);
  st__level3_shutdown();
  l3t_assert_no_children();
  assert_int_equal(l3t_shm_entries(), f->shm_before);
}

static void st_run__level3_hang_times_out(void **state) {
  fixture *f = *state;
  char text[4096];
  st_run_options opts;
  const st_case_result *bad;
  uint64_t t0;
  struct timespec ts;
  snprintf(text, sizeof text, two_scenes, "hang_add", "", ", timeout: 0.3");
  f->set = l3t_load(text);
  st_run_options_init(&opts);
  opts.platform = "l3plat";
  clock_gettime(CLOCK_MONOTONIC, &ts);
  t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  run_all(f, &opts);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  /* Killed at the deadline plus the grace, not waited for. */
  assert_true((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - t0 <
              10000000000u);
  bad = st_run_result_get(f->run, 0);
  assert_int_equal(st_case_result_status(bad), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(bad), "timed out after 0.3 s"));
  st_assert_phases(bad, "args", "golden", "rehost", "record", "run", "release");
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 1)),
                   ST_CASE_PASS);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 2)),
                   ST_CASE_PASS);
  assert_int_equal(l3t_zombies(), 0);
  st__level3_shutdown();
  l3t_assert_no_children();
}

/* --timeout applies to level-3 cases without isolating them: the workers
 * are what is killed. */
static void st_run__level3_option_timeout(void **state) {
  fixture *f = *state;
  char text[4096];
  st_run_options opts;
  const st_case_result *bad;
  snprintf(text, sizeof text, two_scenes, "hang_add", "", "");
  f->set = l3t_load(text);
  st_run_options_init(&opts);
  opts.platform = "l3plat";
  opts.timeout = 0.25;
  run_all(f, &opts);
  bad = st_run_result_get(f->run, 0);
  assert_int_equal(st_case_result_status(bad), ST_CASE_ERROR);
  assert_non_null(
      strstr(st_case_result_message(bad), "timed out after 0.25 s"));
  /* In this process, not a child. */
  assert_int_equal(st_case_result_pid(bad), (long)getpid());
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 1)),
                   ST_CASE_PASS);
  assert_int_equal(l3t_zombies(), 0);
  st__level3_shutdown();
  l3t_assert_no_children();
}

static void st_run_case__level3_worker_output_attached(void **state) {
  fixture *f = *state;
  const char *out;
  load_add(f, 2, "print_add", "", "");
  run_case(f, "l3plat");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  out = st_case_result_output(f->res);
  assert_non_null(out);
  assert_non_null(strstr(out, "stdout of shard 0"));
  assert_non_null(strstr(out, "stderr of shard 1"));
  assert_non_null(strstr(out, "--- worker 1 (pid "));
}

/* A library a worker loads is reported in the run event as "worker N:
 * PATH", and gets no load event: the harness's record cannot be stale. */
static void st_run_case__level3_worker_loads_reported(void **state) {
  fixture *f = *state;
  size_t i, hits = 0;
  char want[1100];
  load_add(f, 2, "load_add", "", "");
  run_case(f, "l3plat");
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  assert_int_equal(st_case_result_record_stale(f->res), 0);
  st_assert_record_after_last_load(f->res);
  snprintf(want, sizeof want, "worker 1: %s", ST_FIXTURE_RUN);
  for (i = 0; i < st_case_result_event_count(f->res); i++) {
    const st_event *ev = st_case_result_event(f->res, i);
    size_t k;
    assert_string_not_equal(ev->name, "load");
    for (k = 0; k < ev->n_loaded; k++)
      if (strcmp(ev->name, "run") == 0 && strstr(ev->loaded[k], want))
        hits++;
  }
  assert_int_equal(hits, 1);
  assert_null(dlopen(ST_FIXTURE_RUN, RTLD_NOW | RTLD_NOLOAD));
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(st_run_case__level3_sequence_with_golden),
      T(st_run_case__level3_rounds_reset_outputs),
      T(st_run_case__level3_skip_golden),
      T(st_run_case__level3_missing_kernel_fails_rehost),
      T(st_run_case__level3_decline_is_skip),
      T(st_run__level3_equals_level2_cpu),
      T(st_run__level3_equals_level2_threads),
      T(st_run__level3_reduce_sum_float32_within_tolerance),
      T(st_run__level3_worker_crash_contained),
      T(st_run__level3_hang_times_out),
      T(st_run__level3_option_timeout),
      T(st_run_case__level3_worker_output_attached),
      T(st_run_case__level3_worker_loads_reported),
#undef T
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  st_registry_free(l3t_builtin);
  return rc;
}
