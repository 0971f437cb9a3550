/* SPDX-License-Identifier: MIT */
/* The logger: level names and numbers, filtering, line format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <scenetest/log.h>

static void st_log_level_parse__names_and_numbers(void **state) {
  static const struct {
    const char *text;
    int level;
  } ok[] = {{"debug", 10},   {"info", 20},  {"timing", 25}, {"TIMING", 25},
            {"warning", 30}, {"error", 40}, {"null", 60},   {"27", 27},
            {"0", 0}};
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
  st_log(ST_LOG_TIMING, "phase x=%d", 1);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_log_level_parse__names_and_numbers),
      cmocka_unit_test(st_log__filters_and_formats),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
