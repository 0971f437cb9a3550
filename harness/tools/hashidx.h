/* SPDX-License-Identifier: MIT */
/* An index from a 64-bit hash to the positions of items that live in the
 * caller's own array (open addressing, linear probing, at most half
 * full). The caller hashes a key and says which stored position holds an
 * equal key; the index keeps only (hash, position). What makes `timing`
 * and `compare` linear in the lines of a log (docs/measuring.md).
 * CLI-private (tools layer). */
#ifndef SCENETEST_HARNESS_HASHIDX_H
#define SCENETEST_HARNESS_HASHIDX_H

#include <stddef.h>
#include <stdint.h>

#include <scenetest/common.h>

/* A slot: the hash beside the position, so a probe touches one cache
 * line. */
typedef struct st__hashslot {
  uint64_t hash;
  size_t pos; /* position + 1; 0: an empty slot */
} st__hashslot;

typedef struct st__hashidx {
  st__hashslot *slots;
  size_t cap, n;
} st__hashidx;

/* Whether the item at pos has the key ctx describes. */
typedef int (*st__hashidx_eq)(const void *ctx, size_t pos);

/* The position of an item whose hash is h and that eq says is equal, or
 * SIZE_MAX. Thread-safety: any thread, x not changing. */
size_t st__hashidx_find(const st__hashidx *x /* IN */, uint64_t h,
                        st__hashidx_eq eq, const void *ctx /* IN */);
/* Adds (h, pos) for an item not yet in x. ST_OK or ST_ENOMEM (x as it
 * was). Thread-safety: one thread per x. */
st_status st__hashidx_add(st__hashidx *x /* IN/OUT */, uint64_t h,
                          size_t pos) ST_WUR;
/* Frees x's slots and empties it; x itself is the caller's. */
void st__hashidx_free(st__hashidx *x /* IN/OUT */);

/* FNV-1a over bytes, continuing from h (start with ST__HASH_INIT), then
 * a separator so that ("ab", "c") and ("a", "bc") differ. */
#define ST__HASH_INIT 0xcbf29ce484222325ull
uint64_t st__hash_bytes(uint64_t h, const void *p /* IN */, size_t n);
uint64_t st__hash_u64(uint64_t h, uint64_t v);

#endif
