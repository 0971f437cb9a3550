/* SPDX-License-Identifier: MIT */
/* The general helpers of base/util.h: an array grows by doubling from its
 * first capacity and keeps its elements; a size that would overflow, or
 * an element size of zero, is refused with the array and its capacity as
 * they were; zeroed allocation and the monotonic clock. (Out of memory
 * inside realloc takes the same path as the overflow: NULL, nothing
 * changed.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

static void st__array_grow__first_capacity(void **state) {
  size_t cap = 0;
  int *v;
  (void)state;
  v = st__array_grow(NULL, &cap, 0, sizeof *v, 4);
  assert_non_null(v);
  assert_int_equal(cap, 4);
  free(v);
  /* A first capacity of 0 is 1: room for the element asked for. */
  cap = 0;
  v = st__array_grow(NULL, &cap, 0, sizeof *v, 0);
  assert_non_null(v);
  assert_int_equal(cap, 1);
  v[0] = 1;
  free(v);
}

static void st__array_grow__room_left_is_unchanged(void **state) {
  size_t cap = 0;
  int *v = st__array_grow(NULL, &cap, 0, sizeof *v, 8);
  (void)state;
  assert_non_null(v);
  for (size_t count = 0; count < 8; count++) {
    assert_ptr_equal(st__array_grow(v, &cap, count, sizeof *v, 8), v);
    assert_int_equal(cap, 8);
  }
  free(v);
}

static void st__array_grow__doubles_and_keeps_elements(void **state) {
  size_t cap = 0, n, want_cap = 4;
  int *v = NULL;
  (void)state;
  for (n = 0; n < 1000; n++) {
    int *g = st__array_grow(v, &cap, n, sizeof *g, 4);
    assert_non_null(g);
    v = g;
    if (n == want_cap)
      want_cap *= 2;
    assert_int_equal(cap, want_cap);
    v[n] = (int)(n * 3 + 1);
  }
  assert_int_equal(cap, 1024);
  for (n = 0; n < 1000; n++)
    assert_int_equal(v[n], (int)(n * 3 + 1));
  free(v);
}

static void st__array_grow__count_past_cap_grows_past_it(void **state) {
  size_t cap = 2;
  char *v = malloc(2);
  (void)state;
  assert_non_null(v);
  v = st__array_grow(v, &cap, 9, 1, 4);
  assert_non_null(v);
  assert_int_equal(cap, 16); /* 2, 4, 8, 16: the first above 9 */
  v[9] = 'x';
  free(v);
}

static void st__array_grow__overflow_refused_unchanged(void **state) {
  size_t cap = 4;
  char *v = malloc(4);
  (void)state;
  assert_non_null(v);
  memcpy(v, "abcd", 4);
  /* Twice the capacity in elements fits, in bytes it does not. */
  assert_null(st__array_grow(v, &cap, 4, SIZE_MAX / 4, 4));
  assert_int_equal(cap, 4);
  /* The capacity itself cannot double. */
  cap = SIZE_MAX / 2 + 1;
  assert_null(st__array_grow(v, &cap, cap, 1, 4));
  assert_int_equal(cap, SIZE_MAX / 2 + 1);
  /* A count beyond any capacity that can be reached. */
  cap = 4;
  assert_null(st__array_grow(v, &cap, SIZE_MAX, 1, 4));
  assert_int_equal(cap, 4);
  /* Still the caller's, as it was. */
  assert_memory_equal(v, "abcd", 4);
  free(v);
}

static void st__array_grow__zero_element_refused(void **state) {
  size_t cap = 0;
  (void)state;
  assert_null(st__array_grow(NULL, &cap, 0, 0, 4));
  assert_int_equal(cap, 0);
}

static void st__array_resize__exact_zero_and_overflow(void **state) {
  char *v;
  (void)state;
  v = st__array_resize(NULL, 3, 2);
  assert_non_null(v);
  memcpy(v, "abcdef", 6);
  v = st__array_resize(v, 5, 2);
  assert_non_null(v);
  assert_memory_equal(v, "abcdef", 6);
  /* Zero elements (or bytes) is still a block: NULL only on failure. */
  v = st__array_resize(v, 0, 2);
  assert_non_null(v);
  free(v);
  v = st__array_resize(NULL, 4, 0);
  assert_non_null(v);
  /* The product overflows: refused, v untouched and still to free. */
  v[0] = 'k';
  assert_null(st__array_resize(v, SIZE_MAX / 2 + 1, 2));
  assert_int_equal(v[0], 'k');
  free(v);
}

static void st__zalloc__zeroed_and_overflow(void **state) {
  unsigned char *p;
  (void)state;
  p = st__zalloc(100, 3);
  assert_non_null(p);
  for (size_t i = 0; i < 300; i++)
    assert_int_equal(p[i], 0);
  free(p);
  p = st__zalloc(0, 8);
  assert_non_null(p);
  free(p);
  assert_null(st__zalloc(SIZE_MAX / 2 + 1, 2));
}

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void st__now_ns__is_the_monotonic_clock(void **state) {
  (void)state;
  for (int i = 0; i < 1000; i++) {
    uint64_t before = monotonic_ns();
    uint64_t t = st__now_ns();
    uint64_t after = monotonic_ns();
    assert_true(before <= t);
    assert_true(t <= after);
  }
}

static void st__array_size__counts_elements(void **state) {
  int ints[7];
  struct {
    char c;
    double d;
  } pairs[3];
  (void)state;
  (void)ints;
  (void)pairs;
  assert_int_equal(ST__ARRAY_SIZE(ints), 7);
  assert_int_equal(ST__ARRAY_SIZE(pairs), 3);
  assert_int_equal(ST__ARRAY_SIZE("abc"), 4);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__array_grow__first_capacity),
      cmocka_unit_test(st__array_grow__room_left_is_unchanged),
      cmocka_unit_test(st__array_grow__doubles_and_keeps_elements),
      cmocka_unit_test(st__array_grow__count_past_cap_grows_past_it),
      cmocka_unit_test(st__array_grow__overflow_refused_unchanged),
      cmocka_unit_test(st__array_grow__zero_element_refused),
      cmocka_unit_test(st__array_resize__exact_zero_and_overflow),
      cmocka_unit_test(st__zalloc__zeroed_and_overflow),
      cmocka_unit_test(st__now_ns__is_the_monotonic_clock),
      cmocka_unit_test(st__array_size__counts_elements),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
