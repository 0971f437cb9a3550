/* SPDX-License-Identifier: MIT */
/* Tests of st_select_cases: selector forms and globs, set order, manual
 * modes, the platform filter, and the exact strict-selection errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <scenetest/scenetest.h>

/* alpha: small (all), big (manual everywhere), cpu_only (platforms [cpu]),
 * manual_threads (manual on threads only); beta: small, other. */
static const char scenes_yaml[] =
    "scene: alpha\n"
    "kernel: add\n"
    "args:\n"
    "  - {tensor: a, dtype: float32, shape: [4]}\n"
    "  - {tensor: b, dtype: float32, shape: [4]}\n"
    "  - {tensor: out, dtype: float32, shape: [4], role: output}\n"
    "cases:\n"
    "  - name: small\n"
    "  - name: big\n"
    "    manual: true\n"
    "  - name: cpu_only\n"
    "    platforms: [cpu]\n"
    "  - name: manual_threads\n"
    "    manual: [threads]\n"
    "---\n"
    "scene: beta\n"
    "kernel: copy\n"
    "args:\n"
    "  - {tensor: x, dtype: float32, shape: [2]}\n"
    "  - {tensor: y, dtype: float32, shape: [2], role: output}\n"
    "cases:\n"
    "  - name: small\n"
    "  - name: other\n";

static int setup(void **state) {
  st_scene_set *set = NULL;
  st_error_list errors;
  st_status rc;
  char buf[2048];
  size_t i;

  st_error_list_init(&errors);
  if (st_scene_set_new(&set) != ST_OK)
    return -1;
  rc = st_scene_set_load_string(set, "select.yaml", scenes_yaml,
                                strlen(scenes_yaml), NULL, &errors);
  for (i = 0; i < errors.count; i++)
    fprintf(stderr, "# %s\n",
            st_error_format(&errors.items[i], buf, sizeof buf));
  st_error_list_free(&errors);
  if (rc != ST_OK) {
    st_scene_set_free(set);
    return -1;
  }
  *state = set;
  return 0;
}

static int teardown(void **state) {
  st_scene_set_free(*state);
  return 0;
}

/* Selects with the given options and compares the result with the
 * expected "scene::case" list, in order; fails with both lists. */
static void expect_selection(const st_scene_set *set,
                             const st_run_options *opts,
                             const char *const *expected) {
  st_case_ref *refs = NULL;
  size_t n = 0, i, n_expected = 0;
  st_error err;
  char got[1024] = "", want[1024] = "";

  st_error_clear(&err);
  assert_int_equal(st_select_cases(set, opts, &refs, &n, &err), ST_OK);
  for (i = 0; expected[i] != NULL; i++) {
    n_expected++;
    strcat(want, expected[i]);
    strcat(want, " ");
  }
  for (i = 0; i < n; i++) {
    char one[300];
    snprintf(one, sizeof one, "%s::%s ", st_scene_name(refs[i].scene),
             st_scene_case_name(refs[i].scene, refs[i].index));
    strcat(got, one);
  }
  free(refs);
  assert_string_equal(got, want);
  assert_int_equal(n, n_expected);
}

static void expect_error(const st_scene_set *set, const st_run_options *opts,
                         const char *message) {
  st_case_ref *refs = (st_case_ref *)1;
  size_t n = 7;
  st_error err;

  st_error_clear(&err);
  assert_int_equal(st_select_cases(set, opts, &refs, &n, &err), ST_EUSAGE);
  assert_int_equal(err.code, ST_EUSAGE);
  assert_string_equal(err.message, message);
  assert_null(refs);
  assert_int_equal(n, 0);
}

static void select_cases__no_selectors_every_non_manual_case(void **state) {
  st_run_options opts;
  static const char *const want[] = {"alpha::small",          "alpha::cpu_only",
                                     "alpha::manual_threads", "beta::small",
                                     "beta::other",           NULL};
  st_run_options_init(&opts);
  expect_selection(*state, &opts, want);
}

/* case_filter: called for each case the selectors kept, before the
 * shard; only the cases it keeps are selected. */
static int keep_small(void *data, const st_scene *scene, size_t c) {
  int *calls = data;
  (*calls)++;
  return strcmp(st_scene_case_name(scene, c), "small") == 0;
}

