/* SPDX-License-Identifier: MIT */
/* Kernel signatures golden does not share (docs/scene-format.md: role
 * scratch, golden_args, expected, expect: error), end to end on the sig
 * test plugin (tests/plugins/sig.c) and on probes registered here: what
 * the golden is given, that scratch is poisoned before every run and
 * never checked, expected values with no golden phase, and negative tests
 * passing and failing as they should, each with its whole event sequence;
 * in this process, in isolated children, in supervised children and at
 * level 3 (shared-memory workers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing.h>

#include "case/poison.h"

/* Where a case runs. */
enum { INPROC, ISOLATE, SUPERVISE, LEVEL3, N_MODES };
static const char *const mode_name[N_MODES] = {"inproc", "isolate", "supervise",
                                               "level3"};

typedef struct fixture {
  st_registry *reg;
  st_scene_set *set;
  st_run_result *run;
} fixture;

/* ------------------------------------------------------------------ */
/* Probes                                                              */

/* What the view golden saw: tensor and scalar names, comma-separated. */
static char seen[256];

static void names_of(const st_op_call *call) {
  seen[0] = '\0';
  for (size_t i = 0; i < call->n_tensors; i++)
    snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s",
             i ? "," : "", call->tensors[i].name);
  snprintf(seen + strlen(seen), sizeof seen - strlen(seen), ";");
  for (size_t i = 0; i < call->n_scalars; i++)
    snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s",
             i ? "," : "", call->scalars[i].name);
}

/* A golden on `reference` that records its arguments and writes out =
 * a + b (found by name wherever the view put them). */
static st_status view_golden(st_op_call *call) {
  st_tensor *a = NULL, *b = NULL, *out = NULL;
  names_of(call);
  for (size_t i = 0; i < call->n_tensors; i++) {
    st_tensor *t = &call->tensors[i];
    if (strcmp(t->name, "a") == 0)
      a = t;
    else if (strcmp(t->name, "b") == 0)
      b = t;
    else if (strcmp(t->name, "out") == 0)
      out = t;
  }
  if (a == NULL || b == NULL || out == NULL)
    return st_op_call_fail(call, ST_EBIND, "view golden wants a, b, out");
  for (size_t i = 0; i < out->numel; i++)
    st_tensor_set_f64(out, i,
                      st_tensor_get_f64(a, i) + st_tensor_get_f64(b, i));
  return ST_OK;
}

/* A cpu kernel (sig's signature) that counts its calls, checks that work
 * holds the float32 poison in every element when it starts, writes work
 * all over (so a later round would see it unless poisoned again), and
 * fails from call fail_at on (0: never) or declines when decline is set. */
static int calls, work_poisoned_every_run, fail_at, decline;

static st_status probe_kernel(st_op_call *call) {
  st_tensor *t = call->tensors;
  unsigned char poison[8];
  size_t es = st__poison_bytes(t[4].dtype, poison);
  calls++;
  if (decline)
    return st_op_call_fail(call, ST_ESKIP, "probe declines");
  for (size_t i = 0; i < t[4].numel; i++)
    if (memcmp((unsigned char *)t[4].data + i * es, poison, es) != 0)
      work_poisoned_every_run = 0;
  memset(t[4].data, 0, t[4].nbytes);
  if (fail_at > 0 && calls >= fail_at)
    return st_op_call_fail(call, ST_EKERNEL, "probe refuses call %d", calls);
  for (size_t i = 0; i < t[3].numel; i++)
    st_tensor_set_f64(
        &t[3], i, st_tensor_get_f64(&t[0], i) + st_tensor_get_f64(&t[1], i));
  return ST_OK;
}

/* A kernel (cpu) and its golden (reference) over a, out, out2: both
 * write out = 2a; the kernel writes out2 = 7 everywhere, the golden 0. */
static st_status dual_kernel(st_op_call *call) {
  for (size_t i = 0; i < call->tensors[1].numel; i++) {
    st_tensor_set_f64(&call->tensors[1], i,
                      2 * st_tensor_get_f64(&call->tensors[0], i));
    st_tensor_set_f64(&call->tensors[2], i, 7);
  }
  return ST_OK;
}

