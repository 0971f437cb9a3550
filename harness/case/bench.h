/* SPDX-License-Identifier: MIT */
/* `scenetest bench` (docs/bench.md): the bench executor, which runs a
 * level-2 case's checked round, its warm-up and its timed rounds in this
 * process, and the figures it keeps for each case it ran. Set up by the
 * CLI before st_run (st__bench_begin), read after it (st__bench_figures).
 * One bench at a time in a process; its cases run on one thread. */
#ifndef SCENETEST_HARNESS_CASE_BENCH_H
#define SCENETEST_HARNESS_CASE_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/run.h>

typedef struct st__bench_config {
  uint64_t warmup_ns;   /* --warmup-ms */
  uint64_t min_time_ns; /* --min-time-ms */
  uint64_t max_time_ns; /* --max-time-ms, >= 1 ms */
  uint64_t min_rounds;  /* --min-rounds */
  uint64_t max_rounds;  /* --max-rounds, >= 1 */
  int cold_cache;       /* --cold-cache: the host's cache flushed */
} st__bench_config;

/* Order statistics of the timed rounds, in nanoseconds (percentiles by
 * linear interpolation between the closest ranks, as numpy's default). */
typedef struct st__bench_stats {
  uint64_t rounds;
  double median, min, p10, p90;
} st__bench_stats;

/* One benched case. */
typedef struct st__bench_case {
  char *scene, *kase; /* owned */
  const char *platform;
  st_case_status status;
  st__bench_stats stats; /* rounds 0: not timed */
  int device_time;       /* the platform's device_ns were used */
  int dclass;            /* st__dclass of its first tensor (ops/ceiling.h) */
  int has_flops, has_bytes;
  double flops, bytes; /* per run */
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
/* The cases benched so far, in the order they ran (borrowed until
 * st__bench_end). */
const st__bench_case *st__bench_cases(size_t *n /* OUT */);
/* Bench mode off; frees the figures. */
void st__bench_end(void);
/* Bench mode is on. */
int st__bench_active(void);

#endif