static void select_cases__filter_after_selectors(void **state) {
  st_run_options opts;
  int calls = 0;
  static const char *const sel[] = {"alpha"};
  static const char *const want[] = {"alpha::small", "beta::small", NULL};
  static const char *const want_alpha[] = {"alpha::small", NULL};
  st_run_options_init(&opts);
  opts.case_filter = keep_small;
  opts.case_filter_data = &calls;
  expect_selection(*state, &opts, want);
  /* Not for the manual case the manual mode left out. */
  assert_int_equal(calls, 5);
  opts.selectors = sel;
  opts.n_selectors = 1;
  calls = 0;
  expect_selection(*state, &opts, want_alpha);
  assert_int_equal(calls, 3);
}

/* first_cases (--failed-first): the named cases first, each part in
 * selection order; names not selected change nothing. */
static void select_cases__first_cases_lead(void **state) {
  st_run_options opts;
  static const char *const first[] = {"beta::other", "gone::x",
                                      "alpha::cpu_only"};
  static const char *const want[] = {"alpha::cpu_only", "beta::other",
                                     "alpha::small",    "alpha::manual_threads",
                                     "beta::small",     NULL};
  st_run_options_init(&opts);
  opts.first_cases = first;
  opts.n_first_cases = 3;
  expect_selection(*state, &opts, want);
}

static void select_cases__scene_selector(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"beta"};
  static const char *const want[] = {"beta::small", "beta::other", NULL};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_selection(*state, &opts, want);
}

static void select_cases__scene_and_case(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"alpha::cpu_only"};
  static const char *const want[] = {"alpha::cpu_only", NULL};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_selection(*state, &opts, want);
}

static void select_cases__case_in_any_scene(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"::small"};
  static const char *const want[] = {"alpha::small", "beta::small", NULL};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_selection(*state, &opts, want);
}

static void select_cases__globs_on_both_parts(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"?lph*::*_*"};
  static const char *const want[] = {"alpha::cpu_only", "alpha::manual_threads",
                                     NULL};
  static const char *const sel2[] = {"*::[so]*"};
  static const char *const want2[] = {"alpha::small", "beta::small",
                                      "beta::other", NULL};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_selection(*state, &opts, want);
  opts.selectors = sel2;
  expect_selection(*state, &opts, want2);
}

static void select_cases__set_order_without_duplicates(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"beta::other", "alpha", "*::small"};
  static const char *const want[] = {"alpha::small",          "alpha::cpu_only",
                                     "alpha::manual_threads", "beta::small",
                                     "beta::other",           NULL};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 3;
  expect_selection(*state, &opts, want);
}

static void select_cases__manual_include(void **state) {
  st_run_options opts;
  static const char *const want[] = {"alpha::small",
                                     "alpha::big",
                                     "alpha::cpu_only",
                                     "alpha::manual_threads",
                                     "beta::small",
                                     "beta::other",
                                     NULL};
  st_run_options_init(&opts);
  opts.manual = ST_MANUAL_INCLUDE;
  expect_selection(*state, &opts, want);
}

static void select_cases__manual_only(void **state) {
  st_run_options opts;
  static const char *const want_cpu[] = {"alpha::big", NULL};
  static const char *const want_threads[] = {"alpha::big",
                                             "alpha::manual_threads", NULL};
  st_run_options_init(&opts);
  opts.manual = ST_MANUAL_ONLY;
  expect_selection(*state, &opts, want_cpu);
  opts.platform = "threads";
  expect_selection(*state, &opts, want_threads);
}

static void select_cases__platform_filter(void **state) {
  st_run_options opts;
  /* cpu_only does not run on threads; manual_threads is manual there. */
  static const char *const want[] = {"alpha::small", "beta::small",
                                     "beta::other", NULL};
  st_run_options_init(&opts);
  opts.platform = "threads";
  expect_selection(*state, &opts, want);
}

static void select_cases__null_platform_is_cpu(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"alpha::cpu_only"};
  static const char *const want[] = {"alpha::cpu_only", NULL};
  st_run_options_init(&opts);
  opts.platform = NULL;
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_selection(*state, &opts, want);
}

