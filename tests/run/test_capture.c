/* SPDX-License-Identifier: MIT */
/* A supervised child's bounded capture (run/capture.h), with its drain
 * thread running (built under ThreadSanitizer too): a writer far past the
 * bound is never blocked, the first bytes are kept and the rest counted;
 * each take starts again; one that never stops does not hold a take; a dead
 * child's capture is its shared memory and what its pipe still holds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/proc.h"
#include "run/capture.h"

#define MAX 4096

typedef struct fixture {
  st__capbuf *buf;
  st__capture cap;
  int p[2];
} fixture;

static void start(fixture *f) {
  f->buf = st__capture_map(MAX);
  assert_non_null(f->buf);
  assert_int_equal(pipe2(f->p, O_CLOEXEC), 0);
  assert_int_equal(fcntl(f->p[0], F_SETFL, O_NONBLOCK), 0);
  assert_int_equal(st__capture_start(&f->cap, f->buf, MAX, f->p[0]), 0);
}

/* The write end closed: the thread sees the end of the stream and ends. */
static void stop(fixture *f) {
  close(f->p[1]);
  assert_int_equal(pthread_join(f->cap.thread, NULL), 0);
  close(f->p[0]);
  st__capture_unmap(f->buf, MAX);
}

static void st__capture_take__bounded_rest_counted(void **state) {
  fixture f;
  size_t total = 256 * 1024, i, n;
  uint64_t dropped;
  char *chunk = malloc(total), *out;
  (void)state;
  assert_non_null(chunk);
  for (i = 0; i < total; i++)
    chunk[i] = (char)('a' + i % 26);
  start(&f);
  /* 64 times the bound, more than the pipe holds: the write returns only
   * because the thread drains it. */
  assert_int_equal(st__proc_write_all(f.p[1], chunk, total), ST_OK);
  out = st__capture_take(&f.cap, &n, &dropped);
  assert_non_null(out);
  assert_int_equal(n, MAX);
  assert_memory_equal(out, chunk, MAX);
  assert_int_equal(dropped, total - MAX);
  free(out);
  free(chunk);
  stop(&f);
}

static void st__capture_take__each_take_starts_again(void **state) {
  fixture f;
  size_t n;
  uint64_t dropped;
  char *out;
  (void)state;
  start(&f);
  out = st__capture_take(&f.cap, &n, &dropped);
  assert_null(out);
  assert_int_equal(n, 0);
  assert_int_equal(dropped, 0);
  assert_int_equal(st__proc_write_all(f.p[1], "first\n", 6), ST_OK);
  out = st__capture_take(&f.cap, &n, &dropped);
  assert_int_equal(n, 6);
  assert_memory_equal(out, "first\n", 6);
  free(out);
  assert_int_equal(st__proc_write_all(f.p[1], "second\n", 7), ST_OK);
  out = st__capture_take(&f.cap, &n, &dropped);
  assert_int_equal(n, 7);
  assert_memory_equal(out, "second\n", 7);
  assert_int_equal(dropped, 0);
  free(out);
  stop(&f);
}

static int stop_writing; /* atomic */

static void *endless(void *arg) {
  int fd = *(int *)arg;
  char line[4096];
  memset(line, 'e', sizeof line);
  while (!__atomic_load_n(&stop_writing, __ATOMIC_RELAXED))
    if (write(fd, line, sizeof line) < 0)
      break;
  return NULL;
}

static void st__capture_take__writer_that_never_stops(void **state) {
  fixture f;
  pthread_t w;
  size_t n;
  uint64_t dropped;
  char *out;
  int k;
  (void)state;
  start(&f);
  assert_int_equal(pthread_create(&w, NULL, endless, &f.p[1]), 0);
  /* Each take returns (what was written before it), bounded. */
  for (k = 0; k < 3; k++) {
    out = st__capture_take(&f.cap, &n, &dropped);
    assert_true(n <= MAX);
    free(out);
  }
  __atomic_store_n(&stop_writing, 1, __ATOMIC_RELAXED);
  assert_int_equal(pthread_join(w, NULL), 0);
  stop(&f);
}

static void st__capture_take_dead__memory_then_pipe(void **state) {
  st__capbuf *b = st__capture_map(MAX);
  int p[2];
  size_t n;
  uint64_t dropped;
  char *out, big[MAX];
  (void)state;
  assert_non_null(b);
  assert_int_equal(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
  /* What the dead child's thread had taken, and what it had not. */
  memcpy(b->data, "kept ", 5);
  b->len = 5;
  memset(big, 'z', sizeof big);
  assert_int_equal(st__proc_write_all(p[1], big, sizeof big), ST_OK);
  out = st__capture_take_dead(b, MAX, p[0], &n, &dropped);
  assert_int_equal(n, MAX);
  assert_memory_equal(out, "kept zzz", 8);
  assert_int_equal(dropped, 5);
  free(out);
  /* A length a child scribbled past the bound is cut to it. */
  b->len = 10 * MAX;
  out = st__capture_take_dead(b, MAX, -1, &n, &dropped);
  assert_int_equal(n, MAX);
  free(out);
  close(p[0]);
  close(p[1]);
  st__capture_unmap(b, MAX);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__capture_take__bounded_rest_counted),
      cmocka_unit_test(st__capture_take__each_take_starts_again),
      cmocka_unit_test(st__capture_take__writer_that_never_stops),
      cmocka_unit_test(st__capture_take_dead__memory_then_pipe),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
