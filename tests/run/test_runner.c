/* SPDX-License-Identifier: MIT */
/* The level-2 runner: whole phase sequences (golden included), rounds,
 * skip_golden precedence, verdicts (fail, error, skip), lookups through the
 * registry, loaded objects attributed to phases, record staleness, -j. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

#include "base/pool.h"

static void *must_dlopen(const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    fail_msg("dlopen %s: %s", path, dlerror());
  return h;
}

static st_status add_f32(st_op_call *c) {
  const float *a = c->tensors[0].data, *b = c->tensors[1].data;
  float *out = c->tensors[2].data;
  size_t i;
  for (i = 0; i < c->tensors[2].numel; i++)
    out[i] = a[i] + b[i];
  return ST_OK;
}

static st_status add_wrong(st_op_call *c) {
  float *out = c->tensors[2].data;
  add_f32(c);
  if (c->tensors[2].numel > 5)
    out[5] += 1.0f;
  return ST_OK;
}

static st_status add_touch_input(st_op_call *c) {
  float *a = c->tensors[0].data;
  add_f32(c);
  a[3] = 1234.0f;
  return ST_OK;
}

static st_status add_decline(st_op_call *c) {
  return st_op_call_fail(c, ST_ESKIP, "this device cannot run %s", c->op);
}

static st_status add_load_golden(st_op_call *c) {
  (void)must_dlopen(ST_FIXTURE_GOLDEN);
  return add_f32(c);
}

static st_status add_load_run(st_op_call *c) {
  (void)must_dlopen(ST_FIXTURE_RUN);
  return add_f32(c);
}

static st_status add_load_strict(st_op_call *c) {
  (void)must_dlopen(ST_FIXTURE_STRICT);
  return add_f32(c);
}

/* Blocks until the observer has seen case "b" finish (bounded: a broken
 * finish order fails the test instead of hanging it). */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t order_cond = PTHREAD_COND_INITIALIZER;
static int b_finished;
static st_status add_wait_b(st_op_call *c) {
  struct timespec until;
  int ok = 1;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 20;
  pthread_mutex_lock(&order_lock);
  while (!b_finished && ok)
    ok = pthread_cond_timedwait(&order_cond, &order_lock, &until) == 0;
  pthread_mutex_unlock(&order_lock);
  if (!b_finished)
    return st_op_call_fail(c, ST_EKERNEL, "case b never finished first");
  return add_f32(c);
}

static int run_calls;
static st_status add_counting(st_op_call *c) {
  run_calls++;
  return add_f32(c);
}

/* The golden's thread cap as the runner passed it, last call. */
static unsigned golden_cap_seen;
static st_status add_cap_golden(st_op_call *c) {
  golden_cap_seen = c->max_threads;
  return add_f32(c);
}

static const char *const test_platforms[] = {"testplat", NULL};

static st_status test_init(st_registry *reg, st_error *err) {
  static const struct {
    const char *op;
    const char *backend;
    st_op_fn fn;
  } regs[] = {
      {"add", "testplat", add_f32},
      {"add_wrong", "testplat", add_wrong},
      {"add_touch_input", "testplat", add_touch_input},
      {"add_decline", "testplat", add_decline},
      {"add_load_run", "testplat", add_load_run},
      {"add_load_strict", "testplat", add_load_strict},
      {"add_counting", "testplat", add_counting},
      {"add_wait_b", "testplat", add_wait_b},
      {"add_load_golden", ST_BACKEND_REFERENCE, add_load_golden},
      {"add_cap_golden", ST_BACKEND_REFERENCE, add_cap_golden},
  };
  size_t i;
  for (i = 0; i < sizeof regs / sizeof regs[0]; i++) {
    st_status rc = st_registry_register(reg, "testmod", regs[i].op,
                                        regs[i].backend, regs[i].fn, err);
    if (rc != ST_OK)
      return rc;
  }
  return ST_OK;
}

static const st_module test_module = {ST_ABI_VERSION, sizeof(st_module),
                                      "testmod", test_platforms, test_init};

