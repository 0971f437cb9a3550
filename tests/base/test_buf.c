/* SPDX-License-Identifier: MIT */
/* The capped growable buffer: growth keeps the bytes, the cap is never
 * passed (neither in length nor in allocation), a refused addition leaves
 * the buffer as it was, capped addition keeps the first bytes, and reuse
 * gives large storage back. (Out of memory: test_oom.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/buf.h"

static void fill_pattern(char *p, size_t n, size_t from) {
  for (size_t i = 0; i < n; i++)
    p[i] = (char)((from + i) * 7 % 251);
}

static int has_pattern(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != (char)(i * 7 % 251))
      return 0;
  return 1;
}

static void st__buf_add__grows_and_keeps_bytes(void **state) {
  char chunk[1000];
  st__buf b;
  (void)state;
  st__buf_init(&b, SIZE_MAX);
  assert_null(b.data);
  assert_int_equal(st__buf_add(&b, "", 0), ST_OK);
  assert_null(b.data); /* nothing added, nothing allocated */
  for (size_t k = 0; k < 300; k++) {
    fill_pattern(chunk, sizeof chunk, k * sizeof chunk);
    assert_int_equal(st__buf_add(&b, chunk, sizeof chunk), ST_OK);
  }
  assert_int_equal(b.len, 300 * sizeof chunk);
  assert_true(b.cap >= b.len);
  assert_true(has_pattern(b.data, b.len));
  st__buf_free(&b);
  assert_null(b.data);
  assert_int_equal(b.len, 0);
  st__buf_free(NULL);
}

static void st__buf_add__over_cap_refused_unchanged(void **state) {
  st__buf b;
  char big[100];
  (void)state;
  fill_pattern(big, sizeof big, 0);
  st__buf_init(&b, 150);
  assert_int_equal(st__buf_add(&b, big, 100), ST_OK);
  assert_int_equal(st__buf_add(&b, big, 51), ST_ELIMIT);
  assert_int_equal(b.len, 100);
  assert_true(has_pattern(b.data, 100));
  assert_int_equal(st__buf_add(&b, big + 100 - 50, 50), ST_OK);
  assert_int_equal(b.len, 150);
  assert_true(b.cap <= 150); /* never allocates past the cap */
  assert_int_equal(st__buf_add(&b, big, 1), ST_ELIMIT);
  assert_int_equal(st__buf_reserve(&b, 1), ST_ELIMIT);
  assert_int_equal(st__buf_reserve(&b, 0), ST_OK);
  st__buf_free(&b);
}

static void st__buf_add_capped__keeps_first_bytes(void **state) {
  st__buf b;
  char chunk[64];
  size_t kept = 0, offered = 0;
  (void)state;
  st__buf_init(&b, 1000);
  for (size_t k = 0; k < 20; k++) {
    fill_pattern(chunk, sizeof chunk, offered);
    kept += st__buf_add_capped(&b, chunk, sizeof chunk);
    offered += sizeof chunk;
  }
  assert_int_equal(kept, 1000);
  assert_int_equal(b.len, 1000);
  assert_true(has_pattern(b.data, 1000));
  assert_int_equal(st__buf_add_capped(&b, chunk, sizeof chunk), 0);
  st__buf_free(&b);
}

static void st__buf_reserve__commit_and_drop_front(void **state) {
  st__buf b;
  (void)state;
  st__buf_init(&b, SIZE_MAX);
  assert_int_equal(st__buf_reserve(&b, 11), ST_OK);
  assert_true(b.cap - b.len >= 11);
  memcpy(b.data, "line one\nli", 11);
  st__buf_commit(&b, 11);
  st__buf_drop_front(&b, 9);
  assert_int_equal(b.len, 2);
  assert_memory_equal(b.data, "li", 2);
  st__buf_drop_front(&b, 0);
  assert_int_equal(b.len, 2);
  st__buf_free(&b);
  st__buf_drop_front(&b, 0); /* an empty buffer, data NULL */
}

static void st__buf_reset__gives_large_storage_back(void **state) {
  st__buf b;
  char chunk[4096] = {0};
  (void)state;
  st__buf_init(&b, SIZE_MAX);
  assert_int_equal(st__buf_add(&b, chunk, 100), ST_OK);
  st__buf_reset(&b, 1024);
  assert_int_equal(b.len, 0);
  assert_non_null(b.data); /* small: kept for the next content */
  assert_int_equal(st__buf_add(&b, chunk, sizeof chunk), ST_OK);
  st__buf_reset(&b, 1024);
  assert_int_equal(b.len, 0);
  assert_null(b.data);
  assert_int_equal(b.cap, 0);
  assert_int_equal(b.max, SIZE_MAX);
  st__buf_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__buf_add__grows_and_keeps_bytes),
      cmocka_unit_test(st__buf_add__over_cap_refused_unchanged),
      cmocka_unit_test(st__buf_add_capped__keeps_first_bytes),
      cmocka_unit_test(st__buf_reserve__commit_and_drop_front),
      cmocka_unit_test(st__buf_reset__gives_large_storage_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