static st_status dual_golden(st_op_call *call) {
  for (size_t i = 0; i < call->tensors[1].numel; i++) {
    st_tensor_set_f64(&call->tensors[1], i,
                      2 * st_tensor_get_f64(&call->tensors[0], i));
    st_tensor_set_f64(&call->tensors[2], i, 0);
  }
  return ST_OK;
}

/* A kernel that dies. */
static st_status crash_kernel(st_op_call *call) {
  (void)call;
  abort();
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  st_error err;
  assert_non_null(f);
  st_error_clear(&err);
  assert_int_equal(st_registry_new_builtin(&f->reg), ST_OK);
  assert_int_equal(st_plugin_load(f->reg, ST_PLUGIN_SIG, &err), ST_OK);
  assert_int_equal(st_registry_register(f->reg, "sigtest", "view_golden",
                                        "reference", view_golden, &err),
                   ST_OK);
  assert_int_equal(st_registry_register(f->reg, "sigtest", "probe", "cpu",
                                        probe_kernel, &err),
                   ST_OK);
  assert_int_equal(
      st_registry_register(f->reg, "sigtest", "dual", "cpu", dual_kernel, &err),
      ST_OK);
  assert_int_equal(st_registry_register(f->reg, "sigtest", "crash", "cpu",
                                        crash_kernel, &err),
                   ST_OK);
  assert_int_equal(st_registry_register(f->reg, "sigtest", "dual_golden",
                                        "reference", dual_golden, &err),
                   ST_OK);
  st_log_set_level(ST_LOG_WARNING);
  calls = 0;
  fail_at = 0;
  decline = 0;
  work_poisoned_every_run = 1;
  seen[0] = '\0';
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  st_run_result_free(f->run);
  st_scene_set_free(f->set);
  st_registry_free(f->reg);
  free(f);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Scenes                                                              */

/* The sig signature: a, b, cfg (tile TILE), out, work (scratch), scalar
 * unroll; head is the scene's keys after `scene`, case its keys after
 * `name`. At level 3 the scene gets `level: 3`. */
static void load(fixture *f, int mode, const char *head, const char *out,
                 int tile, int unroll, const char *kase) {
  char text[4096];
  st_error_list errs;
  st_error_list_init(&errs);
  snprintf(text, sizeof text,
           "scene: sig\n%s%s"
           "args:\n"
           "  - {tensor: a, dtype: float32, shape: [6], init: {range: "
           "{start: 1, step: 1}}}\n"
           "  - {tensor: b, dtype: float32, shape: [6], init: {fill: 10}}\n"
           "  - {tensor: cfg, dtype: int32, shape: [1], init: {fill: %d}}\n"
           "  - {tensor: out, dtype: float32, shape: [6], role: output%s}\n"
           "  - {tensor: work, dtype: float32, shape: [6], role: scratch}\n"
           "  - {scalar: unroll, dtype: int32, value: %d}\n"
           "cases:\n"
           "  - name: c\n%s",
           mode == LEVEL3 ? "level: 3\n" : "", head, tile, out, unroll, kase);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  if (st_scene_set_load_string(f->set, "sig.yaml", text, strlen(text), NULL,
                               &errs) != ST_OK) {
    char buf[2048];
    for (size_t i = 0; i < errs.count; i++)
      print_error("%s\n", st_error_format(&errs.items[i], buf, sizeof buf));
    st_error_list_free(&errs);
    fail_msg("scene did not load");
  }
  st_error_list_free(&errs);
}

static const st_case_result *run(fixture *f, int mode, const char *platform) {
  st_run_options opts;
  st_error err;
  st_error_clear(&err);
  st_run_options_init(&opts);
  opts.registry = f->reg;
  opts.platform = platform;
  opts.isolate = mode == ISOLATE;
  opts.supervise = mode == SUPERVISE;
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &f->run, &err), ST_OK);
  assert_int_equal(st_run_result_count(f->run), 1);
  /* The case ran where the mode says: a child's pid is not ours. */
  if (mode == ISOLATE || mode == SUPERVISE)
    assert_int_not_equal(st_case_result_pid(st_run_result_get(f->run, 0)),
                         (long)getpid());
  else
    assert_int_equal(st_case_result_pid(st_run_result_get(f->run, 0)),
                     (long)getpid());
  return st_run_result_get(f->run, 0);
}

