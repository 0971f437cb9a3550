/* SPDX-License-Identifier: MIT */
/* Trust in a verdict (docs/scene-format.md#quarantine, docs/cli.md):
 * quarantine dates and how a quarantine changes a result, on a fixed
 * clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <scenetest/scenetest.h>

#include "case/result.h"
#include "case/trust.h"
#include "case/wire.h"
#include "scene/quarantine.h"

static st_case_result *with(st_case_status status, const char *msg) {
  st_case_result *r = st__case_result_new("s", "c", "f.yaml", 3, "cpu", 0);
  assert_non_null(r);
  if (status != ST_CASE_PASS)
    st__case_result_set_status(r, status, "%s", msg);
  return r;
}

static void quarantine_date_ok__calendar(void **state) {
  (void)state;
  assert_true(st__quarantine_date_ok("2026-12-31"));
  assert_true(st__quarantine_date_ok("2024-02-29"));  /* leap year */
  assert_true(st__quarantine_date_ok("2000-02-29"));  /* div by 400 */
  assert_false(st__quarantine_date_ok("1900-02-29")); /* div by 100 */
  assert_false(st__quarantine_date_ok("2026-02-29"));
  assert_false(st__quarantine_date_ok("2026-04-31"));
  assert_false(st__quarantine_date_ok("2026-13-01"));
  assert_false(st__quarantine_date_ok("2026-00-10"));
  assert_false(st__quarantine_date_ok("2026-01-00"));
  assert_false(st__quarantine_date_ok("0000-01-01"));
  assert_false(st__quarantine_date_ok("2026-1-01"));
  assert_false(st__quarantine_date_ok("2026-01-011"));
  assert_false(st__quarantine_date_ok("2026/01/01"));
  assert_false(st__quarantine_date_ok("2026-0a-01"));
  assert_false(st__quarantine_date_ok(""));
  assert_false(st__quarantine_date_ok(NULL));
}

/* The day before, of and after `until`; a platform list. */
static void quarantine_applies__dates_and_platforms(void **state) {
  char *names[] = {"threads", "cuda"};
  st__quarantine q = {.reason = "bug", .until = "2026-06-30", .strict = 1};
  (void)state;
  assert_true(st__quarantine_applies(&q, "cpu", "2026-06-29"));
  assert_true(st__quarantine_applies(&q, "cpu", "2026-06-30"));
  assert_false(st__quarantine_applies(&q, "cpu", "2026-07-01"));
  assert_false(st__quarantine_expired(&q, "2026-06-30"));
  assert_true(st__quarantine_expired(&q, "2026-07-01"));
  assert_true(st__quarantine_expired(&q, "2027-01-01"));
  q.platforms = names;
  q.n_platforms = 2;
  assert_false(st__quarantine_applies(&q, "cpu", "2026-06-30"));
  assert_true(st__quarantine_applies(&q, "threads", "2026-06-30"));
  assert_true(st__quarantine_applies(&q, "cuda", "2026-06-01"));
  assert_false(st__quarantine_applies(&q, "cuda", "2026-07-01"));
  assert_false(st__quarantine_applies(NULL, "cpu", "2026-06-01"));
}

static void quarantine_today__fixed_by_env(void **state) {
  char buf[11];
  (void)state;
  setenv("SCENETEST_TODAY", "2030-01-02", 1);
  st__quarantine_today(buf);
  assert_string_equal(buf, "2030-01-02");
  setenv("SCENETEST_TODAY", "2030-02-30", 1); /* invalid: ignored */
  st__quarantine_today(buf);
  assert_true(st__quarantine_date_ok(buf));
  assert_string_not_equal(buf, "2030-02-30");
  unsetenv("SCENETEST_TODAY");
}

