/* SPDX-License-Identifier: MIT */
/* The guard-page fault handler (case/guard.c): a fault in a tensor's
 * guard page leaves one line in the note page naming the tensor, read or
 * written and how far, and the process still dies of SIGSEGV; a fault
 * anywhere else leaves no note and goes to the handler that was there
 * before (a sanitizer's, say), untouched; without a note page the line
 * goes to fd 2. Each case forks: the fault ends only the child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "case/guard.h"
#include "case/tbuf.h"

/* Read (x86-64's page-fault error code tells); elsewhere "accessed". */
#if defined(__x86_64__)
#define READ "read"
#define WROTE "wrote"
#else
#define READ "accessed"
#define WROTE "accessed"
#endif

static void default_segv(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(SIGSEGV, &sa, NULL);
}

/* Forks; the child sets up guard pages and the handler, allocates a
 * 12-byte buffer named "t" and touches byte `at` of it (write or read).
 * Returns the child's wait status. */
static int fault_in_child(char *note, long at, int write, int prev_exits) {
  pid_t pid;
  int status = 0;
  fflush(NULL);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    default_segv();
    if (prev_exits) {
      /* A handler that was there before ours (a sanitizer's). */
      struct sigaction sa;
      memset(&sa, 0, sizeof sa);
      sa.sa_handler = _exit;
      sigaction(SIGSEGV, &sa, NULL);
    }
    st__tbuf_set_guard_pages(1);
    st__guard_install();
    st__guard_note_to(note, note != NULL ? ST__GUARD_NOTE_MAX : 0);
    volatile unsigned char *p = st__tbuf_alloc(12);
    if (p == NULL)
      _exit(100);
    st__tbuf_set_name((void *)p, "t");
    if (at == -1000) {
      volatile uintptr_t wild = 8;
      *(volatile int *)wild = 1;
    } else if (write) {
      p[at] = 1;
    } else {
      volatile unsigned char v = p[at];
      (void)v;
    }
    _exit(101);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

static void guard_handler__read_past_end_noted_and_signal_kept(void **state) {
  (void)state;
  char *note = st__guard_note_new();
  assert_non_null(note);
  int status = fault_in_child(note, 12, 0, 0);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGSEGV);
  assert_string_equal(note, "kernel " READ " out of bounds of tensor 't': 1 "
                            "byte past its end (12 bytes long; guard page, "
                            "SIGSEGV)");
  st__guard_note_free(note);
}

static void guard_handler__write_far_past_end_counts_the_bytes(void **state) {
  (void)state;
  char *note = st__guard_note_new();
  assert_non_null(note);
  int status = fault_in_child(note, 12 + 99, 1, 0);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGSEGV);
  assert_string_equal(note, "kernel " WROTE " out of bounds of tensor 't': "
                            "100 bytes past its end (12 bytes long; guard "
                            "page, SIGSEGV)");
  st__guard_note_free(note);
}

static void guard_handler__fault_elsewhere_no_note_plain_signal(void **state) {
  (void)state;
  char *note = st__guard_note_new();
  assert_non_null(note);
  int status = fault_in_child(note, -1000, 1, 0);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGSEGV);
  assert_string_equal(note, "");
  st__guard_note_free(note);
}

static void guard_handler__previous_handler_still_called(void **state) {
  (void)state;
  /* sa_handler = _exit: the previous handler exits with the signal's
   * number, for a fault elsewhere and (after the note) in a guard page. */
  char *note = st__guard_note_new();
  assert_non_null(note);
  int status = fault_in_child(note, -1000, 1, 1);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), SIGSEGV);
  assert_string_equal(note, "");
  status = fault_in_child(note, 12, 1, 1);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), SIGSEGV);
  assert_non_null(strstr(note, "tensor 't': 1 byte past its end"));
  st__guard_note_free(note);
}

static void guard_handler__without_note_page_line_on_fd2(void **state) {
  (void)state;
  char path[] = "/tmp/st_guard_handler_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  int saved = dup(2);
  assert_true(saved >= 0);
  assert_int_equal(dup2(fd, 2), 2);
  int status = fault_in_child(NULL, 12, 0, 0);
  assert_int_equal(dup2(saved, 2), 2);
  close(saved);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGSEGV);
  char buf[512];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  assert_true(n > 0);
  buf[n] = '\0';
  close(fd);
  unlink(path);
  assert_string_equal(buf, "scenetest: error: kernel " READ " out of bounds "
                           "of tensor 't': 1 byte past its end (12 bytes "
                           "long; guard page, SIGSEGV)\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(guard_handler__read_past_end_noted_and_signal_kept),
      cmocka_unit_test(guard_handler__write_far_past_end_counts_the_bytes),
      cmocka_unit_test(guard_handler__fault_elsewhere_no_note_plain_signal),
      cmocka_unit_test(guard_handler__previous_handler_still_called),
      cmocka_unit_test(guard_handler__without_note_page_line_on_fd2),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
