/* SPDX-License-Identifier: MIT */
/* The autoload record: torch's reading of the variable (the whole table),
 * the raw field's escaping and truncation, watched modules read from the
 * loader, and the once-per-process emission. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing_hooks.h>

static void st_autoload_classify__table(void **state) {
  /* value, setting, effective (torch: os.getenv(name, "1") == "1"). */
  static const struct {
    const char *value;
    const char *setting;
    int effective;
  } table[] = {
      {NULL, "unset", 1},     {"1", "1", 1},         {"0", "0", 0},
      {"true", "invalid", 0}, {"yes", "invalid", 0}, {"", "invalid", 0},
      {" 1", "invalid", 0},   {"01", "invalid", 0},  {"1\n", "invalid", 0},
      {"a\"b", "invalid", 0}, {"1 ", "invalid", 0},  {"TRUE", "invalid", 0},
  };
  size_t i;
  (void)state;
  for (i = 0; i < sizeof table / sizeof table[0]; i++) {
    assert_string_equal(
        st_autoload_setting_name(st_autoload_classify(table[i].value)),
        table[i].setting);
    assert_int_equal(st_autoload_effective(table[i].value), table[i].effective);
  }
}

static void st_autoload_classify__long_value(void **state) {
  char v[201];
  (void)state;
  memset(v, '1', 200);
  v[200] = '\0';
  assert_string_equal(st_autoload_setting_name(st_autoload_classify(v)),
                      "invalid");
  assert_int_equal(st_autoload_effective(v), 0);
}

static void st_autoload_format_raw__escapes(void **state) {
  char buf[512];
  (void)state;
  st_autoload_format_raw(NULL, buf, sizeof buf);
  assert_string_equal(buf, "-");
  st_autoload_format_raw("", buf, sizeof buf);
  assert_string_equal(buf, "\"\"");
  st_autoload_format_raw("0", buf, sizeof buf);
  assert_string_equal(buf, "\"0\"");
  st_autoload_format_raw("1\n", buf, sizeof buf);
  assert_string_equal(buf, "\"1\\n\"");
  st_autoload_format_raw("a\"b\\c\td\re", buf, sizeof buf);
  assert_string_equal(buf, "\"a\\\"b\\\\c\\td\\re\"");
  st_autoload_format_raw("\x01\x1f\x7f\xc3\xa9", buf, sizeof buf);
  assert_string_equal(buf, "\"\\001\\037\\177\\303\\251\"");
}

static void st_autoload_format_raw__truncates_before_escaping(void **state) {
  char v[201], want[256], buf[1024];
  (void)state;
  memset(v, 'x', 200);
  v[200] = '\0';
  snprintf(want, sizeof want, "\"%.64s...\"", v);
  st_autoload_format_raw(v, buf, sizeof buf);
  assert_string_equal(buf, want);
  /* Exactly 64 bytes: no ellipsis. */
  v[64] = '\0';
  snprintf(want, sizeof want, "\"%s\"", v);
  st_autoload_format_raw(v, buf, sizeof buf);
  assert_string_equal(buf, want);
  /* 64 newlines escape to 128 characters after truncation at 64 bytes. */
  memset(v, '\n', 70);
  v[70] = '\0';
  st_autoload_format_raw(v, buf, sizeof buf);
  assert_int_equal(strlen(buf), 2 + 128 + 3);
  assert_string_equal(buf + 1 + 128, "...\"");
}

static void st_record_format__fields_in_order(void **state) {
  char buf[1024], want[1024];
  st_watch *w = NULL;
  size_t n = 0;
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_watch_parse("libc=libc.so*", &w, &n, &err), ST_OK);
  assert_int_equal(
      st_watch_parse("nothere=libnothere.so*,libzz*.so", &w, &n, &err), ST_OK);
  setenv(ST_AUTOLOAD_ENV, "0", 1);
  st_record_format(w, n, buf, sizeof buf);
  snprintf(want, sizeof want,
           "torch_backend_autoload setting=0 raw=\"0\" effective=disabled "
           "torch_imported=false torch_npu_loaded=false libc_loaded=true "
           "nothere_loaded=false pid=%ld",
           (long)getpid());
  assert_string_equal(buf, want);
  unsetenv(ST_AUTOLOAD_ENV);
  st_record_format(NULL, 0, buf, sizeof buf);
  snprintf(want, sizeof want,
           "torch_backend_autoload setting=unset raw=- effective=enabled "
           "torch_imported=false torch_npu_loaded=false pid=%ld",
           (long)getpid());
  assert_string_equal(buf, want);
  setenv(ST_AUTOLOAD_ENV, "true", 1);
  st_record_format(NULL, 0, buf, sizeof buf);
  assert_non_null(strstr(buf, "setting=invalid raw=\"true\" "
                              "effective=disabled "));
  unsetenv(ST_AUTOLOAD_ENV);
  st_watch_list_free(w, n);
}

