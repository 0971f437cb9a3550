/* SPDX-License-Identifier: MIT */
/* The counter-based random generator and the random fills (uniform,
 * normal, randint) for every dtype. An element's value depends only on its
 * stream key (scene, case, arg, --seed) and its index, never on how a
 * tensor is split into calls or threads. docs/random.md specifies the exact
 * algorithm; change the two together.
 *
 * This file is built at -O3 (harness/meson.build): st__fill_uniform_f32 is
 * the benchmark's hot loop. Floating-point expressions here must not be
 * contracted into FMAs (that would change the bytes per machine): meson
 * builds with -std=c11, for which GCC defaults to -ffp-contract=off, and
 * neither the AVX2 clone nor the AVX2 streaming loop enables FMA anyway.
 * tests/case/test_args.c checks the bytes of both paths against a step-by-step
 * scalar computation. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ST_HAVE_STREAM 1
#endif

#include "case/args.h"
#include "case/fill.h"
#include "base/fp8.h"
#include "base/hot.h"

/* Constants of splitmix64 (Steele, Lea, Flood 2014; the finalizer is
 * Stafford's "Mix13" variant, as in java.util.SplittableRandom). */
#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)
#define MIX_M1 UINT64_C(0xBF58476D1CE4E5B9)
#define MIX_M2 UINT64_C(0x94D049BB133111EB)
/* Separates the 32-bit streams' block keys from everything else. */
#define BLOCK_C UINT64_C(0xD1B54A32D192ED03)
/* FNV-1a 64 (Fowler, Noll, Vo). */
#define FNV_OFFSET UINT64_C(0xCBF29CE484222325)
#define FNV_PRIME UINT64_C(0x00000100000001B3)

static inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * MIX_M1;
  z = (z ^ (z >> 27)) * MIX_M2;
  return z ^ (z >> 31);
}

/* "triple32" by Chris Wellons (hash-prospector): a 32-bit bijection with
 * low avalanche bias and only 32-bit multiplies, which vectorize 8 wide
 * with AVX2 where splitmix64's 64-bit multiplies do not vectorize at all
 * (no 64-bit vector multiply before AVX-512). */
static inline uint32_t triple32(uint32_t x) {
  x ^= x >> 17;
  x *= UINT32_C(0xED5AD4BB);
  x ^= x >> 11;
  x *= UINT32_C(0xAC4C1B51);
  x ^= x >> 15;
  x *= UINT32_C(0x31848BAB);
  x ^= x >> 14;
  return x;
}

static uint64_t fnv1a(uint64_t h, const char *s, int with_nul) {
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= FNV_PRIME;
  }
  if (with_nul)
    h *= FNV_PRIME; /* h ^= 0 is a no-op: the NUL separator */
  return h;
}

uint64_t st__rng_key(const char *scene, const char *kase, const char *arg,
                     uint64_t seed) {
  uint64_t h = FNV_OFFSET;
  h = fnv1a(h, scene ? scene : "", 1);
  h = fnv1a(h, kase ? kase : "", 1);
  h = fnv1a(h, arg ? arg : "", 0);
  return mix64(h ^ mix64(seed + GOLDEN));
}

uint64_t st__rng_bits(uint64_t key, uint64_t index) {
  /* Element i is output i of a splitmix64 generator whose state is key. */
  return mix64(key + (index + 1) * GOLDEN);
}

/* The 32-bit stream is split into blocks of 2^32 elements; block b has an
 * additive key a and an odd multiplier m. Within a block, element j maps to
 * triple32(j * m + a): a bijection of j, and with a per-tensor multiplier two
 * tensors' streams are not shifted copies of each other. */
static void block_key(uint64_t key, uint64_t block, uint32_t *a, uint32_t *m) {
  const uint64_t w = mix64(key ^ (BLOCK_C + block));
  *a = (uint32_t)w;
  *m = (uint32_t)(w >> 32) | 1u;
}

uint32_t st__rng_bits32(uint64_t key, uint64_t index) {
  uint32_t a, m;
  block_key(key, index >> 32, &a, &m);
  return triple32((uint32_t)index * m + a);
}

/* ---- uniform float32: the hot loop ------------------------------------ */

