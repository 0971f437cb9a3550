/* SPDX-License-Identifier: MIT */
/* `scenetest bench` (docs/bench.md): the bench executor, which runs a
 * level-2 case's checked round, its warm-up and its timed rounds in the
 * process that runs the case (a supervised or an isolated child, or this
 * one under --no-supervise) and leaves what it measured on the case's
 * result (st__case_result_bench), which carries it to the parent. Set up
 * by the CLI before st_run (st__bench_begin); forked children inherit the
 * setting. One bench at a time in a process; its cases run on one thread. */
#ifndef SCENETEST_HARNESS_CASE_BENCH_H
#define SCENETEST_HARNESS_CASE_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/run.h>

#include "case/bench_measured.h"

typedef struct st__bench_config {
  uint64_t warmup_ns;   /* --warmup-ms */
  uint64_t min_time_ns; /* --min-time-ms */
  uint64_t max_time_ns; /* --max-time-ms, >= 1 ms */
  uint64_t min_rounds;  /* --min-rounds */
  uint64_t max_rounds;  /* --max-rounds, >= 1 */
  int cold_cache;       /* --cold-cache: the host's cache flushed */
} st__bench_config;

/* One row of the bench's table: a case's result and, when it was
 * benched (its process did not die first), what was measured. */
typedef struct st__bench_case {
  const char *scene, *kase, *platform; /* borrowed from the result */
  st_case_status status;
  const char *message;  /* the result's (why it failed), or NULL */
  st__bench_measured m; /* all zero (rounds 0) when nothing was measured */
} st__bench_case;

/* Whether the timed loop runs another round after `rounds` rounds took
 * elapsed_ns of wall time: until both minimums are reached, never past
 * either maximum. */
int st__bench_more(const st__bench_config *cfg /* IN */, uint64_t rounds,
                   uint64_t elapsed_ns);

/* The statistics of samples[0..n) (sorted in place). */
void st__bench_stats_of(double *samples /* IN/OUT */, size_t n,
                        st__bench_stats *out /* OUT */);

/* Bench mode on for this process, with cfg (copied); level-2 cases then
 * run on the bench executor. Returns ST_ENOMEM if the flush buffer cannot
 * be made. */
st_status st__bench_begin(const st__bench_config *cfg /* IN */);
/* The table's rows of a run's results (the bench's st_run), in their
 * order: each result that was benched, or that did not pass nor skip (a
 * case whose process died, or a level-3 case that failed, has a row with
 * nothing measured). A new array the caller frees, borrowing from res;
 * NULL with *n 0 when there is none or out of memory (*oom set). */
st__bench_case *st__bench_rows(const st_run_result *res /* IN */,
                               size_t *n /* OUT */, int *oom /* OUT */);
/* Bench mode off; frees the flush buffer. */
void st__bench_end(void);
/* Bench mode is on. */
int st__bench_active(void);

#endif