/* Frees what one mode's run made, for the next. */
static void next_mode(fixture *f) {
  st_run_result_free(f->run);
  st_scene_set_free(f->set);
  f->run = NULL;
  f->set = NULL;
}

static void assert_status(const st_case_result *r, st_case_status want,
                          int mode) {
  if (st_case_result_status(r) != want)
    fail_msg("%s: status %s, wanted %s: %s", mode_name[mode],
             st_case_status_name(st_case_result_status(r)),
             st_case_status_name(want),
             st_case_result_message(r) ? st_case_result_message(r) : "");
}

static void assert_message_has(const st_case_result *r, const char *needle,
                               int mode) {
  const char *m = st_case_result_message(r);
  if (m == NULL || strstr(m, needle) == NULL)
    fail_msg("%s: message '%s' lacks '%s'", mode_name[mode], m ? m : "",
             needle);
}

/* ------------------------------------------------------------------ */
/* golden_args and scratch                                             */

#define GOLDEN_ADD "kernel: sig_add\ngolden: add\ngolden_args: [a, b, out]\n"

/* The built-in add is the golden of a kernel with config and scratch
 * args, through golden_args; sig_add writes work all over, which is no
 * input change; two rounds. Every mode. */
static void golden_args__builtin_golden_of_a_config_kernel(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, GOLDEN_ADD, "", 4, 2, "    rounds: 2\n");
    const st_case_result *r = run(f, m, "sig");
    assert_status(r, ST_CASE_PASS, m);
    if (m == LEVEL3)
      st_assert_phases(r, "args", "golden", "rehost", "record", "run",
                       "compare", "reset", "run", "compare", "release");
    else
      st_assert_phases(r, "args", "golden", "record", "run", "compare", "reset",
                       "run", "compare");
    next_mode(f);
  }
}

/* A kernel that never touches its scratch passes: the poison left there
 * is nobody's business. */
static void scratch__untouched_passes(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, "kernel: sig_add_lazy\ngolden: add\ngolden_args: [a, b, out]\n",
         "", 4, 2, "");
    assert_status(run(f, m, "sig"), ST_CASE_PASS, m);
    next_mode(f);
  }
}

/* Scratch holds the poison when every run starts, the first and the
 * later rounds (after the kernel wrote it), in this process. */
static void scratch__poisoned_before_every_run(void **state) {
  fixture *f = *state;
  load(f, INPROC, "kernel: probe\ngolden: add\ngolden_args: [a, b, out]\n", "",
       4, 2, "    rounds: 3\n");
  assert_status(run(f, INPROC, "cpu"), ST_CASE_PASS, INPROC);
  assert_int_equal(calls, 3);
  assert_true(work_poisoned_every_run);
}

/* By default golden gets every arg but scratch, in scene order; with
 * golden_args, exactly those, in their order (scalars apart, as ever). */
static void golden_args__view_the_golden_sees(void **state) {
  fixture *f = *state;
  load(f, INPROC, "kernel: sig_add\ngolden: view_golden\n", "", 4, 2, "");
  assert_status(run(f, INPROC, "sig"), ST_CASE_PASS, INPROC);
  assert_string_equal(seen, "a,b,cfg,out;unroll");
  next_mode(f);
  load(f, INPROC, "kernel: sig_add\ngolden: view_golden\n", "", 4, 2,
       "    golden_args: [out, unroll, b, a]\n");
  assert_status(run(f, INPROC, "sig"), ST_CASE_PASS, INPROC);
  assert_string_equal(seen, "out,b,a;unroll");
}