/* One block (j0 + n <= 2^32). Every operation is float32, rounded once:
 * u exact, w*u rounded, lo + (w*u) rounded; values that reach cap (the
 * smallest float >= HI) become below (the largest float < HI). At SSE2
 * this loop has 4 lanes and emulated 32-bit multiplies, hence the AVX2
 * clone (hot.h). */
ST_HOT_CLONES
static void uniform_f32_block(float *restrict dst, size_t n, uint32_t j0,
                              uint32_t a, uint32_t m, float lo, float w,
                              float cap, float below) {
  /* x = (j0 + i) * m + a, kept as a 32-bit induction variable: a size_t
   * index cast down would cost the vector loop two shuffles per step. */
  uint32_t x = j0 * m + a;
  for (size_t i = 0; i < n; i++, x += m) {
    const uint32_t h = triple32(x);
    const float u = (float)(int32_t)(h >> 8) * 0x1p-24f;
    const float r = lo + w * u;
    dst[i] = r < cap ? r : below;
  }
}

/* The largest float strictly below hi, and the smallest float >= hi. */
static void f32_bounds(double hi, float *cap, float *below) {
  float c = (float)hi;
  if ((double)c < hi)
    c = nextafterf(c, INFINITY);
  *cap = c;
  *below = nextafterf(c, -INFINITY);
}

#ifdef ST_HAVE_STREAM
/* The same computation as uniform_f32_block, 8 lanes at a time, written
 * with non-temporal stores. A large fill does not fit in the cache anyway,
 * and ordinary stores first read every line they write (read for
 * ownership): streaming stores skip that read, which on the benchmark
 * machine takes the fill from about 1.1x to about 1.9x memcpy's GB/s. The
 * bytes are identical to the portable loop's (same float32 operations, in
 * the same order; tests/case/test_args.c checks it). dst must be 32-byte
 * aligned and n a multiple of 8. */
__attribute__((target("avx2"))) static void
uniform_f32_stream(float *dst, size_t n, uint32_t j0, uint32_t a, uint32_t m,
                   float lo, float w, float cap, float below) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i step = _mm256_set1_epi32((int)(8u * m));
  __m256i x = _mm256_add_epi32(
      _mm256_mullo_epi32(_mm256_add_epi32(_mm256_set1_epi32((int)j0), lanes),
                         _mm256_set1_epi32((int)m)),
      _mm256_set1_epi32((int)a));
  const __m256i m1 = _mm256_set1_epi32((int)0xED5AD4BBu);
  const __m256i m2 = _mm256_set1_epi32((int)0xAC4C1B51u);
  const __m256i m3 = _mm256_set1_epi32((int)0x31848BABu);
  const __m256 vlo = _mm256_set1_ps(lo), vw = _mm256_set1_ps(w);
  const __m256 vcap = _mm256_set1_ps(cap), vbelow = _mm256_set1_ps(below);
  const __m256 scale = _mm256_set1_ps(0x1p-24f);
  for (size_t i = 0; i < n; i += 8) {
    __m256i h = x;
    x = _mm256_add_epi32(x, step);
    h = _mm256_mullo_epi32(_mm256_xor_si256(h, _mm256_srli_epi32(h, 17)), m1);
    h = _mm256_mullo_epi32(_mm256_xor_si256(h, _mm256_srli_epi32(h, 11)), m2);
    h = _mm256_mullo_epi32(_mm256_xor_si256(h, _mm256_srli_epi32(h, 15)), m3);
    h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 14));
    const __m256 u =
        _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(h, 8)), scale);
    const __m256 r = _mm256_add_ps(vlo, _mm256_mul_ps(vw, u));
    _mm256_stream_ps(
        dst + i,
        _mm256_blendv_ps(vbelow, r, _mm256_cmp_ps(r, vcap, _CMP_LT_OQ)));
  }
  _mm_sfence(); /* order the streaming stores before anything later */
}
/* The case-sized fill (a few KiB to a few MiB, which the kernel reads
 * next from the cache): the same computation with ordinary stores, four
 * independent vectors of 8 per step. The hash is a chain of three 32-bit
 * multiplies and shifts per vector, whose latency a one-vector loop
 * leaves exposed; four in flight keep the multiplier busy (on the
 * benchmark machine's Zen 1, 1.15 -> 0.91 ns an element). w24 is
 * w * 2^-24, exact (the caller checks): w24 * k rounds the same real
 * number as w * (k * 2^-24), the multiply by 2^-24 being exact, so the
 * bytes are those of uniform_f32_block with one multiply fewer.
 * n a multiple of 32. */
