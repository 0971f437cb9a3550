/* SPDX-License-Identifier: MIT */
/* Calling foreign code (case/call.h): the callee's tensors are copies of
 * the argset's, inline or allocated, and what it writes there stays
 * there; its message is read within its field; a process that returns
 * from a call it did not make ends with ST__CALL_STRAY_EXIT and one line
 * on fd 2, and the caller itself goes on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"
#include "case/call.h"

/* An argset of n tensors named t0, t1, ... (no data: only descriptors). */
static st__argset argset_of(st_tensor *t, size_t n) {
  static const char *const names[] = {"t0", "t1", "t2", "t3", "t4",  "t5",
                                      "t6", "t7", "t8", "t9", "t10", "t11"};
  st__argset set;
  size_t i;
  memset(&set, 0, sizeof set);
  memset(t, 0, n * sizeof *t);
  for (i = 0; i < n; i++) {
    t[i].name = names[i];
    t[i].dtype = ST_DTYPE_FLOAT32;
    t[i].role = i + 1 == n ? ST_ROLE_OUTPUT : ST_ROLE_INPUT;
    t[i].ndim = 1;
    t[i].shape[0] = (int64_t)(i + 1);
    t[i].numel = i + 1;
    t[i].nbytes = 4 * (i + 1);
    t[i].data = &t[i]; /* any address of ours */
  }
  set.tensors = t;
  set.n_tensors = n;
  return set;
}

/* The callee's array is not the argset's, holds the same descriptors,
 * and what is written into it leaves the argset as it was: with the
 * inline copies (3 tensors) and allocated ones (12). */
static void st__call_init__callee_gets_copies_of_the_descriptors(void **state) {
  static const size_t counts[] = {3, ST__CALL_INLINE, 12};
  (void)state;
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    st_tensor t[12], before[12];
    size_t n = counts[k];
    st__argset set = argset_of(t, n);
    st__call c;
    memcpy(before, t, sizeof t);
    assert_int_equal(st__call_init(&c, "copy", "cpu", &set, 2), ST_OK);
    assert_ptr_not_equal(c.op.tensors, set.tensors);
    assert_int_equal(c.op.n_tensors, n);
    assert_int_equal(c.op.shard_count, 1);
    assert_int_equal(c.op.max_threads, 2);
    assert_memory_equal(c.op.tensors, t, n * sizeof *t);
    /* The callee scribbles on every descriptor. */
    for (size_t i = 0; i < n; i++) {
      c.op.tensors[i].data = NULL;
      c.op.tensors[i].numel = 0;
      c.op.tensors[i].dtype = ST_DTYPE_INT8;
      c.op.tensors[i].shape[0] = 99;
    }
    assert_memory_equal(t, before, sizeof t);
    st__call_free(&c);
  }
}

static void
st__call_message_copy__full_field_without_nul_is_bounded(void **state) {
  char out[ST_OP_MESSAGE_MAX + 1];
  struct {
    st_op_call call;
    char after[16]; /* what a read past the field would take */
  } s;
  (void)state;
  st_op_call_init(&s.call);
  assert_null(st__call_message_copy(&s.call, out));
  assert_string_equal(out, "");
  memset(s.call.message, 'M', sizeof s.call.message);
  memset(s.after, 'X', sizeof s.after);
  assert_ptr_equal(st__call_message_copy(&s.call, out), out);
  assert_int_equal(strlen(out), ST_OP_MESSAGE_MAX);
  assert_null(strchr(out, 'X'));
  memcpy(s.call.message, "short\0MMM", 9);
  assert_string_equal(st__call_message_copy(&s.call, out), "short");
}

/* A fork that returns from the call ends with ST__CALL_STRAY_EXIT and
 * says so on fd 2; the caller goes on. */
static void st__call_stray_check__only_the_caller_goes_on(void **state) {
  st_tensor t[2];
  st__argset set = argset_of(t, 2);
  st__call c;
  int status = 0, err[2];
  char line[512];
  ssize_t n;
  pid_t pid;
  (void)state;
  assert_int_equal(st__call_init(&c, "copy", "cpu", &set, 1), ST_OK);
  assert_int_equal(pipe(err), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* As the callee's fork: back from the call in another process. */
    dup2(err[1], 2);
    (void)st__call_returned(&c, "kernel");
    _exit(0);
  }
  close(err[1]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), ST__CALL_STRAY_EXIT);
  n = read(err[0], line, sizeof line - 1);
  close(err[0]);
  assert_true(n > 0);
  line[n] = '\0';
  {
    char want[256];
    snprintf(want, sizeof want,
             "scenetest: error: process %ld, forked in a call of the kernel, "
             "returned into the harness; it ends here (only process %ld "
             "reports the run)\n",
             (long)pid, (long)getpid());
    assert_string_equal(line, want);
  }
  /* The caller itself returns, with the message. */
  st_op_call_fail(&c.op, ST_EKERNEL, "bad %d", 7);
  assert_string_equal(st__call_returned(&c, "kernel"), "bad 7");
  st__call_free(&c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__call_init__callee_gets_copies_of_the_descriptors),
      cmocka_unit_test(
          st__call_message_copy__full_field_without_nul_is_bounded),
      cmocka_unit_test(st__call_stray_check__only_the_caller_goes_on),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