typedef struct fixture {
  st_registry *reg;
  st_scene_set *set;
  st_case_result *res;
  st_run_result *run;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  st_error err;
  st_error_clear(&err);
  assert_non_null(f);
  assert_int_equal(st_registry_new_builtin(&f->reg), ST_OK);
  assert_int_equal(st_registry_add_module(f->reg, &test_module, &err), ST_OK);
  st_log_set_level(ST_LOG_WARNING);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st_case_result_free(f->res);
  st_run_result_free(f->run);
  st_scene_set_free(f->set);
  st_registry_free(f->reg);
  free(f);
  return 0;
}

/* Options of a run on f's registry and platform. */
static void init_opts(fixture *f, st_run_options *opts, const char *platform) {
  st_run_options_init(opts);
  opts->registry = f->reg;
  opts->platform = platform;
}

/* Loads text as file `name` into f->set; fails the test with every load
 * error when it does not load. */
static void load_text(fixture *f, const char *name, const char *text) {
  st_error_list errs;
  size_t i;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  if (st_scene_set_load_string(f->set, name, text, strlen(text), NULL, &errs) !=
      ST_OK) {
    char buf[2048];
    for (i = 0; i < errs.count; i++)
      print_error("%s\n", st_error_format(&errs.items[i], buf, sizeof buf));
    st_error_list_free(&errs);
    fail_msg("scene %s did not load", name);
  }
  st_error_list_free(&errs);
}

/* A scene adding two float32 vectors; kernel/golden/extra lines vary. */
static void load(fixture *f, const char *kernel, const char *golden,
                 const char *scene_extra, const char *case_extra) {
  char text[4096];
  snprintf(text, sizeof text,
           "scene: t\n"
           "kernel: %s\n"
           "golden: %s\n"
           "%s"
           "args:\n"
           "  - {tensor: a, dtype: float32, shape: [N], init: {uniform: [-1, "
           "1]}}\n"
           "  - {tensor: b, dtype: float32, shape: [N], init: {fill: 2.0}}\n"
           "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
           "cases:\n"
           "  - name: c\n"
           "    params: {N: 16}\n"
           "%s",
           kernel, golden, scene_extra, case_extra);
  load_text(f, "t.yaml", text);
}

static void run1(fixture *f, const st_run_options *opts_in) {
  st_run_options opts;
  st_error err;
  st_error_clear(&err);
  if (opts_in)
    opts = *opts_in;
  else
    st_run_options_init(&opts);
  opts.registry = f->reg;
  if (opts.platform == NULL || strcmp(opts.platform, "cpu") == 0)
    opts.platform = "testplat";
  assert_int_equal(
      st_run_case(st_scene_set_get(f->set, 0), 0, &opts, &f->res, &err), ST_OK);
}

static void st_run_case__level2_sequence_with_golden(void **state) {
  fixture *f = *state;
  load(f, "add", "add", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
  st_assert_phase_before(f->res, "golden", "record");
  st_assert_phase_before(f->res, "record", "run");
  st_assert_record_after_last_load(f->res);
}

static void st_run_case__level2_sequence_with_rounds(void **state) {
  fixture *f = *state;
  load(f, "add", "add", "", "    rounds: 3\n");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare",
                   "reset", "run", "compare", "reset", "run", "compare");
}

static void st_run_case__rounds_option_overrides_case(void **state) {
  fixture *f = *state;
  st_run_options opts;
  size_t i, n;
  int last_round = -1;
  load(f, "add", "add", "", "    rounds: 3\n");
  st_run_options_init(&opts);
  opts.rounds = 2;
  run1(f, &opts);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare",
                   "reset", "run", "compare");
  n = st_case_result_event_count(f->res);
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(f->res, i);
    if (strcmp(ev->name, "args") == 0 || strcmp(ev->name, "golden") == 0 ||
        strcmp(ev->name, "record") == 0)
      assert_int_equal(ev->round, -1);
    else
      last_round = ev->round;
  }
  assert_int_equal(last_round, 1);
}

static void st_run_case__scene_skip_golden(void **state) {
  fixture *f = *state;
  load(f, "add", "add", "skip_golden: true\n", "    rounds: 2\n");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "record", "run", "reset", "run");
}

static void st_run_case__case_skip_golden_overrides_scene(void **state) {
  fixture *f = *state;
  load(f, "add", "add", "skip_golden: true\n", "    skip_golden: false\n");
  run1(f, NULL);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
}

