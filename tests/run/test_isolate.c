/* SPDX-License-Identifier: MIT */
/* --isolate and --timeout at level 2: a kernel that crashes fails only its
 * case, named by signal, keeping the events sent before the crash and what
 * it printed; every child emits its own autoload record (one line per
 * child pid), which reaches our stderr as it is while the kernel's output
 * is captured; a hanging kernel is killed at the timeout and the run goes
 * on; -j runs children side by side and observers still see selection
 * order; --fail-fast leaves the rest unrun; no child is left behind; a
 * case ends when its child does, whatever a grandchild still holds. Kept
 * out of the ThreadSanitizer build (it forks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

#include "l3_testing.h"
#include "case/level3/level3.h"
#include "run/sched.h"

typedef struct fixture {
  st_registry *reg;
  st_scene_set *set;
  st_run_result *run;
} fixture;

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  assert_non_null(f);
  f->reg = l3t_registry();
  st_log_set_level(ST_LOG_WARNING);
  st_log_set_fd(2);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st__level3_shutdown();
  st_run_result_free(f->run);
  st_scene_set_free(f->set);
  st_registry_free(f->reg);
  st_log_set_level(ST_LOG_WARNING);
  free(f);
  return 0;
}

/* Three level-2 cases; the middle one runs kernel `bad`. */
static void load3(fixture *f, const char *bad, const char *bad_extra) {
  char text[4096];
  snprintf(text, sizeof text,
           "scene: ok1\nkernel: print_add\ngolden: add\nargs:\n"
           "  - {tensor: a, dtype: float32, shape: [8], init: ones}\n"
           "  - {tensor: b, dtype: float32, shape: [8], init: ones}\n"
           "  - {tensor: out, dtype: float32, shape: [8], role: output}\n"
           "cases:\n  - {name: c}\n"
           "---\n"
           "scene: bad\nkernel: %s\ngolden: add\nargs:\n"
           "  - {tensor: a, dtype: float32, shape: [8], init: ones}\n"
           "  - {tensor: b, dtype: float32, shape: [8], init: ones}\n"
           "  - {tensor: out, dtype: float32, shape: [8], role: output}\n"
           "cases:\n  - {name: c%s}\n"
           "---\n"
           "scene: ok2\nkernel: add\nargs:\n"
           "  - {tensor: a, dtype: float32, shape: [8], init: ones}\n"
           "  - {tensor: b, dtype: float32, shape: [8], init: ones}\n"
           "  - {tensor: out, dtype: float32, shape: [8], role: output}\n"
           "cases:\n  - {name: c}\n",
           bad, bad_extra);
  f->set = l3t_load(text);
}

typedef struct seen {
  char order[64];
  size_t n;
  size_t phases;
} seen;

static void on_case_end(void *data, const st_case_info *info,
                        const st_case_result *r) {
  seen *s = data;
  (void)r;
  if (s->n + 1 < sizeof s->order)
    s->order[s->n++] = (char)('0' + info->index);
}

static void on_phase_end(void *data, const st_case_info *info,
                         const st_event *ev) {
  seen *s = data;
  (void)info;
  (void)ev;
  s->phases++;
}

static void run_all(fixture *f, st_run_options *opts, seen *s) {
  st_error err;
  st_observer obs;
  st_observer_init(&obs);
  obs.data = s;
  obs.case_end = on_case_end;
  obs.phase_end = on_phase_end;
  st_error_clear(&err);
  opts->registry = f->reg;
  opts->platform = "l3plat";
  if (st_run(f->set, opts, &obs, s ? 1 : 0, &f->run, &err) != ST_OK)
    fail_msg("st_run: %s", err.message);
}