static void st_record_format__reads_the_loader_now(void **state) {
  char buf[1024];
  st_watch *w = NULL;
  size_t n = 0;
  st_error err;
  void *h;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(
      st_watch_parse("fixture=libst_fixture_golden.so*", &w, &n, &err), ST_OK);
  st_record_format(w, n, buf, sizeof buf);
  assert_non_null(strstr(buf, " fixture_loaded=false "));
  h = dlopen(ST_FIXTURE_GOLDEN, RTLD_NOW);
  assert_non_null(h);
  st_record_format(w, n, buf, sizeof buf);
  assert_non_null(strstr(buf, " fixture_loaded=true "));
  st_watch_list_free(w, n);
}

static void st_watch_parse__errors(void **state) {
  st_watch *w = NULL;
  size_t n = 0;
  st_error err;
  (void)state;
  st_error_clear(&err);
  assert_int_equal(st_watch_parse("noglob", &w, &n, &err), ST_EUSAGE);
  assert_string_equal(err.message, "--watch 'noglob': expected "
                                   "NAME=GLOB[,GLOB...] with NAME an "
                                   "identifier");
  st_error_clear(&err);
  assert_int_equal(st_watch_parse("1x=a*", &w, &n, &err), ST_EUSAGE);
  st_error_clear(&err);
  assert_int_equal(st_watch_parse("x=a*,", &w, &n, &err), ST_EUSAGE);
  assert_string_equal(err.message,
                      "--watch 'x=a*,': expected a non-empty glob");
  st_error_clear(&err);
  assert_int_equal(st_watch_parse("torch=a*", &w, &n, &err), ST_EUSAGE);
  assert_string_equal(err.message,
                      "--watch 'torch=a*': 'torch' is watched already "
                      "(built in)");
  assert_int_equal(n, 0);
  st_watch_list_free(w, n);
}

static void st_watch_match__builtin_globs(void **state) {
  const char *name = NULL;
  (void)state;
  assert_int_equal(st_watch_match(NULL, 0, "/usr/lib/libtorch.so.1.13", &name),
                   1);
  assert_string_equal(name, "torch");
  assert_int_equal(st_watch_match(NULL, 0, "/x/libtorch_cpu.so.1.13", &name),
                   1);
  assert_string_equal(name, "torch");
  assert_int_equal(st_watch_match(NULL, 0, "/x/libtorch_npu.so", &name), 1);
  assert_string_equal(name, "torch_npu");
  assert_int_equal(st_watch_match(NULL, 0, "/x/libtorch_cuda.so", &name), 0);
  assert_int_equal(st_watch_match(NULL, 0, "/libtorch.so/libc.so.6", &name), 0);
}

static int capture(void) {
  int fds[2];
  if (pipe(fds) != 0)
    fail_msg("pipe");
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  st_log_set_fd(fds[1]);
  return fds[0];
}

static size_t drain(int fd, char *buf, size_t size) {
  size_t used = 0;
  ssize_t n;
  while (used + 1 < size && (n = read(fd, buf + used, size - 1 - used)) > 0)
    used += (size_t)n;
  buf[used] = '\0';
  return used;
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (; (hay = strstr(hay, needle)) != NULL; hay++)
    n++;
  return n;
}

static void st_record_emit__once_per_process(void **state) {
  char buf[8192];
  int fd;
  (void)state;
  st_record_reset();
  st_log_set_level(ST_LOG_TIMING);
  fd = capture();
  assert_int_equal(st_record_emit(NULL, 0), 1);
  assert_int_equal(st_record_emit(NULL, 0), 0);
  assert_int_equal(st_record_emit(NULL, 0), 0);
  drain(fd, buf, sizeof buf);
  assert_int_equal(count(buf, "[TIMING] torch_backend_autoload "), 1);
  st_record_reset();
  /* emitted counts even when the level filters the line out. */
  st_log_set_level(ST_LOG_WARNING);
  assert_int_equal(st_record_emit(NULL, 0), 1);
  drain(fd, buf, sizeof buf);
  assert_string_equal(buf, "");
  st_log_set_fd(2);
  close(fd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_autoload_classify__table),
      cmocka_unit_test(st_autoload_classify__long_value),
      cmocka_unit_test(st_autoload_format_raw__escapes),
      cmocka_unit_test(st_autoload_format_raw__truncates_before_escaping),
      cmocka_unit_test(st_record_format__fields_in_order),
      cmocka_unit_test(st_record_format__reads_the_loader_now),
      cmocka_unit_test(st_watch_parse__errors),
      cmocka_unit_test(st_watch_match__builtin_globs),
      cmocka_unit_test(st_record_emit__once_per_process),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
