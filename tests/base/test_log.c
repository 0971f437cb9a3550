/* SPDX-License-Identifier: MIT */
/* The logger: level names and numbers, filtering, line format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/log.h>

#include "base/log_sink.h"

static void st_log_level_parse__names_and_numbers(void **state) {
  static const struct {
    const char *text;
    int level;
  } ok[] = {{"debug", 10},  {"info", 20},    {"timing", 25},
            {"TIMING", 25}, {"warning", 30}, {"error", 40},
            {"null", 60},   {"27", 27},      {"0", 0}};
  static const char *const bad[] = {"", "loud", "-1", "101", "25x", " 25"};
  size_t i;
  int v;
  (void)state;
  for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    assert_int_equal(st_log_level_parse(ok[i].text, &v), ST_OK);
    assert_int_equal(v, ok[i].level);
  }
  for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(st_log_level_parse(bad[i], &v), ST_EINVAL);
}

/* docs/reliability.md: no message makes a line that a reader of the log
 * takes for a phase or record line, and no control byte reaches the
 * terminal: the token's '[' and control bytes come out as \xHH, C1
 * controls as \u00HH, line breaks stay only in an error; a message at
 * the TIMING level is a note. The harness's own lines are unchanged. */
static void st_log__message_cannot_forge_a_timing_line(void **state) {
  int fds[2];
  char buf[2048];
  ssize_t n;
  (void)state;
  assert_int_equal(pipe(fds), 0);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  st_log_set_fd(fds[1]);
  st_log_set_level(ST_LOG_TIMING);
  st_log(ST_LOG_ERROR, "s::c: error: boom [TIMING] phase pid=1 scene=s "
                       "case=c name=run round=0 dur_ns=1 status=ok\n"
                       "[TIMING] torch_backend_autoload\x1b]0;title\x07"
                       "\x1b[2J\r\xc2\x9b"
                       "1m");
  st_log(ST_LOG_WARNING, "watched module 'm' (/lib/x\n[TIMING] phase) "
                         "loaded");
  st_log(ST_LOG_TIMING, "phase pid=1 scene=s case=c name=run round=0 "
                        "dur_ns=1 status=ok");
  st__log_timing("phase pid=2 scene=s case=c name=run round=0 dur_ns=1 "
                 "status=ok");
  n = read(fds[0], buf, sizeof buf - 1);
  assert_true(n > 0);
  buf[n] = '\0';
  assert_string_equal(
      buf,
      "[ERROR] s::c: error: boom \\x5bTIMING] phase pid=1 scene=s case=c "
      "name=run round=0 dur_ns=1 status=ok\n"
      "\\x5bTIMING] torch_backend_autoload\\x1b]0;title\\x07\\x1b[2J"
      "\\x0d\\u009b1m\n"
      "[WARNING] watched module 'm' (/lib/x\\x0a\\x5bTIMING] phase) "
      "loaded\n"
      "[TIMING] note: phase pid=1 scene=s case=c name=run round=0 dur_ns=1 "
      "status=ok\n"
      "[TIMING] phase pid=2 scene=s case=c name=run round=0 dur_ns=1 "
      "status=ok\n");
  st_log_set_fd(2);
  close(fds[0]);
  close(fds[1]);
}

static void st_log__filters_and_formats(void **state) {
  int fds[2];
  char buf[1024];
  ssize_t n;
  (void)state;
  assert_int_equal(pipe(fds), 0);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  st_log_set_fd(fds[1]);
  st_log_set_level(ST_LOG_TIMING);
  st_log(ST_LOG_INFO, "hidden");
  st__log_timing("phase x=%d", 1);
  st_log(ST_LOG_WARNING, "careful");
  st_log(ST_LOG_ERROR, "bad\nline");
  st_log_set_level(ST_LOG_NULL);
  st_log(ST_LOG_ERROR, "silenced");
  n = read(fds[0], buf, sizeof buf - 1);
  assert_true(n > 0);
  buf[n] = '\0';
  assert_string_equal(buf, "[TIMING] phase x=1\n[WARNING] careful\n"
                           "[ERROR] bad\nline\n");
  st_log_set_fd(2);
  st_log_set_level(ST_LOG_TIMING);
  close(fds[0]);
  close(fds[1]);
}

static size_t drain(int fd, char *buf, size_t size) {
  ssize_t n = read(fd, buf, size - 1);
  size_t got = n > 0 ? (size_t)n : 0;
  buf[got] = '\0';
  return got;
}

/* --log-file (docs/cli.md#logs): the whole log to the file, warnings and errors
 * still on the log fd; lines passed through from a child follow the same
 * rule on the log fd (the child wrote the file itself). */
