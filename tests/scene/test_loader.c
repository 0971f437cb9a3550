/* SPDX-License-Identifier: MIT */
/* Tests of the scene loader (scene/load.c): every bad-input fixture in
 * tests/scenes/bad/ against its .expected lines, one named test per error
 * class, generated hostile inputs (alias bombs, 10k-deep nesting, random
 * bytes, mutated scenes), directories, and the good scenes' model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ops/validate.h"
#include "scene/scene.h"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static int to_source_root(void **state) {
  (void)state;
  return chdir(ST_SOURCE_ROOT);
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0;
  if (f == NULL)
    return NULL;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = (cap + 4096) * 2;
      buf = realloc(buf, cap);
      assert_non_null(buf);
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0)
      break;
  }
  fclose(f);
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

/* Loads path into a fresh set; returns the status, the set in *out (may be
 * NULL to free it) and the errors in errs. */
static st_status load(const char *path, const st_load_options *opts,
                      st_scene_set **out, st_error_list *errs) {
  st_scene_set *set;
  st_error_list_init(errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_status rc = st_scene_set_load_path(set, path, opts, errs);
  if (out)
    *out = set;
  else
    st_scene_set_free(set);
  return rc;
}

static st_status load_str(const char *name, const char *text, size_t len,
                          const st_load_options *opts, st_scene_set **out,
                          st_error_list *errs) {
  st_scene_set *set;
  st_error_list_init(errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_status rc = st_scene_set_load_string(set, name, text, len, opts, errs);
  if (out)
    *out = set;
  else
    st_scene_set_free(set);
  return rc;
}

static void print_errors(const st_error_list *errs) {
  char buf[2200];
  for (size_t i = 0; i < errs->count; i++)
    print_message("  got: %s\n",
                  st_error_format(&errs->items[i], buf, sizeof buf));
}

/* Loads path as `scenetest check` does: with the validation pass of
 * docs/scene-format.md#load-errors over the built-in registry (no plugin;
 * platforms strict). */
static st_status load_checked(const char *path, st_scene_set **out,
                              st_error_list *errs, st_error_list *warns) {
  st_registry *reg;
  st__validate val;
  st__scene_check hooks;
  st__load_ext ext = {0};
  st_error_list_init(errs);
  st_error_list_init(warns);
  assert_int_equal(st_registry_new_builtin(&reg), ST_OK);
  assert_int_equal(st__validate_init(&val, reg, 0, 1, &hooks), ST_OK);
  ext.check = &hooks;
  ext.warnings = warns;
  assert_int_equal(st_scene_set_new(out), ST_OK);
  st_status rc = st__scene_set_load_path_ext(*out, path, NULL, &ext, errs);
  st__validate_free(&val);
  st_registry_free(reg);
  return rc;
}

/* The fixture NAME: loading tests/scenes/bad/NAME.yaml fails, adds
 * nothing, and its errors are exactly the lines of NAME.expected. A
 * fixture named check_* is loaded as `scenetest check` loads it, with the
 * validation pass of docs/scene-format.md#load-errors (ops, platforms, static
 * binding); the others by the loader alone, so that they need not be bindable.
 */
static void check_fixture(const char *name) {
  char path[512], exp_path[512], buf[2200];
  st_scene_set *set;
  st_error_list errs, warns;
  snprintf(path, sizeof path, "tests/scenes/bad/%s.yaml", name);
  snprintf(exp_path, sizeof exp_path, "tests/scenes/bad/%s.expected", name);
  char *expected = read_all(exp_path, NULL);
  if (expected == NULL)
    fail_msg("%s: no %s", name, exp_path);
  st_status rc;
  if (strncmp(name, "check_", 6) == 0) {
    rc = load_checked(path, &set, &errs, &warns);
    st_error_list_free(&warns);
  } else {
    rc = load(path, NULL, &set, &errs);
  }
  size_t i = 0;
  int bad = 0;
  char *save = NULL;
  for (char *line = strtok_r(expected, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save), i++) {
    if (i >= errs.count) {
      print_message("%s: missing error: %s\n", name, line);
      bad = 1;
      continue;
    }
    st_error_format(&errs.items[i], buf, sizeof buf);
    if (strcmp(buf, line) != 0) {
      print_message("%s: expected: %s\n%s:      got: %s\n", name, line, name,
                    buf);
      bad = 1;
    }
  }
  if (i != errs.count) {
    print_message("%s: %zu errors, %zu expected\n", name, errs.count, i);
    print_errors(&errs);
    bad = 1;
  }
  free(expected);
  assert_int_equal(bad, 0);
  assert_int_equal(rc, ST_ELOAD);
  assert_int_equal(st_scene_set_count(set), 0);
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

/* Asserts one error whose message contains needle. */
static void assert_one_error(const st_error_list *errs, const char *needle) {
  if (errs->count != 1 || strstr(errs->items[0].message, needle) == NULL) {
    print_message("expected one error containing: %s\n", needle);
    print_errors(errs);
    fail();
  }
}

/* ------------------------------------------------------------------ */
/* Every fixture, as a table                                           */

static void scene_load__every_bad_fixture(void **state) {
  (void)state;
  DIR *d = opendir("tests/scenes/bad");
  struct dirent *de;
  size_t n = 0;
  assert_non_null(d);
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0)
      continue;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(len - 5), de->d_name);
    check_fixture(name);
    n++;
  }
  closedir(d);
  assert_true(n >= 70);
}

/* Every .expected has its .yaml (a renamed fixture leaves no orphan). */
static void scene_load__no_orphan_expected(void **state) {
  (void)state;
  DIR *d = opendir("tests/scenes/bad");
  struct dirent *de;
  assert_non_null(d);
  while ((de = readdir(d)) != NULL) {
    size_t len = strlen(de->d_name);
    if (len < 10 || strcmp(de->d_name + len - 9, ".expected") != 0)
      continue;
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "tests/scenes/bad/%.*s.yaml", (int)(len - 9),
             de->d_name);
    if (stat(path, &sb) != 0)
      fail_msg("orphan expected file: %s", de->d_name);
  }
  closedir(d);
}

/* ------------------------------------------------------------------ */
/* One named test per error class                                      */

#define FIXTURE_TEST(name)                                                     \
  static void scene_load__##name(void **state) {                               \
    (void)state;                                                               \
    check_fixture(#name);                                                      \
  }

