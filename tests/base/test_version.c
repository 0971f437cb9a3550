/* SPDX-License-Identifier: MIT */
/* The version three ways agree: the generated macros, the run-time
 * st_version()/st_version_string(), and meson.build's project version
 * (ST_MESON_VERSION, passed by tests/meson.build). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include <scenetest/scenetest.h>

static void version_macros__match_meson(void **state) {
  unsigned major = 99, minor = 99, patch = 99;
  char tail = 0;
  char s[64];
  (void)state;
  assert_int_equal(
      sscanf(ST_MESON_VERSION, "%u.%u.%u%c", &major, &minor, &patch, &tail), 3);
  assert_int_equal(ST_VERSION_MAJOR, major);
  assert_int_equal(ST_VERSION_MINOR, minor);
  assert_int_equal(ST_VERSION_PATCH, patch);
  assert_int_equal(ST_VERSION_HEX, (major << 16) | (minor << 8) | patch);
  snprintf(s, sizeof s, "%u.%u.%u", major, minor, patch);
  assert_string_equal(ST_VERSION_STRING, s);
  assert_string_equal(ST_VERSION_STRING, ST_MESON_VERSION);
}

static void st_version__matches_macros(void **state) {
  (void)state;
  assert_int_equal(st_version(), ST_VERSION_HEX);
  assert_string_equal(st_version_string(), ST_VERSION_STRING);
  /* 0.2.0 is the release that made the ABI changes (plugin ABI 2). */
  assert_true(st_version() >= 0x000200u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(version_macros__match_meson),
      cmocka_unit_test(st_version__matches_macros),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
