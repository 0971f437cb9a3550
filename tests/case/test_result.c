/* SPDX-License-Identifier: MIT */
/* Case results: the first cause wins for status and message alike; an
 * explicit override replaces both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <scenetest/scenetest.h>

#include "case/result.h"

static st_case_result *fresh(void) {
  st_case_result *r = st__case_result_new("s", "c", "f.yaml", 3, "cpu", 0);
  assert_non_null(r);
  assert_int_equal(st_case_result_status(r), ST_CASE_PASS);
  assert_null(st_case_result_message(r));
  return r;
}

/* A failure, then a derived error: the failure and its message stay. */
static void set_status__first_cause_wins_status_and_message(void **state) {
  st_case_result *r = fresh();
  (void)state;
  st__case_result_set_status(r, ST_CASE_FAIL, "out: %d mismatches", 3);
  st__case_result_set_status(r, ST_CASE_ERROR,
                             "out of memory recording "
                             "events");
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  assert_string_equal(st_case_result_message(r), "out: 3 mismatches");
  /* A later status without a message does not change it either. */
  st__case_result_set_status(r, ST_CASE_SKIP, NULL);
  assert_int_equal(st_case_result_status(r), ST_CASE_FAIL);
  st_case_result_free(r);
}

/* A skip (a kernel declined) is a first cause too. */
static void set_status__skip_is_kept(void **state) {
  st_case_result *r = fresh();
  (void)state;
  st__case_result_set_status(r, ST_CASE_SKIP, "declined: no fp16");
  st__case_result_set_status(r, ST_CASE_ERROR, "compare: no output");
  assert_int_equal(st_case_result_status(r), ST_CASE_SKIP);
  assert_string_equal(st_case_result_message(r), "declined: no fp16");
  st_case_result_free(r);
}

/* A status without a message leaves room for none: the first status wins,
 * and a later message is not attached to it. */
static void set_status__status_without_message_wins(void **state) {
  st_case_result *r = fresh();
  (void)state;
  st__case_result_set_status(r, ST_CASE_ERROR, NULL);
  st__case_result_set_status(r, ST_CASE_FAIL, "later");
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_null(st_case_result_message(r));
  st_case_result_free(r);
}

/* override replaces both (the deliberate exceptions: --strict-record, a
 * child that died after reporting). */
static void override__replaces_status_and_message(void **state) {
  st_case_result *r = fresh();
  (void)state;
  st__case_result_set_status(r, ST_CASE_FAIL, "mismatch");
  st__case_result_override(r, ST_CASE_ERROR, "child process died");
  assert_int_equal(st_case_result_status(r), ST_CASE_ERROR);
  assert_string_equal(st_case_result_message(r), "child process died");
  st_case_result_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(set_status__first_cause_wins_status_and_message),
      cmocka_unit_test(set_status__skip_is_kept),
      cmocka_unit_test(set_status__status_without_message_wins),
      cmocka_unit_test(override__replaces_status_and_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
