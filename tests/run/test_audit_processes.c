/* SPDX-License-Identifier: MIT */
/* The after-case audit's processes (run/audit.h), in a child of the test
 * that is its own process group, as a supervised child is: a process left
 * running as our child, and an orphan left after the kernel cleared
 * PR_SET_CHILD_SUBREAPER (reparented away from us, still in our group),
 * are both found, and the subreaper is set again; nothing left, nothing
 * found. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/audit.h"

/* In a child of the test: its own group, a subreaper; fn's verdict is
 * its exit status. */
static int in_own_group(int (*fn)(void)) {
  int status = 0;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    _exit(fn());
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* A `sleep` that blocks on a pipe's read end instead: it ends when we
 * do (its pid written to fd). */
static pid_t sleeper(int hold) {
  pid_t s = fork();
  if (s == 0) {
    char b;
    if (read(hold, &b, 1) < 0) {
    }
    _exit(0);
  }
  return s;
}

static int nothing_left(void) {
  st__audit a;
  memset(&a, 0, sizeof a);
  st__audit_init(&a, 1);
  st__audit_case_begin(&a);
  return st__audit_processes(&a) == 0 ? 0 : 1;
}

static int child_left(void) {
  st__audit a;
  int p[2], found;
  pid_t s;
  memset(&a, 0, sizeof a);
  st__audit_init(&a, 1);
  if (pipe2(p, O_CLOEXEC) != 0)
    return 9;
  st__audit_case_begin(&a);
  s = sleeper(p[0]);
  found = st__audit_processes(&a);
  kill(s, SIGKILL);
  return found == 1 ? 0 : 1;
}

static int orphan_without_subreaper(void) {
  st__audit a;
  int p[2], q[2], found, reaper = 0;
  pid_t mid, orphan = 0;
  memset(&a, 0, sizeof a);
  st__audit_init(&a, 1);
  if (pipe2(p, O_CLOEXEC) != 0 || pipe2(q, O_CLOEXEC) != 0)
    return 9;
  st__audit_case_begin(&a);
  /* The kernel: no subreaper, a middle process that exits, its child
   * orphaned (to init: not ours, not our child; still in our group). */
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  mid = fork();
  if (mid == 0) {
    pid_t s = sleeper(p[0]);
    if (write(q[1], &s, sizeof s) < 0) {
    }
    _exit(0);
  }
  if (read(q[0], &orphan, sizeof orphan) != (ssize_t)sizeof orphan)
    return 8;
  waitpid(mid, NULL, 0);
  found = st__audit_processes(&a);
  prctl(PR_GET_CHILD_SUBREAPER, &reaper);
  kill(orphan, SIGKILL);
  if (found != 1)
    return 1;
  return reaper == 1 ? 0 : 2;
}

static void st__audit_processes__nothing_left_nothing_found(void **state) {
  (void)state;
  assert_int_equal(in_own_group(nothing_left), 0);
}

static void st__audit_processes__child_left_found(void **state) {
  (void)state;
  assert_int_equal(in_own_group(child_left), 0);
}

static void st__audit_processes__orphan_without_subreaper_found(void **state) {
  (void)state;
  assert_int_equal(in_own_group(orphan_without_subreaper), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__audit_processes__nothing_left_nothing_found),
      cmocka_unit_test(st__audit_processes__child_left_found),
      cmocka_unit_test(st__audit_processes__orphan_without_subreaper_found),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
