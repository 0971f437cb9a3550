/* SPDX-License-Identifier: MIT */
/* The owner-recording mutex behind the lock assertions: held by the
 * locker only, not by another thread while the locker holds it, and not
 * after unlock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>

#include "base/mutex.h"

static st__mutex m;

static void *held_elsewhere(void *p) {
  (void)p;
  return st__mutex_held(&m) ? "held" : NULL;
}

static void st__mutex_held__owner_only(void **state) {
  pthread_t th;
  void *seen = "not joined";
  (void)state;
#ifdef NDEBUG
  skip(); /* st__mutex_held exists only where assertions do */
#else
  st__mutex_init(&m);
  assert_false(st__mutex_held(&m));
  st__mutex_lock(&m);
  assert_true(st__mutex_held(&m));
  assert_int_equal(pthread_create(&th, NULL, held_elsewhere, NULL), 0);
  pthread_join(th, &seen);
  assert_null(seen);
  st__mutex_unlock(&m);
  assert_false(st__mutex_held(&m));
  st__mutex_destroy(&m);
#endif
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__mutex_held__owner_only),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
