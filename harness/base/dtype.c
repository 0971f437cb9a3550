/* SPDX-License-Identifier: MIT */
/* Dtypes: names and sizes from ST_DTYPE_MAP, element access through double
 * and int64, and the IEEE half / bfloat16 conversions (FP8's are
 * base/fp8.c's). Every narrowing
 * conversion rounds exactly once (round to nearest, ties to even), from
 * the widest exact source: a double rounded to float first and then to
 * half would round twice and be wrong near ties. */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "base/fp8.h"

const char *st_dtype_name(st_dtype dtype) {
  switch (dtype) {
#define XX(name, str, size)                                                    \
  case ST_DTYPE_##name:                                                        \
    return str;
    ST_DTYPE_MAP(XX)
#undef XX
  case ST_DTYPE_COUNT:
    break;
  }
  return NULL;
}

size_t st_dtype_size(st_dtype dtype) {
  switch (dtype) {
#define XX(name, str, size)                                                    \
  case ST_DTYPE_##name:                                                        \
    return size;
    ST_DTYPE_MAP(XX)
#undef XX
  case ST_DTYPE_COUNT:
    break;
  }
  return 0;
}

st_status st_dtype_parse(const char *name, st_dtype *out) {
  if (name == NULL)
    return ST_ENOTFOUND;
#define XX(dname, str, size)                                                   \
  if (strcmp(name, str) == 0) {                                                \
    *out = ST_DTYPE_##dname;                                                   \
    return ST_OK;                                                              \
  }
  ST_DTYPE_MAP(XX)
#undef XX
  return ST_ENOTFOUND;
}

int st_dtype_is_float(st_dtype dtype) {
  return dtype == ST_DTYPE_FLOAT32 || dtype == ST_DTYPE_FLOAT64 ||
         dtype == ST_DTYPE_FLOAT16 || dtype == ST_DTYPE_BFLOAT16 ||
         dtype == ST_DTYPE_FLOAT8_E4M3FN || dtype == ST_DTYPE_FLOAT8_E5M2;
}

int st__dtype_is_int(st_dtype dtype) {
  switch (dtype) {
  case ST_DTYPE_INT8:
  case ST_DTYPE_INT16:
  case ST_DTYPE_INT32:
  case ST_DTYPE_INT64:
  case ST_DTYPE_UINT8:
  case ST_DTYPE_UINT16:
  case ST_DTYPE_UINT32:
  case ST_DTYPE_UINT64:
    return 1;
  default:
    return 0;
  }
}

int st__dtype_is_unsigned(st_dtype dtype) {
  return dtype == ST_DTYPE_UINT8 || dtype == ST_DTYPE_UINT16 ||
         dtype == ST_DTYPE_UINT32 || dtype == ST_DTYPE_UINT64;
}

/* ---- half and bfloat16 ------------------------------------------------- */

static uint64_t f64_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static float f32_from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* Rounds d once to a 16-bit binary format with ebits exponent bits and
 * mbits fraction bits (half: 5/10, bfloat16: 8/7), ties to even, with
 * gradual underflow and overflow to infinity. Working on the double's bits
 * keeps it exact whatever the FPU rounding mode. */
static uint16_t round_to_16(double d, int ebits, int mbits) {
  const uint64_t u = f64_bits(d);
  const uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
  const int exp = (int)((u >> 52) & 0x7ff);
  const uint64_t frac = u & ((UINT64_C(1) << 52) - 1);
  const int bias = (1 << (ebits - 1)) - 1;
  const uint16_t inf = (uint16_t)(((1u << ebits) - 1) << mbits);

  if (exp == 0x7ff) {
    if (frac == 0)
      return (uint16_t)(sign | inf);
    /* Keep the top payload bits and force the quiet bit: a NaN stays a
     * (quiet) NaN, as the hardware conversions do. */
    return (uint16_t)(sign | inf | (1u << (mbits - 1)) |
                      (uint16_t)(frac >> (52 - mbits)));
  }
  if (exp == 0) /* zero or a double subnormal: far below the target's range */
    return sign;

  const int e = exp - 1023;
  const uint64_t sig = frac | (UINT64_C(1) << 52);
  int shift; /* how many low bits of sig the target cannot hold */
  uint64_t base;
  if (e > bias)
    return (uint16_t)(sign | inf);
  if (e >= 1 - bias) {
    shift = 52 - mbits;
    /* Exponent field plus fraction; a carry out of the fraction when
     * rounding up correctly bumps the exponent (and reaches inf). */
    base = ((uint64_t)(e + bias) << mbits);
    const uint64_t m = frac >> shift;
    const uint64_t rem = frac & ((UINT64_C(1) << shift) - 1);
    const uint64_t half = UINT64_C(1) << (shift - 1);
    uint64_t r = base + m;
    if (rem > half || (rem == half && (m & 1)))
      r++;
    return (uint16_t)(sign | r);
  }
  /* Subnormal in the target: units of 2^(1 - bias - mbits). */
  shift = 52 - mbits + (1 - bias - e);
  if (shift >= 54) /* below half the smallest subnormal */
    return sign;
  const uint64_t m = sig >> shift;
  const uint64_t rem = sig & ((UINT64_C(1) << shift) - 1);
  const uint64_t half = UINT64_C(1) << (shift - 1);
  uint64_t r = m;
  if (rem > half || (rem == half && (m & 1)))
    r++; /* may carry into the smallest normal: still the right encoding */
  return (uint16_t)(sign | r);
}