__attribute__((target("avx2"))) static inline __m256i
triple32_x8(__m256i h, __m256i m1, __m256i m2, __m256i m3) {
  h = _mm256_mullo_epi32(_mm256_xor_si256(h, _mm256_srli_epi32(h, 17)), m1);
  h = _mm256_mullo_epi32(_mm256_xor_si256(h, _mm256_srli_epi32(h, 11)), m2);
  h = _mm256_mullo_epi32(_mm256_xor_si256(h, _mm256_srli_epi32(h, 15)), m3);
  return _mm256_xor_si256(h, _mm256_srli_epi32(h, 14));
}

__attribute__((target("avx2"))) static void
uniform_f32_x32(float *dst, size_t n, uint32_t j0, uint32_t a, uint32_t m,
                float lo, float w24, float cap, float below) {
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i step8 = _mm256_set1_epi32((int)(8u * m));
  const __m256i step32 = _mm256_set1_epi32((int)(32u * m));
  __m256i x[4];
  x[0] = _mm256_add_epi32(
      _mm256_mullo_epi32(_mm256_add_epi32(_mm256_set1_epi32((int)j0), lanes),
                         _mm256_set1_epi32((int)m)),
      _mm256_set1_epi32((int)a));
  for (int k = 1; k < 4; k++)
    x[k] = _mm256_add_epi32(x[k - 1], step8);
  const __m256i m1 = _mm256_set1_epi32((int)0xED5AD4BBu);
  const __m256i m2 = _mm256_set1_epi32((int)0xAC4C1B51u);
  const __m256i m3 = _mm256_set1_epi32((int)0x31848BABu);
  const __m256 vlo = _mm256_set1_ps(lo), vw = _mm256_set1_ps(w24);
  const __m256 vcap = _mm256_set1_ps(cap), vbelow = _mm256_set1_ps(below);
  for (size_t i = 0; i < n; i += 32) {
    __m256i h[4];
    for (int k = 0; k < 4; k++) {
      h[k] = triple32_x8(x[k], m1, m2, m3);
      x[k] = _mm256_add_epi32(x[k], step32);
    }
    for (int k = 0; k < 4; k++) {
      const __m256 u = _mm256_cvtepi32_ps(_mm256_srli_epi32(h[k], 8));
      const __m256 r = _mm256_add_ps(vlo, _mm256_mul_ps(vw, u));
      _mm256_storeu_ps(
          dst + i + 8 * k,
          _mm256_blendv_ps(vbelow, r, _mm256_cmp_ps(r, vcap, _CMP_LT_OQ)));
    }
  }
}

/* The same at AVX-512, four vectors of 16 per step: the hash's 32-bit
 * multiplies are the loop's bottleneck and a 16-lane multiply costs what
 * an 8-lane one does (on an Intel Xeon with AVX-512: the fill's share of
 * bench_scale's 64x64 add suite from 31% to 16%, 10.8 -> 9.0 us a case;
 * docs/benchmarks.md). Same operations, same bytes (tests/case/test_args.c
 * checks whichever loop the machine runs). n a multiple of 64. */
__attribute__((target("avx512f"))) static inline __m512i
triple32_x16(__m512i h, __m512i m1, __m512i m2, __m512i m3) {
  h = _mm512_mullo_epi32(_mm512_xor_si512(h, _mm512_srli_epi32(h, 17)), m1);
  h = _mm512_mullo_epi32(_mm512_xor_si512(h, _mm512_srli_epi32(h, 11)), m2);
  h = _mm512_mullo_epi32(_mm512_xor_si512(h, _mm512_srli_epi32(h, 15)), m3);
  return _mm512_xor_si512(h, _mm512_srli_epi32(h, 14));
}

