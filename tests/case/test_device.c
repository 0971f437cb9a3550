/* SPDX-License-Identifier: MIT */
/* A platform's prepare/release hooks and device timing
 * (docs/plugins.md#platform-hooks-prepare-and-release), on the fake device
 * platform (tests/plugins/fakedev.c): where prepare and release run relative to
 * the phases (whole sequences, with the plugin's own counters sampled at every
 * phase end), that a reset restores what the device computes on,
 * device_ns/copy_ns in the run event, a prepare that fails or declines, release
 * after a failing round, and level 3, where every worker prepares and releases
 * its own shard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

typedef void (*counts_fn)(int *prepares, int *releases, int *runs);

typedef struct fixture {
  st_registry *reg;
  st_scene_set *set;
  st_run_result *run;
  counts_fn counts;
  int base_p, base_r, base_n;
  char trace[4096]; /* "phase p/r, ..." sampled at each phase end */
  char log[256];    /* FAKEDEV_LOG */
} fixture;

static void deltas(fixture *f, int *p, int *r, int *n) {
  f->counts(p, r, n);
  *p -= f->base_p;
  *r -= f->base_r;
  *n -= f->base_n;
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  st_error err;
  void *h;
  assert_non_null(f);
  st_error_clear(&err);
  assert_int_equal(st_registry_new_builtin(&f->reg), ST_OK);
  assert_int_equal(st_plugin_load(f->reg, ST_PLUGIN_FAKEDEV, &err), ST_OK);
  h = dlopen(ST_PLUGIN_FAKEDEV, RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h);
  f->counts = (counts_fn)(uintptr_t)dlsym(h, "fakedev_counts");
  assert_non_null(f->counts);
  dlclose(h);
  f->counts(&f->base_p, &f->base_r, &f->base_n);
  snprintf(f->log, sizeof f->log, "/tmp/st-fakedev-%ld.log", (long)getpid());
  unlink(f->log);
  unsetenv("FAKEDEV_PREPARE");
  unsetenv("FAKEDEV_FAIL_RUN");
  unsetenv("FAKEDEV_STALE");
  unsetenv("FAKEDEV_LOG");
  st_log_set_level(ST_LOG_WARNING);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st_run_result_free(f->run);
  st_scene_set_free(f->set);
  st_registry_free(f->reg);
  unlink(f->log);
  unsetenv("FAKEDEV_LOG");
  free(f);
  return 0;
}

static void on_case_begin(void *data, const st_case_info *info) {
  fixture *f = data;
  int p, r, n;
  (void)info;
  deltas(f, &p, &r, &n);
  snprintf(f->trace + strlen(f->trace), sizeof f->trace - strlen(f->trace),
           "begin %d/%d", p, r);
}

static void on_phase_end(void *data, const st_case_info *info,
                         const st_event *ev) {
  fixture *f = data;
  int p, r, n;
  (void)info;
  if (strcmp(ev->name, "load") == 0)
    return;
  deltas(f, &p, &r, &n);
  snprintf(f->trace + strlen(f->trace), sizeof f->trace - strlen(f->trace),
           ", %s %d/%d", ev->name, p, r);
}

/* One scene, one case, axpy (y inout: y = alpha * x + y) or another op. */
static void load(fixture *f, const char *text) {
  st_error_list errs;
  size_t i;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  if (st_scene_set_load_string(f->set, "d.yaml", text, strlen(text), NULL,
                               &errs) != ST_OK) {
    char buf[2048];
    for (i = 0; i < errs.count; i++)
      print_error("%s\n", st_error_format(&errs.items[i], buf, sizeof buf));
    st_error_list_free(&errs);
    fail_msg("scene did not load");
  }
  st_error_list_free(&errs);
}

static void load_axpy(fixture *f, int level, const char *dtype,
                      unsigned rounds) {
  char text[2048];
  snprintf(text, sizeof text,
           "scene: d\n"
           "level: %d\n"
           "kernel: axpy\n"
           "args:\n"
           "  - {tensor: x, dtype: %s, shape: [N], init: {uniform: [-1, 1]}}\n"
           "  - {tensor: y, dtype: %s, shape: [N], init: {range: {start: 1, "
           "step: 1}}, role: inout}\n"
           "  - {scalar: alpha, dtype: float64, value: 3.0}\n"
           "cases:\n"
           "  - name: c\n"
           "    params: {N: 1000}\n"
           "    rounds: %u\n",
           level, dtype, dtype, rounds);
  load(f, text);
}