uint16_t st_f64_to_f16(double d) { return round_to_16(d, 5, 10); }

uint16_t st_f64_to_bf16(double d) { return round_to_16(d, 8, 7); }

/* float -> double is exact, so this is still a single rounding. */
uint16_t st_f32_to_f16(float f) { return round_to_16((double)f, 5, 10); }

uint16_t st_f32_to_bf16(float f) { return round_to_16((double)f, 8, 7); }

float st_f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t frac = h & 0x3ffu;
  if (exp == 0x1f) {
    if (frac == 0)
      return f32_from_bits(sign | 0x7f800000u);
    return f32_from_bits(sign | 0x7fc00000u | (frac << 13));
  }
  if (exp == 0) {
    /* Subnormal (or zero): frac * 2^-24 is exact in float. */
    const float v = (float)frac * 0x1p-24f;
    return sign ? -v : v;
  }
  return f32_from_bits(sign | ((exp - 15 + 127) << 23) | (frac << 13));
}

float st_bf16_to_f32(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) != 0)
    u |= 0x00400000u; /* quiet a signalling NaN */
  return f32_from_bits(u);
}

/* ---- element access ---------------------------------------------------- */

/* Double to int64 for integer stores: truncation toward zero (as C and
 * numpy's astype do), then two's-complement wrap modulo 2^64; NaN and
 * infinities, which have no integer value, store 0. */
static uint64_t f64_to_u64_wrap(double v) {
  if (!isfinite(v))
    return 0;
  const double t = trunc(v);
  const double two64 = 18446744073709551616.0;
  if (t >= 0)
    return (uint64_t)fmod(t, two64);
  return -(uint64_t)fmod(-t, two64); /* unsigned negation wraps */
}

/* int64 to double rounded to odd when inexact: a later rounding to a much
 * narrower format (bfloat16) then behaves as if rounded once from the exact
 * integer. */
static double i64_to_f64_odd(int64_t v) {
  const uint64_t mag = v < 0 ? -(uint64_t)v : (uint64_t)v;
  if (mag < (UINT64_C(1) << 53))
    return v < 0 ? -(double)mag : (double)mag;
  int k = 0;
  uint64_t m = mag;
  while (m >= (UINT64_C(1) << 53)) {
    m = (m >> 1) | (m & 1); /* keep a sticky bit */
    k++;
  }
  const double d = ldexp((double)m, k);
  return v < 0 ? -d : d;
}

/* Element i of a buffer of 2-, 4- or 8-byte elements, loaded and stored
 * through memcpy: a tensor's buffer may be any caller's bytes, so no
 * alignment is assumed (compilers turn these into plain moves). */
static uint16_t ld16(const unsigned char *p, size_t i) {
  uint16_t v;
  memcpy(&v, p + i * 2, 2);
  return v;
}

static uint32_t ld32(const unsigned char *p, size_t i) {
  uint32_t v;
  memcpy(&v, p + i * 4, 4);
  return v;
}

static uint64_t ld64(const unsigned char *p, size_t i) {
  uint64_t v;
  memcpy(&v, p + i * 8, 8);
  return v;
}

static void st16(unsigned char *p, size_t i, uint16_t v) {
  memcpy(p + i * 2, &v, 2);
}

static void st32(unsigned char *p, size_t i, uint32_t v) {
  memcpy(p + i * 4, &v, 4);
}

static void st64(unsigned char *p, size_t i, uint64_t v) {
  memcpy(p + i * 8, &v, 8);
}

static void st_float(unsigned char *p, size_t i, float f) {
  memcpy(p + i * 4, &f, 4);
}

static void st_double(unsigned char *p, size_t i, double d) {
  memcpy(p + i * 8, &d, 8);
}