__attribute__((target("avx512f"))) static void
uniform_f32_x64(float *dst, size_t n, uint32_t j0, uint32_t a, uint32_t m,
                float lo, float w24, float cap, float below) {
  const __m512i lanes =
      _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const __m512i step16 = _mm512_set1_epi32((int)(16u * m));
  const __m512i step64 = _mm512_set1_epi32((int)(64u * m));
  __m512i x[4];
  x[0] = _mm512_add_epi32(
      _mm512_mullo_epi32(_mm512_add_epi32(_mm512_set1_epi32((int)j0), lanes),
                         _mm512_set1_epi32((int)m)),
      _mm512_set1_epi32((int)a));
  for (int k = 1; k < 4; k++)
    x[k] = _mm512_add_epi32(x[k - 1], step16);
  const __m512i m1 = _mm512_set1_epi32((int)0xED5AD4BBu);
  const __m512i m2 = _mm512_set1_epi32((int)0xAC4C1B51u);
  const __m512i m3 = _mm512_set1_epi32((int)0x31848BABu);
  const __m512 vlo = _mm512_set1_ps(lo), vw = _mm512_set1_ps(w24);
  const __m512 vcap = _mm512_set1_ps(cap), vbelow = _mm512_set1_ps(below);
  for (size_t i = 0; i < n; i += 64) {
    __m512i h[4];
    for (int k = 0; k < 4; k++) {
      h[k] = triple32_x16(x[k], m1, m2, m3);
      x[k] = _mm512_add_epi32(x[k], step64);
    }
    for (int k = 0; k < 4; k++) {
      const __m512 u = _mm512_cvtepi32_ps(_mm512_srli_epi32(h[k], 8));
      const __m512 r = _mm512_add_ps(vlo, _mm512_mul_ps(vw, u));
      const __mmask16 keep = _mm512_cmp_ps_mask(r, vcap, _CMP_LT_OQ);
      _mm512_storeu_ps(dst + i + 16 * k, _mm512_mask_blend_ps(keep, vbelow, r));
    }
  }
}
#endif

/* Below this a fill may still be in the cache when the kernel reads it, so
 * ordinary stores are better. */
#define STREAM_MIN_BYTES ((size_t)8 << 20)

/* One block, choosing the streaming path for large fills on AVX2. */
static void uniform_f32_any(float *dst, size_t n, uint32_t j0, uint32_t a,
                            uint32_t m, float lo, float w, float cap,
                            float below) {
#ifdef ST_HAVE_STREAM
  if (n * sizeof *dst >= STREAM_MIN_BYTES && __builtin_cpu_supports("avx2")) {
    /* Head up to a 32-byte boundary and the tail: the portable loop. */
    const size_t head = ((32 - ((uintptr_t)dst & 31)) & 31) / sizeof *dst;
    if (((uintptr_t)dst & 3) == 0 && head < n) {
      const size_t body = (n - head) & ~(size_t)7;
      uniform_f32_block(dst, head, j0, a, m, lo, w, cap, below);
      uniform_f32_stream(dst + head, body, j0 + (uint32_t)head, a, m, lo, w,
                         cap, below);
      uniform_f32_block(dst + head + body, n - head - body,
                        j0 + (uint32_t)(head + body), a, m, lo, w, cap, below);
      return;
    }
  }
  /* w * 2^-24 must be exact (a normal float) for the one-multiply form. */
  const float w24 = w * 0x1p-24f;
  if (n >= 64 && isnormal(w24) && w24 * 0x1p24f == w &&
      __builtin_cpu_supports("avx512f")) {
    const size_t body = n & ~(size_t)63;
    uniform_f32_x64(dst, body, j0, a, m, lo, w24, cap, below);
    uniform_f32_block(dst + body, n - body, j0 + (uint32_t)body, a, m, lo, w,
                      cap, below);
    return;
  }
  if (n >= 32 && isnormal(w24) && w24 * 0x1p24f == w &&
      __builtin_cpu_supports("avx2")) {
    const size_t body = n & ~(size_t)31;
    uniform_f32_x32(dst, body, j0, a, m, lo, w24, cap, below);
    uniform_f32_block(dst + body, n - body, j0 + (uint32_t)body, a, m, lo, w,
                      cap, below);
    return;
  }
#endif
  uniform_f32_block(dst, n, j0, a, m, lo, w, cap, below);
}

void st__fill_uniform_f32(float *dst, size_t n, uint64_t key, uint64_t first,
                          double lo, double hi) {
  if (!(hi > lo)) {
    /* An empty interval: every element is LO (docs/random.md). */
    for (size_t i = 0; i < n; i++)
      dst[i] = (float)lo;
    return;
  }
  float cap, below;
  f32_bounds(hi, &cap, &below);
  const float flo = (float)lo;
  const float w = (float)(hi - lo);
  while (n > 0) {
    const uint64_t block = first >> 32;
    const uint32_t j0 = (uint32_t)first;
    /* Elements left in this block: 2^32 - j0, which may not fit uint32. */
    const uint64_t room = (UINT64_C(1) << 32) - j0;
    const size_t take = (uint64_t)n < room ? n : (size_t)room;
    uint32_t a, m;
    block_key(key, block, &a, &m);
    uniform_f32_any(dst, take, j0, a, m, flo, w, cap, below);
    dst += take;
    n -= take;
    first += take;
  }
}

