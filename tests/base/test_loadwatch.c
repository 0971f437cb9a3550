/* SPDX-License-Identifier: MIT */
/* Tests of the loader watch's cost (harness/base/loadwatch.c): with 300
 * extra objects loaded (libtorch brings ~287), a look that finds nothing
 * new reads no name and sorts nothing, and a look after one more dlopen
 * reads one name. Counted, not timed: the cost model is what is pinned
 * (bench/bench_loadwatch times it). */
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

#include "base/loadwatch.h"

#define N_DUMMIES 300

static char dir[64];

static void copy_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY | O_CLOEXEC);
  int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  char buf[65536];
  ssize_t k;
  assert_true(in >= 0 && out >= 0);
  while ((k = read(in, buf, sizeof buf)) > 0)
    assert_int_equal(write(out, buf, (size_t)k), k);
  close(in);
  close(out);
}

static void *load_copy(int i) {
  char path[128];
  snprintf(path, sizeof path, "%s/dummy%03d.so", dir, i);
  copy_file(ST_FIXTURE_GOLDEN, path);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  unlink(path);
  return h;
}

static void poll_expect(size_t want, const char *suffix) {
  char **list = NULL;
  size_t n = 0;
  assert_int_equal(st__loadwatch_poll(&list, &n), ST_OK);
  assert_int_equal(n, want);
  if (want > 0 && suffix != NULL) {
    size_t len = strlen(list[0]), sl = strlen(suffix);
    assert_true(len >= sl && strcmp(list[0] + len - sl, suffix) == 0);
  }
  st__loadwatch_free(list, n);
}

static void loadwatch_poll__cost_independent_of_loaded(void **state) {
  void *handles[N_DUMMIES + 1];
  st__loadwatch_stats a, b;
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/st_loadwatch.XXXXXX");
  assert_non_null(mkdtemp(dir));
  poll_expect(0, NULL); /* primes the watch */
  for (int i = 0; i < N_DUMMIES; i++)
    handles[i] = load_copy(i);
  poll_expect(N_DUMMIES, NULL);

  /* Nothing changed: no name read, no sort, whatever is loaded. */
  st__loadwatch_get_stats(&a);
  for (int i = 0; i < 5; i++)
    poll_expect(0, NULL);
  st__loadwatch_get_stats(&b);
  assert_int_equal(b.polls - a.polls, 5);
  assert_int_equal(b.names_examined - a.names_examined, 0);
  assert_int_equal(b.sorts - a.sorts, 0);

  /* One more object: its name alone is read, and it is reported once. */
  handles[N_DUMMIES] = load_copy(N_DUMMIES);
  st__loadwatch_get_stats(&a);
  poll_expect(1, "/dummy300.so");
  st__loadwatch_get_stats(&b);
  assert_int_equal(b.names_examined - a.names_examined, 1);
  assert_int_equal(b.sorts - a.sorts, 1);
  poll_expect(0, NULL);

  /* After an unload the next new object is still found (a full look). */
  dlclose(handles[N_DUMMIES]);
  poll_expect(0, NULL);
  handles[N_DUMMIES] = load_copy(N_DUMMIES + 1);
  poll_expect(1, "/dummy301.so");

  for (int i = 0; i <= N_DUMMIES; i++)
    dlclose(handles[i]);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(loadwatch_poll__cost_independent_of_loaded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