double st_tensor_get_f64(const st_tensor *t, size_t i) {
  const unsigned char *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_FLOAT32:
    return f32_from_bits(ld32(p, i));
  case ST_DTYPE_FLOAT64: {
    const union {
      uint64_t u;
      double d;
    } x = {ld64(p, i)};
    return x.d;
  }
  case ST_DTYPE_FLOAT16:
    return st_f16_to_f32(ld16(p, i));
  case ST_DTYPE_BFLOAT16:
    return st_bf16_to_f32(ld16(p, i));
  case ST_DTYPE_FLOAT8_E4M3FN:
    return st_e4m3fn_to_f64(p[i]);
  case ST_DTYPE_FLOAT8_E5M2:
    return st_e5m2_to_f64(p[i]);
  case ST_DTYPE_UINT64:
    return (double)ld64(p, i); /* as unsigned, rounding beyond 2^53 */
  default:
    /* int64 beyond 2^53 rounds here; st_tensor_get_i64 is exact. */
    return (double)st_tensor_get_i64(t, i);
  }
}

int64_t st_tensor_get_i64(const st_tensor *t, size_t i) {
  const unsigned char *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_INT8:
    return (int8_t)p[i];
  case ST_DTYPE_UINT8:
    return p[i];
  case ST_DTYPE_BOOL:
    return p[i] != 0;
  case ST_DTYPE_INT16:
    return (int16_t)ld16(p, i);
  case ST_DTYPE_INT32:
    return (int32_t)ld32(p, i);
  case ST_DTYPE_INT64:
    return (int64_t)ld64(p, i);
  case ST_DTYPE_UINT16:
    return ld16(p, i);
  case ST_DTYPE_UINT32:
    return ld32(p, i);
  case ST_DTYPE_UINT64:
    return (int64_t)ld64(p, i); /* the bits: values >= 2^63 read negative */
  default:
    return (int64_t)f64_to_u64_wrap(st_tensor_get_f64(t, i));
  }
}

/* Stores the low bytes of u: two's-complement wrap for every integer
 * width, computed in unsigned arithmetic (no signed overflow). */
static void store_int(st_tensor *t, size_t i, uint64_t u) {
  unsigned char *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_INT8:
  case ST_DTYPE_UINT8:
    p[i] = (unsigned char)u;
    break;
  case ST_DTYPE_INT16:
  case ST_DTYPE_UINT16:
    st16(p, i, (uint16_t)u);
    break;
  case ST_DTYPE_INT32:
  case ST_DTYPE_UINT32:
    st32(p, i, (uint32_t)u);
    break;
  case ST_DTYPE_INT64:
  case ST_DTYPE_UINT64:
    st64(p, i, u);
    break;
  default:
    break;
  }
}

void st_tensor_set_f64(st_tensor *t, size_t i, double v) {
  unsigned char *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_FLOAT32:
    st_float(p, i, (float)v); /* one rounding, current mode: nearest-even */
    break;
  case ST_DTYPE_FLOAT64:
    st_double(p, i, v);
    break;
  case ST_DTYPE_FLOAT16:
    st16(p, i, st_f64_to_f16(v));
    break;
  case ST_DTYPE_BFLOAT16:
    st16(p, i, st_f64_to_bf16(v));
    break;
  case ST_DTYPE_FLOAT8_E4M3FN:
    p[i] = st_f64_to_e4m3fn(v);
    break;
  case ST_DTYPE_FLOAT8_E5M2:
    p[i] = st_f64_to_e5m2(v);
    break;
  case ST_DTYPE_BOOL:
    p[i] = v != 0.0; /* NaN is true, as bool(float('nan')) */
    break;
  default:
    store_int(t, i, f64_to_u64_wrap(v));
    break;
  }
}

void st_tensor_set_i64(st_tensor *t, size_t i, int64_t v) {
  unsigned char *p = t->data;
  switch (t->dtype) {
  case ST_DTYPE_FLOAT32:
    st_float(p, i, (float)v); /* int64 -> float directly: one rounding */
    break;
  case ST_DTYPE_FLOAT64:
    st_double(p, i, (double)v);
    break;
  case ST_DTYPE_FLOAT16:
  case ST_DTYPE_BFLOAT16:
  case ST_DTYPE_FLOAT8_E4M3FN:
  case ST_DTYPE_FLOAT8_E5M2:
    st_tensor_set_f64(t, i, i64_to_f64_odd(v));
    break;
  case ST_DTYPE_BOOL:
    p[i] = v != 0;
    break;
  default:
    store_int(t, i, (uint64_t)v);
    break;
  }
}
