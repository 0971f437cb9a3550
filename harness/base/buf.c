/* SPDX-License-Identifier: MIT */
/* The capped growable byte buffer of buf.h. Growth doubles from a small
 * first size, clamped to the cap, so reading a stream costs O(log n)
 * reallocations and a capped buffer never allocates past its cap. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

/* The first allocation: small contents (a line, a frame) fit at once. */
#define FIRST_CAP ((size_t)256)

void st__buf_init(st__buf *b, size_t max) {
  memset(b, 0, sizeof *b);
  b->max = max;
}

void st__buf_free(st__buf *b) {
  if (b == NULL)
    return;
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

void st__buf_reset(st__buf *b, size_t keep) {
  if (b->cap > keep)
    st__buf_free(b);
  b->len = 0;
}

st_status st__buf_reserve(st__buf *b, size_t n) {
  size_t need, cap;
  char *p;
  if (n <= b->cap - b->len)
    return ST_OK;
  if (n > b->max - b->len)
    return ST_ELIMIT;
  need = b->len + n; /* <= max, checked above */
  cap = b->cap ? b->cap : FIRST_CAP;
  while (cap < need) {
    if (cap > SIZE_MAX / 2) {
      cap = need;
      break;
    }
    cap *= 2;
  }
  if (cap > b->max)
    cap = b->max;
  p = st__array_resize(b->data, cap, 1);
  if (p == NULL)
    return ST_ENOMEM;
  b->data = p;
  b->cap = cap;
  return ST_OK;
}

void st__buf_commit(st__buf *b, size_t n) {
  assert(n <= b->cap - b->len);
  b->len += n;
}

st_status st__buf_add(st__buf *b, const void *p, size_t n) {
  st_status rc;
  if (n == 0)
    return ST_OK;
  rc = st__buf_reserve(b, n);
  if (rc != ST_OK)
    return rc;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return ST_OK;
}

size_t st__buf_add_capped(st__buf *b, const void *p, size_t n) {
  size_t keep = n < b->max - b->len ? n : b->max - b->len;
  /* Short on memory, keep what the storage already has room for. */
  if (keep > 0 && st__buf_reserve(b, keep) != ST_OK)
    keep = b->cap - b->len;
  if (keep > 0) {
    memcpy(b->data + b->len, p, keep);
    b->len += keep;
  }
  return keep;
}

void st__buf_drop_front(st__buf *b, size_t n) {
  assert(n <= b->len);
  if (n == 0)
    return; /* data may still be NULL */
  memmove(b->data, b->data + n, b->len - n);
  b->len -= n;
}
