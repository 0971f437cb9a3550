/* SPDX-License-Identifier: MIT */
/* The record across fork: a process that forks after emitting; the child's
 * first dispatch emits its own line with its own pid, its second nothing.
 * Kept out of the ThreadSanitizer build (docs/reliability.md#the-process-model:
 * TSan and fork). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <scenetest/scenetest.h>
#include <scenetest/testing_hooks.h>

static const char scene_text[] =
    "scene: f\nkernel: add\nargs:\n"
    "  - {tensor: a, dtype: float32, shape: [8], init: ones}\n"
    "  - {tensor: b, dtype: float32, shape: [8], init: ones}\n"
    "  - {tensor: out, dtype: float32, shape: [8], role: output}\n"
    "cases:\n  - {name: c}\n";

static int emitted_of(const st_case_result *r) {
  size_t i;
  for (i = 0; i < st_case_result_event_count(r); i++)
    if (strcmp(st_case_result_event(r, i)->name, "record") == 0)
      return st_case_result_event(r, i)->emitted;
  return -1;
}

static int dispatch(const st_scene_set *set) {
  st_run_options opts;
  st_case_result *r = NULL;
  st_error err;
  int emitted;
  st_run_options_init(&opts);
  st_error_clear(&err);
  if (st_run_case(st_scene_set_get(set, 0), 0, &opts, &r, &err) != ST_OK)
    return -1;
  emitted = st_case_result_status(r) == ST_CASE_PASS ? emitted_of(r) : -1;
  st_case_result_free(r);
  return emitted;
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (; (hay = strstr(hay, needle)) != NULL; hay++)
    n++;
  return n;
}

static void st_record_emit__forked_child_emits_once_with_its_pid(void **state) {
  st_scene_set *set = NULL;
  st_error_list errs;
  int fds[2], status;
  pid_t child;
  char buf[16384], want[160];
  size_t used = 0;
  ssize_t n;
  (void)state;

  st_error_list_init(&errs);
  assert_int_equal(st_scene_set_new(&set), ST_OK);
  assert_int_equal(st_scene_set_load_string(set, "f.yaml", scene_text,
                                            strlen(scene_text), NULL, &errs),
                   ST_OK);
  st_error_list_free(&errs);
  st_log_set_level(ST_LOG_TIMING);
  assert_int_equal(pipe(fds), 0);
  st_log_set_fd(fds[1]);
  st_record_reset();
  /* The parent emits first. */
  assert_int_equal(dispatch(set), 1);
  assert_int_equal(dispatch(set), 0);

  child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    int first = dispatch(set);
    int second = dispatch(set);
    _exit(first == 1 && second == 0 ? 0 : 10 + first * 3 + second);
  }
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  /* The parent does not emit again after the fork either. */
  assert_int_equal(dispatch(set), 0);
  close(fds[1]);
  st_log_set_fd(2);
  while (used + 1 < sizeof buf &&
         (n = read(fds[0], buf + used, sizeof buf - 1 - used)) > 0)
    used += (size_t)n;
  buf[used] = '\0';
  close(fds[0]);
  /* Two lines: the parent's and the child's, each with its own pid. */
  assert_int_equal(count(buf, "[TIMING] torch_backend_autoload "), 2);
  snprintf(want, sizeof want, " pid=%ld\n", (long)getpid());
  assert_int_equal(count(buf, want), 1);
  snprintf(want, sizeof want, " pid=%ld\n", (long)child);
  assert_int_equal(count(buf, want), 1);
  /* Phase lines name the pid of the process that ran the phase. */
  snprintf(want, sizeof want,
           "[TIMING] phase pid=%ld scene=f case=c "
           "name=record round=- ",
           (long)child);
  assert_int_equal(count(buf, want), 2);
  st_scene_set_free(set);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(st_record_emit__forked_child_emits_once_with_its_pid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
