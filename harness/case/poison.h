/* SPDX-License-Identifier: MIT */
/* Output poisoning (docs/reliability.md#guard-zones-guard-pages-and-poisoning):
 * an output with no explicit init is filled before each run with a pattern a
 * kernel would not write by accident, so that an element the kernel forgot to
 * write fails compare instead of passing on a lucky zero. The pattern per dtype
 * is a quiet NaN whose mantissa carries 0xA5 bytes for floats, 0xA5 in every
 * byte for integers, and 2 for bool (not a valid bool). docs/reliability.md
 * lists the exact bits. */
#ifndef SCENETEST_HARNESS_POISON_H
#define SCENETEST_HARNESS_POISON_H

#include <stddef.h>

#include <scenetest/tensor.h>

/* Fills every element of t with its dtype's poison. Thread-safety: any
 * thread, while nobody else uses t. */
void st__poison_fill(st_tensor *t /* IN/OUT */);

/* The first element of t that is still bit-for-bit the poison while the
 * same element of expected is not: its index, and the count of such
 * elements in *count; (size_t)-1 and *count = 0 when none. An element
 * whose expected value is itself the poison's bits (an int8 result of
 * -91, a uint8 165: common, unlike a float NaN with this payload) is left
 * to the ordinary compare: a kernel writing the right value there cannot
 * be told from one writing nothing, and failing it would fail correct
 * kernels. expected may be NULL (every poison element counts). */
size_t st__poison_find(const st_tensor *t /* IN */,
                       const st_tensor *expected /* IN */,
                       size_t *count /* OUT */);

/* The first bool element of t whose byte is neither 0 nor 1, with the
 * count of such elements in *count; (size_t)-1 when none (or t is not
 * bool). */
size_t st__poison_bad_bool(const st_tensor *t /* IN */,
                           size_t *count /* OUT */);

/* The poison of one element of dtype as bytes (little-endian, as stored):
 * fills out[0..st_dtype_size(dtype)) and returns that size. */
size_t st__poison_bytes(st_dtype dtype, unsigned char *out /* OUT */);

#endif
