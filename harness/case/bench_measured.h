/* SPDX-License-Identifier: MIT */
/* What the bench executor measured for one case (docs/bench.md#figures):
 * the order statistics of its timed rounds and its work model. It travels
 * with the case's result (case/result.h), so that a case benched in a
 * supervised or an isolated child reaches the parent that prints the
 * table (case/wire.h encodes it); the figures derived from it against the
 * ceilings (GFLOP/s, GB/s, fractions) are the CLI's (cli/bench.c). */
#ifndef SCENETEST_HARNESS_CASE_BENCH_MEASURED_H
#define SCENETEST_HARNESS_CASE_BENCH_MEASURED_H

#include <stdint.h>

/* Order statistics of the timed rounds, in nanoseconds (percentiles by
 * linear interpolation between the closest ranks, as numpy's default). */
typedef struct st__bench_stats {
  uint64_t rounds;
  double median, min, p10, p90;
} st__bench_stats;

typedef struct st__bench_measured {
  st__bench_stats stats; /* rounds 0: not timed */
  int device_time;       /* the platform's device_ns were used */
  int dclass; /* st__dclass of its first tensor (ops/ceiling.h), in range */
  int has_flops, has_bytes;
  double flops, bytes; /* per run */
} st__bench_measured;

#endif