static void select_cases__no_match_names_scenes(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"alpha::small", "gamma*"};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 2;
  expect_error(*state, &opts,
               "--case 'gamma*' matches no case; scenes: alpha, beta");
}

static void select_cases__bare_name_is_a_scene(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"small"};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_error(*state, &opts,
               "--case 'small' matches no case; scenes: alpha, beta");
}

static void select_cases__only_manual_names_modes(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"alpha::big"};
  static const char *const want[] = {"alpha::big", NULL};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_error(*state, &opts,
               "--case 'alpha::big' matches only manual cases; run them "
               "with --manual include or --manual only");
  opts.manual = ST_MANUAL_INCLUDE;
  expect_selection(*state, &opts, want);
}

static void select_cases__manual_only_no_manual_match(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"beta"};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  opts.manual = ST_MANUAL_ONLY;
  expect_error(*state, &opts,
               "--case 'beta' matches no manual case (--manual only keeps "
               "only manual cases)");
}

static void select_cases__selector_off_platform(void **state) {
  st_run_options opts;
  static const char *const sel[] = {"alpha::cpu_only"};
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  opts.platform = "threads";
  expect_error(*state, &opts,
               "--case 'alpha::cpu_only' matches only cases that do not run "
               "on platform 'threads'");
}

static void select_cases__empty_set_selects_nothing(void **state) {
  st_scene_set *set = NULL;
  st_run_options opts;
  st_case_ref *refs = (st_case_ref *)1;
  size_t n = 7;
  static const char *const sel[] = {"x"};
  st_error err;

  (void)state;
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_run_options_init(&opts);
  st_error_clear(&err);
  assert_int_equal(st_select_cases(set, &opts, &refs, &n, &err), ST_OK);
  assert_int_equal(n, 0);
  free(refs);
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_error(set, &opts, "--case 'x' matches no case; scenes: (none)");
  st_scene_set_free(set);
}

/* Many scenes: the list in the message stops before the message limit and
 * says how many it left out. */
static void select_cases__long_scene_list_truncated(void **state) {
  st_scene_set *set = NULL;
  st_error_list errors;
  st_run_options opts;
  static const char *const sel[] = {"nope"};
  char *text = malloc(200 * 300);
  size_t len = 0, i;
  st_case_ref *refs = NULL;
  size_t n = 0;
  st_error err;
  const char *tail;

  (void)state;
  assert_non_null(text);
  for (i = 0; i < 200; i++)
    len += (size_t)sprintf(text + len,
                           "---\nscene: a_rather_long_scene_name_%03zu\n"
                           "kernel: copy\nargs:\n"
                           "  - {tensor: x, dtype: float32, shape: [1]}\n"
                           "cases:\n  - name: c\n",
                           i);
  st_error_list_init(&errors);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(
      st_scene_set_load_string(set, "many.yaml", text, len, NULL, &errors),
      ST_OK);
  st_error_list_free(&errors);
  free(text);
  st_run_options_init(&opts);
  opts.selectors = sel;
  opts.n_selectors = 1;
  st_error_clear(&err);
  assert_int_equal(st_select_cases(set, &opts, &refs, &n, &err), ST_EUSAGE);
  assert_non_null(strstr(err.message, "--case 'nope' matches no case; "
                                      "scenes: a_rather_long_scene_name_000, "
                                      "a_rather_long_scene_name_001, "));
  tail = strstr(err.message, ", ... (");
  assert_non_null(tail);
  assert_string_equal(tail + strlen(tail) - 6, " more)");
  assert_true(strlen(err.message) < ST_ERROR_MESSAGE_MAX - 1);
  st_scene_set_free(set);
}

static void shard_hash__spec_worked_example(void **state) {
  (void)state;
  /* docs/cli.md#sharding: vector_add::small -> 0x5e3ff868c8d241c5, shard 2
   * of 3. */
  assert_true(st_shard_hash("vector_add", "small") ==
              UINT64_C(0x5e3ff868c8d241c5));
  assert_int_equal(st_shard_hash("vector_add", "small") % 3, 2);
  /* The separator is part of the name: "a::b" != "a:" + ":b" split
   * elsewhere only by where "::" falls. */
  assert_true(st_shard_hash("a", "b") == st_shard_hash("a", "b"));
  assert_true(st_shard_hash("a", "b") != st_shard_hash("b", "a"));
}

