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

static void on_segv(int sig, siginfo_t *si, void *ctx) {
  st__tbuf_hit hit;
  (void)sig;
  (void)ctx;
  if (!st__tbuf_guard_hit(si->si_addr, &hit))
    _exit(1);
  if (hit.nbytes != 100 || strcmp(hit.name, "y") != 0)
    _exit(2);
  _exit(hit.offset < 100 ? 40 + (int)hit.offset : 3);
}

/* With guard pages the data ends exactly at the PROT_NONE page: the first
 * byte past the end faults, and the handler recognises the address as the
 * guard page of tensor 'y', 0 bytes from its end. The start is aligned as
 * far as the size allows (100 = 4 * 25: to 4), and the front guard zone
 * still catches a write before it. Forked, so the fault ends only the
 * child. */
static void tbuf_guard_pages__end_at_the_page_fault_named(void **state) {
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
    volatile unsigned char *p = st__tbuf_alloc(100);
    if (p == NULL)
      _exit(10);
    st__tbuf_set_name((void *)p, "y");
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (((uintptr_t)p + 100) % pg != 0 || (uintptr_t)p % 4 != 0)
      _exit(11);
    st__tbuf_damage d;
    p[0] = 1;
    p[99] = 1;
    if (st__tbuf_check((const void *)p, &d))
      _exit(12);
    p[-1] = 1; /* the front zone: no fault, the check sees it */
    if (!st__tbuf_check((const void *)p, &d) || d.before != 1 || d.after != 0)
      _exit(13);
    p[100] = 1;
    _exit(14);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 40);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tbuf_alloc__aligned_and_sized),
      cmocka_unit_test(tbuf_check__reports_side_and_distance),
      cmocka_unit_test(tbuf_check__any_byte_value_past_the_end),
      cmocka_unit_test(tbuf_run_scope__reuses_only_inside),
      cmocka_unit_test(tbuf_guard_pages__end_at_the_page_fault_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