FIXTURE_TEST(unknown_key)
FIXTURE_TEST(number_out_of_range)
FIXTURE_TEST(duplicate_key)
FIXTURE_TEST(missing_key)
FIXTURE_TEST(bad_identifier)
FIXTURE_TEST(ident_too_long)
FIXTURE_TEST(tensor_after_scalar)
FIXTURE_TEST(duplicate_arg)
FIXTURE_TEST(bad_role)
FIXTURE_TEST(compare_false_input)
FIXTURE_TEST(bad_tolerance)
FIXTURE_TEST(unknown_dtype)
FIXTURE_TEST(bad_dtype)
FIXTURE_TEST(dtype_param_number)
FIXTURE_TEST(dtype_param_bad_name)
FIXTURE_TEST(unknown_init)
FIXTURE_TEST(init_two_forms)
FIXTURE_TEST(init_unknown_form)
FIXTURE_TEST(range_missing_step)
FIXTURE_TEST(uniform_not_pair)
FIXTURE_TEST(values_not_list)
FIXTURE_TEST(bad_level)
FIXTURE_TEST(workers_level2)
FIXTURE_TEST(workers_range)
FIXTURE_TEST(skip_golden_not_bool)
FIXTURE_TEST(no_cases)
FIXTURE_TEST(cases_not_list)
FIXTURE_TEST(case_missing_name)
FIXTURE_TEST(duplicate_case)
FIXTURE_TEST(unknown_case_key)
FIXTURE_TEST(rounds_zero)
FIXTURE_TEST(timeout_zero)
FIXTURE_TEST(manual_bad)
FIXTURE_TEST(platforms_not_list)
FIXTURE_TEST(params_not_map)
FIXTURE_TEST(param_value_list)
FIXTURE_TEST(param_duplicate)
FIXTURE_TEST(scene_not_mapping)
/* Kernel signatures golden does not share (docs/scene-format.md). */
FIXTURE_TEST(sig_scratch_keys)
FIXTURE_TEST(sig_golden_args_unknown)
FIXTURE_TEST(sig_expected_misplaced)
FIXTURE_TEST(sig_expect_forms)
FIXTURE_TEST(check_sig_golden_args)
FIXTURE_TEST(empty_file)
FIXTURE_TEST(comments_only)
FIXTURE_TEST(null_document)
FIXTURE_TEST(duplicate_scene)
FIXTURE_TEST(syntax_error)
FIXTURE_TEST(semantic_and_syntax)
FIXTURE_TEST(unknown_alias)
FIXTURE_TEST(nul_byte)
FIXTURE_TEST(invalid_utf8)
FIXTURE_TEST(deep_nesting)
FIXTURE_TEST(alias_bomb)
FIXTURE_TEST(shape_negative)
FIXTURE_TEST(shape_float)
FIXTURE_TEST(shape_too_many_dims)
FIXTURE_TEST(shape_overflow)
FIXTURE_TEST(shape_param_float)
FIXTURE_TEST(shape_param_missing)
FIXTURE_TEST(fill_fraction_uint8)
FIXTURE_TEST(fill_out_of_range_uint8)
FIXTURE_TEST(values_count)
FIXTURE_TEST(values_out_of_range)
FIXTURE_TEST(range_overflow)
FIXTURE_TEST(randint_empty)
FIXTURE_TEST(randint_high_too_big)
FIXTURE_TEST(uniform_int_dtype)
FIXTURE_TEST(normal_negative_std)
FIXTURE_TEST(float16_out_of_range)
FIXTURE_TEST(bool_value_two)
FIXTURE_TEST(scalar_value_not_fit)
FIXTURE_TEST(scalar_value_param_string)
FIXTURE_TEST(file_missing)
FIXTURE_TEST(file_is_dir)
FIXTURE_TEST(file_escapes_dir)
FIXTURE_TEST(file_size_mismatch)
FIXTURE_TEST(max_arg_bytes)
FIXTURE_TEST(args_not_list)
FIXTURE_TEST(arg_not_mapping)
FIXTURE_TEST(arg_neither)
FIXTURE_TEST(kernel_not_string)
FIXTURE_TEST(complex_key)
FIXTURE_TEST(many_errors)
FIXTURE_TEST(column_characters)
FIXTURE_TEST(every_case_checked)
/* Param expressions and lists
 * (docs/scene-format.md#params-expressions-and-lists). */
FIXTURE_TEST(expr_unknown_name)
FIXTURE_TEST(expr_forward_name)
FIXTURE_TEST(expr_syntax)
FIXTURE_TEST(expr_inexact)
FIXTURE_TEST(expr_div_zero)
FIXTURE_TEST(expr_overflow)
FIXTURE_TEST(list_in_number)
FIXTURE_TEST(list_in_rounds)
FIXTURE_TEST(number_for_list)
FIXTURE_TEST(expr_cycle)
FIXTURE_TEST(expr_quoted_columns)
FIXTURE_TEST(param_dtype_name)
FIXTURE_TEST(expr_workers)

/* ------------------------------------------------------------------ */
/* Generated hostile inputs                                            */

/* A billion-laughs bomb of `levels` levels of 10 aliases each: 10^levels
 * nodes expanded. It must fail on the budget, quickly, not expand. */
