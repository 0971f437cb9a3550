/* SPDX-License-Identifier: MIT */
/* OCP FP8 (the "OCP 8-bit Floating Point Specification", with PyTorch's
 * names float8_e4m3fn and float8_e5m2): conversion from double with one
 * rounding, round-to-nearest-even, and the exact conversion back. The
 * semantics beyond the range are PyTorch's (c10/util/Float8_e4m3fn.h and
 * Float8_e5m2.h, fp8e4m3fn_from_fp32_value and fp8e5m2_from_fp32_value):
 * e4m3fn has no infinity, so overflow, infinity and NaN all give NaN
 * (0x7f, sign kept); e5m2 overflows to infinity (0x7c) and NaN is 0x7f.
 * PyTorch converts from float32; this converts from double directly, so a
 * double between two float32 values is rounded once, not twice.
 * tests/base/test_fp8.c checks all 256 patterns of each type, and torch's cast
 * of a set of float32 probes, against tests/fixtures/fp8_tables.txt, whose
 * header says which generator made it (PyTorch where one with float8 was
 * at hand, else an exact implementation of the OCP definition and of
 * torch's cast rules); the fp8_tables test regenerates it with PyTorch
 * wherever PyTorch 2.1 or later is installed. */
#include <math.h>

#include "base/fp8.h"

/* Rounds a (finite, > 0) to a binary format with mbits fraction bits and
 * exponent bias `bias`, ties to even, with gradual underflow, and returns
 * the encoding of the magnitude: (biased exponent << mbits) | fraction.
 * No upper bound is applied: a value past the format's top gives a
 * biased exponent beyond it, which the caller turns into its overflow.
 * Every step is exact: a / q scales by a power of two, and the integer
 * and fractional parts of a number below 2^53 are exact in double. */
static unsigned round_mag(double a, int bias, int mbits) {
  int e;
  (void)frexp(a, &e);    /* a = f * 2^e, f in [0.5, 1) */
  const int exp = e - 1; /* a = 1.x * 2^exp */
  const int emin = 1 - bias;
  if (exp > bias + 1) /* beyond the top binade even as an exponent field */
    return 0xffffu;
  const int normal = exp >= emin;
  /* q: the format's spacing at a (the subnormal spacing below emin). */
  const int qexp = (normal ? exp : emin) - mbits;
  const double n = ldexp(a, -qexp);
  double k = floor(n);
  const double rest = n - k;
  if (rest > 0.5 || (rest == 0.5 && fmod(k, 2.0) != 0.0))
    k += 1.0;
  if (!normal)
    /* Subnormal: k units of 2^(emin - mbits); k == 2^mbits (a carry) is
     * the smallest normal's encoding, as it should be. */
    return (unsigned)k;
  /* Normal: k in [2^mbits, 2^(mbits+1)]; a carry to 2^(mbits+1) bumps the
   * exponent by one through the addition. */
  return ((unsigned)(exp + bias) << mbits) + (unsigned)k - (1u << mbits);
}

/* d in an 8-bit format of exponent bias and mbits fraction bits (NaN
 * 0x7f with d's sign): magnitudes whose encoding passes max, infinity
 * among them, become over. */
static uint8_t encode8(double d, int bias, int mbits, unsigned max,
                       unsigned over) {
  const uint8_t sign = signbit(d) ? 0x80 : 0x00;
  if (isnan(d))
    return sign | 0x7f;
  const double a = fabs(d);
  if (a == 0.0)
    return sign;
  const unsigned m = isinf(a) ? max + 1 : round_mag(a, bias, mbits);
  return sign | (uint8_t)(m > max ? over : m);
}

/* e4m3fn: 0x7e is 448; 0x7f is NaN (it has no infinity), so any encoding
 * above 0x7e overflowed: to NaN, or saturated to 448. */
uint8_t st_f64_to_e4m3fn(double d) { return encode8(d, 7, 3, 0x7e, 0x7f); }

uint8_t st__f64_to_e4m3fn_sat(double d) { return encode8(d, 7, 3, 0x7e, 0x7e); }

/* e5m2: 0x7b is 57344, 0x7c infinity. */
uint8_t st_f64_to_e5m2(double d) { return encode8(d, 15, 2, 0x7b, 0x7c); }

double st_e4m3fn_to_f64(uint8_t b) {
  const int neg = (b & 0x80) != 0;
  const unsigned exp = (b >> 3) & 0xf, frac = b & 0x7;
  double v;
  if ((b & 0x7f) == 0x7f)
    v = NAN;
  else if (exp == 0)
    v = ldexp((double)frac, -9);
  else
    v = ldexp((double)(8 + frac), (int)exp - 10);
  return neg ? -v : v;
}

double st_e5m2_to_f64(uint8_t b) {
  const int neg = (b & 0x80) != 0;
  const unsigned exp = (b >> 2) & 0x1f, frac = b & 0x3;
  double v;
  if (exp == 0x1f)
    v = frac == 0 ? INFINITY : NAN;
  else if (exp == 0)
    v = ldexp((double)frac, -16);
  else
    v = ldexp((double)(4 + frac), (int)exp - 17);
  return neg ? -v : v;
}
