/* SPDX-License-Identifier: MIT */
/* The observer fan-out: every callback of a run's observers is made here,
 * to each observer in the order the caller gave them, from the scheduling
 * thread. The schedulers say when (run/sched.h); this file says to whom. */
#ifndef SCENETEST_HARNESS_FANOUT_H
#define SCENETEST_HARNESS_FANOUT_H

#include <scenetest/run.h>

typedef struct st__fanout {
  const st_observer *obs; /* borrowed from st_run's caller */
  size_t n;
  /* One observer that passes case_begin, phase_begin and phase_end on to
   * all: what a case run live (st__case_run) is told through. */
  st_observer live;
  /* ends[j]: case_end calls observer j received (the run's final check
   * compares each with the selection); NULL out of memory. Owned. */
  size_t *ends;
  /* SCENETEST_TEST_DROP_CASE (test-only): the case index whose case_end
   * the first observer with one is not told, so that the final check is
   * seen to fail; SIZE_MAX: none. */
  size_t drop;
} st__fanout;

/* obs may be NULL when n is 0. st__fanout_free frees what it made. */
void st__fanout_init(st__fanout *fo /* OUT */,
                     const st_observer *obs /* IN: borrowed */, size_t n);
void st__fanout_free(st__fanout *fo /* IN/OUT */);
/* 0 when every observer with a case_end was told of n cases; else 1 with
 * the first that was not (its position, and how many) in *which, *got. */
int st__fanout_short(const st__fanout *fo /* IN */, size_t n,
                     size_t *which /* OUT */, size_t *got /* OUT */);
void st__fanout_run_begin(const st__fanout *fo /* IN */,
                          const st_run_info *info /* IN */);
void st__fanout_case_begin(const st__fanout *fo /* IN */,
                           const st_case_info *info /* IN */);
/* A recorded case's events, as they would have come live: phase_begin
 * (not for `load` events) and phase_end, observer by observer. */
void st__fanout_replay(const st__fanout *fo /* IN */,
                       const st_case_info *info /* IN */,
                       const st_case_result *r /* IN */);
void st__fanout_case_finish(const st__fanout *fo /* IN */,
                            const st_case_info *info /* IN */,
                            const st_case_result *r /* IN */);
void st__fanout_case_end(const st__fanout *fo /* IN */,
                         const st_case_info *info /* IN */,
                         const st_case_result *r /* IN */);
void st__fanout_run_end(const st__fanout *fo /* IN */,
                        const st_run_result *run /* IN */);

#endif
