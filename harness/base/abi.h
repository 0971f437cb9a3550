/* SPDX-License-Identifier: MIT */
/* Reading size-first structs (docs/api.md): a struct that a caller or a
 * plugin allocates starts with its size, the sizeof it was compiled with,
 * and the library reads a field only when that size covers it, so an
 * older caller's smaller struct is never read past its end (the libuv and
 * Win32 habit of growing public structs at the end only). */
#ifndef SCENETEST_HARNESS_BASE_ABI_H
#define SCENETEST_HARNESS_BASE_ABI_H

#include <stddef.h>

/* The size of a layout that ends with field: offset plus the field. */
#define ST__SIZE_THROUGH(type, field)                                          \
  (offsetof(type, field) + sizeof(((type *)0)->field))

/* 1 if the struct *p (of type, its caller's `size` first) covers field. */
#define ST__HAS_FIELD(p, type, field)                                          \
  ((size_t)(p)->size >= ST__SIZE_THROUGH(type, field))

#endif