static void
select_cases__shard_after_selectors_manual_and_platform(void **state) {
  st_run_options opts;
  /* Shards of 2 (fnv1a64 % 2): alpha::small 0, alpha::cpu_only 0,
   * beta::small 0, beta::other 1, alpha::manual_threads 1 (manual only
   * on threads), alpha::big 1 (manual). */
  static const char *const shard0[] = {"alpha::small", "alpha::cpu_only",
                                       "beta::small", NULL};
  static const char *const shard1[] = {"alpha::manual_threads", "beta::other",
                                       NULL};
  static const char *const manual1[] = {"alpha::big", "alpha::manual_threads",
                                        "beta::other", NULL};
  static const char *const none[] = {NULL};
  static const char *const sel[] = {"beta::small"};
  st_run_options_init(&opts);
  opts.shard_total = 2;
  expect_selection(*state, &opts, shard0);
  opts.shard_index = 1;
  expect_selection(*state, &opts, shard1);
  opts.manual = ST_MANUAL_INCLUDE;
  expect_selection(*state, &opts, manual1);
  /* A selector whose cases all live in another shard is no error: the
   * selectors match the loaded set first (a rerun command works in any
   * shard); the shard then leaves nothing. */
  opts.manual = ST_MANUAL_EXCLUDE;
  opts.selectors = sel;
  opts.n_selectors = 1;
  expect_selection(*state, &opts, none);
  /* Totals 0 and 1 are unsharded. */
  opts.n_selectors = 0;
  opts.shard_index = 0;
  opts.shard_total = 1;
  {
    static const char *const all[] = {
        "alpha::small", "alpha::cpu_only", "alpha::manual_threads",
        "beta::small",  "beta::other",     NULL};
    expect_selection(*state, &opts, all);
  }
}

static void select_cases__only_cases_by_name_then_shard(void **state) {
  st_run_options opts;
  static const char *const names[] = {
      "beta::other", "alpha::small", "gone::case", "alpha::big", "alpha::smal"};
  static const char *const want[] = {"alpha::small", "beta::other", NULL};
  static const char *const want0[] = {"alpha::small", NULL};
  static const char *const none[] = {NULL};
  st_run_options_init(&opts);
  opts.use_only_cases = 1;
  opts.only_cases = names;
  opts.n_only_cases = 5;
  /* alpha::big is manual: the manual mode still applies. */
  expect_selection(*state, &opts, want);
  opts.shard_total = 2;
  expect_selection(*state, &opts, want0);
  /* An empty list selects nothing (a report with no failures). */
  opts.shard_total = 0;
  opts.n_only_cases = 0;
  expect_selection(*state, &opts, none);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shard_hash__spec_worked_example),
      cmocka_unit_test(select_cases__shard_after_selectors_manual_and_platform),
      cmocka_unit_test(select_cases__only_cases_by_name_then_shard),
      cmocka_unit_test(select_cases__no_selectors_every_non_manual_case),
      cmocka_unit_test(select_cases__scene_selector),
      cmocka_unit_test(select_cases__scene_and_case),
      cmocka_unit_test(select_cases__case_in_any_scene),
      cmocka_unit_test(select_cases__globs_on_both_parts),
      cmocka_unit_test(select_cases__set_order_without_duplicates),
      cmocka_unit_test(select_cases__manual_include),
      cmocka_unit_test(select_cases__manual_only),
      cmocka_unit_test(select_cases__platform_filter),
      cmocka_unit_test(select_cases__null_platform_is_cpu),
      cmocka_unit_test(select_cases__no_match_names_scenes),
      cmocka_unit_test(select_cases__bare_name_is_a_scene),
      cmocka_unit_test(select_cases__only_manual_names_modes),
      cmocka_unit_test(select_cases__manual_only_no_manual_match),
      cmocka_unit_test(select_cases__selector_off_platform),
      cmocka_unit_test(select_cases__empty_set_selects_nothing),
      cmocka_unit_test(select_cases__long_scene_list_truncated),
      cmocka_unit_test(select_cases__filter_after_selectors),
      cmocka_unit_test(select_cases__first_cases_lead),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