static void apply_quarantine__verdicts(void **state) {
  st__quarantine q = {.reason = "gh-1", .until = "2026-06-30", .strict = 1};
  st_case_result *r;
  (void)state;
  /* Applies: fail -> xfail, message kept. */
  r = with(ST_CASE_FAIL, "out differs");
  st__case_result_apply_quarantine(r, &q, 1, 0);
  assert_int_equal(st_case_result_status(r), ST_CASE_XFAIL);
  assert_string_equal(st_case_result_message(r), "out differs");
  st_case_result_free(r);
  /* Applies, strict: pass -> xpass. */
  r = with(ST_CASE_PASS, NULL);
  st__case_result_apply_quarantine(r, &q, 1, 0);
  assert_int_equal(st_case_result_status(r), ST_CASE_XPASS);
  assert_string_equal(st_case_result_message(r),
                      "unexpected pass: the case is quarantined until "
                      "2026-06-30 (gh-1); remove the quarantine");
  assert_null(st__case_result_warnings(r));
  st_case_result_free(r);
  /* Applies, not strict: a pass with the warning. */
  q.strict = 0;
  r = with(ST_CASE_PASS, NULL);
  st__case_result_apply_quarantine(r, &q, 1, 0);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  assert_string_equal(st__case_result_warnings(r),
                      "passes: remove the quarantine");
  st_case_result_free(r);
  /* Applies: error and skip stay. */
  r = with(ST_CASE_ERROR, "crash");
  st__case_result_apply_quarantine(r, &q, 1, 0);
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(r), "crash");
  st_case_result_free(r);
  r = with(ST_CASE_SKIP, "declined");
  st__case_result_apply_quarantine(r, &q, 1, 0);
  assert_int_equal(st_case_result_status(r), ST_CASE_SKIP);
  st_case_result_free(r);
  /* Expired: judged as without, the failure says so first. */
  r = with(ST_CASE_FAIL, "out differs");
  st__case_result_apply_quarantine(r, &q, 0, 1);
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  assert_string_equal(st_case_result_message(r),
                      "quarantine expired on 2026-06-30: gh-1: out differs");
  st_case_result_free(r);
  r = with(ST_CASE_PASS, NULL);
  st__case_result_apply_quarantine(r, &q, 0, 1);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  assert_null(st_case_result_message(r));
  st_case_result_free(r);
  /* Another platform: nothing changes. */
  r = with(ST_CASE_FAIL, "out differs");
  st__case_result_apply_quarantine(r, &q, 0, 0);
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  assert_string_equal(st_case_result_message(r), "out differs");
  st_case_result_free(r);
}

static void quarantine_copy__deep(void **state) {
  char *names[] = {"threads"};
  st__quarantine q = {.reason = "r",
                      .until = "2026-06-30",
                      .strict = 0,
                      .platforms = names,
                      .n_platforms = 1};
  int oom = 0;
  st__quarantine *c = st__quarantine_copy(&q, &oom);
  (void)state;
  assert_non_null(c);
  assert_int_equal(oom, 0);
  assert_ptr_not_equal(c->reason, q.reason);
  assert_string_equal(c->reason, "r");
  assert_string_equal(c->until, "2026-06-30");
  assert_int_equal(c->strict, 0);
  assert_int_equal(c->n_platforms, 1);
  assert_string_equal(c->platforms[0], "threads");
  st__quarantine_free(c);
  assert_null(st__quarantine_copy(NULL, &oom));
  st__quarantine_free(NULL);
}

/* A float32 tensor of n elements, zeros first. */
static st_tensor tensor_of(float *v, size_t n, st_dtype dtype) {
  st_tensor t;
  memset(&t, 0, sizeof t);
  t.name = "out";
  t.dtype = dtype;
  t.role = ST_ROLE_OUTPUT;
  t.ndim = 1;
  t.shape[0] = (int64_t)n;
  t.numel = n;
  t.nbytes = n * 4;
  t.data = v;
  return t;
}

