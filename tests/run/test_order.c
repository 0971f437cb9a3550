/* SPDX-License-Identifier: MIT */
/* Tests of the run's order (harness/run/order.c):
 * docs/cli.md#repeat-and-shuffle's shuffle permutation against vectors computed
 * from the text of docs/cli.md#repeat-and-shuffle (Python,
 * tests/cli/test_reports.py's spec_shuffle), and --repeat's layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "run/order.h"

static void shuffle__spec_vectors(void **state) {
  /* spec_shuffle(list(range(10)), seed) in Python. */
  static const size_t seed0[10] = {6, 3, 2, 9, 8, 1, 4, 7, 0, 5};
  static const size_t seed42[10] = {0, 9, 5, 8, 6, 4, 7, 2, 1, 3};
  size_t items[10], i;
  (void)state;
  for (i = 0; i < 10; i++)
    items[i] = i;
  st__shuffle(items, 10, 0);
  assert_memory_equal(items, seed0, sizeof items);
  for (i = 0; i < 10; i++)
    items[i] = i;
  st__shuffle(items, 10, 42);
  assert_memory_equal(items, seed42, sizeof items);
  /* Zero and one items: nothing to do, nothing drawn. */
  st__shuffle(items, 0, 1);
  st__shuffle(items, 1, 1);
  assert_int_equal(items[0], seed42[0]);
}

static void order_build__repeat_iterations_in_order(void **state) {
  st_case_ref refs[3], *out = NULL;
  unsigned *iters = NULL;
  size_t n = 0, i;
  st_error err;
  (void)state;
  for (i = 0; i < 3; i++) {
    refs[i].scene = NULL;
    refs[i].index = i;
  }
  st_error_clear(&err);
  assert_int_equal(st__order_build(refs, 3, 2, 0, 0, &out, &iters, &n, &err),
                   ST_OK);
  assert_int_equal(n, 6);
  for (i = 0; i < 6; i++) {
    assert_int_equal(out[i].index, i % 3);
    assert_int_equal(iters[i], i / 3 + 1);
  }
  free(out);
  free(iters);
  /* Shuffled: iteration k uses seed S + k - 1, so iteration 2 of seed 41
   * is iteration 1 of seed 42. */
  assert_int_equal(st__order_build(refs, 3, 2, 1, 41, &out, &iters, &n, &err),
                   ST_OK);
  {
    size_t want[3] = {0, 1, 2};
    st__shuffle(want, 3, 42);
    for (i = 0; i < 3; i++)
      assert_int_equal(out[3 + i].index, want[i]);
  }
  free(out);
  free(iters);
  /* repeat 0 is once; an empty selection gives an empty order. */
  assert_int_equal(st__order_build(refs, 0, 0, 1, 0, &out, &iters, &n, &err),
                   ST_OK);
  assert_int_equal(n, 0);
  free(out);
  free(iters);
}

static void order_build__overflow_is_usage_error(void **state) {
  st_case_ref refs[1], *out = (st_case_ref *)1;
  unsigned *iters = (unsigned *)1;
  size_t n = 7;
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st__order_build(refs, SIZE_MAX / 8, 1000000, 0, 0, &out,
                                   &iters, &n, &err),
                   ST_EUSAGE);
  assert_null(out);
  assert_null(iters);
  assert_int_equal(n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(shuffle__spec_vectors),
      cmocka_unit_test(order_build__repeat_iterations_in_order),
      cmocka_unit_test(order_build__overflow_is_usage_error),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
