/* SPDX-License-Identifier: MIT */
/* The after-case audit's descriptors and threads (run/audit.h; built
 * under ThreadSanitizer too): a kept descriptor closed, or another file
 * put at its number, is named; a thread started after the kernel's first
 * call and still running is counted, the harness's own pool is not. The
 * processes are tests/run/test_audit_processes.c's (they fork). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "base/pool.h"
#include "run/audit.h"

static void st__audit_fds__closed_and_replaced_named(void **state) {
  st__audit a;
  int p[2], q[2];
  char why[256];
  (void)state;
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  assert_int_equal(pipe2(q, O_CLOEXEC), 0);
  memset(&a, 0, sizeof a);
  st__audit_keep(&a, p[0], "the socket");
  st__audit_keep(&a, p[1], "the journal");
  st__audit_init(&a, 0);
  assert_int_equal(st__audit_fds(&a, why, sizeof why), 0);
  /* Another file at the journal's number. */
  assert_int_equal(dup2(q[0], p[1]), p[1]);
  assert_int_equal(st__audit_fds(&a, why, sizeof why), 1);
  assert_non_null(strstr(why, "the journal, replaced"));
  assert_null(strstr(why, "the socket"));
  /* And the socket closed: both named, in order. */
  close(p[0]);
  assert_int_equal(st__audit_fds(&a, why, sizeof why), 1);
  assert_non_null(strstr(why, "(the socket), "));
  assert_non_null(strstr(why, "the journal, replaced"));
  close(p[1]);
  close(q[0]);
  close(q[1]);
  close(a.task_fd);
  close(a.lastpid_fd);
}

static int gate[2];

static void *parked(void *arg) {
  char b;
  (void)arg;
  if (read(gate[0], &b, 1) < 0) {
  }
  return NULL;
}

static void body(void *ctx, size_t b, size_t e) {
  (void)ctx;
  (void)b;
  (void)e;
}

static void st__audit_threads__left_thread_counted_pool_not(void **state) {
  st__audit a;
  pthread_t t;
  char why[256];
  (void)state;
  /* A thread started and joined first: ThreadSanitizer's runtime starts
   * a helper thread of its own at the program's first pthread_create. */
  assert_int_equal(pipe2(gate, O_CLOEXEC), 0);
  assert_int_equal(write(gate[1], "x", 1), 1);
  assert_int_equal(pthread_create(&t, NULL, parked, NULL), 0);
  assert_int_equal(pthread_join(t, NULL), 0);
  memset(&a, 0, sizeof a);
  st__audit_init(&a, 0);
  assert_true(st__audit_thread_count(&a) >= 1);
  st__audit_kernel_begin(&a);
  /* The harness's pool grows meanwhile: not the kernel's. */
  st__parallel_for(1 << 16, 1, 4, body, NULL);
  assert_int_equal(st__audit_threads(&a, why, sizeof why), 0);
  /* A thread that stays. */
  assert_int_equal(pthread_create(&t, NULL, parked, NULL), 0);
  assert_int_equal(st__audit_threads(&a, why, sizeof why), 1);
  assert_string_equal(why, "left 1 thread running after its kernel returned "
                           "(a kernel's threads must end before it returns)");
  /* Ended before the look: nothing left. */
  assert_int_equal(write(gate[1], "x", 1), 1);
  assert_int_equal(pthread_join(t, NULL), 0);
  assert_int_equal(st__audit_threads(&a, why, sizeof why), 0);
  close(gate[0]);
  close(gate[1]);
  close(a.task_fd);
  close(a.lastpid_fd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__audit_fds__closed_and_replaced_named),
      cmocka_unit_test(st__audit_threads__left_thread_counted_pool_not),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