static void st_run_case__option_skip_golden_overrides_case(void **state) {
  fixture *f = *state;
  st_run_options opts;
  load(f, "add", "add", "", "    skip_golden: false\n");
  st_run_options_init(&opts);
  opts.skip_golden = 1;
  run1(f, &opts);
  st_assert_phases(f->res, "args", "record", "run");
}

static void st_run_case__wrong_kernel_fails_with_index(void **state) {
  fixture *f = *state;
  const char *msg;
  load(f, "add_wrong", "add", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_FAIL);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
  assert_int_equal(st_case_result_event(f->res, 4)->status, ST_PHASE_FAIL);
  msg = st_case_result_message(f->res);
  assert_non_null(msg);
  assert_non_null(strstr(msg, "'out'"));
  assert_non_null(strstr(msg, "[5]"));
}

static void st_run_case__first_failing_round_ends_case(void **state) {
  fixture *f = *state;
  load(f, "add_wrong", "add", "", "    rounds: 3\n");
  run1(f, NULL);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
}

static void st_run_case__modified_input_fails(void **state) {
  fixture *f = *state;
  load(f, "add_touch_input", "add", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_FAIL);
  assert_non_null(strstr(st_case_result_message(f->res), "'a'"));
}

static void st_run_case__declined_kernel_is_skip(void **state) {
  fixture *f = *state;
  load(f, "add_decline", "add", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_SKIP);
  assert_string_equal(st_case_result_message(f->res),
                      "this device cannot run add_decline");
  st_assert_phases(f->res, "args", "golden", "record", "run");
  assert_int_equal(st_case_result_event(f->res, 3)->status, ST_PHASE_SKIP);
}

static void st_run_case__missing_kernel_is_error(void **state) {
  fixture *f = *state;
  load(f, "no_such_op", "add", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(f->res),
                      "BackendImplementationMissing: backend 'testplat' is "
                      "missing required implementation: kernel for op "
                      "'no_such_op' (implemented by: none)");
  /* docs/plugins.md#the-lookup-order: the kernel is resolved at the end of
   * args. */
  st_assert_phases(f->res, "args");
  assert_int_equal(st_case_result_event(f->res, 0)->status, ST_PHASE_ERROR);
}

static void st_run_case__missing_golden_is_error(void **state) {
  fixture *f = *state;
  load(f, "add_wrong", "add_wrong", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(f->res),
                      "BackendImplementationMissing: backend 'reference' is "
                      "missing required implementation: golden for op "
                      "'add_wrong' (implemented by: testplat)");
  st_assert_phases(f->res, "args", "golden");
}

static void st_run_case__binding_error_is_case_error(void **state) {
  fixture *f = *state;
  /* matmul needs 2-D tensors: the built-in check names the mismatch. */
  load(f, "matmul", "matmul", "", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(f->res), "matmul"));
}

static size_t count_loaded(const st_event *ev, const char *needle) {
  size_t i, n = 0;
  for (i = 0; i < ev->n_loaded; i++)
    if (strstr(ev->loaded[i], needle) != NULL)
      n++;
  return n;
}

static void st_run_case__golden_load_attributed_to_golden(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const char *watch[] = {"fixture=libst_fixture_golden.so*"};
  size_t i, n, loads = 0;
  int fds[2];
  char log[8192];
  ssize_t got;
  load(f, "add", "add_load_golden", "", "");
  st_run_options_init(&opts);
  opts.watch = watch;
  opts.n_watch = 1;
  opts.strict_record = 1;
  /* Capture this process's one record line. */
  assert_int_equal(pipe(fds), 0);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  st_log_set_fd(fds[1]);
  st_log_set_level(ST_LOG_TIMING);
  st_record_reset();
  run1(f, &opts);
  st_log_set_fd(2);
  st_log_set_level(ST_LOG_WARNING);
  got = read(fds[0], log, sizeof log - 1);
  close(fds[0]);
  close(fds[1]);
  assert_true(got > 0);
  log[got] = '\0';
  /* The record, taken after golden, sees what golden loaded. */
  assert_non_null(strstr(log, "[TIMING] torch_backend_autoload "));
  assert_non_null(strstr(log, " fixture_loaded=true pid="));
  assert_true(st_case_result_event(f->res, 3)->emitted);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
  assert_int_equal(
      count_loaded(st_case_result_event(f->res, 1), "libst_fixture_golden.so"),
      1);
  n = st_case_result_event_count(f->res);
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(f->res, i);
    if (strcmp(ev->name, "load") == 0) {
      assert_string_equal(ev->phase, "golden");
      assert_non_null(strstr(ev->object, "libst_fixture_golden.so"));
      loads++;
    }
  }
  assert_int_equal(loads, 1);
  /* The load event follows the golden event, before the record. */
  assert_string_equal(st_case_result_event(f->res, 2)->name, "load");
  st_assert_record_after_last_load(f->res);
  assert_int_equal(st_case_result_record_stale(f->res), 0);
}