/* ---- the other random fills (not hot: element at a time) --------------- */

/* A 16-bit or an 8-bit float format, its encodings widened to unsigned:
 * how fill_uniform rounds to it and reads it back. */
typedef struct small_fmt {
  unsigned (*encode)(double);
  double (*decode)(unsigned);
  unsigned sign; /* the sign bit: 0x8000 or 0x80 */
  size_t width;  /* bytes an element */
} small_fmt;

static unsigned enc_f16(double d) { return st_f64_to_f16(d); }
static unsigned enc_bf16(double d) { return st_f64_to_bf16(d); }
static unsigned enc_e4m3fn(double d) { return st__f64_to_e4m3fn_sat(d); }
static unsigned enc_e5m2(double d) { return st_f64_to_e5m2(d); }
static double dec_f16(unsigned h) { return st_f16_to_f32((uint16_t)h); }
static double dec_bf16(unsigned h) { return st_bf16_to_f32((uint16_t)h); }
static double dec_e4m3fn(unsigned h) { return st_e4m3fn_to_f64((uint8_t)h); }
static double dec_e5m2(unsigned h) { return st_e5m2_to_f64((uint8_t)h); }

/* Largest value of the format strictly below hi, given h, the format's
 * rounding of hi. Steps one encoding towards -inf while the value is
 * still >= hi. */
static unsigned below_small(const small_fmt *f, unsigned h, double hi) {
  while (f->decode(h) >= hi) {
    if (h == 0)
      h = f->sign | 1u; /* +0 -> the negative smallest subnormal */
    else if (h & f->sign)
      h++; /* negative: a larger magnitude is smaller */
    else
      h--;
  }
  return h;
}

/* The 16-bit and FP8 uniform fill: the 32-bit stream's 24-bit u, one
 * rounding to the format. */
static void fill_uniform_small(const small_fmt *f, unsigned char *p, double lo,
                               double hi, uint64_t key, uint64_t first,
                               size_t n) {
  const int empty = !(hi > lo);
  const unsigned below = below_small(f, f->encode(hi), hi);
  for (size_t k = 0; k < n; k++) {
    const uint64_t i = first + k;
    unsigned h;
    if (empty) {
      h = f->encode(lo);
    } else {
      const double u = (double)(st__rng_bits32(key, i) >> 8) * 0x1p-24;
      h = f->encode(lo + (hi - lo) * u);
      if (f->decode(h) >= hi)
        h = below;
    }
    if (f->width == 2) {
      const uint16_t h16 = (uint16_t)h;
      memcpy(p + i * 2, &h16, 2);
    } else {
      p[i] = (uint8_t)h;
    }
  }
}

/* Stores a random value: float8_e4m3fn saturates to its largest finite
 * value instead of becoming NaN (it has no infinity); every other dtype
 * as st_tensor_set_f64 (float8_e5m2 and float16 overflow to infinity). */
static void store_random(st_tensor *t, size_t i, double v) {
  if (t->dtype == ST_DTYPE_FLOAT8_E4M3FN)
    ((unsigned char *)t->data)[i] = st__f64_to_e4m3fn_sat(v);
  else
    st_tensor_set_f64(t, i, v);
}

static double u53(uint64_t bits) { return (double)(bits >> 11) * 0x1p-53; }

static const small_fmt f16 = {enc_f16, dec_f16, 0x8000u, 2};
static const small_fmt bf16 = {enc_bf16, dec_bf16, 0x8000u, 2};
static const small_fmt e4m3fn = {enc_e4m3fn, dec_e4m3fn, 0x80u, 1};
static const small_fmt e5m2 = {enc_e5m2, dec_e5m2, 0x80u, 1};