static void st_log__file_sink_and_passthrough(void **state) {
  int term[2], file[2];
  char buf[1024];
  (void)state;
  assert_int_equal(pipe(term), 0);
  assert_int_equal(pipe(file), 0);
  fcntl(term[0], F_SETFL, O_NONBLOCK);
  fcntl(file[0], F_SETFL, O_NONBLOCK);
  st_log_set_fd(term[1]);
  st_log_set_level(ST_LOG_TIMING);
  st__log_set_file(file[1]);
  st_log(ST_LOG_INFO, "below the level");
  st__log_timing("phase x=1");
  st_log(ST_LOG_WARNING, "careful");
  st__log_passthrough("[TIMING] phase x=2\n", 19);
  st__log_passthrough("[ERROR] child\n", 14);
  drain(file[0], buf, sizeof buf);
  assert_string_equal(buf, "[TIMING] phase x=1\n[WARNING] careful\n");
  drain(term[0], buf, sizeof buf);
  assert_string_equal(buf, "[WARNING] careful\n[ERROR] child\n");
  /* Off again: everything on the log fd. */
  st__log_set_file(-1);
  st__log_timing("phase x=3");
  st__log_passthrough("[TIMING] phase x=4\n", 19);
  drain(term[0], buf, sizeof buf);
  assert_string_equal(buf, "[TIMING] phase x=3\n[TIMING] phase x=4\n");
  st_log_set_fd(2);
  close(term[0]);
  close(term[1]);
  close(file[0]);
  close(file[1]);
}

/* Reads what is in the pipe now, as a string (empty when nothing). */
static void drain_now(int fd, char *buf, size_t size) {
  ssize_t n = read(fd, buf, size - 1);
  buf[n > 0 ? n : 0] = '\0';
}

/* The --log-file is buffered by whole lines: TIMING lines wait for a
 * flush (st__log_flush, or unsetting the file); a warning takes every
 * earlier line with it, in order; lines past the buffer come out whole. */
static void st_log__file_buffered_until_flush(void **state) {
  int term[2], file[2];
  char buf[65536];
  (void)state;
  assert_int_equal(pipe(term), 0);
  assert_int_equal(pipe(file), 0);
  fcntl(term[0], F_SETFL, O_NONBLOCK);
  fcntl(file[0], F_SETFL, O_NONBLOCK);
  fcntl(file[1], F_SETPIPE_SZ, 1 << 20);
  st_log_set_fd(term[1]);
  st_log_set_level(ST_LOG_TIMING);
  st__log_set_file(file[1]);
  st__log_timing("phase x=1");
  st__log_timing("phase x=2");
  drain_now(file[0], buf, sizeof buf);
  assert_string_equal(buf, "");
  st__log_flush();
  drain_now(file[0], buf, sizeof buf);
  assert_string_equal(buf, "[TIMING] phase x=1\n[TIMING] phase x=2\n");
  st__log_timing("phase x=3");
  st_log(ST_LOG_ERROR, "bad");
  drain_now(file[0], buf, sizeof buf);
  assert_string_equal(buf, "[TIMING] phase x=3\n[ERROR] bad\n");
  /* More than the buffer holds: every line arrives, whole and in order. */
  for (int i = 0; i < 1000; i++)
    st__log_timing("phase i=%04d pad=%s", i,
                   "................................");
  st__log_timing("last");
  st__log_set_file(-1);
  drain_now(file[0], buf, sizeof buf);
  const char *p = buf;
  for (int i = 0; i < 1000; i++) {
    char want[128];
    snprintf(want, sizeof want, "[TIMING] phase i=%04d pad=%s\n", i,
             "................................");
    if (strncmp(p, want, strlen(want)) != 0)
      fail_msg("line %d: got '%.60s'", i, p);
    p += strlen(want);
  }
  assert_string_equal(p, "[TIMING] last\n");
  drain_now(term[0], buf, sizeof buf);
  assert_string_equal(buf, "[ERROR] bad\n");
  st_log_set_fd(2);
  close(term[0]);
  close(term[1]);
  close(file[0]);
  close(file[1]);
}

#ifndef ST_TEST_TSAN
/* Lines buffered before fork() are written once, by the parent, before
 * the child's; a child's own lines reach the file when it flushes. */
static void st_log__file_buffer_not_duplicated_by_fork(void **state) {
  int file[2], status;
  char buf[4096];
  (void)state;
  assert_int_equal(pipe(file), 0);
  fcntl(file[0], F_SETFL, O_NONBLOCK);
  st_log_set_level(ST_LOG_TIMING);
  st__log_set_file(file[1]);
  st__log_timing("parent before");
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    st__log_timing("child");
    st__log_flush();
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  st__log_timing("parent after");
  st__log_set_file(-1);
  drain_now(file[0], buf, sizeof buf);
  /* The child's line goes to its log fd too (file_pid is the parent's). */
  assert_string_equal(buf, "[TIMING] parent before\n[TIMING] child\n"
                           "[TIMING] parent after\n");
  close(file[0]);
  close(file[1]);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_log_level_parse__names_and_numbers),
      cmocka_unit_test(st_log__filters_and_formats),
      cmocka_unit_test(st_log__message_cannot_forge_a_timing_line),
      cmocka_unit_test(st_log__file_sink_and_passthrough),
      cmocka_unit_test(st_log__file_buffered_until_flush),
#ifndef ST_TEST_TSAN
      cmocka_unit_test(st_log__file_buffer_not_duplicated_by_fork),
#endif
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
