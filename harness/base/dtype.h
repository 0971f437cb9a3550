/* SPDX-License-Identifier: MIT */
/* Internal dtype classification beside the public dtype API of
 * scenetest/tensor.h (names, sizes, conversions, element access), all in
 * base/dtype.c. */
#ifndef SCENETEST_HARNESS_DTYPE_H
#define SCENETEST_HARNESS_DTYPE_H

#include <scenetest/tensor.h>

/* 1 for int8..int64 and uint8..uint64 (not bool, not the float dtypes):
 * the dtypes whose arithmetic is two's complement and wraps.
 * Thread-safety: any thread. */
int st__dtype_is_int(st_dtype dtype);
/* 1 for uint8, uint16, uint32, uint64. Thread-safety: any thread. */
int st__dtype_is_unsigned(st_dtype dtype);

#endif
