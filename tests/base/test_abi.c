/* SPDX-License-Identifier: MIT */
/* Size-first structs (docs/api.md): a caller's st_run_options,
 * st_load_options and st_observer are read by their size field. A size of
 * 0 or below the first layout is ST_EINVAL with a message; a caller built
 * against newer headers (a larger size) is read for what this library
 * knows; arrays of observers are stepped by their size; a field beyond an
 * older caller's size gets its default. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <scenetest/scenetest.h>

#include "base/abi.h"
#include "base/options.h"

static const char scene_text[] =
    "scene: abi\nkernel: add\ngolden: add\nargs:\n"
    "  - {tensor: a, dtype: float32, shape: &s [4]}\n"
    "  - {tensor: b, dtype: float32, shape: *s}\n"
    "  - {tensor: out, dtype: float32, shape: *s, role: output}\n"
    "cases:\n  - {name: one}\n  - {name: two}\n";

static st_scene_set *load_scene(void) {
  st_scene_set *set = NULL;
  st_error_list errs;
  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "abi.yaml", scene_text,
                                            strlen(scene_text), NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  return set;
}

/* A caller built against newer headers: our struct plus fields this
 * library does not know, which it must not read as anything. */
typedef struct newer_run_options {
  st_run_options known;
  uint64_t future[4];
} newer_run_options;

typedef struct newer_observer {
  st_observer known;
  void (*future_callback)(void);
  char future_bytes[24];
} newer_observer;

static void run_options__size_below_first_layout_is_einval(void **state) {
  st_scene_set *set = load_scene();
  st_run_options opts;
  st_run_result *r = NULL;
  st_case_result *cr = NULL;
  st_case_ref *refs = NULL;
  size_t n = 0;
  st_error err;
  const size_t sizes[] = {0, offsetof(st_run_options, timeout)};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    char want[256];
    st_run_options_init(&opts);
    opts.size = sizes[i];
    snprintf(want, sizeof want,
             "st_run_options has size %zu, less than the %zu of its first "
             "layout: initialise it with st_run_options_init()",
             sizes[i], ST__SIZE_THROUGH(st_run_options, timeout));
    st_error_clear(&err);
    assert_int_equal(st_run(set, &opts, NULL, 0, &r, &err), ST_EINVAL);
    assert_null(r);
    assert_string_equal(err.message, want);
    st_error_clear(&err);
    assert_int_equal(st_run_case(st_scene_set_get(set, 0), 0, &opts, &cr, &err),
                     ST_EINVAL);
    assert_null(cr);
    assert_string_equal(err.message, want);
    st_error_clear(&err);
    assert_int_equal(st_select_cases(set, &opts, &refs, &n, &err), ST_EINVAL);
    assert_string_equal(err.message, want);
  }
  st_scene_set_free(set);
}

/* The exact first layout and a newer, larger caller both run, and the
 * fields they set are honoured (a selector narrows the run to one case). */
static void run_options__first_layout_and_newer_callers_run(void **state) {
  st_scene_set *set = load_scene();
  const char *const sel[] = {"abi::two"};
  newer_run_options w;
  st_run_result *r = NULL;
  st_error err;
  (void)state;
  st_run_options_init(&w.known);
  w.known.selectors = sel;
  w.known.n_selectors = 1;
  w.known.size = ST__SIZE_THROUGH(st_run_options, timeout);
  st_error_clear(&err);
  assert_int_equal(st_run(set, &w.known, NULL, 0, &r, &err), ST_OK);
  assert_int_equal(st_run_result_count(r), 1);
  assert_string_equal(st_case_result_case(st_run_result_get(r, 0)), "two");
  st_run_result_free(r);
  memset(w.future, 0xff, sizeof w.future);
  w.known.size = sizeof w;
  assert_int_equal(st_run(set, &w.known, NULL, 0, &r, &err), ST_OK);
  assert_int_equal(st_run_result_count(r), 1);
  assert_int_equal(st_run_result_exit_code(r), 0);
  st_run_result_free(r);
  st_scene_set_free(set);
}

/* A field the caller's size does not cover takes its default, whatever
 * bytes lie there: the mechanism an older caller of a grown struct gets.
 * Shown with the one macro on a struct that grew by a field. */
typedef struct grown {
  size_t size;
  int first;
  int added_later;
} grown;

