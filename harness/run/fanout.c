/* SPDX-License-Identifier: MIT */
/* The observer fan-out (fanout.h): the one place that loops over a run's
 * observers. Thread-safety: the scheduling thread (observers are called
 * one at a time, docs/api.md#observers). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/fanout.h"

/* Calls the callback `cb` of every observer that has one. */
#define FAN(fo, cb, ...)                                                       \
  do {                                                                         \
    size_t fan_i_;                                                             \
    for (fan_i_ = 0; fan_i_ < (fo)->n; fan_i_++)                               \
      if ((fo)->obs[fan_i_].cb != NULL)                                        \
        (fo)->obs[fan_i_].cb((fo)->obs[fan_i_].data, __VA_ARGS__);             \
  } while (0)

static void live_case_begin(void *data, const st_case_info *info) {
  st__fanout_case_begin(data, info);
}

static void live_phase_begin(void *data, const st_case_info *info,
                             const char *phase, int round) {
  const st__fanout *fo = data;
  FAN(fo, phase_begin, info, phase, round);
}

static void live_phase_end(void *data, const st_case_info *info,
                           const st_event *ev) {
  const st__fanout *fo = data;
  FAN(fo, phase_end, info, ev);
}

void st__fanout_init(st__fanout *fo, const st_observer *obs, size_t n) {
  memset(fo, 0, sizeof *fo);
  fo->obs = obs;
  fo->n = n;
  fo->live.data = fo;
  fo->live.case_begin = live_case_begin;
  fo->live.phase_begin = live_phase_begin;
  fo->live.phase_end = live_phase_end;
  fo->ends = calloc(n + 1, sizeof *fo->ends);
  fo->drop = SIZE_MAX;
  {
    const char *v = getenv("SCENETEST_TEST_DROP_CASE");
    char *end;
    unsigned long long k;
    if (v != NULL && v[0] != '\0') {
      k = strtoull(v, &end, 10);
      if (*end == '\0')
        fo->drop = (size_t)k;
    }
  }
}

void st__fanout_free(st__fanout *fo) {
  free(fo->ends);
  fo->ends = NULL;
}

int st__fanout_short(const st__fanout *fo, size_t n, size_t *which,
                     size_t *got) {
  size_t j;
  if (fo->ends == NULL)
    return 0; /* not counted (out of memory): the result count stands */
  for (j = 0; j < fo->n; j++)
    if (fo->obs[j].case_end != NULL && fo->ends[j] != n) {
      *which = j;
      *got = fo->ends[j];
      return 1;
    }
  return 0;
}

void st__fanout_run_begin(const st__fanout *fo, const st_run_info *info) {
  FAN(fo, run_begin, info);
}

void st__fanout_case_begin(const st__fanout *fo, const st_case_info *info) {
  FAN(fo, case_begin, info);
}

void st__fanout_replay(const st__fanout *fo, const st_case_info *info,
                       const st_case_result *r) {
  size_t i, j, n = st_case_result_event_count(r);
  for (i = 0; i < n; i++) {
    const st_event *ev = st_case_result_event(r, i);
    /* Observer by observer, begin then end: each sees what it would have
     * seen live (a `load` event has no begin). */
    for (j = 0; j < fo->n; j++) {
      if (strcmp(ev->name, "load") != 0 && fo->obs[j].phase_begin)
        fo->obs[j].phase_begin(fo->obs[j].data, info, ev->name, ev->round);
      if (fo->obs[j].phase_end)
        fo->obs[j].phase_end(fo->obs[j].data, info, ev);
    }
  }
}

void st__fanout_case_finish(const st__fanout *fo, const st_case_info *info,
                            const st_case_result *r) {
  FAN(fo, case_finish, info, r);
}

void st__fanout_case_end(const st__fanout *fo, const st_case_info *info,
                         const st_case_result *r) {
  size_t j;
  int dropped = 0;
  for (j = 0; j < fo->n; j++) {
    if (fo->obs[j].case_end == NULL)
      continue;
    if (!dropped && info->index == fo->drop) {
      dropped = 1; /* the test hook: this observer misses the case */
      continue;
    }
    fo->obs[j].case_end(fo->obs[j].data, info, r);
    if (fo->ends != NULL)
      fo->ends[j]++;
  }
}

void st__fanout_run_end(const st__fanout *fo, const st_run_result *run) {
  FAN(fo, run_end, run);
}
