/* SPDX-License-Identifier: MIT */
/* The process helpers: signal names, wait statuses of real children
 * (exited, killed), write-all through a pipe smaller than the data and to
 * a pipe nobody reads, and pidfds (close-on-exec, readable once the child
 * has exited). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/proc.h"

static void st__proc_signal_name__named_and_unnamed(void **state) {
  char buf[32];
  (void)state;
  assert_string_equal(st__proc_signal_name(SIGSEGV, buf, sizeof buf),
                      "SIGSEGV");
  assert_string_equal(st__proc_signal_name(SIGKILL, buf, sizeof buf),
                      "SIGKILL");
  /* Real-time signals have no abbreviation. */
  char want[32];
  snprintf(want, sizeof want, "signal %d", SIGRTMIN + 3);
  assert_ptr_equal(st__proc_signal_name(SIGRTMIN + 3, buf, sizeof buf), buf);
  assert_string_equal(buf, want);
  assert_string_equal(st__proc_signal_name(1000, buf, sizeof buf),
                      "signal 1000");
}

/* Waits for a child that runs what(). */
static int child_status(void (*what)(void)) {
  int status = 0;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    what();
    _exit(99);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return status;
}

static void exit_3(void) { _exit(3); }
static void killed(void) { raise(SIGKILL); }

static void st__proc_describe_wait__exit_and_signal(void **state) {
  char buf[128];
  (void)state;
  st__proc_describe_wait(child_status(exit_3), buf, sizeof buf);
  assert_string_equal(buf, "exited with status 3");
  st__proc_describe_wait(child_status(killed), buf, sizeof buf);
  assert_string_equal(buf, "killed by signal SIGKILL (Killed)");
  st__proc_describe_wait(0x137f, buf, sizeof buf); /* WIFSTOPPED, SIGSTOP */
  assert_string_equal(buf, "stopped (wait status 0x137f)");
}

static void exit_122(void) { _exit(ST__EXIT_NOMEM); }

/* Every code of st__exit has its own words, and a death with one of them
 * is told in them after the number; any other status stays a number. */
static void st__proc_describe_wait__harness_codes_in_words(void **state) {
  static const int codes[] = {
      ST__EXIT_PROBE_NOMEM,     ST__EXIT_WORKER_REPLY, ST__EXIT_WORKER_NOMEM,
      ST__EXIT_WORKER_PROTOCOL, ST__EXIT_WORKER_SETUP, ST__EXIT_CAPTURE,
      ST__EXIT_NO_RESULT,       ST__EXIT_NOMEM,        ST__EXIT_ORPHANED,
      ST__EXIT_BAD_INDEX,       ST__EXIT_CHARGED};
  size_t i, j, n = sizeof codes / sizeof codes[0];
  char buf[160];
  (void)state;
  for (i = 0; i < n; i++) {
    const char *w = st__proc_exit_words(codes[i]);
    assert_non_null(w);
    assert_true(codes[i] >= 113 && codes[i] <= 125);
    for (j = 0; j < i; j++) {
      assert_int_not_equal(codes[i], codes[j]);
      assert_string_not_equal(w, st__proc_exit_words(codes[j]));
    }
  }
  assert_null(st__proc_exit_words(0));
  assert_null(st__proc_exit_words(3));
  assert_null(st__proc_exit_words(126));
  st__proc_describe_wait(child_status(exit_122), buf, sizeof buf);
  assert_string_equal(buf, "exited with status 122 (the harness's code for: "
                           "out of memory encoding what it sends)");
  /* A buffer too small for the words is cut, never overrun. */
  memset(buf, 'x', sizeof buf);
  st__proc_describe_wait(child_status(exit_122), buf, 20);
  assert_string_equal(buf, "exited with status ");
  assert_int_equal(buf[21], 'x');
}

typedef struct reader {
  int fd;
  char *got;
  size_t len;
} reader;

static void *read_all(void *p) {
  reader *r = p;
  ssize_t n;
  while ((n = read(r->fd, r->got + r->len, 65536)) > 0)
    r->len += (size_t)n;
  return NULL;
}

/* 1 MiB through a pipe (64 KiB on Linux): write returns short, or blocks
 * and continues; every byte arrives, in order. */
static void st__proc_write_all__larger_than_pipe(void **state) {
  const size_t n = (size_t)1 << 20;
  char *data = malloc(n);
  int fds[2];
  pthread_t th;
  reader r;
  (void)state;
  assert_non_null(data);
  for (size_t i = 0; i < n; i++)
    data[i] = (char)(i * 13 % 253);
  assert_int_equal(pipe(fds), 0);
  r.fd = fds[0];
  r.got = malloc(n + 65536);
  r.len = 0;
  assert_non_null(r.got);
  assert_int_equal(pthread_create(&th, NULL, read_all, &r), 0);
  assert_int_equal(st__proc_write_all(fds[1], data, n), ST_OK);
  close(fds[1]);
  pthread_join(th, NULL);
  close(fds[0]);
  assert_int_equal(r.len, n);
  assert_memory_equal(r.got, data, n);
  free(r.got);
  free(data);
}