static const st_case_result *run_all(fixture *f, const char *platform) {
  st_run_options opts;
  st_observer obs;
  st_error err;
  st_error_clear(&err);
  st_run_options_init(&opts);
  opts.registry = f->reg;
  opts.platform = platform;
  st_observer_init(&obs);
  obs.data = f;
  obs.case_begin = on_case_begin;
  obs.phase_end = on_phase_end;
  f->trace[0] = '\0';
  assert_int_equal(st_run(f->set, &opts, &obs, 1, &f->run, &err), ST_OK);
  assert_int_equal(st_run_result_count(f->run), 1);
  return st_run_result_get(f->run, 0);
}

static const st_event *event_named(const st_case_result *r, const char *name,
                                   int round) {
  size_t i;
  for (i = 0; i < st_case_result_event_count(r); i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (strcmp(ev->name, name) == 0 && ev->round == round)
      return ev;
  }
  fail_msg("no event %s round %d", name, round);
  return NULL;
}

/* prepare runs inside args (0 before the case, 1 at the end of args),
 * release after the last round (0 at the last compare, 1 once the case
 * ended), each exactly once. */
static void hooks__prepare_in_args_release_after_last_round(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  int p, rel, n;
  load_axpy(f, 2, "float32", 2);
  r = run_all(f, "fakedev");
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                   "run", "compare");
  assert_string_equal(f->trace, "begin 0/0, args 1/0, golden 1/0, record "
                                "1/0, run 1/0, compare 1/0, reset 1/0, run "
                                "1/0, compare 1/0");
  deltas(f, &p, &rel, &n);
  assert_int_equal(p, 1);
  assert_int_equal(rel, 1);
  assert_int_equal(n, 2);
}

/* axpy accumulates into y: a device that kept last round's y would give
 * alpha*x + (alpha*x + y) in round 1. Every round compares equal to golden
 * because each run uploads the reset y. */
static void hooks__reset_restores_device_inouts(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  load_axpy(f, 2, "float64", 3);
  r = run_all(f, "fakedev");
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  assert_int_equal(event_named(r, "compare", 2)->status, ST_PHASE_OK);
}

/* The control: the same case on a device that does not take the host's
 * reset y fails round 1's compare (so the test above can fail). */
static void hooks__stale_device_copy_fails_round_1(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  int p, rel, n;
  setenv("FAKEDEV_STALE", "1", 1);
  load_axpy(f, 2, "float64", 3);
  r = run_all(f, "fakedev");
  unsetenv("FAKEDEV_STALE");
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                   "run", "compare");
  assert_int_equal(event_named(r, "compare", 1)->status, ST_PHASE_FAIL);
  assert_non_null(strstr(st_case_result_message(r), "y"));
  deltas(f, &p, &rel, &n);
  assert_int_equal(rel, 1); /* release after a failed compare too */
}

/* The run event carries what the platform reported; other phases, and a
 * platform without device timing, carry ST_NS_NONE. */
static void hooks__device_and_copy_ns_in_run_event(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  const st_event *ev;
  load_axpy(f, 2, "float32", 1);
  r = run_all(f, "fakedev");
  ev = event_named(r, "run", 0);
  assert_true(ev->device_ns != ST_NS_NONE);
  assert_true(ev->copy_ns != ST_NS_NONE);
  assert_true(ev->device_ns + ev->copy_ns <= ev->dur_ns);
  assert_true(event_named(r, "args", -1)->device_ns == ST_NS_NONE);
  assert_true(event_named(r, "compare", 0)->copy_ns == ST_NS_NONE);
  st_run_result_free(f->run);
  f->run = NULL;
  r = run_all(f, "cpu");
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  assert_true(event_named(r, "run", 0)->device_ns == ST_NS_NONE);
  assert_true(event_named(r, "run", 0)->copy_ns == ST_NS_NONE);
}

static void hooks__prepare_failure_is_args_error(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  int p, rel, n;
  setenv("FAKEDEV_PREPARE", "fail", 1);
  load_axpy(f, 2, "float32", 2);
  r = run_all(f, "fakedev");
  unsetenv("FAKEDEV_PREPARE");
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(r),
                      "args: platform 'fakedev' prepare: fake device: out "
                      "of device memory");
  st_assert_phases(r, "args");
  assert_int_equal(event_named(r, "args", -1)->status, ST_PHASE_ERROR);
  deltas(f, &p, &rel, &n);
  assert_int_equal(p, 0);
  assert_int_equal(rel, 0); /* no release for a prepare that failed */
  assert_int_equal(n, 0);
}

static void hooks__prepare_skip_is_skip(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  int p, rel, n;
  load_axpy(f, 2, "float16", 1);
  r = run_all(f, "fakedev");
  assert_int_equal(st_case_result_status(r), ST_CASE_SKIP);
  assert_string_equal(st_case_result_message(r),
                      "fake device: no float16 support (tensor 'x')");
  st_assert_phases(r, "args");
  assert_int_equal(event_named(r, "args", -1)->status, ST_PHASE_SKIP);
  deltas(f, &p, &rel, &n);
  assert_int_equal(p + rel + n, 0);
}