static char *alias_bomb(int levels) {
  size_t cap = 64 + (size_t)levels * 128;
  char *s = malloc(cap), *p = s;
  p += sprintf(p, "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
  for (int i = 1; i <= levels; i++) {
    p += sprintf(p, "l%d: &l%d [", i, i);
    for (int j = 0; j < 10; j++)
      p += sprintf(p, "%s*l%d", j ? ", " : "", i - 1);
    p += sprintf(p, "]\n");
  }
  return s;
}

static void scene_load__alias_bomb_generated(void **state) {
  (void)state;
  st_error_list errs;
  char *text = alias_bomb(30); /* 10^30 nodes if expanded */
  assert_int_equal(load_str("bomb.yaml", text, strlen(text), NULL, NULL, &errs),
                   ST_ELOAD);
  assert_one_error(&errs, "more than 1000000 YAML nodes");
  /* The budget trips on the line whose alias crosses it: l5 (line 6)
   * expands to 1,111,111 nodes. */
  assert_int_equal(errs.items[0].line, 6);
  st_error_list_free(&errs);
  free(text);
}

static void scene_load__node_budget_option(void **state) {
  (void)state;
  const char *text = "scene: s\nkernel: add\nargs: []\ncases:\n"
                     "  - &c {name: a, rounds: 2}\n  - {<<: *c, name: b}\n";
  st_load_options opts;
  st_error_list errs;
  st_load_options_init(&opts);
  /* Only what aliases reach counts (docs/scene-format.md#shapes-and-limits): *c
   * is a map of 4 scalars, 5 nodes; the file's 20-odd plain nodes count
   * nothing. */
  opts.max_nodes = 5;
  assert_int_equal(load_str("b.yaml", text, strlen(text), &opts, NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  opts.max_nodes = 4;
  assert_int_equal(load_str("b.yaml", text, strlen(text), &opts, NULL, &errs),
                   ST_ELOAD);
  assert_one_error(&errs, "more than 4 YAML nodes");
  assert_one_error(&errs, "raise it with --max-nodes");
  st_error_list_free(&errs);
}

/* A file without aliases loads under any budget: plain nodes do not
 * count (docs/scene-format.md#shapes-and-limits: the budget rejects alias
 * bombs, not big honest files). */
static void scene_load__node_budget_ignores_plain_nodes(void **state) {
  (void)state;
  const char *text = "scene: s\nkernel: add\nargs: []\ncases:\n"
                     "  - {name: a, rounds: 2}\n  - {name: b}\n";
  st_load_options opts;
  st_error_list errs;
  st_load_options_init(&opts);
  opts.max_nodes = 1;
  assert_int_equal(load_str("p.yaml", text, strlen(text), &opts, NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
}

/* A merge-key bomb: each level merges ten aliases of the level below.
 * The aliases are counted against the node budget as any alias is, so it
 * fails on the budget (docs/scene-format.md#shapes-and-limits,
 * docs/scene-format.md#load-errors), not by exhausting memory. */
static void scene_load__merge_bomb(void **state) {
  (void)state;
  st_error_list errs;
  size_t cap = 64 + 30 * 160;
  char *text = malloc(cap), *p = text;
  p += sprintf(p, "m0: &m0 {a: 1, b: 2, c: 3, d: 4, e: 5}\n");
  for (int i = 1; i <= 30; i++) {
    p += sprintf(p, "m%d: &m%d {k%d: 0, <<: [", i, i, i);
    for (int j = 0; j < 10; j++)
      p += sprintf(p, "%s*m%d", j ? ", " : "", i - 1);
    p += sprintf(p, "]}\n");
  }
  assert_int_equal(
      load_str("mbomb.yaml", text, strlen(text), NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "more than 1000000 YAML nodes");
  st_error_list_free(&errs);
  free(text);
}

/* Merge keys (YAML 1.1): a mapping or a list of mappings, explicit keys
 * win, the earlier of several merged mappings wins; aliases of merged
 * mappings stay within the budget. */
static void scene_load__merge_keys(void **state) {
  (void)state;
  st_scene_set *set;
  st_error_list errs;
  const char *text =
      "scene: m\n"
      "kernel: add\n"
      "rtol: 0.5\n"
      "args:\n"
      "  - {<<: &f32 {dtype: float32, shape: [4], init: ones}, tensor: a}\n"
      "  - {<<: [{init: zeros, dtype: int8}, *f32], tensor: b,"
      " dtype: float32}\n"
      "  - {<<: *f32, tensor: out, role: output, init: zeros}\n"
      "cases:\n"
      "  - &c {name: one, <<: {rounds: 3}}\n"
      "  - {<<: *c, name: two}\n";
  st_load_options opts;
  st_load_options_init(&opts);
  /* Exactly every alias's expansion: *f32 (8 nodes) twice, *c (7). */
  opts.max_nodes = 23;
  assert_int_equal(
      load_str("merge.yaml", text, strlen(text), &opts, &set, &errs), ST_OK);
  const st_scene *s = st_scene_set_get(set, 0);
  assert_int_equal(s->n_args, 3);
  assert_int_equal(s->args[0].init.kind, ST__INIT_ONES);
  assert_string_equal(s->args[1].dtype.name, "float32");  /* explicit wins */
  assert_int_equal(s->args[1].init.kind, ST__INIT_ZEROS); /* earlier wins */
  assert_int_equal(s->args[1].ndim, 1);
  assert_int_equal(s->args[2].init.kind, ST__INIT_ZEROS);
  assert_int_equal(s->args[2].role, ST_ROLE_OUTPUT);
  assert_int_equal(s->n_cases, 2);
  assert_string_equal(s->cases[1].name, "two");
  assert_int_equal(s->cases[1].rounds, 3);
  st_scene_set_free(set);
  st_error_list_free(&errs);
  opts.max_nodes = 22;
  assert_int_equal(
      load_str("merge.yaml", text, strlen(text), &opts, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "more than 22 YAML nodes");
  st_error_list_free(&errs);
}

/* st__plan_same_inputs: cases resolve alike only with the same params
 * (names, order, values bit for bit, strings) and case-level tolerances;
 * the loader keeps one case's plan for the next ones only then. */
static void scene_load__plan_same_inputs(void **state) {
  (void)state;
  st_scene_set *set;
  st_error_list errs;
  const char *text =
      "scene: same\n"
      "kernel: add\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [4], init: ones}\n"
      "  - {tensor: b, dtype: float32, shape: [4], init: ones}\n"
      "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
      "cases:\n"
      "  - {name: c0, params: {N: 4}}\n"
      "  - {name: c1, params: {N: 4}}\n"
      "  - {name: c2, params: {N: 5}}\n"
      "  - {name: c3, params: {N: 4.0}}\n"
      "  - {name: c4, params: {M: 4}}\n"
      "  - {name: c5, params: {N: 4, M: 1}}\n"
      "  - {name: c6, params: {N: int8}}\n"
      "  - {name: c7, params: {N: int8}}\n"
      "  - {name: c8, params: {N: 4}, rtol: 0.1}\n"
      "  - {name: c9, params: {N: -0.0}}\n"
      "  - {name: c10, params: {N: 0.0}}\n"
      "  - {name: c11, params: {N: 0.0}}\n"
      "  - {name: c12, params: {N: 4}, equal_nan: true}\n"
      "  - {name: c13}\n"
      "  - {name: c14}\n";
  assert_int_equal(load_str("same.yaml", text, strlen(text), NULL, &set, &errs),
                   ST_OK);
  const st_scene *s = st_scene_set_get(set, 0);
  assert_int_equal(s->n_cases, 15);
  assert_true(st__plan_same_inputs(s, 0, 1));
  assert_true(st__plan_same_inputs(s, 6, 7));
  assert_true(st__plan_same_inputs(s, 10, 11));
  assert_true(st__plan_same_inputs(s, 13, 14));
  assert_false(st__plan_same_inputs(s, 0, 2));  /* value */
  assert_false(st__plan_same_inputs(s, 0, 3));  /* 4 against 4.0 */
  assert_false(st__plan_same_inputs(s, 0, 4));  /* name */
  assert_false(st__plan_same_inputs(s, 0, 5));  /* count */
  assert_false(st__plan_same_inputs(s, 0, 6));  /* number against string */
  assert_false(st__plan_same_inputs(s, 0, 8));  /* case rtol */
  assert_false(st__plan_same_inputs(s, 9, 10)); /* -0.0 against 0.0 */
  assert_false(st__plan_same_inputs(s, 0, 12)); /* case equal_nan */
  assert_false(st__plan_same_inputs(s, 0, 13)); /* params against none */
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

/* A long run of alike cases shares one plan, and a case that differs in
 * the middle of it is still resolved (and its error told) on its own. */
static void scene_load__alike_cases_resolved_each(void **state) {
  (void)state;
  st_error_list errs;
  const char *text =
      "scene: alike\n"
      "kernel: add\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [N], init: {fill: F}}\n"
      "  - {tensor: b, dtype: float32, shape: [N], init: ones}\n"
      "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
      "cases:\n"
      "  - {name: c0, params: {N: 4, F: 1}}\n"
      "  - {name: c1, params: {N: 4, F: 1}}\n"
      "  - {name: c2, params: {N: 4.0, F: 1}}\n"
      "  - {name: c3, params: {N: 4, F: 1}}\n"
      "  - {name: c4, params: {N: 4, F: 1e300}}\n"
      "  - {name: c5, params: {N: 4, F: 1}}\n";
  assert_int_equal(
      load_str("alike.yaml", text, strlen(text), NULL, NULL, &errs), ST_ELOAD);
  if (errs.count != 4)
    print_errors(&errs);
  /* Sorted by position: a's shape (c2), a's fill (c4), b's and out's
   * shapes (c2). */
  assert_int_equal(errs.count, 4);
  assert_non_null(strstr(errs.items[0].message, "'a' is 4 (a float) in "
                                                "case 'c2'"));
  assert_non_null(strstr(errs.items[1].message, "does not fit float32 in "
                                                "case 'c4'"));
  assert_non_null(strstr(errs.items[2].message, "in case 'c2'"));
  assert_non_null(strstr(errs.items[3].message, "in case 'c2'"));
  st_error_list_free(&errs);
}

/* A check hook that records the cases it saw, and says an error of
 * those whose index is below loud_below. */
typedef struct hook_log {
  size_t seen[16];
  size_t n;
  size_t loud_below; /* 0: it says nothing */
} hook_log;

static void logging_hook(void *data, const st_scene *scene, size_t ci,
                         const st__plan *plan, st__diag *d) {
  hook_log *h = data;
  (void)scene;
  if (h->n < 16)
    h->seen[h->n++] = ci;
  if (ci < h->loud_below)
    st__diag_error(d, plan->kase->line, plan->kase->column, "loud %s",
                   plan->kase->name);
}

static size_t hooked_load(const char *text, int by_plan, hook_log *h,
                          st_error_list *errs) {
  st__scene_check hooks = {0};
  st__load_ext ext = {0};
  st_scene_set *set;
  hooks.data = h;
  hooks.kase = logging_hook;
  hooks.kase_by_plan = by_plan;
  ext.check = &hooks;
  h->n = 0;
  st_error_list_init(errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_status rc = st__scene_set_load_string_ext(set, "h.yaml", text,
                                               strlen(text), NULL, &ext, errs);
  assert_int_equal(rc, errs->count ? ST_ELOAD : ST_OK);
  st_scene_set_free(set);
  return h->n;
}

/* A kase_by_plan hook is called once for a run of alike cases it said
 * nothing of, and again for a case that differs and for every alike case
 * after one it did say something of; without the flag, for every case. */
static void scene_load__plan_hook_once_per_alike_run(void **state) {
  (void)state;
  st_error_list errs;
  hook_log h;
  const char *text =
      "scene: alike\n"
      "kernel: add\n"
      "args:\n"
      "  - {tensor: a, dtype: float32, shape: [N]}\n"
      "  - {tensor: b, dtype: float32, shape: [N]}\n"
      "  - {tensor: out, dtype: float32, shape: [N], role: output}\n"
      "cases:\n"
      "  - {name: c0, params: {N: 4}}\n"
      "  - {name: c1, params: {N: 4}}\n"
      "  - {name: c2, params: {N: 4}}\n"
      "  - {name: c3, params: {N: 5}}\n"
      "  - {name: c4, params: {N: 5}}\n";
  h.loud_below = 0;
  assert_int_equal(hooked_load(text, 1, &h, &errs), 2);
  assert_int_equal(h.seen[0], 0);
  assert_int_equal(h.seen[1], 3);
  assert_int_equal(errs.count, 0);
  st_error_list_free(&errs);
  assert_int_equal(hooked_load(text, 0, &h, &errs), 5);
  st_error_list_free(&errs);
  /* Loud about c0 (and so about c1, c2, alike): each gets its error. */
  h.loud_below = 3;
  assert_int_equal(hooked_load(text, 1, &h, &errs), 4);
  assert_int_equal(errs.count, 3);
  assert_non_null(strstr(errs.items[2].message, "loud c2"));
  st_error_list_free(&errs);
}

/* A quoted "<<" is an ordinary key, so an unknown one. */
static void scene_load__quoted_merge_key_is_a_key(void **state) {
  (void)state;
  st_error_list errs;
  const char *text = "scene: q\nkernel: add\n\"<<\": {level: 2}\n"
                     "args: []\ncases: [{name: c}]\n";
  assert_int_equal(load_str("q.yaml", text, strlen(text), NULL, NULL, &errs),
                   ST_ELOAD);
  assert_one_error(&errs, "unknown key '<<' in scene");
  st_error_list_free(&errs);
}

/* The model of a matrix case: names, merged params in order, the base
 * name's length, fields copied to every combination, expect resolved. */
static void scene_load__matrix_model(void **state) {
  (void)state;
  st_scene_set *set;
  st_error_list errs;
  const char *text = "scene: m\nkernel: copy\nexpect: fail\n"
                     "args:\n"
                     "  - {tensor: x, dtype: DT, shape: [N]}\n"
                     "  - {tensor: y, dtype: DT, shape: [N], role: output}\n"
                     "cases:\n"
                     "  - name: g\n"
                     "    params: {K: 1}\n"
                     "    matrix: {DT: [float32, int8], N: [1e0, 2]}\n"
                     "    exclude: [{DT: int8, N: 1e0}]\n"
                     "    platforms: [cpu]\n"
                     "    rounds: K\n"
                     "    expect: pass\n";
  assert_int_equal(load_str("m.yaml", text, strlen(text), NULL, NULL, &errs),
                   ST_ELOAD); /* N = 1e0 is a float: not a dimension */
  st_error_list_free(&errs);
  text = "scene: m\nkernel: copy\nexpect: fail\n"
         "args:\n"
         "  - {tensor: x, dtype: DT, shape: [N]}\n"
         "  - {tensor: y, dtype: DT, shape: [N], role: output}\n"
         "cases:\n"
         "  - name: g\n"
         "    params: {K: 2}\n"
         "    matrix: {DT: [float32, int8], N: [+1, 2]}\n"
         "    exclude: [{DT: int8, N: +1}]\n"
         "    platforms: [cpu]\n"
         "    rounds: K\n"
         "    expect: pass\n"
         "  - name: h\n"
         "    params: {DT: bool, N: 3}\n";
  assert_int_equal(load_str("m.yaml", text, strlen(text), NULL, &set, &errs),
                   ST_OK);
  const st_scene *s = st_scene_set_get(set, 0);
  assert_int_equal(s->n_cases, 4);
  assert_string_equal(s->cases[0].name, "g[DT=float32,N=+1]");
  assert_string_equal(s->cases[1].name, "g[DT=float32,N=2]");
  assert_string_equal(s->cases[2].name, "g[DT=int8,N=2]");
  assert_string_equal(s->cases[3].name, "h");
  for (size_t i = 0; i < 3; i++) {
    const st__case *c = &s->cases[i];
    assert_int_equal(c->base_len, 1);
    assert_int_equal(c->n_params, 3);
    assert_string_equal(c->params[0].name, "K");
    assert_string_equal(c->params[1].name, "DT");
    assert_true(c->params[1].is_str);
    assert_string_equal(c->params[2].name, "N");
    assert_int_equal(c->rounds, 2);
    assert_int_equal(c->expect_fail, 0);
    assert_int_equal(c->n_platforms, 1);
    assert_string_equal(c->platforms[0], "cpu");
    assert_int_equal(c->line, 8);
  }
  assert_int_equal(s->cases[2].params[2].num.i, 2);
  assert_int_equal(s->cases[3].expect_fail, 1); /* the scene's */
  assert_int_equal(s->cases[3].base_len, 1);
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

static void scene_load__deep_nesting_10k(void **state) {
  (void)state;
  const int depth = 10000;
  char *text = malloc((size_t)depth * 6 + 64);
  st_error_list errs;
  size_t n = 0;
  /* Flow sequences, then block mappings: both parser paths. */
  for (int i = 0; i < depth; i++)
    text[n++] = '[';
  for (int i = 0; i < depth; i++)
    text[n++] = ']';
  text[n] = '\0';
  assert_int_equal(load_str("deep.yaml", text, n, NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "nesting deeper than 64 levels");
  assert_int_equal(errs.items[0].line, 1);
  assert_int_equal(errs.items[0].column, 65);
  st_error_list_free(&errs);

  n = 0;
  for (int i = 0; i < depth; i++)
    n += (size_t)sprintf(text + n, "{a: ");
  text[n++] = '1';
  for (int i = 0; i < depth; i++)
    text[n++] = '}';
  text[n] = '\0';
  assert_int_equal(load_str("deep.yaml", text, n, NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "nesting deeper than 64 levels");
  st_error_list_free(&errs);
  free(text);
}

/* A NUL byte inside the string passed with its length. */
static void scene_load__nul_byte_in_string(void **state) {
  (void)state;
  static const char text[] = "scene: s\nkernel: add\nargs:\0 []\n";
  st_error_list errs;
  assert_int_equal(
      load_str("nul.yaml", text, sizeof text - 1, NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "NUL byte");
  assert_int_equal(errs.items[0].line, 3);
  assert_int_equal(errs.items[0].column, 6);
  st_error_list_free(&errs);
}

static void scene_load__invalid_utf8_column(void **state) {
  (void)state;
  /* Two 2-byte characters, then a stray continuation byte: column 5
   * counted in characters (byte 7). */
  static const char text[] = "k: \xc3\xa9\xc3\xa9\x80\n";
  st_error_list errs;
  assert_int_equal(load_str("u.yaml", text, sizeof text - 1, NULL, NULL, &errs),
                   ST_ELOAD);
  assert_one_error(&errs, "expected valid UTF-8 text");
  assert_int_equal(errs.items[0].line, 1);
  assert_int_equal(errs.items[0].column, 6);
  st_error_list_free(&errs);
}

static void scene_load__empty_string(void **state) {
  (void)state;
  st_error_list errs;
  assert_int_equal(load_str("e.yaml", "", 0, NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "empty file; expected a scene document");
  st_error_list_free(&errs);
}

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Whatever the bytes, the loader returns OK or ELOAD, with errors exactly
 * when it fails, each with a position; nothing leaks (valgrind, ASan). */
static void check_outcome(st_status rc, const st_error_list *errs) {
  assert_true(rc == ST_OK || rc == ST_ELOAD);
  if (rc == ST_OK) {
    assert_int_equal(errs->count, 0);
    return;
  }
  assert_true(errs->count >= 1);
  for (size_t i = 0; i < errs->count; i++) {
    assert_true(errs->items[i].line >= 1);
    assert_true(errs->items[i].column >= 1);
    assert_string_equal(errs->items[i].file, "garbage.yaml");
  }
}

static void scene_load__random_garbage(void **state) {
  (void)state;
  uint64_t seed = 42;
  char buf[4096];
  for (int round = 0; round < 300; round++) {
    size_t len = rng_next(&seed) % sizeof buf;
    int printable = round % 2;
    for (size_t i = 0; i < len; i++) {
      uint64_t r = rng_next(&seed);
      /* Half the rounds use YAML punctuation to get past the reader. */
      static const char alphabet[] = "ab:-[]{},&*!|>'\"#\n 12.e";
      buf[i] = printable ? alphabet[r % (sizeof alphabet - 1)] : (char)r;
    }
    st_error_list errs;
    st_status rc = load_str("garbage.yaml", buf, len, NULL, NULL, &errs);
    check_outcome(rc, &errs);
    st_error_list_free(&errs);
  }
}

/* Byte mutations of a good scene: hits the validator, not just the
 * reader. */
static void scene_load__mutated_scenes(void **state) {
  (void)state;
  size_t len;
  char *good = read_all("tests/scenes/good/multi.yaml", &len);
  assert_non_null(good);
  char *buf = malloc(len);
  uint64_t seed = 7;
  int ok = 0, failed = 0;
  for (int round = 0; round < 400; round++) {
    memcpy(buf, good, len);
    int flips = 1 + (int)(rng_next(&seed) % 4);
    for (int f = 0; f < flips; f++) {
      uint64_t r = rng_next(&seed);
      static const char alphabet[] = "0-9:[]{}x,\n &*'";
      buf[r % len] = alphabet[(r >> 32) % (sizeof alphabet - 1)];
    }
    st_error_list errs;
    /* The name puts the scene in tests/scenes/good for its file: init. */
    st_scene_set *set;
    st_error_list_init(&errs);
    assert_int_equal(st_scene_set_new(&set), ST_OK);
    st_status rc = st_scene_set_load_string(
        set, "tests/scenes/good/garbage.yaml", buf, len, NULL, &errs);
    assert_true(rc == ST_OK || rc == ST_ELOAD);
    if (rc == ST_OK) {
      ok++;
      assert_int_equal(errs.count, 0);
    } else {
      failed++;
      assert_true(errs.count >= 1);
      assert_int_equal(st_scene_set_count(set), 0);
    }
    st_scene_set_free(set);
    st_error_list_free(&errs);
  }
  assert_true(failed > 0);
  free(buf);
  free(good);
}

/* ------------------------------------------------------------------ */
/* Files and directories                                               */

static void scene_load__missing_path(void **state) {
  (void)state;
  st_error_list errs;
  assert_int_equal(load("tests/scenes/no_such_file.yaml", NULL, NULL, &errs),
                   ST_ELOAD);
  assert_int_equal(errs.count, 1);
  assert_string_equal(errs.items[0].message,
                      "cannot open 'tests/scenes/no_such_file.yaml': No such "
                      "file or directory");
  st_error_list_free(&errs);
}

/* /proc/self/mem opens but fails to read at offset 0 (EIO), even for
 * root, for whom no permission bit makes a file unreadable. */
static void scene_load__unreadable_file(void **state) {
  (void)state;
  st_error_list errs;
  assert_int_equal(load("/proc/self/mem", NULL, NULL, &errs), ST_ELOAD);
  assert_int_equal(errs.count, 1);
  assert_string_equal(errs.items[0].message,
                      "cannot read '/proc/self/mem': Input/output error");
  st_error_list_free(&errs);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

#define SCENE(name)                                                            \
  "scene: " name "\nkernel: add\nargs: []\ncases:\n  - name: c\n"

/* A file over max_file_bytes is refused before it is read, at 1:1, the
 * message naming the flag; at exactly its size it loads. */
static void scene_load__max_file_bytes(void **state) {
  (void)state;
  char path[2048];
  const char *text = SCENE("s_size");
  st_load_options opts;
  st_error_list errs;
  snprintf(path, sizeof path, "%s/test_loader_size.yaml", ST_BUILD_ROOT);
  write_file(path, text);
  st_load_options_init(&opts);
  assert_true(opts.max_file_bytes == ST_DEFAULT_MAX_FILE_BYTES);
  opts.max_file_bytes = strlen(text) - 1;
  assert_int_equal(load(path, &opts, NULL, &errs), ST_ELOAD);
  assert_int_equal(errs.count, 1);
  assert_string_equal(errs.items[0].file, path);
  assert_int_equal(errs.items[0].line, 1);
  assert_int_equal(errs.items[0].column, 1);
  assert_non_null(strstr(errs.items[0].message, "--max-file-bytes"));
  st_error_list_free(&errs);
  opts.max_file_bytes = strlen(text);
  assert_int_equal(load(path, &opts, NULL, &errs), ST_OK);
  st_error_list_free(&errs);
  unlink(path);
}

static void make_tree(char *dir, size_t size) {
  snprintf(dir, size, "%s/test_loader_tree.XXXXXX", ST_BUILD_ROOT);
  assert_non_null(mkdtemp(dir));
  char p[2048];
#define P(rel) (snprintf(p, sizeof p, "%s/%s", dir, rel), p)
  assert_int_equal(mkdir(P("a"), 0755), 0);
  assert_int_equal(mkdir(P(".hidden"), 0755), 0);
  write_file(P("b.yaml"), SCENE("s_b"));
  write_file(P("a.yaml"), SCENE("s_a_yaml"));
  write_file(P("a-b.yml"), SCENE("s_a_dash"));
  write_file(P("a/z.yaml"), SCENE("s_a_z"));
  write_file(P(".skip.yaml"), SCENE("s_hidden_file"));
  write_file(P(".hidden/x.yaml"), SCENE("s_hidden_dir"));
  write_file(P("notes.txt"), "not a scene\n");
  write_file(P("c.yaml"), SCENE("s_b")); /* duplicate of b.yaml's scene */
#undef P
}

static void remove_tree(const char *dir) {
  static const char *const rel[] = {
      "a/z.yaml",   ".hidden/x.yaml", "b.yaml", "a.yaml", "a-b.yml",
      ".skip.yaml", "notes.txt",      "c.yaml", "a",      ".hidden"};
  char p[2048];
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    snprintf(p, sizeof p, "%s/%s", dir, rel[i]);
    (void)remove(p);
  }
  (void)remove(dir);
}

/* Bytewise order of full paths: "a-b.yml" < "a.yaml" < "a/z.yaml"
 * ('-' < '.' < '/'), hidden names skipped, only .yaml/.yml, and the
 * duplicate scene in c.yaml is an error naming b.yaml's place. */
static void scene_load__directory_sorted(void **state) {
  (void)state;
  char dir[1024], want[2200];
  st_scene_set *set;
  st_error_list errs;
  make_tree(dir, sizeof dir);
  st_status rc = load(dir, NULL, &set, &errs);
  assert_int_equal(rc, ST_ELOAD);
  assert_int_equal(st_scene_set_count(set), 4);
  assert_string_equal(st_scene_name(st_scene_set_get(set, 0)), "s_a_dash");
  assert_string_equal(st_scene_name(st_scene_set_get(set, 1)), "s_a_yaml");
  assert_string_equal(st_scene_name(st_scene_set_get(set, 2)), "s_a_z");
  assert_string_equal(st_scene_name(st_scene_set_get(set, 3)), "s_b");
  snprintf(want, sizeof want, "%s/a/z.yaml", dir);
  assert_string_equal(st_scene_file(st_scene_set_get(set, 2)), want);
  assert_int_equal(errs.count, 1);
  snprintf(want, sizeof want,
           "duplicate scene 's_b' (first defined at %s/b.yaml:1:8)", dir);
  assert_string_equal(errs.items[0].message, want);
  snprintf(want, sizeof want, "%s/c.yaml", dir);
  assert_string_equal(errs.items[0].file, want);
  assert_int_equal(errs.items[0].line, 1);
  assert_int_equal(errs.items[0].column, 8);
  st_scene_set_free(set);
  st_error_list_free(&errs);
  remove_tree(dir);
}

/* Loading the same file twice into one set: its scenes are duplicates. */
static void scene_load__duplicate_scene_across_loads(void **state) {
  (void)state;
  st_scene_set *set;
  st_error_list errs;
  const char *path = "tests/scenes/good/anchors.yml";
  size_t len;
  char *text = read_all(path, &len);
  assert_non_null(text);
  assert_int_equal(load(path, NULL, &set, &errs), ST_OK);
  /* The same file again is skipped (a file named twice loads once)... */
  assert_int_equal(st_scene_set_load_path(set, path, NULL, &errs), ST_OK);
  assert_int_equal(st_scene_set_count(set), 1);
  assert_int_equal(errs.count, 0);
  /* ...its scenes from another file clash. */
  assert_int_equal(
      st_scene_set_load_string(set, "other.yml", text, len, NULL, &errs),
      ST_ELOAD);
  free(text);
  assert_int_equal(st_scene_set_count(set), 1);
  assert_one_error(&errs, "duplicate scene 'anchored' (first defined at "
                          "tests/scenes/good/anchors.yml:2:8)");
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

/* A good document before a bad one: nothing of the file is added. */
static void scene_load__file_is_atomic(void **state) {
  (void)state;
  const char *text = SCENE("good") "---\n" SCENE("bad") "level: 9\n";
  st_scene_set *set;
  st_error_list errs;
  assert_int_equal(load_str("x.yaml", text, strlen(text), NULL, &set, &errs),
                   ST_ELOAD);
  assert_int_equal(st_scene_set_count(set), 0);
  assert_one_error(&errs, "expected 2 (chip) or 3 (node) for 'level'");
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

static void scene_load__too_many_errors(void **state) {
  (void)state;
  size_t cap = 200 * 64 + 256, n = 0;
  char *text = malloc(cap);
  st_error_list errs;
  n += (size_t)sprintf(text, "scene: s\nkernel: add\nargs:\n");
  for (int i = 0; i < 200; i++)
    n += (size_t)sprintf(text + n, "  - {tensor: t%d, dtype: f, shape: [-1]}\n",
                         i);
  n += (size_t)sprintf(text + n, "cases:\n  - name: c\n");
  assert_int_equal(load_str("many.yaml", text, n, NULL, NULL, &errs), ST_ELOAD);
  assert_int_equal(errs.count, 101);
  assert_string_equal(errs.items[100].message,
                      "too many errors; stopped after 100");
  for (size_t i = 1; i < errs.count; i++)
    assert_true(errs.items[i - 1].line <= errs.items[i].line);
  st_error_list_free(&errs);
  free(text);
}

static void scene_load__max_arg_bytes_option(void **state) {
  (void)state;
  const char *text = "scene: s\nkernel: add\nargs:\n"
                     "  - {tensor: a, dtype: float32, shape: [2, 2]}\n"
                     "cases:\n  - name: c\n";
  st_load_options opts;
  st_error_list errs;
  st_load_options_init(&opts);
  opts.max_arg_bytes = 16;
  assert_int_equal(load_str("m.yaml", text, strlen(text), &opts, NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  opts.max_arg_bytes = 15;
  assert_int_equal(load_str("m.yaml", text, strlen(text), &opts, NULL, &errs),
                   ST_ELOAD);
  assert_one_error(&errs, "case 'c' declares 16 bytes of tensors, over the "
                          "limit of 15 bytes; raise the limit with "
                          "--max-arg-bytes");
  st_error_list_free(&errs);
}

/* A million values load, with their count and last entry intact, under
 * the default options: the node budget counts only alias-expanded nodes
 * (docs/scene-format.md#shapes-and-limits), so a million plain ones do not trip
 * it. */
static void scene_load__values_million(void **state) {
  (void)state;
  const size_t count = 1000000;
  st_load_options opts;
  st_load_options_init(&opts);
  size_t cap = count * 8 + 256, n = 0;
  char *text = malloc(cap);
  st_scene_set *set;
  st_error_list errs;
  n += (size_t)sprintf(text,
                       "scene: big\nkernel: copy\nargs:\n"
                       "  - {tensor: x, dtype: int32, shape: [%zu], "
                       "init: {values: [",
                       count);
  for (size_t i = 0; i < count; i++)
    n += (size_t)sprintf(text + n, "%s%zu", i ? "," : "", i % 1000);
  n += (size_t)sprintf(text + n, "]}}\ncases:\n  - name: c\n");
  assert_int_equal(load_str("big.yaml", text, n, &opts, &set, &errs), ST_OK);
  const st_scene *s = st_scene_set_get(set, 0);
  assert_int_equal(s->args[0].init.n_values, count);
  assert_int_equal(s->args[0].init.values[count - 1].num.i, 999);
  st_scene_set_free(set);
  st_error_list_free(&errs);
  free(text);
}

/* A mapping of 100k params with one duplicate: found, and fast
 * (quadratic would take minutes here). */
static void scene_load__large_mapping_duplicate(void **state) {
  (void)state;
  const int count = 100000;
  size_t cap = (size_t)count * 24 + 256, n = 0;
  char *text = malloc(cap);
  st_error_list errs;
  n += (size_t)sprintf(text, "scene: s\nkernel: add\nargs: []\ncases:\n"
                             "  - name: c\n    params:\n");
  for (int i = 0; i < count; i++)
    n += (size_t)sprintf(text + n, "      p%d: %d\n", i, i);
  n += (size_t)sprintf(text + n, "      p77: 1\n");
  assert_int_equal(load_str("big.yaml", text, n, NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "duplicate param 'p77' (first given at 84:7)");
  assert_int_equal(errs.items[0].line, count + 7);
  st_error_list_free(&errs);
  free(text);
}

/* ------------------------------------------------------------------ */
/* Good scenes                                                         */

static void scene_load__good_multi_document(void **state) {
  (void)state;
  st_scene_set *set;
  st_error_list errs;
  assert_int_equal(load("tests/scenes/good/multi.yaml", NULL, &set, &errs),
                   ST_OK);
  assert_int_equal(errs.count, 0);
  assert_int_equal(st_scene_set_count(set), 2);
  const st_scene *s = st_scene_set_get(set, 0);
  assert_string_equal(st_scene_name(s), "every_init");
  assert_string_equal(st_scene_file(s), "tests/scenes/good/multi.yaml");
  assert_int_equal(st_scene_line(s), 2);
  assert_int_equal(st_scene_level(s), 2);
  assert_string_equal(st_scene_kernel(s), "add");
  assert_string_equal(st_scene_golden(s), "add_ref");
  assert_true(s->has_rtol && s->rtol == 1e-3);
  assert_false(s->has_atol);
  assert_int_equal(s->skip_golden, 0);
  assert_int_equal(s->n_args, 14);
  static const st__init_kind kinds[] = {
      ST__INIT_ZEROS,   ST__INIT_ONES,   ST__INIT_FILL,    ST__INIT_RANGE,
      ST__INIT_UNIFORM, ST__INIT_NORMAL, ST__INIT_RANDINT, ST__INIT_VALUES,
      ST__INIT_FILE,    ST__INIT_ZEROS,  ST__INIT_ZEROS,   ST__INIT_ZEROS};
  for (size_t i = 0; i < 12; i++) {
    assert_true(s->args[i].is_tensor);
    assert_int_equal(s->args[i].init.kind, kinds[i]);
  }
  assert_false(s->args[12].is_tensor);
  assert_string_equal(s->args[12].name, "alpha");
  assert_int_equal(s->args[12].value.kind, ST__VAL_NAME);
  assert_string_equal(s->args[12].value.name, "K");
  assert_int_equal(s->args[13].value.kind, ST__VAL_NUM);
  assert_int_equal(s->args[13].value.num.i, -7);
  /* dtype via param; shapes with params and literals. */
  assert_string_equal(s->args[0].dtype.name, "T");
  assert_int_equal(s->args[3].ndim, 2);
  assert_int_equal(s->args[3].shape[0].num.i, 2);
  assert_string_equal(s->args[3].shape[1].name, "M");
  assert_int_equal(s->args[10].ndim, 0);
  assert_int_equal(s->args[9].role, ST_ROLE_OUTPUT);
  assert_int_equal(s->args[10].compare, 0);
  assert_int_equal(s->args[11].role, ST_ROLE_INOUT);
  assert_int_equal(s->args[11].compare, 1);
  assert_string_equal(s->args[8].init.path_given, "data/four_floats.bin");
  assert_int_equal(s->args[8].init.path[0], '/');
  assert_int_equal(s->args[7].init.n_values, 4);
  assert_int_equal(s->args[7].init.values[0].num.i, 1); /* true */
  /* Cases. */
  assert_int_equal(st_scene_case_count(s), 2);
  assert_string_equal(st_scene_case_name(s, 0), "small");
  assert_int_equal(st_scene_case_line(s, 0), 22);
  assert_int_equal(st_scene_case_runs_on(s, 0, "cpu"), 1);
  assert_int_equal(st_scene_case_runs_on(s, 0, "npu"), 0);
  assert_int_equal(st_scene_case_runs_on(s, 1, "npu"), 1);
  assert_int_equal(st_scene_case_is_manual(s, 0, "cpu"), 0);
  assert_int_equal(st_scene_case_is_manual(s, 1, "threads"), 1);
  assert_int_equal(st_scene_case_is_manual(s, 1, "cpu"), 0);
  const st__case *half = &s->cases[1];
  assert_int_equal(half->rounds, 3);
  assert_true(half->has_rtol && half->rtol == 1e-2);
  assert_true(half->has_atol && half->atol == 0);
  assert_true(half->timeout == 2.5);
  assert_int_equal(half->skip_golden, 1);
  assert_int_equal(s->cases[0].skip_golden, -1);
  assert_int_equal(half->n_params, 4);
  assert_true(half->params[2].is_str);
  assert_string_equal(half->params[2].str, "float16");

  const st_scene *l3 = st_scene_set_get(set, 1);
  assert_string_equal(st_scene_name(l3), "level3");
  assert_int_equal(st_scene_level(l3), 3);
  assert_int_equal(l3->workers, 4);
  assert_int_equal(l3->skip_golden, 1);
  assert_string_equal(st_scene_golden(l3), "copy");
  assert_true(l3->has_atol && l3->atol == 1e-5);
  assert_int_equal(st_scene_case_is_manual(l3, 0, "cpu"), 1);
  assert_int_equal(l3->args[0].init.a.num.i, INT32_MIN);
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

static void scene_load__aliases_and_quoted(void **state) {
  (void)state;
  st_scene_set *set;
  st_error_list errs;
  assert_int_equal(load("tests/scenes/good", NULL, &set, &errs), ST_OK);
  assert_int_equal(st_scene_set_count(set), 3);
  const st_scene *s = st_scene_set_get(set, 0); /* anchors.yml sorts first */
  assert_string_equal(st_scene_name(s), "anchored");
  assert_int_equal(s->args[1].ndim, 2);
  assert_string_equal(s->args[1].shape[0].name, "R");
  assert_false(s->args[2].value.num.is_int);
  assert_true(s->args[2].value.num.f == 1e-5);
  assert_int_equal(s->cases[1].params[1].num.i, 1000);
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

/* The typing of plain scalars
 * (docs/scene-format.md#values-and-scalars-in-yaml): strtoll in full, then
 * strtod in full, then true/false, else a name; quoted is always a string. */
static void scene_load__scalar_typing(void **state) {
  (void)state;
  const char *text =
      "scene: s\nkernel: add\nargs: []\ncases:\n"
      "  - name: c\n    params: {A: 12, B: 1e-5, C: -0.5, D: '12', E: int8,"
      " F: 0x10, G: 99999999999999999999, H: '2 * A'}\n";
  st_scene_set *set;
  st_error_list errs;
  assert_int_equal(load_str("t.yaml", text, strlen(text), NULL, &set, &errs),
                   ST_OK);
  const st__case *c = &st_scene_set_get(set, 0)->cases[0];
  assert_true(c->params[0].num.is_int && c->params[0].num.i == 12);
  assert_true(!c->params[1].num.is_int && c->params[1].num.f == 1e-5);
  assert_true(!c->params[2].num.is_int && c->params[2].num.f == -0.5);
  /* A quoted string that is no dtype name is an expression. */
  assert_true(!c->params[3].is_str && c->params[3].expr.kind == ST__VAL_NAME);
  assert_string_equal(c->params[3].expr.name, "12");
  assert_true(c->params[4].is_str);
  assert_string_equal(c->params[4].str, "int8");
  assert_string_equal(c->params[7].expr.name, "2 * A");
  /* strtoll base 10 stops at 'x'; strtod reads hex in full. */
  assert_true(!c->params[5].is_str && !c->params[5].num.is_int &&
              c->params[5].num.f == 16.0);
  /* Out of int64 range: strtoll fails (ERANGE), strtod reads it. */
  assert_true(!c->params[6].num.is_int && c->params[6].num.f == 1e20);
  st_scene_set_free(set);
  st_error_list_free(&errs);
}

/* file: paths resolve against the directory of the name given. */
static void scene_load__string_file_init_relative_to_name(void **state) {
  (void)state;
  const char *text = "scene: s\nkernel: copy\nargs:\n"
                     "  - {tensor: b, dtype: int32, shape: [4], init: {file: "
                     "data/four_floats.bin}}\ncases:\n  - name: c\n";
  st_error_list errs;
  assert_int_equal(load_str("tests/scenes/good/virtual.yaml", text,
                            strlen(text), NULL, NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  assert_int_equal(load_str("tests/scenes/virtual.yaml", text, strlen(text),
                            NULL, NULL, &errs),
                   ST_ELOAD);
  assert_one_error(&errs, "cannot open file 'data/four_floats.bin'");
  st_error_list_free(&errs);
}

/* A symlink inside the directory that points outside it escapes too. */
static void scene_load__file_init_escapes_dir(void **state) {
  (void)state;
  char dir[1024], p[2048], q[2048];
  snprintf(dir, sizeof dir, "%s/test_loader_link.XXXXXX", ST_BUILD_ROOT);
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof p, "%s/link.bin", dir);
  assert_int_equal(symlink(ST_SOURCE_ROOT "/tests/scenes/good/data/"
                                          "four_floats.bin",
                           p),
                   0);
  snprintf(q, sizeof q, "%s/s.yaml", dir);
  write_file(q, "scene: s\nkernel: copy\nargs:\n"
                "  - {tensor: b, dtype: float32, shape: [4], init: {file: "
                "link.bin}}\ncases:\n  - name: c\n");
  st_error_list errs;
  assert_int_equal(load(q, NULL, NULL, &errs), ST_ELOAD);
  assert_one_error(&errs, "file 'link.bin' is outside the scene's directory");
  st_error_list_free(&errs);
  check_fixture("file_escapes_dir");
  (void)remove(p);
  (void)remove(q);
  (void)remove(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(scene_load__every_bad_fixture),
      cmocka_unit_test(scene_load__no_orphan_expected),
      cmocka_unit_test(scene_load__number_out_of_range),
      cmocka_unit_test(scene_load__unknown_key),
      cmocka_unit_test(scene_load__duplicate_key),
      cmocka_unit_test(scene_load__missing_key),
      cmocka_unit_test(scene_load__bad_identifier),
      cmocka_unit_test(scene_load__ident_too_long),
      cmocka_unit_test(scene_load__tensor_after_scalar),
      cmocka_unit_test(scene_load__plan_hook_once_per_alike_run),
      cmocka_unit_test(scene_load__duplicate_arg),
      cmocka_unit_test(scene_load__bad_role),
      cmocka_unit_test(scene_load__sig_scratch_keys),
      cmocka_unit_test(scene_load__sig_golden_args_unknown),
      cmocka_unit_test(scene_load__sig_expected_misplaced),
      cmocka_unit_test(scene_load__sig_expect_forms),
      cmocka_unit_test(scene_load__check_sig_golden_args),
      cmocka_unit_test(scene_load__compare_false_input),
      cmocka_unit_test(scene_load__bad_tolerance),
      cmocka_unit_test(scene_load__unknown_dtype),
      cmocka_unit_test(scene_load__bad_dtype),
      cmocka_unit_test(scene_load__dtype_param_number),
      cmocka_unit_test(scene_load__dtype_param_bad_name),
      cmocka_unit_test(scene_load__unknown_init),
      cmocka_unit_test(scene_load__init_two_forms),
      cmocka_unit_test(scene_load__init_unknown_form),
      cmocka_unit_test(scene_load__range_missing_step),
      cmocka_unit_test(scene_load__uniform_not_pair),
      cmocka_unit_test(scene_load__values_not_list),
      cmocka_unit_test(scene_load__bad_level),
      cmocka_unit_test(scene_load__workers_level2),
      cmocka_unit_test(scene_load__workers_range),
      cmocka_unit_test(scene_load__skip_golden_not_bool),
      cmocka_unit_test(scene_load__no_cases),
      cmocka_unit_test(scene_load__cases_not_list),
      cmocka_unit_test(scene_load__case_missing_name),
      cmocka_unit_test(scene_load__duplicate_case),
      cmocka_unit_test(scene_load__unknown_case_key),
      cmocka_unit_test(scene_load__rounds_zero),
      cmocka_unit_test(scene_load__timeout_zero),
      cmocka_unit_test(scene_load__manual_bad),
      cmocka_unit_test(scene_load__platforms_not_list),
      cmocka_unit_test(scene_load__params_not_map),
      cmocka_unit_test(scene_load__param_value_list),
      cmocka_unit_test(scene_load__param_duplicate),
      cmocka_unit_test(scene_load__scene_not_mapping),
      cmocka_unit_test(scene_load__empty_file),
      cmocka_unit_test(scene_load__comments_only),
      cmocka_unit_test(scene_load__null_document),
      cmocka_unit_test(scene_load__duplicate_scene),
      cmocka_unit_test(scene_load__syntax_error),
      cmocka_unit_test(scene_load__semantic_and_syntax),
      cmocka_unit_test(scene_load__unknown_alias),
      cmocka_unit_test(scene_load__nul_byte),
      cmocka_unit_test(scene_load__invalid_utf8),
      cmocka_unit_test(scene_load__deep_nesting),
      cmocka_unit_test(scene_load__alias_bomb),
      cmocka_unit_test(scene_load__shape_negative),
      cmocka_unit_test(scene_load__shape_float),
      cmocka_unit_test(scene_load__shape_too_many_dims),
      cmocka_unit_test(scene_load__shape_overflow),
      cmocka_unit_test(scene_load__shape_param_float),
      cmocka_unit_test(scene_load__shape_param_missing),
      cmocka_unit_test(scene_load__fill_fraction_uint8),
      cmocka_unit_test(scene_load__fill_out_of_range_uint8),
      cmocka_unit_test(scene_load__values_count),
      cmocka_unit_test(scene_load__values_out_of_range),
      cmocka_unit_test(scene_load__range_overflow),
      cmocka_unit_test(scene_load__randint_empty),
      cmocka_unit_test(scene_load__randint_high_too_big),
      cmocka_unit_test(scene_load__uniform_int_dtype),
      cmocka_unit_test(scene_load__normal_negative_std),
      cmocka_unit_test(scene_load__float16_out_of_range),
      cmocka_unit_test(scene_load__bool_value_two),
      cmocka_unit_test(scene_load__scalar_value_not_fit),
      cmocka_unit_test(scene_load__scalar_value_param_string),
      cmocka_unit_test(scene_load__file_missing),
      cmocka_unit_test(scene_load__file_is_dir),
      cmocka_unit_test(scene_load__file_escapes_dir),
      cmocka_unit_test(scene_load__file_size_mismatch),
      cmocka_unit_test(scene_load__max_arg_bytes),
      cmocka_unit_test(scene_load__args_not_list),
      cmocka_unit_test(scene_load__arg_not_mapping),
      cmocka_unit_test(scene_load__arg_neither),
      cmocka_unit_test(scene_load__kernel_not_string),
      cmocka_unit_test(scene_load__complex_key),
      cmocka_unit_test(scene_load__many_errors),
      cmocka_unit_test(scene_load__column_characters),
      cmocka_unit_test(scene_load__every_case_checked),
      cmocka_unit_test(scene_load__expr_unknown_name),
      cmocka_unit_test(scene_load__expr_forward_name),
      cmocka_unit_test(scene_load__expr_syntax),
      cmocka_unit_test(scene_load__expr_inexact),
      cmocka_unit_test(scene_load__expr_div_zero),
      cmocka_unit_test(scene_load__expr_overflow),
      cmocka_unit_test(scene_load__list_in_number),
      cmocka_unit_test(scene_load__list_in_rounds),
      cmocka_unit_test(scene_load__number_for_list),
      cmocka_unit_test(scene_load__expr_cycle),
      cmocka_unit_test(scene_load__expr_quoted_columns),
      cmocka_unit_test(scene_load__param_dtype_name),
      cmocka_unit_test(scene_load__expr_workers),
      cmocka_unit_test(scene_load__alias_bomb_generated),
      cmocka_unit_test(scene_load__merge_bomb),
      cmocka_unit_test(scene_load__merge_keys),
      cmocka_unit_test(scene_load__plan_same_inputs),
      cmocka_unit_test(scene_load__alike_cases_resolved_each),
      cmocka_unit_test(scene_load__quoted_merge_key_is_a_key),
      cmocka_unit_test(scene_load__matrix_model),
      cmocka_unit_test(scene_load__node_budget_option),
      cmocka_unit_test(scene_load__node_budget_ignores_plain_nodes),
      cmocka_unit_test(scene_load__max_file_bytes),
      cmocka_unit_test(scene_load__deep_nesting_10k),
      cmocka_unit_test(scene_load__nul_byte_in_string),
      cmocka_unit_test(scene_load__invalid_utf8_column),
      cmocka_unit_test(scene_load__empty_string),
      cmocka_unit_test(scene_load__random_garbage),
      cmocka_unit_test(scene_load__mutated_scenes),
      cmocka_unit_test(scene_load__missing_path),
      cmocka_unit_test(scene_load__unreadable_file),
      cmocka_unit_test(scene_load__directory_sorted),
      cmocka_unit_test(scene_load__duplicate_scene_across_loads),
      cmocka_unit_test(scene_load__file_is_atomic),
      cmocka_unit_test(scene_load__too_many_errors),
      cmocka_unit_test(scene_load__max_arg_bytes_option),
      cmocka_unit_test(scene_load__values_million),
      cmocka_unit_test(scene_load__large_mapping_duplicate),
      cmocka_unit_test(scene_load__good_multi_document),
      cmocka_unit_test(scene_load__aliases_and_quoted),
      cmocka_unit_test(scene_load__scalar_typing),
      cmocka_unit_test(scene_load__string_file_init_relative_to_name),
      cmocka_unit_test(scene_load__file_init_escapes_dir),
  };
  return cmocka_run_group_tests(tests, to_source_root, NULL);
}
