/* SPDX-License-Identifier: MIT */
/* The phase descriptions (case/phase.h): exactly golden, rehost and run
 * run foreign code (the points where a forked child makes what came
 * before safe), only run calls the kernel, and a name no phase has is
 * described as running none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "case/phase.h"

static void st__phase_describe__foreign_and_kernel_flags(void **state) {
  static const char *const names[] = {"args",  "golden", "record",
                                      "reset", "run",    "compare",
                                      "load",  "rehost", "release"};
  size_t i;
  (void)state;
  for (i = 0; i < sizeof names / sizeof names[0]; i++) {
    const st__phase_desc *d = st__phase_describe(names[i]);
    int foreign = strcmp(names[i], "golden") == 0 ||
                  strcmp(names[i], "rehost") == 0 ||
                  strcmp(names[i], "run") == 0;
    assert_string_equal(d->name, names[i]);
    assert_int_equal(d->runs_foreign, foreign);
    assert_int_equal(d->calls_kernel, strcmp(names[i], "run") == 0);
  }
  assert_int_equal(st__phase_describe("running")->runs_foreign, 0);
  assert_int_equal(st__phase_describe("")->runs_foreign, 0);
  assert_int_equal(st__phase_describe("r")->calls_kernel, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__phase_describe__foreign_and_kernel_flags),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
