/* SPDX-License-Identifier: MIT */
/* Tests of the tensor buffer allocator (harness/case/tbuf.c): alignment,
 * guard zones and what their check reports, reuse inside a run scope only,
 * and guard pages that fault at the first byte past the canaries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "case/tbuf.h"

static void tbuf_alloc__aligned_and_sized(void **state) {
  (void)state;
  static const size_t sizes[] = {0, 1, 3, 63, 64, 65, 4096, 100003};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = st__tbuf_alloc(sizes[i]);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % 64, 0);
    assert_int_equal(st__tbuf_size(p), sizes[i]);
    memset(p, 0x5a, sizes[i]);
    st__tbuf_damage d;
    assert_int_equal(st__tbuf_check(p, &d), 0);
    assert_int_equal(d.before, 0);
    assert_int_equal(d.after, 0);
    st__tbuf_free(p);
  }
  st__tbuf_free(NULL);
}

/* A kernel that writes three float32 elements past the end touched 12
 * bytes after it; one that writes the element before the start, 4 bytes
 * before. Both sides at once are both reported. */
static void tbuf_check__reports_side_and_distance(void **state) {
  (void)state;
  float *p = st__tbuf_alloc(10 * sizeof(float));
  st__tbuf_damage d;
  assert_non_null(p);
  for (int i = 0; i < 13; i++)
    p[i] = 1.0f;
  assert_int_equal(st__tbuf_check(p, &d), 1);
  assert_int_equal(d.before, 0);
  assert_int_equal(d.after, 12);
  st__tbuf_rearm(p);
  assert_int_equal(st__tbuf_check(p, &d), 0);
  p[-1] = 0.0f;
  ((unsigned char *)p)[40 + ST__TBUF_GUARD - 1] = 0;
  assert_int_equal(st__tbuf_check(p, &d), 1);
  assert_int_equal(d.before, 4);
  assert_int_equal(d.after, ST__TBUF_GUARD);
  st__tbuf_free(p);
}

/* Every value a canary byte could be overwritten with is caught: the
 * check compares bytes, so no float or integer value slips through
 * unless it repeats the pattern exactly. */
static void tbuf_check__any_byte_value_past_the_end(void **state) {
  (void)state;
  unsigned char *p = st__tbuf_alloc(5);
  st__tbuf_damage d;
  assert_non_null(p);
  int caught = 0;
  for (int v = 0; v < 256; v++) {
    st__tbuf_rearm(p);
    const unsigned char before = p[5];
    p[5] = (unsigned char)v;
    if (st__tbuf_check(p, &d))
      caught++;
    else
      assert_int_equal(v, before);
  }
  assert_int_equal(caught, 255);
  st__tbuf_free(p);
}

static void tbuf_run_scope__reuses_only_inside(void **state) {
  (void)state;
  st__tbuf_run_begin();
  void *a = st__tbuf_alloc(4096);
  assert_non_null(a);
  st__tbuf_free(a);
  void *b = st__tbuf_alloc(4000); /* fits the cached block */
  assert_ptr_equal(a, b);
  assert_int_equal(st__tbuf_size(b), 4000);
  st__tbuf_damage d;
  ((unsigned char *)b)[3999] = 1;
  assert_int_equal(st__tbuf_check(b, &d), 0);
  ((unsigned char *)b)[4000] = 1; /* the rear zone moved with the size */
  assert_int_equal(st__tbuf_check(b, &d), 1);
  assert_int_equal(d.after, 1);
  st__tbuf_free(b);
  /* A block four times too large is not handed out for a small request. */
  void *c = st__tbuf_alloc(512);
  assert_ptr_not_equal(c, a);
  st__tbuf_free(c);
  st__tbuf_run_end();
  /* Outside a scope the cache is empty and frees go back to malloc: the
   * leak checkers (ASan, valgrind) see nothing held. */
  void *e = st__tbuf_alloc(4096);
  assert_non_null(e);
  st__tbuf_free(e);
}

static volatile sig_atomic_t hit_ok;
static volatile size_t hit_offset;

static void on_segv(int sig, siginfo_t *si, void *ctx) {
  size_t off = 0;
  (void)sig;
  (void)ctx;
  if (st__tbuf_guard_hit(si->si_addr, &off)) {
    hit_ok = 1;
    hit_offset = off;
  }
  _exit(hit_ok && hit_offset < 200 ? 40 + (int)hit_offset : 1);
}

/* With guard pages the first access past the canary slack faults; the
 * handler recognises the address as a guard page and says how far past
 * the end it is. Forked, so the fault ends only the child. */
static void tbuf_guard_pages__fault_past_end_named(void **state) {
  (void)state;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    st__tbuf_set_guard_pages(1);
    /* 100 bytes: the data ends 28 bytes before the page (64-byte
     * alignment), so byte 100 + 28 is the first in the guard page. */
    volatile unsigned char *p = st__tbuf_alloc(100);
    if (p == NULL)
      _exit(2);
    st__tbuf_damage d;
    p[99] = 1;
    p[100] = 1; /* in the canary slack: no fault, the check sees it */
    if (!st__tbuf_check((const void *)p, &d) || d.after != 1)
      _exit(3);
    for (size_t i = 101; i < 100 + 4096; i++)
      p[i] = 1;
    _exit(4);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 40 + 28);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tbuf_alloc__aligned_and_sized),
      cmocka_unit_test(tbuf_check__reports_side_and_distance),
      cmocka_unit_test(tbuf_check__any_byte_value_past_the_end),
      cmocka_unit_test(tbuf_run_scope__reuses_only_inside),
      cmocka_unit_test(tbuf_guard_pages__fault_past_end_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