/* ------------------------------------------------------------------ */
/* expected                                                            */

#define OUT_RIGHT ", expected: {values: [11, 12, 13, 14, 15, 16]}"
#define OUT_WRONG ", expected: {values: [11, 12, 13, 14, 15, 99]}"

/* Every compared output has expected: no golden phase, not even a golden
 * op (the scene names none, and sig_add has no reference form). */
static void expected__only_scene_runs_no_golden(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, "kernel: sig_add\n", OUT_RIGHT, 4, 2, "    rounds: 2\n");
    const st_case_result *r = run(f, m, "sig");
    assert_status(r, ST_CASE_PASS, m);
    if (m == LEVEL3)
      st_assert_phases(r, "args", "rehost", "record", "run", "compare", "reset",
                       "run", "compare", "release");
    else
      st_assert_phases(r, "args", "record", "run", "compare", "reset", "run",
                       "compare");
    next_mode(f);
  }
}

/* A wrong expected value fails compare like a wrong golden would. */
static void expected__wrong_value_fails(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, "kernel: sig_add\n", OUT_WRONG, 4, 2, "");
    const st_case_result *r = run(f, m, "sig");
    assert_status(r, ST_CASE_FAIL, m);
    assert_message_has(r, "tensor 'out': 1 of 6 elements differ", m);
    next_mode(f);
  }
}

/* A kernel off by one fails against a right expected value ({fill} form
 * too: any init form). */
static void expected__wrong_kernel_fails(void **state) {
  fixture *f = *state;
  load(f, INPROC, "kernel: sig_add_wrong\n", OUT_RIGHT, 4, 2, "");
  assert_status(run(f, INPROC, "sig"), ST_CASE_FAIL, INPROC);
  next_mode(f);
  load(f, INPROC, "kernel: sig_add_wrong\n", ", expected: {fill: 12}", 4, 2,
       "");
  const st_case_result *r = run(f, INPROC, "sig");
  assert_status(r, ST_CASE_FAIL, INPROC);
  assert_message_has(r, "5 of 6 elements differ", INPROC);
}

/* With a golden for the other outputs, an output's expected value is
 * taken over golden's: golden says out2 is 0, expected says 7 (the
 * kernel's), and the case passes with its golden phase; without expected
 * the same case fails on out2. */
static void expected__over_golden_for_its_output(void **state) {
  fixture *f = *state;
  static const char *const fmt =
      "scene: dual\nkernel: dual\ngolden: dual_golden\n"
      "args:\n"
      "  - {tensor: a, dtype: float64, shape: [5], init: {range: {start: 0, "
      "step: 1}}}\n"
      "  - {tensor: out, dtype: float64, shape: [5], role: output}\n"
      "  - {tensor: out2, dtype: float64, shape: [5], role: output%s}\n"
      "cases:\n  - name: c\n";
  char text[1024];
  st_error_list errs;
  for (int with = 1; with >= 0; with--) {
    st_error_list_init(&errs);
    snprintf(text, sizeof text, fmt, with ? ", expected: {fill: 7}" : "");
    assert_int_equal(st_scene_set_new(&f->set), ST_OK);
    assert_int_equal(st_scene_set_load_string(f->set, "dual.yaml", text,
                                              strlen(text), NULL, &errs),
                     ST_OK);
    st_error_list_free(&errs);
    const st_case_result *r = run(f, INPROC, "cpu");
    st_assert_phases(r, "args", "golden", "record", "run", "compare");
    if (with) {
      assert_status(r, ST_CASE_PASS, INPROC);
    } else {
      assert_status(r, ST_CASE_FAIL, INPROC);
      assert_message_has(r, "tensor 'out2'", INPROC);
    }
    next_mode(f);
  }
}

/* ------------------------------------------------------------------ */
/* expect: error                                                       */

/* The kernel refuses a tile of 0 with the expected message: a pass, and
 * the events end at the run that reported it (no golden, no compare). */