static void has_field__covers_only_the_callers_layout(void **state) {
  grown g = {ST__SIZE_THROUGH(grown, first), 1, 12345};
  (void)state;
  assert_true(ST__HAS_FIELD(&g, grown, first));
  assert_false(ST__HAS_FIELD(&g, grown, added_later));
  g.size = sizeof g;
  assert_true(ST__HAS_FIELD(&g, grown, added_later));
  g.size = 0;
  assert_false(ST__HAS_FIELD(&g, grown, first));
}

typedef struct counts {
  int case_end[3];
  int run_begin[3];
} counts;

/* One observer's data: the shared counts and its own index. */
typedef struct who {
  counts *c;
  int k;
} who;

static void on_case_end(void *data, const st_case_info *info,
                        const st_case_result *res) {
  who *w = data;
  (void)info;
  (void)res;
  w->c->case_end[w->k]++;
}

static void on_run_begin(void *data, const st_run_info *info) {
  who *w = data;
  (void)info;
  w->c->run_begin[w->k]++;
}

/* Observers are stepped by their size: an array of newer, larger
 * observers has each one's callbacks called with its own data. */
static void observers__stepped_by_size(void **state) {
  st_scene_set *set = load_scene();
  st_run_options opts;
  st_run_result *r = NULL;
  st_error err;
  counts c;
  who ids[3];
  newer_observer obs[3];
  st_observer plain[2];
  int k;
  (void)state;
  memset(&c, 0, sizeof c);
  memset(obs, 0x5a, sizeof obs);
  for (k = 0; k < 3; k++) {
    ids[k].c = &c;
    ids[k].k = k;
    st_observer_init(&obs[k].known);
    obs[k].known.size = sizeof obs[k];
    obs[k].known.data = &ids[k];
    obs[k].known.case_end = on_case_end;
    obs[k].known.run_begin = on_run_begin;
  }
  st_run_options_init(&opts);
  st_error_clear(&err);
  assert_int_equal(st_run(set, &opts, &obs[0].known, 3, &r, &err), ST_OK);
  st_run_result_free(r);
  for (k = 0; k < 3; k++) {
    assert_int_equal(c.case_end[k], 2);
    assert_int_equal(c.run_begin[k], 1);
  }
  /* An array at this layout, and its second entry not initialised. */
  memset(&c, 0, sizeof c);
  for (k = 0; k < 2; k++) {
    st_observer_init(&plain[k]);
    plain[k].data = &ids[k];
    plain[k].case_end = on_case_end;
  }
  assert_int_equal(st_run(set, &opts, plain, 2, &r, &err), ST_OK);
  st_run_result_free(r);
  assert_int_equal(c.case_end[0], 2);
  assert_int_equal(c.case_end[1], 2);
  plain[1].size = 0;
  st_error_clear(&err);
  assert_int_equal(st_run(set, &opts, plain, 2, &r, &err), ST_EINVAL);
  assert_null(r);
  assert_non_null(strstr(err.message, "observer 1 has size 0, less than"));
  assert_non_null(strstr(err.message, "st_observer_init()"));
  st_error_clear(&err);
  assert_int_equal(st_run(set, &opts, NULL, 1, &r, &err), ST_EINVAL);
  st_scene_set_free(set);
}

/* st_load_options: size 0 is one error in the list; a newer caller's
 * fields this library knows are honoured (max_nodes trips: the two
 * aliases of the shape expand to 4 nodes). */
static void load_options__size_checked_and_newer_read(void **state) {
  struct {
    st_load_options known;
    uint64_t future;
  } w;
  st_scene_set *set = NULL;
  st_error_list errs;
  (void)state;
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  st_error_list_init(&errs);
  st_load_options_init(&w.known);
  w.known.size = 0;
  assert_int_equal(st_scene_set_load_string(set, "abi.yaml", scene_text,
                                            strlen(scene_text), &w.known,
                                            &errs),
                   ST_EINVAL);
  assert_int_equal(errs.count, 1);
  assert_int_equal(errs.items[0].code, ST_EINVAL);
  assert_non_null(strstr(errs.items[0].message,
                         "st_load_options has size 0, less than the"));
  assert_int_equal(st_scene_set_count(set), 0);
  st_error_list_free(&errs);
  st_error_list_init(&errs);
  assert_int_equal(
      st_scene_set_load_path(set, ST_SOURCE_ROOT "/scenes", &w.known, &errs),
      ST_EINVAL);
  assert_int_equal(errs.count, 1);
  st_error_list_free(&errs);
  st_error_list_init(&errs);
  w.known.size = sizeof w;
  w.future = UINT64_MAX;
  w.known.max_nodes = 3;
  assert_int_equal(st_scene_set_load_string(set, "abi.yaml", scene_text,
                                            strlen(scene_text), &w.known,
                                            &errs),
                   ST_ELOAD);
  assert_true(errs.count >= 1);
  st_error_list_free(&errs);
  st_error_list_init(&errs);
  w.known.max_nodes = ST_DEFAULT_MAX_NODES;
  assert_int_equal(st_scene_set_load_string(set, "abi.yaml", scene_text,
                                            strlen(scene_text), &w.known,
                                            &errs),
                   ST_OK);
  assert_int_equal(st_scene_set_count(set), 1);
  st_error_list_free(&errs);
  st_scene_set_free(set);
}