static void st_run__isolate_crash_fails_only_that_case(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const st_case_result *bad;
  seen s;
  memset(&s, 0, sizeof s);
  load3(f, "crash_add", "");
  st_run_options_init(&opts);
  opts.isolate = 1;
  run_all(f, &opts, &s);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 0)),
                   ST_CASE_PASS);
  bad = st_run_result_get(f->run, 1);
  assert_int_equal(st_case_result_status(bad), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(bad), "SIGSEGV"));
  assert_int_not_equal(st_case_result_pid(bad), (long)getpid());
  /* The events sent before the crash are kept. */
  st_assert_phases(bad, "args", "golden", "record");
  assert_non_null(st_case_result_output(bad));
  assert_non_null(strstr(st_case_result_output(bad), "about to crash"));
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 2)),
                   ST_CASE_PASS);
  st_assert_phases(st_run_result_get(f->run, 2), "args", "golden", "record",
                   "run", "compare");
  assert_string_equal(s.order, "012");
  assert_true(s.phases >= 3 + 3 + 5);
  l3t_assert_no_children();
}

/* Each child dispatches, so each emits its own record, once, with its own
 * pid; the lines reach our stderr whole while the kernel's own output is
 * captured into its case. */
static void st_run__isolate_one_record_line_per_child(void **state) {
  fixture *f = *state;
  st_run_options opts;
  int fds[2], saved;
  char buf[65536];
  size_t used = 0, i, lines = 0;
  ssize_t n;
  load3(f, "add", "");
  st_log_set_level(ST_LOG_TIMING);
  st_record_reset();
  assert_int_equal(pipe(fds), 0);
  saved = dup(2);
  assert_true(saved >= 0);
  assert_int_equal(dup2(fds[1], 2), 2);
  close(fds[1]);
  st_run_options_init(&opts);
  opts.isolate = 1;
  opts.jobs = 2;
  run_all(f, &opts, NULL);
  dup2(saved, 2);
  close(saved);
  while ((n = read(fds[0], buf + used, sizeof buf - 1 - used)) > 0)
    used += (size_t)n;
  close(fds[0]);
  buf[used] = '\0';
  for (i = 0; i < 3; i++) {
    const st_case_result *r = st_run_result_get(f->run, i);
    char want[128];
    size_t k;
    assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
    snprintf(want, sizeof want, " pid=%ld\n", st_case_result_pid(r));
    /* The record event of each child says it emitted. */
    for (k = 0; k < st_case_result_event_count(r); k++)
      if (strcmp(st_case_result_event(r, k)->name, "record") == 0)
        assert_int_equal(st_case_result_event(r, k)->emitted, 1);
    {
      const char *p = buf;
      size_t hits = 0;
      while ((p = strstr(p, "[TIMING] torch_backend_autoload ")) != NULL) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol);
        if ((size_t)(eol + 1 - p) > strlen(want) &&
            memcmp(eol + 1 - strlen(want), want, strlen(want)) == 0)
          hits++;
        p = eol;
      }
      assert_int_equal(hits, 1);
    }
  }
  {
    const char *p = buf;
    while ((p = strstr(p, "[TIMING] torch_backend_autoload ")) != NULL) {
      lines++;
      p++;
    }
  }
  assert_int_equal(lines, 3);
  /* The kernel's prints are the case's, not our stderr's. */
  assert_null(strstr(buf, "stdout of shard"));
  assert_non_null(strstr(st_case_result_output(st_run_result_get(f->run, 0)),
                         "stdout of shard 0"));
  assert_non_null(strstr(st_case_result_output(st_run_result_get(f->run, 0)),
                         "stderr of shard 0"));
  assert_non_null(strstr(buf, "[TIMING] phase pid="));
  l3t_assert_no_children();
}