static void expect_error__refused_as_expected_passes(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, "kernel: sig_add\ngolden: add\n", "", 0, 2,
         "    expect: error\n    expect_message: tile must be positive\n"
         "    rounds: 3\n");
    const st_case_result *r = run(f, m, "sig");
    assert_status(r, ST_CASE_PASS, m);
    assert_message_has(r, "tile must be positive, got 0", m);
    if (m == LEVEL3)
      st_assert_phases(r, "args", "rehost", "record", "run", "release");
    else
      st_assert_phases(r, "args", "record", "run");
    next_mode(f);
  }
}

/* A kernel that passes every round fails a negative test. */
static void expect_error__kernel_passes_fails(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, "kernel: sig_add\nexpect: error\n", "", 4, 2, "    rounds: 2\n");
    const st_case_result *r = run(f, m, "sig");
    assert_status(r, ST_CASE_FAIL, m);
    assert_string_equal(st_case_result_message(r),
                        "expected an error, but the kernel's call reported "
                        "none");
    next_mode(f);
  }
}

/* An error with another message fails, naming both. */
static void expect_error__other_message_fails(void **state) {
  fixture *f = *state;
  for (int m = 0; m < N_MODES; m++) {
    load(f, m, "kernel: sig_add\nexpect: error\nexpect_message: tile\n", "", 4,
         9, "");
    const st_case_result *r = run(f, m, "sig");
    assert_status(r, ST_CASE_FAIL, m);
    assert_string_equal(st_case_result_message(r),
                        "expected an error whose message contains 'tile'; "
                        "the kernel's error was: 'unroll must be 1..8, got "
                        "9'");
    next_mode(f);
  }
}

/* An error in a later round counts; the events end at that run. */
static void expect_error__later_round(void **state) {
  fixture *f = *state;
  fail_at = 2;
  load(f, INPROC, "kernel: probe\nexpect: error\n", "", 4, 2,
       "    rounds: 4\n    expect_message: refuses call 2\n");
  const st_case_result *r = run(f, INPROC, "cpu");
  assert_status(r, ST_CASE_PASS, INPROC);
  st_assert_phases(r, "args", "record", "run", "reset", "run");
}

/* A skip stays a skip; a kernel that never errs with a message given
 * names it. A case's expect: pass overrides the scene's expect: error. */
static void expect_error__skip_stays_and_case_overrides(void **state) {
  fixture *f = *state;
  decline = 1;
  load(f, INPROC,
       "kernel: probe\ngolden: add\ngolden_args: [a, b, out]\n"
       "expect: error\n",
       "", 4, 2, "");
  assert_status(run(f, INPROC, "cpu"), ST_CASE_SKIP, INPROC);
  next_mode(f);
  decline = 0;
  load(f, INPROC,
       "kernel: sig_add\ngolden: add\ngolden_args: [a, b, out]\n"
       "expect: error\nexpect_message: tile\n",
       "", 4, 2, "");
  const st_case_result *r = run(f, INPROC, "sig");
  assert_status(r, ST_CASE_FAIL, INPROC);
  assert_string_equal(st_case_result_message(r),
                      "expected an error whose message contains 'tile', but "
                      "the kernel's call reported none");
  next_mode(f);
  load(f, INPROC,
       "kernel: sig_add\ngolden: add\ngolden_args: [a, b, out]\n"
       "expect: error\n",
       "", 4, 2, "    expect: pass\n");
  r = run(f, INPROC, "sig");
  assert_status(r, ST_CASE_PASS, INPROC);
  st_assert_phases(r, "args", "golden", "record", "run", "compare");
}

/* An error that is not the kernel's report stays an error: on platform
 * cpu, which has no sig_add, the case fails in args. */
static void expect_error__other_errors_stay(void **state) {
  fixture *f = *state;
  load(f, INPROC, "kernel: sig_add\nexpect: error\n", "", 0, 2, "");
  const st_case_result *r = run(f, INPROC, "cpu");
  assert_status(r, ST_CASE_ERROR, INPROC);
  st_assert_phases(r, "args");
}

