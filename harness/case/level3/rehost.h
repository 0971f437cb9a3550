/* SPDX-License-Identifier: MIT */
/* Level-3 shared buffers: anonymous memfd segments, pooled across cases and
 * rounds, and the rehost of a case's tensors into them (one segment per
 * non-empty tensor) with its LIFO release. See docs/level3.md. */
#ifndef SCENETEST_HARNESS_REHOST_H
#define SCENETEST_HARNESS_REHOST_H

#include <stddef.h>
#include <stdint.h>

#include "case/args.h"
#include "case/tbuf.h"

/* One shared segment: a memfd of size bytes (page-rounded), mapped
 * read-write and shared at map. id is unique in the process for the
 * segment's lifetime and is how workers recognise a segment they already
 * mapped. Owned by the segment pool; users hold it between acquire and
 * release. */
typedef struct st__seg {
  uint64_t id;
  int fd;
  size_t size;
  void *map;
  uint64_t last_used; /* pool clock at release (LRU eviction) */
  int in_use;
  struct st__seg *next; /* the pool's list of live segments */
} st__seg;

/* Idle segments the pool keeps by default (bytes, count). Beyond them the
 * least recently released idle segments are destroyed. */
#define ST__SEG_POOL_CAP_BYTES ((size_t)512 << 20)
#define ST__SEG_POOL_CAP_COUNT ((size_t)64)

/* Fault injection for tests (SQLite's sqlite3FaultSim idea): when k > 0,
 * the k-th segment acquisition from now fails with ST_ENOMEM (and the
 * counter goes back to 0). Not thread-safe: set it only while no case
 * runs. */
extern int st__rehost_fail_at;

/* A segment of at least nbytes (> 0): an idle pooled one that fits, else a
 * new memfd. Its contents are unspecified. Thread-safety: any thread
 * (the pool has a lock). */
st_status st__seg_acquire(size_t nbytes, st__seg **out /* OUT */,
                          st_error *err /* OUT */) ST_WUR;
/* Gives a segment back to the pool (or destroys it when over the cap).
 * Accepts NULL. */
void st__seg_release(st__seg *seg /* IN */);
/* Destroys every idle segment. */
void st__seg_pool_drain(void);
/* Sets the idle cap (bytes, count) and applies it; returns nothing. For
 * tests and benchmarks; the defaults are the macros above. */
void st__seg_pool_set_cap(size_t bytes, size_t count);
/* Counts live segments: in use, idle, idle bytes (any may be NULL). */
void st__seg_pool_stats(size_t *in_use /* OUT */, size_t *idle /* OUT */,
                        size_t *idle_bytes /* OUT */);
/* In a forked child: unmaps and closes every segment the parent had and
 * forgets them, without touching the parent's (they are shared memory:
 * the parent still owns them). */
void st__seg_pool_forget_after_fork(void);

/* Where a rehosted tensor's data starts in its segment: after a guard
 * zone of canaries, and followed by another (case/tbuf.h), checked after
 * each run on the workers (st__rehost_check). Workers place a tensor
 * here too (workers.c). */
#define ST__SEG_DATA_AT ST__TBUF_GUARD

/* The segments of one rehost, in the order made (argument order). */
typedef struct st__rehost {
  st__seg **segs; /* owned array; segments owned by the pool */
  size_t *tensor; /* the tensor index of each segment */
  void **orig;    /* the original buffers until st__rehost_commit */
  size_t n;
} st__rehost;

/* Moves every non-empty tensor of args into its own segment: checks that
 * no two tensors' byte ranges overlap (before anything is allocated; the
 * error names both), acquires and fills one segment per tensor, then
 * points the tensors at the segments (keeping the original buffers until
 * st__rehost_commit). If the k-th acquisition fails the first k-1 are
 * released in reverse order, args are left exactly as they were, and the
 * error is returned. Thread-safety: one thread per args. */
st_status st__rehost_args(st__argset *args /* IN/OUT */,
                          st__rehost *out /* OUT */,
                          st_error *err /* OUT */) ST_WUR;
/* The rehost stands: frees the original buffers (the segments hold the
 * tensors from now on). */
void st__rehost_commit(st__rehost *rh /* IN/OUT */,
                       st__argset *args /* IN/OUT */);
/* Checks the guard zones of segment k's tensor (nbytes long); 1 when
 * either was written, *out saying how far, and the zones re-armed (a later
 * round reports only its own writes). */
int st__rehost_check(st__rehost *rh /* IN/OUT */, size_t k, size_t nbytes,
                     st__tbuf_damage *out /* OUT */);
/* Releases the segments in reverse order. Before commit it is a rollback:
 * the tensors get their original buffers back. After it they point at
 * nothing (data NULL: the case is over). Accepts a zeroed rehost. */
void st__rehost_release(st__rehost *rh /* IN/OUT */,
                        st__argset *args /* IN/OUT */);

#endif
