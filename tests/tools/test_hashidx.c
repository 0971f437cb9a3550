/* SPDX-License-Identifier: MIT */
/* The hash index behind timing and compare (tools/hashidx.c): every
 * position added is found again through growth, a missing key is not
 * found, and keys whose hashes are equal are told apart by eq. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "tools/hashidx.h"

/* Keys are the integers in keys[]; ctx points at the key looked for. */
typedef struct probe {
  const long *keys;
  long want;
} probe;

static int eq(const void *ctx, size_t pos) {
  const probe *p = ctx;
  return p->keys[pos] == p->want;
}

static void hashidx__finds_every_position_through_growth(void **state) {
  enum { N = 100000 };
  long *keys = malloc(N * sizeof *keys);
  st__hashidx x = {NULL, 0, 0};
  probe p;
  size_t i;
  (void)state;
  assert_non_null(keys);
  p.keys = keys;
  for (i = 0; i < N; i++) {
    keys[i] = (long)(i * 7919 + 13);
    assert_int_equal(
        st__hashidx_add(&x, st__hash_u64(ST__HASH_INIT, (uint64_t)keys[i]), i),
        ST_OK);
  }
  assert_int_equal(x.n, N);
  assert_true(x.cap >= 2 * N);
  for (i = 0; i < N; i++) {
    p.want = keys[i];
    assert_int_equal(
        st__hashidx_find(&x, st__hash_u64(ST__HASH_INIT, (uint64_t)p.want), eq,
                         &p),
        i);
  }
  p.want = 12; /* no i * 7919 + 13 */
  assert_int_equal(
      st__hashidx_find(&x, st__hash_u64(ST__HASH_INIT, 12), eq, &p), SIZE_MAX);
  st__hashidx_free(&x);
  assert_int_equal(x.cap, 0);
  assert_int_equal(st__hashidx_find(&x, 1, eq, &p), SIZE_MAX);
  free(keys);
}

/* Every key with the same hash: eq alone tells them apart. */
static void hashidx__equal_hashes_told_apart_by_eq(void **state) {
  long keys[300];
  st__hashidx x = {NULL, 0, 0};
  probe p;
  size_t i;
  (void)state;
  p.keys = keys;
  for (i = 0; i < 300; i++) {
    keys[i] = (long)i * 3;
    assert_int_equal(st__hashidx_add(&x, 42, i), ST_OK);
  }
  for (i = 0; i < 300; i++) {
    p.want = (long)i * 3;
    assert_int_equal(st__hashidx_find(&x, 42, eq, &p), i);
  }
  p.want = 1;
  assert_int_equal(st__hashidx_find(&x, 42, eq, &p), SIZE_MAX);
  assert_int_equal(st__hashidx_add(&x, 42, SIZE_MAX), ST_ENOMEM);
  st__hashidx_free(&x);
}

/* The separator: ("ab", "c") and ("a", "bc") hash apart. */
static void hash_bytes__fields_do_not_run_together(void **state) {
  (void)state;
  assert_true(st__hash_bytes(st__hash_bytes(ST__HASH_INIT, "ab", 2), "c", 1) !=
              st__hash_bytes(st__hash_bytes(ST__HASH_INIT, "a", 1), "bc", 2));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hashidx__finds_every_position_through_growth),
      cmocka_unit_test(hashidx__equal_hashes_told_apart_by_eq),
      cmocka_unit_test(hash_bytes__fields_do_not_run_together),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