static void hooks__release_after_failing_round(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  int p, rel, n;
  setenv("FAKEDEV_FAIL_RUN", "2", 1);
  load_axpy(f, 2, "float32", 3);
  r = run_all(f, "fakedev");
  unsetenv("FAKEDEV_FAIL_RUN");
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(r),
                      "kernel: fake device: fault in run 2");
  st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                   "run");
  assert_string_equal(f->trace, "begin 0/0, args 1/0, golden 1/0, record "
                                "1/0, run 1/0, compare 1/0, reset 1/0, run "
                                "1/0");
  deltas(f, &p, &rel, &n);
  assert_int_equal(p, 1);
  assert_int_equal(rel, 1);
}

/* Reads the FAKEDEV_LOG lines into buf. */
static void read_log(const fixture *f, char *buf, size_t size) {
  FILE *fp = fopen(f->log, "r");
  size_t n;
  assert_non_null(fp);
  n = fread(buf, 1, size - 1, fp);
  buf[n] = '\0';
  fclose(fp);
}

/* Every worker prepares its own shard during rehost (in its own process),
 * runs every round there, and releases in the release phase: per worker
 * pid the log reads exactly prepare, run, run, release. */
static void hooks__level3_each_worker_owns_its_device(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  char buf[4096], want[512], *line, *save = NULL;
  long pids[2] = {0, 0};
  char seq[2][256] = {"", ""};
  unsigned w;
  int p, rel, n;
  setenv("FAKEDEV_LOG", f->log, 1);
  load_axpy(f, 3, "float32", 2);
  r = run_all(f, "fakedev");
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_assert_phases(r, "args", "golden", "rehost", "record", "run", "compare",
                   "reset", "run", "compare", "release");
  assert_true(event_named(r, "run", 1)->device_ns != ST_NS_NONE);
  assert_true(event_named(r, "run", 1)->copy_ns != ST_NS_NONE);
  assert_true(event_named(r, "rehost", -1)->device_ns == ST_NS_NONE);
  /* The harness itself prepared nothing. */
  deltas(f, &p, &rel, &n);
  assert_int_equal(p + rel + n, 0);
  read_log(f, buf, sizeof buf);
  for (line = strtok_r(buf, "\n", &save); line != NULL;
       line = strtok_r(NULL, "\n", &save)) {
    char what[16];
    long pid;
    unsigned si, sc;
    assert_int_equal(
        sscanf(line, "%15s pid=%ld shard=%u/%u", what, &pid, &si, &sc), 4);
    assert_true(pid != (long)getpid());
    assert_int_equal(sc, 2);
    assert_true(si < 2);
    if (pids[si] == 0)
      pids[si] = pid;
    assert_int_equal(pids[si], pid);
    snprintf(seq[si] + strlen(seq[si]), sizeof seq[si] - strlen(seq[si]), "%s ",
             what);
  }
  for (w = 0; w < 2; w++) {
    snprintf(want, sizeof want, "prepare run run release ");
    assert_string_equal(seq[w], want);
  }
  assert_true(pids[0] != pids[1]);
}

/* The check the next CLI test relies on: a worker pool forked after this
 * process prepared the device (a second run's pool, after a level-2 case
 * here) is refused like a CUDA context inherited through fork would be. */
static void hooks__device_used_before_fork_is_refused(void **state) {
  fixture *f = *state;
  const st_case_result *r;
  setenv("FAKEDEV_FORK_CHECK", "1", 1);
  load_axpy(f, 2, "float32", 1);
  r = run_all(f, "fakedev");
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  st_run_result_free(f->run);
  f->run = NULL;
  st_scene_set_free(f->set);
  f->set = NULL;
  load_axpy(f, 3, "float32", 1);
  r = run_all(f, "fakedev");
  unsetenv("FAKEDEV_FORK_CHECK");
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(r), "was forked from it"));
  st_assert_phases(r, "args", "golden", "rehost");
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
      T(hooks__prepare_in_args_release_after_last_round),
      T(hooks__reset_restores_device_inouts),
      T(hooks__stale_device_copy_fails_round_1),
      T(hooks__device_and_copy_ns_in_run_event),
      T(hooks__prepare_failure_is_args_error),
      T(hooks__prepare_skip_is_skip),
      T(hooks__release_after_failing_round),
      T(hooks__level3_each_worker_owns_its_device),
      T(hooks__device_used_before_fork_is_refused),
#undef T
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