static void st_run_case__run_load_makes_record_stale(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const char *watch[] = {"fixture=libst_fixture_run.so*"};
  load(f, "add_load_run", "add", "", "    rounds: 2\n");
  st_run_options_init(&opts);
  opts.watch = watch;
  opts.n_watch = 1;
  run1(f, &opts);
  /* Not strict: a warning and the flag, the verdict stands. */
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  assert_int_equal(st_case_result_record_stale(f->res), 1);
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare",
                   "reset", "run", "compare");
  assert_int_equal(
      count_loaded(st_case_result_event(f->res, 3), "libst_fixture_run.so"), 1);
}

static void st_run_case__strict_record_makes_stale_an_error(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const char *watch[] = {"fixture=libst_fixture_strict.so*"};
  const char *msg;
  load(f, "add_load_strict", "add", "", "");
  st_run_options_init(&opts);
  opts.watch = watch;
  opts.n_watch = 1;
  opts.strict_record = 1;
  run1(f, &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_int_equal(st_case_result_record_stale(f->res), 1);
  msg = st_case_result_message(f->res);
  assert_non_null(strstr(msg, "autoload record is stale: watched module "
                              "'fixture'"));
  assert_non_null(strstr(msg, "libst_fixture_strict.so"));
  assert_non_null(strstr(msg, "during phase 'run'"));
  st_assert_phases(f->res, "args", "golden", "record", "run", "compare");
}

static void st_run_case__strict_record_quiet_when_fresh(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const char *watch[] = {"fixture=libst_fixture_never.so*"};
  load(f, "add", "add", "", "");
  st_run_options_init(&opts);
  opts.watch = watch;
  opts.n_watch = 1;
  opts.strict_record = 1;
  run1(f, &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
  assert_int_equal(st_case_result_record_stale(f->res), 0);
}

/* --golden-threads unset: the golden gets max(1, min(8, cores / jobs))
 * (docs/cli.md#options) whatever -j is; set, it gets exactly that. */
static void st_run__golden_threads_default_follows_jobs(void **state) {
  fixture *f = *state;
  st_run_options opts;
  static const unsigned jobs[] = {1, 2, 3, 64};
  load(f, "add", "add_cap_golden", "", "");
  for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
    st_run_options_init(&opts);
    opts.jobs = jobs[i];
    golden_cap_seen = 0;
    run1(f, &opts);
    assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
    unsigned cores = st__ncores(), want = cores / jobs[i];
    want = want > 8 ? 8 : want < 1 ? 1 : want;
    assert_int_equal(golden_cap_seen, want);
    st_case_result_free(f->res);
    f->res = NULL;
  }
  st_run_options_init(&opts);
  opts.jobs = 64;
  opts.golden_threads = 3;
  run1(f, &opts);
  assert_int_equal(golden_cap_seen, 3);
}

static void st_run__jobs_give_same_events(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_result *r1 = NULL, *r2 = NULL;
  st_error err;
  char text[8192];
  size_t i, j, used = 0;

  used += (size_t)snprintf(text + used, sizeof text - used,
                           "scene: many\nkernel: add\nargs:\n"
                           "  - {tensor: a, dtype: float32, shape: [N], "
                           "init: {normal: [0, 1]}}\n"
                           "  - {tensor: b, dtype: float32, shape: [N], "
                           "init: {uniform: [0, 1]}}\n"
                           "  - {tensor: out, dtype: float32, shape: [N], "
                           "role: output}\ncases:\n");
  for (i = 0; i < 12; i++)
    used += (size_t)snprintf(text + used, sizeof text - used,
                             "  - {name: c%zu, params: {N: %zu}, rounds: "
                             "%zu}\n",
                             i, 100 + i * 37, 1 + i % 3);
  load_text(f, "many.yaml", text);
  init_opts(f, &opts, "threads");
  st_error_clear(&err);
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &r1, &err), ST_OK);
  opts.jobs = 3;
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &r2, &err), ST_OK);
  assert_int_equal(st_run_result_count(r1), 12);
  assert_int_equal(st_run_result_count(r2), 12);
  for (i = 0; i < 12; i++) {
    const st_case_result *a = st_run_result_get(r1, i);
    const st_case_result *b = st_run_result_get(r2, i);
    assert_string_equal(st_case_result_case(a), st_case_result_case(b));
    assert_int_equal(st_case_result_status(a), ST_CASE_PASS);
    assert_int_equal(st_case_result_status(b), ST_CASE_PASS);
    assert_int_equal(st_case_result_event_count(a),
                     st_case_result_event_count(b));
    for (j = 0; j < st_case_result_event_count(a); j++) {
      const st_event *ea = st_case_result_event(a, j);
      const st_event *eb = st_case_result_event(b, j);
      assert_string_equal(ea->name, eb->name);
      assert_int_equal(ea->round, eb->round);
      assert_int_equal(ea->status, eb->status);
    }
  }
  assert_int_equal(st_run_result_exit_code(r2), 0);
  st_run_result_free(r1);
  st_run_result_free(r2);
}