static void st__proc_write_all__reader_gone_is_eio(void **state) {
  int fds[2];
  void (*old)(int) = signal(SIGPIPE, SIG_IGN);
  (void)state;
  assert_int_equal(pipe(fds), 0);
  close(fds[0]);
  assert_int_equal(st__proc_write_all(fds[1], "x", 1), ST_EIO);
  close(fds[1]);
  signal(SIGPIPE, old);
  assert_int_equal(st__proc_write_all(-1, "x", 1), ST_EIO);
  assert_int_equal(st__proc_write_all(-1, "", 0), ST_OK); /* nothing to do */
}

static void st__proc_pidfd_open__readable_after_exit(void **state) {
  int pipefd[2], fd;
  char c;
  pid_t pid;
  (void)state;
  assert_int_equal(pipe(pipefd), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    /* Exits once the parent has its pidfd. */
    close(pipefd[1]);
    (void)!read(pipefd[0], &c, 1);
    _exit(0);
  }
  close(pipefd[0]);
  fd = st__proc_pidfd_open(pid);
  if (fd < 0) {
    /* Kernels before 5.3 have none; the callers then poll the pipe. */
    assert_true(errno == ENOSYS || errno == EPERM);
  } else {
    struct pollfd pf = {fd, POLLIN, 0};
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    assert_int_equal(poll(&pf, 1, 0), 0); /* still running */
    close(pipefd[1]);
    assert_int_equal(poll(&pf, 1, -1), 1);
    assert_true(pf.revents & POLLIN);
    close(fd);
  }
  if (fd < 0)
    close(pipefd[1]);
  assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* Cached, yet right in a fork()ed child (the atfork handler re-reads it)
 * and in a grandchild. */
static void st__proc_pid__cached_and_refreshed_after_fork(void **state) {
  int status;
  (void)state;
  assert_int_equal(st__proc_pid(), getpid());
  assert_int_equal(st__proc_pid(), getpid());
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (st__proc_pid() != getpid())
      _exit(1);
    pid_t g = fork();
    if (g < 0)
      _exit(2);
    if (g == 0)
      _exit(st__proc_pid() == getpid() ? 0 : 3);
    int gs;
    if (waitpid(g, &gs, 0) != g || !WIFEXITED(gs))
      _exit(4);
    _exit(WEXITSTATUS(gs));
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  assert_int_equal(st__proc_pid(), getpid());
}

/* A descriptor travels with the bytes; more than the kernel carries is
 * EINVAL before anything is sent; a peer gone is -1, no SIGPIPE. */
static void st__proc_send_fds__carries_descriptors(void **state) {
  int sv[2], pp[2], fds[ST__PROC_MAX_FDS + 1];
  char buf[8], cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {buf, sizeof buf};
  struct msghdr m;
  struct cmsghdr *c;
  int got;
  size_t i;
  (void)state;
  assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  assert_int_equal(pipe(pp), 0);
  assert_int_equal(st__proc_send_fds(sv[0], "go", 2, &pp[1], 1), 0);
  memset(&m, 0, sizeof m);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = cbuf;
  m.msg_controllen = sizeof cbuf;
  assert_int_equal(recvmsg(sv[1], &m, 0), 2);
  assert_memory_equal(buf, "go", 2);
  c = CMSG_FIRSTHDR(&m);
  assert_non_null(c);
  assert_int_equal(c->cmsg_type, SCM_RIGHTS);
  memcpy(&got, CMSG_DATA(c), sizeof got);
  /* The received descriptor is the pipe's write end. */
  assert_int_equal(write(got, "x", 1), 1);
  assert_int_equal(read(pp[0], buf, 1), 1);
  close(got);
  for (i = 0; i < sizeof fds / sizeof fds[0]; i++)
    fds[i] = pp[1];
  errno = 0;
  assert_int_equal(st__proc_send_fds(sv[0], "x", 1, fds, ST__PROC_MAX_FDS + 1),
                   -1);
  assert_int_equal(errno, EINVAL);
  close(sv[1]);
  assert_int_equal(st__proc_send_fds(sv[0], "x", 1, NULL, 0), -1);
  assert_int_equal(errno, EPIPE);
  close(sv[0]);
  close(pp[0]);
  close(pp[1]);
}

/* What fork copies page tables for: 16 MiB written show (at least 12 of
 * them: nothing else here is freed meanwhile). */
static void st__proc_private_bytes__grows_with_written_memory(void **state) {
  const size_t n = (size_t)16 << 20;
  size_t before = st__proc_private_bytes(), after;
  char *p = malloc(n);
  (void)state;
  assert_non_null(p);
  assert_true(before > 0);
  memset(p, 1, n);
  after = st__proc_private_bytes();
  assert_true(after >= before + ((size_t)12 << 20));
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st__proc_signal_name__named_and_unnamed),
      cmocka_unit_test(st__proc_send_fds__carries_descriptors),
      cmocka_unit_test(st__proc_private_bytes__grows_with_written_memory),
      cmocka_unit_test(st__proc_describe_wait__exit_and_signal),
      cmocka_unit_test(st__proc_describe_wait__harness_codes_in_words),
      cmocka_unit_test(st__proc_write_all__larger_than_pipe),
      cmocka_unit_test(st__proc_write_all__reader_gone_is_eio),
      cmocka_unit_test(st__proc_pidfd_open__readable_after_exit),
      cmocka_unit_test(st__proc_pid__cached_and_refreshed_after_fork),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
