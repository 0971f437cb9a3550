/* SPDX-License-Identifier: MIT */
/* What the benchmarks share: the clocks (wall, and CPU of this process
 * and of its waited-for children), keeping the best of alternated runs,
 * and the 64x64 float32 `add` suite most of them run, loaded or exit 3. */
#ifndef SCENETEST_BENCH_UTIL_H
#define SCENETEST_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <scenetest/scenetest.h>

static inline double bench_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double bench_rusage_s(int who) {
  struct rusage r;
  getrusage(who, &r);
  return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
         (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e-6;
}

/* CPU seconds so far: this process; its waited-for children; both. */
static inline double bench_self_s(void) { return bench_rusage_s(RUSAGE_SELF); }
static inline double bench_children_s(void) {
  return bench_rusage_s(RUSAGE_CHILDREN);
}
static inline double bench_cpu_s(void) {
  return bench_self_s() + bench_children_s();
}

/* *best = min(*best, v): the best of alternated repetitions. */
static inline void bench_keep_min(double *best /* IN/OUT */, double v) {
  if (v < *best)
    *best = v;
}

/* qsort's order of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0, n), n > 0 (v is sorted in place). */
static inline double bench_median(double *v /* IN/OUT */, size_t n) {
  qsort(v, n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* text[0, len) loaded as file (its name in messages), or exit 3 naming
 * the benchmark. */
static inline st_scene_set *bench_load(const char *bench /* IN */,
                                       const char *file /* IN */,
                                       const char *text /* IN */, size_t len) {
  st_scene_set *set = NULL;
  st_error_list errs;
  st_error_list_init(&errs);
  if (st_scene_set_new(&set) != ST_OK ||
      st_scene_set_load_string(set, file, text, len, NULL, &errs) != ST_OK) {
    fprintf(stderr, "%s: scene did not load\n", bench);
    exit(3);
  }
  st_error_list_free(&errs);
  return set;
}

/* The text of n cases (c0, c1, ...) of scene: c = a + b, 64x64 float32,
 * a and b from init (a YAML init value: "{uniform: [-1, 1]}", "ones");
 * its length in *len. Malloc'd; exit 3 when out of memory. */
static inline char *bench_add_text(const char *scene /* IN */,
                                   const char *init /* IN */, size_t n,
                                   size_t *len /* OUT */) {
  size_t cap = 512 + n * 24, used = 0;
  char *text = malloc(cap);
  if (text == NULL)
    exit(3);
  used += (size_t)snprintf(
      text + used, cap - used,
      "scene: %s\nkernel: add\nargs:\n"
      "  - {tensor: a, dtype: float32, shape: [64, 64], init: %s}\n"
      "  - {tensor: b, dtype: float32, shape: [64, 64], init: %s}\n"
      "  - {tensor: c, dtype: float32, shape: [64, 64], role: output}\n"
      "cases:\n",
      scene, init, init);
  for (size_t i = 0; i < n; i++)
    used += (size_t)snprintf(text + used, cap - used, "  - {name: c%zu}\n", i);
  *len = used;
  return text;
}

/* The suite of bench_add_text, loaded. */
static inline st_scene_set *bench_add_suite(const char *bench /* IN */,
                                            const char *scene /* IN */,
                                            const char *init /* IN */,
                                            size_t n) {
  size_t used;
  char *text = bench_add_text(scene, init, n, &used);
  st_scene_set *set = bench_load(bench, "suite.yaml", text, used);
  free(text);
  return set;
}

#endif
