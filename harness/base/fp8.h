/* SPDX-License-Identifier: MIT */
/* The FP8 conversions of base/fp8.c: the public ones are in
 * scenetest/tensor.h; this header adds the saturating form the random
 * inits use (docs/random.md). */
#ifndef SCENETEST_HARNESS_FP8_H
#define SCENETEST_HARNESS_FP8_H

#include <scenetest/tensor.h>

/* The largest finite values: 448 (e4m3fn), 57344 (e5m2). */
#define ST__E4M3FN_MAX 448.0
#define ST__E5M2_MAX 57344.0

/* As st_f64_to_e4m3fn, but a finite value or infinity beyond the range
 * gives the largest finite value of its sign (0x7e / 0xfe) instead of NaN.
 * Thread-safety: any thread. */
uint8_t st__f64_to_e4m3fn_sat(double d);

#endif