typedef struct order_log {
  char names[64][32];
  size_t n;
} order_log;

static void obs_case_end(void *data, const st_case_info *info,
                         const st_case_result *r) {
  order_log *o = data;
  (void)r;
  if (o->n < 64)
    snprintf(o->names[o->n++], sizeof o->names[0], "%s", info->name);
}

typedef struct finish_log {
  char finished[8][8];
  char ended[8][8];
  size_t n_finished, n_ended;
} finish_log;

static void fin_case_finish(void *data, const st_case_info *info,
                            const st_case_result *r) {
  finish_log *o = data;
  (void)r;
  if (o->n_finished < 8)
    snprintf(o->finished[o->n_finished++], 8, "%s", info->name);
  if (strcmp(info->name, "b") == 0) {
    pthread_mutex_lock(&order_lock);
    b_finished = 1;
    pthread_cond_broadcast(&order_cond);
    pthread_mutex_unlock(&order_lock);
  }
}

static void fin_case_end(void *data, const st_case_info *info,
                         const st_case_result *r) {
  finish_log *o = data;
  (void)r;
  if (o->n_ended < 8)
    snprintf(o->ended[o->n_ended++], 8, "%s", info->name);
}

static void st_run__case_finish_in_finish_order(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_result *r = NULL;
  st_error err;
  finish_log log;
  st_observer obs;
  /* Case a's kernel waits until the observer saw b finish: at -j 2,
   * case_finish must come b then a, case_end a then b. */
  const char *text = "scene: sa\nkernel: add_wait_b\ngolden: add\nargs:\n"
                     "  - {tensor: x, dtype: float32, shape: [4]}\n"
                     "  - {tensor: y, dtype: float32, shape: [4]}\n"
                     "  - {tensor: z, dtype: float32, shape: [4], "
                     "role: output}\ncases:\n  - {name: a}\n"
                     "---\nscene: sb\nkernel: add\nargs:\n"
                     "  - {tensor: x, dtype: float32, shape: [4]}\n"
                     "  - {tensor: y, dtype: float32, shape: [4]}\n"
                     "  - {tensor: z, dtype: float32, shape: [4], "
                     "role: output}\ncases:\n  - {name: b}\n";
  memset(&log, 0, sizeof log);
  st_observer_init(&obs);
  obs.data = &log;
  obs.case_finish = fin_case_finish;
  obs.case_end = fin_case_end;
  b_finished = 0;
  load_text(f, "fin.yaml", text);
  init_opts(f, &opts, "testplat");
  opts.jobs = 2;
  st_error_clear(&err);
  assert_int_equal(st_run(f->set, &opts, &obs, 1, &r, &err), ST_OK);
  assert_int_equal(st_run_result_exit_code(r), 0);
  assert_int_equal(log.n_finished, 2);
  assert_string_equal(log.finished[0], "b");
  assert_string_equal(log.finished[1], "a");
  assert_int_equal(log.n_ended, 2);
  assert_string_equal(log.ended[0], "a");
  assert_string_equal(log.ended[1], "b");
  st_run_result_free(r);
}