static void fill_uniform(st_tensor *t, double lo, double hi, uint64_t key,
                         uint64_t first, size_t n) {
  unsigned char *p = t->data;
  const int empty = !(hi > lo);
  switch (t->dtype) {
  case ST_DTYPE_FLOAT32:
    st__fill_uniform_f32((float *)(void *)p + first, n, key, first, lo, hi);
    return;
  case ST_DTYPE_FLOAT16:
    fill_uniform_small(&f16, p, lo, hi, key, first, n);
    return;
  case ST_DTYPE_BFLOAT16:
    fill_uniform_small(&bf16, p, lo, hi, key, first, n);
    return;
  case ST_DTYPE_FLOAT8_E4M3FN:
    fill_uniform_small(&e4m3fn, p, lo, hi, key, first, n);
    return;
  case ST_DTYPE_FLOAT8_E5M2:
    fill_uniform_small(&e5m2, p, lo, hi, key, first, n);
    return;
  default: {
    /* float64, and integer dtypes if a scene asks: the float64 value,
     * stored as st_tensor_set_f64 does (integers truncate). */
    const double below = nextafter(hi, -INFINITY);
    for (size_t k = 0; k < n; k++) {
      const uint64_t i = first + k;
      double v = lo;
      if (!empty) {
        v = lo + (hi - lo) * u53(st__rng_bits(key, i));
        if (v >= hi)
          v = below;
      }
      st_tensor_set_f64(t, i, v);
    }
    return;
  }
  }
}

static void fill_normal(st_tensor *t, double mean, double std, uint64_t key,
                        uint64_t first, size_t n) {
  /* Box-Muller, cosine branch: counters 2i and 2i+1 give u1 in (0, 1]
   * (so log(u1) is finite) and u2 in [0, 1). */
  const double two_pi = 6.283185307179586; /* 2 * M_PI, as a double */
  for (size_t k = 0; k < n; k++) {
    const uint64_t i = first + k;
    const double u1 = (double)((st__rng_bits(key, 2 * i) >> 11) + 1) * 0x1p-53;
    const double u2 = u53(st__rng_bits(key, 2 * i + 1));
    const double z = sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
    store_random(t, i, mean + std * z);
  }
}

static void fill_randint(st_tensor *t, int64_t lo, int64_t hi, uint64_t key,
                         uint64_t first, size_t n) {
  /* HI is exclusive, as torch.randint. The span is taken in unsigned
   * arithmetic so [INT64_MIN, INT64_MAX) does not overflow. Lemire's
   * multiply-shift without the rejection step: one counter per element
   * keeps the stream splittable; the bias is below span / 2^64 (below
   * 2^-32 for any span under 2^32). */
  const uint64_t span = hi > lo ? (uint64_t)hi - (uint64_t)lo : 0;
  for (size_t k = 0; k < n; k++) {
    const uint64_t i = first + k;
    __extension__ typedef unsigned __int128 u128;
    const uint64_t off = (uint64_t)(((u128)st__rng_bits(key, i) * span) >> 64);
    const int64_t v = (int64_t)((uint64_t)lo + off);
    if (t->dtype == ST_DTYPE_FLOAT8_E4M3FN)
      store_random(t, i, (double)v); /* |v| <= 448: exact in double */
    else
      st_tensor_set_i64(t, i, v);
  }
}

/* Integer bounds are exact; float bounds (if a scene gives them) truncate
 * toward zero and saturate (the loader normally rejects them). */
static int64_t num_to_i64(st__num v) {
  if (v.is_int)
    return v.i;
  if (isnan(v.f))
    return 0;
  if (v.f >= 0x1p63)
    return INT64_MAX;
  if (v.f < -0x1p63)
    return INT64_MIN;
  return (int64_t)v.f;
}

st_status st__fill_random(st_tensor *t, st__init_kind kind, st__num a,
                          st__num b, uint64_t key, uint64_t first, size_t n) {
  switch (kind) {
  case ST__INIT_UNIFORM:
    fill_uniform(t, a.f, b.f, key, first, n);
    return ST_OK;
  case ST__INIT_NORMAL:
    fill_normal(t, a.f, b.f, key, first, n);
    return ST_OK;
  case ST__INIT_RANDINT:
  case ST__INIT_EXACT: /* randint over [-R, R + 1) (scene/plan_bound.c) */ {
    const int64_t lo = num_to_i64(a);
    const int64_t hi = num_to_i64(b);
    fill_randint(t, lo, hi, key, first, n);
    return ST_OK;
  }
  default:
    return ST_EINVAL;
  }
}
