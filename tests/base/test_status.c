/* SPDX-License-Identifier: MIT */
/* Status names and messages from the one list; st_error keeps the first
 * cause; formatting of located errors; error lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <scenetest/common.h>

static void st_status_str__every_code_named(void **state) {
  (void)state;
#define XX(name, val, msg)                                                     \
  assert_string_equal(st_status_name(ST_##name), #name);                       \
  assert_string_equal(st_status_str(ST_##name), msg);
  ST_STATUS_MAP(XX)
#undef XX
  assert_string_equal(st_status_name((st_status)-999), "UNKNOWN");
  assert_string_equal(st_status_str((st_status)-999), "unknown status");
}

static void st_status__codes_never_renumbered(void **state) {
  (void)state;
  /* Append-only: these values are part of the ABI. */
  assert_int_equal(ST_OK, 0);
  assert_int_equal(ST_ENOMEM, -1);
  assert_int_equal(ST_ELOAD, -3);
  assert_int_equal(ST_EUSAGE, -5);
  assert_int_equal(ST_EMISSING, -7);
  assert_int_equal(ST_ESKIP, -8);
  assert_int_equal(ST_EMISMATCH, -16);
}

static void st_error_set__first_cause_wins(void **state) {
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_error_set(&err, ST_EIO, "first %d", 1), ST_EIO);
  assert_int_equal(st_error_set(&err, ST_ENOMEM, "second"), ST_ENOMEM);
  assert_int_equal(err.code, ST_EIO);
  assert_string_equal(err.message, "first 1");
  assert_int_equal(st_error_set(NULL, ST_EIO, "ignored"), ST_EIO);
}

static void st_error_format__located_and_plain(void **state) {
  st_error err;
  char buf[256];
  (void)state;
  st_error_clear(&err);
  st_error_set_at(&err, ST_ELOAD, "a.yaml", 3, 7, "expected %s", "x\ny");
  assert_string_equal(st_error_format(&err, buf, sizeof buf),
                      "a.yaml:3:7: error: expected x y");
  st_error_clear(&err);
  st_error_set(&err, ST_EUSAGE, "plain");
  assert_string_equal(st_error_format(&err, buf, sizeof buf), "error: plain");
}

static void st_error_list_add__grows(void **state) {
  st_error_list list;
  st_error err;
  int i;
  (void)state;
  st_error_list_init(&list);
  for (i = 0; i < 100; i++) {
    st_error_clear(&err);
    st_error_set_at(&err, ST_ELOAD, "f", i + 1, 1, "e%d", i);
    assert_int_equal(st_error_list_add(&list, &err), ST_OK);
  }
  assert_int_equal(list.count, 100);
  assert_int_equal(list.items[99].line, 100);
  assert_string_equal(list.items[42].message, "e42");
  st_error_list_free(&list);
  assert_int_equal(list.count, 0);
  st_error_list_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_status_str__every_code_named),
      cmocka_unit_test(st_status__codes_never_renumbered),
      cmocka_unit_test(st_error_set__first_cause_wins),
      cmocka_unit_test(st_error_format__located_and_plain),
      cmocka_unit_test(st_error_list_add__grows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