/* A kernel that crashes is no expected error: the case stays an error,
 * in an isolated child and in a supervised one. */
static void expect_error__crash_stays_error(void **state) {
  fixture *f = *state;
  static const int modes[] = {ISOLATE, SUPERVISE};
  for (size_t i = 0; i < 2; i++) {
    load(f, modes[i], "kernel: crash\nexpect: error\n", "", 4, 2, "");
    const st_case_result *r = run(f, modes[i], "cpu");
    assert_status(r, ST_CASE_ERROR, modes[i]);
    assert_message_has(r, "SIGABRT", modes[i]);
    next_mode(f);
  }
}

/* expected: {file: F} (tests/scenes/sig/expected_file.yaml): the right
 * input passes, the wrong one fails compare (an xfail, as marked), and
 * neither runs a golden. */
static void expected__file_form(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_error_list errs;
  st_error err;
  st_error_list_init(&errs);
  st_error_clear(&err);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  assert_int_equal(st_scene_set_load_path(
                       f->set,
                       ST_SOURCE_ROOT "/tests/scenes/sig/expected_file.yaml",
                       NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  st_run_options_init(&opts);
  opts.registry = f->reg;
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &f->run, &err), ST_OK);
  assert_int_equal(st_run_result_count(f->run), 2);
  assert_status(st_run_result_get(f->run, 0), ST_CASE_PASS, INPROC);
  assert_status(st_run_result_get(f->run, 1), ST_CASE_XFAIL, INPROC);
  assert_message_has(st_run_result_get(f->run, 1),
                     "tensor 'y': 1 of 4 elements differ", INPROC);
  for (size_t i = 0; i < 2; i++)
    st_assert_phases(st_run_result_get(f->run, i), "args", "record", "run",
                     "compare");
}

/* tests/scenes/sig/kernel_signatures.yaml, every new key in one scene
 * (schema_check validates it), runs on the sig plugin: all three cases
 * pass, none with a golden phase (out has expected; refused expects an
 * error). */
static void scene_file__every_key_runs(void **state) {
  fixture *f = *state;
  st_run_options opts;
  st_error_list errs;
  st_error err;
  st_error_list_init(&errs);
  st_error_clear(&err);
  assert_int_equal(st_scene_set_new(&f->set), ST_OK);
  assert_int_equal(st_scene_set_load_path(f->set,
                                          ST_SOURCE_ROOT
                                          "/tests/scenes/sig/"
                                          "kernel_signatures.yaml",
                                          NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  st_run_options_init(&opts);
  opts.registry = f->reg;
  opts.platform = "sig";
  assert_int_equal(st_run(f->set, &opts, NULL, 0, &f->run, &err), ST_OK);
  assert_int_equal(st_run_result_count(f->run), 3);
  for (size_t i = 0; i < 3; i++) {
    const st_case_result *r = st_run_result_get(f->run, i);
    assert_status(r, ST_CASE_PASS, INPROC);
    if (i < 2)
      st_assert_phases(r, "args", "record", "run", "compare");
    else
      st_assert_phases(r, "args", "record", "run");
  }
}

int main(void) {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
  const struct CMUnitTest tests[] = {
      T(golden_args__builtin_golden_of_a_config_kernel),
      T(scratch__untouched_passes),
      T(scratch__poisoned_before_every_run),
      T(golden_args__view_the_golden_sees),
      T(expected__only_scene_runs_no_golden),
      T(expected__wrong_value_fails),
      T(expected__wrong_kernel_fails),
      T(expected__over_golden_for_its_output),
      T(expect_error__refused_as_expected_passes),
      T(expect_error__kernel_passes_fails),
      T(expect_error__other_message_fails),
      T(expect_error__later_round),
      T(expect_error__skip_stays_and_case_overrides),
      T(expect_error__other_errors_stay),
      T(expect_error__crash_stays_error),
      T(expected__file_form),
      T(scene_file__every_key_runs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
