/* SPDX-License-Identifier: MIT */
/* The small general helpers every layer uses: zeroed allocation, the
 * monotonic clock, the element count of an array and the overflow-checked
 * ways an array grows. One copy of each, here at the bottom, so that no
 * file keeps a private now_ns or grow of its own (docs/architecture.md).
 *
 * Every function here may be called from any thread. */
#ifndef SCENETEST_HARNESS_BASE_UTIL_H
#define SCENETEST_HARNESS_BASE_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The element count of an array (not of a pointer: sizeof would lie). */
#define ST__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* n * size zeroed bytes (at least one), or NULL when out of memory or when
 * the product overflows; free with free(). calloc through malloc: glibc's
 * calloc bypasses the thread cache, so short-lived blocks freed right after
 * (plans, name lists) would be carved from and merged back into the top
 * chunk every time, each merge running malloc_consolidate; the loader spent
 * a third of its time there. */
void *st__zalloc(size_t n, size_t size);

/* CLOCK_MONOTONIC in ns. */
uint64_t st__now_ns(void);

/* Room for one more element in a growable array: items (of *cap elements
 * of elem bytes, count in use) as it is while count < *cap, else
 * reallocated to twice *cap (first, or 1 when first is 0, when *cap is 0;
 * more while that is still not above count) with *cap updated. NULL when
 * out of memory, when the size would overflow or when elem is 0: items
 * and *cap are then unchanged and still the caller's. Doubling keeps n
 * additions O(n), as SQLite's and curl's arrays do. */
void *st__array_grow(void *items /* IN, owned */, size_t *cap /* IN/OUT */,
                     size_t count, size_t elem, size_t first);

/* items reallocated to exactly n elements of elem bytes (at least one
 * byte, so that NULL always means failure), like OpenBSD's reallocarray:
 * NULL when n * elem overflows or memory ran out, items then unchanged
 * and still the caller's. For arrays that keep no capacity and grow one
 * element at a time. */
void *st__array_resize(void *items /* IN, owned */, size_t n, size_t elem);

#endif
