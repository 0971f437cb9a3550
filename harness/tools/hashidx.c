/* SPDX-License-Identifier: MIT */
/* The hash index of hashidx.h. The stored hash is compared before the
 * caller's eq, so a probe calls eq only on a real candidate; the final
 * mix (splitmix64's) spreads FNV's low bits over the whole table. */
#include <stdlib.h>

#include "tools/hashidx.h"

static uint64_t mix(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

size_t st__hashidx_find(const st__hashidx *x, uint64_t h, st__hashidx_eq eq,
                        const void *ctx) {
  size_t i;
  if (x->cap == 0)
    return SIZE_MAX;
  for (i = mix(h) & (x->cap - 1); x->slots[i].pos != 0;
       i = (i + 1) & (x->cap - 1))
    if (x->slots[i].hash == h && eq(ctx, x->slots[i].pos - 1))
      return x->slots[i].pos - 1;
  return SIZE_MAX;
}

static void place(st__hashslot *slots, size_t cap, uint64_t h, size_t p) {
  size_t i = mix(h) & (cap - 1);
  while (slots[i].pos != 0)
    i = (i + 1) & (cap - 1);
  slots[i].hash = h;
  slots[i].pos = p;
}

st_status st__hashidx_add(st__hashidx *x, uint64_t h, size_t pos) {
  if (pos == SIZE_MAX)
    return ST_ENOMEM; /* cannot be stored as pos + 1 */
  if ((x->n + 1) * 2 > x->cap) {
    size_t cap = x->cap ? x->cap * 2 : 64, i;
    st__hashslot *slots;
    if (cap > SIZE_MAX / sizeof *slots)
      return ST_ENOMEM;
    if ((slots = calloc(cap, sizeof *slots)) == NULL)
      return ST_ENOMEM;
    for (i = 0; i < x->cap; i++)
      if (x->slots[i].pos != 0)
        place(slots, cap, x->slots[i].hash, x->slots[i].pos);
    free(x->slots);
    x->slots = slots;
    x->cap = cap;
  }
  place(x->slots, x->cap, h, pos + 1);
  x->n++;
  return ST_OK;
}

void st__hashidx_free(st__hashidx *x) {
  free(x->slots);
  x->slots = NULL;
  x->cap = x->n = 0;
}

uint64_t st__hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  size_t i;
  for (i = 0; i < n; i++) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  /* The separator: a byte no name holds (names have no control bytes). */
  h ^= 0x1f;
  return h * 0x100000001b3ull;
}

uint64_t st__hash_u64(uint64_t h, uint64_t v) {
  return st__hash_bytes(h, &v, sizeof v);
}