static void st_run__timeout_kills_level2_case(void **state) {
  fixture *f = *state;
  st_run_options opts;
  const st_case_result *bad;
  seen s;
  memset(&s, 0, sizeof s);
  load3(f, "hang_add", "");
  st_run_options_init(&opts);
  opts.timeout = 0.3; /* no --isolate: the timeout alone isolates */
  run_all(f, &opts, &s);
  bad = st_run_result_get(f->run, 1);
  assert_int_equal(st_case_result_status(bad), ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(bad), "timed out after 0.3 s"));
  st_assert_phases(bad, "args", "golden", "record");
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 0)),
                   ST_CASE_PASS);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 2)),
                   ST_CASE_PASS);
  assert_string_equal(s.order, "012");
  l3t_assert_no_children();
}

/* The case's own timeout wins over --timeout. */
static void st_run__case_timeout_overrides_option(void **state) {
  fixture *f = *state;
  st_run_options opts;
  load3(f, "hang_add", ", timeout: 0.2");
  st_run_options_init(&opts);
  opts.timeout = 600;
  run_all(f, &opts, NULL);
  assert_non_null(strstr(st_case_result_message(st_run_result_get(f->run, 1)),
                         "timed out after 0.2 s"));
  l3t_assert_no_children();
}

static void st_run__isolate_fail_fast_leaves_rest_unrun(void **state) {
  fixture *f = *state;
  st_run_options opts;
  load3(f, "crash_add", "");
  st_run_options_init(&opts);
  opts.isolate = 1;
  opts.fail_fast = 1;
  run_all(f, &opts, NULL);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 0)),
                   ST_CASE_PASS);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 1)),
                   ST_CASE_ERROR);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 2)),
                   ST_CASE_SKIP);
  assert_non_null(strstr(st_case_result_message(st_run_result_get(f->run, 2)),
                         "fail-fast"));
  l3t_assert_no_children();
}

/* Level 3 inside an isolated child: its workers are the child's, and a
 * crash there is still the case's error. */
static void st_run__isolate_level3_case(void **state) {
  fixture *f = *state;
  st_run_options opts;
  f->set = l3t_load(
      "scene: l3\nlevel: 3\nworkers: 2\nkernel: crash_add\ngolden: add\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [N], init: ones}\n"
      "  - {tensor: b, dtype: float32, shape: [N], init: ones}\n"
      "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
      "cases:\n  - {name: c, params: {N: 10}}\n"
      "---\n"
      "scene: l3ok\nlevel: 3\nworkers: 2\nkernel: add\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [N], init: ones}\n"
      "  - {tensor: b, dtype: float32, shape: [N], init: ones}\n"
      "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
      "cases:\n  - {name: c, params: {N: 10}}\n");
  st_run_options_init(&opts);
  opts.isolate = 1;
  run_all(f, &opts, NULL);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 0)),
                   ST_CASE_ERROR);
  assert_non_null(strstr(st_case_result_message(st_run_result_get(f->run, 0)),
                         "worker 1 (pid "));
  st_assert_phases(st_run_result_get(f->run, 0), "args", "golden", "rehost",
                   "record", "run", "release");
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 1)),
                   ST_CASE_PASS);
  l3t_assert_no_children();
}

static void st_run__isolate_jobs_keep_selection_order(void **state) {
  fixture *f = *state;
  st_run_options opts;
  seen s;
  size_t i;
  char text[8192];
  size_t used = 0;
  memset(&s, 0, sizeof s);
  for (i = 0; i < 6; i++)
    used += (size_t)snprintf(
        text + used, sizeof text - used,
        "%sscene: s%zu\nkernel: add\nargs:\n"
        "  - {tensor: a, dtype: float32, shape: [N], init: ones}\n"
        "  - {tensor: b, dtype: float32, shape: [N], init: ones}\n"
        "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
        "cases:\n  - {name: c, params: {N: %zu}}\n",
        i ? "---\n" : "", i, (6 - i) * 20000);
  f->set = l3t_load(text);
  st_run_options_init(&opts);
  opts.isolate = 1;
  opts.jobs = 3;
  run_all(f, &opts, &s);
  assert_string_equal(s.order, "012345");
  for (i = 0; i < 6; i++)
    assert_int_equal(st_case_result_status(st_run_result_get(f->run, i)),
                     ST_CASE_PASS);
  l3t_assert_no_children();
}