static void mistrust_reason__thresholds(void **state) {
  float v[100];
  char why[256];
  st_tensor t;
  (void)state;
  for (size_t i = 0; i < 100; i++)
    v[i] = (float)i + 1.0f;
  t = tensor_of(v, 100, ST_DTYPE_FLOAT32);
  assert_false(st__mistrust_reason(&t, why, sizeof why));
  for (size_t i = 0; i < 29; i++)
    v[i] = 0.0f;
  assert_false(st__mistrust_reason(&t, why, sizeof why)); /* 29% */
  v[29] = -0.0f;
  assert_false(st__mistrust_reason(&t, why, sizeof why)); /* 30%: not over */
  v[30] = 0.0f;
  assert_true(st__mistrust_reason(&t, why, sizeof why)); /* 31% */
  assert_string_equal(why, "tensor 'out': 31 of golden's 100 elements are "
                           "zero (over 30%)");
  /* Constant, and the sizes that never count. */
  for (size_t i = 0; i < 100; i++)
    v[i] = 2.5f;
  assert_true(st__mistrust_reason(&t, why, sizeof why));
  assert_string_equal(why, "tensor 'out': golden's 100 elements are all "
                           "equal (2.5)");
  v[99] = 2.0f;
  assert_false(st__mistrust_reason(&t, why, sizeof why));
  t = tensor_of(v, 1, ST_DTYPE_FLOAT32);
  assert_false(st__mistrust_reason(&t, why, sizeof why)); /* one element */
  t = tensor_of(v, 0, ST_DTYPE_FLOAT32);
  assert_false(st__mistrust_reason(&t, why, sizeof why));
  memset(v, 0, sizeof v);
  t = tensor_of(v, 100, ST_DTYPE_INT32); /* integers never */
  assert_false(st__mistrust_reason(&t, why, sizeof why));
  /* NaN equals nothing: an all-NaN golden is not "all equal". */
  for (size_t i = 0; i < 4; i++)
    v[i] = __builtin_nanf("");
  t = tensor_of(v, 4, ST_DTYPE_FLOAT32);
  assert_false(st__mistrust_reason(&t, why, sizeof why));
}

static void determinism_diff__first_element_and_runs(void **state) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {1, 2, 3, 4, 5, 6};
  st_tensor a = tensor_of(x, 6, ST_DTYPE_FLOAT32);
  st_tensor b = tensor_of(y, 6, ST_DTYPE_FLOAT32);
  char msg[256];
  (void)state;
  a.ndim = b.ndim = 2;
  a.shape[0] = b.shape[0] = 2;
  a.shape[1] = b.shape[1] = 3;
  assert_false(st__determinism_diff(&a, 1, &b, 2, msg, sizeof msg));
  y[4] = -0.0f;
  y[5] = 7.0f;
  x[4] = 0.0f; /* +0 and -0: equal values, different bits */
  assert_true(st__determinism_diff(&a, 1, &b, 3, msg, sizeof msg));
  assert_string_equal(msg, "not deterministic: tensor 'out' differs at "
                           "[1, 1]: 0 in run 1, -0 in run 3");
}

/* A supervised child sends its result on the wire: the warnings and the
 * mistrust arrive as they left, in order, and none stay none. */
static void wire_result__carries_warnings_and_mistrust(void **state) {
  st_case_result *r = with(ST_CASE_PASS, NULL), *back;
  st__wbuf b;
  st__rbuf rd;
  (void)state;
  st__case_result_add_warning(r, "passes: remove the quarantine");
  st__case_result_set_mistrust(r, "tensor 'out': golden's 4 elements are "
                                  "all equal (3)");
  for (int pass = 0; pass < 2; pass++) {
    st__wbuf_init(&b);
    st__wire_put_result(&b, r);
    assert_false(b.oom);
    st__rbuf_init(&rd, b.buf.data, b.buf.len);
    back = st__wire_get_result(&rd);
    assert_non_null(back);
    assert_int_equal(rd.off, b.buf.len);
    if (pass == 0) {
      assert_string_equal(st__case_result_warnings(back),
                          "passes: remove the quarantine\nmistrusted: "
                          "tensor 'out': golden's 4 elements are all "
                          "equal (3)");
      assert_string_equal(st__case_result_mistrust(back),
                          "tensor 'out': golden's 4 elements are all "
                          "equal (3)");
    } else {
      assert_null(st__case_result_warnings(back));
      assert_null(st__case_result_mistrust(back));
    }
    st_case_result_free(back);
    st__wbuf_free(&b);
    st_case_result_free(r);
    r = with(ST_CASE_FAIL, "x");
  }
  st_case_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(quarantine_date_ok__calendar),
      cmocka_unit_test(quarantine_applies__dates_and_platforms),
      cmocka_unit_test(quarantine_today__fixed_by_env),
      cmocka_unit_test(apply_quarantine__verdicts),
      cmocka_unit_test(quarantine_copy__deep),
      cmocka_unit_test(mistrust_reason__thresholds),
      cmocka_unit_test(determinism_diff__first_element_and_runs),
      cmocka_unit_test(wire_result__carries_warnings_and_mistrust),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
