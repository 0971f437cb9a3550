/* SPDX-License-Identifier: MIT */
/* Placeholder: replaced by the real tests of this module. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void placeholder__not_written(void **state) {
  (void)state;
  /* replaced before the module is called done */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(placeholder__not_written),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