/* Each _init sets size to this layout's sizeof and the defaults. */
static void init__sets_size_and_defaults(void **state) {
  st_run_options ro;
  st_load_options lo;
  st_observer ob;
  (void)state;
  memset(&ro, 0x77, sizeof ro);
  memset(&lo, 0x77, sizeof lo);
  memset(&ob, 0x77, sizeof ob);
  st_run_options_init(&ro);
  st_load_options_init(&lo);
  st_observer_init(&ob);
  assert_int_equal(ro.size, sizeof ro);
  assert_string_equal(ro.platform, "cpu");
  assert_int_equal(ro.jobs, 1);
  assert_null(ro.registry);
  assert_int_equal(lo.size, sizeof lo);
  assert_true(lo.max_nodes == ST_DEFAULT_MAX_NODES);
  assert_int_equal(ob.size, sizeof ob);
  assert_null(ob.data);
  assert_null(ob.case_finish);
}

/* Enums grow only at their end within an ABI (docs/api.md): st_role's
 * values are fixed, ST_ROLE_SCRATCH appended, and the ABI still 2. */
static void role__values_fixed_scratch_appended(void **state) {
  (void)state;
  assert_int_equal(ST_ABI_VERSION, 2);
  assert_int_equal(ST_ROLE_INPUT, 0);
  assert_int_equal(ST_ROLE_OUTPUT, 1);
  assert_int_equal(ST_ROLE_INOUT, 2);
  assert_int_equal(ST_ROLE_SCRATCH, 3);
}

/* st_dtype values are ABI (docs/api.md#dtypes-are-abi): a plugin built
 * against older headers passes these numbers. New dtypes are appended,
 * never renumbered. */
static void dtype__values_are_pinned(void **state) {
  (void)state;
  static const struct {
    st_dtype d;
    int value;
    const char *name;
  } pinned[] = {
      {ST_DTYPE_FLOAT32, 0, "float32"},
      {ST_DTYPE_FLOAT64, 1, "float64"},
      {ST_DTYPE_FLOAT16, 2, "float16"},
      {ST_DTYPE_BFLOAT16, 3, "bfloat16"},
      {ST_DTYPE_INT8, 4, "int8"},
      {ST_DTYPE_INT16, 5, "int16"},
      {ST_DTYPE_INT32, 6, "int32"},
      {ST_DTYPE_INT64, 7, "int64"},
      {ST_DTYPE_UINT8, 8, "uint8"},
      {ST_DTYPE_BOOL, 9, "bool"},
      {ST_DTYPE_UINT16, 10, "uint16"},
      {ST_DTYPE_UINT32, 11, "uint32"},
      {ST_DTYPE_UINT64, 12, "uint64"},
      {ST_DTYPE_FLOAT8_E4M3FN, 13, "float8_e4m3fn"},
      {ST_DTYPE_FLOAT8_E5M2, 14, "float8_e5m2"},
  };
  const size_t n = sizeof pinned / sizeof pinned[0];
  assert_int_equal(ST_DTYPE_COUNT, n);
  for (size_t i = 0; i < n; i++) {
    assert_int_equal((int)pinned[i].d, pinned[i].value);
    assert_string_equal(st_dtype_name(pinned[i].d), pinned[i].name);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(run_options__size_below_first_layout_is_einval),
      cmocka_unit_test(run_options__first_layout_and_newer_callers_run),
      cmocka_unit_test(has_field__covers_only_the_callers_layout),
      cmocka_unit_test(observers__stepped_by_size),
      cmocka_unit_test(load_options__size_checked_and_newer_read),
      cmocka_unit_test(init__sets_size_and_defaults),
      cmocka_unit_test(role__values_fixed_scratch_appended),
      cmocka_unit_test(dtype__values_are_pinned),
  };
  st_log_set_level(ST_LOG_NULL);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
