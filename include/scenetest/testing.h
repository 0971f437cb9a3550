/* SPDX-License-Identifier: MIT */
/* cmocka assertions on a case's event sequence. Include <cmocka.h> (with
 * its prerequisites <setjmp.h>, <stdarg.h>, <stddef.h>, <stdint.h>) first.
 *
 *   st_assert_phases(result, "args", "golden", "record", "run", "compare");
 *   st_assert_phase_before(result, "record", "run");
 *   st_assert_record_after_last_load(result);
 *
 * The helpers ignore `load` events, except st_assert_record_after_last_load
 * which is about them. A failure prints the expected and the actual
 * sequence and fails the test at the caller's line. Thread-safety: they
 * read a finished result, which no longer changes: any thread (cmocka's
 * own failure reporting wants the test's thread). */
#ifndef SCENETEST_TESTING_H
#define SCENETEST_TESTING_H

#include <stdio.h>
#include <string.h>

#include <scenetest/run.h>
#include <scenetest/testing_hooks.h>

#ifndef cmocka_unit_test
#error "include <cmocka.h> before <scenetest/testing.h>"
#endif

/* Writes the phase names of r (load events skipped) into buf as
 * "args, golden, ...". */
static inline void st__testing_actual(const st_case_result *r /* IN */,
                                      char *buf /* OUT */, size_t size) {
  size_t i, used = 0, n = st_case_result_event_count(r);
  buf[0] = '\0';
  for (i = 0; i < n && used + 1 < size; i++) {
    const st_event *ev = st_case_result_event(r, i);
    int w;
    if (strcmp(ev->name, "load") == 0)
      continue;
    w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", ev->name);
    if (w < 0)
      break;
    used += (size_t)w;
  }
}

static inline void st__assert_phases(const st_case_result *r /* IN */,
                                     const char *const *expected /* IN */,
                                     const char *file /* IN */, int line) {
  size_t i, k = 0, n = st_case_result_event_count(r);
  int ok = 1;
  char want[2048], got[2048];
  size_t used = 0;
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (strcmp(ev->name, "load") == 0)
      continue;
    if (expected[k] == NULL || strcmp(expected[k], ev->name) != 0) {
      ok = 0;
      break;
    }
    k++;
  }
  if (ok && expected[k] != NULL)
    ok = 0;
  if (ok)
    return;
  want[0] = '\0';
  for (i = 0; expected[i] != NULL && used + 1 < sizeof want; i++) {
    int w = snprintf(want + used, sizeof want - used, "%s%s", i ? ", " : "",
                     expected[i]);
    if (w < 0)
      break;
    used += (size_t)w;
  }
  st__testing_actual(r, got, sizeof got);
  print_error("phase sequence of %s::%s differs\n  expected: %s\n  actual:   "
              "%s\n",
              st_case_result_scene(r), st_case_result_case(r), want, got);
  _fail(file, line);
}

/* The exact phase sequence (load events ignored). */
#define st_assert_phases(result, ...)                                          \
  st__assert_phases((result), (const char *const[]){__VA_ARGS__, NULL},        \
                    __FILE__, __LINE__)

static inline void st__assert_phase_before(const st_case_result *r /* IN */,
                                           const char *a /* IN */,
                                           const char *b /* IN */,
                                           const char *file /* IN */,
                                           int line) {
  size_t i, n = st_case_result_event_count(r);
  long ia = -1, ib = -1;
  char got[2048];
  for (i = 0; i < n; i++) {
    const char *name = st_case_result_event(r, i)->name;
    if (ia < 0 && strcmp(name, a) == 0)
      ia = (long)i;
    if (ib < 0 && strcmp(name, b) == 0)
      ib = (long)i;
  }
  if (ia >= 0 && ib >= 0 && ia < ib)
    return;
  st__testing_actual(r, got, sizeof got);
  print_error("expected the first '%s' before the first '%s' in %s::%s\n"
              "  actual: %s\n",
              a, b, st_case_result_scene(r), st_case_result_case(r), got);
  _fail(file, line);
}

/* The first phase named a comes before the first phase named b (both must
 * be present). */
#define st_assert_phase_before(result, a, b)                                   \
  st__assert_phase_before((result), (a), (b), __FILE__, __LINE__)

static inline void
st__assert_record_after_last_load(const st_case_result *r /* IN */,
                                  const char *file /* IN */, int line) {
  size_t i, n = st_case_result_event_count(r);
  long rec = -1, last_load = -1;
  const char *object = NULL, *phase = NULL;
  char got[2048];
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    if (rec < 0 && strcmp(ev->name, "record") == 0)
      rec = (long)i;
    if (strcmp(ev->name, "load") == 0) {
      last_load = (long)i;
      object = ev->object;
      phase = ev->phase;
    }
  }
  if (rec >= 0 && last_load < rec)
    return;
  st__testing_actual(r, got, sizeof got);
  if (rec < 0)
    print_error("%s::%s has no record phase\n  actual: %s\n",
                st_case_result_scene(r), st_case_result_case(r), got);
  else
    print_error("%s::%s: '%s' was loaded during phase '%s', after the "
                "record\n  actual: %s\n",
                st_case_result_scene(r), st_case_result_case(r), object, phase,
                got);
  _fail(file, line);
}

/* The record phase exists and no shared object became loaded after it. */
#define st_assert_record_after_last_load(result)                               \
  st__assert_record_after_last_load((result), __FILE__, __LINE__)

#endif
