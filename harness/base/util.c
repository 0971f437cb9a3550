/* SPDX-License-Identifier: MIT */
/* The general helpers of util.h: zeroed allocation, the monotonic clock,
 * array growth with its overflow checks. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

void *st__zalloc(size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes))
    return NULL;
  void *p = malloc(bytes ? bytes : 1);
  if (p)
    memset(p, 0, bytes);
  return p;
}

uint64_t st__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void *st__array_grow(void *items, size_t *cap, size_t count, size_t elem,
                     size_t first) {
  size_t ncap;
  if (count < *cap)
    return items;
  if (elem == 0)
    return NULL;
  ncap = *cap ? *cap : first ? first : 1;
  while (ncap <= count)
    if (__builtin_mul_overflow(ncap, 2, &ncap))
      return NULL;
  void *p = st__array_resize(items, ncap, elem);
  if (p != NULL)
    *cap = ncap;
  return p;
}

void *st__array_resize(void *items, size_t n, size_t elem) {
  size_t bytes;
  if (__builtin_mul_overflow(n, elem, &bytes))
    return NULL;
  return realloc(items, bytes ? bytes : 1);
}
