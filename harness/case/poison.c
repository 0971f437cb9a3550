/* SPDX-License-Identifier: MIT */
/* Output poisoning (poison.h): the pattern of each dtype, filling a
 * tensor with it, and finding the elements a kernel left untouched. The
 * float patterns are quiet NaNs (the top mantissa bit set, so no
 * floating-point unit quiets them into a different NaN on a load) with
 * 0xA5 in the rest of the mantissa as far as it goes, so they are told
 * apart from the NaNs a kernel computes (0x7FC00000 and friends). */
#include <stdint.h>
#include <string.h>

#include "base/hot.h"
#include "case/poison.h"

/* Host-order values; stored with memcpy, which on the little-endian hosts
 * the harness supports gives the documented byte order. */
#define POISON_F32 UINT32_C(0x7FE5A5A5)
#define POISON_F64 UINT64_C(0x7FFDA5A5A5A5A5A5)
#define POISON_F16 UINT16_C(0x7EA5)
#define POISON_BF16 UINT16_C(0x7FE5)
#define POISON_INT_BYTE 0xA5u
#define POISON_BOOL 2u
/* FP8 (docs/reliability.md#guard-zones-guard-pages-and-poisoning):
 * float8_e4m3fn has only two NaNs, 0x7f and 0xff, so its poison is the
 * negative one; float8_e5m2's 0xfd is a negative NaN with a payload no
 * conversion makes (they give 0x7f / 0xff). */
#define POISON_E4M3FN 0xFFu
#define POISON_E5M2 0xFDu

size_t st__poison_bytes(st_dtype dtype, unsigned char *out) {
  const size_t es = st_dtype_size(dtype);
  switch (dtype) {
  case ST_DTYPE_FLOAT32: {
    const uint32_t v = POISON_F32;
    memcpy(out, &v, 4);
    break;
  }
  case ST_DTYPE_FLOAT64: {
    const uint64_t v = POISON_F64;
    memcpy(out, &v, 8);
    break;
  }
  case ST_DTYPE_FLOAT16: {
    const uint16_t v = POISON_F16;
    memcpy(out, &v, 2);
    break;
  }
  case ST_DTYPE_BFLOAT16: {
    const uint16_t v = POISON_BF16;
    memcpy(out, &v, 2);
    break;
  }
  case ST_DTYPE_BOOL:
    out[0] = POISON_BOOL;
    break;
  case ST_DTYPE_FLOAT8_E4M3FN:
    out[0] = POISON_E4M3FN;
    break;
  case ST_DTYPE_FLOAT8_E5M2:
    out[0] = POISON_E5M2;
    break;
  default:
    memset(out, (int)POISON_INT_BYTE, es);
    break;
  }
  return es;
}

void st__poison_fill(st_tensor *t) {
  unsigned char pat[8];
  const size_t es = st__poison_bytes(t->dtype, pat);
  unsigned char *p = t->data;
  size_t done;
  if (t->numel == 0 || es == 0 || p == NULL)
    return;
  if (es == 1 || t->dtype == ST_DTYPE_INT16 || t->dtype == ST_DTYPE_INT32 ||
      t->dtype == ST_DTYPE_INT64) {
    memset(p, pat[0], t->numel * es);
    return;
  }
  /* Store element 0, then double the filled prefix (as fill_const). */
  memcpy(p, pat, es);
  done = es;
  while (done < t->numel * es) {
    size_t n = done <= t->numel * es - done ? done : t->numel * es - done;
    memcpy(p + done, p, n);
    done += n;
  }
}

/* Counting the still-poisoned elements is the common, passing path of
 * every output (nothing is still poison): one branch-free pass per element
 * width that the compiler vectorizes, typed loads instead of a memcmp call
 * per element. Only a non-zero count pays for the second pass that finds
 * the first such element. has_e is loop-invariant (unswitched). Built for
 * AVX2 too (base/hot.h): at SSE2 the 64-bit count of 32-bit compares
 * costs two unpacks per vector. */
#define POISON_COUNT(T)                                                        \
  ST_HOT_CLONES static size_t count_##T(const unsigned char *restrict p,       \
                                        const unsigned char *restrict e,       \
                                        size_t n, T pat, int has_e) {          \
    size_t c = 0;                                                              \
    for (size_t i = 0; i < n; i++) {                                           \
      T x, y = 0;                                                              \
      memcpy(&x, p + i * sizeof(T), sizeof(T));                                \
      if (has_e)                                                               \
        memcpy(&y, e + i * sizeof(T), sizeof(T));                              \
      c += (size_t)((x == pat) & (!has_e | (y != pat)));                       \
    }                                                                          \
    return c;                                                                  \
  }
POISON_COUNT(uint8_t)
POISON_COUNT(uint16_t)
POISON_COUNT(uint32_t)
POISON_COUNT(uint64_t)

static int is_poison_at(const unsigned char *p, const unsigned char *e,
                        const unsigned char *pat, size_t es, size_t i) {
  return memcmp(p + i * es, pat, es) == 0 &&
         (e == NULL || memcmp(e + i * es, pat, es) != 0);
}

size_t st__poison_find(const st_tensor *t, const st_tensor *expected,
                       size_t *count) {
  unsigned char pat[8];
  const size_t es = st__poison_bytes(t->dtype, pat);
  const unsigned char *p = t->data;
  const unsigned char *e = expected != NULL && expected->dtype == t->dtype &&
                                   expected->numel == t->numel
                               ? expected->data
                               : NULL;
  const int has_e = e != NULL;
  size_t first = (size_t)-1, n = 0, i;
  uint8_t p8;
  uint16_t p16;
  uint32_t p32;
  uint64_t p64;
  *count = 0;
  if (es == 0 || p == NULL || t->numel == 0)
    return first;
  if (t->dtype == ST_DTYPE_FLOAT8_E4M3FN) {
    /* Its poison is a NaN kernels compute too: an element counts as
     * unwritten only where golden is not NaN (either NaN). */
    for (i = 0; i < t->numel; i++)
      if (p[i] == POISON_E4M3FN && (!has_e || (e[i] & 0x7fu) != 0x7fu) &&
          n++ == 0)
        first = i;
    *count = n;
    return first;
  }
  switch (es) {
  case 1:
    memcpy(&p8, pat, 1);
    n = count_uint8_t(p, e, t->numel, p8, has_e);
    break;
  case 2:
    memcpy(&p16, pat, 2);
    n = count_uint16_t(p, e, t->numel, p16, has_e);
    break;
  case 4:
    memcpy(&p32, pat, 4);
    n = count_uint32_t(p, e, t->numel, p32, has_e);
    break;
  case 8:
    memcpy(&p64, pat, 8);
    n = count_uint64_t(p, e, t->numel, p64, has_e);
    break;
  default: /* no such dtype today: the element-at-a-time rule */
    for (i = 0; i < t->numel; i++)
      n += (size_t)is_poison_at(p, e, pat, es, i);
    break;
  }
  for (i = 0; n > 0 && i < t->numel; i++)
    if (is_poison_at(p, e, pat, es, i)) {
      first = i;
      break;
    }
  *count = n;
  return first;
}

size_t st__poison_bad_bool(const st_tensor *t, size_t *count) {
  const unsigned char *p = t->data;
  size_t first = (size_t)-1, n = 0;
  for (size_t i = 0; t->dtype == ST_DTYPE_BOOL && p != NULL && i < t->numel;
       i++)
    if (p[i] > 1 && n++ == 0)
      first = i;
  *count = n;
  return first;
}