/* maxfail: the run stops starting cases once that many failed; the rest
 * are skipped "not run: --maxfail". */
static void st_run__maxfail_two(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_result *r = NULL;
  st_error err;
  const char *text = "scene: mf\nkernel: add_wrong\ngolden: add\nargs:\n"
                     "  - {tensor: a, dtype: float32, shape: [8]}\n"
                     "  - {tensor: b, dtype: float32, shape: [8]}\n"
                     "  - {tensor: out, dtype: float32, shape: [8], "
                     "role: output, init: {fill: 1}}\n"
                     "cases:\n  - {name: one}\n  - {name: two}\n"
                     "  - {name: three}\n  - {name: four}\n";
  load_text(f, "mf.yaml", text);
  init_opts(f, &opts, "testplat");
  opts.maxfail = 2;
  st_error_clear(&err);
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &r, &err), ST_OK);
  assert_int_equal(st_run_result_count(r), 4);
  assert_int_equal(st_case_result_status(st_run_result_get(r, 0)),
                   ST_CASE_FAIL);
  assert_int_equal(st_case_result_status(st_run_result_get(r, 1)),
                   ST_CASE_FAIL);
  for (size_t i = 2; i < 4; i++) {
    assert_int_equal(st_case_result_status(st_run_result_get(r, i)),
                     ST_CASE_SKIP);
    assert_string_equal(st_case_result_message(st_run_result_get(r, i)),
                        "not run: --maxfail");
  }
  st_run_result_free(r);
}

static void st_run__fail_fast_skips_the_rest(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_result *r = NULL;
  st_error err;
  order_log log;
  st_observer obs;
  const char *text = "scene: ff\nkernel: add_wrong\ngolden: add\nargs:\n"
                     "  - {tensor: a, dtype: float32, shape: [8]}\n"
                     "  - {tensor: b, dtype: float32, shape: [8]}\n"
                     "  - {tensor: out, dtype: float32, shape: [8], "
                     "role: output, init: {fill: 1}}\n"
                     "cases:\n  - {name: one}\n  - {name: two}\n"
                     "  - {name: three}\n";
  memset(&log, 0, sizeof log);
  st_observer_init(&obs);
  obs.data = &log;
  obs.case_end = obs_case_end;
  load_text(f, "ff.yaml", text);
  init_opts(f, &opts, "testplat");
  opts.fail_fast = 1;
  st_error_clear(&err);
  assert_int_equal(st_run(f->set, &opts, &obs, 1, &r, &err), ST_OK);
  assert_int_equal(st_run_result_count(r), 3);
  assert_int_equal(st_case_result_status(st_run_result_get(r, 0)),
                   ST_CASE_FAIL);
  assert_int_equal(st_case_result_status(st_run_result_get(r, 1)),
                   ST_CASE_SKIP);
  assert_int_equal(st_case_result_status(st_run_result_get(r, 2)),
                   ST_CASE_SKIP);
  assert_int_equal(st_case_result_event_count(st_run_result_get(r, 1)), 0);
  assert_int_equal(log.n, 3);
  assert_string_equal(log.names[0], "one");
  assert_string_equal(log.names[2], "three");
  assert_int_equal(st_run_result_exit_code(r), 1);
  st_run_result_free(r);
}

static void st_run__unknown_platform_is_usage_error(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_run_result *r = NULL;
  st_error err;
  load(f, "add", "add", "", "");
  init_opts(f, &opts, "nosuch");
  st_error_clear(&err);
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &r, &err), ST_EUSAGE);
  assert_null(r);
  assert_string_equal(err.message,
                      "unknown platform 'nosuch'; platforms: cpu, testplat, "
                      "threads");
}

static void st_run_case__kernel_runs_once_per_round(void **state) {
  fixture *f = *state;
  st_run_options opts;
  load(f, "add_counting", "add", "", "    rounds: 4\n");
  st_run_options_init(&opts);
  run_calls = 0;
  run1(f, &opts);
  assert_int_equal(run_calls, 4);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_PASS);
}

/* docs/scene-format.md#scene-keys: a golden backend other than reference may
 * decline: the case is a skip "golden declined: REASON"
 * (docs/cli.md#exit-status), ending after golden. */
