/* SPDX-License-Identifier: MIT */
/* Tensors and scalars as ops see them: dtypes, roles, contiguous row-major
 * buffers. */
#ifndef SCENETEST_TENSOR_H
#define SCENETEST_TENSOR_H

#include <scenetest/common.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_DTYPE_MAP(XX)                                                       \
  XX(FLOAT32, "float32", 4)                                                    \
  XX(FLOAT64, "float64", 8)                                                    \
  XX(FLOAT16, "float16", 2)                                                    \
  XX(BFLOAT16, "bfloat16", 2)                                                  \
  XX(INT8, "int8", 1)                                                          \
  XX(INT16, "int16", 2)                                                        \
  XX(INT32, "int32", 4)                                                        \
  XX(INT64, "int64", 8)                                                        \
  XX(UINT8, "uint8", 1)                                                        \
  XX(BOOL, "bool", 1)                                                          \
  XX(UINT16, "uint16", 2)                                                      \
  XX(UINT32, "uint32", 4)                                                      \
  XX(UINT64, "uint64", 8)                                                      \
  XX(FLOAT8_E4M3FN, "float8_e4m3fn", 1)                                        \
  XX(FLOAT8_E5M2, "float8_e5m2", 1)

/* The values are ABI: a new dtype is appended, never renumbered
 * (tests/base/test_abi.c pins every value; docs/api.md). */
typedef enum st_dtype {
#define ST_DTYPE_ENUM(name, str, size) ST_DTYPE_##name,
  ST_DTYPE_MAP(ST_DTYPE_ENUM)
#undef ST_DTYPE_ENUM
      ST_DTYPE_COUNT
} st_dtype;

/* "float32" etc.; NULL for an invalid value. Thread-safety: any thread. */
ST_EXTERN const char *st_dtype_name(st_dtype dtype /* IN */);
/* Bytes per element; 0 for an invalid value. Thread-safety: any thread. */
ST_EXTERN size_t st_dtype_size(st_dtype dtype /* IN */);
/* Parses a dtype name. Returns ST_OK or ST_ENOTFOUND. */
ST_EXTERN st_status st_dtype_parse(const char *name /* IN */,
                                   st_dtype *out /* OUT */) ST_WUR;
/* 1 for float32/float64/float16/bfloat16/float8_e4m3fn/float8_e5m2, else
 * 0. */
ST_EXTERN int st_dtype_is_float(st_dtype dtype /* IN */);

typedef enum st_role {
  ST_ROLE_INPUT = 0,
  ST_ROLE_OUTPUT = 1,
  ST_ROLE_INOUT = 2,
  /* A workspace the kernel may write and nobody checks: poisoned before
   * each run, never compared, never bound to a golden (docs/scene-format.md,
   * role). Appended in ABI 2: a plugin built before it never sees one
   * unless a scene gives its kernel a scratch arg. */
  ST_ROLE_SCRATCH = 3
} st_role;

#define ST_MAX_DIMS 8

/* A tensor bound to an op call. data is contiguous, row-major, nbytes long
 * (may be NULL when nbytes == 0). name and data are owned by the harness for
 * the duration of the call. */
typedef struct st_tensor {
  const char *name;
  st_dtype dtype;
  st_role role;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  size_t numel;
  size_t nbytes;
  void *data;
} st_tensor;

/* What a scalar argument holds: a number (`{scalar, dtype, value}`), a
 * list of integers (`{scalar, ints: [...]}`, for an ATen `int[]`) or a
 * string (`{scalar, string: S}`, for an ATen `str`). */
typedef enum st_scalar_kind {
  ST_SCALAR_NUMBER = 0,
  ST_SCALAR_INTS = 1,
  ST_SCALAR_STRING = 2
} st_scalar_kind;

/* A scalar bound to an op call: the value both as double and as int64
 * (is_int says which one is exact). ints and string are owned by the
 * harness for the duration of the call; a list or string scalar has dtype
 * int64 and i = f = 0. */
typedef struct st_scalar {
  const char *name;
  st_dtype dtype;
  int is_int;
  int64_t i;
  double f;
  st_scalar_kind kind;
  const int64_t *ints; /* ST_SCALAR_INTS: n_ints values */
  size_t n_ints;
  const char *string; /* ST_SCALAR_STRING: NUL-terminated */
} st_scalar;

/* Element access converting through double (float16/bfloat16/FP8 with
 * round-to-nearest-even on store; integers wrap on store as two's
 * complement). Thread-safety: any thread. */
ST_EXTERN double st_tensor_get_f64(const st_tensor *t /* IN */, size_t i);
ST_EXTERN void st_tensor_set_f64(st_tensor *t /* IN/OUT */, size_t i, double v);
/* Exact integer access for integer/bool dtypes; uint64 as its bits (a
 * value of 2^63 or more reads as a negative int64). */
ST_EXTERN int64_t st_tensor_get_i64(const st_tensor *t /* IN */, size_t i);
ST_EXTERN void st_tensor_set_i64(st_tensor *t /* IN/OUT */, size_t i,
                                 int64_t v);

/* IEEE half and bfloat16 conversions (round-to-nearest-even; NaN stays
 * NaN). Thread-safety: any thread. */
ST_EXTERN uint16_t st_f32_to_f16(float f);
ST_EXTERN float st_f16_to_f32(uint16_t h);
ST_EXTERN uint16_t st_f32_to_bf16(float f);
ST_EXTERN float st_bf16_to_f32(uint16_t b);
/* From double directly (one rounding, not two). */
ST_EXTERN uint16_t st_f64_to_f16(double d);
ST_EXTERN uint16_t st_f64_to_bf16(double d);

/* OCP FP8 as PyTorch names it (docs/scene-format.md#dtypes), one byte
 * per value. From double with one rounding, round-to-nearest-even, as
 * torch's casts: float8_e4m3fn has no infinity, so a value that rounds
 * beyond its largest finite 448 (|d| > 464), an infinity and a NaN give
 * NaN (0x7f with the sign); float8_e5m2 is IEEE-like (largest finite
 * 57344; |d| >= 61440 gives infinity; NaN gives 0x7f with the sign). To
 * double: exact. Thread-safety: any thread. */
ST_EXTERN uint8_t st_f64_to_e4m3fn(double d);
ST_EXTERN double st_e4m3fn_to_f64(uint8_t b);
ST_EXTERN uint8_t st_f64_to_e5m2(double d);
ST_EXTERN double st_e5m2_to_f64(uint8_t b);

#ifdef __cplusplus
}
#endif
#endif