/* Leaves a grandchild behind, holding the child's stdout and stderr (the
 * capture) and waiting; prints its pid so that the test can end it. The
 * alarm ends it anyway if the test cannot. */
static st_status orphan_add(st_op_call *c) {
  pid_t pid = fork();
  if (pid < 0)
    return st_op_call_fail(c, ST_EKERNEL, "fork failed");
  if (pid == 0) {
    alarm(60);
    for (;;)
      pause();
  }
  printf("grandchild pid=%ld\n", (long)pid);
  fflush(stdout);
  return l3t_add(c);
}

/* The case is done when its child has exited: a grandchild that still
 * holds the capture pipe does not keep it, and is killed with the case's
 * process group (without the pidfd, the run
 * would wait for the pipe's end until the case's timeout). What the child
 * printed is kept. */
static void st_run__isolate_grandchild_holding_output(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_error err;
  const st_case_result *r;
  const char *out, *at;
  long gc = 0;
  st_error_clear(&err);
  assert_int_equal(st_registry_register(f->reg, "isotest", "orphan_add",
                                        "l3plat", orphan_add, &err),
                   ST_OK);
  load3(f, "orphan_add", ", timeout: 20");
  st_run_options_init(&opts);
  opts.isolate = 1;
  run_all(f, &opts, NULL);
  r = st_run_result_get(f->run, 1);
  out = st_case_result_output(r);
  assert_non_null(out);
  at = strstr(out, "grandchild pid=");
  assert_non_null(at);
  gc = strtol(at + strlen("grandchild pid="), NULL, 10);
  assert_true(gc > 1);
  {
    /* Gone: its case's process group is killed, and waited for, when the
     * case ends (D10). */
    /* Dead: gone, or a zombie its reaper has not taken yet. */
    char path[64], buf[512], *p;
    int alive = 0;
    FILE *sf;
    snprintf(path, sizeof path, "/proc/%ld/stat", gc);
    if ((sf = fopen(path, "re")) != NULL) {
      if (fgets(buf, sizeof buf, sf) != NULL && (p = strrchr(buf, ')')) != NULL)
        alive = p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
      fclose(sf);
    }
    if (alive)
      kill((pid_t)gc, SIGKILL);
    assert_false(alive);
  }
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  assert_int_equal(st_case_result_status(st_run_result_get(f->run, 2)),
                   ST_CASE_PASS);
  l3t_assert_no_children();
}

/* The same tests with the fork server from the first case (run/zygote.h;
 * by default it starts only once the harness holds 8 MiB): every child
 * but those forked while no spare was ready is the zygote's, and each
 * test's run must have taken at least one. */
static size_t zygote_was;

static int setup_zygote(void **state) {
  zygote_was = st__isolate_set_zygote_min(0);
  return setup(state);
}

static int teardown_zygote(void **state) {
  st__isolate_set_zygote_min(zygote_was);
  assert_true(st__isolate_spares_used() > 0);
  return teardown(state);
}

int main(void) {
  const struct CMUnitTest tests[] = {
#define T(fn)                                                                  \
  cmocka_unit_test_setup_teardown(fn, setup, teardown),                        \
      {#fn "__zygote", fn, setup_zygote, teardown_zygote, NULL}
      T(st_run__isolate_crash_fails_only_that_case),
      T(st_run__isolate_one_record_line_per_child),
      T(st_run__timeout_kills_level2_case),
      T(st_run__case_timeout_overrides_option),
      T(st_run__isolate_fail_fast_leaves_rest_unrun),
      T(st_run__isolate_level3_case),
      T(st_run__isolate_jobs_keep_selection_order),
      T(st_run__isolate_grandchild_holding_output),
#undef T
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  st_registry_free(l3t_builtin);
  return rc;
}
