/* SPDX-License-Identifier: MIT */
/* The ceilings of the platform that runs the kernels (docs/bench.md#ceilings):
 * memory bandwidth and the FMA rate per dtype class, measured once per
 * process before the first benched case. */
#ifndef SCENETEST_HARNESS_OPS_CEILING_H
#define SCENETEST_HARNESS_OPS_CEILING_H

#include <scenetest/registry.h>
#include <scenetest/tensor.h>

/* The dtype classes, the keys of `flops_per_s`. */
typedef enum st__dclass {
  ST__DCLASS_FLOAT64,
  ST__DCLASS_FLOAT32,
  ST__DCLASS_HALF,
  ST__DCLASS_FLOAT8,
  ST__DCLASS_INT,
  ST__DCLASS_COUNT
} st__dclass;

typedef struct st__ceilings {
  double bytes_per_s;                   /* 0: none */
  double flops_per_s[ST__DCLASS_COUNT]; /* 0: none */
} st__ceilings;

/* The class of a dtype (bool counts as int). */
st__dclass st__dclass_of(st_dtype d);
/* Its name: "float64", "float32", "half", "float8", "int". */
const char *st__dclass_name(st__dclass c);

/* Measures the ceilings of platform: `cpu` one core, `threads` every
 * core, another through its hooks' `ceilings` when it has one (else all
 * 0). The buffers are 4x the last-level cache, at most 1 GiB; the
 * test-only variable SCENETEST_BENCH_CEILING_BYTES sets their size. */
void st__ceilings_measure(st_registry *reg /* IN */,
                          const char *platform /* IN */,
                          st__ceilings *out /* OUT */);

#endif