static void st_run_case__golden_platform_decline_is_skip(void **state) {
  fixture *f = *state;
  load(f, "add", "add_decline", "golden_platform: testplat\n", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_SKIP);
  assert_string_equal(st_case_result_message(f->res),
                      "golden declined: this device cannot run add_decline");
  st_assert_phases(f->res, "args", "golden");
  assert_int_equal(st_case_result_event(f->res, 1)->status, ST_PHASE_SKIP);
}

/* The golden backend: --golden-platform > the case's golden_platform >
 * the scene's > reference. add_decline exists only on testplat, so the
 * reference backend misses it (an error naming golden) and testplat
 * declines it (a skip). */
static void st_run_case__golden_platform_precedence(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const char *missing = "BackendImplementationMissing: backend 'reference' "
                        "is missing required implementation: golden for op "
                        "'add_decline' (implemented by: testplat)";
  /* The scene's key. */
  load(f, "add", "add_decline", "golden_platform: testplat\n", "");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_SKIP);
  st_case_result_free(f->res);
  f->res = NULL;
  /* The CLI's option over it. */
  st_run_options_init(&opts);
  opts.golden_platform = "reference";
  run1(f, &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(f->res), missing);
  st_case_result_free(f->res);
  f->res = NULL;
  st_scene_set_free(f->set);
  f->set = NULL;
  /* The case's key over the scene's, and the option over the case's. */
  load(f, "add", "add_decline", "golden_platform: reference\n",
       "    golden_platform: testplat\n");
  run1(f, NULL);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_SKIP);
  st_case_result_free(f->res);
  f->res = NULL;
  run1(f, &opts);
  assert_string_equal(st_case_result_message(f->res), missing);
  st_assert_phases(f->res, "args", "golden");
}

/* The built-in ops take only the number form of a scalar
 * (docs/torch.md#aten-ops's ints and string forms are for ATen schemas): a
 * binding error. */
static void st_run_case__builtin_op_refuses_ints_scalar(void **state) {
  fixture *f = *state;
  st_run_options opts;
  load_text(f, "ints.yaml",
            "scene: t\n"
            "kernel: scale\n"
            "args:\n"
            "  - {tensor: x, dtype: float32, shape: [4], init: ones}\n"
            "  - {tensor: y, dtype: float32, shape: [4], role: output}\n"
            "  - {scalar: s, ints: [2]}\n"
            "cases:\n"
            "  - name: c\n");
  init_opts(f, &opts, "threads");
  run1(f, &opts);
  assert_int_equal(st_case_result_status(f->res), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(f->res),
                      "kernel: op 'scale': scalar 's' (s) is given as ints; "
                      "expected {scalar: NAME, dtype, value}");
  /* The kernel is bound at the end of args (docs/plugins.md#the-lookup-order).
   */
  st_assert_phases(f->res, "args");
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(st_run_case__level2_sequence_with_golden),
      T(st_run_case__level2_sequence_with_rounds),
      T(st_run_case__rounds_option_overrides_case),
      T(st_run_case__scene_skip_golden),
      T(st_run_case__case_skip_golden_overrides_scene),
      T(st_run_case__option_skip_golden_overrides_case),
      T(st_run_case__wrong_kernel_fails_with_index),
      T(st_run_case__first_failing_round_ends_case),
      T(st_run_case__modified_input_fails),
      T(st_run_case__declined_kernel_is_skip),
      T(st_run_case__missing_kernel_is_error),
      T(st_run_case__missing_golden_is_error),
      T(st_run_case__binding_error_is_case_error),
      T(st_run_case__golden_load_attributed_to_golden),
      T(st_run_case__golden_platform_decline_is_skip),
      T(st_run_case__golden_platform_precedence),
      T(st_run_case__builtin_op_refuses_ints_scalar),
      T(st_run_case__run_load_makes_record_stale),
      T(st_run_case__strict_record_makes_stale_an_error),
      T(st_run_case__strict_record_quiet_when_fresh),
      T(st_run__golden_threads_default_follows_jobs),
      T(st_run__jobs_give_same_events),
      T(st_run__case_finish_in_finish_order),
      T(st_run__fail_fast_skips_the_rest),
      T(st_run__maxfail_two),
      T(st_run__unknown_platform_is_usage_error),
      T(st_run_case__kernel_runs_once_per_round),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
